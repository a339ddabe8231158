"""Sharded review and audit end to end: real git repo, real torch workers (eager backend).

The PR gives two models a new graph break each (and a static finding), and `alpha` a second
one, a `print` that `beta` runs only eagerly while it is built: PTC105's recipe guards the
print, and the proof tries it on `alpha` (its target) and on `beta` (which ran its lines) in
different shards, so the merged review has the unsharded review's verified fix only if each
shard proves what its models need and the merge decides on the joined verdicts. It is reviewed
once unsharded and once as a 2-job matrix (`review --shard 1/2`, `--shard 2/2`, run one
after the other as CI's jobs would run side by side); `pt2bot merge` of the two partial
directories must write what the unsharded review wrote. The per-shard wall times and the
merge time are printed (`pytest -s`) for the README's figures.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitrepo import GitRepo

pytestmark = pytest.mark.torch

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: alpha
    entry: pkg.alpha:Alpha
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
  - name: beta
    entry: pkg.beta:Beta
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
run: {backend: eager, latency: false, jobs: 2, timeout_s: 120}
fixes: {budget_s: 300}
# The compile verdict reads measured CPU seconds, which differ between any two runs: the
# comparison here is of everything else.
thresholds: {compile_regression_pct: 100000}
"""

MODEL = """\
import torch
from torch import nn

from pkg.layers import Block


class {cls}(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        x = self.block(x)
        return x.relu()
"""

LAYERS_BASE = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return self.lin(x)
"""

# The shared layer gains a `.item()` branch: both models gain the same new break. And a
# `print` in a function that alpha calls in forward (a new break there) and beta only while
# it is built (eagerly: it ran the lines, it has no break there).
LAYERS_HEAD = """\
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        x = self.lin(x)
        if x.abs().sum().item() >= 0:     # always true: the graphs do not depend on weights
            x = x + 1
        return x


def describe(h):
    print("activations",
          h.shape)
    return h
"""
PRINT = 18                 # the print's first line in pkg/layers.py
ALPHA_HEAD = MODEL.format(cls="Alpha").replace("import Block", "import Block, describe").replace(
    "        return x.relu()", "        x = describe(x)\n        return x.relu()")
BETA_HEAD = MODEL.format(cls="Beta").replace("import Block", "import Block, describe").replace(
    "        self.block = Block()", "        self.block = Block()\n"
    "        describe(torch.zeros(2, 8))")

RENDERED = ("report.json", "summary.md", "review.json", "check.json", "results.sarif")
# What differs between two runs of the same models: times, memory, dates, run-local paths.
VOLATILE = {"timings", "duration_s", "phase_s", "compile_s", "peak_mem_mb", "created",
            "max_abs_err", "bytes",    # bytes: of the structured trace (it holds times)
            # the first compile's measured CPU and wall seconds, and what is computed from
            # them; the shape advice's own seconds
            "cpu_s", "wall_s", "ratio", "note", "seconds", "steps_s",
            "spent_s"}        # the proof of fixes' wall time


def _pt2bot(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pt2bot", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)
    return proc, time.perf_counter() - t0


def _strip(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _differences(a: Any, b: Any, at: str = "") -> list[str]:
    """Where two JSON values differ, as paths (`models[1].head.export.line: 12 != None`): a
    failure names the field rather than pytest's folded "Omitting 20 identical items"."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for k in sorted(set(a) | set(b), key=str)
                for d in _differences(a.get(k), b.get(k), f"{at}.{k}" if at else str(k))]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{at}[{i}]")]
    return [] if a == b else [f"{at}: {str(a)[:200]} != {str(b)[:200]}"]


def _text(path: Path) -> str:
    """A rendered file with its one timing (the footer's "took N s") masked."""
    text = re.sub(r"took [0-9.]+ (s|min)", "took <t>", path.read_text(encoding="utf-8"))
    # and the proof of fixes' ("N s of the fix budget")
    text = re.sub(r"[0-9.]+ s of the ([0-9.]+ s)", r"<t> of the \1", text)
    # the compile line's measured CPU seconds (and the ratio and note that follow from them)
    return re.sub(r"Compile \(first call[^\n]*", "Compile <measured>", text)


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pr_repo(tmp_path_factory) -> GitRepo:
    repo = GitRepo.init(tmp_path_factory.mktemp("shard") / "repo")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/layers.py", LAYERS_BASE)
    repo.write("pkg/alpha.py", MODEL.format(cls="Alpha"))
    repo.write("pkg/beta.py", MODEL.format(cls="Beta"))
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/layers.py", LAYERS_HEAD)
    repo.write("pkg/alpha.py", ALPHA_HEAD)
    repo.write("pkg/beta.py", BETA_HEAD)
    repo.commit("pr: a host sync in the shared layer, a print in alpha's")
    return repo


