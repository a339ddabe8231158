"""`pt2bot merge` under attack: partial report directories a fork's pull request wrote.

In a sharded pull request, every shard job runs the PR's code and uploads its directory;
the merge job joins them. It holds no token, but it must still end cleanly on whatever a
shard wrote: a located error (exit 2, no traceback) or a merged report, never a hang, never
a workflow command in its log, and never the history database of a review's merge.

Each test is an attack as it was tried on commit 89ac594, where it got through, unless its
docstring says it held already. The shards are written by the shard code itself
(tests/partialdirs.py), then edited as an attacker would; nothing here needs torch or git.
"""
from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from partialdirs import HEAD, write_shards
from pt2bot.cli import main
from pt2bot.results import ModelRun, ResultsFile

ROOT = Path(__file__).resolve().parents[1]
# Workflow commands: `::cmd::` at the start of a line, `##[cmd]` anywhere in one.
EVIL = "##[error]forged ##[add-mask]hunter2\n::error::forged\n::stop-commands::tok"


def edit(d: Path, change) -> None:
    path = d / "partial.json"
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def merge_cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The real `pt2bot merge` in a subprocess (real exit code, real log, a time limit)."""
    return subprocess.run([sys.executable, "-m", "pt2bot", "merge", *args], cwd=cwd,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "PYTHONIOENCODING": "utf-8"},
                          capture_output=True, text=True, timeout=timeout)


def assert_log_inert(text: str) -> None:
    """No workflow command can start anywhere in the log."""
    assert "##[" not in text, text[-2000:]
    for line in text.splitlines():
        assert not line.lstrip().startswith("::"), line


def test_the_honest_shards_merge(tmp_path):
    """Not an attack: what the attacks below start from."""
    dirs = write_shards(tmp_path)
    proc = merge_cli(*map(str, dirs), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "m" / "report.json").read_text())
    assert [m["name"] for m in report["models"]] == ["alpha", "beta"]
    assert [f["rule"] for f in report["findings"]] == ["PTC201"]


# ------------------------------------------------------------------ 1. N: hangs and crashes

def test_a_huge_shard_count_is_refused_not_waited_on(tmp_path):
    """`"shard": "1/100000000"`: the merge counted the missing shards one by one."""
    [s1, _] = write_shards(tmp_path)
    edit(s1, lambda d: d.update(shard="1/100000000"))
    proc = merge_cli(str(s1), "--out", "m", cwd=tmp_path, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{s1}/partial.json: shard:" in proc.stderr
    assert "100000000" in proc.stderr and "2 selected model(s)" in proc.stderr, proc.stderr
    assert not (tmp_path / "m").exists()


def test_a_5000_digit_shard_count_is_a_located_error(tmp_path):
    [s1, s2] = write_shards(tmp_path)
    for d, i in ((s1, 1), (s2, 2)):
        edit(d, lambda data, i=i: data.update(shard=f"{i}/" + "9" * 5000))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path, timeout=30)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{s1}/partial.json: shard:" in proc.stderr and "expected I/N" in proc.stderr
    assert len(proc.stderr) < 1000, proc.stderr       # the value is quoted, capped


def test_more_shards_than_models_up_to_a_full_matrix_still_merge(tmp_path):
    """Not an attack: a matrix of 8 for a PR that selects 2 models leaves 6 empty shards."""
    dirs = write_shards(tmp_path, count=8)
    proc = merge_cli(*map(str, dirs), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("count", ["1000000000000", "9" * 5000])
def test_results_files_with_a_hostile_shard_merge(tmp_path, count):
    """`pt2bot merge A.json B.json`: the merged file's `shard` said "1/1" only after listing
    1..N (a list of 10**12 numbers), and a 5000-digit N was a traceback."""
    files = []
    for i, name in enumerate(("alpha", "beta"), 1):
        f = tmp_path / f"r{i}.json"
        f.write_text(json.dumps(ResultsFile(
            commit=HEAD, torch="2.13.0", device="cpu", shard=f"{i}/{count}",
            models=(ModelRun.empty(name),)).to_json()))
        files.append(str(f))
    proc = merge_cli(*files, "--out", "all.json", cwd=tmp_path, timeout=30)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    merged = json.loads((tmp_path / "all.json").read_text())
    assert [m["name"] for m in merged["models"]] == ["alpha", "beta"]


# ------------------------------------------------ 2. every malformed value: a located error

GOOD_FINDING = {"rule": "PTC201", "path": "pkg/m.py", "line": 3, "col": 4,
                "severity": "warning", "message": "m"}
HOSTILE = [None, True, -1, 0, 2 ** 63, 10 ** 4000, 1.5, float("inf"), "", EVIL, "1/2",
           [], [None], [[1, 2]], {}, {"a": None}, {"x": [1]}]
# Where in partial.json (a dotted path; a number is a list index). Each is set to every value
# of HOSTILE in every shard alike (so the shards still agree and the value gets far).
KEYS = ["mode", "shard", "config_digest", "selection_digest", "base", "head", "torch",
        "device", "backend", "config", "config.path", "config.text", "selection",
        "selection.selected", "selection.selected.0", "selection.skipped",
        "selection.skipped.alpha", "selection.reasons", "selection.reasons.alpha",
        "assignment", "assignment.alpha", "models", "static", "findings", "findings.head",
        "findings.head.0", "findings.head.0.line", "findings.head.0.path",
        "findings.head.0.severity", "findings.head.0.hints", "findings.head.0.reached_by",
        "findings.head.0.diff", "findings.head.0.new", "findings.head.0.smoke",
        "findings.head.0.smoke.status", "changes", "changes.base",
        "changes.files", "changes.files.0", "changes.files.0.path",
        "changes.files.0.added_lines", "changes.files.0.hunks", "changes.files.0.hunks.0",
        "changes.files.0.context_pairs", "changes.files.0.similarity", "timings",
        "timings.total", "timings.static", "fixes", "fixes.budget_s", "fixes.spent_s",
        "fixes.targets", "fixes.targets.0", "fixes.targets.0.kind", "fixes.targets.0.model",
        "fixes.targets.0.line", "fixes.targets.0.reason", "fixes.candidates",
        "fixes.candidates.0", "fixes.candidates.0.rule", "fixes.candidates.0.start_line",
        "fixes.candidates.0.end_line", "fixes.candidates.0.lines",
        "fixes.candidates.0.lines.0", "fixes.candidates.0.safe", "fixes.candidates.0.rank",
        "fixes.candidates.0.by_target", "fixes.candidates.0.by_target.0",
        "fixes.candidates.0.by_target.0.0", "fixes.candidates.0.results",
        "fixes.candidates.0.results.m", "fixes.candidates.0.results.m.accepted",
        "fixes.candidates.0.results.m.evidence"]


def proof(model: str) -> dict[str, Any]:
    """A shard's proof of fixes (pt2bot/fixes.py `prove_shard`): one target on its model,
    one candidate accepted there."""
    return {"budget_s": 300.0, "spent_s": 4.5,
            "targets": [{"kind": "break", "model": model, "path": "pkg/m.py", "line": 3,
                         "gb": "GB0124", "gb_type": "Unsupported Tensor.item() call",
                         "fingerprint": "f" * 16, "reason": None}],
            "candidates": [{"rule": "PTC201", "title": "keep it a tensor", "path": "pkg/m.py",
                            "start_line": 3, "end_line": 3, "lines": ["    y = x"],
                            "safe": False, "guards": [], "rank": 0,
                            "by_target": [[0, ["0" * 16]]],
                            "results": {model: {"accepted": True, "reason": None,
                                                "evidence": "GB0124 gone"}}}]}


def _set(data: Any, dotted: str, value: Any) -> None:
    """data[dotted] = value; nothing where a parent is absent (shard 2 has no findings)."""
    *parents, last = dotted.split(".")
    for k in parents:
        if k == "m" and isinstance(data, dict) and len(data) == 1:
            k = next(iter(data))        # "m": the one model a verdict is on, in each shard
        data = data[int(k)] if isinstance(data, list) else data.get(k)
        if data is None:
            return
    if isinstance(data, list):
        data[int(last)] = value
    else:
        data[last] = value


@pytest.fixture(scope="module")
def honest(tmp_path_factory) -> tuple[Path, list[dict[str, Any]]]:
    root = tmp_path_factory.mktemp("honest")
    dirs = write_shards(root)
    datas = [json.loads((d / "partial.json").read_text()) for d in dirs]
    for data in datas:       # each shard proved a candidate on its model
        [model] = data["models"]
        data["fixes"] = proof(model)
    return root, datas


@pytest.mark.parametrize("key", KEYS)
def test_every_malformed_value_is_a_located_error(honest, tmp_path, capsys, key):
    """Each key of partial.json set to each hostile value: the merge (in this process, so an
    exception other than `UserError` is caught here) ends with exit 0, 1 or 2; a refusal names
    the shard's file, and no line of its log starts a workflow command."""
    root, datas = honest
    problems: list[str] = []
    for k, value in enumerate(HOSTILE):
        case = tmp_path / f"v{k}"
        dirs = []
        for i, data in enumerate(datas, 1):
            d = case / f"pt2bot-shard-{i}"
            shutil.copytree(root / f"pt2bot-shard-{i}", d)
            data = copy.deepcopy(data)
            _set(data, key, value)
            (d / "partial.json").write_text(json.dumps(data))
            dirs.append(str(d))
        shown = f"{key} = {str(value)[:40]!r}"
        try:
            rc = main(["merge", *dirs, "--out", str(case / "m")])
        except Exception as e:      # noqa: BLE001 - what the attack is about
            problems.append(f"{shown}: {type(e).__name__}: {str(e)[:200]}")
            continue
        out = capsys.readouterr()
        log = out.out + out.err
        if rc not in (0, 1, 2):
            problems.append(f"{shown}: exit {rc}")
        if "##[" in log or any(ln.lstrip().startswith("::") for ln in log.splitlines()):
            problems.append(f"{shown}: a workflow command in the log: {log[-300:]!r}")
        if rc == 2 and not ("partial.json" in out.err or "pt2bot-shard-" in out.err):
            problems.append(f"{shown}: not located: {out.err[-300:]!r}")
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("change, message", [
    # a verdict on a model another shard ran: it would decide for that shard
    (lambda d, m: d.update(fixes=dict(proof(m), candidates=[dict(
        proof(m)["candidates"][0], results={"beta" if m == "alpha" else "alpha": {
            "accepted": True}})])),
     "results['{other}']: expected a verdict on one of this shard's models"),
    (lambda d, m: d.update(fixes=dict(proof(m), targets=[dict(
        proof(m)["targets"][0], model="beta" if m == "alpha" else "alpha")])),
     "fixes.targets[0].model: expected one of this shard's models"),
    # the proof left out while the config has it on: the suggestions would vanish unsaid
    (lambda d, m: d.update(fixes=None), "fixes: expected the shard's proof of fixes"),
    (lambda d, m: d.pop("fixes"), "fixes: missing"),
    # a shard of a pt2bot before the proof in shards
    (lambda d, m: d.update(schema="pt2bot.partial/1"), "schema: expected 'pt2bot.partial/2'"),
])
def test_a_bad_proof_of_fixes_is_refused(tmp_path, change, message):
    [s1, s2] = write_shards(tmp_path)
    edit(s2, lambda d: change(d, "beta"))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message.format(other="alpha") in proc.stderr and str(s2) in proc.stderr, proc.stderr
    assert not (tmp_path / "m" / "report.json").exists()


