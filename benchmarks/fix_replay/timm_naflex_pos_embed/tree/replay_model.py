# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from timm.models.naflexvit import NaFlexEmbeds


class Replay(nn.Module):
    """Patch tokens of two images of different sizes (NaFlex), their learned position embeddings added."""

    def __init__(self) -> None:
        super().__init__()
        self.embeds = NaFlexEmbeds()
        self.proj = nn.Linear(12, 8)

    def forward(self, patches: torch.Tensor, patch_coord: torch.Tensor) -> torch.Tensor:
        x = self.proj(patches)
        return self.embeds(x, patch_coord)


def make_inputs(batch: int):
    coord = torch.zeros(batch, 12, 2, dtype=torch.long)
    for i in range(batch):
        h, w = (2, 3) if i % 2 == 0 else (3, 4)
        coord[i, : h * w] = torch.cartesian_prod(torch.arange(h), torch.arange(w))
    return {"patches": torch.randn(batch, 12, 12, generator=torch.Generator().manual_seed(batch)),
            "patch_coord": coord}
