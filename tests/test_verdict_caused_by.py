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


# ----------------------------------------------------------------------------- the review

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: gated
    entry: pkg.gated:Gated
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 3, 5, 8]}
    dynamic: [batch]
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
"""
PATH = "pkg/gated.py"


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory):
    """`pt2bot review --base main` of a real PR: the head adds the `.item()` branch."""
    import json

    from gitrepo import GitRepo
    from pt2bot.cli import main

    repo = GitRepo.init(tmp_path_factory.mktemp("caused") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write(PATH, base_source())
    repo.commit("base")
    repo.branch("pr")
    repo.write(PATH, head_source())
    repo.commit("pr: gate on the mean")
    out = tmp_path_factory.mktemp("out") / "report"
    mp = pytest.MonkeyPatch()
    try:
        mp.chdir(repo.path)
        mp.delenv("GITHUB_STEP_SUMMARY", raising=False)
        rc = main(["review", "--base", "main", "--out", str(out)])
    finally:
        mp.undo()
    files = {}
    for name in ("report.json", "review.json", "check.json", "base.json", "head.json"):
        with open(out / name, encoding="utf-8") as fh:
            files[name] = json.load(fh)
    files["summary.md"] = (out / "summary.md").read_text(encoding="utf-8")
    return rc, files


def test_one_new_break_is_one_verdict(reviewed):
    rc, files = reviewed
    report = files["report.json"]
    brk = line_of(head_source(), "item-break")
    [m] = [m for m in report["models"] if m["name"] == "gated"]
    assert [(b["gb"], b["path"], b["line"]) for b in m["new_breaks"]] == [("GB0124", PATH, brk)]
    # head recompiled 3 times, base not at all; all three follow from the break.
    assert m["head"]["recompiles"]["count"] == 3 and m["base"]["recompiles"]["count"] == 0
    d = m["delta"]
    assert d["recompiles"] == 0 and d["new_recompiles"] == 0 and d["caused_recompiles"] == 3
    assert m["new_breaks"][0]["caused_recompiles"] == 3
    reasons = [r for c in d["recompile_cases"] for r in c["reasons"]]
    assert len(reasons) == 3
    assert all(r["caused_by"] == {"gb": "GB0124", "path": PATH, "line": brk} for r in reasons)
    assert [c["caused"] for c in d["recompile_cases"] if c.get("caused")] == [3]
    assert all(c["delta"] == 0 for c in d["recompile_cases"])
    # The verdict: the break fails the check once; no second "new recompiles" regression.
    codes = [r["code"] for r in report["reasons"]]
    assert rc == 1 and report["conclusion"] == "failure"
    assert "new_recompiles" not in codes and codes.count("new_graph_breaks") == 1
    [r] = [r for r in report["reasons"] if r["code"] == "new_graph_breaks"]
    assert r["message"] == "1 new graph break(s) (allowed: 0); 3 recompiles follow from it"
    assert "recompile" not in report["summary_title"]


def test_summary_review_and_check_say_the_recompiles_follow_from_the_break(reviewed):
    _, files = reviewed
    brk = line_of(head_source(), "item-break")
    said = f"3 recompiles follow from the new break at `{PATH}:{brk}`"
    summary = files["summary.md"]
    assert said in summary and "new recompile" not in summary
    assert "Recompiles per shape (+3, all following from new breaks)" in summary
    # the table's change in full, then how much of it the break caused (it read "0 (+3 from
    # the new break)", arithmetic that does not add up beside 0 → 3)
    assert "| recompiles | 0 | 3 | +3 (all from the new break) |" in summary
    # each guard names the frame it failed in: three lines that read alike say which is which
    # (a new user's mamba review listed the same guard three times)
    assert (f"in `gate` (`{PATH}`, resumed after line {brk}) — follows from the new break at "
            f"`{PATH}:{brk}`") in summary
    assert f"in `forward` (`{PATH}`, resumed after line {line_of(head_source(), 'gate-call')})" \
        in summary
    # The review: the new finding on the line and the break are one comment, which says it; it
    # spans the two lines of its verified suggestion (the `.item()` is only tested: the tensor
    # selected with `torch.where`)
    [c] = [c for c in files["review.json"]["comments"] if (c["path"], c.get("start_line")) == (PATH, brk)]
    assert c["line"] == brk + 1 and c["fix"]["verified"] is True
    assert "Confirmed by the smoke run" in c["body"] and said in c["body"]
    [a] = [a for a in files["check.json"]["annotations"] if a["start_line"] == brk]
    assert f"3 recompiles follow from the new break at {PATH}:{brk}" in a["message"]
    assert not any("recompile" in x["title"] for x in files["check.json"]["annotations"])


# ----------------------------------------------------------- a shared wrapper split off by a break

def _measured(spec_: dict) -> dict:
    """The worker's RUN for `spec_`, in a process of its own (base and head import one module
    name from two trees)."""
    import json
    import subprocess
    import sys

    code = ("import json, sys\nfrom pt2bot.smoke.worker import measure\n"
            "print(json.dumps(measure(json.load(sys.stdin))))")
    out = subprocess.run([sys.executable, "-c", code], input=json.dumps(spec_), capture_output=True,
                         text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _split_pair(tmp_path, name: str, entry: str):
    """The fixture `models/<name>.py` measured as head and, without its `head only` lines, as
    base (breaks and the matrix, batch 2 then 3), and compared: (head RUN, base RUN, delta)."""
    from pt2bot.compare import compare_model
    from pt2bot.results import ModelRun

    model = {"name": name, "entry": f"models.{name}:{entry}", "kwargs": {},
             "inputs": [{"name": "x", "shape": ["batch", 8], "dtype": "float32"}],
             "inputs_entry": None, "shapes": {"batch": [2, 3]}, "cases": None, "dynamic": [],
             "export": False, "tolerance": {}}
    run = {"backend": "eager", "recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}
    with open(os.path.join(ROOT, "models", f"{name}.py"), encoding="utf-8") as fh:
        head_text = fh.read()
    sides = {}
    for side, text in (("head", head_text), ("base", "".join(
            ln for ln in head_text.splitlines(keepends=True) if HEAD_ONLY not in ln))):
        root = tmp_path / side
        (root / "models").mkdir(parents=True)
        (root / "models" / "__init__.py").write_text("")
        (root / "models" / f"{name}.py").write_text(text)
        sides[side] = _measured({"repo_root": str(root), "model": model, "run": run, "device": "cpu",
                                 "phases": ["breaks", "matrix"], "log_path": None})
        assert sides[side]["status"] == "ok", sides[side].get("error")
    head, base = sides["head"], sides["base"]
    m = compare_model(name, ModelRun.from_json(base), ModelRun.from_json(head), renames={},
                      line_map=lambda path, line: line, threshold_pct=10).to_dict()
    return head, base, m


def test_a_wrapper_split_off_by_a_break_recompiles_on_its_module_and_that_follows_from_it(tmp_path):
    """perceiver-pytorch, reviewed as a new user would: a NaN guard in an attention block that
    a shared `PreNorm(fn)` wraps, in a loop over layers. The break sends `forward` to eager and
    makes the wrapper a frame of its own, called with the attention block and then with the
    feed-forward block: it recompiles on `___check_type_id(self._modules['fn'], ...)`. The
    review headlined such recompiles as new ones, besides the break that made them."""
    head, base, m = _split_pair(tmp_path, "wrapped_break", "Wrapped")
    assert not base["graph_breaks"] and [b["gb"] for b in head["graph_breaks"]] == ["GB0170"]
    guards = [r["guard"] for c in head["recompiles"]["cases"] for r in c["reasons"]]
    assert any(g.startswith("___check_type_id(self._modules['fn']") for g in guards), guards
    [brk] = m["new_breaks"]
    excess = head["recompiles"]["count"] - base["recompiles"]["count"]
    assert excess > 0
    assert m["delta"]["new_recompiles"] == 0, m["delta"]
    assert brk["caused_recompiles"] == excess


def test_a_resume_function_shared_by_two_blocks_recompiles_on_their_settings_and_that_follows(tmp_path):
    """Swin Transformer V2, reviewed as a new user would: an `.item()` kept for logging inside
    the attention that two blocks call, one shifted and one not. The rest of the block after
    the call is one resume function for both, which recompiles on `self.shift_size == 0`;
    inlined, each block's shift was a constant. The review failed a second check for it ("2 new
    recompile(s)") beside the break that made it."""
    head, base, m = _split_pair(tmp_path, "shifted_break", "Shifted")
    assert not base["graph_breaks"] and [b["gb"] for b in head["graph_breaks"]] == ["GB0124"]
    reasons = [r for c in head["recompiles"]["cases"] for r in c["reasons"]]
    assert any(r["guard"].startswith("self.shift_size == ") and r.get("resumed_after") for r in reasons), reasons
    [brk] = m["new_breaks"]
    excess = head["recompiles"]["count"] - base["recompiles"]["count"]
    assert excess > 0
    assert m["delta"]["new_recompiles"] == 0, m["delta"]
    assert brk["caused_recompiles"] == excess


