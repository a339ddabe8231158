"""Tiny DETR models and realistic inputs for pt2bot's smoke run (built from arguments: no
checkpoint, no download; `pretrained_backbone=False` builds the ResNet with random weights).

Images as DETR's data pipeline makes them (datasets/transforms.py: ToTensor, then
Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])): pixels in [0, 1], a smooth picture
plus noise, normalised per channel (values in about [-2.1, 2.6]).  A batch of images of
different sizes is padded with zeros to the largest, with a mask that is True on the padding,
as util.misc.nested_tensor_from_tensor_list does it.
"""
import argparse

import torch
from torch import nn

from models.backbone import build_backbone
from models.detr import DETR
from models.segmentation import DETRsegm
from models.transformer import build_transformer, Transformer
from util.misc import NestedTensor

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def _args(**kw):
    a = dict(backbone="resnet18", dilation=False, position_embedding="sine", hidden_dim=32,
             enc_layers=1, dec_layers=1, nheads=2, dim_feedforward=64, dropout=0.0,
             pre_norm=False, num_queries=5, aux_loss=False, masks=False, lr_backbone=1e-5,
             pretrained_backbone=False)
    a.update(kw)
    return argparse.Namespace(**a)


def tiny_detr(num_classes: int = 7, **kw) -> nn.Module:
    """models.detr.build's DETR, from main.py's arguments, with no weights downloaded."""
    args = _args(**kw)
    backbone = build_backbone(args)
    transformer = build_transformer(args)
    model = DETR(backbone, transformer, num_classes=num_classes,
                 num_queries=args.num_queries, aux_loss=args.aux_loss)
    if args.masks:
        model = DETRsegm(model, freeze_detr=False)
    return model


class NestedDETR(nn.Module):
    """DETR called as main.py's engine calls it: with a NestedTensor (images and padding mask).
    pt2bot's inputs are tensors, so the NestedTensor is made here."""

    def __init__(self, **kw):
        super().__init__()
        self.detr = tiny_detr(**kw)

    def forward(self, images, mask):
        return self.detr(NestedTensor(images, mask))


def _image(h, w, g):
    coarse = torch.rand(1, 3, max(h // 8, 1), max(w // 8, 1), generator=g)
    smooth = nn.functional.interpolate(coarse, size=(h, w), mode="bilinear", align_corners=False)
    pixels = (smooth[0] + 0.1 * torch.rand(3, h, w, generator=g)).clamp(0, 1)
    return (pixels - MEAN) / STD


def images(batch: int, height: int, width: int) -> dict:
    """A batched tensor of same-size images (DETR's forward turns it into a NestedTensor)."""
    g = torch.Generator().manual_seed(1000 * batch + 10 * height + width)
    return {"samples": torch.stack([_image(height, width, g) for _ in range(batch)])}


def padded_images(batch: int, height: int, width: int) -> dict:
    """Images of different sizes and aspect ratios padded to [height, width]: the first image
    fills it, the others are smaller in one or both sides (as a detection batch is)."""
    g = torch.Generator().manual_seed(7 * batch + height + width)
    imgs = torch.zeros(batch, 3, height, width)
    mask = torch.ones(batch, height, width, dtype=torch.bool)
    for i in range(batch):
        h = height if i % 2 == 0 else max(8, int(height * (0.55 + 0.4 * torch.rand(1, generator=g).item())))
        w = width if i % 3 != 1 else max(8, int(width * (0.5 + 0.4 * torch.rand(1, generator=g).item())))
        imgs[i, :, :h, :w] = _image(h, w, g)
        mask[i, :h, :w] = False
    return {"images": imgs, "mask": mask}


def transformer_inputs(batch: int, fh: int, fw: int) -> dict:
    """Transformer.forward(src, mask, query_embed, pos_embed) as DETR calls it: the projected
    features of a ResNet (stride 32), their padding mask, 5 queries of width 32, a sine-like
    position embedding."""
    g = torch.Generator().manual_seed(batch * 100 + fh * 10 + fw)
    src = torch.randn(batch, 32, fh, fw, generator=g)
    mask = torch.zeros(batch, fh, fw, dtype=torch.bool)
    mask[1:, :, fw - 1:] = True          # the second image onwards: its last column is padding
    query = torch.randn(5, 32, generator=g)
    pos = torch.sin(torch.randn(batch, 32, fh, fw, generator=g))
    return {"src": src, "mask": mask, "query_embed": query, "pos_embed": pos}
