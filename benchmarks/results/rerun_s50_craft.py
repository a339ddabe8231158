"""Search an input of tntorch:tt_svd_compress (models.py) on which head's round_tt threshold
(tensor.py:2051 `delta = delta.item()`, a Python float compared against the float32 tail sums in
float32) and the edit's (`delta = delta.detach()`, a float64 tensor of shape [1], compared in
float64) decide a rank differently: a tail sum c_k (float32) with d = delta**2 < c_k (float64)
and float32(d) == c_k. Uses the installed (unpatched) tntorch, read only; no pt2bot code.

    OMP_NUM_THREADS=1 /work/venvs/realcode/bin/python benchmarks/results/rerun_s50_craft.py OUT.pt

Writes OUT.pt: a list of inputs x (6x8x10 float32) found, and prints what it found.
"""
from __future__ import annotations

import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "real_code"))
torch.set_num_threads(1)

import tntorch as tn  # noqa: E402

import models  # noqa: E402

orig = tn.truncated_svd
seen: list = []


def probe(M, delta=None, **k):
    seen.append((M.detach().clone(), delta))
    return orig(M, delta=delta, **k)


def first_call(h):
    """c (float32 tail sums) and d (float64) of the first truncated_svd call of round_tt."""
    seen.clear()
    tn.truncated_svd = probe
    try:
        tn.Tensor(h, eps=0.3)
    finally:
        tn.truncated_svd = orig
    calls = [(M, d) for M, d in seen if d is not None]
    M, d = calls[0]
    S = torch.linalg.svd(M)[1] ** 2
    c = torch.cumsum(S[torch.arange(len(S) - 1, -1, -1)], dim=0)
    return c, float(d) ** 2


def main() -> None:
    torch.manual_seed(0)
    model, cases = models.by_key()["tntorch:tt_svd_compress"].build()
    scale = model.scale.detach()
    g = torch.Generator().manual_seed(3)
    a, b, cc = torch.randn(6, generator=g), torch.randn(8, generator=g), torch.randn(10, generator=g)
    base = a[:, None, None] * b[None, :, None] * cc[None, None, :]
    noise = torch.randn(6, 8, 10, generator=g)
    found = []

    def gap(sig: float, k: int) -> float:
        x = base + sig * noise
        c, d = first_call(scale * x)
        return float(c[k]) - d

    for k in range(0, 6):
        lo, hi = 1e-3, 10.0
        glo, ghi = gap(lo, k), gap(hi, k)
        if glo * ghi > 0:
            continue
        for _ in range(60):       # bisection on the noise level: c_k - d crosses 0
            mid = (lo * hi) ** 0.5 if hi / lo > 1.01 else 0.5 * (lo + hi)
            gm = gap(mid, k)
            if (gm > 0) == (ghi > 0):
                hi, ghi = mid, gm
            else:
                lo, glo = mid, gm
        # then single-element float32 ulp nudges of x around the crossing
        x0 = base + hi * noise
        gen = torch.Generator().manual_seed(k)
        for t in range(4000):
            x = x0.clone()
            i = int(torch.randint(0, x.numel(), (1,), generator=gen))
            steps = int(torch.randint(-40, 41, (1,), generator=gen))
            v = x.view(-1)[i:i + 1]
            for _ in range(abs(steps)):
                v = torch.nextafter(v, torch.tensor([float("inf") if steps > 0 else float("-inf")]))
            x.view(-1)[i] = v[0]
            c, d = first_call(scale * x)
            ck = c[k:k + 1]
            if float(ck) > d and bool((ck <= d)[0]) and not bool((ck <= torch.tensor([d], dtype=torch.float64))[0]):
                found.append(x)
                print(f"k={k}: found after {t + 1} nudges (noise {hi:.6g}, element {i}, {steps} ulps): "
                      f"c_k={float(ck)!r} d={d!r} float32(d)={float(torch.tensor(d, dtype=torch.float32))!r}",
                      flush=True)
                break
        if len(found) >= 2:
            break
    torch.save(found, sys.argv[1])
    print(f"{len(found)} inputs saved to {sys.argv[1]}")


if __name__ == "__main__":
    main()
