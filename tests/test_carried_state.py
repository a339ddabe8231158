"""Recompiles on state a call leaves on the module (real torch, pt2bot/smoke/matrix.py
`_carried_pass`).

Every compared call of the shape matrix starts from the model as built, so that eager and
compiled outputs (and head and a candidate) are compared from one state. ESM-2's rotary
embedding caches its tables by the last sequence length (`self._seq_len_cached = seq_len`);
dynamo guards on that number, and a user's process that calls the compiled model again
compiles `forward` once more for every new length, up to the recompile limit. With each call
starting from the built cache, the matrix saw none: a new user's review of a PR that made this
cache the model's only compile problem said "recompiles 2 → 0" and "No regressions". The cases
now run once more in order, each call keeping what the one before left.
"""
from __future__ import annotations

import json

import cmarkgfm
import pytest

pytestmark = pytest.mark.torch

BASE = '''\
import torch
from torch import nn


class Rot(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        pos = torch.arange(x.shape[1]).float()
        return self.lin(x) * pos[None, :, None]
'''
HEAD = BASE.replace('''        self.lin = nn.Linear(8, 8)
''', '''        self.lin = nn.Linear(8, 8)
        self._seq_len_cached = None
        self._pos = None
''').replace('''        pos = torch.arange(x.shape[1]).float()
        return self.lin(x) * pos[None, :, None]
''', '''        if x.shape[1] != self._seq_len_cached:
            self._seq_len_cached = x.shape[1]
            self._pos = torch.arange(x.shape[1]).float()
        return self.lin(x) * self._pos[None, :, None]
''')
TEST = 13   # `if x.shape[1] != self._seq_len_cached:`, where dynamo places the guard
CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: rot
    entry: pkg.rot:Rot
    inputs: [{name: x, shape: [2, seq, 8]}]
    shapes: {seq: [4, 8, 12]}
    dynamic: [seq]
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    from gitrepo import GitRepo

    assert HEAD.splitlines()[TEST - 1].strip() == "if x.shape[1] != self._seq_len_cached:"
    repo = GitRepo.init(tmp_path_factory.mktemp("carried") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/rot.py", BASE)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/rot.py", HEAD)
    repo.commit("pr: cache the positions by length")
    out = tmp_path_factory.mktemp("out") / "report"
    rc = repo.review(out)
    files = {name: json.loads((out / name).read_text(encoding="utf-8"))
             for name in ("report.json", "review.json", "head.json")}
    return rc, files, (out / "summary.md").read_text(encoding="utf-8")


def test_a_cache_of_the_last_length_recompiles_for_every_new_one(reviewed):
    rc, files, summary = reviewed
    [run] = files["head.json"]["models"]
    # seq 4 from the built cache (compiled), then 8 after 4, 12 after 8: one compile each
    guards = [[r["guard"] for r in c["reasons"]] for c in run["recompiles"]["cases"]]
    assert guards == [[], ["self._seq_len_cached is None"], ["self._seq_len_cached == 4"]], guards
    assert all(r["carried"] is True and r["line"] == TEST
               for c in run["recompiles"]["cases"] for r in c["reasons"])
    # and where the code writes that state: the line to change
    assert {tuple(r["stored_at"].values()) for c in run["recompiles"]["cases"] for r in c["reasons"]} == \
        {("pkg/rot.py", TEST + 1, "self._seq_len_cached = x.shape[1]")}
    assert run["recompiles"]["count"] == 2
    [m] = files["report.json"]["models"]
    assert m["delta"]["new_recompiles"] == 2 and rc == 1
    html = cmarkgfm.github_flavored_markdown_to_html(summary)
    assert ("guard <code>self._seq_len_cached == 4</code> at <code>pkg/rot.py:13</code>: "
            "<code>if x.shape[1] != self._seq_len_cached:</code> — on state a call left on the "
            "module for the next (a cache keyed by a size, a counter): a process calling the model "
            "again compiles the frame again whenever a call leaves another value there, up to the "
            "recompile limit; written at <code>pkg/rot.py:14</code>: "
            "<code>self._seq_len_cached = x.shape[1]</code>") in html, html
    # and the inline comment on the line of the guard, which says what kind of guard it is
    [c] = [c for c in files["review.json"]["comments"] if c["line"] == TEST]
    assert "New recompile" in c["body"]
    assert ("💡 The guard holds state a call leaves on the module for the next (a cache keyed by a "
            "size, a counter), written at `pkg/rot.py:14`: `self._seq_len_cached = x.shape[1]`") in c["body"]


