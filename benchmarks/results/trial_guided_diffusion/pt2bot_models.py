"""Inputs for pt2bot's smoke run of guided-diffusion's models (tiny, built from arguments).

What guided_diffusion's samplers feed the models: a noisy image x_t (unit-variance noise),
integer timesteps in [0, 1000) (`GaussianDiffusion` with 1000 steps, no rescaling), class
labels in [0, num_classes), and for super-resolution a low-resolution image in [-1, 1] at a
quarter of the side (64 -> 256 in the released models).
"""
import torch


def _gen(batch, res, extra):
    return torch.Generator().manual_seed(1000 * batch + res + extra)


def sr_inputs(batch, res):
    g = _gen(batch, res, 7)
    x = torch.randn(batch, 3, res, res, generator=g)
    timesteps = torch.randint(0, 1000, (batch,), generator=g)
    low_res = torch.rand(batch, 3, res // 4, res // 4, generator=g) * 2 - 1
    return {"x": x, "timesteps": timesteps, "low_res": low_res}
