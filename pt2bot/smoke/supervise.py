"""Running one model's worker under supervision, and turning every way it ends into a RUN.

Each model runs in `python -m pt2bot.smoke.worker SPEC OUT` in its own process group (it
leads its own session), with a hard timeout that kills the whole group, a cap on what it
may write to its log, and its output sent to a per-model log file. Whatever happens to the
worker (a segfault, a hang, the OOM killer, an import error, a worker bug) becomes a
`ModelRun` with `status: error|timeout` and `error.kind` (`classify_exit`), so one bad
model never takes the run down. Torch-free: the parent never imports torch.
"""
from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from pt2bot.config import ModelConfig
from pt2bot.results import ERROR_KINDS, STATUSES, ModelRun, PhaseError, RunError
from pt2bot.smoke.forkserver import MAINS, ForkedProcess, ForkServer
from pt2bot.smoke.location import RepoPaths, text_location

WORKER_ARGV: tuple[str, ...] = ("-m", "pt2bot.smoke.worker")

LOG_CAP_BYTES = 64 * 1024 * 1024    # a worker writing more than this is stopped
OUT_CAP_BYTES = 32 * 1024 * 1024    # the most of a worker's RUN JSON we read back
TAIL_BYTES = 64 * 1024              # how much of the log end we read for error messages
MESSAGE_CHARS = 4000                # the log tail kept in error.message
TERM_GRACE_S = 2.0                  # SIGTERM → SIGKILL grace when stopping a worker
POLL_S = 0.1


# --------------------------------------------------------------------------- process groups

def _oom_kills() -> int | None:
    """This cgroup's OOM-kill counter (v2 memory.events or v1 memory.oom_control), if readable."""
    for path, key in (("/sys/fs/cgroup/memory.events", "oom_kill"),
                      ("/sys/fs/cgroup/memory/memory.oom_control", "oom_kill")):
        try:
            with open(path, encoding="ascii") as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key:
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return None


def _kill_group(pgid: int, sig: int) -> bool:
    """Signal the process group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in a process group; via /proc where there is one.

    A killed worker's children are reparented and may sit as zombies until something reaps
    them; they hold no resources, so they do not count as alive.
    """
    if not os.path.isdir("/proc/self"):
        return [pgid] if _kill_group(pgid, 0) else []
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        # "pid (comm) state ppid pgrp ...": comm may contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 3 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry))
    return members


def process_alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped does not; via /proc where there
    is one)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2:].split()[:1] not in (["Z"], ["X"], [])


def _group_alive(pgid: int) -> bool:
    return bool(group_members(pgid))


def _pidfd(pid: int) -> int | None:
    """A pidfd for the worker (Linux 5.3+), so its exit wakes us at once instead of a poll."""
    try:
        return os.pidfd_open(pid)   # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None


def _wait_exit(proc: subprocess.Popen, pidfd: int | None, timeout: float) -> None:
    """Wait up to `timeout` for the worker to exit (it is reaped by the next poll())."""
    if pidfd is None:
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        return
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    poller.poll(timeout * 1000)


def _stop_group(proc: subprocess.Popen, pgid: int) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a short grace."""
    _kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + TERM_GRACE_S
    while time.monotonic() < deadline and _group_alive(pgid):
        if proc.poll() is None:
            try:
                proc.wait(timeout=POLL_S)
            except subprocess.TimeoutExpired:
                pass
        else:
            time.sleep(POLL_S)
    _kill_group(pgid, signal.SIGKILL)
    proc.wait()
    _await_group_exit(pgid)


def _await_group_exit(pgid: int, timeout_s: float = TERM_GRACE_S) -> None:
    """SIGKILL is delivered at once but a process takes a moment to die: wait for that, so
    that when a model's run returns, nothing of its worker is still running."""
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.01)


