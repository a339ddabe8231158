"""Inputs and small wrappers for pt2bot's smoke run of tiny V-JEPA models (built from
arguments: no checkpoint, no download).

Clips as V-JEPA's video transforms make them (src/datasets/utils/video/transforms.py: frames
scaled to [0, 1], then Normalize with ImageNet's mean and std): [batch, 3, frames, size, size],
a smooth picture that drifts from frame to frame plus noise (values in about [-2.1, 2.6]).

Masks as src/masks/ makes them: for each clip the indices of the tokens kept, sorted ascending
and unique (`torch.argwhere(mask == 0).squeeze()` in multiblock3d.py); the collator truncates
every clip's list to the batch's smallest count (`min_keep_enc`), so one tensor [batch, keep]
per mask, and `keep` changes from step to step. The predictor gets the context indices and the
target indices (the complement: the masked blocks), as the multiblock collator gives them.
"""
import torch
from torch import nn

MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1, 1)


def _clips(batch, frames, size, seed=0):
    g = torch.Generator().manual_seed(1000 * batch + 10 * frames + size + seed)
    coarse = torch.rand(batch, 3, frames, max(size // 8, 1), max(size // 8, 1), generator=g)
    smooth = nn.functional.interpolate(coarse, size=(frames, size, size), mode="trilinear",
                                       align_corners=False)
    pixels = (smooth + 0.1 * torch.rand(batch, 3, frames, size, size, generator=g)).clamp(0, 1)
    return (pixels - MEAN) / STD


def _kept(batch, n_tokens, keep, g):
    """[batch, keep] int64: indices of kept tokens, sorted, unique, below n_tokens."""
    rows = [torch.randperm(n_tokens, generator=g)[:keep].sort().values for _ in range(batch)]
    return torch.stack(rows)


def clips(batch: int, frames: int, size: int) -> dict:
    return {"x": _clips(batch, frames, size)}


def clips_and_masks_p16(batch: int, keep: int) -> dict:
    """64 px, 4 frames, patch 16, tubelet 2: 2 * 4 * 4 = 32 tokens; `keep` of them kept."""
    g = torch.Generator().manual_seed(7 * batch + keep)
    return {"x": _clips(batch, 4, 64), "masks": _kept(batch, 32, keep, g)}


def predictor_inputs(batch: int, keep: int, pred: int) -> dict:
    """The predictor's inputs on 32 tokens: the encoder's features of the `keep` context
    tokens, the target tokens' features (unused with mask tokens, as in training, but passed),
    and the two index sets: context kept, target = the other `pred` tokens."""
    assert keep + pred == 32
    g = torch.Generator().manual_seed(11 * batch + keep)
    ctx, tgt = [], []
    for _ in range(batch):
        perm = torch.randperm(32, generator=g)
        ctx.append(perm[:keep].sort().values)
        tgt.append(perm[keep:].sort().values)
    return {
        "ctxt": torch.randn(batch, keep, 32, generator=g),
        "tgt": torch.randn(batch, pred, 32, generator=g),
        "masks_ctxt": torch.stack(ctx),
        "masks_tgt": torch.stack(tgt),
    }


def features(batch: int, seq: int) -> dict:
    """What the frozen encoder hands the attentive probe: [batch, tokens, 48], layer-normed."""
    g = torch.Generator().manual_seed(3 * batch + seq)
    return {"x": nn.functional.layer_norm(torch.randn(batch, seq, 48, generator=g), (48,))}


class VideoClassifier(nn.Module):
    """The frozen evaluation's path (evals/video_classification_frozen): the encoder, then the
    attentive classifier on its tokens, one clip per call."""

    def __init__(self, img_size=32, patch_size=8, num_frames=4, embed_dim=32, depth=1,
                 num_heads=2, num_classes=10, uniform_power=False):
        super().__init__()
        from src.models.vision_transformer import VisionTransformer
        from src.models.attentive_pooler import AttentiveClassifier
        self.encoder = VisionTransformer(img_size=img_size, patch_size=patch_size,
                                         num_frames=num_frames, tubelet_size=2,
                                         embed_dim=embed_dim, depth=depth, num_heads=num_heads,
                                         uniform_power=uniform_power)
        self.classifier = AttentiveClassifier(embed_dim=embed_dim, num_heads=num_heads,
                                              depth=1, num_classes=num_classes)

    def forward(self, x):
        return self.classifier(self.encoder(x))
