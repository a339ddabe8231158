"""A break only the shape matrix hits (pt2bot/smoke/worker.py `_matrix_only_breaks`): whisper's
`is_causal=mask is not None and n_ctx > 1` is a bool in the one-case break pass, whose sizes are
static, and a symbolic bool `scaled_dot_product_attention` refuses once the matrix makes the
sequence dynamic. The review said "graph breaks 0 | 0" and "8 new recompiles". The break is now
the run's, carried to the report as `matrix_only`, said in its comment, and given no fix target:
the proof's break pass would never see it, so any edit would read as removing it.
"""
from __future__ import annotations

import functools

import cmarkgfm
from compare_fixtures import make_config, make_pr, results_pair
from gitrepo import GitRepo

from pt2bot.changes import is_commentable
from pt2bot.compare import build_report
from pt2bot.fixes import find_targets
from pt2bot.report.jsonreport import validation_errors
from pt2bot.report.review import render_review
from pt2bot.report.summary import render_summary
from pt2bot.results import ResultsFile

SDPA_BREAK = {
    "gb": "GB0112", "gb_type": "TypeError when making fake tensor call", "path": "pkg/models.py",
    "line": 40, "function": "forward", "source": "n = x.sum().item()",
    "reason": "TypeError <built-in function scaled_dot_product_attention>: argument 'is_causal' must be bool, not SymBool",
    "explanation": "", "hints": [], "url": None, "count": 1, "in_loop": False,
    "user_stack": [{"path": "pkg/models.py", "line": 40, "function": "forward"}]}


def _report(tmp_path, matrix_only: bool):
    b_sha, h_sha, cs = make_pr(GitRepo.init(tmp_path / "repo"))
    base, head = results_pair()
    brk = dict(SDPA_BREAK, **({"matrix_only": True} if matrix_only else {}))
    next(m for m in head["models"] if m["name"] == "tiny_gpt")["graph_breaks"].append(brk)
    return build_report(base_results=ResultsFile.from_json(base), head_results=ResultsFile.from_json(head),
                        base_findings=[], head_findings=[], changeset=cs, config=make_config(),
                        selection=None, base_sha=b_sha, head_sha=h_sha), cs


def test_a_matrix_only_break_is_said_and_gets_no_fix_target(tmp_path):
    report, cs = _report(tmp_path, matrix_only=True)
    data = report.to_dict()
    assert validation_errors(data) == []
    tiny = next(m for m in data["models"] if m["name"] == "tiny_gpt")
    (brk,) = [b for b in tiny["new_breaks"] if b["gb"] == "GB0112"]
    assert brk["matrix_only"] is True
    comments = render_review(report, functools.partial(is_commentable, cs))["comments"]
    # (one comment for the line's two new breaks, the fixture's `.item()` and this one)
    (c,) = [c for c in comments if c["line"] == brk["line"]]
    assert c["body"].startswith("❌ **2 new graph breaks** on this line"), c["body"]
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert ("Only with dynamic sizes: the shape matrix's compiles hit it, the one-case break pass "
            "(its sizes static) does not, so no fix is tried for it.") in html
    summary = render_summary(report)
    assert "Only with dynamic sizes" in summary
    # the `graphs` row is the one-case pass's count: the breaks row says which it does not hold
    assert "| graph breaks | 3 | 4 (1 only with dynamic sizes) | +1 |" in summary
    assert not [t for t in find_targets(report, cs) if t["gb"] == "GB0112"]


def test_the_same_break_from_the_break_pass_is_a_fix_target(tmp_path):
    report, cs = _report(tmp_path, matrix_only=False)
    tiny = next(m for m in report.to_dict()["models"] if m["name"] == "tiny_gpt")
    assert all("matrix_only" not in b for b in tiny["new_breaks"])
    assert [t for t in find_targets(report, cs) if t["gb"] == "GB0112"]
