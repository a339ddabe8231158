"""A Bayesian classifier for tabular sensor readings, with predictive uncertainty.

Built on torchbnn's BayesLinear layers: every forward samples fresh weights, so a
prediction averages several draws (Monte-Carlo) and reports how much they disagree.
"""
import torch
import torch.nn as nn
import torchbnn as bnn


class BayesClassifier(nn.Module):
    """Monte-Carlo Bayesian MLP.

    forward(features) -> (probs, entropy)
        features: [batch, 12] float32 standardised sensor readings (zero mean, unit variance).
        probs: [batch, 5] mean class probabilities over `samples` weight draws.
        entropy: [batch] predictive entropy in nats (0 = certain, log(5) = no idea).
    """

    def __init__(self, in_features: int = 12, hidden: int = 64, classes: int = 5,
                 samples: int = 8, prior_sigma: float = 0.1):
        super().__init__()
        self.samples = samples
        self.net = nn.Sequential(
            bnn.BayesLinear(prior_mu=0.0, prior_sigma=prior_sigma, in_features=in_features,
                            out_features=hidden),
            nn.ReLU(),
            bnn.BayesLinear(prior_mu=0.0, prior_sigma=prior_sigma, in_features=hidden,
                            out_features=hidden),
            nn.ReLU(),
            bnn.BayesLinear(prior_mu=0.0, prior_sigma=prior_sigma, in_features=hidden,
                            out_features=classes),
        )

    def forward(self, features: torch.Tensor):
        # some gateways send raw (unscaled) readings; bring such a batch back to unit range
        scale = features.abs().amax()
        if scale > 50:
            features = features / scale
        draws = torch.stack([torch.softmax(self.net(features), dim=-1)
                             for _ in range(self.samples)])
        probs = draws.mean(0)
        entropy = -(probs * torch.log(probs.clamp_min(1e-12))).sum(-1)
        return probs, entropy
