"""Workers forked from a server that has imported torch (pt2bot/smoke/forkserver.py).

Real processes, real torch: the runner's workers are the server's children, and everything
that goes wrong around a fork stays with one model: a server that dies, a worker that ignores
SIGTERM, a model that leaves threads, memory and patched modules behind, a server that finds
itself with threads (fork unsafe). Each is an error with a reason or a clean run, the other
models go on, and nothing hangs.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from pt2bot.config import Config, InputSpec, ModelConfig, RunConfig
from pt2bot.smoke import forkserver, run_models, supervise
from pt2bot.smoke.env import scrub_env
from pt2bot.smoke.runner import build_jobs

pytestmark = [pytest.mark.torch, pytest.mark.slow]

TINY = (InputSpec(shape=(2, 4)),)

MODELS_PY = """\
import json
import os
import signal
import sys
import threading
import time

from torch import nn


class Lin(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return self.lin(x)


def _note(path, **data):
    with open(path, "a") as fh:
        fh.write(json.dumps({"pid": os.getpid(), "ppid": os.getppid(), "file": __file__,
                             "cwd": os.getcwd(), **data}) + "\\n")


def sleeper(note):
    _note(note)
    while True:
        time.sleep(1)


def quick(note):
    _note(note)
    return Lin()


def deaf(note):
    # ignores the supervisor's SIGTERM: only the SIGKILL after the grace ends it
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _note(note)
    while True:
        time.sleep(1)


def leaky(note):
    # leaves a thread, memory and a patched module behind, then returns a working model
    threading.Thread(target=lambda: time.sleep(600), daemon=False).start()
    json._pt2bot_leak = bytearray(64 * 1024 * 1024)
    _note(note, threads=threading.active_count())
    return Lin()


def probe(note):
    _note(note, threads=threading.active_count(), leaked=hasattr(json, "_pt2bot_leak"),
          torch_preloaded="torch" in sys.modules)
    return Lin()
"""


@pytest.fixture(scope="module")
def shared_root(tmp_path_factory) -> Path:
    """One repository for the tests that run through the runner: they share its fork server
    (one import of torch), the way a review's runs do."""
    return _repo(tmp_path_factory.mktemp("forkserver"))


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "models.py").write_text(MODELS_PY)
    return root


