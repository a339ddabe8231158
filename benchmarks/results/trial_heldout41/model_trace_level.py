"""A small spectral-mask speech enhancer on torch-complex's ComplexTensor."""
import torch
from torch import nn
import torch_complex.functional as FC
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
        mag, phase = x.abs(), x.angle()
        mask = self.net(torch.log1p(mag))
        y = ComplexTensor(mask * mag * torch.cos(phase), mask * mag * torch.sin(phase))
        # level the output by its mean power per bin: the trace of the bins' covariance over frames
        cov = FC.einsum("bft,bgt->bfg", [y, y.conj()])
        power = FC.trace(cov).real / (cov.real.shape[-1] * re.shape[-1])
        gain = torch.rsqrt(power + 1e-8)[:, None, None]
        y = ComplexTensor(y.real * gain, y.imag * gain)
        return y.real, y.imag
