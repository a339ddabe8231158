from typing import overload, Literal
import torch
from torch import nn


class Plain(nn.Module):
  def __init__(self, dim: int):
    super().__init__()
    self.proj = nn.Linear(dim, dim)

  def forward(self, x: torch.Tensor) -> torch.Tensor:
    return self.proj(x)


class WithOverload(nn.Module):
  def __init__(self, dim: int):
    super().__init__()
    self.proj = nn.Linear(dim, dim)

  @overload
  def forward(self, x: torch.Tensor, flag: Literal[True] = True) -> torch.Tensor: ...

  @overload
  def forward(self, x: torch.Tensor, flag: Literal[False] = False) -> None: ...

  def forward(self, x: torch.Tensor, flag: bool = True):
    return self.proj(x) if flag else None
