"""Unsupervised 3D registration: a small VoxelMorph-style network that predicts a stationary
velocity field, integrated into a diffeomorphic flow by torchreg's SyN (scaling and squaring)."""
import torch
import torch.nn.functional as F
from torch import nn
from torchreg.metrics import NCC
from torchreg.syn import SyNBase
from torchreg.utils import create_grid


class RegNet(nn.Module):
    """Registers a moving scan onto a static one.

    forward(moving, static)
      moving: [batch, 1, size, size, size] float32, intensities in [0, 1]
      static: [batch, 1, size, size, size] float32, intensities in [0, 1]
      size is a multiple of 4.
    Returns (moved, loss): the moving scan warped onto the static one, and the training loss
    (local normalised cross-correlation plus the smoothness of the velocity field).
    """

    def __init__(self, width: int = 8, time_steps: int = 5, smooth_weight: float = 0.1):
        super().__init__()
        self.enc1 = nn.Conv3d(2, width, 3, stride=2, padding=1)
        self.enc2 = nn.Conv3d(width, 2 * width, 3, stride=2, padding=1)
        self.dec = nn.Conv3d(2 * width + 2, width, 3, padding=1)
        self.flow = nn.Conv3d(width, 3, 3, padding=1)
        nn.init.normal_(self.flow.weight, std=1e-3)
        nn.init.zeros_(self.flow.bias)
        self.syn = SyNBase(time_steps=time_steps)
        self.ncc = NCC(kernel_size=5)
        self.smooth_weight = smooth_weight

    def forward(self, moving: torch.Tensor, static: torch.Tensor):
        x = torch.cat([moving, static], dim=1)
        h = F.leaky_relu(self.enc1(x), 0.2)
        h = F.leaky_relu(self.enc2(h), 0.2)
        h = F.interpolate(h, size=moving.shape[2:], mode="trilinear", align_corners=True)
        h = F.leaky_relu(self.dec(torch.cat([h, x], dim=1)), 0.2)
        v = self.flow(h)
        # torchreg caches its identity grid on first use; set it for this size, as
        # SyNRegistration does per scale
        self.syn._grid = create_grid(moving.shape[2:], moving.device)
        flow = self.syn.diffeomorphic_transform(v)
        moved = self.syn.spatial_transform(moving, flow)
        smooth = sum((v.diff(dim=d) ** 2).mean() for d in (2, 3, 4))
        loss = self.ncc(moved, static) + self.smooth_weight * smooth
        return moved, loss
