"""A cancelled CI job (SIGTERM) ends `pt2bot review` and `pt2bot audit` with their workers.

Workers lead their own sessions, so a signal to the command never reaches them: the command
itself must take them down. Each test starts the real command on a real git repository whose
model writes its worker's pid and then sleeps, sends SIGTERM once that pid is known, and checks
that the worker process (and the fork server it came from, if any) is gone within seconds (not
the model's 300 s timeout).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitrepo import GitRepo
from pt2bot.smoke.supervise import process_alive

pytestmark = pytest.mark.torch

REPO_TOP = str(Path(__file__).resolve().parents[1])

SLEEPER = """\
import os
import time

from torch import nn


class Sleeper(nn.Module):
    def __init__(self, pidfile):
        super().__init__()
        with open(pidfile, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        while True:
            time.sleep(1)
"""


def _config(pidfile: Path) -> str:
    return f"""\
version: 1
static: {{paths: [pkg/]}}
models:
  - name: sleeper
    entry: pkg.sleeper:Sleeper
    kwargs: {{pidfile: "{pidfile}"}}
    inputs: [{{name: x, shape: [2, 4]}}]
    export: false
run: {{backend: eager, latency: false, timeout_s: 300, threads: 1}}
"""


def _ppid(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        stat = fh.read()
    return int(stat[stat.rfind(")") + 2:].split()[1])


def _repo(tmp_path: Path) -> tuple[GitRepo, Path]:
    pidfile = tmp_path / "pids"
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pt2bot.yml", _config(pidfile))
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/sleeper.py", SLEEPER)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/sleeper.py", SLEEPER.replace("self.lin = nn.Linear(4, 4)",
                                                 "self.lin = nn.Linear(4, 4)  # touched"))
    repo.commit("pr")
    return repo, pidfile


def _terminate_once_a_worker_runs(cmd: list[str], cwd: Path, pidfile: Path,
                                  tmp_path: Path) -> tuple[int, list[int], str]:
    env = {**os.environ, "PYTHONPATH": REPO_TOP,
           "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "inductor")}
    log = open(tmp_path / "pt2bot.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "pt2bot", *cmd], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while not (pidfile.exists() and pidfile.read_text().strip()):
            assert proc.poll() is None, (tmp_path / "pt2bot.log").read_text()
            assert time.monotonic() < deadline, "no worker built the model"
            time.sleep(0.05)
        time.sleep(0.3)   # the worker is now in forward, sleeping
        pids = [int(p) for p in pidfile.read_text().split()]
        assert all(process_alive(p) for p in pids)
        # a worker forked by a fork server (pt2bot/smoke/forkserver.py): the server must go too
        pids += [pp for pp in {_ppid(p) for p in pids} if pp != proc.pid]
        proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
        gone_by = time.monotonic() + 5
        while any(process_alive(p) for p in pids) and time.monotonic() < gone_by:
            time.sleep(0.05)
        return (rc, [p for p in pids if process_alive(p)],
                (tmp_path / "pt2bot.log").read_text())
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        for pid in [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []:
            if process_alive(pid):   # never leave a sleeping worker behind, even on failure
                os.kill(pid, signal.SIGKILL)


def test_sigterm_to_review_ends_its_workers(tmp_path):
    repo, pidfile = _repo(tmp_path)
    rc, alive, log = _terminate_once_a_worker_runs(
        ["review", "--base", "main", "--out", str(tmp_path / "out"), "--device", "cpu"],
        repo.path, pidfile, tmp_path)
    assert alive == [], f"workers outlived `pt2bot review`: {alive}\n{log}"
    assert rc == 128 + signal.SIGTERM, log
    # the base worktree the review made is cleaned up on the way out
    assert len(repo.git("worktree", "list").splitlines()) == 1, repo.git("worktree", "list")


def test_sigterm_to_audit_ends_its_workers(tmp_path):
    repo, pidfile = _repo(tmp_path)
    rc, alive, log = _terminate_once_a_worker_runs(
        ["audit", "--history", str(tmp_path / "history.db"), "--out", str(tmp_path / "out"),
         "--device", "cpu"], repo.path, pidfile, tmp_path)
    assert alive == [], f"workers outlived `pt2bot audit`: {alive}\n{log}"
    assert rc == 128 + signal.SIGTERM, log
