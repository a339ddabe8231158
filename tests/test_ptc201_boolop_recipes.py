"""PTC201's `torch.where` / `torch.cond` recipes for a test made of `and` / `or` / `not`
(pt2bot/rules/branch_fixes.py `_where_test`): torchdiffeq's `if d0 < 1e-5 or d1 < 1e-5:`
becomes `torch.where((d0 < 1e-5) | (d1 < 1e-5), ...)`. One part of each `and` / `or` surely a
tensor is enough (the finding's own, where a stand-in finding knows no more); a bare name,
`not` of a part not known to be a tensor, or `is` stay without an edit; an `and` whose other
parts are Python tests keeps them as an `if` around the edit. Last, a real proof: the `or`
form is verified on a tiny model, the same edit with `&` is refused."""
from __future__ import annotations

import textwrap
import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.findings import Finding
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths
from proofs import one_model

WHERE = "select with `torch.where` instead of branching"
COND = "branch inside the graph with `torch.cond`"
STANDS_IN = "; 1 stands in for `{}` where the test holds, so that the division computed there and not selected is defined"

STEP = """\
import torch


class Step(torch.nn.Module):
    def forward(self, y0, f0, flag):
        d0 = torch.linalg.norm(y0)
        d1 = torch.linalg.norm(f0)
        if TEST:
            h0 = torch.tensor(1e-6)
        else:
            h0 = 0.01 * d0 / d1
        return h0
"""
IF = 8   # the `if`'s line


def _findings(tmp_path, src: str) -> list[Finding]:
    (tmp_path / "m.py").write_text(src)
    found = check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
    return [f for f in found if f.rule == "PTC201"]


def _selections(tmp_path, test: str) -> tuple[str, list[tuple[str, tuple[str, ...]]]]:
    """The `torch.where` / `torch.cond` candidates for STEP with `test` (each finding's)."""
    src = STEP.replace("TEST", test)
    out = []
    for f in _findings(tmp_path, src):
        assert f.line == IF, f
        for c in fix_candidates(f, src):
            compile(apply_candidate(src, c), "m.py", "exec")
            if c.title.split(";")[0] in (WHERE, COND):
                out.append((c.title, c.lines))
    return src, out


