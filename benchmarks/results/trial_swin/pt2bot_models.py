"""Inputs for pt2bot's smoke run of tiny Swin models (built from arguments, no checkpoint).

Images as Swin's data pipeline makes them (data/build.py: ToTensor then
Normalize(IMAGENET_DEFAULT_MEAN, IMAGENET_DEFAULT_STD)): pixels in [0, 1], a smooth picture plus
some noise, normalised per channel, so values lie in about [-2.1, 2.6].
"""
import torch

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def imagenet_images(batch: int, height: int, width: int, seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(1000 * batch + 10 * height + width + seed)
    coarse = torch.rand(batch, 3, max(height // 8, 1), max(width // 8, 1), generator=g)
    smooth = torch.nn.functional.interpolate(coarse, size=(height, width), mode="bilinear",
                                             align_corners=False)
    pixels = (smooth + 0.1 * torch.rand(batch, 3, height, width, generator=g)).clamp(0, 1)
    return {"x": (pixels - MEAN) / STD}
