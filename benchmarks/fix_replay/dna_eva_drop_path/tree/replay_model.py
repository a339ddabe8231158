# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from dynamic_network_architectures.building_blocks.eva import Eva


class Replay(nn.Module):
    """The Eva transformer nnU-Net's Primus puts between its patch embedding and decoder, on
    embedded patches of a 2x2x2 grid (width 16, two blocks, stochastic depth 0.1; no rope)."""

    def __init__(self) -> None:
        super().__init__()
        self.eva = Eva(embed_dim=16, depth=2, num_heads=2, ref_feat_shape=(2, 2, 2), use_rot_pos_emb=False,
                       drop_path_rate=0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.eva(x)
        return out