def _notes(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _model(name: str, factory: str, note: Path, **kw) -> ModelConfig:
    return ModelConfig(name, f"pkg.models:{factory}", inputs=TINY, kwargs={"note": str(note)},
                       export=False, **kw)


def _config(*models: ModelConfig, timeout_s: float = 120) -> Config:
    return Config(models=models, run=RunConfig(device="cpu", backend="eager", timeout_s=timeout_s,
                                               threads=1, latency=False, jobs=1))


def test_workers_are_forked_from_the_server_and_a_leaky_model_leaves_the_next_clean(shared_root,
                                                                                   tmp_path):
    root, note = shared_root, tmp_path / "notes"
    config = _config(_model("a_leaky", "leaky", note), _model("b_probe", "probe", note))
    pids: dict[str, int] = {}
    res = run_models(config, repo_root=str(root), out_dir=str(tmp_path / "out"), device="cpu",
                     phases=["breaks"], started=pids.__setitem__)
    runs = {m.name: m for m in res.models}
    assert runs["a_leaky"].ok and runs["b_probe"].ok, res.to_json()
    leaky, probe = _notes(note)
    # forked: the worker's parent is the server, not this process, and torch came preloaded
    assert leaky["ppid"] == probe["ppid"] != os.getpid()
    assert probe["torch_preloaded"] is True
    assert leaky["threads"] >= 2
    # what the first model left behind (a thread, 64 MiB, a patched module) is not in the next
    assert probe["threads"] == 1 and probe["leaked"] is False
    # and its process, thread included, is gone
    assert not supervise.process_alive(pids["a_leaky"])
    assert supervise.group_members(pids["a_leaky"]) == []


def test_two_repositories_share_one_server_and_each_worker_imports_its_own(shared_root,
                                                                         tmp_path):
    # a review's head and base: two worktrees, one server (its environment has no PYTHONPATH)
    other, note = _repo(tmp_path), tmp_path / "notes"
    for root in (shared_root, other):
        res = run_models(_config(_model("q", "quick", note)), repo_root=str(root),
                         out_dir=str(tmp_path / "out" / root.parent.name), device="cpu",
                         phases=["breaks"])
        assert res.models[0].ok, res.to_json()
    first, second = _notes(note)
    assert first["ppid"] == second["ppid"] != os.getpid()
    assert first["file"] == str(shared_root / "pkg" / "models.py")
    assert second["file"] == str(other / "pkg" / "models.py")
    assert (first["cwd"], second["cwd"]) == (str(shared_root), str(other))


def test_spawn_mode_starts_each_worker_from_the_runner(shared_root, tmp_path, monkeypatch):
    monkeypatch.setenv(forkserver.MODE_ENV, "spawn")
    root, note = shared_root, tmp_path / "notes"
    res = run_models(_config(_model("q", "quick", note)), repo_root=str(root),
                     out_dir=str(tmp_path / "out"), device="cpu", phases=["breaks"])
    assert res.models[0].ok
    [n] = _notes(note)
    assert n["ppid"] == os.getpid()


def test_a_forked_worker_that_ignores_sigterm_is_killed_at_its_timeout(shared_root, tmp_path):
    root, note = shared_root, tmp_path / "notes"
    pids: dict[str, int] = {}
    res = run_models(_config(_model("deaf", "deaf", note, timeout_s=10.0)), repo_root=str(root),
                     out_dir=str(tmp_path / "out"), device="cpu", phases=["breaks"],
                     started=pids.__setitem__)
    [run] = res.models
    assert (run.status, run.error.kind) == ("timeout", "timeout")
    assert _notes(note), "the model never ran"
    assert not supervise.process_alive(pids["deaf"]) and supervise.group_members(pids["deaf"]) == []


def test_a_server_that_dies_fails_its_running_model_with_a_reason_and_the_next_runs(shared_root,
                                                                                   tmp_path):
    # last of the tests that share the server: it kills it
    root, note = shared_root, tmp_path / "notes"
    config = _config(_model("a_sleeper", "sleeper", note), _model("b_quick", "quick", note),
                     timeout_s=300)
    pids: dict[str, int] = {}

    def kill_the_server(name: str, pid: int) -> None:
        pids[name] = pid
        if name != "a_sleeper":
            return

        def later() -> None:
            deadline = time.monotonic() + 120
            while not _notes(note) and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(_notes(note)[0]["ppid"], signal.SIGKILL)
        threading.Thread(target=later, daemon=True).start()

    start = time.monotonic()
    res = run_models(config, repo_root=str(root), out_dir=str(tmp_path / "out"), device="cpu",
                     phases=["breaks"], started=kill_the_server)
    assert time.monotonic() - start < 200            # not the sleeper's 300 s timeout
    runs = {m.name: m for m in res.models}
    err = runs["a_sleeper"].error
    assert runs["a_sleeper"].status == "error" and err is not None and err.kind == "crash"
    assert "the fork server died" in err.message and "SIGKILL" in err.message
    assert not supervise.process_alive(pids["a_sleeper"])
    assert runs["b_quick"].ok, runs["b_quick"].to_json()
    log = (tmp_path / "out" / "logs" / "b_quick.log").read_text()
    assert "spawned, not forked: the fork server exited with SIGKILL" in log


def test_a_server_with_threads_refuses_to_fork_and_the_worker_is_spawned(tmp_path):
    # A preloaded module that starts a thread makes fork unsafe: the server says so.
    root, note = _repo(tmp_path), tmp_path / "notes"
    (root / "starts_a_thread.py").write_text(
        "import threading, time\nthreading.Thread(target=time.sleep, args=(600,), "
        "daemon=True).start()\n")
    config = _config(_model("q", "quick", note))
    env = scrub_env(os.environ, repo_root=str(root), threads=1)
    server = forkserver.ForkServer(sys.executable, env, str(root), ("starts_a_thread",),
                                   str(tmp_path / "srv"))
    try:
        [job] = build_jobs(config, config.models, repo_root=str(root),
                           out_dir=str(tmp_path / "out"), work_dir=str(tmp_path),
                           device="cpu", phases=["breaks"], environ=os.environ)
        run = supervise.run_worker(job, server=server)
    finally:
        server.close()
    assert run.ok, run.to_json()
    assert "refused to fork: 2 threads" in (tmp_path / "out" / "logs" / "q.log").read_text()
    assert _notes(note)[0]["ppid"] == os.getpid()     # spawned by us


def test_the_server_ends_when_the_runner_closes_it_and_kills_what_it_still_runs(tmp_path):
    root, note = _repo(tmp_path), tmp_path / "notes"
    config = _config(_model("s", "sleeper", note, timeout_s=300.0))
    env = scrub_env(os.environ, repo_root=str(root), threads=1)
    server = forkserver.ForkServer(sys.executable, env, str(root), (), str(tmp_path / "srv"))
    [job] = build_jobs(config, config.models, repo_root=str(root), out_dir=str(tmp_path / "out"),
                       work_dir=str(tmp_path), device="cpu", phases=["breaks"],
                       environ=os.environ)
    with open(job.spec_path, "w") as fh:
        json.dump(job.spec, fh)
    proc = server.launch(spec_path=job.spec_path, out_path=job.out_path, log_path=job.log_path,
                         cwd=job.cwd)
    assert isinstance(proc, forkserver.ForkedProcess)
    deadline = time.monotonic() + 120
    while not _notes(note):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    server.close()
    assert server.proc.returncode is not None
    gone_by = time.monotonic() + 5
    while supervise.process_alive(proc.pid) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not supervise.process_alive(proc.pid)


def test_an_interrupted_run_does_not_wait_for_a_server_still_importing(tmp_path):
    root, note = _repo(tmp_path), tmp_path / "notes"
    (root / "slow_import.py").write_text("import time\ntime.sleep(600)\n")
    env = scrub_env(os.environ, repo_root=str(root), threads=1)
    server = forkserver.ForkServer(sys.executable, env, str(root), ("slow_import",),
                                   str(tmp_path / "srv"))
    start = time.monotonic()
    try:
        got = server.launch(spec_path="s", out_path="o", log_path=str(tmp_path / "log"),
                            cwd=str(root), cancelled=lambda: time.monotonic() - start > 0.5)
    finally:
        server.close()
    assert got == "the run was interrupted"
    assert time.monotonic() - start < 5
    assert server.proc.returncode is not None and not _notes(note)


def test_a_child_runs_only_one_of_the_worker_mains(tmp_path):
    """A request naming another module is refused in the child, with the reason in its log."""
    assert supervise.forked_main(("-m", "pt2bot.smoke.verify")) == "pt2bot.smoke.verify"
    assert supervise.forked_main(("-m", "pt2bot.smoke.worker")) == "pt2bot.smoke.worker"
    assert supervise.forked_main(("-m", "os")) is None
    assert supervise.forked_main(("-c", "pass")) is None
    root, note = _repo(tmp_path), tmp_path / "notes"
    config = _config(_model("s", "sleeper", note, timeout_s=300.0))
    env = scrub_env(os.environ, repo_root=str(root), threads=1)
    server = forkserver.ForkServer(sys.executable, env, str(root), (), str(tmp_path / "srv"))
    try:
        [job] = build_jobs(config, config.models, repo_root=str(root),
                           out_dir=str(tmp_path / "out"), work_dir=str(tmp_path), device="cpu",
                           phases=["breaks"], environ=os.environ)
        with open(job.spec_path, "w") as fh:
            json.dump(job.spec, fh)
        proc = server.launch(spec_path=job.spec_path, out_path=job.out_path,
                             log_path=job.log_path, cwd=job.cwd, main="os")
        assert isinstance(proc, forkserver.ForkedProcess)
        assert proc.wait(timeout=120) not in (None, 0)
        assert "not 'os'" in Path(job.log_path).read_text()
        assert not _notes(note)          # the model never ran
    finally:
        server.close()