def read_tail(path: str, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of a file as text (never the whole of a huge log)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            data = fh.read(limit)
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if size > limit:
        text = text.split("\n", 1)[-1]   # drop the partial first line
    return text


# --------------------------------------------------------------------------- exit classification

def _short_tail(text: str, chars: int = MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= chars else "…" + text[-chars:]


def _message(header: str, tail: str) -> str:
    """`header` in full, then as much of the log's end as fits in MESSAGE_CHARS."""
    header = header[:MESSAGE_CHARS // 2]
    tail = _short_tail(tail, MESSAGE_CHARS - len(header) - 2) if tail.strip() else ""
    return f"{header}\n{tail}" if tail else header


_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b(?::.*)?$", re.M)




def classify_exit(returncode: int, tail: str, *, repo_root: str, oom_before: int | None,
                  oom_after: int | None) -> RunError:
    """The `error` of a worker that exited without a usable result."""
    path, line = text_location(tail, RepoPaths(repo_root))
    if returncode < 0:
        sig = -returncode
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = f"signal {sig}"
        if sig == signal.SIGKILL and oom_before is not None and oom_after is not None \
                and oom_after > oom_before:
            return RunError(kind="oom", signal=signame, path=path, line=line,
                            message=_message("killed by the kernel's OOM killer (SIGKILL)", tail))
        hint = " (maybe the OOM killer)" if sig == signal.SIGKILL else ""
        return RunError(kind="crash", signal=signame, path=path, line=line,
                        message=_message(f"worker died with {signame}{hint}", tail))
    exc = None
    for m in _EXC_LINE.finditer(tail):
        exc = m.group("type")
    kind = "exception"
    if exc and exc.rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError", "SyntaxError",
                                          "IndentationError", "TabError"):
        kind = "import"
    elif exc and exc.rsplit(".", 1)[-1] == "MemoryError":
        kind = "oom"
    return RunError(kind=kind, path=path, line=line,
                    message=_message(f"worker exited with code {returncode} and no result", tail))


def read_run(out_path: str) -> ModelRun | str:
    """The worker's RUN, or a string saying why it cannot be used."""
    try:
        size = os.path.getsize(out_path)
    except OSError:
        return "the worker wrote no result"
    if size > OUT_CAP_BYTES:
        return f"the worker's result is {size} bytes, over the {OUT_CAP_BYTES}-byte cap"
    try:
        with open(out_path, encoding="utf-8") as fh:
            run = json.load(fh)
    except (OSError, ValueError) as e:
        return f"the worker's result is not valid JSON: {e}"
    if not isinstance(run, dict):
        return "the worker's result is not a JSON object"
    if run.get("status") not in STATUSES:
        return f"the worker's result has an invalid status {run.get('status')!r}"
    return ModelRun.from_json(run)


class WorkerGroups:
    """The process groups of the workers now running, so an interrupted run can kill them.

    Workers lead their own sessions (a Ctrl-C or a CI cancel does not reach them), so the
    parent must take them down itself when it stops early.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pgids: set[int] = set()
        self.cancelled = False

    def add(self, pgid: int) -> None:
        with self._lock:
            self._pgids.add(pgid)
            cancelled = self.cancelled
        if cancelled:   # started just as the run was interrupted: do not let it live on
            _kill_group(pgid, signal.SIGKILL)

    def discard(self, pgid: int) -> None:
        with self._lock:
            self._pgids.discard(pgid)

    def kill_all(self) -> None:
        with self._lock:
            self.cancelled = True
            pgids = list(self._pgids)
        for pgid in pgids:
            _kill_group(pgid, signal.SIGKILL)


@dataclass(frozen=True)
class WorkerJob:
    """Everything needed to run one model in a worker process."""
    model: ModelConfig
    spec: dict[str, Any]
    spec_path: str
    out_path: str
    log_path: str
    log_rel: str
    timeout_s: float
    env: dict[str, str]
    cwd: str


def forked_main(worker_argv: Sequence[str]) -> str | None:
    """The fork server's main for `worker_argv` (`-m MODULE`), or None: spawn it."""
    argv = tuple(worker_argv)
    return argv[1] if len(argv) == 2 and argv[0] == "-m" and argv[1] in MAINS else None


def run_worker(job: WorkerJob, *, python: str = sys.executable,
               worker_argv: Sequence[str] = WORKER_ARGV,
               groups: WorkerGroups | None = None,
               started: Callable[[str, int], None] | None = None,
               server: ForkServer | None = None) -> ModelRun:
    """Run one model in its own process group and map every outcome to a RUN.

    `started(name, pid)` is called once the worker runs; its pid is also its process group.
    With `server`, the worker is forked from it (pt2bot/smoke/forkserver.py; `worker_argv`
    must be `-m` and one of its MAINS), else spawned as `python WORKER_ARGV SPEC OUT`; a server that cannot fork says why in the model's log,
    and the worker is spawned.
    """
    name = job.model.name
    if groups is not None and groups.cancelled:
        return _failed_run(name, "error", RunError(kind="exception",
                                                   message="the run was interrupted"),
                           job.log_rel, 0.0)
    with open(job.spec_path, "w", encoding="utf-8") as fh:
        json.dump(job.spec, fh)
    oom_before = _oom_kills()
    start = time.monotonic()
    proc: subprocess.Popen | ForkedProcess | None = None
    main = forked_main(worker_argv)
    if server is not None and main is not None:
        got = server.launch(spec_path=job.spec_path, out_path=job.out_path,
                            log_path=job.log_path, cwd=job.cwd,
                            pythonpath=job.env.get("PYTHONPATH"), main=main,
                            cancelled=lambda: groups is not None and groups.cancelled)
        if isinstance(got, ForkedProcess):
            proc = got
        elif groups is not None and groups.cancelled:
            return _failed_run(name, "error", RunError(kind="exception",
                                                       message="the run was interrupted"),
                               job.log_rel, 0.0)
        else:
            with open(job.log_path, "a", encoding="utf-8") as log:
                log.write(f"pt2bot: the worker is spawned, not forked: {got}\n")
    if proc is None:
        # O_APPEND: the worker may open the same log file for its own logging.
        with open(job.log_path, "ab") as log:
            try:
                proc = subprocess.Popen([python, *worker_argv, job.spec_path, job.out_path],
                                        cwd=job.cwd, env=job.env, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
            except OSError as e:
                return _failed_run(name, "error", RunError(
                    kind="exception", message=f"cannot start the worker: {e}"),
                    job.log_rel, 0.0)
    pgid = proc.pid   # the worker leads its own session, so its own group
    deadline = start + job.timeout_s
    stopped: str | None = None
    # a forked worker is not our child: its exit arrives from the server (proc.wait)
    pidfd = _pidfd(proc.pid) if isinstance(proc, subprocess.Popen) else None
    try:
        if groups is not None:
            groups.add(pgid)
        if started is not None:
            started(name, pgid)
        while proc.poll() is None:
            if time.monotonic() >= deadline:
                stopped = "timeout"
                break
            try:
                if os.path.getsize(job.log_path) > LOG_CAP_BYTES:
                    stopped = "output"
                    break
            except OSError:
                pass
            _wait_exit(proc, pidfd, min(0.25, max(0.01, deadline - time.monotonic())))
    finally:
        if pidfd is not None:
            os.close(pidfd)
        if stopped or proc.poll() is None:
            _stop_group(proc, pgid)
        else:
            # The worker is gone; stray children (compile pools, user threads) may not be.
            if _kill_group(pgid, signal.SIGKILL):
                _await_group_exit(pgid)
        if groups is not None:
            groups.discard(pgid)
    duration = time.monotonic() - start
    tail = read_tail(job.log_path)
    if stopped == "timeout":
        path, line = text_location(tail, RepoPaths(job.cwd))
        return _failed_run(name, "timeout", RunError(
            kind="timeout", path=path, line=line,
            message=_message(f"no result after {job.timeout_s:g} s; the worker's process "
                             f"group was killed", tail)), job.log_rel, duration)
    if stopped == "output":
        return _failed_run(name, "error", RunError(
            kind="exception",
            message=_message(f"the worker wrote more than {LOG_CAP_BYTES} bytes of output "
                             f"and was stopped", tail)), job.log_rel, duration)
    rc = proc.returncode
    lost = isinstance(proc, ForkedProcess) and proc.lost
    # The worker writes its result atomically as its last act, so a result that is there is
    # complete even when the process then died (some native libraries crash at exit).
    run = read_run(job.out_path)
    if isinstance(run, ModelRun):
        run = normalise_run(run, name=name, log_rel=job.log_rel, duration_s=duration)
        if rc != 0 and not lost:
            late = classify_exit(rc, tail, repo_root=job.cwd, oom_before=None, oom_after=None)
            run = run.with_(phase_errors=(*run.phase_errors, PhaseError(
                phase="exit", kind=late.kind,
                message=f"the worker exited with {late.signal or f'code {rc}'} "
                        f"after writing its result")))
        return run
    if lost:
        path, line = text_location(tail, RepoPaths(job.cwd))
        return _failed_run(name, "error", RunError(
            kind="crash", path=path, line=line,
            message=_message(f"the fork server died while the worker ran ({proc.lost_reason}); "
                             f"the worker was killed and its exit status is unknown", tail)),
            job.log_rel, duration)
    error = classify_exit(rc, tail, repo_root=job.cwd, oom_before=oom_before,
                          oom_after=_oom_kills())
    if rc == 0:   # exit 0 but no usable result: a worker bug, say so
        error = error.with_(message=_message(run, tail))
    return _failed_run(name, "error", error, job.log_rel, duration)


def _failed_run(name: str, status: str, error: RunError, log_rel: str,
                duration_s: float) -> ModelRun:
    return ModelRun.empty(name, status, error=error, log=log_rel, duration_s=duration_s)


def normalise_run(run: ModelRun | dict[str, Any], *, name: str, log_rel: str,
                  duration_s: float) -> ModelRun:
    """Trust the worker's RUN, but pin the fields the runner owns."""
    run = ModelRun.coerce(run)
    pinned: dict[str, Any] = {"log": log_rel}
    if run.name != name:
        pinned["name"] = name
    if run.duration_s is None and "duration_s" not in run.extra:
        pinned["duration_s"] = round(duration_s, 3)
    if run.key_order is not None and "reason" not in run.key_order:
        pinned["reason"] = None
    if run.failed:
        err = run.error
        if err is None:
            raw = run.extra.get("error")
            err = RunError(kind="exception", message=str(raw) if raw else "no detail given")
        if err.kind not in ERROR_KINDS:
            err = err.with_(kind="exception")
        pinned["error"] = err
        return run.with_(**pinned)
    return run.with_(**pinned).without("error")


__all__ = ["LOG_CAP_BYTES", "MESSAGE_CHARS", "OUT_CAP_BYTES", "TAIL_BYTES", "TERM_GRACE_S",
           "WORKER_ARGV", "WorkerGroups", "WorkerJob", "classify_exit", "group_members",
           "forked_main", "normalise_run", "process_alive", "read_run", "read_tail", "run_worker"]
