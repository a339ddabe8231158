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