@pytest.fixture(scope="module")
def runs(pr_repo, tmp_path_factory) -> dict[str, Any]:
    """The unsharded review, the two shards (one after the other) and their merge."""
    tmp = tmp_path_factory.mktemp("runs")
    out: dict[str, Any] = {"dir": tmp, "wall": {}}
    proc, out["wall"]["unsharded"] = _pt2bot("review", "--base", "main", "--out",
                                             str(tmp / "full"), cwd=pr_repo.path)
    out["full"] = proc
    for i in (1, 2):
        proc, out["wall"][f"shard {i}/2"] = _pt2bot(
            "review", "--base", "main", "--shard", f"{i}/2", "--out", str(tmp / f"s{i}"),
            cwd=pr_repo.path)
        out[f"s{i}"] = proc
    proc, out["wall"]["merge"] = _pt2bot("merge", str(tmp / "s2"), str(tmp / "s1"), "--out",
                                         str(tmp / "merged"), cwd=tmp)
    out["merged"] = proc
    print("\nsharded review wall times (s): " + ", ".join(
        f"{k} {v:.2f}" for k, v in out["wall"].items()))
    return out


def test_unsharded_review_sees_the_new_breaks_and_verifies_a_fix(runs):
    assert runs["full"].returncode == 1, runs["full"].stderr
    report = _json(runs["dir"] / "full" / "report.json")
    assert report["conclusion"] == "failure"
    assert {m["name"]: sorted(b["gb"] for b in m["new_breaks"]) for m in report["models"]} \
        == {"alpha": ["GB0059", "GB0124"], "beta": ["GB0124"]}
    verified = {c["rule"]: c for c in report["fixes"]["candidates"] if c["verified"]}
    assert sorted(verified) == ["PTC101", "PTC105"]
    # the print's guard, tried on alpha (its target) and on beta (which ran its lines)
    fix = verified["PTC105"]
    assert (fix["start_line"], fix["models"]) == (PRINT, ["alpha", "beta"])
    # the shared layer's `.item()`, only tested: the tensor selected, on both models
    item = verified["PTC101"]
    assert item["lines"] == ["        x = torch.where(x.abs().sum() >= 0, x + 1, x)"], item
    assert item["models"] == ["alpha", "beta"]
    assert report["counts"]["fixes_verified"] == 2


def test_each_shard_proves_fixes_on_its_own_models(runs):
    """Shard 2 has no target of the guard (beta has no break there) but tries it on beta,
    which ran its lines: the unsharded review does."""
    proofs = [_json(runs["dir"] / f"s{i}" / "partial.json")["fixes"] for i in (1, 2)]
    guard = [[c for c in p["candidates"] if c["rule"] == "PTC105" and c["results"]]
             for p in proofs]
    assert [list(g[0]["results"]) for g in guard] == [["alpha"], ["beta"]]
    assert all(g[0]["results"][m]["accepted"] for g, m in zip(guard, ("alpha", "beta")))
    assert guard[0][0]["by_target"] and not guard[1][0]["by_target"]


def test_each_shard_runs_its_model_and_only_shard_1_runs_static(runs):
    for i, mine in ((1, ["alpha"]), (2, ["beta"])):
        proc = runs[f"s{i}"]
        assert proc.returncode == 1, proc.stderr           # its model gained a break
        assert f"shard {i}/2: 1 of 2 selected model(s) (round-robin): {mine[0]}" in proc.stderr
        report = _json(runs["dir"] / f"s{i}" / "report.json")
        part = report["partial"]
        assert part["shard"] == f"{i}/2" and part["models"] == mine
        assert part["static"] is (i == 1)
        assert part["config_digest"] == report["config_digest"]
        assert report["summary_title"].startswith(f"partial report (shard {i}/2")
        head = _json(runs["dir"] / f"s{i}" / "head.json")
        assert [m["name"] for m in head["models"]] == mine and head["shard"] == f"{i}/2"
        other = "beta" if i == 1 else "alpha"
        assert {"name": other, "reason": f"run by shard {3 - i}/2"} in report["skipped"]
    assert "static:" in runs["s1"].stderr and "static:" not in runs["s2"].stderr
    assert _json(runs["dir"] / "s2" / "report.json")["findings"] == []
    digests = {_json(runs["dir"] / f"s{i}" / "report.json")["partial"]["selection_digest"]
               for i in (1, 2)}
    assert len(digests) == 1


