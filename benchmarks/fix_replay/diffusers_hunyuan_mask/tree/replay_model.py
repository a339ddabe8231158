# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

import os
import sys

# diffusers has a src/ layout: what `pip install -e .` would put on the path
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "src"))

from diffusers.models.transformers.transformer_hunyuan_video import HunyuanVideoTransformer3DModel


class Replay(HunyuanVideoTransformer3DModel):
    """Video tokens and a padded prompt whose valid length differs per sample."""


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    mask = torch.zeros(batch, 6)
    for i in range(batch):
        mask[i, : 2 + i % 4] = 1
    return {"hidden_states": torch.randn(batch, 5, 8, generator=g),
            "encoder_hidden_states": torch.randn(batch, 6, 8, generator=g),
            "encoder_attention_mask": mask}
