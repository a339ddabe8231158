# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

import os
import sys

# diffusers has a src/ layout: what `pip install -e .` would put on the path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from diffusers.models.unet_2d_condition import UNet2DConditionModel


class Replay(UNet2DConditionModel):
    """A latent of 12 x 12 (not a multiple of 2**3), the case the log line is on."""
