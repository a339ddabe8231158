"""The recorded cases of benchmarks/bench_fix_replay.py stay replayable offline: each upstream
diff, applied in reverse to its AFTER excerpt, gives a BEFORE that parses and differs only
where the maintainers' hunks say; the reverse-apply trims context, never changed lines."""
from __future__ import annotations

import ast
import collections
import glob
import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("bench_fix_replay",
                                               os.path.join(ROOT, "benchmarks", "bench_fix_replay.py"))
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

CASES = sorted(os.path.basename(os.path.dirname(p))
               for p in glob.glob(os.path.join(bench.CASES_DIR, "*", "case.json")))

DIFF = """\
diff --git a/m.py b/m.py
--- a/m.py
+++ b/m.py
@@ -1,6 +1,6 @@ def f(x):
 def f(x):
     y = x + 1
-    if y.max() > 1.0:
-        y = y / 2
+    y = torch.where(y.max() > 1.0, y / 2, y)
     return y
 
"""


def test_reverse_apply_restores_the_before_lines():
    (before, after), = bench.hunks(DIFF)
    text = "import torch\n\ndef f(x):\n    y = x + 1\n    y = torch.where(y.max() > 1.0, y / 2, y)\n    return y\n"
    got, fuzz = bench.reverse_apply(text, before, after)
    assert fuzz == 0
    assert "    if y.max() > 1.0:\n        y = y / 2\n" in got
    assert "torch.where" not in got


def test_reverse_apply_trims_context_not_changed_lines():
    (before, after), = bench.hunks(DIFF)
    # the excerpt lacks the hunk's first context line: trimmed as patch's fuzz does
    text = "def g(x):\n    y = x + 1\n    y = torch.where(y.max() > 1.0, y / 2, y)\n    return y\n"
    got, fuzz = bench.reverse_apply(text, before, after)
    assert fuzz == 1 and "if y.max() > 1.0:" in got
    # the changed line itself missing: no match at any fuzz
    with pytest.raises(ValueError):
        bench.reverse_apply("def f(x):\n    y = x + 1\n    return y\n", before, after)


def test_reverse_apply_refuses_an_ambiguous_place():
    (before, after), = bench.hunks(DIFF)
    block = "    y = torch.where(y.max() > 1.0, y / 2, y)\n"
    with pytest.raises(ValueError):
        bench.reverse_apply("def a(y):\n" + block + "def b(y):\n" + block, before, after)


@pytest.mark.parametrize("name", CASES)
def test_recorded_case_replays(name, tmp_path):
    case = bench.load_case(name)
    meta = json.load(open(os.path.join(bench.CASES_DIR, name, "case.json")))
    for key in ("repo", "sha", "path", "licence", "subject"):
        assert meta[key], key
    assert len(meta["sha"]) == 40
    repo, pr = bench.make_pr(str(tmp_path), case)
    applied = [h for h in pr["hunks"] if "fuzz" in h]
    assert applied, "no upstream hunk replayed"
    assert len(pr["hunks"]) == len(bench.hunks(case["diff"]))
    before = open(os.path.join(repo, case["path"])).read()
    ast.parse(before)
    after = subprocess.run(["git", "-C", repo, "show", f"main:{case['path']}"], capture_output=True,
                           text=True, check=True).stdout
    ast.parse(after)
    assert before != after
    # every line the PR removes was written by the maintainers' fix (a `+` line upstream); counted
    # over the files, not read off the PR's diff, whose alignment may differ from upstream's (an
    # unchanged line shown as removed and added again)
    plus = {ln[1:] for ln in case["diff"].split("\n") if ln.startswith("+") and not ln.startswith("+++")}
    removed = collections.Counter(after.split("\n")) - collections.Counter(before.split("\n"))
    assert all(ln in plus for ln in removed)
    # the PR removes lines unless the replayed hunks only deleted code upstream (a fix that drops
    # the offending lines, e.g. knlp_sdpa_backend_log: its one adding hunk is skipped)
    replayed_plus = [ln for i, (hbefore, hafter) in enumerate(bench.hunks(case["diff"]))
                     if str(i) not in case.get("skip_hunks", {})
                     for ln in hafter if ln not in hbefore]  # lines only the AFTER side has
    assert removed or not replayed_plus
    # the excerpt names its upstream
    assert f"{meta['repo']} at {meta['sha']}" in after.split("\n")[0]


