"""One verdict per problem: recompiles that follow from a new graph break (real torch).

tests/fixtures/models/resume_after_item.py is the PR: its head adds one `.item()` branch to
a helper. With a varying batch, every frame dynamo compiles because of that break (the helper
entered as a frame of its own, and the resume functions after the `.item()` and after the
call) recompiles once. The worker records which frame each recompile was for; the review
attributes those recompiles to the new break instead of calling them a second regression.
"""
from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "fixtures")
FIXTURE = os.path.join(ROOT, "models", "resume_after_item.py")
HEAD_ONLY = "# head only"


def head_source() -> str:
    with open(FIXTURE, encoding="utf-8") as fh:
        return fh.read()


def base_source() -> str:
    return "".join(ln for ln in head_source().splitlines(keepends=True) if HEAD_ONLY not in ln)


def line_of(source: str, mark: str) -> int:
    hits = [i for i, t in enumerate(source.splitlines(), 1) if t.endswith(f"# expect: {mark}")]
    assert len(hits) == 1, mark
    return hits[0]


def spec(dynamic: tuple[str, ...] = ("batch",)) -> dict:
    model = {"name": "gated", "entry": "models.resume_after_item:Gated", "kwargs": {},
             "inputs": [{"name": "x", "shape": ["batch", 8], "dtype": "float32"}],
             "inputs_entry": None, "shapes": {"batch": [2, 3, 5, 8]}, "cases": None,
             "dynamic": list(dynamic), "export": False, "tolerance": {}}
    run = {"backend": "eager", "recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}
    return {"repo_root": ROOT, "model": model, "run": run, "device": "cpu",
            "phases": ["breaks", "matrix"], "log_path": None}


def test_worker_records_the_frame_of_each_recompile():
    from pt2bot.smoke.worker import measure
    run = measure(spec())
    assert run["status"] == "ok", run.get("error")
    src = head_source()
    brk, call = line_of(src, "item-break"), line_of(src, "gate-call")
    assert [(b["gb"], b["line"]) for b in run["graph_breaks"]] == [("GB0124", brk)]
    reasons = [r for c in run["recompiles"]["cases"] for r in c["reasons"]]
    path = "models/resume_after_item.py"
    gate_line = line_of(src, "item-break") - 2     # `def gate` two lines above the branch
    assert sorted((r["frame"]["function"], r["frame"]["path"], r["frame"]["line"])
                  for r in reasons) == sorted([
        ("gate", path, gate_line),
        (f"torch_dynamo_resume_in_gate_at_{brk}", path, brk),
        (f"torch_dynamo_resume_in_forward_at_{call}", path, call)])
    resumed = sorted(r["resumed_after"]["line"] for r in reasons if "resumed_after" in r)
    assert resumed == sorted([brk, call])
    assert all(r["resumed_after"]["path"] == path for r in reasons if "resumed_after" in r)
    # One compile per frame: the reasons' compile ids are distinct ("frame/attempt").
    ids = [r["compile_id"] for r in reasons]
    assert len(set(ids)) == 3 and all(i.endswith("/1") for i in ids)
    # The guards are on the resumed frames' locals / stack slots, not the configured input.
    assert {r["dim"] for r in reasons} == {None}
    assert run["recompiles"]["count"] == 3