def test_results_of_a_model_the_shard_was_not_given_are_refused(tmp_path):
    """Shard 2's head.json reports `gamma`, selected nowhere: it was merged into the report
    as if it had been run."""
    [s1, s2] = write_shards(tmp_path)
    results = json.loads((s2 / "head.json").read_text())
    results["models"].append(dict(results["models"][0], name="gamma"))
    (s2 / "head.json").write_text(json.dumps(results))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert f"{s2}/head.json: models: 'gamma' is not one of this shard's models" in proc.stderr


# ------------------------------------------------------------ 3. the merge job's log

@pytest.mark.parametrize("name", ["##[error]forged", "x\n::error::forged", "::error::forged"])
def test_hostile_file_names_in_a_shard_start_no_command(tmp_path, name):
    """A shard's other files are copied; the ones refused (a symlink) or differing between
    shards are named in the log."""
    [s1, s2] = write_shards(tmp_path)
    os.symlink("/etc/hostname", s1 / name)
    (s1 / "logs").mkdir()
    (s2 / "logs").mkdir()
    (s1 / "logs" / name).write_text("one")
    (s2 / "logs" / name).write_text("two")
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "not a regular file" in proc.stderr and "differs between shards" in proc.stderr
    assert "forged" in proc.stderr                    # reported, but inert
    assert_log_inert(proc.stdout + proc.stderr)
    assert (tmp_path / "m" / "logs" / name).read_text() == "one"
    assert not (tmp_path / "m" / name).exists()