def _stand_in(src: str, line: int, part: str) -> Finding:
    """A finding where no rule flagged the line (pt2bot/fixes.py `break_findings`): at the
    column where `part` starts, all it knows is that something there is a tensor."""
    raw = src.splitlines()[line - 1]
    return Finding(rule="PTC201", path="m.py", line=line, col=raw.index(part), severity="warning",
                   message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")


def test_or_of_comparisons_is_a_bitwise_or(tmp_path):
    _src, got = _selections(tmp_path, "d0 < 1e-5 or d1 < 1e-5")
    # (the division `torch.where` computes where the test holds reads 1 for `d1`, which may be 0 there)
    assert got == [
        (WHERE + STANDS_IN.format("d1"),
         ("        safe_d1 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.ones_like(d1), d1)",
          "        h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6), 0.01 * d0 / safe_d1)")),
        (COND, ("        h0 = torch.cond((d0 < 1e-5) | (d1 < 1e-5), lambda: torch.tensor(1e-6), "
                "lambda: 0.01 * d0 / d1, ())",))]


def test_and_of_comparisons_is_a_bitwise_and(tmp_path):
    _src, got = _selections(tmp_path, "d1 <= 1e-15 and d0 <= 1e-15")
    assert got[0] == (WHERE + STANDS_IN.format("d1"), (
        "        safe_d1 = torch.where((d1 <= 1e-15) & (d0 <= 1e-15), torch.ones_like(d1), d1)",
        "        h0 = torch.where((d1 <= 1e-15) & (d0 <= 1e-15), torch.tensor(1e-6), 0.01 * d0 / safe_d1)"))


def test_not_of_a_tensor_test_is_logical_not(tmp_path):
    _src, got = _selections(tmp_path, "not (d0.isnan().any() or d1 < 1e-5)")
    assert got[0] == (WHERE, ("        h0 = torch.where(torch.logical_not(d0.isnan().any() | (d1 < 1e-5)), "
                              "torch.tensor(1e-6), 0.01 * d0 / d1)",))


def test_a_chained_comparison_is_the_and_of_its_pairs(tmp_path):
    """`0 < d1 < 1` is `0 < d1 and d1 < 1`: `&` of the pairs, each a Python bool or a bool
    tensor; the middle name is read twice, which changes nothing."""
    _src, got = _selections(tmp_path, "d0 < 1e-5 or 0 < d1 < 1")
    assert got[0] == (WHERE, ("        h0 = torch.where((d0 < 1e-5) | ((0 < d1) & (d1 < 1)), torch.tensor(1e-6), "
                              "0.01 * d0 / d1)",))


@pytest.mark.parametrize("test", [
    "flag and d0 < 1e-5",            # a bare name may be a Python bool
    "d0 < 1e-5 or flag",
    "d0 < 1e-5 or not d1 < 1e-5",    # torch.logical_not of a Python bool fails
    "d0 < 1e-5 or d1 is None",       # `is` has no tensor form
    "d0 < 1e-5 or 0 < d1.sum() < 1",  # nor a chained comparison that would call twice
])
def test_a_part_with_no_tensor_form_gets_no_selection(tmp_path, test):
    src, got = _selections(tmp_path, test)
    assert got == []
    assert [c for c in fix_candidates(_stand_in(src, IF, "d0"), src) if c.title in (WHERE, COND)] == []


def test_a_stand_in_finding_knows_one_part_and_that_is_enough(tmp_path):
    """No rule can tell that the parameters are tensors; dynamo's break on the line brings one
    finding a column. Whichever part it stands on, the edit is the same."""
    src = textwrap.dedent("""\
        import torch


        def initial_step(d0, d1, dtype, device):
            if d0 < 1e-5 or d1 < 1e-5:
                return torch.tensor(1e-6, dtype=dtype, device=device)
            return 0.01 * d0 / d1
        """)
    assert _findings(tmp_path, src) == []
    want = ("    safe_d1 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.ones_like(d1), d1)",
            "    return torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6, dtype=dtype, device=device), "
            "0.01 * d0 / safe_d1)")
    for part in ("d0", "d1"):
        cands = fix_candidates(_stand_in(src, 5, part), src)
        assert [c.lines for c in cands if c.title == WHERE + STANDS_IN.format("d1")] == [want], part


def test_a_conditional_expression_with_or(tmp_path):
    src = STEP.replace("TEST", "d0 > 0").replace(
        "        return h0\n", "        return h0 * 2 if d0 < 1e-5 or d1 < 1e-5 else h0\n")
    (f,) = [f for f in _findings(tmp_path, src) if f.line == IF + 4]
    (c,) = fix_candidates(f, src)
    assert c.lines == ("        return torch.where((d0 < 1e-5) | (d1 < 1e-5), h0 * 2, h0)",)


PY_PART = """\
import torch


class Step(torch.nn.Module):
    def forward(self, y0, f0, mode: str):
        d0 = torch.linalg.norm(y0)
        d1 = torch.linalg.norm(f0)
        h0 = 0.01 * d0 / d1
        if mode == "fast" and (d0 < 1e-5 or d1 < 1e-5):
            h0 = torch.tensor(1e-6)
        return h0
"""


def test_the_python_part_of_an_and_stays_an_if_around_the_translated_test(tmp_path):
    (f,) = _findings(tmp_path, PY_PART)
    cands = fix_candidates(f, PY_PART)
    selections = [c.lines for c in cands if c.title.startswith((WHERE, COND))]
    # only the form that keeps the string comparison in Python, not `(mode == "fast") & ...`
    assert selections == [
        ('        if mode == "fast":', "            h0 = torch.where((d0 < 1e-5) | (d1 < 1e-5), torch.tensor(1e-6), h0)"),
        ('        if mode == "fast":',
         "            h0 = torch.cond((d0 < 1e-5) | (d1 < 1e-5), lambda: torch.tensor(1e-6), lambda: h0.clone(), ())")]
    # with an `else` the Python part cannot stay an `if` around one edit: the whole test is
    # translated, the string comparison a Python bool `&` a bool tensor
    src = PY_PART.replace("            h0 = torch.tensor(1e-6)\n",
                          "            h0 = torch.tensor(1e-6)\n        else:\n            h0 = h0 * 2\n")
    (f,) = _findings(tmp_path, src)
    where = [c.lines for c in fix_candidates(f, src) if c.title == WHERE]
    assert where == [('        h0 = torch.where((mode == "fast") & ((d0 < 1e-5) | (d1 < 1e-5)), '
                      'torch.tensor(1e-6), h0 * 2)',)]


# --------------------------------------------------------------------------- the proof

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        d0 = h.abs().mean()
        d1 = x.abs().mean()
        if d0 < 1e-5 or d1 > 0.1:
            s = torch.ones(())
        else:
            s = 0.01 * d0 / d1
        return h * s
"""
BRANCH = 14

CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 4]}")


@pytest.mark.torch
def test_the_or_form_is_verified_and_the_and_form_refused(tmp_path):
    """`d1 > 0.1` holds on the model's random inputs and `d0 < 1e-5` does not, so head takes
    the branch through the `or`'s second part, which the rule did not find to be a tensor.
    The recipe's `|` keeps that; the same edit with `&` selects the other side and differs."""
    pytest.importorskip("torch")
    from pt2bot.configfile.schema import build_config
    from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
    from pt2bot.results import ResultsFile

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    (finding,) = [f for f in found if f.rule == "PTC201"]
    assert finding.line == BRANCH
    where = next(c for c in fix_candidates(finding, NET) if c.title == WHERE)
    assert where.lines == ("        s = torch.where((d0 < 1e-5) | (d1 > 0.1), torch.ones(()), 0.01 * d0 / d1)",)
    wrong = where.__class__(**{**where.__dict__, "lines": (where.lines[0].replace(" | ", " & "),)})
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": BRANCH, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    items = [(Proposal(cid=cid, cand=c, original=NET, patched=apply_candidate(NET, c), findings=[],
                       targets=[]), [target])
             for cid, c in (("wrong", wrong), ("where", where))]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("outputs differ from head's"), verdicts["wrong"]
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert verdicts["where"]["evidence"].startswith("GB0170 gone"), verdicts["where"]


