"""The nightly audit proves fixes for its own findings (pt2bot/fixes.py `prove_audit`).

No diff: the whole tree is "the PR". A model's graph break on a line that a static finding
flags is a target; the finding's recipe offers candidate edits, proven as a review proves
them (one proof worker per model, eager backend, head side by side with the patch). The
verified ones go into the audit's report.json (`fixes`) and audit.md (with the lines and
what was verified), never posted as suggestions. A sharded audit (one model per shard here)
proves in its shards and decides at the merge, to the same `fixes`. Real git repo, real
torch workers.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import escape

import cmarkgfm
import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.findings import Finding
from pt2bot.fixes import ProofSetting, audit_targets, prove_audit
from pt2bot.results import GraphBreak, ModelRun, ResultsFile
# the model with a two-line print in forward (FIRST..LAST), and the guard PTC105's recipe
# offers for it
from test_fix_proof_e2e import FIRST, GUARDED, LAST
from test_fix_proof_e2e import HEAD as SCALER

CONFIG = """\
version: 1
static: {paths: [pkg/], filter: nofilter}
models:
  - name: scaler
    entry: pkg.scaler:Scaler
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
  - name: twin
    entry: pkg.scaler:Scaler
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
run: {backend: eager, latency: false, timeout_s: 240}
fixes: {budget_s: 200}
"""

def _pt2bot(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    return subprocess.run([sys.executable, "-m", "pt2bot", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    """The audit of a tree with a print in forward: unsharded, and as 2 shards merged."""
    from gitrepo import GitRepo

    tmp = tmp_path_factory.mktemp("auditfix")
    repo = GitRepo.init(tmp / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/scaler.py", SCALER)
    repo.commit("a print in forward")
    proc = _pt2bot("audit", "--history", str(tmp / "h.db"), "--out", str(tmp / "full"),
                   cwd=repo.path)
    assert proc.returncode == 0, proc.stderr
    for i in (1, 2):
        proc = _pt2bot("audit", "--shard", f"{i}/2", "--out", str(tmp / f"s{i}"),
                       cwd=repo.path)
        assert proc.returncode == 0, proc.stderr
    proc = _pt2bot("merge", str(tmp / "s1"), str(tmp / "s2"), "--history",
                   str(tmp / "hm.db"), "--out", str(tmp / "merged"), cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    return repo, tmp


def _report(d) -> dict:
    return json.loads((d / "report.json").read_text(encoding="utf-8"))


@pytest.mark.torch
def test_the_audit_verifies_a_fix_for_its_own_finding(audited):
    repo, tmp = audited
    out = tmp / "full"
    report = _report(out)
    fixes = report["fixes"]
    assert [(t["kind"], t["model"], t["path"], t["line"], t["gb"])
            for t in fixes["targets"]] == [("break", m, "pkg/scaler.py", FIRST, "GB0059")
                                           for m in ("scaler", "twin")]
    [fix] = [c for c in fixes["candidates"] if c["verified"]]
    assert [t["fixed_by"] for t in fixes["targets"]] == [fix["id"]] * 2
    assert fix["models"] == ["scaler", "twin"]
    assert (fix["rule"], fix["start_line"], fix["end_line"], fix["lines"]) == \
        ("PTC105", FIRST, LAST, GUARDED)
    assert fix["evidence"].startswith("verified on `scaler`: GB0059 gone, 1 graph instead of 2")
    assert report["counts"]["fixes_verified"] == 1
    assert report["audit"]["clean"] is True     # a fix to offer is not a problem of the night
    # audit.md: the fix's lines and what was verified, rendered as GitHub would
    html = cmarkgfm.github_flavored_markdown_to_html((out / "audit.md").read_text("utf-8"))
    section = html[html.index("Verified fixes"):]
    assert "1 verified fix for 2 of 2 graph breaks" in section
    assert "GB0059 gone" in section
    code = re.search(r'<pre lang="python"><code>(.*?)</code></pre>', section, re.S).group(1)
    assert code.rstrip("\n").split("\n") == [
        line.replace('"', "&quot;") for line in GUARDED]
    # report.html, where a cut audit.md sends the reader, has it too (escaped)
    page = (out / "report.html").read_text("utf-8")
    section = page[page.index("<h2>Verified fixes</h2>"):]
    assert "1 verified fix for 2 of 2 graph breaks" in section and "GB0059 gone" in section
    pre = re.search(r"<pre>(.*?)</pre>", section, re.S).group(1)
    assert pre.split("\n") == [escape(line, quote=True) for line in GUARDED]
    # the checkout is never written: the patch lives in the proof worker's memory
    assert (repo.path / "pkg" / "scaler.py").read_text() == SCALER


@pytest.mark.torch
def test_the_sharded_audit_has_the_same_fixes(audited):
    """Each shard proved the guard on its one model (partial.json `fixes`); the merge
    decided on both verdicts: the unsharded audit's `fixes`, up to the seconds spent."""
    _, tmp = audited
    for i, model in ((1, "scaler"), (2, "twin")):
        proof = json.loads((tmp / f"s{i}" / "partial.json").read_text())["fixes"]
        assert [t["model"] for t in proof["targets"]] == [model]
        assert any(c["results"].get(model, {}).get("accepted") for c in proof["candidates"])
    full, merged = _report(tmp / "full"), _report(tmp / "merged")
    for r in (full, merged):
        r["fixes"].pop("spent_s")
    assert merged["fixes"] == full["fixes"]
    assert merged["counts"]["fixes_verified"] == 1
    assert "### Verified fixes" in (tmp / "merged" / "audit.md").read_text("utf-8")


def _results(*runs: ModelRun) -> ResultsFile:
    return ResultsFile(commit="a" * 40, models=runs)


PRINT = Finding(rule="PTC105", path="pkg/scaler.py", line=FIRST, end_line=LAST, col=8,
                severity="error", message="print", source='print("activations",',
                function="Scaler.forward")
BREAK = GraphBreak(gb="GB0059", gb_type="Failed to trace builtin operator",
                   path="pkg/scaler.py", line=FIRST)


def test_targets_are_breaks_on_a_finding_line_of_models_that_ran():
    other = GraphBreak(gb="GB0124", gb_type="item", path="pkg/scaler.py", line=20)
    failed = ModelRun.empty("broken", "error").with_(graph_breaks=(BREAK,))
    ok = ModelRun.empty("scaler").with_(graph_breaks=(BREAK, other, BREAK))
    assert [(t["model"], t["line"], t["gb"]) for t in audit_targets(
        _results(ok, failed), [PRINT])] == [("scaler", FIRST, "GB0059")]
    assert audit_targets(_results(ok), []) == []


def test_verify_false_turns_the_audits_proof_off(tmp_path):
    """Nothing is started (no checkout is even read) when `fixes.verify` is off, though a
    break lies on the finding's line."""
    config = build_config(CONFIG.replace("fixes: {budget_s: 200}", "fixes: {verify: false}"),
                          str(tmp_path / "pt2bot.yml"))
    results = _results(ModelRun.empty("scaler").with_(graph_breaks=(BREAK,)))
    assert audit_targets(results, [PRINT])
    setting = ProofSetting(config=config, changeset=None, root=str(tmp_path / "nowhere"),
                           head_sha=None, head_results=results)
    assert prove_audit(results, [PRINT], setting) is None
