"""A tiny point-cloud decoder: a latent code in, a small cloud of 3-D points out."""
import torch
import torch.nn as nn
from otloss import WassersteinLoss


class CloudDecoder(nn.Module):
    """Decodes latent codes into point clouds and scores them against target clouds.

    z: [batch, 8] float32 latent codes.
    target: [batch, 6, 3] float32 target point clouds (6 points in 3-D).
    Returns (loss, points), points [batch, 10, 3].
    """

    def __init__(self, n_points: int = 10, latent: int = 8) -> None:
        super().__init__()
        self.n_points = n_points
        self.net = nn.Sequential(nn.Linear(latent, 32), nn.ReLU(), nn.Linear(32, n_points * 3))
        # debiased Sinkhorn divergence instead of Chamfer: no collapse onto the nearest points
        self.criterion = WassersteinLoss(p=2, blur=0.05, max_iter=20)

    def forward(self, z: torch.Tensor, target: torch.Tensor):
        points = self.net(z).view(z.shape[0], self.n_points, 3)
        loss = self.criterion(points, target)
        return loss, points
