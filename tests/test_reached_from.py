"""A new graph break in code the PR did not change, reached from a call the PR added
(pt2bot/compare.py `_mark_reached`): knlp's PR added `self._log_sdpa_backend(q, k, v)` under a
one-time flag, and the break is inside that existing helper, on no line of the diff. It was
listed in the summary only; the report now names the added call (`reached_from`) and the review
comments there, saying where the break is.
"""
from __future__ import annotations

import cmarkgfm
from compare_fixtures import make_config, make_pr, results_pair
from gitrepo import GitRepo

from pt2bot.compare import build_report
from pt2bot.report.jsonreport import validation_errors
from pt2bot.report.review import render_review
from pt2bot.results import ResultsFile

# tiny_gpt's head calls a helper from pkg/models.py:40 (a line the PR added) that breaks at
# pkg/layers.py:18, a line of the file the PR left alone
HELPER_BREAK = {
    "gb": "GB0208", "gb_type": "torch.* op returned non-Tensor", "path": "pkg/layers.py", "line": 18,
    "function": "log_backend", "source": "z = z + y", "reason": "torch.* op returned non-Tensor",
    "explanation": "", "hints": [], "url": None, "count": 1, "in_loop": False,
    "user_stack": [{"path": "pkg/models.py", "line": 40, "function": "forward"},
                   {"path": "pkg/layers.py", "line": 18, "function": "log_backend"}]}


def _report(tmp_path, stack=None):
    b_sha, h_sha, cs = make_pr(GitRepo.init(tmp_path / "repo"))
    base, head = results_pair()
    brk = dict(HELPER_BREAK, user_stack=stack if stack is not None else HELPER_BREAK["user_stack"])
    next(m for m in head["models"] if m["name"] == "tiny_gpt")["graph_breaks"].append(brk)
    return build_report(base_results=ResultsFile.from_json(base), head_results=ResultsFile.from_json(head),
                        base_findings=[], head_findings=[], changeset=cs, config=make_config(),
                        selection=None, base_sha=b_sha, head_sha=h_sha)


def test_the_break_names_the_added_call_and_the_review_comments_there(tmp_path):
    report = _report(tmp_path)
    data = report.to_dict()
    assert validation_errors(data) == []
    tiny = next(m for m in data["models"] if m["name"] == "tiny_gpt")
    (brk,) = [b for b in tiny["new_breaks"] if b["gb"] == "GB0208"]
    assert brk["reached_from"] == {"path": "pkg/models.py", "line": 40, "function": "forward"}
    # the break at its own line (pkg/models.py:40, added by the PR) keeps no `reached_from`
    assert all("reached_from" not in b for b in tiny["new_breaks"] if b["gb"] != "GB0208")
    review = render_review(report)
    (c,) = [c for c in review["comments"] if c["fingerprint"] == brk["fingerprint"]]
    assert (c["path"], c["line"], c["side"]) == ("pkg/models.py", 40, "RIGHT")
    html = cmarkgfm.github_flavored_markdown_to_html(c["body"])
    assert ("The break is at <code>pkg/layers.py:18</code> in <code>log_backend</code>, code this PR did "
            "not change; it is reached from the call on <code>pkg/models.py:40</code>, which the PR "
            "added.") in html


def test_a_break_reached_from_no_added_line_stays_in_the_summary(tmp_path):
    # the same break reached from a line the PR did not add: nothing on the diff to comment on
    report = _report(tmp_path, stack=[{"path": "pkg/models.py", "line": 41, "function": "forward"},
                                      {"path": "pkg/layers.py", "line": 18, "function": "log_backend"}])
    tiny = next(m for m in report.to_dict()["models"] if m["name"] == "tiny_gpt")
    (brk,) = [b for b in tiny["new_breaks"] if b["gb"] == "GB0208"]
    assert "reached_from" not in brk
    review = render_review(report)
    assert all(c["fingerprint"] != brk["fingerprint"] for c in review["comments"])
    assert "pkg/layers.py:18" in review["body"]
