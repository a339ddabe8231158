"""Tiny Gemma models and inputs for pt2bot's smoke run (no weights, no tokenizer)."""
from unittest import mock

import torch

from gemma import config as gemma_config
from gemma import model as gemma_model

CACHE_LEN = 16  # KV-cache length (max_seq_len in generate); static


def _tiny_config(arch: str) -> gemma_config.GemmaConfig:
    AT = gemma_config.AttentionType
    if arch == "gemma1":
        cfg = gemma_config.get_config_for_2b(dtype="float32")
        cfg.num_attention_heads = 4
    else:  # gemma2: sliding window + attention / final logit soft-capping
        cfg = gemma_config.get_config_for_2b_v2(dtype="float32")
        cfg.num_attention_heads = 4
        cfg.attn_types = [AT.LOCAL_SLIDING, AT.GLOBAL]
        cfg.sliding_window_size = 4
    cfg.num_hidden_layers = 2
    cfg.hidden_size = 32
    cfg.intermediate_size = 64
    cfg.num_key_value_heads = 1 if arch == "gemma1" else 2
    cfg.head_dim = 8
    cfg.vocab_size = 256
    cfg.max_position_embeddings = 32
    return cfg


def _init(module: torch.nn.Module) -> torch.nn.Module:
    # gemma's Linear/Embedding use torch.empty: give them seeded values.
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.2)
    return module.eval()


def build_lm():
    """GemmaForCausalLM (Gemma 2 layout), tokenizer stubbed out."""
    cfg = _tiny_config("gemma2")
    with mock.patch.object(gemma_model.tokenizer, "Tokenizer", lambda path: None):
        m = gemma_model.GemmaForCausalLM(cfg)
    return _init(m)


def _caches(cfg, batch):
    return [
        (torch.zeros(batch, CACHE_LEN, cfg.num_key_value_heads, cfg.head_dim),
         torch.zeros(batch, CACHE_LEN, cfg.num_key_value_heads, cfg.head_dim))
        for _ in range(cfg.num_hidden_layers)
    ]


def _masks(cfg, seq):
    full = torch.triu(torch.full((1, 1, CACHE_LEN, CACHE_LEN), -2.3819763e38), diagonal=1)
    pos = torch.arange(seq)
    mask = full.index_select(2, pos)
    local = None
    if cfg.sliding_window_size:
        local = (full + torch.tril(torch.full((1, 1, CACHE_LEN, CACHE_LEN), -2.3819763e38),
                                   diagonal=-cfg.sliding_window_size)).index_select(2, pos)
    return pos, mask, local


def lm_inputs(batch, seq):
    """The prefill call generate() makes: seq prompt tokens, sampling on."""
    cfg = _tiny_config("gemma2")
    g = torch.Generator().manual_seed(1)
    pos, mask, local = _masks(cfg, seq)
    return {
        "input_token_ids": torch.randint(0, cfg.vocab_size, (batch, seq), generator=g),
        "input_positions": pos,
        "kv_write_indices": None,
        "kv_caches": _caches(cfg, batch),
        "mask": mask,
        "output_positions": torch.tensor([seq - 1]),
        "temperatures": torch.full((batch,), 0.8),
        "top_ps": torch.full((batch,), 0.95),
        "top_ks": torch.full((batch,), 64, dtype=torch.long),
        "local_mask": local,
    }


def build_decoder():
    """GemmaModel (Gemma 1 layout, the 2b config shrunk)."""
    return _init(gemma_model.GemmaModel(_tiny_config("gemma1")))


def decoder_inputs(batch, seq):
    cfg = _tiny_config("gemma1")
    g = torch.Generator().manual_seed(2)
    pos, mask, _ = _masks(cfg, seq)
    freqs = gemma_model.precompute_freqs_cis(cfg.head_dim, CACHE_LEN * 2).index_select(0, pos)
    return {
        "hidden_states": torch.randn(batch, seq, cfg.hidden_size, generator=g),
        "freqs_cis": {gemma_config.AttentionType.GLOBAL: freqs,
                      gemma_config.AttentionType.LOCAL_SLIDING: freqs},
        "kv_write_indices": pos,
        "kv_caches": _caches(cfg, batch),
        "mask": mask,
        "local_mask": None,
    }
