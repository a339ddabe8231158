# The replay's model (written for the benchmark, not upstream code).
import torch
from torch import nn

from torchtune.modules.kv_cache import KVCache


class Replay(nn.Module):
    """One decoding step per call: a projection, then the step's key and value into the cache."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 8)
        self.cache = KVCache(batch_size=4, max_seq_len=4096, num_heads=2, head_dim=4, dtype=torch.float32)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        kv = self.proj(x).view(b, 1, 2, 4).transpose(1, 2)  # [b, heads, 1 token, head_dim]
        full = torch.nn.functional.pad(kv, (0, 0, 0, 0, 0, 0, 0, 4 - b))  # the cache's batch is 4
        k_out, v_out = self.cache.update(full, full)
        return (k_out[:b] * v_out[:b]).sum((1, 2, 3)) + kv.sum((1, 2, 3))