def test_a_bare_name_dynamo_broke_on_is_taken_as_the_condition(tmp_path):
    """`if accept:` where `accept = err <= 1` came from a helper the rules cannot type: no
    finding, but dynamo's break on the `if` says the name is a tensor; the stand-in finding
    on it gets the selection. A finding elsewhere on the line (none here) would not."""
    src = STEP.replace("        if TEST:", "        accept = flag\n        if accept:")
    line = IF + 1
    got = [(c.title, c.lines) for c in fix_candidates(_stand_in(src, line, "accept:"), src)
           if c.title in (WHERE, COND)]
    assert got[0] == (WHERE, ("        h0 = torch.where(accept, torch.tensor(1e-6), 0.01 * d0 / d1)",))
    assert [f for f in _findings(tmp_path, src) if f.line == line] == []


def test_no_edit_where_a_later_part_would_run_where_and_or_never_ran_it(tmp_path):
    """`&`/`|` evaluate every part: `flag < 3 and f0[0].sum() > 0` would index `f0` where
    `and` stopped at `flag < 3`, so it is refused; two comparisons of names are not."""
    _src, got = _selections(tmp_path, "flag < 3 and f0[0].sum() > 0")
    assert got == []
    _src, got = _selections(tmp_path, "d0 < 1e-5 or d1 < flag")
    assert got and got[0][0] == WHERE
