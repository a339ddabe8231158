"""A dim pinned in a frame a new break splits off is said as following from that break (real
torch): tests/fixtures/models/pinned_after_break.py. Held-out batch 38's user read "1 dynamic
dim(s) newly specialised: dim `batch` = 2 at `regnet/model.py:50`", an unchanged line, pinned
only because the frame resumed after the PR's `.item()` two lines up took a tensor computed
before the break; the recompiles beside it said "follows from the new break", this did not.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.torch

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "fixtures", "models", "pinned_after_break.py"), encoding="utf-8") as fh:
    SOURCE = fh.read()
PATH = "pkg/pinned_after_break.py"
BASE = "".join(ln for ln in SOURCE.splitlines(keepends=True) if "# head only" not in ln)


def line_of(mark: str, text: str) -> int:
    [n] = [i for i, t in enumerate(text.splitlines(), 1) if f"# expect: {mark}" in t]
    return n


def measured(root, text: str) -> dict:
    """The worker's RUN on a tree holding `text`, in a process of its own."""
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / PATH).write_text(text)
    inputs = [{"name": n, "shape": ["batch", 8], "dtype": "float32"} for n in ("moving", "static")]
    model = {"name": "pair", "entry": "pkg.pinned_after_break:Pair", "kwargs": {}, "inputs": inputs,
             "inputs_entry": None, "shapes": {"batch": [2, 4]}, "cases": None,
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
    root = tmp_path_factory.mktemp("pinned_after_break")
    return {"base": measured(root / "base", BASE), "head": measured(root / "head", SOURCE)}


def test_the_dim_pinned_after_the_new_break_follows_from_it(runs):
    from pt2bot.compare import compare_model
    from pt2bot.report.summary import location
    from pt2bot.results import ModelRun

    brk, pinned = line_of("new-break", SOURCE), line_of("pinned", SOURCE)
    assert runs["base"]["specialized"] == []
    # where torch pinned it: the frame resumed after the break, at the unchanged line
    (s,) = runs["head"]["specialized"]
    assert (s["dim"], s["value"], s["line"]) == ("batch", 2, pinned), s
    assert s["resumed_after"] == {"path": PATH, "line": brk}, s
    m = compare_model("pair", ModelRun.from_json(runs["base"]), ModelRun.from_json(runs["head"]),
                      renames={}, line_map=lambda path, line: line - (line > brk), threshold_pct=10)
    (new,) = m.delta.new_specialized
    assert new["caused_by"] == {"gb": "GB0124", "path": PATH, "line": brk}, new
    assert location(new["caused_by"]) == f"{PATH}:{brk}"


def test_the_summary_says_it_beside_the_pinned_line(runs):
    import cmarkgfm

    from pt2bot.compare import build_report
    from pt2bot.config import Config, ModelConfig
    from pt2bot.report.summary import render_summary
    from pt2bot.results import ResultsFile

    def results(run: dict) -> ResultsFile:
        return ResultsFile.from_json({"schema": "pt2bot.results/1", "device": "cpu", "torch": "2.13",
                                      "models": [dict(run, name="pair")]})
    config = Config(models=(ModelConfig(name="pair", entry="pkg.pinned_after_break:Pair"),))
    rep = build_report(base_results=results(runs["base"]), head_results=results(runs["head"]),
                       base_findings=[], head_findings=[], changeset=None, config=config,
                       base_sha="a" * 40, head_sha="b" * 40)
    text = re.sub(r"<[^>]+>", "", cmarkgfm.github_flavored_markdown_to_html(render_summary(rep)))
    brk, pinned = line_of("new-break", SOURCE), line_of("pinned", SOURCE)
    assert (f"dim batch = 2 at {PATH}:{pinned}: return (moved * static).sum(dim=1)  # expect: pinned "
            f"— follows from the new break at {PATH}:{brk}") in text, text
    # a warning among the review's reasons, with the break it follows from
    (r,) = [r for r in rep.reasons if r["code"] == "new_specialized"]
    assert r["level"] == "warning" and r["message"] == (
        f"batch is declared dynamic and now specialised to 2 at {PATH}:{pinned}: `torch._dynamo.mark_dynamic` "
        f"on it raises (follows from the new break at {PATH}:{brk})"), r
    # and what it means for code that marks it, outside the fold (MAE's user met the
    # ConstraintViolationError on each PR's head)
    assert ("⚠️ 1 dim declared dynamic is newly specialised: torch._dynamo.mark_dynamic on it now raises "
            "a ConstraintViolationError when the model compiles") in text, text


def test_a_dim_pinned_in_the_models_own_frame_is_no_breaks_doing():
    """Without a frame (an export's specialisation, older results) or in frame 0, nothing is
    said to follow."""
    from pt2bot.compare import compare_specialized
    from pt2bot.results import ModelRun

    head = ModelRun.from_json({"name": "m", "status": "ok", "specialized": [
        {"dim": "batch", "value": 2, "path": "m.py", "line": 9, "source": "y = x * w"},
        {"dim": "seq", "value": 4, "path": "m.py", "line": 9, "source": "y = x * w",
         "frame": {"function": "forward", "path": "m.py", "line": 5}, "compile_id": "0/0"}]})
    brk = ({"gb": "GB0124", "path": "m.py", "line": 7}, (("m.py", 7, "forward"),))
    new, fixed = compare_specialized(ModelRun(), head, {}, [brk])
    assert [n.get("caused_by") for n in new] == [None, None] and fixed == []
