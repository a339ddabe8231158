"""A convergence test's `break` out of a `for` loop, run past with the loop's values held
(pt2bot/rules/branch_fixes.py `_frozen_loop_fixes`): otloss's Sinkhorn loop ends with `if (f -
f_prev).abs().max().item() < tol: break`, a host read every iteration (GB0124). Run to its end,
with `f` and `g` selected by `torch.where` once the test has held, the loop returns the
potentials head leaves it with, in eager and compiled code alike: the exact form of what a held-out
batch's engineer wrote by hand, where taking the `break` in eager only lets compiled code move
the potentials on past convergence.

The recipe's text and the loops it leaves alone, then the proof on real torch: verified where the
shape cases converge, refused where no input takes the `break`.
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

SINKHORN = """\
import math

import torch
from torch import nn


def potentials(C, eps: float, max_iter: int, tol: float):
    n, m = C.shape
    log_a = torch.full((n,), -math.log(n))
    log_b = torch.full((m,), -math.log(m))
    f = torch.zeros(n)
    g = torch.zeros(m)
    for _ in range(max_iter):
        f_prev = f
        # one sweep of each potential
        f = eps * (log_a - torch.logsumexp((g[None, :] - C) / eps, dim=1))
        g = eps * (log_b - torch.logsumexp((f[:, None] - C) / eps, dim=0))
        if (f - f_prev).abs().max().item() < tol:
            break
    return f, g


class Transport(nn.Module):
    def __init__(self, tol=1e-4):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.tol = tol

    def forward(self, x, y):
        C = torch.cdist(self.proj(x), y) ** 2
        f, g = potentials(C, 0.5, 40, self.tol)
        return f.sum() + g.sum(), f
"""
LINE = 18
assert SINKHORN.splitlines()[LINE - 1].strip().startswith("if (f - f_prev)")
TITLE = "run the loop to its end and keep what its `break` left"
FIXED = (
    "    done = torch.zeros((), dtype=torch.bool, device=f.device)",
    "    for _ in range(max_iter):",
    "        f_prev = f",
    "        # one sweep of each potential",
    "        f = torch.where(done, f, eps * (log_a - torch.logsumexp((g[None, :] - C) / eps, dim=1)))",
    "        g = torch.where(done, g, eps * (log_b - torch.logsumexp((f[:, None] - C) / eps, dim=0)))",
    "        done = done | ((f - f_prev).abs().max() < tol)",
)
CONFIG = one_model("transport", "pkg.ot:Transport",
                   "[{name: x, shape: [n, 4]}, {name: y, shape: [m, 4]}]", "{n: [3, 5], m: [4]}",
                   extra="    kwargs: {tol: TOL}\n")


def _target(path: str = "m.py") -> dict:
    return break_target("transport", path, LINE, "GB0124", "Unsupported Tensor.item() call")


def _edits(text: str, path: str = "m.py") -> list:
    return offered(_target(path), text, TITLE)


def test_the_loop_runs_to_its_end_with_its_values_held():
    (c,) = _edits(SINKHORN)
    assert (c.start_line, c.end_line, c.lines, c.safe, c.guards, c.rank) == (13, 19, FIXED, False, ("zero",), 2)
    assert c.title == (f"{TITLE}: `f`, `g` held by `torch.where` from the iteration whose test holds "
                       "(every iteration now runs); the test reads the tensor, not `.item()`")
    compile(apply_candidate(SINKHORN, c), "m.py", "exec")
    # tried before taking the `break` in eager only, which compiled code runs past unheld
    eager_only = offered(_target(), SINKHORN, "in eager only")
    assert [e.rank for e in eager_only] == [3]


def test_a_name_bound_by_unpacking_is_held_through_a_fresh_name():
    text = SINKHORN.replace(
        "        f = eps * (log_a - torch.logsumexp((g[None, :] - C) / eps, dim=1))\n",
        "        f, lse = eps * (log_a - torch.logsumexp((g[None, :] - C) / eps, dim=1)), 0\n")
    (c,) = _edits(text)
    assert c.lines[4:6] == (
        "        f_step, lse = eps * (log_a - torch.logsumexp((g[None, :] - C) / eps, dim=1)), 0",
        "        f = torch.where(done, f, f_step)")
    compile(apply_candidate(text, c), "m.py", "exec")


@pytest.mark.parametrize("old, new", [
    # an update in place: later iterations would repeat it
    ("        f_prev = f\n", "        f_prev = f\n        g.mul_(1.0)\n"),
    # a counter counts on past the exit
    ("    for _ in range(max_iter):\n        f_prev = f\n",
     "    steps = 0\n    for _ in range(max_iter):\n        f_prev = f\n        steps += 1\n"),
    # the loop variable read after the loop ends at the last iteration, not the exit's
    ("    return f, g\n", "    return f, g * _\n"),
    # a name read after the loop and bound only in it
    ("    g = torch.zeros(m)\n", ""),
    # a random draw each iteration moves the stream every later draw reads
    ("        f_prev = f\n", "        f_prev = f + 0 * torch.rand(1)\n"),
    # a branch in the body, and a `while` whose test may be the only way out
    ("        f_prev = f\n", "        f_prev = f\n        if eps > 1:\n            g = g * 2\n"),
    ("    for _ in range(max_iter):", "    while True:"),
    # an `else` on the loop, and the `break` under another test
    ("    return f, g\n", "    else:\n        g = g + 0\n    return f, g\n"),
    ("        if (f - f_prev).abs().max().item() < tol:\n            break\n",
     "        if eps > 0:\n            if (f - f_prev).abs().max().item() < tol:\n                break\n"),
])
def test_no_frozen_loop_where_running_on_is_not_exact(old, new):
    text = SINKHORN.replace(old, new, 1)
    assert text != SINKHORN
    compile(text, "m.py", "exec")
    assert _edits(text) == [], new


@pytest.mark.torch
@pytest.mark.parametrize("tol, accepted", [(1e-4, True), (0.0, False)])
def test_the_proof_accepts_it_only_where_an_input_takes_the_break(tmp_path, tol, accepted):
    """At 1e-4 both shape cases converge within 40 sweeps and take the `break`: the edit equals
    head there. At 0 no input ever does (a difference is never below 0), so head and the edit
    run the same 40 sweeps and nothing compares the held values."""
    root = write_repo(tmp_path / "repo", {"pkg/ot.py": SINKHORN}, CONFIG.replace("TOL", str(tol)))
    (c,) = _edits(SINKHORN, path="pkg/ot.py")
    verdict = prove(root, "transport", [item("frozen", c, SINKHORN, _target("pkg/ot.py"))],
                    tmp_path / "work")["frozen"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert verdict["evidence"].startswith("GB0124 gone"), verdict
        assert "outputs equal on 2 shape cases" in verdict["evidence"], verdict
        assert "the `break` at line 19 taken by head on 2 of the 2 shape cases" in verdict["evidence"], verdict
    else:
        assert verdict["reason"].startswith(
            "no shape case or guard input takes the `break` at line 19, so the loop run on past it"), verdict
