"""A new recompile with no static finding on its line gets an inline comment (real torch).

The PR below is DINOv2's reverted interpolation in small: the output size handed to
`interpolate` as a float `scale_factor` made from the image's size, where base gave it as a
`size`. Dynamo guards on the float's value, so every new width compiles again, and torch
places the guard at the call's first line, a line of the diff's hunk that the PR did not
change. The review said "2 new recompiles · 0 inline comments": no comment anywhere on the
PR's lines, and no key for a verified fix of the recompile to be carried by.
"""
from __future__ import annotations

import json

import cmarkgfm
import pytest

pytestmark = pytest.mark.torch

BASE = '''\
import torch
import torch.nn.functional as F


class Resize(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.grid = torch.nn.Parameter(torch.randn(1, 2, 4, 4))

    def forward(self, x):
        w = x.shape[-1] // 4
        out = F.interpolate(
            self.grid,
            size=(w, w),
            mode="bilinear",
        )
        return out.mean() + x.mean()
'''
HEAD = BASE.replace("            size=(w, w),\n",
                    "            scale_factor=(float(w) / 4, float(w) / 4),\n")
CALL = 12   # `out = F.interpolate(`: where torch places the guard
CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: resize
    entry: pkg.resize:Resize
    inputs: [{name: x, shape: [2, width]}]
    shapes: {width: [16, 24, 32]}
    dynamic: [width]
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    from gitrepo import GitRepo

    assert HEAD != BASE
    repo = GitRepo.init(tmp_path_factory.mktemp("recompile") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/resize.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/resize.py", HEAD)
    repo.commit("pr: a scale factor")
    out = tmp_path_factory.mktemp("out") / "report"
    rc = repo.review(out)
    return rc, {name: json.loads((out / name).read_text(encoding="utf-8"))
                for name in ("report.json", "review.json")}


def test_the_new_recompile_is_commented_on_the_line_of_its_guard(reviewed):
    rc, files = reviewed
    report, review = files["report.json"], files["review.json"]
    [m] = report["models"]
    assert m["delta"]["new_recompiles"] >= 1
    lines = {(r["path"], r["line"]) for c in m["delta"]["recompile_cases"] for r in c["reasons"]}
    assert lines == {("pkg/resize.py", CALL)}
    # the static rules say nothing there: the comment is the run's own
    assert not [f for f in report["findings"] if f.get("line") == CALL]
    [c] = [c for c in review["comments"] if c["line"] == CALL]
    assert c["path"] == "pkg/resize.py" and c["start_line"] is None and c["side"] == "RIGHT"
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert html.startswith("<p>❌ <strong>New recompile</strong>: a guard dynamo added for this line")
    assert "model <code>resize</code>, shape case" in html and "<code>width=24</code>" in html
    assert "sym_float" in html
    # (the base's own form, which recompiles no more: the test's base)
    assert "an output <code>size=</code> rather than a float <code>scale_factor</code>" in html
    assert rc == 1 and "· 0 inline comments" not in review["body"]
