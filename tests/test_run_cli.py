"""`pt2bot run` and `pt2bot merge` end to end: a real git repo with a pt2bot.yml, the real
CLI entry point, real worker processes."""
from __future__ import annotations

import json
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
def full_run(zoo, tmp_path_factory):
    """`python -m pt2bot run` as a user runs it: a real process, its real console output."""
    repo, head = zoo
    out = tmp_path_factory.mktemp("run") / "results.json"
    proc = subprocess.run([sys.executable, "-m", "pt2bot", "run", "--config",
                           str(repo.path / "pt2bot.yml"), "--out", str(out)],
                          capture_output=True, text=True, cwd=str(repo.path), timeout=300)
    return proc, json.loads(out.read_text()), out


pytestmark = [pytest.mark.torch, pytest.mark.slow]


def test_run_writes_results_and_exits_0_even_when_a_model_crashed(zoo, full_run):
    repo, head = zoo
    proc, results, out = full_run
    assert proc.returncode == 0, proc.stderr
    stderr = proc.stderr
    assert results["schema"] == "pt2bot.results/1"
    assert results["commit"] == head
    assert results["device"] == "cpu" and results["shard"] == "1/1"
    assert results["backend"] == "eager"
    runs = {m["name"]: m for m in results["models"]}
    assert [m["name"] for m in results["models"]] == ["crash", "mlp"]
    assert runs["mlp"]["status"] == "ok", runs["mlp"]
    assert runs["mlp"]["graph_breaks"] == []
    assert runs["crash"]["status"] == "error"
    assert (runs["crash"]["error"]["kind"], runs["crash"]["error"]["signal"]) == ("crash", "SIGABRT")
    # One status line per model, then a summary; the details stay in the results.
    assert "pt2bot run: mlp: ok" in stderr
    assert "pt2bot run: crash: error (crash SIGABRT" in stderr
    assert "2 model(s) on cpu, 1 failed" in stderr


def test_user_output_goes_to_the_model_log_not_the_console(full_run):
    proc, results, out = full_run
    assert "HELLO-FROM-MODEL" not in proc.stdout + proc.stderr
    assert proc.stdout == ""
    log = (out.parent / "logs" / "mlp.log").read_text(errors="replace")
    assert "HELLO-FROM-MODEL-STDOUT" in log and "HELLO-FROM-MODEL-STDERR" in log


def test_shards_merge_back_into_the_full_run(zoo, full_run, tmp_path, capsys):
    repo, head = zoo
    _, full, _ = full_run
    cfg = str(repo.path / "pt2bot.yml")
    paths = []
    for i in (1, 2):
        p = tmp_path / f"shard{i}" / "results.json"
        assert main(["run", "--config", cfg, "--shard", f"{i}/2", "--out", str(p)]) == 0
        part = json.loads(p.read_text())
        assert part["shard"] == f"{i}/2" and len(part["models"]) == 1
        paths.append(str(p))
    merged_path = tmp_path / "merged.json"
    assert main(["merge", *paths, "--out", str(merged_path)]) == 0
    merged = json.loads(merged_path.read_text())
    assert merged["shard"] == "1/1"
    assert [(m["name"], m["status"]) for m in merged["models"]] == \
        [(m["name"], m["status"]) for m in full["models"]]
    assert merged["config_digest"] == full["config_digest"]
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


@pytest.mark.parametrize("shard", ["0/2", "3/2", "x"])
def test_bad_shard_is_a_usage_error(zoo, tmp_path, capsys, shard):
    repo, _ = zoo
    rc = main(["run", "--config", str(repo.path / "pt2bot.yml"), "--shard", shard,
               "--out", str(tmp_path / "r.json")])
    assert rc == 2 and "--shard" in capsys.readouterr().err


def test_missing_config_and_bad_merge_inputs_are_usage_errors(tmp_path, capsys):
    assert main(["run", "--config", str(tmp_path / "nope.yml"), "--out",
                 str(tmp_path / "r.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    assert main(["merge", str(bad), "--out", str(tmp_path / "m.json")]) == 2
    assert "not valid JSON" in capsys.readouterr().err
