"""Inputs and small wrappers for pt2bot's smoke run of tiny DINOv2 models (built from
arguments: no checkpoint, no download).

Images as DINOv2's data pipeline makes them (dinov2/data/transforms.py: ToTensor then
Normalize(IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD)): pixels in [0, 1], a smooth picture plus
noise, normalised per channel (values in about [-2.1, 2.6]).
"""
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


def imagenet_images(batch: int, height: int, width: int) -> dict:
    return {"x": _images(batch, height, width)}


def images_and_masks_p14(batch: int, height: int, width: int) -> dict:
    """An image and iBOT's mask: one bool per patch token, about 30 % of them masked
    (dinov2/data/masking.py draws blocks; a random fraction is enough here)."""
    g = torch.Generator().manual_seed(7 * batch + height + width)
    n = (height // 14) * (width // 14)
    masks = torch.rand(batch, n, generator=g) < 0.3
    return {"x": _images(batch, height, width), "masks": masks}


class FeaturesWithMasks(nn.Module):
    """forward_features(x, masks) as the iBOT student calls it in training; returns the
    normed patch tokens (pt2bot.yml has no key for a method other than forward)."""

    def __init__(self, **kwargs):
        super().__init__()
        from dinov2.models.vision_transformer import DinoVisionTransformer
        self.backbone = DinoVisionTransformer(**kwargs)

    def forward(self, x, masks):
        return self.backbone.forward_features(x, masks)["x_norm_patchtokens"]


def cls_features(batch: int) -> dict:
    g = torch.Generator().manual_seed(batch)
    return {"x": torch.randn(batch, 48, generator=g)}
