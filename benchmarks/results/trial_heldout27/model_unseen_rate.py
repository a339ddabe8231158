"""Customer churn classifier: a TabTransformer over the account's categorical fields and usage."""
import torch
from torch import nn
from tab_transformer_pytorch import TabTransformer

# plan, region, payment method, contract length, support tier
CARDINALITIES = (4, 12, 5, 3, 3)
NUM_USAGE = 6


class ChurnModel(nn.Module):
    def __init__(self, dim: int = 32, depth: int = 2, heads: int = 4):
        super().__init__()
        self.register_buffer("cardinalities", torch.tensor(CARDINALITIES))
        self.tab = TabTransformer(
            categories=CARDINALITIES,
            num_continuous=NUM_USAGE,
            dim=dim,
            depth=depth,
            heads=heads,
            dim_head=8,
            mlp_act=nn.ReLU(),
            continuous_mean_std=torch.tensor([[0.0, 1.0]] * NUM_USAGE),
        )

    def forward(self, account: torch.Tensor, usage: torch.Tensor) -> torch.Tensor:
        """account: (batch, 5) category codes; usage: (batch, 6) standardized usage.
        Returns the churn probability per customer."""
        # how often serving sees a code the model was not trained on, for the dashboard
        self.unseen_rate = (account >= self.cardinalities).float().mean().item()
        usage = torch.log1p(usage.clamp_min(0))
        return torch.sigmoid(self.tab(account, usage).squeeze(-1))


def build() -> ChurnModel:
    torch.manual_seed(0)
    return ChurnModel().eval()
