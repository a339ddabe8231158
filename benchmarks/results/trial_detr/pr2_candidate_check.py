"""PR 2's inline 'Candidate fix, not verified' (candidate c0 of report_pr2.json: drop the `else`
arm, keep the arange arm) against head and base on a padded batch, the case DETR's training
(and any batch of images of different sizes) gives. No pt2bot code.  Run from a clone of
DETR's main (base)."""
import sys
import torch

sys.path.insert(0, sys.argv[1])
from models.position_encoding import PositionEmbeddingSine  # noqa: E402
from util.misc import NestedTensor  # noqa: E402

torch.set_num_threads(1)


def pos_candidate(pe, x, mask):
    """The candidate c0: the `if` arm alone (arange), whatever the mask."""
    b, h, w = mask.shape
    y_embed = torch.arange(1, h + 1, dtype=torch.float32).view(1, h, 1).expand(b, h, w)
    x_embed = torch.arange(1, w + 1, dtype=torch.float32).view(1, 1, w).expand(b, h, w)
    eps = 1e-6
    y_embed = y_embed / (y_embed[:, -1:, :] + eps) * pe.scale
    x_embed = x_embed / (x_embed[:, :, -1:] + eps) * pe.scale
    dim_t = torch.arange(pe.num_pos_feats, dtype=torch.float32)
    dim_t = pe.temperature ** (2 * (dim_t // 2) / pe.num_pos_feats)
    pos_x = x_embed[:, :, :, None] / dim_t
    pos_y = y_embed[:, :, :, None] / dim_t
    pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
    pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
    return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


pe = PositionEmbeddingSine(16, normalize=True)
for (h, w, vh, vw) in [(2, 3, 2, 3), (2, 3, 1, 2), (4, 6, 3, 4), (25, 34, 19, 34), (25, 34, 25, 20)]:
    x = torch.randn(2, 8, h, w)
    mask = torch.zeros(2, h, w, dtype=torch.bool)
    mask[1, vh:, :] = True
    mask[1, :, vw:] = True
    base = pe(NestedTensor(x, mask))
    cand = pos_candidate(pe, x, mask)
    diff = (base - cand).abs().max().item()
    print(f"feature map {h}x{w}, second image valid {vh}x{vw}: padding={bool(mask.any())}; "
          f"base (cumsum) == candidate (arange) exactly: {torch.equal(base, cand)}; max |diff| {diff:.4f}")
# and where there is no padding the other arm, base's cumsum, equals PR 2's arange exactly:
for (h, w) in [(2, 2), (2, 4), (3, 6), (25, 34), (200, 300)]:
    x = torch.randn(2, 8, h, w)
    mask = torch.zeros(2, h, w, dtype=torch.bool)
    print(f"no padding {h}x{w}: base (cumsum) == PR 2's `if` arm (arange) exactly: "
          f"{torch.equal(pe(NestedTensor(x, mask)), pos_candidate(pe, x, mask))}")
