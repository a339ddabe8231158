"""Inputs and factories for pt2bot's smoke run of tiny MAE models (built from arguments: no
checkpoint, no download).

Images as MAE's pipeline makes them (main_pretrain.py / util/datasets.py: ToTensor then
Normalize(IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD)): pixels in [0, 1], a smooth picture plus
noise, normalised per channel (values in about [-2.1, 2.6]).
"""
from functools import partial

import torch
from torch import nn

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def _images(batch, height, width, seed=0):
    g = torch.Generator().manual_seed(1000 * batch + 10 * height + width + seed)
    coarse = torch.rand(batch, 3, max(height // 8, 1), max(width // 8, 1), generator=g)
    smooth = nn.functional.interpolate(coarse, size=(height, width), mode="bilinear",
                                       align_corners=False)
    pixels = (smooth + 0.1 * torch.rand(batch, 3, height, width, generator=g)).clamp(0, 1)
    return (pixels - MEAN) / STD


def mae_images(batch: int, height: int, width: int) -> dict:
    """forward(imgs, mask_ratio=0.75): the image, the mask ratio left at its default."""
    return {"imgs": _images(batch, height, width)}


def vit_images(batch: int, height: int, width: int) -> dict:
    return {"x": _images(batch, height, width)}


class MAEWithRatio(nn.Module):
    """MaskedAutoencoderViT called with a mask ratio other than the default, as
    main_pretrain.py's --mask_ratio does (model(samples, mask_ratio=args.mask_ratio));
    pt2bot.yml passes tensors only, so the ratio is a constructor argument here."""

    def __init__(self, mask_ratio: float, **kwargs):
        super().__init__()
        from models_mae import MaskedAutoencoderViT
        self.mae = MaskedAutoencoderViT(norm_layer=partial(nn.LayerNorm, eps=1e-6), **kwargs)
        self.mask_ratio = mask_ratio

    def forward(self, imgs):
        return self.mae(imgs, mask_ratio=self.mask_ratio)


def tiny_vit(**kwargs):
    """models_vit.VisionTransformer as vit_base_patch16 builds it (norm_layer with eps 1e-6,
    qkv_bias, mlp_ratio 4), its sizes from kwargs; vit_base_patch16 itself hard-codes
    embed_dim=768, depth=12, so a size override raises a duplicate-keyword TypeError."""
    from models_vit import VisionTransformer
    return VisionTransformer(mlp_ratio=4, qkv_bias=True,
                             norm_layer=partial(nn.LayerNorm, eps=1e-6), **kwargs)
