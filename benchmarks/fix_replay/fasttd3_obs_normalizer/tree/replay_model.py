# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from fast_td3.fast_td3_utils import EmpiricalNormalization


class Replay(nn.Module):
    """A FastTD3 policy step in training: observations normalized by EmpiricalNormalization, whose
    running mean and variance are updated on every call (as the training loop's `normalize_obs`
    does), then a small deterministic actor (a two-layer MLP with a tanh output)."""

    def __init__(self) -> None:
        super().__init__()
        self.obs_normalizer = EmpiricalNormalization(shape=8, device="cpu")
        self.actor = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())

    def train(self, mode: bool = True) -> "Replay":
        # FastTD3 updates the observation statistics on every training step; the normalizer stays
        # in training mode whatever mode the model is put in (a harness that calls .eval() included)
        super().train(mode)
        self.obs_normalizer.train()
        return self

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return self.actor(self.obs_normalizer(obs))
