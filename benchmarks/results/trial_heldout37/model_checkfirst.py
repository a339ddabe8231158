"""A BiLSTM-CRF named-entity tagger on TorchCRF."""
import torch
from torch import nn
from TorchCRF import CRF


class BiLSTMCRF(nn.Module):
    """BiLSTM-CRF tagger; forward returns the training loss.

    tokens: [batch, seq] int64 token ids below vocab_size, 0 is padding
    mask:   [batch, seq] bool, True on real tokens (each row a prefix: the first token is real)
    tags:   [batch, seq] int64 gold BIO tags below num_tags
    """

    def __init__(self, vocab_size: int = 1000, num_tags: int = 9, emb_dim: int = 32,
                 hidden: int = 32) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, emb_dim, padding_idx=0)
        self.lstm = nn.LSTM(emb_dim, hidden // 2, batch_first=True, bidirectional=True)
        self.proj = nn.Linear(hidden, num_tags)
        self.crf = CRF(num_tags, use_gpu=False)

    def emissions(self, tokens: torch.Tensor) -> torch.Tensor:
        h, _ = self.lstm(self.embed(tokens))
        return self.proj(h)

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, tags: torch.Tensor) -> torch.Tensor:
        # TorchCRF scores a sequence from its first step on: a row whose first token is padding
        # gets a wrong likelihood without any error, so refuse it
        if not mask[:, 0].all():
            raise ValueError("mask[:, 0] must be True: every sentence needs its first token")
        h = self.emissions(tokens)
        llh = self.crf(h, tags, mask)
        return -llh.mean()
