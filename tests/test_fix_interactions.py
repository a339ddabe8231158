"""A candidate is proven against head, which still holds the PR's other new problems: one
refused for what compiles around it (a new recompile, more graphs, a new break), on a model
where another candidate was verified, says that it may pass once that one is applied (the
trial on vit-pytorch: a kept assert refused for a recompile that the `.item()` break above it
caused, verified in the next review once the `.item()` fix was in). A refusal for anything else,
or with no verified fix on the model, stays as it is."""
from __future__ import annotations

from pt2bot.config import Config
from pt2bot.fixes import Proposal, decide
from pt2bot.reportdata import Report
from pt2bot.rules import Candidate


def _proposal(cid: str, line: int, result: dict, targets: list[int]) -> Proposal:
    cand = Candidate(code="PTC201", path="pkg/m.py", start_line=line, end_line=line + 1,
                     lines=("    x = 1",), title=cid, safe=False, guards=())
    return Proposal(cid=cid, cand=cand, original="", patched="", findings=[], targets=targets,
                    results={"net": result})


def _fixes(refusal: str, verified_model: str = "net", bad_line: int = 20) -> dict:
    targets = [{"kind": "break", "model": "net", "path": "pkg/m.py", "line": n, "gb": "GB0170"}
               for n in (10, bad_line)]
    ok = _proposal("item", 10, {"accepted": True, "evidence": "GB0124 gone"}, [0])
    ok.results = {verified_model: ok.results["net"]}
    bad = _proposal("check", bad_line, {"accepted": False, "reason": refusal}, [1])
    report = decide(Report(head="h" * 40, base="b" * 40), targets, [ok, bad], {}, Config(), 1.0)
    return report.fixes


def test_a_refusal_for_what_compiles_next_to_a_verified_fix_says_it_may_pass_after_it():
    fixes = _fixes("a new recompile on shape case batch=2 (in `forward` at pkg/m.py:5: a guard other "
                   "than a size failed)")
    said = ("a new recompile on shape case batch=2 (in `forward` at pkg/m.py:5: a guard other than a size "
            "failed) (on `net`); it was proven against head, which still has what the verified suggestion "
            "at pkg/m.py:10-11 fixes: it may pass once that is applied")
    assert fixes["candidates"][1]["reason"] == said
    assert fixes["targets"][1]["reason"] == said
    assert fixes["candidates"][0]["verified"] is True and fixes["candidates"][0]["reason"] is None


def test_other_refusals_and_other_models_stay_as_they_are():
    assert _fixes("outputs differ from head's on shape case batch=2")["candidates"][1]["reason"] == (
        "outputs differ from head's on shape case batch=2 (on `net`)")
    assert _fixes("3 graphs instead of 2", verified_model="other")["candidates"][1]["reason"] == (
        "3 graphs instead of 2 (on `net`)")


def test_a_refusal_next_to_a_verified_fix_of_the_same_lines_gets_no_may_pass():
    """The verified suggestion replaces a line this one replaces too (pytorch_geometric's fill
    value, kept a tensor, refused for a break further on; a sentinel verified on the same
    line): applying it leaves nothing for this edit to apply to."""
    assert _fixes("a new graph break: GB0124 at pkg/m.py:40", bad_line=11)["candidates"][1]["reason"] == (
        "a new graph break: GB0124 at pkg/m.py:40 (on `net`)")


def test_a_fix_verified_after_another_stands_only_where_that_one_is_posted():
    """Verified with the `.item()` fix written in, the check is posted only where that fix is
    posted too; where it is not (refused on another model), the check is not either."""
    targets = [{"kind": "break", "model": "net", "path": "pkg/m.py", "line": n, "gb": "GB0170"}
               for n in (10, 20)]
    after = {"accepted": True, "evidence": "GB0170 gone, measured with the suggestion at pkg/m.py:10 "
             "applied first (apply it too)", "after": [["pkg/m.py", 10, 11]]}
    for first, posted in (({"net": {"accepted": True, "evidence": "GB0124 gone"}}, True),
                          ({"net": {"accepted": True, "evidence": "GB0124 gone"},
                            "other": {"accepted": False, "reason": "outputs differ"}}, False)):
        ok = _proposal("item", 10, {}, [0])
        ok.results = first
        check = _proposal("check", 20, after, [1])
        fixes = decide(Report(head="h" * 40, base="b" * 40), targets, [ok, check], {}, Config(), 1.0).fixes
        assert fixes["candidates"][1]["verified"] is posted, fixes
        if not posted:
            assert fixes["candidates"][1]["reason"] == (
                "verified only with the suggestion at pkg/m.py:10 applied first, which is not verified itself")


def test_a_fix_refused_again_with_the_others_applied_gets_no_may_pass():
    fixes = _fixes("a new recompile on shape case batch=2")
    assert "may pass" in fixes["candidates"][1]["reason"]
    targets = [{"kind": "break", "model": "net", "path": "pkg/m.py", "line": n, "gb": "GB0170"} for n in (10, 20)]
    ok = _proposal("item", 10, {"accepted": True, "evidence": "GB0124 gone"}, [0])
    bad = _proposal("check", 20, {"accepted": False, "retried": True, "reason": (
        "a new recompile on shape case batch=2; refused again with the suggestion at pkg/m.py:10 applied "
        "first: 3 graphs instead of 2")}, [1])
    fixes = decide(Report(head="h" * 40, base="b" * 40), targets, [ok, bad], {}, Config(), 1.0).fixes
    assert "may pass" not in fixes["candidates"][1]["reason"]
