"""A branch on a tensor whose arm warns before it assigns (pt2bot/rules/branch_fixes.py
`_notes_apart`): torchmetrics' ROC, `if fps[-1] <= 0: rank_zero_warn(...); fpr =
torch.zeros_like(thres)` / `else: fpr = fps / fps[-1]`. The value is selected with `torch.where`,
and the warning given in eager only, under the arm's own test. The edit texts, then the edit
run: eager warns where head warns, compiled code traces one graph; and the proof loop verifies
it on a tiny real-torch model.
"""
from __future__ import annotations

import warnings

import pytest

from pt2bot.findings import Finding
from pt2bot.rules import apply_candidate, fix_candidates
from proofs import item, one_model, prove, write_repo

WHERE = "select with `torch.where` instead of branching, the warning given in eager only"


def _target(model: str, path: str, line: int) -> dict:
    return {"kind": "break", "model": model, "path": path, "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching"}

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
CONFIG = one_model("roc", "pkg.model:Roc", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_the_selection_with_the_warning_apart(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/rates.py": RATES, "pkg/model.py": MODEL}, CONFIG)
    [cand] = [c for c in _candidates(RATES) if c.title == WHERE]
    verdicts = prove(root, "roc", [item("where", cand, RATES, _target("roc", "pkg/rates.py", LINE))],
                     tmp_path / "work")
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert verdicts["where"]["evidence"].startswith("GB0170 gone, 1 graph instead of 3"), verdicts["where"]


# --------------------------------------------------------------------------- a block that only warns

PEARSON = """\
import math

import torch


def corr(var_x, var_y, corr_xy):
    bound = math.sqrt(torch.finfo(var_x.dtype).eps)
    if (
        (var_x < bound).any()
        or (var_y < bound).any()
        or ~torch.isfinite(corr_xy).any()
    ):
        rank_zero_warn(f"The variance is close to zero ({var_x.dtype}): the correlation is nan.",
                       UserWarning)
    return corr_xy / (var_x * var_y).sqrt()


def rank_zero_warn(message, category):
    import warnings
    warnings.warn(message, category)
"""
NOTES_BLOCK = "give the warning in eager only: compiled code skips the test and the block"


def _break_candidates(src: str, line: int):
    """The candidates the proof gathers for dynamo's break alone (no static finding): the
    break names the `if (` line, where no part of the test starts."""
    import ast

    from pt2bot.fixes import break_findings
    from pt2bot.rules import fix_candidates_explained

    target = {"kind": "break", "path": "pkg/corr.py", "line": line, "gb": "GB0170"}
    found = break_findings(target, src, {})
    tree = ast.parse(src)
    return found, [c for f in found for c in fix_candidates_explained(f, src, tree)[0]]


def test_a_break_on_the_if_line_of_a_test_below_it_is_anchored_on_the_test():
    found, cands = _break_candidates(PEARSON, 8)
    assert [(f.rule, f.line, f.col) for f in found] == [("PTC201", 9, 8)]
    [cand] = cands
    assert cand.title == NOTES_BLOCK and cand.safe and cand.guards == ()
    assert (cand.start_line, cand.end_line) == (8, 11)   # the `):` line stays as it is
    assert cand.lines[1] == "        not torch.compiler.is_compiling() and ((var_x < bound).any()"


@pytest.mark.parametrize("test", [
    "self.check(var_x)",               # a method of the module: it may change its state
    "torch.rand(1) < 0.1",             # a draw: compiled code would move every later one
    "record(var_x).any()",             # a function of the user's
    "var_x.clamp_(0).any()",           # in place
    "utils.record(var_x).any()",       # a function of an imported module of the user's
])
def test_a_test_that_may_do_something_gets_no_safe_edit(test):
    src = PEARSON.replace("import math\n", "import math\n\nimport utils\n").replace("""(
        (var_x < bound).any()
        or (var_y < bound).any()
        or ~torch.isfinite(corr_xy).any()
    )""", test)
    f = Finding(rule="PTC201", path="pkg/corr.py", line=10, col=7, severity="warning",
                message="m", source=src.splitlines()[9].strip(), gb="GB0170")
    assert src.splitlines()[9].startswith("    if ")
    assert [c for c in fix_candidates(f, src) if c.safe] == []


def test_a_block_that_computes_gets_no_notes_edit():
    src = PEARSON.replace("""                       UserWarning)
""", """                       UserWarning)
        corr_xy = torch.nan_to_num(corr_xy)
""")
    _found, cands = _break_candidates(src, 8)
    assert NOTES_BLOCK not in [c.title for c in cands]


PEARSON_MODEL = """\
import torch
from torch import nn

from pkg.corr import corr


class Corr(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return corr(h.var(0) + 1.0, h.var(0) + 2.0, h.mean(0))
"""


@pytest.mark.torch
def test_the_loop_verifies_the_warning_in_eager_only_without_a_case_that_warns(tmp_path):
    """No shape case warns (the variances are at least 1): an edit that ran a block of work in
    eager only would be refused for that; a block of warnings computes nothing, so the edit
    is safe, and the proof checks what it can run (the break gone, outputs equal)."""
    root = write_repo(tmp_path / "repo", {"pkg/corr.py": PEARSON, "pkg/model.py": PEARSON_MODEL},
                      CONFIG.replace("roc", "corr").replace("pkg.model:Roc", "pkg.model:Corr"))
    _found, [cand] = _break_candidates(PEARSON, 8)
    verdicts = prove(root, "corr", [item("notes", cand, PEARSON, _target("corr", "pkg/corr.py", 8))],
                     tmp_path / "work")
    assert verdicts["notes"]["accepted"] is True, verdicts["notes"]
    evidence = verdicts["notes"]["evidence"]
    # (head breaks at the test, and at the warning wherever it runs)
    assert evidence.startswith("GB0170 gone, 1 graph instead of ") and \
        "outputs equal on 2 shape cases" in evidence, evidence
    assert "no shape case reaches the `rank_zero_warn` at line 13 in head's eager run" in evidence, \
        evidence


@pytest.mark.torch
def test_the_evidence_names_the_shape_cases_whose_warning_compiled_code_no_longer_gives(tmp_path):
    """The edit is verified, yet a compiled run no longer warns: the evidence must say on
    which shape case head warned (fast-bss-eval's enhancer warned of a low SI-SDR on one of the
    proof's four cases, and its evidence said only that the outputs were equal)."""
    model = PEARSON_MODEL.replace("corr(h.var(0) + 1.0,", "corr(h.var(0) * (x.shape[0] - 2) + 1e-5,")
    root = write_repo(tmp_path / "repo", {"pkg/corr.py": PEARSON, "pkg/model.py": model},
                      CONFIG.replace("roc", "corr").replace("pkg.model:Roc", "pkg.model:Corr"))
    _found, [cand] = _break_candidates(PEARSON, 8)
    verdicts = prove(root, "corr", [item("notes", cand, PEARSON, _target("corr", "pkg/corr.py", 8))],
                     tmp_path / "work")
    assert verdicts["notes"]["accepted"] is True, verdicts["notes"]
    assert verdicts["notes"]["evidence"].endswith(
        "but compiled code skips the `rank_zero_warn` at line 13, which head's eager run reaches "
        "on shape case batch=2: a compiled run there no longer gives it"), verdicts["notes"]


@pytest.mark.torch
def test_eager_warns_as_head_and_compiled_code_is_one_graph():
    import torch

    _found, [cand] = _break_candidates(PEARSON, 8)
    space: dict = {}
    exec(compile(apply_candidate(PEARSON, cand), "corr.py", "exec"), space)
    low, ok = torch.zeros(3), torch.ones(3)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        space["corr"](low, ok, ok)
        space["corr"](ok, ok, ok)
    assert len(seen) == 1 and "close to zero" in str(seen[0].message)
    torch._dynamo.reset()
    out = torch.compile(space["corr"], backend="eager", fullgraph=True)(low + 1, ok, ok)
    assert torch.equal(out, ok / (low + 1).sqrt())


def test_a_warning_under_a_test_that_may_do_something_is_still_offered_to_the_proof():
    """Not safe (`self.check(...)` may change the module), so not `check --fix`'s: the block in
    eager only as work, which the proof accepts only where a shape case enters it."""
    src = PEARSON.replace("""(
        (var_x < bound).any()
        or (var_y < bound).any()
        or ~torch.isfinite(corr_xy).any()
    )""", "check(var_x).any()")
    f = Finding(rule="PTC201", path="pkg/corr.py", line=8, col=7, severity="warning",
                message="m", source=src.splitlines()[7].strip(), gb="GB0170")
    cands = fix_candidates(f, src)
    assert [(c.title, c.safe) for c in cands] == [("run the block in eager only: compiled code skips it", False)]
    assert cands[0].lines == ("    if not torch.compiler.is_compiling() and check(var_x).any():",)


LOGGED = """\
import torch
from torch import nn


class Logged(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        if x.shape[0] < 3:
            print("a small batch:", x.shape[0])
        return h
"""


@pytest.mark.torch
def test_a_print_guarded_in_eager_only_names_the_shape_cases_that_printed(tmp_path):
    """PTC105's guard of a print: safe, and verified; what a compiled run no longer prints is
    said with the shape case that printed in head's eager run."""
    raw = LOGGED.splitlines()[12]
    f = Finding(rule="PTC105", path="pkg/model.py", line=13, col=raw.index("print"), severity="warning",
                message="m", source=raw.strip())
    [cand] = [c for c in fix_candidates(f, LOGGED) if c.safe]
    root = write_repo(tmp_path / "repo", {"pkg/model.py": LOGGED},
                      one_model("logged", "pkg.model:Logged", "[{name: x, shape: [batch, 8]}]",
                                "{batch: [2, 3]}"))
    target = {"kind": "break", "model": "logged", "path": "pkg/model.py", "line": 13, "gb": "GB0059",
              "gb_type": "Unsupported builtin call"}
    verdicts = prove(root, "logged", [item("print", cand, LOGGED, target)], tmp_path / "work")
    assert verdicts["print"]["accepted"] is True, verdicts["print"]
    assert verdicts["print"]["evidence"].endswith(
        "but compiled code skips the `print` at line 13, which head's eager run reaches on shape "
        "case batch=2: a compiled run there no longer gives it"), verdicts["print"]


ZEROED = LOGGED.replace("        self.lin = nn.Linear(8, 8)\n", "        self.lin = nn.Linear(8, 8)\n"
                        "        nn.init.zeros_(self.lin.weight)\n        nn.init.zeros_(self.lin.bias)\n")


@pytest.mark.torch
def test_outputs_of_one_value_whatever_the_input_are_said_in_the_evidence(tmp_path):
    """torchhd's centroid classifier as built has every prototype 0, so every score is 0: the
    proof's "outputs equal on 2 shape cases" compared zeros with zeros, and said nothing of it."""
    raw = ZEROED.splitlines()[14]
    f = Finding(rule="PTC105", path="pkg/model.py", line=15, col=raw.index("print"), severity="warning",
                message="m", source=raw.strip())
    [cand] = [c for c in fix_candidates(f, ZEROED) if c.safe]
    root = write_repo(tmp_path / "repo", {"pkg/model.py": ZEROED},
                      one_model("logged", "pkg.model:Logged", "[{name: x, shape: [batch, 8]}]",
                                "{batch: [2, 3]}"))
    target = {"kind": "break", "model": "logged", "path": "pkg/model.py", "line": 15, "gb": "GB0059",
              "gb_type": "Unsupported builtin call"}
    verdicts = prove(root, "logged", [item("print", cand, ZEROED, target)], tmp_path / "work")
    assert verdicts["print"]["accepted"] is True, verdicts["print"]
    assert ("outputs equal on 2 shape cases (on every one head's outputs hold a single value "
            "throughout: equal outputs show little of the edit)") in verdicts["print"]["evidence"], \
        verdicts["print"]