def test_hostile_values_in_an_error_start_no_command(tmp_path):
    """A refusal quotes the shard's values (a model name, the torch version)."""
    [s1, s2] = write_shards(tmp_path)
    edit(s2, lambda d: d.update(torch=EVIL))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 2 and "torch" in proc.stderr, proc.stderr
    assert_log_inert(proc.stdout + proc.stderr)
    edit(s2, lambda d: d["assignment"].update({EVIL: 7}))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 2 and "assignment" in proc.stderr, proc.stderr
    assert_log_inert(proc.stdout + proc.stderr)


def test_hostile_model_names_in_the_merged_log_start_no_command(tmp_path):
    """The selection's names reach the report and the line the merge prints last (held
    already: no line printed a name; kept for the lines that might)."""
    [s1, s2] = write_shards(tmp_path)
    evil = "evil ##[error]x"

    def rename(d: dict[str, Any]) -> None:
        d["selection"]["selected"] = ["alpha", evil]
        d["selection"]["reasons"] = {"alpha": EVIL, evil: EVIL}
        d["assignment"] = {"alpha": 1, evil: 2}
        if d["shard"] == "2/2":
            d["models"] = [evil]
    for d in (s1, s2):
        edit(d, rename)
    results = json.loads((s2 / "head.json").read_text())
    results["models"][0]["name"] = evil
    results["models"][0]["status"] = "error"
    for side in ("head", "base"):
        (s2 / f"{side}.json").write_text(json.dumps(results))
    proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
    assert proc.returncode in (0, 1, 2) and "Traceback" not in proc.stderr, proc.stderr
    assert_log_inert(proc.stdout + proc.stderr)


