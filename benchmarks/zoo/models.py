"""The zoo's models: real architectures from pip-installed libraries, tiny and weightless.

Each entry becomes one module `zoo/models/<name>.py` of the generated repository
(benchmarks/zoo/generate.py) with a `build()` factory, and one model in its pt2bot.yml.
transformers models are built from their config classes (no hub, no weights): hidden size
32, 2 layers, 2 heads, vocabulary 100. The encoders return `zoo.layers.TokenHead` of their
last hidden state: the shared layer that a "PR touching a shared layer" edits. timm and
x-transformers are the pure-PyTorch libraries that import beside torch 2.13.0+cpu (timm
through the torchvision shim in zoo/__init__.py; see benchmarks/real_code/collect.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

TEXT_IN = "[{name: input_ids, shape: [batch, seq], dtype: int64, low: 0, high: 100}]"
TEXT_SHAPES = {"batch": [2, 4], "seq": [8, 16]}
IMAGE_IN = "[{name: pixel_values, shape: [batch, 3, 32, 32], dtype: float32}]"
TIMM_IN = "[{name: x, shape: [batch, 3, 32, 32], dtype: float32}]"      # timm's forward(x)
BATCH = {"batch": [2, 4]}


@dataclass(frozen=True)
class ZooModel:
    name: str
    library: str
    source: str                 # the body of zoo/models/<name>.py
    inputs: str                 # YAML flow list for pt2bot.yml
    shapes: dict[str, list[int]] = field(default_factory=lambda: dict(TEXT_SHAPES))
    shared: bool = False        # imports zoo.layers (the shared layer)

    @property
    def dynamic(self) -> list[str]:
        return list(self.shapes)


def _encoder(cls: str, config: str, kw: str, title: str) -> str:
    return f'''"""{title}: transformers {cls} from a tiny {config} (no weights), pooled by the
shared TokenHead."""
from __future__ import annotations

import torch
from transformers import {config}, {cls}

from zoo.layers import TokenHead


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = {cls}({config}({kw}))
        self.head = TokenHead(32)

    def forward(self, input_ids):
        h = self.body(input_ids=input_ids).last_hidden_state
        return self.head(h)


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
'''


def _decoder(cls: str, config: str, kw: str, title: str) -> str:
    return f'''"""{title}: transformers {cls} from a tiny {config} (no weights, no KV cache);
returns the last token's hidden state."""
from __future__ import annotations

import torch
from transformers import {config}, {cls}


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = {cls}({config}({kw}, use_cache=False))

    def forward(self, input_ids):
        h = self.body(input_ids=input_ids, use_cache=False).last_hidden_state
        return h[:, -1]


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
'''


BERTLIKE = ("vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, "
            "intermediate_size=64, max_position_embeddings=64")
LLAMALIKE = ("vocab_size=100, hidden_size=32, intermediate_size=64, num_hidden_layers=2, "
             "num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=64")

MODELS: list[ZooModel] = [
    # --- encoders: share zoo.layers.TokenHead
    ZooModel("bert", "transformers", _encoder("BertModel", "BertConfig", BERTLIKE, "BERT"),
             TEXT_IN, shared=True),
    ZooModel("roberta", "transformers",
             _encoder("RobertaModel", "RobertaConfig", BERTLIKE, "RoBERTa"), TEXT_IN, shared=True),
    ZooModel("distilbert", "transformers",
             _encoder("DistilBertModel", "DistilBertConfig",
                      "vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64, "
                      "max_position_embeddings=64", "DistilBERT"), TEXT_IN, shared=True),
    ZooModel("albert", "transformers",
             _encoder("AlbertModel", "AlbertConfig", BERTLIKE + ", embedding_size=16", "ALBERT"),
             TEXT_IN, shared=True),
    ZooModel("electra", "transformers",
             _encoder("ElectraModel", "ElectraConfig", BERTLIKE + ", embedding_size=16",
                      "ELECTRA"), TEXT_IN, shared=True),
    ZooModel("deberta_v2", "transformers",
             _encoder("DebertaV2Model", "DebertaV2Config", BERTLIKE, "DeBERTa-v2"), TEXT_IN,
             shared=True),
    ZooModel("mpnet", "transformers",
             _encoder("MPNetModel", "MPNetConfig", BERTLIKE, "MPNet"), TEXT_IN, shared=True),
    ZooModel("t5_encoder", "transformers",
             _encoder("T5EncoderModel", "T5Config",
                      "vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2",
                      "T5 encoder"), TEXT_IN, shared=True),
    # --- decoders
    ZooModel("gpt2", "transformers",
             _decoder("GPT2Model", "GPT2Config",
                      "vocab_size=100, n_positions=64, n_embd=32, n_layer=2, n_head=2, "
                      "bos_token_id=0, eos_token_id=0", "GPT-2"),
             TEXT_IN),
    ZooModel("llama", "transformers", _decoder("LlamaModel", "LlamaConfig", LLAMALIKE, "Llama"),
             TEXT_IN),
    ZooModel("mistral", "transformers",
             _decoder("MistralModel", "MistralConfig", LLAMALIKE, "Mistral"), TEXT_IN),
    ZooModel("qwen2", "transformers", _decoder("Qwen2Model", "Qwen2Config", LLAMALIKE, "Qwen2"),
             TEXT_IN),
    ZooModel("phi", "transformers",
             _decoder("PhiModel", "PhiConfig",
                      "vocab_size=100, hidden_size=32, intermediate_size=64, "
                      "num_hidden_layers=2, num_attention_heads=2, max_position_embeddings=64",
                      "Phi"), TEXT_IN),
    ZooModel("opt", "transformers",
             _decoder("OPTModel", "OPTConfig",
                      "vocab_size=100, hidden_size=32, num_hidden_layers=2, ffn_dim=64, "
                      "num_attention_heads=2, max_position_embeddings=64, word_embed_proj_dim=32",
                      "OPT"), TEXT_IN),
    ZooModel("gpt_neox", "transformers",
             _decoder("GPTNeoXModel", "GPTNeoXConfig", BERTLIKE, "GPT-NeoX"), TEXT_IN),
    # --- vision and audio (transformers)
    ZooModel("vit", "transformers", '''"""ViT: transformers ViTModel, 32x32 images, 8x8 patches (no weights)."""