def test_the_held_out_sets_are_apart_from_the_main_set():
    main, held, held2 = bench.case_names("main"), bench.case_names("held-out"), bench.case_names("held-out-2")
    held3, held4 = bench.case_names("held-out-3"), bench.case_names("held-out-4")
    held5, held6 = bench.case_names("held-out-5"), bench.case_names("held-out-6")
    held7 = bench.case_names("held-out-7")
    assert held and main and held2 and held3 and held4 and held5 and held6 and held7
    assert not set(main) & set(held)
    assert sorted(main + held + held2 + held3 + held4 + held5 + held6 + held7) == CASES
    assert set(bench.SETS) == {"main", "held-out", "held-out-2", "held-out-3", "held-out-4", "held-out-5",
                               "held-out-6", "held-out-7"}
    # each set writes its own JSON, the earlier sets where they always did
    assert len(set(bench.OUT.values())) == 8
    assert [os.path.basename(bench.OUT[s]) for s in bench.SETS] == [
        "fix_replay.json", "fix_replay_heldout.json", "fix_replay_heldout2.json", "fix_replay_heldout3.json",
        "fix_replay_heldout4.json", "fix_replay_heldout5.json", "fix_replay_heldout6.json",
        "fix_replay_heldout7.json"]

    def projects(names):
        return {json.load(open(os.path.join(bench.CASES_DIR, n, "case.json")))["repo"] for n in names}
    # held out means from projects whose fixes are not in the set the rules were tuned on; the
    # second held-out set, written once recipes had seen both earlier sets, from neither of them
    assert not projects(held) & projects(main)
    assert not projects(held2) & (projects(main) | projects(held))
    # the third, from none of the three before it
    assert not projects(held3) & (projects(main) | projects(held) | projects(held2))
    # the fourth and the fifth, each from none of the sets before it
    assert not projects(held4) & (projects(main) | projects(held) | projects(held2) | projects(held3))
    assert not projects(held5) & (projects(main) | projects(held) | projects(held2) | projects(held3)
                                  | projects(held4))
    assert not projects(held6) & (projects(main) | projects(held) | projects(held2) | projects(held3)
                                  | projects(held4) | projects(held5))
    assert not projects(held7) & (projects(main) | projects(held) | projects(held2) | projects(held3)
                                  | projects(held4) | projects(held5) | projects(held6))


def test_each_set_reports_its_own_screened_fixes():
    def screened(sha, set_=None):
        return {"repo": "o/r", "sha": sha, "subject": "s", "before_line": "x", "measured": [],
                **({"set": set_} if set_ else {})}
    results = {"cases": {}, "screened": [screened("aaa"), screened("bbb", "held-out"),
                                          screened("ccc", "held-out-2"), screened("ddd", "held-out-3"),
                                          screened("eee", "held-out-4")]}
    assert "o/r@aaa" in bench.markdown(results) and "o/r@bbb" not in bench.markdown(results)
    held = bench.markdown({**results, "set": "held-out"})
    assert "o/r@bbb" in held and "o/r@aaa" not in held and "o/r@ccc" not in held
    held2 = bench.markdown({**results, "set": "held-out-2"})
    assert "o/r@ccc" in held2 and "o/r@aaa" not in held2 and "o/r@bbb" not in held2
    held3 = bench.markdown({**results, "set": "held-out-3"})
    assert "o/r@ddd" in held3 and not any(f"o/r@{x}" in held3 for x in ("aaa", "bbb", "ccc", "eee"))
    held4 = bench.markdown({**results, "set": "held-out-4"})
    assert "o/r@eee" in held4 and not any(f"o/r@{x}" in held4 for x in ("aaa", "bbb", "ccc", "ddd"))
