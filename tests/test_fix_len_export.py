"""`len(x)` of a tensor where torch.export keeps dim 0 dynamic (pt2bot/rules/size_specialised.py,
PTC307's recipe): non-strict export, the default, gets a Python int from `Tensor.__len__` and
fails with "specialized it to be a constant"; `x.shape[0]` exports. A new user's V-JEPA run was
told that the batch "cannot be dynamic" at `q = self.query_tokens.repeat(len(x), 1, 1)`. No rule
flags `len()` (most on real code pin no dynamic dim): the export target's stand-in offers the
recipe on its line, then the proof on real torch: verified where export now passes, refused
where the argument is not a tensor."""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.reportdata import ModelDelta
from proofs import item, prove, write_repo

POOL = """\
import torch
from torch import nn


class Pool(nn.Module):
    def __init__(self):
        super().__init__()
        self.query_tokens = nn.Parameter(torch.zeros(1, 2, 4))

    def forward(self, x, parts=None):
        q = self.query_tokens.repeat(len(x), 1, 1)
        return q + x[:, None, :]
"""
LINE = 11
assert POOL.splitlines()[LINE - 1].strip() == "q = self.query_tokens.repeat(len(x), 1, 1)"
CONFIG = """\
version: 1
models:
  - name: pool
    entry: pkg.pool:Pool
    inputs: [{name: x, shape: [batch, 4]}]
    shapes: {batch: [2, 3]}
    dynamic: [batch]
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _target(path: str = "pkg/pool.py") -> dict:
    return {"kind": "export", "model": "pool", "path": path, "line": LINE, "gb": None,
            "gb_type": "constraint_violation"}


# head's export failed in the review: the proof runs export too
FAILED = ModelDelta(name="pool", head={"export": {"ok": False, "kind": "constraint_violation"}})


def _offered(text: str) -> list:
    found = [c for f in break_findings(_target("m.py"), text, {}) for c in fix_candidates(f, text)]
    return list({(c.start_line, c.lines): c for c in found}.values())


def test_the_shape_advice_at_a_len_says_what_to_write():
    from pt2bot.report.shape_advice import dim_line
    pinned = {"static": True, "value": 2, "reason": "the code specialises batch to 2",
              "path": "src/models/attentive_pooler.py", "line": 97,
              "source": "q = self.query_tokens.repeat(len(x), 1, 1)"}
    assert dim_line("x", "0", pinned).endswith(
        "; if the `len()` there is of a tensor, it is a Python int to torch.export's default tracing: "
        "`.shape[0]` keeps the dim symbolic (PTC307)")
    assert "len()" not in dim_line("x", "0", {**pinned, "source": "q = x.view(4, -1)"})


def test_an_export_target_of_a_pinned_dim_gets_the_size_read_from_the_tensor():
    (c,) = _offered(POOL)
    assert (c.code, c.start_line, c.end_line, c.safe) == ("PTC307", LINE, LINE, False)
    assert c.lines == ("        q = self.query_tokens.repeat(x.shape[0], 1, 1)",)
    compile(apply_candidate(POOL, c), "m.py", "exec")
    # no `len(` on the line: no edit; a break target does not get the export recipe
    assert _offered(POOL.replace("repeat(len(x), 1, 1)", "repeat(2, 1, 1)")) == []
    assert [f for f in break_findings({**_target("m.py"), "kind": "break", "gb": "GB0170"}, POOL, {})
            if f.rule == "PTC307"] == []


@pytest.mark.torch
def test_the_loop_verifies_it_by_export_and_refuses_it_on_a_list(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/pool.py": POOL}, CONFIG)
    (c,) = [dataclasses.replace(c, path="pkg/pool.py") for c in _offered(POOL)]
    verdicts = prove(root, "pool", [item("shape", c, POOL, _target())], tmp_path / "work", delta=FAILED)
    assert verdicts["shape"]["accepted"] is True, verdicts["shape"]
    assert verdicts["shape"]["evidence"].startswith("exports, outputs equal on 2 shape cases"), verdicts["shape"]
    # the same line where the argument is a tuple of tensors: `.shape` of a tuple raises
    listed = POOL.replace("repeat(len(x), 1, 1)", "repeat(len(x.unbind(0)), 1, 1)")
    root = write_repo(tmp_path / "repo2", {"pkg/pool.py": listed}, CONFIG)
    (c,) = [dataclasses.replace(c, path="pkg/pool.py") for c in _offered(listed)]
    assert c.lines == ("        q = self.query_tokens.repeat(x.unbind(0).shape[0], 1, 1)",)
    verdicts = prove(root, "pool", [item("list", c, listed, _target())], tmp_path / "work2", delta=FAILED)
    assert verdicts["list"]["accepted"] is False, verdicts["list"]
    assert "AttributeError" in verdicts["list"]["reason"], verdicts["list"]
