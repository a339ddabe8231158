"""The merge's decision on the shards' proofs of fixes (pt2bot/fixes.py `merge_proofs`), on
a report built by compare from results as the shards wrote them; no torch.

alpha (shard 1) has the new break on the PR's line 3 and the finding there offers one
candidate; beta (shard 2) ran that line without breaking there. The unsharded review tries
the candidate on both; so the merged review verifies it only with both shards' verdicts.
"""
from __future__ import annotations

from typing import Any

from partialdirs import BASE, CONFIG, HEAD
from pt2bot.changes import ChangeSet, FileChange, Hunk
from pt2bot.compare import build_report
from pt2bot.configfile import parse_config
from pt2bot.findings import Finding
from pt2bot.fixes import merge_proofs
from pt2bot.results import GraphBreak, ModelRun, ResultsFile

CHANGES = ChangeSet(base=BASE, head=None, files={"pkg/m.py": FileChange(
    path="pkg/m.py", old_path="pkg/m.py", status="modified", added_lines=frozenset({3}),
    context_lines=frozenset({1, 2}), hunks=(Hunk(1, 2, 1, 3),),
    context_pairs=((1, 1), (2, 2)))})
FINDING = Finding(rule="PTC105", path="pkg/m.py", line=3, col=8, severity="error",
                  message="print", source="print(x)", function="M.forward", diff="added")
BREAK = GraphBreak(gb="GB0059", gb_type="Failed to trace builtin operator", path="pkg/m.py",
                   line=3, function="forward", source="print(x)")


def _report():
    config = parse_config(CONFIG, "pt2bot.yml")
    ran = {"pkg/m.py": "1-3"}
    head = ResultsFile(commit=HEAD, models=(
        ModelRun.empty("alpha").with_(graph_breaks=(BREAK,), coverage=ran),
        ModelRun.empty("beta").with_(graph_breaks=(), coverage=ran)))
    base = ResultsFile(commit=BASE, models=(ModelRun.empty("alpha").with_(graph_breaks=()),
                                            ModelRun.empty("beta").with_(graph_breaks=())))
    report = build_report(base_results=base, head_results=head, base_findings=[],
                          head_findings=[FINDING], changeset=CHANGES, config=config,
                          base_sha=BASE, head_sha=HEAD)
    return report, config, head


def _proof(model: str, offered: bool, verdict: dict[str, Any] | None) -> dict[str, Any]:
    """A shard's proof as `prove_shard` writes it."""
    targets = [{"kind": "break", "model": "alpha", "path": "pkg/m.py", "line": 3,
                "gb": "GB0059", "gb_type": BREAK.gb_type, "fingerprint": "x",
                "reason": None}] if offered else []
    return {"budget_s": 300.0, "spent_s": 2.0, "targets": targets, "candidates": [{
        "rule": "PTC105", "title": "guard the print", "path": "pkg/m.py", "start_line": 3,
        "end_line": 3, "lines": ["        if not torch.compiler.is_compiling(): print(x)"],
        "safe": False, "guards": [], "rank": 0,
        "by_target": [[0, [FINDING.fingerprint()]]] if offered else [],
        "results": {model: verdict} if verdict else {}}]}


ACCEPTED = {"accepted": True, "reason": None, "evidence": "GB0059 gone"}


def test_a_candidate_is_verified_on_the_verdicts_of_both_shards():
    report, config, head = _report()
    merged = merge_proofs(report, [_proof("alpha", True, ACCEPTED),
                                   _proof("beta", False, ACCEPTED)], config, CHANGES, head)
    [c] = merged.fixes["candidates"]
    assert c["verified"] and c["models"] == ["alpha", "beta"], c
    assert c["findings"] == [FINDING.fingerprint()] and c["targets"] == [0]
    assert merged.fixes["targets"][0]["fixed_by"] == c["id"] == "c0"
    assert merged.counts["fixes_verified"] == 1


def test_a_model_its_shard_did_not_try_is_not_tried_and_nothing_is_verified():
    """beta's shard wrote no verdict for the candidate (a shard that tried nothing for
    another shard's target): the merge does not verify on alpha's alone."""
    report, config, head = _report()
    merged = merge_proofs(report, [_proof("alpha", True, ACCEPTED),
                                   _proof("beta", False, None)], config, CHANGES, head)
    [c] = merged.fixes["candidates"]
    assert not c["verified"]
    assert c["reason"] == "not tried by the shard that ran this model (on `beta`)"
    assert merged.counts["fixes_verified"] == 0


def test_a_rejection_on_the_other_shards_model_is_the_reason():
    report, config, head = _report()
    no = {"accepted": False, "reason": "outputs differ from head's on batch=2"}
    merged = merge_proofs(report, [_proof("alpha", True, ACCEPTED), _proof("beta", False, no)],
                          config, CHANGES, head)
    [c] = merged.fixes["candidates"]
    assert not c["verified"] and c["reason"] == "outputs differ from head's on batch=2 (on `beta`)"
    assert merged.fixes["targets"][0]["reason"] == c["reason"]


def test_a_candidate_no_target_asked_for_is_left_out():
    """Shard 2 tried it on beta (its finding is on an added line), but no model broke
    there: the unsharded review has no target, so no `fixes` at all."""
    report, config, head = _report()
    report = report.with_(models=tuple(m.with_(new_breaks=()) for m in report.models))
    merged = merge_proofs(report, [_proof("beta", False, ACCEPTED)], config, CHANGES, head)
    assert merged.fixes is None
