# Replay excerpt of mcgrof/knlp at ae052c1fb422a54e67e7d35872d0f12eebe6bfa9, gpt2/model.py (MIT; the upstream licence header follows where the file has one).
# Kept verbatim: LayerNorm, CausalSelfAttention, MLP, Block, GPTConfig. Left out: the rest of gpt2/model.py (the Fisher-metric helpers and the GPT2 model class, whose new log_sdpa_backends method is the third hunk, skipped); the commit's other files (gpt2/rgsa.py, the same change in its RGSA attention; gpt2/trainers/vanilla.py, which calls the new method) are not replayed.
# Upstream LICENSE:
# MIT License
#
# Copyright (c) 2025 Luis Chamberlain and contributors
#
# Permission is hereby granted, free of charge, to any person obtaining a copy
# of this software and associated documentation files (the "Software"), to deal
# in the Software without restriction, including without limitation the rights
# to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
# copies of the Software, and to permit persons to whom the Software is
# furnished to do so, subject to the following conditions:
#
# The above copyright notice and this permission notice shall be included in all
# copies or substantial portions of the Software.
#
# THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
# IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
# FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
# AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
# LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
# OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
# SOFTWARE.

"""
GPT-2 Language Model implementation adapted from nanoGPT by Andrej Karpathy.
Original source: https://github.com/karpathy/nanoGPT
"""

import math
import inspect
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn import functional as F


class LayerNorm(nn.Module):
    """LayerNorm with optional bias. PyTorch doesn't support simply bias=False"""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


class CausalSelfAttention(nn.Module):
    """Multi-head causal self-attention with Flash Attention support"""

    def __init__(self, config):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        # key, query, value projections for all heads, but in a batch
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        # output projection
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        # regularization
        self.attn_dropout = nn.Dropout(config.dropout)
        self.resid_dropout = nn.Dropout(config.dropout)
        self.n_head = config.n_head
        self.n_embd = config.n_embd
        self.dropout = config.dropout

    @torch.no_grad()
    def _log_sdpa_backend(self, q, k, v):
        """Log which SDPA backend is available for our tensor shapes."""
        backends = {
            "flash_sdp": {
                "enable_flash": True,
                "enable_mem_efficient": False,
                "enable_math": False,
            },
            "mem_efficient_sdp": {
                "enable_flash": False,
                "enable_mem_efficient": True,
                "enable_math": False,
            },
            "math_sdp": {
                "enable_flash": False,
                "enable_mem_efficient": False,
                "enable_math": True,
            },
        }
        available = []
        for name, kwargs in backends.items():
            try:
                with torch.backends.cuda.sdp_kernel(**kwargs):
                    torch.nn.functional.scaled_dot_product_attention(
                        q[:1, :, :8, :],
                        k[:1, :, :8, :],
                        v[:1, :, :8, :],
                        attn_mask=None,
                        dropout_p=0.0,
                        is_causal=True,
                    )
                available.append(name)
            except RuntimeError:
                pass
        print(
            f"  Baseline SDPA backends available: {', '.join(available)} "
            f"(Q={list(q.shape)}, dtype={q.dtype})"
        )

    def forward(self, x, mechint_kv_mask=None):
        B, T, C = (
            x.size()
        )  # batch size, sequence length, embedding dimensionality (n_embd)

        # calculate query, key, values for all heads in batch and move head forward to be the batch dim
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(
            1, 2
        )  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(
            1, 2
        )  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(
            1, 2
        )  # (B, nh, T, hs)

        # Apply mechint KV masks if provided (for circuit discovery)
        if mechint_kv_mask is not None:
            k, v, _ = mechint_kv_mask(k, v)

        # Flash Attention: efficient fused attention kernel
        y = torch.nn.functional.scaled_dot_product_attention(
            q,
            k,
            v,
            attn_mask=None,
            dropout_p=self.dropout if self.training else 0,
            is_causal=True,
        )

        y = (
            y.transpose(1, 2).contiguous().view(B, T, C)
        )  # re-assemble all head outputs side by side

        # output projection
        y = self.resid_dropout(self.c_proj(y))
        return y


class MLP(nn.Module):
    """MLP with GELU activation"""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        x = self.c_fc(x)
        x = self.gelu(x)
        x = self.c_proj(x)
        x = self.dropout(x)
        return x


class Block(nn.Module):
    """Transformer block: communication followed by computation"""

    def __init__(self, config):
        super().__init__()
        self.ln_1 = LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


@dataclass
class GPTConfig:
    # Model architecture
    block_size: int = 1024  # maximum sequence length
    vocab_size: int = (
        50304  # GPT-2 vocab_size of 50257, padded up to nearest multiple of 64
    )
    n_layer: int = 12  # number of transformer blocks
    n_head: int = 12  # number of attention heads
    n_embd: int = 768  # embedding dimension
    dropout: float = 0.0  # dropout rate
    bias: bool = True  # use bias in Linear and LayerNorm

    # Model size presets
    @classmethod
    def from_name(cls, name: str):
        """Create config from model name (gpt2-tiny, gpt2, gpt2-medium, gpt2-large, gpt2-xl)"""
        # GPT-2 model configurations
        configs = {
            "gpt2-tiny": dict(
                n_layer=6, n_head=8, n_embd=512
            ),  # ~22M params (for double-attn comparison)
            "gpt2": dict(n_layer=12, n_head=12, n_embd=768),  # 124M params
            "gpt2-medium": dict(n_layer=24, n_head=16, n_embd=1024),  # 350M params
            "gpt2-large": dict(n_layer=36, n_head=20, n_embd=1280),  # 774M params
            "gpt2-xl": dict(n_layer=48, n_head=25, n_embd=1600),  # 1558M params
        }
        if name not in configs:
            raise ValueError(
                f"Unknown model name: {name}. Choose from {list(configs.keys())}"
            )
        return cls(**configs[name])
