"""A small E(n)-equivariant network that predicts one property per molecule."""
import torch
from torch import nn
from egnn_pytorch import EGNN


class MolPropNet(nn.Module):
    """Predicts a scalar property (e.g. an energy) of small molecules.

    atoms: [batch, atoms] int64 atomic-number codes below num_atom_types (0 is padding),
    coors: [batch, atoms, 3] float32 positions in angstrom,
    mask:  [batch, atoms] bool, True where the atom is real.
    A molecule has at least num_nearest + 1 atoms. Returns [batch] predictions.
    """

    def __init__(self, num_atom_types: int = 10, dim: int = 32, depth: int = 2,
                 num_nearest: int = 4):
        super().__init__()
        self.embed = nn.Embedding(num_atom_types, dim)
        self.layers = nn.ModuleList([
            EGNN(dim=dim, num_nearest_neighbors=num_nearest, norm_coors=True)
            for _ in range(depth)
        ])
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, 1))
        self.atoms_seen = 0   # real atoms seen, for the throughput log

    def forward(self, atoms: torch.Tensor, coors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        n_real = int(mask.sum())
        self.atoms_seen += n_real
        if n_real == 0:   # an all-padding batch (the end of a shard): nothing to predict
            return coors.new_zeros(atoms.shape[0])
        h = self.embed(atoms)
        for layer in self.layers:
            h, coors = layer(h, coors, mask=mask)
        m = mask.unsqueeze(-1).float()
        pooled = (h * m).sum(1) / m.sum(1).clamp(min=1)
        return self.head(pooled).squeeze(-1)
