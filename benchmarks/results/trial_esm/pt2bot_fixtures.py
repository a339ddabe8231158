"""Tiny ESM models and valid token batches for pt2bot's smoke run (no weights, no hub)."""
import argparse

import torch

import esm
from esm.model.esm1 import ProteinBertModel
from esm.model.esm2 import ESM2

_ALPHABET = esm.data.Alphabet.from_architecture("ESM-1b")


def tiny_esm2():
    return ESM2(num_layers=2, embed_dim=32, attention_heads=4, alphabet=_ALPHABET, token_dropout=True)


def tiny_esm1b():
    args = argparse.Namespace(
        arch="roberta_large", layers=2, embed_dim=32, ffn_embed_dim=64, attention_heads=4,
        max_positions=128, emb_layer_norm_before=True, dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0,
    )
    return ProteinBertModel(args, _ALPHABET)


def _tokens(batch, seq, pad):
    """<cls> residues <eos> [<pad>...]; with pad, the last row is a quarter shorter."""
    a = _ALPHABET
    residues = [a.get_idx(t) for t in "ACDEFGHIKLMNPQRSTVWY"]
    g = torch.Generator().manual_seed(batch * 1000 + seq)
    toks = torch.tensor(residues)[torch.randint(len(residues), (batch, seq), generator=g)]
    toks[:, 0] = a.cls_idx
    toks[:, -1] = a.eos_idx
    if pad and batch > 1:
        n = max(1, seq // 4)
        toks[-1, seq - n - 1] = a.eos_idx
        toks[-1, seq - n:] = a.padding_idx
    # one masked residue per row, as masked-LM inference sees
    toks[:, 1] = a.mask_idx
    return toks


def padded_tokens(batch, seq):
    return {"tokens": _tokens(batch, seq, pad=True)}


def unpadded_tokens_contacts(batch, seq):
    return {"tokens": _tokens(batch, seq, pad=False), "return_contacts": True}
