"""A recompile in a frame that a break base has too splits off (real torch).

tests/fixtures/models/after_old_break.py: the break is in a helper the model calls, as in a
library (torchhd's similarity on its tensor subclass). A PR adds lines after that call: they
run in the frame dynamo resumes there, whose input is the helper's output, which carries no
dynamic mark. That frame is compiled static on the first batch size and again, dynamic, on
the second: automatic dynamic's one recompile per frame, which a plain `torch.compile`
makes on base too. A new user's applied verified fix was failed for it ("1 new recompile").
The review says it and does not count it; a value the PR passes across the break still
counts.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.torch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "models", "after_old_break.py"), encoding="utf-8") as fh:
    SOURCE = fh.read()
PATH = "pkg/after_old_break.py"


def variant(*keep: str) -> str:
    return "".join(ln for ln in SOURCE.splitlines(keepends=True)
                   if not any(f"# {tag} only" in ln and tag not in keep for tag in ("head", "value")))


def line_of(mark: str, text: str) -> int:
    [n] = [i for i, t in enumerate(text.splitlines(), 1) if t.endswith(f"# expect: {mark}")]
    return n


def measured(root, text: str) -> dict:
    """The worker's RUN on a tree holding `text`, in a process of its own."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / PATH).write_text(text)
    model = {"name": "reject", "entry": "pkg.after_old_break:Reject", "kwargs": {},
             "inputs": [{"name": "x", "shape": ["batch", 8], "dtype": "float32"}],
             "inputs_entry": None, "shapes": {"batch": [2, 4, 8]}, "cases": None,
             "dynamic": ["batch"], "export": False, "tolerance": {}}
    run = {"backend": "eager", "recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}
    spec = {"repo_root": str(root), "model": model, "run": run, "device": "cpu",
            "phases": ["breaks", "matrix"], "log_path": None}
    code = ("import json, sys\nfrom pt2bot.smoke.worker import measure\n"
            "print(json.dumps(measure(json.load(sys.stdin))))")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(spec), capture_output=True,
                         text=True, check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["status"] == "ok", got.get("error")
    return got


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("after_old_break")
    return {name: measured(root / name, variant(*keep))
            for name, keep in (("base", ()), ("head", ("head",)), ("value", ("head", "value")))}


def compared(base: dict, head: dict) -> dict:
    from pt2bot.compare import compare_model
    from pt2bot.results import ModelRun

    return compare_model("reject", ModelRun.from_json(base), ModelRun.from_json(head), renames={},
                         line_map=lambda path, line: line, threshold_pct=10).to_dict()


def test_the_new_frame_after_the_old_break_recompiles_once_and_is_not_counted(runs):
    base, head = runs["base"], runs["head"]
    brk = line_of("old-break", variant("head"))
    # the same break on both sides; head recompiles once more, in the frame resumed after the
    # call, on the second size only (none on the third: automatic dynamic)
    assert [(b["gb"], b["line"]) for b in base["graph_breaks"]] == [("GB0025", brk)]
    assert [(b["gb"], b["line"]) for b in head["graph_breaks"]] == [("GB0025", brk)]
    frames = [(c["shape"]["batch"], r["frame"]["function"], r["kind"])
              for c in head["recompiles"]["cases"] for r in c["reasons"]]
    resumed = f"torch_dynamo_resume_in_forward_at_{line_of('call', variant('head'))}"
    assert (4, resumed, "size_mismatch") in frames and not any(b == 8 for b, _, _ in frames)
    assert head["recompiles"]["count"] == base["recompiles"]["count"] + 1
    m = compared(base, head)
    d = m["delta"]
    assert (d["recompiles"], d["new_recompiles"], d["caused_recompiles"],
            d["after_break_recompiles"]) == (0, 0, 0, 1)
    [case] = [c for c in d["recompile_cases"] if c.get("after_break")]
    assert (case["shape"], case["after_break"], case["delta"]) == ({"batch": 4}, 1, 0)
    # the frame base recompiled the same way is not the one explained: the new one is
    [r] = [r for r in case["reasons"] if "after_break" in r]
    assert r["frame"]["function"] == resumed
    assert r["after_break"] == {"gb": "GB0025", "path": PATH, "line": brk}


def test_a_value_passed_across_the_old_break_stays_a_new_recompile(runs):
    m = compared(runs["base"], runs["value"])
    d = m["delta"]
    guards = [r for c in d["recompile_cases"] for r in c["reasons"]]
    assert any(r["kind"] == "guard" and r["guard"].startswith("n == ") and "after_break" not in r
               for r in guards), guards
    assert d["new_recompiles"] == 1 and d["after_break_recompiles"] == 0


CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: reject
    entry: pkg.after_old_break:Reject
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4, 8]}
    dynamic: [batch]
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
thresholds: {compile_regression_pct: 1000}
"""


def test_the_review_passes_and_says_which_frame_recompiled_once(tmp_path):
    from gitrepo import GitRepo
    from pt2bot.cli import main

    repo = GitRepo.init(tmp_path / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write(PATH, variant())
    repo.commit("base")
    repo.branch("pr")
    repo.write(PATH, variant("head"))
    repo.commit("pr: no confident class, no scores")
    out = tmp_path / "out"
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(repo.path)
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        rc = main(["review", "--base", "main", "--out", str(out)])
    finally:
        mp.undo()
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert rc == 0 and report["conclusion"] == "success", report["reasons"]
    assert not any("recompile" in r["code"] for r in report["reasons"])
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "| recompiles | 1 | 2 | +1 (all once, in frames an existing break splits off) |" in summary
    assert "Recompiles per shape (+1, all once after an existing break)" in summary
    text = variant("head")
    assert (f"in `forward` (`{PATH}`, resumed after line {line_of('call', text)}) — a frame the "
            f"break at `{PATH}:{line_of('old-break', text)}` (on base too) splits off") in summary
