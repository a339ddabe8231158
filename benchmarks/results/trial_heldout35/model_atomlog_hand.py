"""A small E(n)-equivariant network that predicts one property per molecule."""
import torch
from torch import nn
from egnn_pytorch import EGNN


class MolPropNet(nn.Module):
    """PR 1 as the helper would have written it for torch.compile (not a pt2bot suggestion): the
    counter a buffer updated in place, the all-padding early return a torch.where."""

    def __init__(self, num_atom_types: int = 10, dim: int = 32, depth: int = 2,
                 num_nearest: int = 4):
        super().__init__()
        self.embed = nn.Embedding(num_atom_types, dim)
        self.layers = nn.ModuleList([
            EGNN(dim=dim, num_nearest_neighbors=num_nearest, norm_coors=True)
            for _ in range(depth)
        ])
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, 1))
        self.register_buffer("atoms_seen", torch.zeros((), dtype=torch.int64), persistent=False)

    def forward(self, atoms: torch.Tensor, coors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n_real = mask.sum()
        self.atoms_seen += n_real
        h = self.embed(atoms)
        for layer in self.layers:
            h, coors = layer(h, coors, mask=mask)
        m = mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
        out = self.head(pooled).squeeze(-1)
        return torch.where(n_real == 0, torch.zeros_like(out), out)
