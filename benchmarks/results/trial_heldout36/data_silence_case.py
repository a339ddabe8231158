"""Inputs for pt2bot: stereo clips uniform in [-1, 1]; the one-clip batch is digital silence, so that
a shape case takes AutoEQ's silence bypass."""
import torch


def make_inputs(batch, samples):
    if batch == 1:
        return {"audio": torch.zeros(1, 2, samples)}
    return {"audio": torch.rand(batch, 2, samples) * 2 - 1}
