# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from llmfoundry.models.mpt.modeling_mpt import MPTModel


class Replay(MPTModel):
    """An MPT forward at inference (eval mode) with an attention mask, right-padded in the larger
    batch: the mask checks MPTModel runs before the embedding."""


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    mask = torch.ones(batch, 6, dtype=torch.long)
    mask[1:, 4:] = 0
    return {"input_ids": torch.randint(0, 64, (batch, 6), generator=g), "attention_mask": mask}