def test_merged_shards_equal_the_unsharded_review(runs):
    """A review merged from its shards is the unsharded review: same report.json (minus
    timings and measured times),
    summary.md, review.json, check.json, results.sarif, base.json and head.json."""
    assert runs["merged"].returncode == 1, runs["merged"].stderr
    full, merged = runs["dir"] / "full", runs["dir"] / "merged"
    a, b = _json(full / "report.json"), _json(merged / "report.json")
    assert "partial" not in b
    assert _differences(_strip(a), _strip(b)) == []
    # the verified fixes are there, with their suggestions (the comparisons below hold them too)
    assert b["counts"]["fixes_verified"] == 2
    assert sum(c["body"].count("```suggestion") for c in _json(merged / "review.json")[
        "comments"]) == 2
    assert set(b["timings"]) >= {"smoke", "total", "merge", "shards_total", "fixes"}
    for name in RENDERED[1:]:
        assert _text(merged / name) == _text(full / name), name
    for side in ("base", "head"):
        fa, fb = _json(full / f"{side}.json"), _json(merged / f"{side}.json")
        assert fb["shard"] == "1/1"
        assert _differences(_strip(fa), _strip(fb)) == [], side
    # The partial directories' other files came along: every model's worker log.
    logs = sorted(p.name for p in merged.rglob("*.log"))
    assert logs == sorted(p.name for p in full.rglob("*.log")) and logs
    print(f"merge: {runs['wall']['merge']:.2f} s (process), "
          f"{b['timings']['merge']:.3f} s (in report.json)")


def test_export_location_is_read_from_torchs_message(runs, pr_repo):
    """Where head's export fails is read from torch's own "Caused by: (FILE:12 in forward)",
    never from draft_export, which re-traces and, on a loaded machine, sometimes located
    nothing: 1 of 11 unsharded reviews of this repo under load had export path/line/source
    None for one model, and the merged-equals-unsharded test above failed on that in CI.
    torch shortens FILE against the torch package's directory, so for a repository in a tmp
    dir it is relative to nothing on sys.path ("mp/pytest-of-.../repo/pkg/layers.py")."""
    from pt2bot.smoke.export import _caused_by
    from pt2bot.smoke.trace import RepoPaths

    for m in _json(runs["dir"] / "full" / "head.json")["models"]:
        ex = m["export"]
        assert ex["kind"] == "data_dependent" and "Caused by: (" in ex["message"], m["name"]
        assert _caused_by(ex["message"], RepoPaths(str(pr_repo.path))) == (
            "pkg/layers.py", 12, LAYERS_HEAD.splitlines()[11].strip()), m["name"]
        assert (ex["path"], ex["line"]) == ("pkg/layers.py", 12), m["name"]


