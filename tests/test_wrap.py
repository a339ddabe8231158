"""A candidate's new lines fit to the repository's line length (pt2bot/rules/wrap.py): read
from the configuration the repository's own lint uses, split as black splits a line, and only
where the split lines parse to the same tree. ESM's verified NaN guard was one line of 126
characters in a repository whose black and flake8 allow 99."""
from __future__ import annotations

import ast
import textwrap
import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, gather, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules.base import Candidate
from pt2bot.rules.wrap import fit_candidate, fit_lines, repo_line_length
from pt2bot.static import check_paths
from pt2bot.config import StaticConfig

ESM = ("        x = torch.where(torch.isnan(x).any() | torch.isinf(x).any(), "
       "torch.nan_to_num(x, nan=0.0, posinf=1e4, neginf=-1e4), x)")


def tree(lines) -> str:
    return ast.dump(ast.parse(textwrap.dedent("\n".join(lines))))


@pytest.mark.parametrize("name,text,want", [
    ("pyproject.toml", "[tool.black]\nline-length = 99\n", 99),
    ("pyproject.toml", "[tool.ruff]\nline-length = 120  # wide\n[tool.isort]\nline_length = 70\n", 120),
    ("pyproject.toml", "[project]\nname = 'x'\nline-length = 70\n", None),   # not a formatter's key
    ("ruff.toml", "line-length = 100\n", 100),
    ("setup.cfg", "[flake8]\nmax-line-length = 99\n", 99),
    (".flake8", "[flake8]\nmax_line_length: 110\n", 110),
    ("tox.ini", "[pycodestyle]\nmax-line-length=79\n", 79),
    ("setup.cfg", "[metadata]\nname = x\n", None),
])
def test_the_line_length_is_the_one_the_repository_configures(tmp_path, name, text, want):
    (tmp_path / name).write_text(text)
    assert repo_line_length(str(tmp_path)) == want


def test_the_shortest_configured_length_wins_and_none_is_none(tmp_path):
    assert repo_line_length(str(tmp_path)) is None
    (tmp_path / "pyproject.toml").write_text('[tool.black]\nline-length = 99\n')
    (tmp_path / ".flake8").write_text("[flake8]\nmax-line-length = 88\n")
    assert repo_line_length(str(tmp_path)) == 88


def test_a_long_line_is_split_as_black_splits_it_into_the_same_tree():
    got = fit_lines((ESM,), 99)
    assert got == (
        "        x = torch.where(",
        "            torch.isnan(x).any() | torch.isinf(x).any(),",
        "            torch.nan_to_num(x, nan=0.0, posinf=1e4, neginf=-1e4),",
        "            x,",
        "        )",
    )
    assert tree(got) == tree((ESM,))
    # narrower: the item still too long is split in turn
    narrow = fit_lines((ESM,), 50)
    assert all(len(x) <= 50 for x in narrow) and tree(narrow) == tree((ESM,))
    assert "                x," in narrow


def test_what_cannot_be_split_into_the_same_tree_is_left_alone():
    # a comment would move; one subscript item would become a tuple with a trailing comma
    commented = ("    y = f(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb)  # why",)
    assert fit_lines(commented, 50) == commented
    one = "    y = x[" + "m" * 60 + "]"
    assert fit_lines((one,), 50) == (one,)
    short = ("    y = f(a, b)",)
    assert fit_lines(short, 50) == short
    assert fit_lines((ESM,), None) == (ESM,)


def test_the_authors_own_lines_are_not_reformatted():
    """An edit that nests the author's line (a print guarded for eager) leaves it as written."""
    own = "    print('hidden states are', x.shape, x.dtype, x.device, x.requires_grad, x.is_leaf)"
    cand = Candidate(code="PTC105", path="m.py", start_line=2, end_line=2, safe=True, title="guard",
                     lines=("    if not torch.compiler.is_compiling():", "    " + own))
    src = "def f(x):\n" + own + "\n"
    assert fit_candidate(cand, src, 60) is cand


NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, hidden):
        hidden = self.lin(hidden)
        if torch.isnan(hidden).any() or torch.isinf(hidden).any():
            hidden = torch.nan_to_num(hidden, nan=0.0, posinf=1e4, neginf=-1e4)
        return hidden.relu()
"""

CONFIG = """\
version: 1
models:
  - name: net
    entry: pkg.net:Net
    inputs: [{name: hidden, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


@pytest.mark.torch
def test_the_split_suggestion_is_the_one_the_proof_verifies(tmp_path):
    """gather splits the recipe's `torch.where` line to the repository's 79; the proof runs that
    text and accepts it, so what is posted is what was verified."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "setup.cfg").write_text("[flake8]\nmax-line-length = 79\n")
    findings = [f for f in check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
                if f.rule == "PTC201"]
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": 12, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    proposals, _why = gather([target], findings, str(root), None)
    where = next(p for p in proposals if "torch.where" in p.cand.title)
    assert len(where.cand.lines) > 1 and all(len(x) <= 79 for x in where.cand.lines)
    assert (where.cand.start_line, where.cand.end_line) == (12, 13)
    assert where.patched.splitlines()[11:11 + len(where.cand.lines)] == list(where.cand.lines)
    where.cid = "c0"
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(s, config.model("net"), None, [(where, [target])], str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["c0"]["accepted"], verdicts["c0"]
