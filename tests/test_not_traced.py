"""Changed code a model ran only eagerly, in a frame dynamo gave up on: report.json's
`not_traced` and the summary's section, from a real review (real git repository, real smoke
workers on a tiny CPU model). A new user's norse model had a library's break inside its step
loop, so dynamo skipped the whole `forward`; the PR's own break in that loop was never traced,
and the review said nothing of the lines it had not seen."""
from __future__ import annotations

import os

import cmarkgfm
import pytest

from gitrepo import GitRepo
from test_not_run import _review

CONFIG = """\
version: 1
models:
  - name: stepper
    entry: pkg.model:Stepper
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""

BASE = """\
import torch
from torch import nn


def log(msg):
    print(msg)


class Stepper(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        for t in range(3):
            x = self.lin(x)
            log("step")     # a break inside the loop: dynamo skips the whole frame
        return x
"""

HEAD = BASE.replace('''            log("step")     # a break inside the loop: dynamo skips the whole frame
''', '''            log("step")     # a break inside the loop: dynamo skips the whole frame
            if t >= 1 and not x.any():
                break
''')
LINE = {text.strip(): n for n, text in enumerate(HEAD.splitlines(), 1)}


@pytest.mark.torch
def test_changed_lines_in_a_frame_dynamo_skipped_are_said(tmp_path):
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/model.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/model.py", HEAD)
    repo.commit("pr")
    out = str(tmp_path / "report")
    report = _review(repo, out)
    first = LINE["if t >= 1 and not x.any():"]
    (item,) = report["not_traced"]
    # (the `break` never ran: that line is "run by no configured model" instead)
    assert item["path"] == "pkg/model.py" and item["lines"] == [first]
    assert report["not_run"] == [{"path": "pkg/model.py", "lines": [first + 1],
                                  "branches": [{"line": first, "lines": [first + 1]}]}]
    assert (item["model"], item["function"], item["line"]) == ("stepper", "forward", LINE["def forward(self, x):"])
    assert item["reason"].startswith("graph break in a loop, the whole frame skipped")
    # dynamo never ran the PR's branch, so the smoke run claims no new break for it: only the
    # static rule, which reads the code, says it breaks
    (model,) = report["models"]
    assert model["new_breaks"] == []
    assert [r["code"] for r in report["reasons"] if r["level"] == "failure"] == ["static_findings"]
    from pt2bot.report.jsonreport import validation_errors
    assert validation_errors(report) == []
    with open(os.path.join(out, "summary.md"), encoding="utf-8") as fh:
        html = cmarkgfm.github_flavored_markdown_to_html(fh.read())
    assert "Changed code the compiler did not see" in html
    assert (f"<code>stepper</code> ran <code>pkg/model.py</code> line {first} only "
            f"eagerly: dynamo gave up on <code>forward</code> (<code>pkg/model.py:"
            f"{LINE['def forward(self, x):']}</code>): graph break in a loop") in html


CROPS_BASE = """\
import torch
from torch import nn


class Crops(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin(x)
        idx = torch.cumsum(torch.tensor([1, x.shape[0] - 1]), 0)
        start, out = 0, x[:0]
        for end in idx:
            part = x[start:end]     # a tensor bound: dynamo cannot resume inside this loop
            out = torch.cat((out, part))
            start = end
        return out
"""
CROPS_HEAD = CROPS_BASE.replace('''            out = torch.cat((out, part))
''', '''            part = part / part.norm(dim=-1, keepdim=True)
            out = torch.cat((out, part))
''')
CROPS_LINE = {text.strip(): n for n, text in enumerate(CROPS_HEAD.splitlines(), 1)}


@pytest.mark.torch
def test_changed_lines_after_a_break_dynamo_cannot_resume_from_are_said(tmp_path):
    """DINO's multi-crop wrapper: a break at the first line of a `for` over a tensor is one
    dynamo cannot resume from; it compiles what came before and runs the rest of `forward`
    eagerly. The PR's lines after it were never traced, and the review said "No regressions"
    with no word of them."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG.replace("pkg.model:Stepper", "pkg.model:Crops"))
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/model.py", CROPS_BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/model.py", CROPS_HEAD)
    repo.commit("pr")
    report = _review(repo, str(tmp_path / "report"))
    added = CROPS_LINE["part = part / part.norm(dim=-1, keepdim=True)"]
    (item,) = report["not_traced"]
    assert (item["path"], item["lines"], item["function"]) == ("pkg/model.py", [added], "forward")
    assert item["line"] == CROPS_LINE["part = x[start:end]     # a tensor bound: dynamo cannot resume inside this loop"]
    assert item["reason"].startswith("a graph break it cannot resume from (GB"), item
    assert item["reason"].endswith("so the rest of the function ran eagerly"), item
