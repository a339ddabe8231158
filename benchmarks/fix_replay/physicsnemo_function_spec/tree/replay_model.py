# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from physicsnemo.core.function_spec import FunctionSpec


class ScaledSilu(FunctionSpec):
    """A functional with a PyTorch implementation registered, as physicsnemo's functionals are
    defined (a FunctionSpec subclass, dispatched by `make_function`'s wrapper)."""

    @FunctionSpec.register(name="torch", rank=1, baseline=True)
    def torch_forward(x: torch.Tensor, scale: float) -> torch.Tensor:
        return torch.nn.functional.silu(x) * scale


scaled_silu = ScaledSilu.make_function("scaled_silu")


class Replay(nn.Module):
    """A linear layer followed by a dispatched functional."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return scaled_silu(self.lin(x), 2.0)
