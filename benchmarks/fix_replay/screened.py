"""Upstream compile fixes found but not replayed: their BEFORE code no longer breaks or
recompiles under torch 2.13 on CPU, measured here on the maintainers' BEFORE lines (verbatim,
inside the smallest function or module that runs them).

    python benchmarks/fix_replay/screened.py      # one JSON object per commit, on stdout

Each entry: the upstream commit, its subject, the BEFORE line, and what dynamo (eager backend)
records now: graph breaks (pt2bot.testing.graph_breaks) and, for attribute mutations that
recompile on a device change, recompiles over three calls (pt2bot.testing.recompiles).
"""
from __future__ import annotations

import enum
from enum import IntEnum
import importlib
import importlib.metadata
import importlib.util
import inspect
import json
import math
import os
import warnings
from collections import defaultdict
from functools import lru_cache, wraps
from itertools import zip_longest
from typing import Any, Callable, Optional, Union

import numpy as np
import torch
import torch.nn.functional as F
from packaging import version
from einops import rearrange
from torch import nn
from torch.nn.attention.flex_attention import flex_attention

from pt2bot.testing import graph_breaks, recompiles

HERE = os.path.dirname(os.path.abspath(__file__))


# huggingface/diffusers 9f3c0fdcd8 (src/diffusers/models/autoencoders/vae.py, Decoder.forward)
class VaeDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv_in = nn.Conv2d(4, 4, 3, padding=1)
        self.up_blocks = nn.ModuleList([nn.Conv2d(4, 4, 3, padding=1)])

    def forward(self, sample: torch.Tensor) -> torch.Tensor:
        sample = self.conv_in(sample)
        upscale_dtype = next(iter(self.up_blocks.parameters())).dtype
        sample = sample.to(upscale_dtype)
        return self.up_blocks[0](sample)


# huggingface/diffusers 71a6fd9f0d (src/diffusers/models/transformers/transformer_z_image.py)
def z_image_pad(feats: list[torch.Tensor], inner_pad_mask: list[torch.Tensor], pad_token: torch.Tensor):
    feats_cat = torch.cat(feats, dim=0)
    feats_cat[torch.cat(inner_pad_mask)] = pad_token
    return feats_cat * 2


# Lightning-AI/litgpt 47806045 (litgpt/utils.py, chunked_cross_entropy)
def litgpt_loss(loss_chunks: list[torch.Tensor], targets: torch.Tensor, ignore_index: int = -100):
    non_masked_elems = (targets != ignore_index).sum()
    return torch.cat(loss_chunks).sum() / max(1, non_masked_elems)