from __future__ import annotations

import torch
from transformers import ViTConfig, ViTModel


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = ViTModel(ViTConfig(image_size=32, patch_size=8, hidden_size=32,
                                       num_hidden_layers=2, num_attention_heads=2,
                                       intermediate_size=64), add_pooling_layer=False)

    def forward(self, pixel_values):
        return self.body(pixel_values=pixel_values).last_hidden_state[:, 0]


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
''', IMAGE_IN, dict(BATCH)),
    ZooModel("convnext", "transformers", '''"""ConvNeXt: transformers ConvNextModel, two tiny stages (no weights)."""
from __future__ import annotations

import torch
from transformers import ConvNextConfig, ConvNextModel


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = ConvNextModel(ConvNextConfig(num_stages=2, hidden_sizes=[16, 32],
                                                 depths=[1, 1], out_features=None))

    def forward(self, pixel_values):
        return self.body(pixel_values=pixel_values).pooler_output


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
''', IMAGE_IN, dict(BATCH)),
    ZooModel("whisper_encoder", "transformers", '''"""Whisper encoder: transformers WhisperEncoder, 16 mel bins, 32 frames (no weights)."""
from __future__ import annotations

import torch
from transformers import WhisperConfig
from transformers.models.whisper.modeling_whisper import WhisperEncoder


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = WhisperEncoder(WhisperConfig(num_mel_bins=16, d_model=32, encoder_layers=2,
                                                 encoder_attention_heads=2, encoder_ffn_dim=64,
                                                 max_source_positions=16))

    def forward(self, input_features):
        return self.body(input_features=input_features).last_hidden_state.mean(dim=1)


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
''', "[{name: input_features, shape: [batch, 16, 32], dtype: float32}]", dict(BATCH)),
    ZooModel("wav2vec2", "transformers", '''"""wav2vec 2.0: transformers Wav2Vec2Model, two conv layers, 2 transformer layers (no weights)."""
from __future__ import annotations

import torch
from transformers import Wav2Vec2Config, Wav2Vec2Model


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = Wav2Vec2Model(Wav2Vec2Config(
            hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
            conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 8),
            num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2,
            mask_time_prob=0.0))

    def forward(self, input_values):
        return self.body(input_values=input_values).last_hidden_state.mean(dim=1)


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return Net().eval()
''', "[{name: input_values, shape: [batch, samples], dtype: float32}]",
             {"batch": [2, 4], "samples": [400, 800]}),
    # --- pure-PyTorch libraries
    ZooModel("timm_resnet", "timm", '''"""ResNet-10t from timm (random init), 32x32 images."""
from __future__ import annotations

import timm
import torch


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return timm.create_model("resnet10t", pretrained=False, num_classes=10).eval()
''', TIMM_IN, dict(BATCH)),
    ZooModel("timm_vit", "timm", '''"""A two-block ViT from timm (random init), 32x32 images, 8x8 patches."""
from __future__ import annotations

import timm
import torch


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return timm.create_model("vit_tiny_patch16_224", pretrained=False, img_size=32,
                             patch_size=8, depth=2, num_classes=10).eval()
''', TIMM_IN, dict(BATCH)),
    ZooModel("x_transformer", "x-transformers", '''"""A 2-layer decoder from x-transformers (random init)."""
from __future__ import annotations

import torch
from x_transformers import Decoder, TransformerWrapper


def build() -> torch.nn.Module:
    torch.manual_seed(0)
    return TransformerWrapper(num_tokens=100, max_seq_len=64,
                              attn_layers=Decoder(dim=32, depth=2, heads=2)).eval()
''', "[{name: x, shape: [batch, seq], dtype: int64, low: 0, high: 100}]"),
]

ONE_MODEL_PR = "llama"      # the model whose own file the one-model PR edits
