"""A small learned pair potential for periodic crystals, on torch-nl's neighbor list."""
import torch
from torch import nn
from torch_nl import compute_cell_shifts, compute_distances, compute_neighborlist


class PairPotential(nn.Module):
    """Energy of one periodic structure as a sum of learned pair terms within `cutoff`.

    forward(pos, cell):
        pos  [n_atoms, 3] float64 Cartesian positions, wrapped inside the cell
        cell [3, 3] float64 cell vectors (rows), periodic in all three directions
    returns (energy [] , per-atom energies [n_atoms])
    """

    def __init__(self, cutoff: float = 2.5, n_rbf: int = 8, hidden: int = 16) -> None:
        super().__init__()
        self.cutoff = cutoff
        self.register_buffer("centers", torch.linspace(0.5, cutoff, n_rbf, dtype=torch.float64))
        self.pair = nn.Sequential(
            nn.Linear(n_rbf, hidden, dtype=torch.float64), nn.SiLU(),
            nn.Linear(hidden, 1, dtype=torch.float64))

    def forward(self, pos: torch.Tensor, cell: torch.Tensor):
        n = pos.shape[0]
        pbc = torch.ones(1, 3, dtype=torch.bool)
        batch = torch.zeros(n, dtype=torch.long)
        mapping, batch_mapping, shifts_idx = compute_neighborlist(
            self.cutoff, pos, cell, pbc, batch, False)
        shifts = compute_cell_shifts(cell, shifts_idx, batch_mapping)
        d = compute_distances(pos, mapping, shifts)
        rbf = torch.exp(-4.0 * (d[:, None] - self.centers) ** 2)
        envelope = 0.5 * (torch.cos(torch.pi * d / self.cutoff) + 1.0)
        e_pair = 0.5 * self.pair(rbf).squeeze(-1) * envelope  # each pair is listed twice
        e_atom = torch.zeros(pos.shape[0], dtype=pos.dtype).index_add(0, mapping[0], e_pair)
        return e_atom.sum(), e_atom
