"""A branch on a tensor whose arm warns before it assigns (pt2bot/rules/branch_fixes.py
`_notes_apart`): torchmetrics' ROC, `if fps[-1] <= 0: rank_zero_warn(...); fpr =
torch.zeros_like(thres)` / `else: fpr = fps / fps[-1]`. The value is selected with `torch.where`,
and the warning given in eager only, under the arm's own test. The edit texts, then the edit
run: eager warns where head warns, compiled code traces one graph; and the proof loop verifies
it on a tiny real-torch model.
"""
from __future__ import annotations

import time
import warnings

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.findings import Finding
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import apply_candidate, fix_candidates

WHERE = "select with `torch.where` instead of branching, the warning given in eager only"

RATES = """\
import warnings

import torch


def rate(fps, thres):
    if fps[-1] <= 0:
        warnings.warn("No negative samples: returning zeros", UserWarning)
        fpr = torch.zeros_like(thres)
    else:
        fpr = fps / fps[-1]
    return fpr
"""
LINE = 7


def _candidates(src: str, line: int = LINE, part: str = "fps"):
    raw = src.splitlines()[line - 1]
    f = Finding(rule="PTC201", path="pkg/rates.py", line=line, col=raw.index(part), severity="warning",
                message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    return fix_candidates(f, src)


def test_the_warning_is_set_apart_and_the_value_selected():
    [cand] = [c for c in _candidates(RATES) if c.title == WHERE]
    assert (cand.start_line, cand.end_line) == (7, 11)
    assert cand.lines == (
        "    if not torch.compiler.is_compiling() and fps[-1] <= 0:",
        '        warnings.warn("No negative samples: returning zeros", UserWarning)',
        "    fpr = torch.where(fps[-1] <= 0, torch.zeros_like(thres), fps / fps[-1])")


def test_a_warning_in_the_else_arm_is_given_under_the_negated_test():
    src = RATES.replace('''        warnings.warn("No negative samples: returning zeros", UserWarning)
        fpr = torch.zeros_like(thres)
    else:
        fpr = fps / fps[-1]''', '''        fpr = torch.zeros_like(thres)
    else:
        logger.info("rates from %d samples", fps.numel())
        fpr = fps / fps[-1]''')
    [cand] = [c for c in _candidates(src) if c.title == WHERE]
    assert cand.lines[:2] == ("    if not torch.compiler.is_compiling() and not (fps[-1] <= 0):",
                              '        logger.info("rates from %d samples", fps.numel())')


@pytest.mark.parametrize("arm", [
    "        torch.save(fps, 'fps.pt')",        # torch's, and not a note
    "        counts.append(fps)",               # an effect
    "        stats.update_info(fps)",           # named like a log call, but an update
    '        warnings.warn("x", UserWarning)\n        fpr = torch.zeros_like(thres)',   # two statements left
])
def test_what_is_not_a_note_leaves_the_arm_unselectable(arm):
    src = RATES.replace('        warnings.warn("No negative samples: returning zeros", UserWarning)', arm)
    assert [c for c in _candidates(src) if c.title.startswith("select with `torch.where`")] == []


@pytest.mark.torch
def test_eager_still_warns_and_compiled_code_is_one_graph():
    import torch

    [cand] = [c for c in _candidates(RATES) if c.title == WHERE]
    space: dict = {}
    exec(compile(apply_candidate(RATES, cand), "rates.py", "exec"), space)
    rate = space["rate"]
    thres = torch.ones(3)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert torch.equal(rate(torch.tensor([0.0, 0.0, 0.0]), thres), torch.zeros(3))
        assert torch.equal(rate(torch.tensor([1.0, 2.0, 4.0]), thres), torch.tensor([0.25, 0.5, 1.0]))
    assert [str(w.message) for w in seen] == ["No negative samples: returning zeros"]
    torch._dynamo.reset()
    compiled = torch.compile(rate, backend="eager", fullgraph=True)
    assert torch.equal(compiled(torch.tensor([0.0, 0.0, 0.0]), thres), torch.zeros(3))


MODEL = """\
import torch
from torch import nn

from pkg.rates import rate


class Roc(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        fps = torch.relu(self.lin(x)).sum(0).cumsum(0) + 1.0
        return rate(fps, fps)
"""
CONFIG = """\
version: 1
models:
  - name: roc
    entry: pkg.model:Roc
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 3]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


@pytest.mark.torch
def test_the_loop_verifies_the_selection_with_the_warning_apart(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "rates.py").write_text(RATES)
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pt2bot.yml").write_text(CONFIG)
    [cand] = [c for c in _candidates(RATES) if c.title == WHERE]
    items = [(Proposal(cid="where", cand=cand, original=RATES, patched=apply_candidate(RATES, cand),
                       findings=[], targets=[]),
              [{"kind": "break", "model": "roc", "path": "pkg/rates.py", "line": LINE, "gb": "GB0170",
                "gb_type": "Data-dependent branching"}])]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("roc"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert verdicts["where"]["evidence"].startswith("GB0170 gone, 1 graph instead of 3"), verdicts["where"]
