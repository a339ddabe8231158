"""Convolutive NMF autoencoder for magnitude spectrograms.

An encoder predicts non-negative activations; torchnmf's NMFD holds the learned spectral
templates (frequency x component x time) and reconstructs the spectrogram from them. Trained
with the generalized KL divergence (beta = 1).
"""
import torch
from torch import nn
from torchnmf.metrics import beta_div
from torchnmf.nmf import NMFD


class SpectrogramNMF(nn.Module):
    def __init__(self, n_freq: int = 64, rank: int = 8, kernel: int = 5, beta: float = 1.0,
                 silence: float = 1e-4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv1d(n_freq, 32, 3, padding=1), nn.ReLU(),
            nn.Conv1d(32, rank, kernel))
        self.nmfd = NMFD(W=(n_freq, rank, kernel))
        self.beta = beta
        self.silence = silence

    def forward(self, spec: torch.Tensor):
        """spec: [batch, n_freq, frames], non-negative magnitudes."""
        # a silent batch (the zero padding after the last file of an epoch) has nothing to
        # learn from, and KL on all-zero targets is dominated by eps: skip it
        if spec.amax() < self.silence:
            return torch.zeros_like(spec), spec.new_zeros(())
        h = torch.relu(self.encoder(spec))
        rec = self.nmfd(H=h)
        loss = beta_div(rec, spec, beta=self.beta) / spec.shape[0]
        return rec, loss
