# Replay excerpt of mcgrof/knlp at fabc0243cca8b96bbc4f26ff950683c38724de7b, gpt2/trainers/ra.py (MIT; the upstream licence header follows where the file has one).
# Kept verbatim: RATransformerBlock, gpt2/model.py:LayerNorm, gpt2/model.py:MLP, gpt2/model.py:GPTConfig, ra.py:RAConfig, ra.py:ContextShiftGate, ra.py:ContextRouter, ra.py:RAAttention, ra.py:RoutedMixer. Left out: the rest of gpt2/trainers/ra.py (the RAGPT model, whose get_router_stats is the fourth hunk, skipped, and the trainer) and its imports of the trainer base classes and optimizers; the helpers the block uses are kept verbatim from gpt2/model.py and ra.py at the same commit (ra.py's module-level TF32 settings are left out).
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

import math
from dataclasses import dataclass
from typing import Optional, Dict, Tuple

import torch
import torch.nn as nn
from torch.nn import functional as F


# gpt2/model.py at the same commit (verbatim):
class LayerNorm(nn.Module):
    """LayerNorm with optional bias. PyTorch doesn't support simply bias=False"""

    def __init__(self, ndim, bias):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, input):
        return F.layer_norm(input, self.weight.shape, self.weight, self.bias, 1e-5)


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
    kv_tying: bool = False  # tie key and value projections (K = V)
    k_eq_vt: bool = False  # set key to transpose of value (K = V.T)

    # Model size presets
    @classmethod
    def from_name(cls, name: str):
        """Create config from model name (gpt2, gpt2-medium, gpt2-large, gpt2-xl)"""
        # GPT-2 model configurations
        configs = {
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


# ra.py at the same commit (verbatim):
@dataclass
class RAConfig:
    """
    Configuration for Reciprocal Attention with routing.

    Core dimensions
    ---------------
    d_model:        Model embedding dimension.
    n_heads:        Total number of attention heads.
    block_size:     Maximum sequence length.

    RA head allocation
    ------------------
    ra_head_frac:   Fraction of heads allocated to RA group (0 < frac < 1).
                    Example: 0.25 means 25% of heads are RA heads.
                    Remaining heads are FULL heads.

    Router settings
    ---------------
    router_hidden:  Hidden dimension of router MLP.
    router_bias_full: Initial bias on FULL/BOTH logits (negative = discourage).

    Training schedule
    -----------------
    warmup_loss_drop: Relative loss drop to trigger Phase 2 (default: 0.15).
                      Router and RA are disabled until eval loss drops by this
                      fraction from initial value.

    Weight tying
    ------------
    tie_ra_proj:    If True, initialize RA output projection from FULL projection.
                    Encourages RA to learn compressed representation.

    Other
    -----
    dropout:        Attention dropout probability.
    """

    d_model: int = 768
    n_heads: int = 12
    block_size: int = 1024
    ra_head_frac: float = 0.25
    router_hidden: int = 16
    router_bias_full: float = -1.0
    warmup_loss_drop: float = 0.05
    tie_ra_proj: bool = True
    dropout: float = 0.0


class ContextShiftGate(nn.Module):
    """
    Compute |x - E(x)| as a per-token contextual hardness signal.

    This is the core of our routing inductive bias. The L2 norm of the
    difference between contextual hidden state and static embedding measures
    how much context has reshaped the token's representation.

    Cost: O(BTD) - just subtraction and reduction, no T^2 terms.
    """

    def __init__(self, detach_embedding: bool = True, eps: float = 1e-6):
        super().__init__()
        self.detach_embedding = detach_embedding
        self.eps = eps

    def forward(self, x: torch.Tensor, e_tok: torch.Tensor) -> torch.Tensor:
        """
        Args:
            x:     [B, T, D] contextual hidden state
            e_tok: [B, T, D] static embeddings for same tokens

        Returns:
            shift_norm: [B, T] L2 norm of (x - e_tok) per token
        """
        if self.detach_embedding:
            e_tok = e_tok.detach()

        delta = x - e_tok
        shift_norm = torch.sqrt(delta.pow(2).sum(dim=-1) + self.eps)
        return shift_norm


class ContextRouter(nn.Module):
    """
    Route tokens to compute tiers based on contextual hardness.

    Maps (x, e_tok, shift_norm) -> 2-way probabilities:
      - p_ra:   Use RA heads only (cheap, fewer heads)
      - p_full: Use FULL heads only (expensive, more heads)

    Features are FLOP-cheap per-token reductions:
      - shift_norm = |x - E(x)|
      - ||x||, ||E(x)||, <x, E(x)>

    The router MLP is tiny: features -> hidden -> 2 logits -> softmax.
    Initial bias discourages FULL to encourage cheap RA path.
    """

    def __init__(self, cfg: RAConfig):
        super().__init__()
        self.eps = 1e-6

        # Feature dimensions: shift_norm + ||x|| + ||E|| + <x,E>
        feat_dim = 4

        # Tiny router MLP: 2-way routing (RA vs FULL)
        self.mlp = nn.Sequential(
            nn.Linear(feat_dim, cfg.router_hidden),
            nn.GELU(),
            nn.Linear(cfg.router_hidden, 2),
        )

        # Bias FULL logit to discourage expensive compute initially
        with torch.no_grad():
            # Order: [RA, FULL]
            self.mlp[-1].bias.data[1] += cfg.router_bias_full

    def forward(
        self,
        x: torch.Tensor,
        e_tok: torch.Tensor,
        shift_norm: torch.Tensor,
    ) -> Dict[str, torch.Tensor]:
        """
        Args:
            x:          [B, T, D] contextual hidden state
            e_tok:      [B, T, D] static embeddings (usually detached)
            shift_norm: [B, T] from ContextShiftGate

        Returns:
            probs: dict with keys "ra", "full"
                   each value is [B, T, 1] probability tensor
        """
        # Build features
        norm_x = torch.sqrt(x.pow(2).sum(dim=-1) + self.eps)
        norm_e = torch.sqrt(e_tok.pow(2).sum(dim=-1) + self.eps)
        dot = (x * e_tok).sum(dim=-1)

        feats = torch.stack([shift_norm, norm_x, norm_e, dot], dim=-1)  # [B, T, 4]

        # Route
        logits = self.mlp(feats)  # [B, T, 2]
        probs = F.softmax(logits, dim=-1)

        return {
            "ra": probs[..., 0:1],
            "full": probs[..., 1:2],
        }


class RAAttention(nn.Module):
    """
    Shared QKV attention with FULL and RA head groups.

    Structure:
      - Single QKV projection (same as baseline GPT-2)
      - Heads split into FULL group (indices 0:n_full) and RA group (n_full:)
      - Single SDPA call computes attention for all heads
      - Separate output projections for each group

    Why this design:
      - Kernel-efficient: one attention computation, uniform head_dim
      - RA cheapness comes from fewer heads = smaller output projection
      - Clean partitioning enables future KV cache optimizations

    Returns both out_full and out_ra for router to mix downstream.
    """

    def __init__(self, cfg: RAConfig):
        super().__init__()
        self.cfg = cfg

        assert cfg.d_model % cfg.n_heads == 0
        self.d_model = cfg.d_model
        self.n_heads = cfg.n_heads
        self.head_dim = cfg.d_model // cfg.n_heads

        # Compute head group sizes
        n_ra = max(1, int(round(cfg.ra_head_frac * cfg.n_heads)))
        n_ra = min(n_ra, cfg.n_heads - 1)  # At least 1 FULL head
        n_full = cfg.n_heads - n_ra

        self.n_ra = n_ra
        self.n_full = n_full

        # Head slices
        self.full_slice = slice(0, n_full)
        self.ra_slice = slice(n_full, n_full + n_ra)

        # Projection dimensions
        self.d_full = n_full * self.head_dim
        self.d_ra = n_ra * self.head_dim

        # QKV projection (same as baseline)
        self.c_attn = nn.Linear(cfg.d_model, 3 * cfg.d_model, bias=False)

        # Output projections for each group
        self.c_proj_full = nn.Linear(self.d_full, cfg.d_model, bias=False)
        self.c_proj_ra = nn.Linear(self.d_ra, cfg.d_model, bias=False)

        # Optional weight tying: init RA proj from FULL proj
        if cfg.tie_ra_proj:
            with torch.no_grad():
                # Copy tail columns of full projection to RA
                # This encourages RA to be a compressed view
                full_w = self.c_proj_full.weight  # [d_model, d_full]
                ra_w = self.c_proj_ra.weight  # [d_model, d_ra]
                ra_w.copy_(full_w[:, -self.d_ra :])

        self.dropout_p = cfg.dropout

        # Causal mask
        self.register_buffer(
            "causal_mask",
            torch.triu(
                torch.ones(cfg.block_size, cfg.block_size, dtype=torch.bool),
                diagonal=1,
            ),
        )

    def forward(
        self,
        x: torch.Tensor,
        need_weights: bool = False,
        compute_full: bool = True,
        compute_ra: bool = True,
    ) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
        """
        Args:
            x: [B, T, D] input
            need_weights: return attention probs for analysis
            compute_full: whether to compute FULL head group output
            compute_ra: whether to compute RA head group output

        Returns:
            out_full: [B, T, D] output from FULL head group (or None)
            out_ra:   [B, T, D] output from RA head group (or None)
            attn_probs: [B, H, T, T] if need_weights else None
        """
        B, T, D = x.shape

        # Determine which heads to compute
        if compute_full and compute_ra:
            head_slice = slice(0, self.n_heads)
            n_compute = self.n_heads
        elif compute_full:
            head_slice = self.full_slice
            n_compute = self.n_full
        elif compute_ra:
            head_slice = self.ra_slice
            n_compute = self.n_ra
        else:
            raise ValueError("Must compute at least one head group")

        # QKV projection
        qkv = self.c_attn(x)
        q, k, v = qkv.chunk(3, dim=-1)

        # Reshape to [B, H, T, head_dim]
        def to_heads(t):
            return t.view(B, T, self.n_heads, self.head_dim).transpose(1, 2)

        q = to_heads(q)
        k = to_heads(k)
        v = to_heads(v)

        # Select only needed heads for computation
        if not (compute_full and compute_ra):
            q = q[:, head_slice, :, :]
            k = k[:, head_slice, :, :]
            v = v[:, head_slice, :, :]

        # Use SDPA for efficient attention
        if need_weights:
            # Manual path for attention weights (debugging only)
            scale = 1.0 / math.sqrt(self.head_dim)
            scores = torch.matmul(q, k.transpose(-2, -1)) * scale
            mask = self.causal_mask[:T, :T]
            scores = scores.masked_fill(mask, float("-inf"))
            attn_probs = F.softmax(scores, dim=-1)
            if self.dropout_p > 0 and self.training:
                attn_probs = F.dropout(attn_probs, p=self.dropout_p)
            out = torch.matmul(attn_probs, v)
        else:
            # Fast SDPA path
            out = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=None,
                dropout_p=self.dropout_p if self.training else 0.0,
                is_causal=True,
            )
            attn_probs = None

        # Process outputs based on what was computed
        out_full = None
        out_ra = None

        if compute_full and compute_ra:
            # Both computed - split head groups
            full_heads = out[:, self.full_slice, :, :]
            ra_heads = out[:, self.ra_slice, :, :]

            full_merged = (
                full_heads.transpose(1, 2).contiguous().view(B, T, self.d_full)
            )
            ra_merged = ra_heads.transpose(1, 2).contiguous().view(B, T, self.d_ra)

            out_full = self.c_proj_full(full_merged)
            out_ra = self.c_proj_ra(ra_merged)
        elif compute_full:
            # Only FULL heads computed
            full_merged = out.transpose(1, 2).contiguous().view(B, T, self.d_full)
            out_full = self.c_proj_full(full_merged)
        elif compute_ra:
            # Only RA heads computed
            ra_merged = out.transpose(1, 2).contiguous().view(B, T, self.d_ra)
            out_ra = self.c_proj_ra(ra_merged)

        if need_weights:
            return out_full, out_ra, attn_probs
        return out_full, out_ra, None


