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
import json
import math
import os
from collections import defaultdict

import torch
import torch.nn.functional as F
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


def main() -> int:
    torch.set_num_threads(1)
    for set_, entries in (("main", SCREENED), ("held-out", HELD_OUT), ("held-out-2", HELD_OUT_2)):
        for repo, sha, subject, line, measure in entries:
            got = measure()
            print(json.dumps({"repo": repo, "sha": sha, "subject": subject, "before_line": line,
                              "measured": [(getattr(g, "gb", None), getattr(g, "gb_type", None) or str(g))
                                           for g in got],
                              **({"set": set_} if set_ != "main" else {})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
