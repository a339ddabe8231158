"""A tiny point-cloud decoder: a latent code in, a small cloud of 3-D points out."""
import math

import torch
import torch.nn as nn


def sinkhorn_cost(x: torch.Tensor, y: torch.Tensor, eps: float = 0.5, max_iter: int = 50,
                  tol: float = 1e-4) -> torch.Tensor:
    """Entropic optimal-transport cost between uniform clouds x [b, n, d] and y [b, m, d]."""
    C = torch.cdist(x, y) ** 2                                        # [b, n, m]
    log_a = torch.full(x.shape[:2], -math.log(x.shape[1]), device=x.device)
    log_b = torch.full(y.shape[:2], -math.log(y.shape[1]), device=y.device)
    f = torch.zeros_like(log_a)
    g = torch.zeros_like(log_b)
    for _ in range(max_iter):
        f_prev = f
        f = -eps * torch.logsumexp((g[:, None, :] - C) / eps + log_b[:, None, :], dim=2)
        g = -eps * torch.logsumexp((f[:, :, None] - C) / eps + log_a[:, :, None], dim=1)
        if (f - f_prev).abs().max().item() < tol:
            break
    plan = torch.exp((f[:, :, None] + g[:, None, :] - C) / eps + log_a[:, :, None] + log_b[:, None, :])
    return (plan * C).sum((1, 2))


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

    def forward(self, z: torch.Tensor, target: torch.Tensor):
        points = self.net(z).view(z.shape[0], self.n_points, 3)
        d = torch.cdist(points, target) ** 2                          # [batch, 10, 6]
        chamfer = d.min(dim=2).values.mean() + d.min(dim=1).values.mean()
        # transport term: Chamfer lets several points collapse onto one target point
        loss = chamfer + 0.1 * sinkhorn_cost(points, target).mean()
        return loss, points