def test_merge_is_order_independent(runs, tmp_path):
    proc, _ = _pt2bot("merge", str(runs["dir"] / "s1"), str(runs["dir"] / "s2"), "--out",
                      str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    for name in RENDERED[1:]:
        assert _text(tmp_path / "m" / name) == _text(runs["dir"] / "merged" / name), name
    assert _strip(_json(tmp_path / "m" / "report.json")) == \
        _strip(_json(runs["dir"] / "merged" / "report.json"))


def test_publish_refuses_a_partial_directory(runs):
    proc, _ = _pt2bot("publish", str(runs["dir"] / "s1"), cwd=runs["dir"])
    assert proc.returncode == 2
    assert "a partial report (shard 1/2): merge the shards first" in proc.stderr


def _copy_shard(runs: dict[str, Any], tmp_path: Path, i: int, name: str,
                **changes: Any) -> Path:
    dst = tmp_path / name
    shutil.copytree(runs["dir"] / f"s{i}", dst)
    data = _json(dst / "partial.json")
    data.update(changes)
    (dst / "partial.json").write_text(json.dumps(data))
    return dst


def _another_selection(data: dict[str, Any]) -> dict[str, Any]:
    """Another run's selection (one more model skipped), with its own digest: each shard's
    partial.json is checked against itself first."""
    from pt2bot.select import Selection
    from pt2bot.shard.partial import selection_digest

    sel = dict(data["selection"], skipped={**data["selection"]["skipped"], "gamma": "not run"})
    return {"selection": sel, "selection_digest": selection_digest(Selection(
        selected=tuple(sel["selected"]), skipped=sel["skipped"]))}


@pytest.mark.parametrize("key, value, message", [
    ("config_digest", "sha256:0000", "config_digest 'sha256:0000' differs"),
    ("selection", _another_selection, "selection_digest 'sha256:"),
    ("torch", "2.14.1+cpu", "torch '2.14.1+cpu' differs"),
    ("device", "cuda", "device 'cuda' differs"),
    ("head", "f" * 40, "head '" + "f" * 40 + "' differs"),
    ("shard", "2/3", "the shards disagree on N"),
    # another split gives shard 2 another model
    ("assignment", {"alpha": 2, "beta": 1}, "split the models differently"),
])
def test_merge_refuses_shards_of_another_run(runs, tmp_path, key, value, message):
    data = _json(runs["dir"] / "s2" / "partial.json")
    changes = value(data) if callable(value) else {key: value}
    if key == "assignment":
        # (its results and its proof of fixes are left out: they are beta's)
        changes.update(models=["alpha"], fixes=dict(data["fixes"], targets=[], candidates=[]))
    other = _copy_shard(runs, tmp_path, 2, "other", **changes)
    if key == "assignment":
        for side in ("head", "base"):
            (other / f"{side}.json").unlink()
    proc, _ = _pt2bot("merge", str(runs["dir"] / "s1"), str(other), "--out",
                      str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert not (tmp_path / "m" / "report.json").exists()


def test_merge_refuses_a_duplicated_shard(runs, tmp_path):
    again = _copy_shard(runs, tmp_path, 1, "again")
    proc, _ = _pt2bot("merge", str(runs["dir"] / "s1"), str(runs["dir"] / "s2"), str(again),
                      "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 2
    assert re.search(r"shard 1/2 is given twice: \S+ and \S+", proc.stderr), proc.stderr


def test_merge_refuses_a_mix_of_files_and_dirs_and_plain_dirs(runs, tmp_path):
    proc, _ = _pt2bot("merge", str(runs["dir"] / "s1"), str(runs["dir"] / "s2" / "head.json"),
                      "--out", str(tmp_path / "m"), cwd=tmp_path)
    assert proc.returncode == 2 and "not both" in proc.stderr
    proc, _ = _pt2bot("merge", str(runs["dir"] / "full"), "--out", str(tmp_path / "m"),
                      cwd=tmp_path)
    assert proc.returncode == 2 and "not a partial report directory" in proc.stderr


def test_a_missing_shard_is_reported_and_the_rest_merges(runs, tmp_path):
    proc, _ = _pt2bot("merge", str(runs["dir"] / "s1"), "--out", str(tmp_path / "m"),
                      cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr          # alpha's new break still fails it
    assert "shard 2/2 did not report: 1 model(s) reported as errors" in proc.stderr
    report = _json(tmp_path / "m" / "report.json")
    beta = next(m for m in report["models"] if m["name"] == "beta")
    assert beta["status"] == "error" and beta["reason"] == "shard 2/2 did not report"
    assert beta["problems"][0]["kind"] == "shard_missing"
    alpha = next(m for m in report["models"] if m["name"] == "alpha")
    assert sorted(b["gb"] for b in alpha["new_breaks"]) == ["GB0059", "GB0124"]
    assert report["conclusion"] == "failure"
    assert report["summary_title"].endswith("; shard 2/2 did not report")
    head = _json(tmp_path / "m" / "head.json")
    assert head["shard"] == "1/2"
    assert [m["status"] for m in head["models"]] == ["ok", "error"]


def test_an_empty_shard_is_a_valid_partial_report(runs, pr_repo, tmp_path):
    """N larger than the selection: shard 3/3 of 2 models runs nothing and says so; its
    merge alone reports the other shards' models, and the static checks, as missing."""
    proc, wall = _pt2bot("review", "--base", "main", "--shard", "3/3", "--out",
                         str(tmp_path / "s3"), cwd=pr_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "none (an empty partial report)" in proc.stderr
    report = _json(tmp_path / "s3" / "report.json")
    assert report["partial"]["empty"] is True and report["partial"]["models"] == []
    assert "has no models: 2 selected over 3 shards" in report["partial"]["note"]
    assert report["findings"] == [] and not (tmp_path / "s3" / "head.json").exists()
    for name in RENDERED:
        assert (tmp_path / "s3" / name).is_file()
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(__file__).resolve().parents[1] / "pt2bot" / "schemas" /
                         "report.schema.json").read_text())
    jsonschema.validate(report, schema)
    jsonschema.validate(_json(runs["dir"] / "s1" / "report.json"), schema)

    proc, _ = _pt2bot("merge", str(tmp_path / "s3"), "--out", str(tmp_path / "m"),
                      cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    merged = _json(tmp_path / "m" / "report.json")
    assert merged["conclusion"] == "neutral"
    assert {m["name"]: m["reason"] for m in merged["models"]} == {
        "alpha": "shard 1/3 did not report", "beta": "shard 2/3 did not report"}
    assert any(r["code"] == "shard_missing" and "static checks did not run" in r["message"]
               for r in merged["reasons"])


# The last two are attacks on commit 89ac594: an N of 10**8 made a list per shard (the
# split), 5,000 digits were a traceback. N may exceed the 2 models up to a matrix of 64.
@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "x", "1/65", "1/100000000",
                                  "1/" + "9" * 5000])
def test_a_bad_shard_is_a_usage_error(pr_repo, tmp_path, spec):
    for command in (["review", "--base", "main"], ["audit"]):
        proc, _ = _pt2bot(*command, "--shard", spec, "--out", str(tmp_path / "o"),
                          cwd=pr_repo.path)
        assert proc.returncode == 2 and "--shard: " in proc.stderr, proc.stderr
        assert "expected" in proc.stderr and len(proc.stderr) < 1000, proc.stderr
        assert not (tmp_path / "o").exists()


def test_costs_balance_the_shards(runs, pr_repo, tmp_path):
    """--costs reads per-model duration_s from a results file (here the unsharded head)."""
    costs = _json(runs["dir"] / "full" / "head.json")
    costs["models"][0]["duration_s"], costs["models"][1]["duration_s"] = 50.0, 10.0
    (tmp_path / "costs.json").write_text(json.dumps(costs))
    proc, _ = _pt2bot("review", "--base", "main", "--shard", "3/3", "--costs",
                      str(tmp_path / "costs.json"), "--out", str(tmp_path / "o"),
                      cwd=pr_repo.path)
    assert proc.returncode == 0, proc.stderr
    assert "shard 3/3: 0 of 2 selected model(s) (balanced by --costs)" in proc.stderr
    assert _json(tmp_path / "o" / "report.json")["partial"]["balanced"] == "costs"
    (tmp_path / "bad.json").write_text("{}")
    proc, _ = _pt2bot("review", "--base", "main", "--shard", "1/2", "--costs",
                      str(tmp_path / "bad.json"), "--out", str(tmp_path / "o2"),
                      cwd=pr_repo.path)
    assert proc.returncode == 2 and "--costs:" in proc.stderr and "bad.json" in proc.stderr


# ------------------------------------------------------------------ the sharded audit

def test_sharded_audit_merges_into_one_stored_night(pr_repo, tmp_path):
    pr_repo.checkout("main")
    try:
        walls = {}
        for i in (1, 2):
            proc, walls[i] = _pt2bot("audit", "--shard", f"{i}/2", "--out",
                                     str(tmp_path / f"a{i}"), cwd=pr_repo.path)
            assert proc.returncode == 0, proc.stderr
            assert "PARTIAL (shard" in proc.stdout
        history = tmp_path / "h" / "history.sqlite"
        history.parent.mkdir()
        proc, _ = _pt2bot("merge", str(tmp_path / "a1"), str(tmp_path / "a2"), "--out",
                          str(tmp_path / "audit"), cwd=tmp_path)
        assert proc.returncode == 2 and "give --history FILE" in proc.stderr
        proc, merge_s = _pt2bot("merge", str(tmp_path / "a2"), str(tmp_path / "a1"),
                                "--history", str(history), "--out", str(tmp_path / "audit"),
                                cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        print(f"\nsharded audit (s): shard 1/2 {walls[1]:.2f}, shard 2/2 {walls[2]:.2f}, "
              f"merge {merge_s:.2f}")
        report = _json(tmp_path / "audit" / "report.json")
        assert report["audit"]["runs_in_history"] == 1 and report["mode"] == "audit"
        assert sorted(m["name"] for m in report["models"]) == ["alpha", "beta"]
        assert all(m["status"] == "ok" for m in report["models"])
        assert (tmp_path / "audit" / "audit.md").is_file()
        baseline = _json(tmp_path / "audit" / report["audit"]["baseline"])
        assert [m["name"] for m in baseline["models"]] == ["alpha", "beta"]
        assert baseline["shard"] == "1/1"
    finally:
        pr_repo.checkout("pr")
