# Replay excerpt of huggingface/pytorch-image-models at e7497a8be181a5fa0c73a04ceb0069374fa3812a, timm/models/naflexvit.py (Apache-2.0; the upstream licence header follows where the file has one).
# Kept verbatim: _normalize_naflex_grid_sample_coords, NaFlexEmbeds._apply_learned_naflex_pos_embed_grid_sample. Left out: all of naflexvit.py but the new coordinate helper and NaFlexEmbeds's grid-sample method (verbatim); __init__ is a stub setting only the attributes that method reads, forward a stub calling it as the real forward does; `disable_compiler` is timm.layers.typing's (torch.compiler.disable).

from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F

# timm/layers/typing.py
disable_compiler = getattr(getattr(torch, "compiler", None), "disable", None)


def _normalize_naflex_grid_sample_coords(
        patch_coord: torch.Tensor,
        ar_preserving: bool = False,
) -> torch.Tensor:
    """Normalize NaFlex patch coordinates for ``grid_sample`` with ``align_corners=False``."""
    shapes = patch_coord.amax(dim=1) + 1
    if ar_preserving:
        shapes = shapes.amax(dim=1, keepdim=True).expand_as(shapes)

    return (2.0 * patch_coord.to(dtype=torch.float32) + 1.0) / shapes[:, None, :] - 1.0


class NaFlexEmbeds(nn.Module):
    # trimmed: only the attributes the kept method reads, as the real __init__ sets them for
    # pos_embed="learned", pos_embed_use_grid_sample=True
    def __init__(self, embed_dim: int = 8, grid_size=(5, 7)) -> None:
        super().__init__()
        self.pos_embed_interp_mode = "bilinear"
        self.pos_embed_ar_preserving = False
        self.pos_embed = nn.Parameter(torch.randn(1, grid_size[0], grid_size[1], embed_dim) * .02)

    def forward(self, x: torch.Tensor, patch_coord: torch.Tensor) -> torch.Tensor:
        # the real forward embeds the patches first, then calls the position-embedding method
        self._apply_learned_naflex_pos_embed_grid_sample(x, patch_coord)
        return x

    def _apply_learned_naflex_pos_embed_grid_sample(
            self,
            x: torch.Tensor,
            patch_coord: torch.Tensor,
    ) -> None:
        """Apply learned position embeddings to NaFlex batch using grid_sample.

        Directly samples the learned 2D position embeddings at each patch coordinate,
        avoiding a dense grid sized by the largest height and width in the batch.
        Based on proposal by https://github.com/stas-sl

        Args:
            x: Input tensor to add position embeddings to [B, N, C]
            patch_coord: Patch coordinates [B, N, 2] with (y, x) values
        """
        B = x.shape[0]
        grid = _normalize_naflex_grid_sample_coords(
            patch_coord,
            ar_preserving=self.pos_embed_ar_preserving,
        ).flip(-1).unsqueeze(2)  # (B, N, 1, 2), grid_sample coordinate order is (x, y)
        pos_embed = F.grid_sample(
            self.pos_embed.permute(0, 3, 1, 2).expand(B, -1, -1, -1).float(),
            grid,
            mode=self.pos_embed_interp_mode,
            align_corners=False,
            padding_mode='border',
        ).to(dtype=x.dtype)  # (B, C, N, 1)

        x += pos_embed.squeeze(-1).transpose(1, 2)  # NOTE leave as '+='
