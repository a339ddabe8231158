"""Tiny CLIP models for pt2bot's smoke run: built from arguments, no checkpoint, no download.

Inputs as CLIP's callers make them: images [batch, 3, R, R] (R is fixed per model: both vision
towers add a positional table of (R/patch)^2+1 or (R/32)^2+1 rows), and token ids [texts, L]
as clip.tokenize makes them (L = context_length, fixed: the causal mask and the positional table
are L long): start-of-text, words, end-of-text (the highest id, which encode_text finds with
argmax), zero padding; the end-of-text at a different position in each row, one row full.
"""
import torch
from torch import nn

from clip.model import CLIP

VOCAB = 320                 # SOT = VOCAB - 2, EOT = VOCAB - 1 (49406 / 49407 in the real vocab)
SOT, EOT = VOCAB - 2, VOCAB - 1

TOWERS = {
    # ViT tower: vision_heads = vision_width // 64 = 1
    "vit": dict(vision_layers=2, vision_width=64, vision_patch_size=16),
    # ModifiedResNet tower (AttentionPool2d): width 16 -> attnpool embed 512, heads 8
    "rn": dict(vision_layers=(1, 1, 1, 1), vision_width=16, vision_patch_size=None),
}


def clip_model(tower: str = "vit", image_resolution: int = 32, context_length: int = 16):
    return CLIP(embed_dim=32, image_resolution=image_resolution, context_length=context_length,
                vocab_size=VOCAB, transformer_width=64, transformer_heads=2, transformer_layers=2,
                **TOWERS[tower])


class EncodeImage(nn.Module):
    def __init__(self, tower: str = "vit", image_resolution: int = 32, context_length: int = 16):
        super().__init__()
        self.clip = clip_model(tower, image_resolution, context_length)

    def forward(self, image):
        return self.clip.encode_image(image)


class EncodeText(nn.Module):
    def __init__(self, tower: str = "vit", image_resolution: int = 32, context_length: int = 16):
        super().__init__()
        self.clip = clip_model(tower, image_resolution, context_length)

    def forward(self, text):
        return self.clip.encode_text(text)


def tokens(texts: int, ctx: int, seed: int = 0) -> torch.Tensor:
    """Like clip.tokenize(..., context_length=ctx, truncate=True): SOT w1..wk EOT 0 0 ..."""
    g = torch.Generator().manual_seed(seed)
    out = torch.zeros(texts, ctx, dtype=torch.int64)
    for i in range(texts):
        # the last row fills the context (a truncated caption: EOT at ctx - 1)
        k = ctx - 2 if i == texts - 1 else int(torch.randint(1, ctx - 2, (1,), generator=g))
        out[i, 0] = SOT
        out[i, 1:k + 1] = torch.randint(1, VOCAB - 2, (k,), generator=g)
        out[i, k + 1] = EOT
    return out


def images(batch: int, res: int, seed: int = 0) -> torch.Tensor:
    """Normalised like CLIP's preprocess (mean/std of its Normalize): roughly N(0, 1)."""
    g = torch.Generator().manual_seed(1000 + seed)
    return torch.randn(batch, 3, res, res, generator=g)


def clip_inputs(batch, texts, res, ctx):
    return {"image": images(batch, res, seed=batch * 10 + texts),
            "text": tokens(texts, ctx, seed=batch * 10 + texts)}


def image_inputs(batch, res):
    return {"image": images(batch, res, seed=batch)}


def text_inputs(texts, ctx):
    return {"text": tokens(texts, ctx, seed=texts)}
