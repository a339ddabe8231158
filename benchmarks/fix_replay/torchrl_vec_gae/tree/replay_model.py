# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from torchrl.objectives.value.functional import vec_generalized_advantage_estimate


class Replay(nn.Module):
    """A critic's GAE advantages and value targets over rollouts of 5 steps, with a per-step
    discount tensor (so the vectorised path builds the [T, T] discount matrix)."""

    def __init__(self) -> None:
        super().__init__()
        self.value = nn.Linear(4, 1)

    def forward(self, obs: torch.Tensor, next_obs: torch.Tensor, reward: torch.Tensor,
                done: torch.Tensor) -> torch.Tensor:
        v, nv = self.value(obs), self.value(next_obs)
        gamma = torch.full_like(v, 0.99)
        advantage, target = vec_generalized_advantage_estimate(gamma, 0.95, v, nv, reward, done)
        return advantage + target


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    done = torch.zeros(batch, 5, 1, dtype=torch.bool)
    done[:, -1] = True
    return {"obs": torch.randn(batch, 5, 4, generator=g), "next_obs": torch.randn(batch, 5, 4, generator=g),
            "reward": torch.randn(batch, 5, 1, generator=g), "done": done}
