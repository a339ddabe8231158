"""A small spectral-mask speech enhancer on torch-complex's ComplexTensor."""
import torch
from torch import nn
from torch_complex.tensor import ComplexTensor


class SpectralMaskEnhancer(nn.Module):
    """Estimates a real-valued mask over a noisy STFT and applies it, keeping the noisy phase.

    forward(re, im):
        re: [batch, 33, frames] float32, real part of the noisy STFT (33 frequency bins)
        im: [batch, 33, frames] float32, imaginary part
    returns the enhanced STFT's real and imaginary parts, same shape.
    """

    def __init__(self, bins: int = 33, hidden: int = 48):
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(bins, hidden, 3, padding=1),
            nn.ReLU(),
            nn.Conv1d(hidden, bins, 3, padding=1),
            nn.Sigmoid(),
        )

    def forward(self, re, im):
        x = ComplexTensor(re, im)
        mag = x.abs()
        mask = self.net(torch.log1p(mag))
        # a real mask scales both parts: apply it to the noisy spectrum directly
        y = x * mask
        return y.real, y.imag
