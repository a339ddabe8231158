"""Tiny DINO models and inputs for pt2bot's smoke run (pt2bot.yml)."""
import torch

import utils
import vision_transformer as vits


def tiny_multicrop():
    """The student of main_dino.py, tiny: MultiCropWrapper(ViT, DINOHead)."""
    backbone = vits.VisionTransformer(img_size=[32], patch_size=8, embed_dim=32, depth=2, num_heads=2)
    head = vits.DINOHead(32, 64, hidden_dim=32, bottleneck_dim=16)
    return utils.MultiCropWrapper(backbone, head)


def multicrop_inputs(batch, global_size, local_size):
    """2 global crops and 4 local crops, as main_dino.py's DataAugmentationDINO gives them."""
    g = torch.Generator().manual_seed(0)
    crops = [torch.randn(batch, 3, global_size, global_size, generator=g) for _ in range(2)]
    crops += [torch.randn(batch, 3, local_size, local_size, generator=g) for _ in range(4)]
    return {"x": crops}
