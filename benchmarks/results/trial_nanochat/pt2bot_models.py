"""Tiny nanochat GPTs for pt2bot's smoke run: built from arguments, init_weights() called,
no checkpoint, no tokenizer, no download.

Inputs as nanochat's loaders make them: token ids in [0, vocab_size) (the BOS token and the
top id included), targets = the next token, with -1 (ignore_index) on a share of positions as
the SFT/chat data masks the user turns (nanochat/dataloader.py, tasks/*: `mask == 0 -> -1`).
"""
import torch

from nanochat.gpt import GPT, GPTConfig


def tiny_gpt(**kwargs):
    """GPT(GPTConfig(**kwargs)) with nanochat's own weight init (base_train builds on the meta
    device and then calls init_weights(); on CPU the constructor's default init is kept
    otherwise, not nanochat's)."""
    model = GPT(GPTConfig(**kwargs))
    model.init_weights()
    return model


def _ids(batch, seq, vocab, seed):
    g = torch.Generator().manual_seed(seed)
    idx = torch.randint(0, vocab, (batch, seq + 1), generator=g)
    idx[:, 0] = vocab - 1          # a BOS-like top id (nanochat's BOS is a special token at the top)
    idx[0, 1] = 0                  # and id 0
    return idx, g


def _train(batch, seq, vocab):
    full, g = _ids(batch, seq, vocab, 1000 * batch + seq + vocab)
    idx, targets = full[:, :-1].contiguous(), full[:, 1:].contiguous()
    # mask roughly the first third of each row (a "user turn"), as SFT does
    cut = max(1, seq // 3)
    targets[:, :cut] = -1
    return {"idx": idx, "targets": targets}


def _logits(batch, seq, vocab):
    full, _ = _ids(batch, seq, vocab, 7 * batch + seq + vocab)
    return {"idx": full[:, :-1].contiguous()}


def train_v256(batch: int, seq: int) -> dict:
    return _train(batch, seq, 256)


def train_v100(batch: int, seq: int) -> dict:
    return _train(batch, seq, 100)


def logits_v64(batch: int, seq: int) -> dict:
    return _logits(batch, seq, 64)