@pytest.mark.parametrize("dynamic", [("seq",), ()])
def test_the_count_is_a_process_calling_the_cases_in_order(dynamic):
    """pt2bot's recompiles against dynamo's own in one process that calls the compiled model
    on the shape cases in order (a user's), with the dims marked as pt2bot marks them: where a
    new size and a new cached length come in the same call they are one compile, not two."""
    import torch
    from test_worker import spec

    from pt2bot.smoke.worker import measure

    shapes = [4, 8, 12, 8]
    run = measure(spec("cache", "models.length_cache:LengthCache", inputs=[{"shape": [2, "seq", 8]}],
                       shapes={"seq": shapes}, dynamic=dynamic, phases=("breaks", "matrix")))
    assert run["status"] == "ok", run.get("error")

    from models.length_cache import LengthCache

    torch._dynamo.reset()
    frames: list[int] = []

    def backend(gm, example_inputs):
        frames.append(1)
        return gm.forward
    model = LengthCache()
    compiled = torch.compile(model, backend=backend)
    for n in shapes:
        x = torch.randn(2, n, 8)
        if dynamic:
            torch._dynamo.mark_dynamic(x, 1)
        compiled(x)
    torch._dynamo.reset()
    assert run["recompiles"]["count"] == len(frames) - 1 > 0, (run["recompiles"], len(frames))
    carried = [r for c in run["recompiles"]["cases"] for r in c["reasons"] if r.get("carried")]
    assert carried and all("_seq_len_cached" in r["guard"] for r in carried)


DRAWS = '''\
import numpy as np
import torch
from torch import nn


class Jitter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        lam = float(np.random.rand())
        return self.lin(x) * lam
'''


def test_a_number_drawn_anew_on_every_call_is_not_module_state(tmp_path):
    """A new user's CutMix: `lam` drawn by numpy (a break) and guarded by value in the frame
    resumed after it, so a process calling the model compiles that frame on every call. The
    cases run in order failed that guard, which was said as state a call left on the module;
    with the generators seeded before each call it does not fail: the draw's, not the module's."""
    from test_worker import spec

    from pt2bot.smoke.worker import measure

    (tmp_path / "pkg_jitter").mkdir()
    (tmp_path / "pkg_jitter" / "__init__.py").write_text("")
    (tmp_path / "pkg_jitter" / "m.py").write_text(DRAWS)
    s = spec("jitter", "pkg_jitter.m:Jitter", inputs=[{"shape": ["batch", 8]}], shapes={"batch": [2, 3, 4]},
             dynamic=("batch",), phases=("breaks", "matrix"))
    s["repo_root"] = str(tmp_path)
    run = measure(s)
    assert run["status"] == "ok", run.get("error")
    reasons = [r for c in run["recompiles"]["cases"] for r in c["reasons"]]
    assert reasons and all(r.get("drawn") is True and not r.get("carried") for r in reasons), reasons
    # (the draw passed across the break on the stack: `___stack1 == 0.5488135039273248`)
    assert all(r["guard"].startswith("___stack") and " == " in r["guard"] for r in reasons), reasons


def test_a_guard_on_a_draw_is_said_as_one():
    from pt2bot.report.review import recompile_body

    rows = [("jitter", {"shape": {"batch": 3}}, {"guard": "___stack1 == 0.5488135039273248", "drawn": True})]
    body = recompile_body(rows)
    assert body.startswith("❌ **New recompile**: a guard dynamo added for this line fails on the next call")
    assert "💡 The guard holds a number drawn anew on every call (numpy's or Python's `random`)" in body
    assert "Keep the number a tensor where it is used" not in body


WIDE = '''\
import torch
from torch import nn


class Wide(nn.Module):
    def forward(self, x):
        return (x * 2).sum(-1)
'''


def test_a_dim_bounded_below_only_compiles(tmp_path):
    """flux's autoencoder: the advice's paste-ready yaml `width: {min: 4}` made every compiled
    case raise "not simple sympy type <class 'NoneType'>: None" (torch 2.13 refuses
    `mark_dynamic(x, 3, min=4)` with no max as it refuses a max with no min)."""
    from test_worker import spec

    from pt2bot.smoke.matrix import MAX_DIM, mark_range
    from pt2bot.smoke.worker import measure

    assert mark_range(4, None) == {"min": 4, "max": MAX_DIM}
    (tmp_path / "pkg_wide").mkdir()
    (tmp_path / "pkg_wide" / "__init__.py").write_text("")
    (tmp_path / "pkg_wide" / "m.py").write_text(WIDE)
    s = spec("wide", "pkg_wide.m:Wide", inputs=[{"shape": [2, "width"]}], shapes={"width": [8, 12, 16]},
             dynamic=("width",), phases=("matrix",), bounds={"width": {"min": 4, "max": None, "multiple_of": None}})
    s["repo_root"] = str(tmp_path)
    run = measure(s)
    assert run["status"] == "ok", run.get("error")
    assert not any(c.get("error") for c in run["recompiles"]["cases"]), run["recompiles"]
    assert run["recompiles"]["count"] == 0, run["recompiles"]
