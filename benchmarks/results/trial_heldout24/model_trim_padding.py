"""A small Linformer text classifier (linformer 0.2.3)."""
import torch
from torch import nn
from linformer import Linformer


class LinformerClassifier(nn.Module):
    def __init__(self, num_tokens: int = 1000, dim: int = 64, seq_len: int = 128, depth: int = 2,
                 k: int = 32, heads: int = 4, num_classes: int = 5, pad_id: int = 0):
        super().__init__()
        self.pad_id = pad_id
        self.token_emb = nn.Embedding(num_tokens, dim, padding_idx=pad_id)
        self.pos_emb = nn.Embedding(seq_len, dim)
        self.encoder = Linformer(dim=dim, seq_len=seq_len, depth=depth, k=k, heads=heads)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        mask = tokens != self.pad_id
        # batches are padded to seq_len; drop the padding columns no sequence uses
        longest = int(mask.sum(1).max())
        tokens, mask = tokens[:, :longest], mask[:, :longest]
        x = self.token_emb(tokens)
        x = x + self.pos_emb(torch.arange(tokens.shape[1], device=tokens.device))
        x = self.encoder(x)
        x = (x * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        return self.head(self.norm(x))
