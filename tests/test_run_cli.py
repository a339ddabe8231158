"""`pt2bot run` and `pt2bot merge` end to end: a real git repo with a pt2bot.yml, the real
CLI entry point, real worker processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from pt2bot.cli import main

MODELS_PY = '''\
import os
import sys

import torch


class MLP(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))


def build_mlp(width: int = 8):
    # Output from user code must land in the model's log, never on pt2bot's console.
    print("HELLO-FROM-MODEL-STDOUT")
    print("HELLO-FROM-MODEL-STDERR", file=sys.stderr)
    return MLP(width)


def build_crash():
    os.abort()
'''

CONFIG = '''\
version: 1
models:
  - name: mlp
    entry: zoo.models:build_mlp
    kwargs: {width: 8}
    inputs:
      - {shape: [batch, 8]}
    shapes: {batch: [2, 4]}
    dynamic: [batch]
  - name: crash
    entry: zoo.models:build_crash
    inputs:
      - {shape: [2, 8]}
run: {device: cpu, backend: eager, latency: false, timeout_s: 120, jobs: 2}
'''


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    from gitrepo import GitRepo

    repo = GitRepo.init(tmp_path_factory.mktemp("zoo") / "repo")
    repo.write("zoo/__init__.py", "")
    repo.write("zoo/models.py", MODELS_PY)
    repo.write("pt2bot.yml", CONFIG)
    head = repo.commit("a tiny zoo")
    return repo, head


@pytest.fixture(scope="module")
def shard_runs(zoo, tmp_path_factory):
    """`python -m pt2bot run --shard I/2` for both shards, as CI would run them: real
    processes (side by side), their real console output. Shard 1 gets `crash`, shard 2 `mlp`
    (round-robin over the sorted names)."""
    repo, head = zoo
    tmp = tmp_path_factory.mktemp("shards")
    outs = [tmp / f"shard{i}" / "results.json" for i in (1, 2)]
    procs = [subprocess.Popen([sys.executable, "-m", "pt2bot", "run", "--config",
                               str(repo.path / "pt2bot.yml"), "--shard", f"{i}/2",
                               "--out", str(out)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=str(repo.path))
             for i, out in zip((1, 2), outs)]
    done = []
    for proc, out in zip(procs, outs):
        stdout, stderr = proc.communicate(timeout=300)
        done.append((proc.returncode, stdout, stderr, out, json.loads(out.read_text())))
    return done


def test_run_exits_0_and_records_a_crash_as_a_result(zoo, shard_runs):
    repo, head = zoo
    rc, stdout, stderr, out, results = shard_runs[0]
    assert rc == 0, stderr
    assert results["schema"] == "pt2bot.results/1"
    assert results["commit"] == head
    assert results["device"] == "cpu" and results["shard"] == "1/2"
    assert results["backend"] == "eager"
    assert [m["name"] for m in results["models"]] == ["crash"]
    err = results["models"][0]["error"]
    assert results["models"][0]["status"] == "error"
    assert (err["kind"], err["signal"]) == ("crash", "SIGABRT")
    # One status line per model, then a summary; the details stay in the results.
    assert "pt2bot run: crash: error (crash SIGABRT" in stderr
    assert "1 model(s) on cpu, 1 failed" in stderr


def test_run_of_a_clean_model(zoo, shard_runs):
    rc, stdout, stderr, out, results = shard_runs[1]
    assert rc == 0, stderr
    assert results["shard"] == "2/2"
    [mlp] = results["models"]
    assert mlp["name"] == "mlp" and mlp["status"] == "ok", mlp
    assert mlp["graph_breaks"] == [] and mlp["graph_count"] == 1
    assert "pt2bot run: mlp: ok, 0 graph break(s)" in stderr
    assert "1 model(s) on cpu, 0 failed" in stderr


def test_user_output_goes_to_the_model_log_not_the_console(shard_runs):
    rc, stdout, stderr, out, results = shard_runs[1]
    assert stdout == ""
    assert "HELLO-FROM-MODEL" not in stderr
    log = (out.parent / "logs" / "mlp.log").read_text(errors="replace")
    assert "HELLO-FROM-MODEL-STDOUT" in log and "HELLO-FROM-MODEL-STDERR" in log


def test_shards_merge_into_every_configured_model(zoo, shard_runs, tmp_path, capsys):
    paths = [str(run[3]) for run in shard_runs]
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *reversed(paths), "--out", str(merged_path)]) == 0
    merged = json.loads(merged_path.read_text())
    assert merged["shard"] == "1/1"
    assert [(m["name"], m["status"]) for m in merged["models"]] == [("crash", "error"),
                                                                      ("mlp", "ok")]
    assert merged["config_digest"] == shard_runs[0][4]["config_digest"]
    assert "2 model(s) from 2 file(s)" in capsys.readouterr().err
    # The same shard twice is a duplicate, not a silent overwrite.
    assert main(["merge", paths[0], paths[0], "--out", str(tmp_path / "dup.json")]) == 2
    assert "is in both" in capsys.readouterr().err


def test_unknown_model_is_a_usage_error_listing_the_known_ones(zoo, tmp_path, capsys):
    repo, _ = zoo
    rc = main(["run", "--config", str(repo.path / "pt2bot.yml"), "--model", "mlpp",
               "--out", str(tmp_path / "r.json")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "unknown model 'mlpp'" in err and "known models: mlp, crash" in err
    assert not (tmp_path / "r.json").exists()


# The last three are attacks on commit 89ac594: N beyond the models (2 here) or the largest
# matrix (64) ran as a shard, its results then hung `pt2bot merge`; 5,000 digits were a
# traceback (Python's limit on int() of a string).
@pytest.mark.parametrize("shard", ["0/2", "3/2", "x", "1/65", "1/100000000", "1/" + "9" * 5000])
def test_bad_shard_is_a_usage_error(zoo, tmp_path, capsys, shard):
    repo, _ = zoo
    rc = main(["run", "--config", str(repo.path / "pt2bot.yml"), "--shard", shard,
               "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert rc == 2 and "--shard" in err and len(err) < 1000, err
    assert not (tmp_path / "r.json").exists()


def test_missing_config_and_bad_merge_inputs_are_usage_errors(tmp_path, capsys):
    assert main(["run", "--config", str(tmp_path / "nope.yml"), "--out",
                 str(tmp_path / "r.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert main(["merge", str(bad), "--out", str(tmp_path / "m.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err


# --------------------------------------------------------------------------- the repository root

def test_config_outside_the_repository_runs_the_repository_of_the_working_directory(
        zoo, tmp_path, monkeypatch, capsys):
    # `pt2bot run --config ../cfg.yml`: the worker imports from the git root of the working
    # directory (as `pt2bot review` does), not from the directory the config lives in.
    repo, head = zoo
    cfg = repo.path.parent / "outside.yml"
    cfg.write_text(CONFIG.replace("jobs: 2", "jobs: 1").split("  - name: crash")[0]
                   + "run: {device: cpu, backend: eager, latency: false, timeout_s: 120}\n")
    monkeypatch.chdir(repo.path / "zoo")          # anywhere inside the work tree
    out = tmp_path / "r.json"
    rc = main(["run", "--config", os.path.relpath(cfg), "--out", str(out)])
    err = capsys.readouterr().err
    results = json.loads(out.read_text())
    [mlp] = results["models"]
    assert (rc, mlp["status"]) == (0, "ok"), (err, mlp.get("error"))
    assert results["commit"] == head
    assert "zoo/models.py" in mlp["coverage"]     # paths relative to the repository root


def test_every_model_failing_to_import_is_exit_2_with_the_reason(zoo, tmp_path, monkeypatch,
                                                                 capsys):
    repo, _ = zoo
    cfg = tmp_path / "missing.yml"
    cfg.write_text(CONFIG.replace("zoo.models:build_mlp", "zoo.nothere:build_mlp")
                   .replace("zoo.models:build_crash", "zoo.gone:build_crash"))
    monkeypatch.chdir(repo.path)
    out = tmp_path / "r.json"
    rc = main(["run", "--config", str(cfg), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    # the results are still written: the failures are data, and the summary says what failed
    results = json.loads(out.read_text())
    assert {m["error"]["kind"] for m in results["models"]} == {"import"}
    last = err.strip().splitlines()[-1]
    assert last.startswith("pt2bot: error: no model could be imported (2 of 2)"), err
    assert f"PYTHONPATH={repo.path}" in last and 'module "zoo.' in last


def test_a_config_with_no_model_is_exit_2_not_a_green_run(zoo, tmp_path, monkeypatch, capsys):
    # init's `models: []` (nothing it could build) run as it is: "0 model(s) on cpu, 0
    # failed" and exit 0 read as a run that passed
    repo, _ = zoo
    cfg = tmp_path / "empty.yml"
    cfg.write_text("version: 1\nmodels: []\n")
    monkeypatch.chdir(repo.path)
    out = tmp_path / "r.json"
    rc = main(["run", "--config", str(cfg), "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert json.loads(out.read_text())["models"] == []
    assert err.strip().splitlines()[-1].startswith("pt2bot: error: pt2bot.yml configures no model (`models: []`)")


def test_a_crash_beside_an_import_failure_is_a_result_exit_0(zoo, tmp_path, monkeypatch,
                                                             capsys):
    repo, _ = zoo
    cfg = tmp_path / "mixed.yml"
    cfg.write_text(CONFIG.replace("zoo.models:build_mlp", "zoo.nothere:build_mlp"))
    monkeypatch.chdir(repo.path)
    rc = main(["run", "--config", str(cfg), "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "2 model(s) on cpu, 2 failed (1 crash, 1 import)" in err


GATED_PY = '''\
import torch


class Gated(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        if self.training and (h > 100).any():
            raise ValueError("activations out of range in training")
        return h
'''


def test_a_model_with_train_is_run_in_training_mode(tmp_path):
    """nanoGPT compiles its model for training: a check only `self.training` takes breaks the
    graph there and nowhere in eval. `train: true` builds the model in training mode, so the
    run records that break; without it, eval mode, none."""
    from gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "repo")
    repo.write("net/__init__.py", "")
    repo.write("net/gated.py", GATED_PY)
    model = ("  - name: {name}\n    entry: net.gated:Gated\n    inputs: [{{shape: [batch, 8]}}]\n"
             "    shapes: {{batch: [2]}}\n    export: false\n")
    repo.write("pt2bot.yml", "version: 1\nmodels:\n" + model.format(name="inference")
               + model.format(name="training") + "    train: true\n"
               + "run: {device: cpu, backend: eager, latency: false, timeout_s: 120}\n")
    repo.commit("a gated model")
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "pt2bot", "run", "--config", str(repo.path / "pt2bot.yml"),
                           "--out", str(out)], capture_output=True, text=True, cwd=str(repo.path), timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = {m["name"]: m for m in json.loads(out.read_text())["models"]}
    assert runs["inference"]["status"] == "ok" and runs["inference"]["graph_breaks"] == []
    [brk] = runs["training"]["graph_breaks"]
    assert (brk["gb"], brk["path"], brk["line"]) == ("GB0170", "net/gated.py", 11), brk


@pytest.mark.torch
def test_a_run_in_the_repository_root_leaves_no_change_for_the_review(tmp_path, monkeypatch, capsys):
    """The README's first run, `pt2bot run --out results.json` from the repository's root,
    wrote `logs/` and `compile/` there: the review of the PR after it began "+ working tree
    (21 uncommitted file(s)): 22 changed file(s)" for a one-line PR (a new user's trial on
    mamba-minimal). The directories pt2bot creates ignore themselves, and an untracked
    results file of pt2bot's is not one of the PR's changes; a JSON file of the user's is."""
    from gitrepo import GitRepo

    from pt2bot.changes import diff_changes

    repo = GitRepo.init(tmp_path / "repo")
    repo.write("zoo/__init__.py", "")
    repo.write("zoo/models.py", MODELS_PY)
    repo.write("pt2bot.yml", CONFIG.replace("jobs: 2", "jobs: 1"))
    head = repo.commit("a tiny zoo")
    monkeypatch.chdir(repo.path)
    assert main(["run", "--model", "mlp", "--out", "results.json"]) == 0, capsys.readouterr().err
    assert (repo.path / "logs" / "mlp.log").is_file()
    assert (repo.path / "compile" / "mlp" / "head").is_dir()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                            cwd=repo.path, capture_output=True, text=True, check=True).stdout
    assert status.splitlines() == ["?? results.json"]
    assert diff_changes(repo.path, head).files == {}
    repo.write("data/scores.json", '{"schema": "mine/1"}\n')
    assert set(diff_changes(repo.path, head).files) == {"data/scores.json"}
    # a `logs/` of the user's own that a run writes into gets no ignore file: it would hide
    # the user's files
    (repo.path / "mine" / "logs").mkdir(parents=True)
    (repo.path / "mine" / "logs" / "notes.txt").write_text("the user's\n")
    assert main(["run", "--model", "mlp", "--out", "mine/results.json"]) == 0
    assert (repo.path / "mine" / "logs" / "mlp.log").is_file()
    assert not (repo.path / "mine" / "logs" / ".gitignore").exists()
    assert (repo.path / "mine" / "compile" / ".gitignore").is_file()
    assert "mine/logs/notes.txt" in diff_changes(repo.path, head).files
