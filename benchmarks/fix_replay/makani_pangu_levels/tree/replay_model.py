# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from makani.models.networks.pangu import Pangu


class Replay(Pangu):
    """Pangu's split of the input into surface and per-pressure-level atmospheric channels and its
    reassembly of the output, around one convolution per branch: two surface variables and two
    variables at two pressure levels."""

    def __init__(self) -> None:
        super().__init__(num_surface=2, num_levels=2,
                         channel_names=["u10m", "v10m", "z500", "t500", "z850", "t850"])
