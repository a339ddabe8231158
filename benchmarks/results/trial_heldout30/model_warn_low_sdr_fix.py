"""A small time-domain speech enhancer trained with the scale-invariant SDR (fast_bss_eval)."""
import warnings

import fast_bss_eval
import torch
from torch import nn


class Enhancer(nn.Module):
    """A tiny TasNet-like enhancer: a learned filterbank, a sigmoid mask, a transposed-conv
    decoder. The loss is the negative SI-SDR of the enhanced signal against the clean one."""

    def __init__(self, n_filters: int = 32, kernel: int = 16, stride: int = 8,
                 clamp_db: float = 50.0, warn_below_db: float = -30.0) -> None:
        super().__init__()
        self.encoder = nn.Conv1d(1, n_filters, kernel, stride=stride, padding=kernel // 2)
        self.mask = nn.Sequential(
            nn.Conv1d(n_filters, n_filters, 3, padding=1), nn.PReLU(),
            nn.Conv1d(n_filters, n_filters, 1), nn.Sigmoid())
        self.decoder = nn.ConvTranspose1d(n_filters, 1, kernel, stride=stride, padding=kernel // 2)
        self.clamp_db = clamp_db
        self.warn_below_db = warn_below_db

    def forward(self, noisy: torch.Tensor, clean: torch.Tensor):
        """noisy: [batch, samples] noisy waveform; clean: [batch, samples] the clean speech.

        Returns the enhanced waveform [batch, samples] and the loss (negative SI-SDR in dB)."""
        w = torch.relu(self.encoder(noisy[:, None]))
        est = self.decoder(w * self.mask(w))[:, 0, : noisy.shape[-1]]
        loss = fast_bss_eval.si_sdr_loss(est[:, None], clean[:, None], zero_mean=True,
                                         clamp_db=self.clamp_db)
        loss = loss.mean()
        # a diverging run shows up as a very low SI-SDR: say so in the training log
        si_sdr = -loss.detach()
        if not torch.compiler.is_compiling() and si_sdr.item() < self.warn_below_db:
            warnings.warn(f"enhancer: SI-SDR {si_sdr.item():.1f} dB is below {self.warn_below_db} dB")
        return est, loss