# huggingface/diffusers d70f8ee18b (src/diffusers/models/transformers/transformer_wan.py, WanRotaryPosEmbed)
class WanRope(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attention_head_dim = 12
        self.freqs = torch.randn(16, 6)

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        self.freqs = self.freqs.to(hidden_states.device)
        freqs = self.freqs.split_with_sizes([2, 2, 2], dim=1)
        return hidden_states + freqs[0].sum()


# huggingface/diffusers d8bc1a4e51 (src/diffusers/models/lora.py, LoRACompatibleConv.forward)
class LoRACompatibleConv(nn.Conv2d):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lora_layer = None

    def forward(self, x):
        if self.lora_layer is None:
            return super().forward(x)
        else:
            return super().forward(x) + self.lora_layer(x)


# huggingface/diffusers 48ce118d1c (src/diffusers/models/unet_2d_condition.py, forward)
def unet_upsample_flag(sample: torch.Tensor, default_overall_up_factor: int = 8):
    forward_upsample_size = False
    if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
        # Forward upsample size to force interpolation output size.
        forward_upsample_size = True
    return F.avg_pool2d(sample, 2) if forward_upsample_size else sample


# kornia/kornia 865a598c0 (kornia/augmentation/_2d/geometric/resize.py, compute_transformation)
def resize_transformation(input: torch.Tensor, params: dict) -> torch.Tensor:
    if params["output_size"] == input.shape[-2:]:
        return torch.eye(3, device=input.device, dtype=input.dtype).expand(input.shape[0], -1, -1)
    return params["src"] * 2


# pyg-team/pytorch-frame 8e964d27 (torch_frame/data/multi_embedding_tensor.py, MultiEmbeddingTensor.validate)
def frame_validate(offset: torch.Tensor, values: torch.Tensor, num_cols: int = 2) -> torch.Tensor:
    assert offset[0] == 0
    assert len(offset) == num_cols + 1
    assert offset.ndim == 1
    assert values.ndim == 2 or values.numel() == 0
    return values * 2


# The held-out set's (bench_fix_replay.py --set held-out; the selection rule is in
# benchmarks/results/fix_replay_heldout.md)

# pyg-team/pytorch_geometric ccbbbdd7c (torch_geometric/nn/module_dict.py, ModuleDict before the fix,
# the methods the measures call), measured on the commit message's own repro
class PygModuleDict(torch.nn.ModuleDict):
    @classmethod
    def to_internal_key(cls, key) -> str:
        # ModuleDict cannot handle tuples as keys:
        if isinstance(key, tuple):
            assert len(key) > 1
            key = f"<{'___'.join(key)}>"
        assert isinstance(key, str)

        # ModuleDict cannot handle keys that exists as class attributes:
        if hasattr(cls, key):
            key = f'<{key}>'

        # ModuleDict cannot handle dots in keys:
        return key.replace('.', '#')

    @classmethod
    def to_external_key(cls, key: str):
        key = key.replace('#', '.')

        if key[0] == '<' and key[-1] == '>' and hasattr(cls, key[1:-1]):
            key = key[1:-1]

        if key[0] == '<' and key[-1] == '>' and '___' in key:
            key = tuple(key[1:-1].split('___'))

        return key

    def __getitem__(self, key):
        return super().__getitem__(self.to_internal_key(key))

    def keys(self):
        return [self.to_external_key(key) for key in super().keys()]


class PygModuleDictModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.module_dict = PygModuleDict({PygModuleDict.to_internal_key(("a", "to", "b")): nn.Linear(1, 1)})

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        key = PygModuleDict.to_internal_key(("a", "to", "b"))
        return self.module_dict[key](x)


# pyg-team/pytorch_geometric dadfeec2e (torch_geometric/nn/aggr/fused.py, FusedAggregation.forward)
class PygFusedVar(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.aggr_index = {'SumAggregation': 0, 'VarAggregation': 1}

    def forward(self, x: torch.Tensor) -> list:
        outs = [x.sum(0), None]
        count = x.new_full((x.size(1), ), x.size(0))
        # Compute `VarAggregation` second to be able to re-use it:
        i = self.aggr_index.get('VarAggregation')
        if i is not None:
            pow_sum = (x * x).sum(0)
            mean = outs[0] / count
            outs[i] = (pow_sum / count) - (mean * mean)
        return outs


# pyg-team/pytorch_geometric cd6d90b95 (torch_geometric/nn/conv/hetero_conv.py, HeteroConv.forward)
class PygHeteroConv(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.convs = PygModuleDict({PygModuleDict.to_internal_key(k): nn.Linear(2, 2)
                                    for k in (("a", "to", "b"), ("c", "to", "b"))})

    def forward(self, x_dict: dict) -> dict:
        out_dict = defaultdict(list)
        for edge_type in self.convs.keys():
            src, rel, dst = edge_type
            out = self.convs[edge_type](x_dict[src])
            out_dict[dst].append(out)
        for key, value in out_dict.items():
            out_dict[key] = torch.stack(value).sum(0)
        return dict(out_dict)


# pyg-team/pytorch_geometric b3f2f2fa7 (torch_geometric/nn/aggr/quantile.py, QuantileAggregation.forward)
def pyg_quantile_mask(count: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    shape = (count.numel(), q.numel())
    mask = (count == 0).repeat_interleave(q.numel()).view(shape)
    return mask * 2


# Lightning-AI/litgpt 64371ab8 (generate/base.py, sample; the AFTER compiles model + sample)
def litgpt_sample(logits: torch.Tensor, temperature: float = 1.0):
    logits = logits[0, -1]
    if temperature > 0.0:
        probs = torch.nn.functional.softmax(logits / temperature, dim=-1)
        return torch.multinomial(probs, num_samples=1)
    return torch.argmax(logits, dim=-1, keepdim=True)


HELD_OUT = [
    ("pyg-team/pytorch_geometric", "ccbbbdd7c", "Avoid a graph break in `ModuleDict` and `ParameterDict` (#8363)",
     "if hasattr(cls, key):",
     lambda: graph_breaks(PygModuleDictModel(), torch.randn(1, 1), user_code=HERE)),
    ("pyg-team/pytorch_geometric", "dadfeec2e", "Support for multiple aggregations in `torch.compile` (#8345)",
     "i = self.aggr_index.get('VarAggregation')",
     lambda: graph_breaks(PygFusedVar(), torch.randn(4, 2), user_code=HERE)),
    ("pyg-team/pytorch_geometric", "cd6d90b95", "Support `torch.compile` in `HeteroConv` (#8344)",
     "out_dict = defaultdict(list)",
     lambda: graph_breaks(PygHeteroConv(), {"a": torch.randn(3, 2), "c": torch.randn(3, 2)}, user_code=HERE)),
    ("pyg-team/pytorch_geometric", "b3f2f2fa7",
     "`QuantileAggregation` - pass `output_size` to the `repeat_interleave` operation (#7426)",
     "mask = (count == 0).repeat_interleave(self.q.numel()).view(shape)",
     lambda: graph_breaks(pyg_quantile_mask, torch.tensor([0, 2, 1]), torch.tensor([.25, .5]), user_code=HERE)),
    ("Lightning-AI/litgpt", "64371ab8", "Faster and compile friendly text generation (#726)",
     "return torch.multinomial(probs, num_samples=1)",
     lambda: graph_breaks(litgpt_sample, torch.randn(1, 3, 16), user_code=HERE)),
]

# The second held-out set (bench_fix_replay.py --set held-out-2; the selection rule is in
# benchmarks/results/fix_replay_heldout2.md)

# pytorch/torchtitan 5fb660047 (torchtitan/models/common/attention.py, FlexAttentionWrapper.forward
# before the fix; the inductor options of the class's torch.compile left out: the measure compiles
# with the eager backend)
class TitanFlexAttentionWrapper(nn.Module):
    _compiled_flex_attn = torch.compile(flex_attention)

    def forward(self, q, k, v, *, block_mask=None, scale=None, return_lse: bool = False,
                enable_gqa: bool = False):
        return TitanFlexAttentionWrapper._compiled_flex_attn(
            q,
            k,
            v,
            block_mask=block_mask,
            scale=scale,
            enable_gqa=enable_gqa,
            return_lse=return_lse,
        )


# city96/ComfyUI-GGUF 0c3bdf3 (dequant.py; gguf.GGMLQuantizationType is a stand-in IntEnum of the
# same members' values, the gguf package not being a dependency here)
class GGMLQuantizationType(enum.IntEnum):
    F32 = 0
    F16 = 1
    Q8_0 = 8


TORCH_COMPATIBLE_QTYPES = {None, GGMLQuantizationType.F32, GGMLQuantizationType.F16}


def is_torch_compatible(tensor):
    return tensor is None or getattr(tensor, "tensor_type", None) in TORCH_COMPATIBLE_QTYPES


def gguf_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    # the caller's shape (GGMLLayer.get_weight): dequantize only what torch cannot use as is
    if is_torch_compatible(weight):
        return x @ weight
    return x


def _gguf_weight() -> torch.Tensor:
    w = torch.randn(4, 4)
    w.tensor_type = GGMLQuantizationType.F16
    return w


# foundation-model-stack/foundation-model-stack 3e8ac119 (fms/modules/positions.py,
# CachedYarnRotaryEmbedding._compute_cos_sin_cache before the fix)
class FmsYarnCache(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.original_max_position_embeddings = 16
        self.scaling_factor = 2.0
        self.attn_factor = 1.0

    def forward(self, inv_freq: torch.Tensor, device: torch.device = torch.device("cpu")) -> torch.Tensor:
        t = torch.arange(
            int(self.original_max_position_embeddings * self.scaling_factor),
            device=device,
            dtype=torch.float32,
        )
        freqs = torch.outer(t, inv_freq).float()
        cos = freqs.cos() * self.attn_factor
        sin = freqs.sin() * self.attn_factor
        freqs_cis = torch.stack([cos, -sin, sin, cos], dim=-1).view(*cos.shape, 2, 2)
        return freqs_cis


# foundation-model-stack/foundation-model-stack ad6dc919 (fms/modules/positions.py,
# RotaryEmbedding._alpha before the fix, with NTK scaling on)
class FmsNtkAlpha(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.ntk_scaling = True
        self.max_seq_len = 4

    def _alpha(self, seq_len) -> int:
        if not self.ntk_scaling:
            alpha = 1
        else:
            alpha = int(
                2 ** math.ceil(math.log2(math.ceil(seq_len / self.max_seq_len)))
            )
        return alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self._alpha(x.shape[1])


# foundation-model-stack/foundation-model-stack f67863d0 (fms/modules/positions.py,
# RotaryEmbedding.compute_freqs_cis before the fix: the device as the caches' key; NTK scaling off)
class FmsDeviceKey(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cached_freqs = {}
        self.max_seq_len_cached = {}
        self.max_seq_len = 8
        self.ratio = 10_000
        self.dim = 4

    def compute_freqs_cis(self, device, max_seq_len=2048):
        alpha = 1

        if device not in self.cached_freqs:
            self.cached_freqs[device] = {}
        if device not in self.max_seq_len_cached:
            self.max_seq_len_cached[device] = 0

        max_seq_len = max(max_seq_len, self.max_seq_len * alpha)

        if (
            alpha in self.cached_freqs[device]
            and max_seq_len <= self.max_seq_len_cached[device]
        ):
            return alpha

        ratio = self.ratio
        dim = self.dim

        freqs = 1.0 / (
            ratio
            ** (torch.arange(0, dim, 2, device=device)[: (dim // 2)].float() / dim)
        )

        t = torch.arange(max_seq_len, device=device, dtype=freqs.dtype)
        freqs = torch.outer(t, freqs).float()
        self.max_seq_len_cached[device] = max_seq_len
        self.cached_freqs[device][alpha] = torch.stack(
            [
                torch.cos(freqs),
                -torch.sin(freqs),
                torch.sin(freqs),
                torch.cos(freqs),
            ],
            dim=2,
        ).view(*freqs.shape, 2, 2)

        return alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        alpha = self.compute_freqs_cis(x.device, x.shape[1])
        return x * self.cached_freqs[x.device][alpha][: x.shape[1], 0, 0, 0].sum()


HELD_OUT_2 = [
    ("pytorch/torchtitan", "5fb660047", "Use return_aux in FlexAttention to avoid graph breaking warnings.warn (#2684)",
     "return_lse=return_lse,",
     lambda: graph_breaks(TitanFlexAttentionWrapper(), *[torch.randn(1, 2, 16, 8)] * 3, return_lse=True,
                          user_code=HERE)),
    ("city96/ComfyUI-GGUF", "0c3bdf3", "Enable more torch.compile optimization by reducing graph breaks (#243)",
     "TORCH_COMPATIBLE_QTYPES = {None, gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16}",
     lambda: graph_breaks(gguf_linear, torch.randn(2, 4), _gguf_weight(), user_code=HERE)),
    ("foundation-model-stack/foundation-model-stack", "3e8ac119", "Refactor to avoid graph breaks",
     "int(self.original_max_position_embeddings * self.scaling_factor),",
     lambda: graph_breaks(FmsYarnCache(), torch.rand(4), user_code=HERE)),
    ("foundation-model-stack/foundation-model-stack", "ad6dc919", "fix some graph break issues when running with TP",
     "2 ** math.ceil(math.log2(math.ceil(seq_len / self.max_seq_len)))",
     lambda: graph_breaks(FmsNtkAlpha(), torch.randn(2, 6), user_code=HERE)),
    ("foundation-model-stack/foundation-model-stack", "f67863d0", "fixing graph breaks caused by device as key in map",
     "if device not in self.cached_freqs:",
     lambda: graph_breaks(FmsDeviceKey(), torch.randn(2, 6), user_code=HERE)),
]

SCREENED = [
    ("huggingface/diffusers", "9f3c0fdcd8", "Avoiding graph break by changing the way we infer dtype in vae.decoder",
     "upscale_dtype = next(iter(self.up_blocks.parameters())).dtype",
     lambda: graph_breaks(VaeDecoder(), torch.randn(2, 4, 8, 8), user_code=HERE)),
    ("huggingface/diffusers", "71a6fd9f0d", "Remove compile bottlenecks from ZImage pipeline",
     "feats_cat[torch.cat(inner_pad_mask)] = pad_token",
     lambda: graph_breaks(z_image_pad, [torch.randn(3, 4), torch.randn(3, 4)],
                          [torch.tensor([True, False, False]), torch.tensor([False, True, True])],
                          torch.randn(4), user_code=HERE)),
    ("Lightning-AI/litgpt", "47806045", "Eliminate cuda syncs",
     "return torch.cat(loss_chunks).sum() / max(1, non_masked_elems)",
     lambda: graph_breaks(litgpt_loss, [torch.rand(4), torch.rand(4)], torch.tensor([1, -100, 2, 3]),
                          user_code=HERE)),
    ("huggingface/diffusers", "d70f8ee18b", "[WAN] fix recompilation issues",
     "self.freqs = self.freqs.to(hidden_states.device)",
     lambda: recompiles(WanRope(), [(torch.randn(2, 3),)] * 3, user_code=HERE)),
    ("huggingface/diffusers", "d8bc1a4e51", "[Torch.compile] Fixes torch compile graph break",
     "return super().forward(x)",
     lambda: graph_breaks(LoRACompatibleConv(4, 4, 3, padding=1), torch.randn(2, 4, 8, 8), user_code=HERE)),
    ("huggingface/diffusers", "48ce118d1c", "[torch.compile] fix graph break problems partially",
     "if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):",
     lambda: graph_breaks(unet_upsample_flag, torch.randn(2, 4, 12, 12), user_code=HERE)),
    ("kornia/kornia", "865a598c0", "fix(augmentation): make Resize compute_transformation fullgraph-safe",
     'if params["output_size"] == input.shape[-2:]:',
     lambda: graph_breaks(resize_transformation, torch.randn(2, 3, 8, 8),
                          {"output_size": torch.tensor([[8, 8], [8, 8]]), "src": torch.randn(2, 4, 2)},
                          user_code=HERE)),
    ("pyg-team/pytorch-frame", "8e964d27", "fix(pt2): Skip data-dependent validation to allow constructing mnt/met "
     "in compiled regions", "assert self.offset[0] == 0",
     lambda: graph_breaks(frame_validate, torch.tensor([0, 2, 4]), torch.randn(3, 4), user_code=HERE)),
]


# The third held-out set (bench_fix_replay.py --set held-out-3; the selection rule is in
# benchmarks/results/fix_replay_heldout3.md)

# facebookresearch/detectron2 b33e8134 (detectron2/layers/wrappers.py, Conv2d.forward before the fix;
# norm and activation left as None)
class D2Conv2d(torch.nn.Conv2d):
    def __init__(self, *args, **kwargs):
        norm = kwargs.pop("norm", None)
        activation = kwargs.pop("activation", None)
        super().__init__(*args, **kwargs)

        self.norm = norm
        self.activation = activation

    def forward(self, x):
        if not torch.jit.is_scripting():
            with warnings.catch_warnings(record=True):
                if x.numel() == 0 and self.training:
                    # https://github.com/pytorch/pytorch/issues/12013
                    assert not isinstance(
                        self.norm, torch.nn.SyncBatchNorm
                    ), "SyncBatchNorm does not support empty inputs!"

        x = F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )
        if self.norm is not None:
            x = self.norm(x)
        if self.activation is not None:
            x = self.activation(x)
        return x


# facebookresearch/detectron2 d47d69e5 (detectron2/modeling/anchor_generator.py, BufferList; the loop
# head of detectron2/export/c10.py Caffe2RPN._generate_proposals before the fix, its body a stand-in
# for the Caffe2 GenerateProposals op)
class D2BufferList(nn.Module):
    def __init__(self, buffers):
        super().__init__()
        for i, buffer in enumerate(buffers):
            # Use non-persistent buffer so the values are not saved in checkpoint
            self.register_buffer(str(i), buffer, persistent=False)

    def __len__(self):
        return len(self._buffers)

    def __iter__(self):
        return iter(self._buffers.values())


class D2AnchorGenerator(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.cell_anchors = D2BufferList([torch.randn(3, 4), torch.randn(3, 4)])
        self.strides = [4, 8]


class D2Caffe2RPN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.anchor_generator = D2AnchorGenerator()

    def forward(self, objectness_logits_pred, anchor_deltas_pred):
        out = []
        for scores, bbox_deltas, cell_anchors_tensor, feat_stride in zip(
            objectness_logits_pred,
            anchor_deltas_pred,
            iter(self.anchor_generator.cell_anchors),
            self.anchor_generator.strides,
        ):
            out.append(scores.sum() * cell_anchors_tensor / feat_stride + bbox_deltas.mean())
        return out


# facebookresearch/detectron2 detectron2/structures/boxes.py (Boxes' __init__ as a stand-in that only
# stores the tensor, Boxes.cat verbatim at 5fcee61c) and detectron2/export/c10.py (Caffe2Boxes, and
# InstancesList before 1d9ae74c, with its __setattr__: the methods the measures call)
class D2Boxes:
    def __init__(self, tensor):
        self.tensor = tensor

    @classmethod
    def cat(cls, boxes_list):
        assert isinstance(boxes_list, (list, tuple))
        if len(boxes_list) == 0:
            return cls(torch.empty(0))
        assert all([isinstance(box, D2Boxes) for box in boxes_list])

        # use torch.cat (v.s. layers.cat) so the returned boxes never share storage with input
        cat_boxes = cls(torch.cat([b.tensor for b in boxes_list], dim=0))
        return cat_boxes


class D2Caffe2Boxes(D2Boxes):
    def __init__(self, tensor):
        assert isinstance(tensor, torch.Tensor)
        assert tensor.dim() == 2 and tensor.size(-1) in [4, 5, 6], tensor.size()
        self.tensor = tensor


class D2InstancesList(object):
    def __init__(self, im_info, indices, extra_fields=None):
        # [N, 3] -> (H, W, Scale)
        self.im_info = im_info
        # [N,] -> indice of batch to which the instance belongs
        self.indices = indices
        # [N, ...]
        self.batch_extra_fields = extra_fields or {}

        self.image_size = self.im_info

    def set(self, name, value):
        if isinstance(value, D2Boxes):
            data_len = value.tensor.shape[0]
        elif isinstance(value, torch.Tensor):
            data_len = value.shape[0]
        else:
            data_len = len(value)
        if len(self.batch_extra_fields):
            assert (
                len(self) == data_len
            ), "Adding a field of length {} to a Instances of length {}".format(data_len, len(self))
        self.batch_extra_fields[name] = value

    def __setattr__(self, name, val):
        if name in ["im_info", "indices", "batch_extra_fields", "image_size"]:
            super().__setattr__(name, val)
        else:
            self.set(name, val)

    def __getattr__(self, name):
        if name not in self.batch_extra_fields:
            raise AttributeError("Cannot find field '{}' in the given Instances!".format(name))
        return self.batch_extra_fields[name]

    def __len__(self):
        return len(self.indices)


class _D2Proposal:
    def __init__(self, boxes) -> None:
        self.proposal_boxes = boxes


def d2_rois(t1: torch.Tensor, t2: torch.Tensor) -> torch.Tensor:
    # Caffe2FastRCNNOutputsInference.__call__ before 5fcee61c: the proposals' boxes concatenated
    proposals = [_D2Proposal(D2Caffe2Boxes(t1)), _D2Proposal(D2Caffe2Boxes(t2))]
    rois = type(proposals[0].proposal_boxes).cat([p.proposal_boxes for p in proposals])
    return rois.tensor * 2


def d2_set_mask(pred_mask_logits: torch.Tensor, im_info: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    # Caffe2MaskRCNNInference.__call__ before 1d9ae74c: the mask field set as an attribute
    pred_instances = [D2InstancesList(im_info, indices, {"pred_boxes": D2Caffe2Boxes(im_info[:, :4])})]
    mask_probs_pred = pred_mask_logits.sigmoid()
    pred_instances[0].pred_masks = mask_probs_pred
    return pred_instances[0].pred_masks * 2


def d2_set_checked(pred_mask_logits: torch.Tensor, im_info: torch.Tensor, indices: torch.Tensor) -> torch.Tensor:
    # InstancesList.set before 31bebdea (the length check the fix adds a torch._check to), on a
    # second field
    inst = D2InstancesList(im_info, indices, {"pred_boxes": D2Caffe2Boxes(im_info[:, :4])})
    inst.set("pred_masks", pred_mask_logits.sigmoid())
    return inst.pred_masks * 2


# huggingface/accelerate aba3b8c7 (src/accelerate/utils/operations.py send_to_device's tensor branch
# before the fix; src/accelerate/utils/imports.py is_npu_available, is_xpu_available and
# is_ipex_available, src/accelerate/utils/environment.py str_to_bool and parse_flag_from_env, as
# at its parent; is_xpu_available's path with intel_extension_for_pytorch installed left out)
def acc_str_to_bool(value) -> int:
    value = value.lower()
    if value in ("y", "yes", "t", "true", "on", "1"):
        return 1
    elif value in ("n", "no", "f", "false", "off", "0"):
        return 0
    else:
        raise ValueError(f"invalid truth value {value}")


def acc_parse_flag_from_env(key, default=False):
    """Returns truthy value for `key` from the env if available else the default."""
    value = os.environ.get(key, str(default))
    return acc_str_to_bool(value) == 1  # As its name indicates `str_to_bool` actually returns an int...


def acc_is_ipex_available():
    def get_major_and_minor_from_version(full_version):
        return str(version.parse(full_version).major) + "." + str(version.parse(full_version).minor)

    _torch_version = importlib.metadata.version("torch")
    if importlib.util.find_spec("intel_extension_for_pytorch") is None:
        return False
    _ipex_version = "N/A"
    try:
        _ipex_version = importlib.metadata.version("intel_extension_for_pytorch")
    except importlib.metadata.PackageNotFoundError:
        return False
    torch_major_and_minor = get_major_and_minor_from_version(_torch_version)
    ipex_major_and_minor = get_major_and_minor_from_version(_ipex_version)
    if torch_major_and_minor != ipex_major_and_minor:
        warnings.warn(
            f"Intel Extension for PyTorch {ipex_major_and_minor} needs to work with PyTorch {ipex_major_and_minor}.*,"
            f" but PyTorch {_torch_version} is found. Please switch to the matching version and run again."
        )
        return False
    return True


@lru_cache
def acc_is_npu_available(check_device=False):
    "Checks if `torch_npu` is installed and potentially if a NPU is in the environment"
    if importlib.util.find_spec("torch") is None or importlib.util.find_spec("torch_npu") is None:
        return False
    return True


@lru_cache
def acc_is_xpu_available(check_device=False):
    "check if user disables it explicitly"
    if not acc_parse_flag_from_env("ACCELERATE_USE_XPU", default=True):
        return False
    "Checks if `intel_extension_for_pytorch` is installed and potentially if a XPU is in the environment"
    if acc_is_ipex_available():
        raise NotImplementedError("the XPU path (taken only with intel_extension_for_pytorch) is left out")
    else:
        return False


def acc_send_to_device(tensor, device, non_blocking=False, skip_keys=None):
    if hasattr(tensor, "to"):
        if acc_is_npu_available():
            # `torch.Tensor.to(<int num>)` is not supported by `torch_npu` (see this [issue](https://github.com/Ascend/pytorch/issues/16)).
            if isinstance(device, int):
                device = f"npu:{device}"
            # `torch.Tensor.to("npu")` could not find context when called for the first time (see this [issue](https://gitee.com/ascend/pytorch/issues/I8KECW?from=project-issue)).
            elif device == torch.device("npu"):
                device = "npu:0"
        elif acc_is_xpu_available():
            if isinstance(device, int):
                device = f"xpu:{device}"
            elif device == torch.device("xpu"):
                device = "xpu:0"
        try:
            return tensor.to(device, non_blocking=non_blocking)
        except TypeError:  # .to() doesn't accept non_blocking as kwarg
            return tensor.to(device)
    else:
        return tensor


class AccHookedLinear(nn.Module):
    # what accelerate's device hooks do in a dispatched model's forward: inputs sent to the layer's device
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(acc_send_to_device(x, torch.device("cpu")))


# Lightning-AI/lightning 39144701ad (src/lightning/fabric/loggers/logger.py rank_zero_experiment before
# the fix, without its docstring, and _DummyExperiment's nop and __getattr__; rank_zero_only from
# lightning-utilities, as stored, rank 0; the logger and its experiment are stand-ins)
def pl_rank_zero_only(fn: Callable) -> Callable:
    """Function that can be used as a decorator to enable a function/method being called only on global rank 0."""

    @wraps(fn)
    def wrapped_fn(*args: Any, **kwargs: Any) -> Optional[Any]:
        if not hasattr(pl_rank_zero_only, "rank"):
            raise RuntimeError("The `rank_zero_only.rank` value needs to be set before use")

        if pl_rank_zero_only.rank == 0:
            return fn(*args, **kwargs)
        return None

    return wrapped_fn


pl_rank_zero_only.rank = 0


class _PlDummyExperiment:
    """Dummy experiment."""

    def nop(self, *args: Any, **kw: Any) -> None:
        pass

    def __getattr__(self, _: Any) -> Callable:
        return self.nop


def pl_rank_zero_experiment(fn: Callable) -> Callable:
    """Returns the real experiment on rank 0 and otherwise the _DummyExperiment."""

    @wraps(fn)
    def experiment(self) -> Union[Any, _PlDummyExperiment]:  # type: ignore[no-untyped-def]
        @pl_rank_zero_only
        def get_experiment() -> Callable:
            return fn(self)

        return get_experiment() or _PlDummyExperiment()

    return experiment


class _PlExperiment:
    def __init__(self) -> None:
        self.logged = []

    def log(self, value) -> None:
        self.logged.append(value)


class _PlLogger:
    def __init__(self) -> None:
        self._experiment = _PlExperiment()

    @property
    @pl_rank_zero_experiment
    def experiment(self):
        return self._experiment


class PlLoggingModule(nn.Module):
    # a LightningModule-like step that logs through the logger's experiment inside the compiled code
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self.logger = _PlLogger()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x)
        self.logger.experiment.log(1)
        return y


# jeshraghian/snntorch 98d4099 (snntorch/surrogate.py Triangular and triangular before the fix)
class SnnTriangular(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_, threshold=1):
        ctx.save_for_backward(input_)
        ctx.threshold = threshold
        out = (input_ > 0).float()
        return out

    @staticmethod
    def backward(ctx, grad_output):
        (input_,) = ctx.saved_tensors
        grad_input = grad_output.clone()
        grad = grad_input * ctx.threshold
        grad[input_ >= 0] = -grad[input_ >= 0]
        return grad, None


def snn_triangular():
    """Triangular surrogate gradient enclosed with
    a parameterized threshold."""

    def inner(x):
        return SnnTriangular.apply(x)

    return inner


class SnnSpike(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.spike_grad = snn_triangular()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.spike_grad(self.lin(x) - 0.5)


# lucidrains/ring-attention-pytorch ea5a6e5 (ring_attention_pytorch/ring_attention.py default_attention
# before the fix, the non-causal masked path)
def ring_default_attention(q, k, v, mask=None, causal: bool = False):
    import einx  # the einx the environment has (not the 2024 one the fix was written against)

    device = q.device
    q = q * (q.shape[-1] ** -0.5)

    mask_value = -torch.finfo(q.dtype).max

    # similarity

    sim = torch.einsum('b i h d, b j h d -> b h i j', q, k)

    # masking

    if causal:
        i, j = sim.shape[-2:]
        causal_mask = torch.ones((i, j), dtype = torch.bool, device = device).triu(j - i + 1)
        sim = torch.where(causal_mask, mask_value, sim)

    elif mask is not None:
        sim = einx.where('b j, b h i j, -> b h i j', mask, sim, mask_value)

    # attend

    attn = einx.softmax('b h i [j]', sim)

    # aggregate

    out = torch.einsum('b h i j, b j h d -> b i h d', attn, v)

    return out


# collabora/WhisperSpeech c3df313 (whisperspeech/t2s_up_wds_mlang_enclm.py, Encoder.forward before the
# fix, without its layers: the in-place add the fix replaces)
class WsEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(16, 8)
        self.positional_embedding = nn.Parameter(torch.randn(6, 8))

    def forward(self, Stoks, positions, lang_emb=None):
        xin = self.embedding(Stoks)

        if lang_emb is not None: xin += lang_emb

        x = (xin +
             self.positional_embedding[positions]).to(xin.dtype)
        return x


HELD_OUT_3 = [
    ("facebookresearch/detectron2", "b33e8134", "Remove warnings",
     "with warnings.catch_warnings(record=True):",
     lambda: graph_breaks(D2Conv2d(3, 4, 3, padding=1), torch.randn(2, 3, 8, 8), user_code=HERE)),
    ("facebookresearch/detectron2", "d47d69e5", "Modify iter loop around BufferList",
     "iter(self.anchor_generator.cell_anchors),",
     lambda: graph_breaks(D2Caffe2RPN(), [torch.randn(2, 3)] * 2, [torch.randn(2, 3)] * 2, user_code=HERE)),
    ("facebookresearch/detectron2", "1d9ae74c", "Remove setattr for InstancesList",
     "pred_instances[0].pred_masks = mask_probs_pred",
     lambda: graph_breaks(d2_set_mask, torch.randn(3, 5), torch.randn(3, 5), torch.arange(3), user_code=HERE)),
    ("facebookresearch/detectron2", "5fcee61c", "Remove type(UserDefinedObjectVariable)",
     "rois = type(proposals[0].proposal_boxes).cat([p.proposal_boxes for p in proposals])",
     lambda: graph_breaks(d2_rois, torch.randn(3, 5), torch.randn(2, 5), user_code=HERE)),
    ("facebookresearch/detectron2", "31bebdea", "Fix torch export issue",
     "len(self) == data_len",
     lambda: graph_breaks(d2_set_checked, torch.randn(3, 5), torch.randn(3, 5), torch.arange(3), user_code=HERE)),
    ("huggingface/accelerate", "aba3b8c7", "Prefer `is_torch_tensor` over `hasattr` for torch.compile. (#2387)",
     'elif hasattr(tensor, "to"):',
     lambda: graph_breaks(AccHookedLinear(), torch.randn(2, 3), user_code=HERE)),
    ("Lightning-AI/lightning", "39144701ad", "Simplify `rank_zero_experiment` for `torch.compile` support (#17216)",
     "return get_experiment() or _DummyExperiment()",
     lambda: graph_breaks(PlLoggingModule(), torch.randn(2, 3), user_code=HERE)),
    ("jeshraghian/snntorch", "98d4099", "Remove default values that break torch.compile",
     "def forward(ctx, input_, threshold=1):",
     lambda: graph_breaks(SnnSpike(), torch.randn(2, 4), user_code=HERE)),
    ("lucidrains/ring-attention-pytorch", "ea5a6e5", "einx does not play well with torch.compile yet",
     "sim = einx.where('b j, b h i j, -> b h i j', mask, sim, mask_value)",
     lambda: graph_breaks(ring_default_attention, *[torch.randn(2, 5, 2, 4)] * 3,
                          torch.tensor([[True] * 4 + [False]] * 2), user_code=HERE)),
    ("collabora/WhisperSpeech", "c3df313", "models: torch.compile support for training",
     "if lang_emb is not None: xin += lang_emb",
     lambda: graph_breaks(WsEncoder(), torch.randint(0, 16, (2, 6)), torch.arange(6), torch.randn(2, 1, 8),
                          user_code=HERE)),
]


# facebookresearch/multimodal ea3830b (torchmultimodal/utils/common.py, shift_dim before the fix,
# without its docstring)
def tmm_shift_dim(
    x: torch.Tensor, src_dim: int = -1, dest_dim: int = -1, make_contiguous: bool = True
) -> torch.Tensor:
    n_dims = len(x.shape)
    # Remap negative dim
    if src_dim < 0:
        src_dim = n_dims + src_dim
    if dest_dim < 0:
        dest_dim = n_dims + dest_dim

    assert 0 <= src_dim < n_dims and 0 <= dest_dim < n_dims

    dims = list(range(n_dims))
    del dims[src_dim]

    permutation = []
    ctr = 0
    for i in range(n_dims):
        if i == dest_dim:
            permutation.append(src_dim)
        else:
            permutation.append(dims[ctr])
            ctr += 1
    x = x.permute(permutation)
    if make_contiguous:
        x = x.contiguous()
    return x


# facebookresearch/pytorchvideo fae0d89 (pytorchvideo/layers/swish.py before the fix, without the
# docstrings); the screen runs under no_grad as the smoke run does, so the backward is not traced
class PtvSwishFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = x * torch.sigmoid(x)
        ctx.save_for_backward(x)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        x = ctx.saved_variables[0]
        sigmoid_x = torch.sigmoid(x)
        return grad_output * (sigmoid_x * (1 + x * (1 - sigmoid_x)))


class PtvSwish(nn.Module):
    def forward(self, x):
        return PtvSwishFunction.apply(x)


HELD_OUT_3 += [
    ("facebookresearch/multimodal", "ea3830b", "Enable PT2 for dalle2 with old FSDP api (#431)",
     "del dims[src_dim]",
     lambda: graph_breaks(lambda x: tmm_shift_dim(x, 1, -1) * 2, torch.randn(2, 3, 4, 5), user_code=HERE)),
    ("facebookresearch/pytorchvideo", "fae0d89", "Use torchdynamo compatible backward API for Swish (#248)",
     "x = ctx.saved_variables[0]",
     lambda: graph_breaks(nn.Sequential(nn.Linear(4, 4), PtvSwish()), torch.randn(2, 4), user_code=HERE)),
]


# hexgrad/kokoro 84d64f0 (kokoro/istftnet.py, Generator.__init__ before the fix: the two lines that
# size layers with np.prod, verbatim; the rest of the generator, which needs scipy, left out;
# upsample_rates and gen_istft_hop_size are Kokoro's configuration values)
class KokoroGeneratorSizes(nn.Module):
    def __init__(self, upsample_rates=(10, 6), gen_istft_hop_size=5, i=0, gen_istft_n_fft=20, c_cur=4):
        super().__init__()
        self.f0_upsamp = nn.Upsample(scale_factor=np.prod(upsample_rates) * gen_istft_hop_size)
        stride_f0 = np.prod(upsample_rates[i + 1:])
        self.noise_conv = nn.Conv1d(
            gen_istft_n_fft + 2, c_cur, kernel_size=stride_f0 * 2, stride=stride_f0, padding=(stride_f0+1) // 2)

    def forward(self, f0: torch.Tensor, x: torch.Tensor):
        return self.f0_upsamp(f0[:, None]).transpose(1, 2), self.noise_conv(x)


HELD_OUT_3 += [
    ("hexgrad/kokoro", "84d64f0", "replace `np.prod()` with `math.prod()` to make Kokoro `torch.compile`-able (#91)",
     "self.f0_upsamp = nn.Upsample(scale_factor=np.prod(upsample_rates) * gen_istft_hop_size)",
     lambda: graph_breaks(KokoroGeneratorSizes(), torch.randn(2, 8), torch.randn(2, 22, 60), user_code=HERE)),
]


# explosion/curated-transformers 1da2497 (curated_transformers/layers/attention.py before the fix:
# QkvMode and create_causal_mask, without the docstrings and comments; the dispatch on qkv_mode as
# SelfAttention.forward does it, its branches stand-ins)
class CtQkvMode(IntEnum):
    SEPARATE = (0,)
    MERGED_SPLIT_BEFORE = (1,)
    MERGED_SPLIT_AFTER = (2,)


def ct_create_causal_mask(query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
    query_len = query.size(2)
    key_len = key.size(2)

    causal_mask = torch.tril(
        torch.full(
            (key_len, key_len),
            True,
            device=query.device,
        ),
    ).view(1, 1, key_len, key_len)
    return causal_mask[:, :, key_len - query_len : key_len, :key_len]


class CtSelfAttention(nn.Module):
    def __init__(self, qkv_mode: CtQkvMode = CtQkvMode.MERGED_SPLIT_BEFORE) -> None:
        super().__init__()
        self.qkv_mode = qkv_mode
        self.input = nn.Linear(4, 12)

    def forward(self, query: torch.Tensor, key: torch.Tensor) -> torch.Tensor:
        if self.qkv_mode == CtQkvMode.SEPARATE:
            out = query
        elif self.qkv_mode == CtQkvMode.MERGED_SPLIT_BEFORE:
            out = self.input(query)[..., :4]
        else:
            out = self.input(query)[..., 4:8]
        return out.masked_fill(~ct_create_causal_mask(query, key)[..., :1], 0.0)


HELD_OUT_3 += [
    ("explosion/curated-transformers", "1da2497", "Make some changes to support `torch.compile` and add tests (#257)",
     "class QkvMode(IntEnum):",
     lambda: graph_breaks(CtSelfAttention(), torch.randn(2, 2, 3, 4), torch.randn(2, 2, 5, 4), user_code=HERE)),
]


# IBM/terratorch 23de0771 (terratorch/models/necks.py, ReshapeTokensToImage.collapse_dims, without its
# unused `shape` local, and forward before the fix; the neck's base class and registry left out)
class TtReshapeTokensToImage(nn.Module):
    def __init__(self, remove_cls_token=True, effective_time_dim: int = 1):
        super().__init__()
        self.remove_cls_token = remove_cls_token
        self.effective_time_dim = effective_time_dim

    def collapse_dims(self, x):
        """
        When the encoder output has more than 3 dimensions, is necessary to 
        reshape it. 
        """
        batch = x.shape[0]
        e = x.shape[-1]
        collapsed_dim = np.prod(x.shape[1:-1])

        return x.reshape(batch, collapsed_dim, e)

    def forward(self, features: list[torch.Tensor]) -> list[torch.Tensor]:
        out = []
        for x in features:
            if self.remove_cls_token:
                x_no_token = x[:, 1:, :]
            else:
                x_no_token = x
            x_no_token = self.collapse_dims(x_no_token)
            number_of_tokens = x_no_token.shape[1]
            tokens_per_timestep = number_of_tokens // self.effective_time_dim
            h = int(np.sqrt(tokens_per_timestep))

            encoded = rearrange(
                x_no_token,
                "batch (t h w) e -> batch (t e) h w",
                batch=x_no_token.shape[0],
                t=self.effective_time_dim,
                h=h,
            )
            out.append(encoded)
        return out


# SalesforceAIResearch/uni2ts 3c7d660 (src/uni2ts/distribution/_base.py, DistrParamProj.forward before
# the fix: its rearrange call verbatim, on one projection; the pytree helpers left out)
class Uni2tsParamProj(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 6)
        self.out_size = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rearrange(
                self.proj(x),
                "... (dim out) -> ... out dim",
                out=self.out_size,
            )


HELD_OUT_3 += [
    ("IBM/terratorch", "23de0771", "Changed the np.sqrt to math.sqrt to avoid having a graph break with torch.compile()",
     "h = int(np.sqrt(tokens_per_timestep))",
     lambda: graph_breaks(TtReshapeTokensToImage(), [torch.randn(2, 17, 4)], user_code=HERE)),
    ("SalesforceAIResearch/uni2ts", "3c7d660",
     "fix: weird bug affecting torch.compile when einops.rearrange has 'out' as variable name",
     '"... (dim out) -> ... out dim",',
     lambda: graph_breaks(Uni2tsParamProj(), torch.randn(2, 3, 4), user_code=HERE)),
]


# keras-team/keras 4b9f71f81d (keras/src/ops/operation_utils.py, validate_reshape_shape before the fix,
# without its docstring; the reshape around it as GroupNormalization._reshape_into_groups does it).
# The fix is for dynamic shapes: measured by hand with torch.compile(dynamic=True) too, one frame.
def keras_validate_reshape_shape(newshape, newshape_arg_name="newshape"):
    for dim in newshape:
        if isinstance(dim, int) and dim < -1:
            raise ValueError(
                f"Each dimension in `{newshape_arg_name}` must be a "
                "non-negative integer, or `-1` for a single unknown "
                f"dimension. Received: {newshape_arg_name}={newshape}."
            )
    if [d for d in newshape if isinstance(d, int)].count(-1) > 1:
        raise ValueError(
            "There must be at most one unknown dimension (-1) in "
            f"`{newshape_arg_name}`. Received: "
            f"{newshape_arg_name}={newshape}."
        )


def keras_group_reshape(x: torch.Tensor) -> torch.Tensor:
    shape = (x.shape[0], -1, 2, x.shape[-1])
    keras_validate_reshape_shape(shape)
    return x.reshape(shape) * 2


HELD_OUT_3 += [
    ("keras-team/keras", "4b9f71f81d", "Fix validate_reshape_shape crash under torch.compile with dynamic shapes (#22894)",
     "if [d for d in newshape if isinstance(d, int)].count(-1) > 1:",
     lambda: graph_breaks(keras_group_reshape, torch.randn(2, 4, 3), user_code=HERE)),
]


# mobiusml/hqq 6ec9591 (hqq/core/utils.py, is_divisible before the fix; the caller a stand-in)
def hqq_is_divisible(val1: int, val2: int) -> bool:
    return int(val2 * np.ceil(val1 / val2)) == val1


def hqq_pad_check(W: torch.Tensor) -> torch.Tensor:
    if hqq_is_divisible(W.numel(), 8):
        return W * 2
    return W


HELD_OUT_3 += [
    ("mobiusml/hqq", "6ec9591", "fix math ceil for torch.compile",
     "return int(val2 * np.ceil(val1 / val2)) == val1",
     lambda: graph_breaks(hqq_pad_check, torch.randn(4, 6), user_code=HERE)),
]


# ostris/ai-toolkit 4ece17b7 (toolkit/kohya_lora.py, LoRAModule before the fix: the scale set from a
# tensor alpha through numpy, verbatim, and the forward's use of it; the module's other arguments,
# dropout paths and apply_to left out)
class AitLoRAModule(nn.Module):
    def __init__(self, lora_dim: int = 2, alpha: torch.Tensor = torch.tensor(1.0), multiplier: float = 1.0):
        super().__init__()
        self.org = nn.Linear(4, 4)
        self.lora_dim = lora_dim
        self.lora_down = nn.Linear(4, lora_dim, bias=False)
        self.lora_up = nn.Linear(lora_dim, 4, bias=False)
        if type(alpha) == torch.Tensor:
            alpha = alpha.detach().float().numpy()  # without casting, bf16 causes error
        alpha = self.lora_dim if alpha is None or alpha == 0 else alpha
        self.scale = alpha / self.lora_dim
        self.multiplier = multiplier

    def forward(self, x):
        org_forwarded = self.org(x)
        lx = self.lora_up(self.lora_down(x))
        scale = self.scale
        return org_forwarded + lx * self.multiplier * scale


HELD_OUT_3 += [
    ("ostris/ai-toolkit", "4ece17b7", "Fix adapter scalar handling under torch.compile (#946)",
     "alpha = alpha.detach().float().numpy()  # without casting, bf16 causes error",
     lambda: graph_breaks(AitLoRAModule(), torch.randn(2, 4), user_code=HERE)),
]


# invoke-ai/InvokeAI 8bd52ed744 (invokeai/backend/quantization/gguf/utils.py before the fix: the set
# and is_torch_compatible, verbatim but for the names; gguf's GGMLQuantizationType is the stand-in
# above, as for ComfyUI-GGUF's fix of the same line)
INVOKE_TORCH_COMPATIBLE_QTYPES = {None, GGMLQuantizationType.F32, GGMLQuantizationType.F16}


def invoke_is_torch_compatible(tensor: Optional[torch.Tensor]):
    return getattr(tensor, "tensor_type", None) in INVOKE_TORCH_COMPATIBLE_QTYPES


def invoke_gguf_linear(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    if invoke_is_torch_compatible(weight):
        return x @ weight
    return x


HELD_OUT_3 += [
    ("invoke-ai/InvokeAI", "8bd52ed744", "fix: improve gguf performance with torch.compile",
     "TORCH_COMPATIBLE_QTYPES = {None, gguf.GGMLQuantizationType.F32, gguf.GGMLQuantizationType.F16}",
     lambda: graph_breaks(invoke_gguf_linear, torch.randn(2, 4), _gguf_weight(), user_code=HERE)),
]



# --- the fourth held-out set (benchmarks/results/fix_replay_heldout4.md) ---

# microsoft/DeepSpeed 6d0dbf86e (deepspeed/runtime/pipe/module.py, PipelineModule.forward and
# _is_checkpointable before the fix, verbatim but for the activation-checkpoint call; __init__ a stub
# with four layers and a checkpoint interval of 2, the grid and the distributed setup left out)
class DsPipelineModule(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.forward_funcs = [nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 4), lambda x: x * 2]
        self.layers = nn.ModuleList([f for f in self.forward_funcs if isinstance(f, nn.Module)])
        self.activation_checkpoint_interval = 2
        self.checkpointable_layers = None
        self.activation_checkpoint_func = None

    def _is_checkpointable(self, funcs):
        if self.activation_checkpoint_func is not None:
            if self.__class__.__name__ in ('GPTModelPipe', 'GPT2ModelPipe'):
                return all('ParallelTransformerLayerPipe' in f.__class__.__name__ for f in funcs)
        if self.checkpointable_layers is not None:
            return all(f.__class__.__name__ in self.checkpointable_layers for f in funcs)
        params = [f.parameters() for f in funcs if isinstance(f, torch.nn.Module)]
        return any(len(list(p)) > 0 for p in params)

    def forward(self, x):
        num_layers = len(self.forward_funcs)
        for start_idx in range(0, num_layers, self.activation_checkpoint_interval):
            end_idx = min(start_idx + self.activation_checkpoint_interval, num_layers)
            funcs = self.forward_funcs[start_idx:end_idx]
            if self._is_checkpointable(funcs):
                for f in funcs:
                    x = f(x)
            else:
                for f in funcs:
                    x = f(x)
        return x


# arogozhnikov/einops e61294d (einops/packing.py, unpack: the count of unknown axes before the fix;
# the caller a stand-in passing one symbolic and one -1 length, as unpack does with a dynamic shape).
# The fix is for dynamic shapes: measured by hand with torch.compile(dynamic=True) too, no break.
def einops_count_unknown(x: torch.Tensor) -> torch.Tensor:
    lengths_of_composed_axes = [x.shape[0] // 2, -1]
    n_unknown_composed_axes = sum(x == -1 for x in lengths_of_composed_axes)
    return x * n_unknown_composed_axes


# NVIDIA-NeMo/Automodel ec2f7240a (nemo_automodel/components/models/common/utils.py,
# Float32RMSNorm.forward before the fix, with its per-method compile decorator; four of them in a
# model compiled whole, as the replay would compile it: the inner torch.compile is traced through)
class AmFloat32RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    @torch.compile(fullgraph=True, dynamic=True)
    def forward(self, x):
        input_dtype = x.dtype
        x = x.float()
        x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return (self.weight * x).to(input_dtype)


class AmNormStack(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linears = nn.ModuleList([nn.Linear(8, 8) for _ in range(4)])
        self.norms = nn.ModuleList([AmFloat32RMSNorm(8) for _ in range(4)])

    def forward(self, x):
        for lin, norm in zip(self.linears, self.norms):
            x = norm(lin(x))
        return x


# mir-group/allegro 1228d37 (allegro/nn/_strided/_contract.py, Contracter.forward before the fix: the
# three-operand einsum, with the einstring the constructor builds for uvu weights and full ij)
def allegro_contract(x1: torch.Tensor, x2: torch.Tensor, ww3j: torch.Tensor) -> torch.Tensor:
    out = torch.einsum("zui,zuj,ukij->zuk", x1, x2, ww3j)
    return out


# open-edge-platform/physical-ai-studio cfab7fec (library/src/getiaction/policies/act/model.py and
# policies/utils/normalization.py before the fix: `self.eval()` in the predict path, StrEnum members
# as batch keys, `is` on the normalisation mode; a stand-in policy around them)
class PasComponentKeys(enum.StrEnum):
    STATE = "state"
    ACTION = "action"
    IMAGES = "images"


class PasNormalizationType(enum.Enum):
    MEAN_STD = "mean_std"
    MIN_MAX = "min_max"


class PasACT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(4, 4)
        self.norm_mode = PasNormalizationType.MEAN_STD

    def forward(self, batch):
        self.eval()
        batch = dict(batch)
        batch[PasComponentKeys.IMAGES] = [batch[key] for key in ["observation.image"]]
        if self.norm_mode is PasNormalizationType.MEAN_STD:
            state = batch[PasComponentKeys.STATE]
        actions = self.head(state) + batch[PasComponentKeys.IMAGES][0].mean()
        return {PasComponentKeys.ACTION: actions}[PasComponentKeys.ACTION]


# GFNOrg/torchgfn 8afa17db (src/gfn/estimators.py, DiscreteGraphPolicyEstimator: the key check over
# the logits before the fix; the logits a plain dict of tensors here, the estimator's graph
# machinery left out)
def gfn_transform_logits(logits: dict) -> dict:
    transformed_logits = {}
    for key in logits.keys():
        assert isinstance(key, str)
        transformed_logits[key] = torch.log_softmax(logits[key], dim=-1)
    return transformed_logits


# lab-cosmo/torch-pme 91c5269 (src/torchpme/lib/kvectors.py, get_ns_mesh before the fix, verbatim).
# The fix is for CUDA (a CPU `torch.tensor(2)` raised to a CUDA exponent); measured on CPU.
def pme_get_ns_mesh(cell: torch.Tensor, mesh_spacing: float):
    basis_norms = torch.linalg.norm(cell, dim=1)
    ns_approx = basis_norms / mesh_spacing
    ns_actual_approx = 2 * ns_approx + 1  # actual number of mesh points
    # ns = [nx, ny, nz], closest power of 2 (helps for FT efficiency)
    return torch.tensor(2).pow(torch.ceil(torch.log2(ns_actual_approx)).long())


def pme_mesh_size(cell: torch.Tensor) -> torch.Tensor:
    return pme_get_ns_mesh(cell, 0.5) * 2


HELD_OUT_4 = [
    ("microsoft/DeepSpeed", "6d0dbf86e", "move is_checkpointable call reducing torch.compile Graph breaks (#5759)",
     "if self._is_checkpointable(funcs):",
     lambda: graph_breaks(DsPipelineModule(), torch.randn(2, 4), user_code=HERE)),
    ("arogozhnikov/einops", "e61294d", "Coerce bool to int",
     "n_unknown_composed_axes = sum(x == -1 for x in lengths_of_composed_axes)",
     lambda: graph_breaks(einops_count_unknown, torch.randn(6), user_code=HERE)),
    ("NVIDIA-NeMo/Automodel", "ec2f7240a", "fix: Float32RMSNorm torch.compile crash on PyTorch 2.11+ (#1650)",
     "@torch.compile(fullgraph=True, dynamic=True)",
     lambda: graph_breaks(AmNormStack(), torch.randn(2, 5, 8), user_code=HERE)),
    ("mir-group/allegro", "1228d37", "make `contract` compile-able",
     "out = torch.einsum(self._contract_einstr, x1, x2, ww3j)",
     lambda: graph_breaks(allegro_contract, torch.randn(3, 4, 5), torch.randn(3, 4, 6), torch.randn(4, 7, 5, 6),
                          user_code=HERE)),
    ("open-edge-platform/physical-ai-studio", "cfab7fec", "Make ACT model dynamo friendly",
     "if norm_mode is NormalizationType.MEAN_STD:",
     lambda: graph_breaks(PasACT(), {"state": torch.randn(2, 4), "observation.image": torch.randn(2, 3, 4, 4)},
                          user_code=HERE)),
    ("GFNOrg/torchgfn", "8afa17db", "Move isinstance assert behind debug guard, suppress pyright for torch.compile",
     "assert isinstance(key, str)",
     lambda: graph_breaks(gfn_transform_logits, {"action_type": torch.randn(2, 3), "node_class": torch.randn(2, 4)},
                          user_code=HERE)),
    ("lab-cosmo/torch-pme", "91c5269", "Fix `get_ns_mesh` under `torch.compile` on CUDA (#219)",
     "return torch.tensor(2).pow(torch.ceil(torch.log2(ns_actual_approx)).long())",
     lambda: graph_breaks(pme_mesh_size, torch.eye(3) * 4, user_code=HERE)),
]

# --- the fifth held-out set (benchmarks/results/fix_replay_heldout5.md) ---

# younggyoseo/FastTD3 8390742 (fast_td3/fast_td3_simbav2.py before the fix: l2normalize, Scaler,
# HyperEmbedder and HyperTanhPolicy's forward, verbatim; orthogonal init and the LERP blocks left out),
# run as the fix's mixed-precision training runs them, under autocast (bfloat16 on the CPU)
def td3_l2normalize(tensor: torch.Tensor, axis: int = -1, eps: float = 1e-8) -> torch.Tensor:
    return tensor / (torch.linalg.norm(tensor, ord=2, dim=axis, keepdim=True) + eps)


class Td3Scaler(nn.Module):
    def __init__(self, dim: int, init: float = 1.0, scale: float = 1.0) -> None:
        super().__init__()
        self.scaler = nn.Parameter(torch.full((dim,), init * scale))
        self.forward_scaler = init / scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scaler * self.forward_scaler * x


class Td3SimbaActor(nn.Module):
    def __init__(self, in_dim: int = 8, hidden_dim: int = 16, action_dim: int = 4, c_shift: float = 3.0) -> None:
        super().__init__()
        self.w = nn.Linear(in_dim + 1, hidden_dim, bias=False)
        self.scaler = Td3Scaler(hidden_dim)
        self.c_shift = c_shift
        self.mean_w1 = nn.Linear(hidden_dim, hidden_dim, bias=False)
        self.mean_scaler = Td3Scaler(hidden_dim)
        self.mean_w2 = nn.Linear(hidden_dim, action_dim, bias=False)
        self.mean_bias = nn.Parameter(torch.zeros(action_dim))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        new_axis = torch.full((*x.shape[:-1], 1), self.c_shift, device=x.device)
        x = torch.cat([x, new_axis], dim=-1)
        x = td3_l2normalize(x, axis=-1)
        x = self.w(x)
        x = self.scaler(x)
        x = td3_l2normalize(x, axis=-1)
        return x

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            x = self.embed(x)
            mean = self.mean_w1(x)
            mean = self.mean_scaler(mean)
            mean = self.mean_w2(mean) + self.mean_bias
            return torch.tanh(mean)



# InterDigitalInc/CompressAI 2489952 (compressai/layers/layers.py, MaskedConv2d before the fix: its
# __init__ and forward verbatim but for the docstring), one type-A layer as a PixelCNN-style context
# model's first convolution. The fix is for training (a leaf that requires grad written in place):
# measured by hand with gradients too, a compiled forward and backward run on torch 2.13
class CaiMaskedConv2d(nn.Conv2d):
    def __init__(self, *args: Any, mask_type: str = "A", **kwargs: Any):
        super().__init__(*args, **kwargs)

        if mask_type not in ("A", "B"):
            raise ValueError(f'Invalid "mask_type" value "{mask_type}"')

        self.register_buffer("mask", torch.ones_like(self.weight.data))
        _, _, h, w = self.mask.size()
        self.mask[:, :, h // 2, w // 2 + (mask_type == "B") :] = 0
        self.mask[:, :, h // 2 + 1 :] = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # TODO(begaintj): weight assigment is not supported by torchscript
        self.weight.data *= self.mask
        return super().forward(x)

HELD_OUT_5 = [
    ("younggyoseo/FastTD3", "8390742", "Improved AMP/torch.compile compatibility of SimbaV2 (#21)",
     "new_axis = torch.full((*x.shape[:-1], 1), self.c_shift, device=x.device)",
     lambda: graph_breaks(Td3SimbaActor(), torch.randn(2, 8), user_code=HERE)),
    ("InterDigitalInc/CompressAI", "2489952",
     "perf: allow @torch.compile by avoiding in-place operation for MaskedConv",
     "self.weight.data *= self.mask",
     lambda: graph_breaks(CaiMaskedConv2d(3, 8, 5, padding=2), torch.randn(2, 3, 8, 8), user_code=HERE)),
]


# --- the sixth held-out set (benchmarks/results/fix_replay_heldout6.md) ---

# braindecode/braindecode eb7f934d (braindecode/models/codebrain.py, Conv before the fix: verbatim),
# the legacy hook-based weight norm the fix swaps for torch.nn.utils.parametrizations.weight_norm
class BdCodeBrainConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, dilation=1):
        super(BdCodeBrainConv, self).__init__()
        self.padding = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(
            in_channels,
            out_channels,
            kernel_size,
            dilation=dilation,
            padding=self.padding,
        )
        self.conv = nn.utils.weight_norm(self.conv)
        nn.init.kaiming_normal_(self.conv.weight)

    def forward(self, x):
        out = self.conv(x)
        return out


# archinetai/audio-diffusion-pytorch 8e57645 (audio_diffusion_pytorch/modules.py, AttentionBase.forward
# before the fix, without relative positions). einops_exts is not in this environment: its
# rearrange_many applies rearrange to each tensor in a generator expression, as written here
def adp_rearrange_many(tensors, pattern, **kwargs):
    return (rearrange(tensor, pattern, **kwargs) for tensor in tensors)


class AdpAttentionBase(nn.Module):
    def __init__(self, features: int = 8, head_features: int = 4, num_heads: int = 2) -> None:
        super().__init__()
        self.scale = head_features ** -0.5
        self.num_heads = num_heads
        self.use_rel_pos = False
        self.to_out = nn.Linear(in_features=head_features * num_heads, out_features=features)

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        # Split heads
        q, k, v = adp_rearrange_many((q, k, v), "b n (h d) -> b h n d", h=self.num_heads)
        # Compute similarity matrix
        sim = torch.einsum("... n d, ... m d -> ... n m", q, k)
        sim = (sim + self.rel_pos(*sim.shape[-2:])) if self.use_rel_pos else sim
        sim = sim * self.scale
        # Get attention matrix with softmax
        attn = sim.softmax(dim=-1)
        # Compute values
        out = torch.einsum("... n m, ... m d -> ... n d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


# sgl-project/sglang-omni 15c51d2 (sglang_omni/models/fishaudio_s2_pro/runtime/s2pro_ar.py, before the
# fix: verbatim), on softmax probabilities as the sampler passes them
def s2pro_multinomial_no_sync(probs: torch.Tensor) -> torch.Tensor:
    return torch.multinomial(probs, num_samples=1).to(dtype=torch.int)


# 0-5788719150923125/praxis ec57bda5 (praxis/routers/smear.py, SMEAR before the fix: the direct-mode
# forward and the parameter merging it calls, their code verbatim with the helpers' docstrings and
# typing aliases trimmed; MIT), in training mode, with small experts as RecurrentBlock passes them
class PraxisSmearConfig:
    def __init__(self, hidden_size: int, num_experts: int, dropout: float = 0.0) -> None:
        self.hidden_size, self.num_experts, self.dropout = hidden_size, num_experts, dropout


class PraxisSmear(nn.Module):
    def __init__(self, config: Any, experts: list) -> None:
        super().__init__()
        self.num_experts = config.num_experts
        self.hidden_size = config.hidden_size
        self.dropout_rate = getattr(config, "dropout", 0.1)
        self.experts = nn.ModuleList(experts)
        self.parameter_names: list = []
        self.router_norm = nn.LayerNorm(self.hidden_size)
        self.router = nn.Linear(self.hidden_size, len(self.experts))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self._direct_forward(inputs, None)[0]

    def _collect_parameter_names(
        self, module: nn.Module, prefix: str = ""
    ) -> list:
        parameter_names = []
        for name, submodule in module.named_children():
            parameter_names.extend(
                self._collect_parameter_names(submodule, prefix + name + ".")
            )
        for name, _ in module.named_parameters(recurse=False):
            parameter_names.append(prefix + name)
        return parameter_names

    def _merge_expert_parameters(
        self, routing_probs: torch.Tensor
    ) -> dict:
        merged_state_dict: dict = {}
        expert_weights = routing_probs.mean(dim=0)  # [num_experts]
        self.parameter_names = self._collect_parameter_names(self.experts[0])
        for param_name in self.parameter_names:
            merged_param: Optional[torch.Tensor] = None
            for expert_idx, expert in enumerate(self.experts):
                param = self._get_module_parameter(expert, param_name)
                if param is None:
                    raise ValueError(
                        f"Parameter '{param_name}' not found in expert {expert_idx}."
                    )
                if param.device != expert_weights.device:
                    param = param.to(expert_weights.device)
                weighted_param = param * expert_weights[expert_idx]
                if merged_param is None:
                    merged_param = weighted_param
                else:
                    merged_param = merged_param + weighted_param
            assert merged_param is not None, "Merged parameter should not be None"
            merged_state_dict[param_name] = merged_param
        return merged_state_dict

    def _get_module_parameter(
        self, module: nn.Module, param_name: str
    ) -> Optional[torch.Tensor]:
        parts = param_name.split(".")
        submodule = module
        for part in parts[:-1]:
            if hasattr(submodule, part):
                submodule = getattr(submodule, part)
            else:
                return None
        return getattr(submodule, parts[-1], None)

    def _direct_forward(
        self,
        inputs: torch.Tensor,
        current_state: Optional[torch.Tensor],
    ):
        """Direct mode forward pass for RecurrentBlock usage."""
        # Get routing probabilities with proper normalization
        router_input = inputs.mean(dim=1)  # Average across sequence length
        router_input = self.router_norm(router_input)  # Layer norm on input

        # Get logits and normalize weight matrix rows
        logits = self.router(router_input)

        # Normalize rows of weight matrix (as mentioned in paper)
        with torch.no_grad():
            self.router.weight.data = F.normalize(self.router.weight.data, dim=1)

        routing_probs = F.softmax(logits, dim=-1)  # [batch_size, num_experts]

        # Apply expert dropout during training (drop entire experts)
        if self.training and self.dropout_rate > 0:
            # Create dropout mask for experts
            expert_mask = torch.bernoulli(
                torch.ones_like(routing_probs) * (1 - self.dropout_rate)
            )
            routing_probs = routing_probs * expert_mask
            # Renormalize to ensure probabilities sum to 1
            routing_probs = routing_probs / (
                routing_probs.sum(dim=-1, keepdim=True) + 1e-8
            )

        # Merge expert parameters based on routing probabilities
        merged_state_dict = self._merge_expert_parameters(routing_probs)

        # Use the first expert as the base module structure
        base_module = self.experts[0]

        # Apply the merged parameters using functional_call
        result = torch.func.functional_call(
            base_module, merged_state_dict, (inputs, current_state), {}
        )

        # Handle different return formats
        if isinstance(result, tuple) and len(result) == 3:
            return result
        elif isinstance(result, tuple) and len(result) == 2:
            # Add zero aux loss if not provided
            return result[0], result[1], 0.0
        else:
            # Fallback
            return result, current_state, 0.0


class PraxisExpert(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, state: Optional[torch.Tensor]):
        return torch.tanh(self.lin(x)), state


# 0-5788719150923125/praxis 00c0a4f0 (praxis/utils/tensors.py, create_block_ids before the fix:
# verbatim; MIT), with the special tokens as a list of ints and as an int
def praxis_create_block_ids(
    input_ids: torch.LongTensor,
    special_tokens: Union[list, tuple, torch.LongTensor],
) -> torch.LongTensor:
    # Convert special tokens to tensor if needed
    if not isinstance(special_tokens, torch.Tensor):
        special_tokens = torch.tensor(
            special_tokens, device=input_ids.device, dtype=input_ids.dtype
        )

    # Create padding token mask
    padding_mask = torch.isin(input_ids, special_tokens)

    # Create boundaries only when transitioning FROM non-padding TO padding
    # Get previous token's padding status (shift padding mask right)
    prev_padding = torch.cat(
        [
            torch.zeros(
                (input_ids.size(0), 1), device=input_ids.device, dtype=torch.bool
            ),
            padding_mask[:, :-1],
        ],
        dim=1,
    )

    # Create block boundaries at first token and after non-padding to padding transitions
    block_boundaries = torch.cat(
        [
            torch.ones(
                (input_ids.size(0), 1), device=input_ids.device, dtype=torch.bool
            ),
            (~prev_padding[:, :-1]) & padding_mask[:, :-1],
        ],
        dim=1,
    )

    # Cumsum for block numbering
    block_ids = block_boundaries.cumsum(dim=1)

    return block_ids


HELD_OUT_6 = [
    ("braindecode/braindecode", "eb7f934d", "Solve torch compile error",
     "self.conv = nn.utils.weight_norm(self.conv)",
     lambda: graph_breaks(BdCodeBrainConv(4, 8), torch.randn(2, 4, 16), user_code=HERE)),
    ("archinetai/audio-diffusion-pytorch", "8e57645", "Fix 2-ch AE default encoder & torch.compile error",
     'q, k, v = rearrange_many((q, k, v), "b n (h d) -> b h n d", h=self.num_heads)',
     lambda: graph_breaks(AdpAttentionBase(), torch.randn(2, 4, 8), torch.randn(2, 4, 8), torch.randn(2, 4, 8),
                          user_code=HERE)),
    ("sgl-project/sglang-omni", "15c51d2", "fix(s2pro): use Gumbel-max sampling to avoid CUDA sync",
     "return torch.multinomial(probs, num_samples=1).to(dtype=torch.int)",
     lambda: graph_breaks(s2pro_multinomial_no_sync, torch.randn(2, 8).softmax(-1), user_code=HERE)),
    # pass 2 of the sixth set
    ("0-5788719150923125/praxis", "ec57bda5", "fix compile behavior",
     "self.router.weight.data = F.normalize(self.router.weight.data, dim=1)",
     lambda: graph_breaks(PraxisSmear(PraxisSmearConfig(16, 4), [PraxisExpert() for _ in range(4)]).train(),
                          torch.randn(2, 8, 16), user_code=HERE)),
    ("0-5788719150923125/praxis", "00c0a4f0", "fix compile slicing error",
     "padding_mask = torch.isin(input_ids, special_tokens)",
     lambda: graph_breaks(praxis_create_block_ids, torch.randint(0, 10, (2, 12)), [0, 1], user_code=HERE)
     + graph_breaks(praxis_create_block_ids, torch.randint(0, 10, (2, 12)), 0, user_code=HERE)),
]


# --- the seventh held-out set (benchmarks/results/fix_replay_heldout7.md) ---

# graphcore-research/unit-scaling 2cfb76c (unit_scaling/docs.py, _validate before the fix: verbatim;
# Apache-2.0, "Copyright (c) 2023 Graphcore Ltd. All rights reserved."). Every op of
# unit_scaling.functional is wrapped by it; the fix ("Workaround PT2.2 dynamo bug") looks up the
# default only for the unsupported arguments.
def us_validate(
    f: Callable[..., Any], unsupported_args: Any = {}
) -> Callable[..., Any]:
    """Wraps the supplied function in a check to ensure its arguments aren't in the
    unsupported args list. Unsupported args are by nature optional (they have
    a default value). It is assumed this default is valid, but all other values are
    invalid."""

    argspec = inspect.getfullargspec(f)

    # argspec.defaults is a tuple of default arguments. These may begin at an offset
    # relative to rgspec.args due to args without a default. To zip these properly the
    # lists are reversed, zipped, and un-reversed, with missing values filled with `...`
    rev_args = reversed(argspec.args)
    rev_defaults = reversed(argspec.defaults) if argspec.defaults else []
    rev_arg_default_pairs = list(zip_longest(rev_args, rev_defaults, fillvalue=...))
    default_kwargs = dict(reversed(rev_arg_default_pairs))

    for arg in unsupported_args:
        if arg not in default_kwargs:
            raise ValueError(f"unsupported arg '{arg}' is not valid.")
        if default_kwargs[arg] is ...:
            raise ValueError(f"unsupported arg '{arg}' has no default value")

    @wraps(f)
    def f_new(*args: Any, **kwargs: Any) -> Any:
        arg_values = dict(zip(argspec.args, args))
        full_kwargs = {**arg_values, **kwargs}
        for arg_name, arg_value in full_kwargs.items():
            arg_default_value = default_kwargs[arg_name]
            if arg_name in unsupported_args and arg_value != arg_default_value:
                raise ValueError(
                    f"Support for the '{arg_name}' argument has not been implemented"
                    " for the unit-scaling library. Please remove it or replace it"
                    " with its default value."
                )
        return f(*args, **kwargs)

    return f_new


# stand-ins with the signatures of unit_scaling.functional's gelu, dropout and cross_entropy (the
# unsupported arguments as the library declares them)
def _us_gelu(input: torch.Tensor, approximate: str = "none") -> torch.Tensor:
    return F.gelu(input, approximate=approximate)


def _us_dropout(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> torch.Tensor:
    return F.dropout(input, p, training, inplace)


def _us_cross_entropy(input: torch.Tensor, target: torch.Tensor, weight=None, size_average=None,
                      ignore_index: int = -100, reduce=None, reduction: str = "mean",
                      label_smoothing: float = 0.0) -> torch.Tensor:
    return F.cross_entropy(input, target, ignore_index=ignore_index, reduction=reduction)


def us_head(x: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    gelu = us_validate(_us_gelu, unsupported_args=["approximate"])
    dropout = us_validate(_us_dropout, unsupported_args=["inplace"])
    cross_entropy = us_validate(_us_cross_entropy,
                                unsupported_args=["weight", "size_average", "reduce", "label_smoothing"])
    return cross_entropy(dropout(gelu(x), 0.1, False), target)


# qubvel-org/segmentation_models.pytorch 456871a (segmentation_models_pytorch/encoders/mobilenet.py,
# MobileNetV2Encoder.get_stages and .forward before the fix: verbatim; MIT). torchvision is not in
# this environment: the class is a stand-in with MobileNetV2's `features` layout (19 blocks, here
# 3x3 convolutions) instead of subclassing torchvision.models.MobileNetV2.
class SmpMobileNetV2Encoder(nn.Module):
    def __init__(self, depth: int = 5) -> None:
        super().__init__()
        self.features = nn.Sequential(*[nn.Conv2d(3 if i == 0 else 4, 4, 3, padding=1) for i in range(19)])
        self._depth = depth

    def get_stages(self):
        return [
            nn.Identity(),
            self.features[:2],
            self.features[2:4],
            self.features[4:7],
            self.features[7:14],
            self.features[14:],
        ]

    def forward(self, x):
        stages = self.get_stages()

        features = []
        for i in range(self._depth + 1):
            x = stages[i](x)
            features.append(x)

        return features


HELD_OUT_7 = [
    ("graphcore-research/unit-scaling", "2cfb76c", "Workaround PT2.2 dynamo bug "
     "(https://github.com/pytorch/pytorch/issues/117563)",
     "if arg_name in unsupported_args and arg_value != arg_default_value:",
     lambda: graph_breaks(us_head, torch.randn(2, 5), torch.tensor([1, 3]), user_code=HERE)),
    ("qubvel-org/segmentation_models.pytorch", "456871a", "Fix torch compile, script, export (#1031)",
     "stages = self.get_stages()",
     lambda: graph_breaks(SmpMobileNetV2Encoder().eval(), torch.randn(2, 3, 8, 8), user_code=HERE)),
]


def main() -> int:
    torch.set_num_threads(1)
    for set_, entries in (("main", SCREENED), ("held-out", HELD_OUT), ("held-out-2", HELD_OUT_2),
                         ("held-out-3", HELD_OUT_3), ("held-out-4", HELD_OUT_4),
                         ("held-out-5", HELD_OUT_5), ("held-out-6", HELD_OUT_6),
                         ("held-out-7", HELD_OUT_7)):
        for repo, sha, subject, line, measure in entries:
            got = measure()
            print(json.dumps({"repo": repo, "sha": sha, "subject": subject, "before_line": line,
                              "measured": [(getattr(g, "gb", None), getattr(g, "gb_type", None) or str(g))
                                           for g in got],
                              **({"set": set_} if set_ != "main" else {})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
