"""Anomaly scores for tabular sensor readings from a masked autoregressive flow (flowtorch)."""
import torch
import torch.nn as nn
import flowtorch.bijectors as bij
import flowtorch.distributions as fd
import flowtorch.parameters as fp


class FlowScorer(nn.Module):
    """Negative log-likelihood of each reading under a two-layer MAF fitted to normal data."""

    def __init__(self, num_features: int = 6, hidden: int = 32) -> None:
        super().__init__()
        base = torch.distributions.Independent(
            torch.distributions.Normal(torch.zeros(num_features), torch.ones(num_features)), 1)
        self.flow = fd.Flow(base, bij.Compose([
            bij.AffineAutoregressive(fp.DenseAutoregressive(hidden_dims=(hidden,))),
            bij.AffineAutoregressive(fp.DenseAutoregressive(hidden_dims=(hidden,))),
        ]))
        self.register_buffer("mean", torch.zeros(num_features))
        self.register_buffer("std", torch.ones(num_features))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        missing = torch.isnan(x)
        if missing.any():
            # a sensor dropped some readings: score them at the training mean
            x = torch.where(missing, self.mean, x)
        z = (x - self.mean) / self.std
        return -self.flow.log_prob(z)
