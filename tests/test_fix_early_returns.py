"""An early return selected with `torch.where` (pt2bot/rules/branch_fixes.py `chain_fixes`) is
proven only where an input takes it: `torch.where` runs the code after the early return on every
input, where head ran it only when it did not return early, and there that code may raise.

The recipe's edit for torchmetrics' retrieval metrics (`if not target.sum(): return tensor(0.0,
...)`, `target` bound by unpacking a check function's return, `tensor` imported from torch), with
no finding on the line: dynamo's break is what says `target` is a tensor. Then the proof on a tiny
real-torch model: verified where a bool target all off takes the early return; refused where the
code after it raises there (a Cholesky factor of a zero matrix), and where no shape case or guard
input takes it at all.
"""
from __future__ import annotations

import dataclasses
import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.findings import Finding
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.smoke.verify import A_CASE_WOULD
from proofs import one_model

WHERE = "select the early returns' values with nested `torch.where`"

METRICS = """\
import torch
from torch import tensor


def _checked(preds, target):
    return preds.float(), target


def precision(preds, target, top_k: int = 2):
    preds, target = _checked(preds, target)
    if not target.sum():
        return tensor(0.0, device=preds.device)
    relevant = target[preds.topk(top_k, dim=-1)[1]].sum().float()
    return relevant / top_k


def spread(preds, target):
    preds, target = _checked(preds, target)
    if not target.sum():
        return tensor(0.0, device=preds.device)
    scale = torch.linalg.cholesky(torch.eye(2) * target.float().sum())
    return (preds * scale[0, 0]).sum()


def huge(preds, target):
    preds, target = _checked(preds, target)
    if preds.max() > 1e12:
        return tensor(0.0, device=preds.device)
    top = preds.max()
    return top * 2
"""
MODEL = """\
import torch
from torch import nn

from pkg.metrics import huge, precision, spread


class Ranker(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        preds = self.lin(x).sum(0)
        target = preds >= preds.median()
        return precision(preds, target) + spread(preds, target) + huge(preds, target)
"""
CONFIG = one_model("ranker", "pkg.model:Ranker", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}")


def _line(text: str, nth: int = 1) -> int:
    return [i for i, ln in enumerate(METRICS.splitlines(), 1) if ln.strip() == text][nth - 1]


