"""Example inputs for pt2bot: standardised readings, and a batch of raw gateway readings."""
import torch


def make_inputs(batch: int):
    g = torch.Generator().manual_seed(batch)
    features = torch.randn(batch, 12, generator=g)
    if batch <= 4:
        # a start-up batch from an old gateway: raw readings, in the hundreds
        features = 300.0 * features + 1000.0
    return {"features": features}