def test_a_deeply_nested_shard_directory_is_not_a_traceback(tmp_path):
    """os.walk recursed once per level: 1,500 nested directories were a RecursionError."""
    [s1, s2] = write_shards(tmp_path)
    deep = s1 / "logs"
    try:
        for _ in range(1501):    # not os.makedirs: it recurses per level too
            deep.mkdir()
            deep = deep / "d"
        deep = deep.parent
        (deep / "f.txt").write_text("x")
        proc = merge_cli(str(s1), str(s2), "--out", "m", cwd=tmp_path)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert "nested deeper than" in proc.stderr
    finally:   # shutil.rmtree (and so pytest's clean-up) recurses per level as well
        for top in (s1 / "logs", tmp_path / "m" / "logs"):
            remove_tree(top)


def remove_tree(top: Path) -> None:
    """Remove a directory tree of any depth, without recursion."""
    if not top.exists():
        return
    stack, seen = [str(top)], []
    while stack:
        d = stack.pop()
        seen.append(d)
        with os.scandir(d) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    os.unlink(e.path)
    for d in reversed(seen):
        os.rmdir(d)


# ------------------------------------------------------- 4. modes: the history of a review

def test_audit_shards_do_not_write_the_history_of_a_review_merge(tmp_path):
    """Held already on the command line: the pull request's shards say `mode: audit`, and a
    merge without --history refuses them. The attack got through the action, which passed
    --history to every merge (tests/test_workflows.py has it); --history now says the shards
    are an audit's, and a review's merge is given none."""
    dirs = write_shards(tmp_path, mode="audit")
    proc = merge_cli(*map(str, dirs), "--out", "m", cwd=tmp_path)
    assert proc.returncode == 2 and "shards of an audit" in proc.stderr, proc.stderr
    assert not (tmp_path / "m").exists()


def test_review_shards_with_history_are_refused(tmp_path):
    dirs = write_shards(tmp_path)
    history = tmp_path / "h" / "history.sqlite"
    proc = merge_cli(*map(str, dirs), "--out", "m", "--history", str(history), cwd=tmp_path)
    assert proc.returncode == 2 and "shards of a review" in proc.stderr, proc.stderr
    assert not history.exists() and not (tmp_path / "m").exists()


def test_review_and_audit_shards_together_are_refused(tmp_path):
    """Held already (every shard must agree on `mode`); kept with the others."""
    [r1, _] = write_shards(tmp_path / "r")
    [_, a2] = write_shards(tmp_path / "a", mode="audit")
    history = tmp_path / "h" / "history.sqlite"
    for extra in ([], ["--history", str(history)]):
        proc = merge_cli(str(r1), str(a2), "--out", "m", *extra, cwd=tmp_path)
        assert proc.returncode == 2 and "mode" in proc.stderr, proc.stderr
    assert not history.exists()