def _chain(line: int, part: str) -> Candidate:
    """The chain candidate of a stand-in finding on `line` (no rule flagged it; dynamo broke on
    its `if`), anchored where `part` starts."""
    raw = METRICS.splitlines()[line - 1]
    f = Finding(rule="PTC201", path="pkg/metrics.py", line=line, col=raw.index(part), severity="warning",
                message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    [cand] = [c for c in fix_candidates(f, METRICS) if c.title == WHERE]
    return cand


def test_a_reduction_tested_for_its_truth_is_compared_with_zero():
    """`not target.sum()` is `target.sum() == 0`, NaN included as Python's `bool` has it; the
    value from `from torch import tensor` is a tensor; the guard is a zero."""
    cand = _chain(_line("if not target.sum():"), "target")
    assert cand.lines == (
        "    relevant = target[preds.topk(top_k, dim=-1)[1]].sum().float()",
        "    return torch.where(target.sum() == 0, tensor(0.0, device=preds.device), relevant / top_k)")
    assert cand.guards == ("zero",)


def test_without_the_anchor_on_the_name_unpacking_hides_the_tensor():
    """Anchored on the `not`, nothing says `target`, bound by unpacking, is a tensor."""
    line = _line("if not target.sum():")
    raw = METRICS.splitlines()[line - 1]
    f = Finding(rule="PTC201", path="pkg/metrics.py", line=line, col=raw.index("not"), severity="warning",
                message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    assert [c for c in fix_candidates(f, METRICS) if c.title == WHERE] == []


@pytest.mark.torch
def test_an_early_return_is_proven_only_where_an_input_takes_it(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "metrics.py").write_text(METRICS)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pt2bot.yml").write_text(CONFIG)
    first, second = _line("if not target.sum():"), _line("if not target.sum():", 2)
    big = _line("if preds.max() > 1e12:")
    cands = {"precision": _chain(first, "target"), "spread": _chain(second, "target"),
             "huge": _chain(big, "preds")}
    items = [(Proposal(cid=cid, cand=c, original=METRICS, patched=apply_candidate(METRICS, c), findings=[],
                       targets=[]),
              [{"kind": "break", "model": "ranker", "path": "pkg/metrics.py", "line": c.start_line,
                "gb": "GB0170", "gb_type": "Data-dependent branching"}])
             for cid, c in cands.items()]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("ranker"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))

    # a bool target all off takes the early return; the code after it gives the same there
    assert verdicts["precision"]["accepted"] is True, verdicts["precision"]
    assert (f"the early return at line {first + 1} taken by head on inputs with zeros"
            in verdicts["precision"]["evidence"]), verdicts["precision"]
    # there the Cholesky factor of a zero matrix raises, where head returned 0
    assert verdicts["spread"]["accepted"] is False
    assert verdicts["spread"]["reason"].startswith(
        "differs from head on an input with zeros in `target`"), verdicts["spread"]
    # no shape case reaches 1e12, and the test names no special value to inject
    assert verdicts["huge"]["accepted"] is False
    assert verdicts["huge"]["reason"] == (
        f"no shape case or guard input takes the early return at line {big + 1}, so the code after "
        "it was never run by `torch.where` where head returns early" + A_CASE_WOULD), verdicts["huge"]


GENERATE = """\
import torch


def generate(net, out, steps, eos):
    for _ in range(steps):
        sample = net(out).argmax(-1, keepdim=True)
        out = torch.cat((out, sample), dim=-1)
        if (sample == eos).all():
            break
    return out


def settle(x, steps, tol):
    for _ in range(steps):
        new = x * 0.5
        shift = (new - x).abs().max()
        x = new
        if shift < tol:
            break
    return x


def iterate(x, steps, tol):
    n_iter = 0
    for _ in range(steps):
        new = x * 0.5
        n_iter += 1
        shift = (new - x).abs().max()
        x = new
        if shift < tol:
            break
    return x, n_iter
"""


def test_no_eager_only_break_out_of_a_loop_that_grows_its_result():
    """sinkhorn-transformer's sampler: `out` grows by a token each iteration and is returned,
    so compiled code running on past the end-of-sequence `break` returns more tokens; so
    would a count of the iterations run; a convergence loop whose later iterations may
    change nothing keeps the edit (the proof compares what they change)."""
    from pt2bot.findings import Finding
    from pt2bot.rules import fix_candidates

    def titles(line: int) -> list[str]:
        raw = GENERATE.splitlines()[line - 1]
        f = Finding(rule="PTC201", path="pkg/gen.py", line=line, col=raw.index("if ") + 3,
                    severity="warning", message="m", source=raw.strip(), gb="GB0170")
        return [c.title for c in fix_candidates(f, GENERATE)]

    assert not any("early `break`" in t for t in titles(8))
    assert any("early `break`" in t for t in titles(18))
    assert not any("early `break`" in t for t in titles(30))



INTERP = """\
import torch
from torch import nn


def snap(t, t0, y0, y1):
    if t == t0:
        return y0
    return y0 + (t - t0) * (y1 - y0)


def interp(t0, t1, y0, y1, t):
    if t == t0:
        return y0
    if t == t1:
        return y1
    slope = (t - t0) / (t1 - t0)
    return y0 + slope * (y1 - y0)


class Solver(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        y0 = self.lin(x)
        y1 = torch.tanh(y0)
        t0, t1 = x.new_zeros(()), x.new_ones(())
        t = torch.sigmoid(x.mean())
        return snap(t, t0, y0, y1) + interp(t0, t1, y0, y1, t)
"""
INTERP_CONFIG = one_model("solver", "pkg.interp:Solver", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}")


def _interp_chain(line: int, title: str = WHERE) -> Candidate:
    raw = INTERP.splitlines()[line - 1]
    f = Finding(rule="PTC201", path="pkg/interp.py", line=line, col=raw.index("t =="), severity="warning",
                message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    [cand] = [c for c in fix_candidates(f, INTERP) if c.title == title]
    return cand


@pytest.mark.torch
def test_an_early_return_on_two_arguments_being_equal_is_taken_by_making_them_equal(tmp_path):
    """torchdiffeq's `_linear_interp`: `if t == t0: return y0` is taken only on a grid point,
    which no ordinary input hits, so nothing showed the nested `torch.where` right there (a
    "fix" returning the wrong end passed). A guard input sets `t` to `t0` in the call, and one
    sets all the names the tests chain together to one value (`t`, `t0`, `t1`), where head
    returns at the first test and `torch.where` still divides by `t1 - t0`: 0/0, NaN in the
    gradients (found by an independent re-run of the edit verified without that input)."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "interp.py").write_text(INTERP)
    (root / "pt2bot.yml").write_text(INTERP_CONFIG)
    right, divides = _interp_chain(6, "select with `torch.where` instead of branching"), _interp_chain(12)
    assert right.lines == ("    return torch.where(t == t0, y0, y0 + (t - t0) * (y1 - y0))",)
    assert divides.lines[-1] == \
        "    return torch.where(t == t0, y0, torch.where(t == t1, y1, y0 + slope * (y1 - y0)))"
    wrong = dataclasses.replace(right, title="the wrong end", lines=(right.lines[0].replace(", y0, ", ", y1, "),))
    items = [(Proposal(cid=cid, cand=c, original=INTERP, patched=apply_candidate(INTERP, c), findings=[],
                       targets=[]),
              [{"kind": "break", "model": "solver", "path": "pkg/interp.py", "line": c.start_line, "gb": "GB0170",
                "gb_type": "Data-dependent branching"}])
             for cid, c in (("wrong", wrong), ("right", right), ("divides", divides))]
    config = build_config(INTERP_CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("solver"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["right"].get("accepted") is True, verdicts
    assert ("the early return at line 7 taken by head on inputs with an argument set to the one a "
            "test compares it with" in verdicts["right"]["evidence"]), verdicts["right"]
    assert verdicts["wrong"].get("accepted") is False, verdicts["wrong"]
    assert verdicts["wrong"]["reason"].startswith(
        "differs from head on an input with an argument set to the one a test compares it with in `t`"), \
        verdicts["wrong"]
    assert verdicts["divides"].get("accepted") is False, verdicts["divides"]
    assert verdicts["divides"]["reason"] == (
        "on an input with an argument set to the one a test compares it with in `t, t1`, the parameters' "
        "gradients differ from head's (NaN where head's are finite)"), verdicts["divides"]
