"""A number `.item()` gave that meets a Python float before any tensor was computed with in
double (`eps * torch.norm(M).item()`, then `delta ** 2`: tntorch's SVD rank threshold). A
float32 tensor kept in its place rounds each step to float32, and an independent re-run found
a rank decided otherwise at a rounding boundary. The kept value is first tried as a 0-d float64
tensor there, which computes those steps as Python did; the float32 forms stay as later ranks
for where a float64 result would reach the model's outputs."""
from __future__ import annotations

import math

import pytest
import torch

from test_fixes import findings_in, fixed

from pt2bot.rules import fix_candidates

HEAD = '''\
import math

import torch


@torch.compile
def f(M, x, area, scale=0.5, eps: float = 1e-3):
'''


def _kept(tmp_path, body: str):
    src = HEAD + body
    _src, fs = findings_in(tmp_path, src, "PTC101")
    [c] = [c for f in fs for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]
    return src, c


@pytest.mark.parametrize("body,first", [
    # an annotated float parameter: tntorch's round.py
    ("    delta = eps * torch.norm(M).item()\n    return x * delta ** 2\n",
     "    delta = eps * torch.norm(M).double()\n"),
    # a float literal, through a sign
    ("    return x * (1e-3 * -M.sum().item())\n", "    return x * (1e-3 * -M.sum().double())\n"),
    # a parameter with a float default, met by a later read of the name
    ("    v = M.sum().item()\n    return x * (v * scale)\n", "    v = M.sum().double()\n"),
    # torchvision's crop: the kept value ends in Python's own arithmetic, `math.sqrt`
    ("    a = area * torch.empty(1).uniform_(0.08, 1.0).item()\n"
     "    return x[:int(round(math.sqrt(a * x.shape[0])))]\n",
     "    a = area * torch.empty(1).uniform_(0.08, 1.0).double()\n"),
])
def test_a_value_that_meets_a_python_float_is_first_tried_in_float64(tmp_path, body, first):
    src, c = _kept(tmp_path, body)
    assert c.lines[0] + "\n" == first and c.rank == 0 and not c.safe
    assert "in float64 as the Python number was" in c.title
    detached, plain, plain_detached = c.variants
    assert detached.lines[0].endswith(".detach().double()") or ".detach().double()" in detached.lines[0]
    assert (detached.rank, plain.rank, plain_detached.rank) == (1, 2, 3)
    assert ".double()" not in plain.lines[0] and ".detach()" in plain_detached.lines[0]
    for cand in (c, *c.variants):
        fixed(src, cand)


@pytest.mark.parametrize("body", [
    "    return x * M.sum().item()\n",                 # a tensor first: it rounds as the number did
    "    v = M.sum().item()\n    return x * v\n",
    "    return x * (2 * M.sum().item())\n",           # an int literal: an integer tensor stays one
    "    return x * (scale2 * M.sum().item())\n",      # a name of unknown type
])
def test_no_float64_form_where_no_python_float_is_met(tmp_path, body):
    _src, c = _kept(tmp_path, body.replace("scale2", "x.mean()"))
    assert ".double()" not in c.lines[0] and [v.rank for v in c.variants] == [1]


def test_the_float64_form_computes_as_python_does():
    """Why: a float32 product's square is another threshold than the double one, and a value
    between the two is kept by one and cut by the other; the float64 form's threshold is head's
    on every eps tried."""
    norm = torch.tensor(3.3, dtype=torch.float32)
    differ = 0
    for k in range(1, 2000):
        eps = k * 7.3e-5
        head = (eps * norm.item()) ** 2              # Python: double, cast once where it meets x
        kept32 = (eps * norm) ** 2
        kept64 = (eps * norm.double()) ** 2
        # the float32 values at and just past both thresholds
        x = torch.tensor([head, float(kept32)], dtype=torch.float32)
        x = torch.cat([x, torch.nextafter(x, torch.full_like(x, 1.0))])
        differ += not torch.equal(x <= head, x <= kept32)
        assert torch.equal(x <= head, x <= kept64), eps
    assert differ > 0


def test_a_crop_size_is_the_python_numbers_in_float64_only():
    """torchvision's RandomResizedCrop on a 224 x 224 image: a draw where the float32 tensor
    kept as `target_area` crops 178 pixels where head crops 179 (13 of 2 million draws
    differ so, and none in float64)."""
    area, u, ratio = 224 * 224, torch.tensor([0.6287518739700317]), 1.0099529027938843

    def width(target_area) -> int:
        return int(round(math.sqrt(target_area * ratio)))

    assert width(area * u.item()) == 179
    assert width(area * u) == 178
    assert width(area * u.double()) == 179
