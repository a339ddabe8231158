"""Example inputs: random atoms wrapped in a cubic periodic cell."""
import torch


def make_inputs(atoms: int, side: float = 4.0):
    g = torch.Generator().manual_seed(atoms)
    pos = torch.rand(atoms, 3, generator=g, dtype=torch.float64) * side
    cell = torch.eye(3, dtype=torch.float64) * side
    return pos, cell