def test_a_helper_called_at_two_lines_splits_off_two_resume_frames_and_both_follow(tmp_path):
    """V-JEPA's predictor, reviewed as a new user would: a check added to `apply_masks`, which
    `forward` calls at two lines. Dynamo records the break once, with the first call's stack;
    the resume function after the second call recompiles on `B == 2` as the first one does,
    and the review failed it as "1 new recompile(s)" beside the break that made it."""
    head, base, m = _split_pair(tmp_path, "twice_called_break", "TwiceCalled")
    src = open(os.path.join(ROOT, "models", "twice_called_break.py"), encoding="utf-8").read()
    first, second = line_of(src, "first-call"), line_of(src, "second-call")
    [b] = head["graph_breaks"]
    assert (b["user_stack"][0]["line"], [c["line"] for c in b["call_sites"]]) == (first, [second]), b
    resumed = {r["resumed_after"]["line"] for c in head["recompiles"]["cases"] for r in c["reasons"]
               if r.get("resumed_after")}
    assert {first, second} <= resumed, resumed
    [brk] = m["new_breaks"]
    excess = head["recompiles"]["count"] - base["recompiles"]["count"]
    assert excess >= 2
    assert m["delta"]["new_recompiles"] == 0, m["delta"]
    assert brk["caused_recompiles"] == excess