class RoutedMixer(nn.Module):
    """
    Mix outputs from compute tiers according to router probabilities.

    out = p_ra * out_ra + p_full * out_full

    This is research-mode: both RA and FULL are computed. Future optimization
    can use router probabilities to skip head groups entirely.
    """

    def forward(
        self,
        out_ra: torch.Tensor,
        out_full: torch.Tensor,
        probs: Dict[str, torch.Tensor],
    ) -> torch.Tensor:
        """
        Args:
            out_ra:   [B, T, D] RA head group output
            out_full: [B, T, D] FULL head group output
            probs:    dict of [B, T, 1] probabilities

        Returns:
            out: [B, T, D] mixed output
        """
        return probs["ra"] * out_ra + probs["full"] * out_full


class RATransformerBlock(nn.Module):
    """
    Transformer block with RA attention and routing.

    In phase 1 (warmup): Uses all heads combined, no routing overhead.
    In phase 2 (routing): Routes between FULL and RA head groups.
    """

    def __init__(self, gpt_config, ra_config, layer_idx):
        super().__init__()
        self.layer_idx = layer_idx
        self.ra_config = ra_config

        # Pre-norm
        self.ln_1 = LayerNorm(gpt_config.n_embd, bias=gpt_config.bias)
        self.ln_2 = LayerNorm(gpt_config.n_embd, bias=gpt_config.bias)

        # RA attention (no internal LN - we handle it)
        self.attn = RAAttention(ra_config)

        # MLP
        self.mlp = MLP(gpt_config)

        # Routing components
        self.shift_gate = ContextShiftGate()
        self.router = ContextRouter(ra_config)
        self.mixer = RoutedMixer()

        # Phase tracking
        self.phase1 = True

        # Router stats for logging (tensors to avoid graph breaks)
        self._last_router_tensors = None

    def forward(self, x, tok_emb=None):
        """
        Args:
            x: [B, T, D] hidden state
            tok_emb: [B, T, D] token embeddings for routing

        Returns:
            out: [B, T, D] output hidden state
        """
        # Pre-norm for attention
        x_norm = self.ln_1(x)

        if self.phase1:
            # Phase 1: Use all heads combined, no routing
            # Get both outputs but combine them simply
            out_full, out_ra, _ = self.attn(x_norm)
            # Weight by head count ratio
            alpha = self.attn.n_ra / self.attn.n_heads
            attn_out = (1 - alpha) * out_full + alpha * out_ra
            self._last_router_tensors = None
        else:
            # Phase 2: Route based on contextual hardness
            if tok_emb is None:
                raise ValueError("tok_emb required for phase 2 routing")

            # Compute routing probabilities FIRST (before attention)
            shift = self.shift_gate(x_norm, tok_emb)
            probs = self.router(x_norm, tok_emb, shift)

            # Hard routing: use batch-level decision for efficiency
            # If >50% of tokens prefer RA, use RA for entire batch
            p_ra = probs["ra"]
            use_ra = (p_ra > 0.5).float().mean() > 0.5

            if use_ra:
                # Only compute RA heads (cheap path)
                _, out_ra, _ = self.attn(x_norm, compute_full=False)
                attn_out = out_ra
            else:
                # Only compute FULL heads (expensive path)
                out_full, _, _ = self.attn(x_norm, compute_ra=False)
                attn_out = out_full

            # Store tensors for logging (avoid .item() in compiled graph)
            p_ra_detached = p_ra.detach()
            p_full = probs["full"].detach()
            total_tokens = p_ra_detached.numel()
            ra_tokens = (p_ra_detached > 0.5).sum()

            # Store tensors, not scalars - convert in get_router_stats()
            self._last_router_tensors = {
                "ra_mean": p_ra_detached.mean(),
                "full_mean": p_full.mean(),
                "ra_tokens": ra_tokens,
                "total_tokens": total_tokens,
            }

        # Residual + MLP
        x = x + attn_out
        x = x + self.mlp(self.ln_2(x))

        return x
