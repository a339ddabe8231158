"""Tiny RecurrentGemma models for pt2bot (no weights, CPU).

`recurrentgemma/__init__.py` imports the JAX side (jax, flax) unconditionally, so a
torch-only environment cannot `import recurrentgemma.torch`. Where jax/flax are missing,
register `recurrentgemma` as a bare package (its __init__ not run) so that the torch
sub-package imports on its own.
"""
import importlib.util
import os
import sys
import types

if "recurrentgemma" not in sys.modules and importlib.util.find_spec("flax") is None:
  _pkg = types.ModuleType("recurrentgemma")
  _pkg.__path__ = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "recurrentgemma")]
  sys.modules["recurrentgemma"] = _pkg

import torch  # noqa: E402
from recurrentgemma import common  # noqa: E402
from recurrentgemma.torch import griffin as griffin_lib  # noqa: E402
from recurrentgemma.torch import layers  # noqa: E402
from recurrentgemma.torch import modules  # noqa: E402

VOCAB = 256
WIDTH = 32
HEADS = 2
WINDOW = 8


def tiny_config() -> common.GriffinConfig:
  return common.GriffinConfig(
      vocab_size=VOCAB,
      width=WIDTH,
      mlp_expanded_width=64,
      num_heads=HEADS,
      block_types=(
          common.TemporalBlockType.RECURRENT,
          common.TemporalBlockType.ATTENTION,
          common.TemporalBlockType.RECURRENT,
      ),
      embeddings_scale_by_sqrt_dim=True,
      attention_window_size=WINDOW,
      logits_soft_cap=30.0,
  )


def build_griffin() -> griffin_lib.Griffin:
  # gradient_checkpointing=True is the constructor's default; the smoke run is no_grad.
  return griffin_lib.Griffin(tiny_config())


def _positions(batch: int, seq: int, start: int = 0) -> torch.Tensor:
  return (torch.arange(seq) + start)[None].repeat(batch, 1)


def griffin_inputs(batch: int, seq: int):
  """A prompt: token ids and their positions (one segment per row)."""
  return {
      "tokens": torch.randint(0, VOCAB, (batch, seq)),
      "segment_pos": _positions(batch, seq),
  }


def griffin_decode_inputs(batch: int, seq: int = 1):
  """One sampling step: one token per row after `WINDOW + 3` tokens, with a cache."""
  cfg = tiny_config()
  cache = {}
  for i, block_type in enumerate(cfg.block_types):
    c = modules.ResidualBlock.init_cache(
        batch_size=batch, width=WIDTH, num_heads=HEADS,
        attention_window_size=WINDOW, temporal_block_type=block_type,
        dtype=torch.float32,
    )
    if block_type == common.TemporalBlockType.ATTENTION:
      c = c._replace(keys=torch.randn_like(c.keys), values=torch.randn_like(c.values),
                     num_tokens=torch.full_like(c.num_tokens, WINDOW + 3))
    else:
      c = c._replace(rg_lru_state=torch.randn_like(c.rg_lru_state),
                     conv1d_state=torch.randn_like(c.conv1d_state))
    cache[f"blocks.{i}"] = c
  return {
      "tokens": torch.randint(0, VOCAB, (batch, seq)),
      "segment_pos": _positions(batch, seq, start=WINDOW + 3),
      "cache": cache,
  }


def build_rglru() -> layers.RGLRU:
  return layers.RGLRU(width=WIDTH, num_heads=HEADS)


def rglru_inputs(batch: int, seq: int):
  """Activations and positions with a segment boundary in the middle of each row."""
  pos = _positions(batch, seq)
  pos[:, seq // 2:] -= seq // 2
  return {"x": torch.randn(batch, seq, WIDTH), "segment_pos": pos}


def build_local_attention() -> modules.LocalAttentionBlock:
  return modules.LocalAttentionBlock(
      width=WIDTH, num_heads=HEADS, window_size=WINDOW)


def attention_inputs(batch: int, seq: int):
  return {"x": torch.randn(batch, seq, WIDTH), "segment_pos": _positions(batch, seq)}
