"""AutoEQ: a small network that predicts a six-band parametric EQ and an output gain for a
stereo clip, then applies them with dasp-pytorch's differentiable biquads (trained end to end
against reference mixes)."""
import math

import torch
from torch import nn
from dasp_pytorch import functional as DF

SAMPLE_RATE = 44100


class AutoEQ(nn.Module):
    """audio: [batch, 2, samples] float32 stereo waveform at 44.1 kHz, values in [-1, 1]
    (samples a multiple of 256). Returns the equalised audio, same shape."""

    def __init__(self, hidden: int = 32, frame: int = 256):
        super().__init__()
        self.frame = frame
        self.encoder = nn.Sequential(nn.Linear(frame, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.head = nn.Linear(hidden, 18 + 1 + 1)

    def params(self, audio):
        frames = audio.mean(1).unfold(-1, self.frame, self.frame)       # [batch, n, frame]
        spec = torch.fft.rfft(frames, n=2 * self.frame - 2).abs()       # [batch, n, frame]
        h = self.encoder(torch.log1p(spec)).mean(1)
        return torch.sigmoid(self.head(h))                              # [batch, 20] on (0, 1)

    def forward(self, audio):
        p = self.params(audio)
        g = lambda i: -12.0 + 24.0 * p[:, i]
        q = lambda i: 0.5 + 3.0 * p[:, i]
        f = lambda i, lo, hi: lo + (hi - lo) * p[:, i]
        y = DF.parametric_eq(
            audio, SAMPLE_RATE,
            g(0), f(1, 20, 400), q(2),
            g(3), f(4, 100, 1000), q(5),
            g(6), f(7, 1000, 4000), q(8),
            g(9), f(10, 4000, 10000), q(11),
            g(12), f(13, 8000, 16000), q(14),
            g(15), f(16, 6000, 18000), q(17),
        )
        y = DF.stereo_widener(y, SAMPLE_RATE, p[:, 18:19])
        y = DF.gain(y, SAMPLE_RATE, (-6.0 + 6.0 * p[:, 19]).view(-1, 1, 1))
        # keep the output from clipping: scale the batch down by its peak when it exceeds full
        # scale, and keep the peak level for the training log
        peak = y.abs().amax()
        self.last_peak_db = 20.0 * math.log10(peak.detach() + 1e-12)
        if peak > 1.0:
            y = y / peak
        return y
