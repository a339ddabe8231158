"""Changed code that no configured model ran: report.json's `not_run` and the summary's note,
from a real review (real git repository, real smoke workers on a tiny CPU model), and the
statement lines that count as code (pt2bot/changes.py `code_spans`)."""
from __future__ import annotations

import json
import os
import textwrap

import pytest

from gitrepo import GitRepo
from pt2bot.changes import code_spans

CONFIG = """\
version: 1
models:
  - name: tiny
    entry: pkg.model:Tiny
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""

BASE = """\
import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)
"""

HEAD = '''\
import torch
from torch import nn

SCALE = 2      # module level: it runs at import, which no model call records


def unused(x):
    """A helper nothing calls."""
    return x + 1


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        # a comment is no code
        x = x * 1.0
        if self.training:
            x = x + torch.randn_like(x)
        return self.lin(
            x)
'''
LINE = {text.strip(): n for n, text in enumerate(HEAD.splitlines(), 1)}


@pytest.fixture(scope="module")
def pr_repo(tmp_path_factory) -> GitRepo:
    repo = GitRepo.init(tmp_path_factory.mktemp("notrun") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/model.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/model.py", HEAD)
    repo.write("tests/test_model.py", "def test_tiny():\n    assert 1 + 1 == 2\n")
    repo.commit("pr")
    return repo


def _review(repo: GitRepo, out: str, *extra: str) -> dict:
    repo.review(out, *extra)
    with open(os.path.join(out, "report.json"), encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.torch
def test_changed_lines_no_model_ran_are_listed_and_said(pr_repo, tmp_path):
    out = str(tmp_path / "report")
    report = _review(pr_repo, out)
    # the training branch and the helper's body: code the PR added that `tiny` never ran
    # (its eval-mode forward ran the rest); not the module-level line, the comment, the
    # docstring, nor the test file
    # (and the training line is a branch of an `if` that ran: the input the matrix lacks, a
    # new user's NaN-imputing line and a clamp above a bound, is one that takes it)
    noise, test = LINE["x = x + torch.randn_like(x)"], LINE["if self.training:"]
    assert report["not_run"] == [{"path": "pkg/model.py", "lines": [LINE["return x + 1"], noise],
                                  "branches": [{"line": test, "lines": [noise]}]}]
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    assert (f"2 changed lines in these files were run by no configured model: "
            f"`pkg/model.py` (lines {LINE['return x + 1']}, {noise}; {noise} in a branch of the "
            f"`if` at line {test} that no shape case took)") in summary
    from pt2bot.report.jsonreport import load_schema, validation_errors

    assert validation_errors(report) == [] and "not_run" in load_schema()["properties"]


@pytest.mark.torch
def test_without_a_smoke_run_nothing_is_said(pr_repo, tmp_path):
    out = str(tmp_path / "report")
    report = _review(pr_repo, out, "--no-smoke")
    assert "not_run" not in report
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        assert "run by no configured model" not in fh.read()


SKIP_BASE = """\
import torch
from torch import nn

HAS_EXT = False     # an optional extension, absent here
DEBUG = False


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.kind = "ext"

    def forward(self, x):
        if HAS_EXT and self.kind == "ext":
            x = x * 2
        y = x if self.lin.in_features == 8 else x.flip(0)
        note = DEBUG and print(x.shape)
        return self.lin(y)
"""
# a rename on the extension's path (S4 shipped `self.kernel` after renaming it, an
# AttributeError only with pykeops installed), an arm no call takes, and a changed guard
# whose skipped operand the PR did not touch
SKIP_HEAD = (SKIP_BASE.replace('self.kind == "ext"', 'self.kernel == "ext"')
             .replace("x.flip(0)", "x.flip(1)")
             .replace("DEBUG = False", "DEBUG = False\nVERBOSE = False")
             .replace("note = DEBUG and", "note = VERBOSE and"))
SKIP_LINE = {text.strip(): n for n, text in enumerate(SKIP_HEAD.splitlines(), 1)}


@pytest.mark.torch
def test_a_changed_operand_no_call_evaluated_is_said_though_its_line_ran(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/model.py", SKIP_BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/model.py", SKIP_HEAD)
    repo.commit("pr")
    out = str(tmp_path / "report")
    report = _review(repo, out)
    first = SKIP_LINE['if HAS_EXT and self.kernel == "ext":']
    arm = SKIP_LINE["y = x if self.lin.in_features == 8 else x.flip(1)"]
    # every changed line ran; what changed on two of them never did (the module-level VERBOSE
    # is no call's code, and `print(x.shape)` after the changed guard is not what changed)
    assert report["not_run"] == [{"path": "pkg/model.py", "lines": [], "unevaluated": [
        {"line": first, "code": 'self.kernel == "ext"', "guard": "HAS_EXT", "kind": "and"},
        {"line": arm, "code": "x.flip(1)", "guard": "self.lin.in_features == 8", "kind": "else"}]}]
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        summary = fh.read()
    assert ("These changed lines ran, but the changed part of each was evaluated by no "
            "configured model on any call:\n"
            f"- `pkg/model.py:{first}`: `self.kernel == \"ext\"` after `HAS_EXT and`, which was "
            f"false on every call\n"
            f"- `pkg/model.py:{arm}`: `x.flip(1)` (the value when `self.lin.in_features == 8` is "
            "false, which it never was)") in summary
    assert "run by no configured model" not in summary
    from pt2bot.report.jsonreport import validation_errors

    assert validation_errors(report) == []


def test_code_spans_are_the_statements_a_call_can_execute():
    src = textwrap.dedent('''\
        import os
        X = 1


        def f(a,
              b):
            """doc"""
            y = g(a,
                  b)
            # comment
            if y:
                pass
            try:
                z = 1
            except ValueError:
                z = 2
            global Q
            for v in y:
                # a comment above the body is no part of the header
                z = v
            return [v for v in
                    y]


        class C:
            k = 3

            def m(self):
                return 1
        ''')
    # (first, last) line of each statement inside a function, compound ones by their header;
    # not the `def` lines, imports, module or class-level statements, docstrings, `pass`,
    # `try:`, `except ...:` or `global`
    assert code_spans(src) == [(8, 9), (11, 11), (14, 14), (16, 16), (18, 18), (20, 20), (21, 22), (29, 29)]
    assert code_spans("def broken(:\n") == []


def test_a_statement_is_mapped_to_the_if_whose_branch_holds_it_directly():
    from pt2bot.changes import branch_of

    src = textwrap.dedent('''\
        def f(x, n):
            if x.isnan().any():
                x = x.nan_to_num()
            elif n:
                x = x + 1
            else:
                for i in range(n):
                    x = x * i
            return x
        ''')
    assert branch_of(src) == {3: 2, 4: 2, 5: 4, 7: 4}
    assert branch_of("def f(:\n") == {}
