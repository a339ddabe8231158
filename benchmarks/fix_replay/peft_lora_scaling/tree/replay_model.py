# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

import os
import sys

# peft has a src/ layout: what `pip install -e .` would put on the path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from peft.tuners.lora.layer import Linear


class Replay(nn.Module):
    """A LoRA-adapted projection prepared for compiled hotswapping: peft's
    prepare_model_for_compiled_hotswap turns each float `scaling` into a tensor
    (utils/hotswap.py, `_convert_scalings_to_tensor`), so that a swap does not recompile."""

    def __init__(self) -> None:
        super().__init__()
        self.lora = Linear(nn.Linear(8, 8))
        self.lora.scaling = {k: torch.tensor(v) for k, v in self.lora.scaling.items()}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lora(x)
