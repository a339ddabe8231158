"""A candidate refused against head because of another new problem that a verified candidate
fixes is proven again on head with that fix written in (pt2bot/fixes.py `_prove_after`). The
trial on vit-pytorch, in small: a PR adds a `.item()` scale and, below it, an `assert` whose
message is formatted. Its kept check was refused for "a new recompile on shape case batch=2
(in `forward`: a guard other than a size failed)" and verified only with the `.item()` fix
applied first. That recompile was the shape matrix's own retry (the batch marked dynamic,
specialised in the frame resumed after the break, the case run again with it marked weakly: the
frame compiled before fails "_dynamo_weak_dynamic_indices should be absent"), not the check's:
the matrix no longer counts it, and the check is verified on head as the PR has it. The
second proof is still tried for what a first proof refused for what compiles around it
(tests/test_fix_interactions.py judges its verdicts)."""
from __future__ import annotations

import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, _prove_targets, decide
from pt2bot.reportdata import Report
from pt2bot.results import ResultsFile
from pt2bot.static import check_paths

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.cls = nn.Parameter(torch.randn(1, 8))

    def forward(self, x):
        batch = x.shape[0]
        scale = x.abs().amax().item()
        x = x / (scale + 1e-6)
        h = self.lin(x)
        assert torch.isfinite(h).all(), f"non-finite activations in {self.__class__.__name__}"
        return torch.cat((self.cls.expand(batch, -1), h), dim=1)
"""
ITEM, ASSERT = 13, 16
CONFIG = """\
version: 1
models:
  - name: net
    entry: pkg.net:Net
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _target(line: int, gb: str) -> dict:
    return {"kind": "break", "model": "net", "path": "pkg/net.py", "line": line, "gb": gb,
            "gb_type": "x", "fingerprint": f"net{line:04d}" * 2}


@pytest.mark.torch
def test_the_kept_check_is_verified_on_head_as_the_pr_has_it(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    findings = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    targets = [_target(ITEM, "GB0124"), _target(ASSERT, "GB0170")]
    proposals, why, _budget = _prove_targets(s, targets, findings, {"net"}, {}, time.monotonic())
    fixes = decide(Report(head="h" * 40, base="b" * 40, findings=tuple(findings)), targets,
                   proposals, why, config, 0.0).fixes
    by_line = {c["start_line"]: c for c in fixes["candidates"] if c["verified"]}
    assert set(by_line) == {ITEM, ASSERT}, fixes
    # each on head alone: on the old matrix the check was refused for the retry's recompile
    assert not any("applied first" in c["evidence"] for c in by_line.values()), fixes
    assert by_line[ASSERT]["evidence"].startswith("verified on `net`: GB0170 gone, 2 graphs instead of 3")
    # the suggestion itself is head's lines, as the PR has them
    assert by_line[ASSERT]["lines"][0] == "        if torch.compiler.is_compiling():"


def test_the_copy_reads_nothing_outside_the_head_tree(tmp_path):
    """The tree is the PR's, and its code has run: a directory git tracks that was swapped for
    a link to somewhere else is not followed, and neither is a linked file."""
    import os
    import subprocess

    from pt2bot.fixes import _copy_tree

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.py").write_text("SECRET = 1\n")
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "a" / "x.py").write_text("x = 1\n")
    (root / "b.py").write_text("b = 1\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "."], check=True)
    (root / "a" / "x.py").unlink()
    (root / "a").rmdir()
    os.symlink(outside, root / "a")
    os.symlink(outside / "x.py", root / "c.py")
    dest = tmp_path / "copy"
    assert _copy_tree(str(root), str(dest)) is True
    assert (dest / "b.py").read_text() == "b = 1\n"
    assert not (dest / "a" / "x.py").exists() and not (dest / "c.py").exists()
