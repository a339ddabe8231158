"""The smoke-run runner: one isolated worker process per model, sharding, merging.

The parent never imports torch. Each model runs in `python -m pt2bot.smoke.worker SPEC OUT`
in its own process group, with a scrubbed environment, a hard timeout that kills the whole
group, and its output sent to a per-model log file. Whatever happens to the worker (a
segfault, a hang, the OOM killer, an import error, a worker bug) becomes a RUN dict with
`status: error|timeout` and `error.kind`, so one bad model never takes the run down.

Parallel runs (`run.jobs > 1`) are safe but, on CPU, models running side by side compete
for cores and memory bandwidth: latency figures from a parallel CPU run are noisier and
slower than from a serial one. Keep `jobs: 1` when latency matters on CPU.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from pt2bot.config import Config, ModelConfig
from pt2bot.errors import UserError
from pt2bot.jsonio import write_json
from pt2bot.smoke.env import scrub_env

RESULTS_SCHEMA = "pt2bot.results/1"
PHASES = ("breaks", "matrix", "export", "latency")
STATUSES = ("ok", "error", "timeout", "skipped")
ERROR_KINDS = ("import", "crash", "oom", "timeout", "input", "exception")
WORKER_ARGV: tuple[str, ...] = ("-m", "pt2bot.smoke.worker")

LOG_CAP_BYTES = 64 * 1024 * 1024    # a worker writing more than this is stopped
OUT_CAP_BYTES = 32 * 1024 * 1024    # the most of a worker's RUN JSON we read back
TAIL_BYTES = 64 * 1024              # how much of the log end we read for error messages
MESSAGE_CHARS = 4000                # the log tail kept in error.message
TERM_GRACE_S = 2.0                  # SIGTERM → SIGKILL grace when stopping a worker
POLL_S = 0.1

# --------------------------------------------------------------------------- selection

def pick_models(config: Config, names: Sequence[str] | None = None) -> list[ModelConfig]:
    """The configured models named in `names` (all when None), in config order."""
    if names is None:
        return list(config.models)
    known = [m.name for m in config.models]
    unknown = [n for n in names if n not in known]
    if unknown:
        listing = ", ".join(known) if known else "(none configured)"
        raise UserError(f"unknown model {', '.join(map(repr, unknown))}; known models: {listing}")
    wanted = set(names)
    return [m for m in config.models if m.name in wanted]


def parse_shard(shard: str | tuple[int, int] | None) -> tuple[int, int]:
    """`"I/N"` (1-based) → (I, N); None → (1, 1)."""
    if shard is None:
        return (1, 1)
    if isinstance(shard, tuple):
        i, n = shard
    else:
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(shard))
        if not m:
            raise UserError(f"--shard: expected I/N such as 1/4, got {shard!r}")
        i, n = int(m.group(1)), int(m.group(2))
    if n < 1 or not 1 <= i <= n:
        raise UserError(f"--shard: expected 1 <= I <= N, got {i}/{n}")
    return (i, n)


def shard_models(models: Sequence[ModelConfig], index: int, count: int) -> list[ModelConfig]:
    """Shard `index` of `count` (1-based): round-robin over the models sorted by name.

    Deterministic (depends only on the names) and balanced (shard sizes differ by at most
    one). Every shard of a CI matrix sees the same config, so the shards partition it.
    """
    ordered = sorted(models, key=lambda m: m.name)
    return [m for k, m in enumerate(ordered) if k % count == index - 1]


# --------------------------------------------------------------------------- device / metadata

@dataclass(frozen=True)
class DeviceInfo:
    device: str          # "cpu" | "cuda"
    name: str | None     # "NVIDIA H200", "Intel(R) Xeon(R) ..."


def _cpu_name() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or None


def _may_have_cuda() -> bool:
    """Cheap pre-check so CPU-only machines skip the 2-4 s torch-import probe."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")
            or shutil.which("nvidia-smi") is not None)


def _probe_cuda(env: Mapping[str, str], timeout_s: float = 180.0) -> str | None:
    """The CUDA device name when torch in a child process sees one, else None."""
    code = ("import json, torch\n"
            "ok = torch.cuda.is_available()\n"
            "print(json.dumps({'cuda': ok, 'name': torch.cuda.get_device_name(0) if ok else None}))\n")
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=dict(env), capture_output=True,
                              text=True, timeout=timeout_s)
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        return None
    return info["name"] if info.get("cuda") else None


def resolve_device(requested: str | None, env: Mapping[str, str]) -> DeviceInfo:
    """`auto` → cuda when a child process sees a GPU, else cpu. `cuda` without one: UserError."""
    requested = requested or "auto"
    if requested not in ("auto", "cpu", "cuda"):
        raise UserError(f"--device: expected auto, cpu or cuda, got {requested!r}")
    if requested == "cpu":
        return DeviceInfo("cpu", _cpu_name())
    name = _probe_cuda(env) if _may_have_cuda() else None
    if name is not None:
        return DeviceInfo("cuda", name)
    if requested == "cuda":
        raise UserError("--device cuda: no CUDA device is available to torch on this machine")
    return DeviceInfo("cpu", _cpu_name())


def torch_version() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def git_head(repo_root: str) -> str | None:
    """The HEAD commit of the repository containing repo_root, or None (no git, no commit)."""
    from pt2bot.git import rev_parse

    try:
        return rev_parse(repo_root, "HEAD")
    except UserError:   # git itself is missing: the results just carry no commit
        return None


# --------------------------------------------------------------------------- one model

def log_name(name: str) -> str:
    """A file-system safe, collision-free log file name for a model name."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "model"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return safe[:120] + ".log"


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


def _short_tail(text: str, chars: int = MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= chars else "…" + text[-chars:]


def _message(header: str, tail: str) -> str:
    """`header` in full, then as much of the log's end as fits in MESSAGE_CHARS."""
    header = header[:MESSAGE_CHARS // 2]
    tail = _short_tail(tail, MESSAGE_CHARS - len(header) - 2) if tail.strip() else ""
    return f"{header}\n{tail}" if tail else header


_FILE_LINE = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)', re.M)
_EXC_LINE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b(?::.*)?$", re.M)


def _user_location(tail: str, repo_root: str) -> tuple[str | None, int | None]:
    """The innermost traceback frame inside the repo, as a repo-relative path and line."""
    root = os.path.realpath(repo_root)
    path = line = None
    for m in _FILE_LINE.finditer(tail):
        p = os.path.realpath(m.group("path"))
        if p == root or p.startswith(root + os.sep):
            path, line = os.path.relpath(p, root).replace(os.sep, "/"), int(m.group("line"))
    return path, line


def classify_exit(returncode: int, tail: str, *, repo_root: str, oom_before: int | None,
                  oom_after: int | None) -> dict[str, Any]:
    """The `error` dict for a worker that exited without a usable result."""
    path, line = _user_location(tail, repo_root)
    if returncode < 0:
        sig = -returncode
        try:
            signame = signal.Signals(sig).name
        except ValueError:
            signame = f"signal {sig}"
        if sig == signal.SIGKILL and oom_before is not None and oom_after is not None \
                and oom_after > oom_before:
            return {"kind": "oom", "signal": signame, "path": path, "line": line,
                    "message": _message("killed by the kernel's OOM killer (SIGKILL)", tail)}
        hint = " (maybe the OOM killer)" if sig == signal.SIGKILL else ""
        return {"kind": "crash", "signal": signame, "path": path, "line": line,
                "message": _message(f"worker died with {signame}{hint}", tail)}
    exc = None
    for m in _EXC_LINE.finditer(tail):
        exc = m.group("type")
    kind = "exception"
    if exc and exc.rsplit(".", 1)[-1] in ("ImportError", "ModuleNotFoundError", "SyntaxError",
                                          "IndentationError", "TabError"):
        kind = "import"
    elif exc and exc.rsplit(".", 1)[-1] == "MemoryError":
        kind = "oom"
    return {"kind": kind, "signal": None, "path": path, "line": line,
            "message": _message(f"worker exited with code {returncode} and no result", tail)}


def _failed_run(name: str, status: str, error: dict[str, Any], log_rel: str,
                duration_s: float) -> dict[str, Any]:
    # Every RUN key, unmeasured (null), as the worker's own empty RUN has them.
    return {"name": name, "status": status, "reason": None, "error": error,
            "graph_count": None, "graph_breaks": None, "recompiles": None, "specialized": None,
            "accuracy": None, "export": None, "latency": None, "compile_s": None,
            "peak_mem_mb": None, "peak_mem_method": None, "files": None, "phases": [],
            "phase_errors": [], "log": log_rel, "duration_s": round(duration_s, 3)}


def _read_run(out_path: str) -> dict[str, Any] | str:
    """The worker's RUN dict, or a string saying why it cannot be used."""
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
    return run


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


def run_worker(job: WorkerJob, *, python: str = sys.executable,
               worker_argv: Sequence[str] = WORKER_ARGV,
               groups: WorkerGroups | None = None,
               started: Callable[[str, int], None] | None = None) -> dict[str, Any]:
    """Run one model in its own process group and map every outcome to a RUN dict.

    `started(name, pid)` is called once the worker runs; its pid is also its process group.
    """
    name = job.model.name
    if groups is not None and groups.cancelled:
        return _failed_run(name, "error", {"kind": "exception", "signal": None, "path": None,
                                           "line": None, "message": "the run was interrupted"},
                           job.log_rel, 0.0)
    with open(job.spec_path, "w", encoding="utf-8") as fh:
        json.dump(job.spec, fh)
    oom_before = _oom_kills()
    start = time.monotonic()
    # O_APPEND: the worker may open the same log file for its own logging.
    with open(job.log_path, "ab") as log:
        try:
            proc = subprocess.Popen([python, *worker_argv, job.spec_path, job.out_path],
                                    cwd=job.cwd, env=job.env, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            return _failed_run(name, "error", {"kind": "exception", "signal": None, "path": None,
                                               "line": None,
                                               "message": f"cannot start the worker: {e}"},
                               job.log_rel, 0.0)
    pgid = proc.pid   # start_new_session: the worker leads its own group
    deadline = start + job.timeout_s
    stopped: str | None = None
    pidfd = _pidfd(proc.pid)
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
        path, line = _user_location(tail, job.cwd)
        return _failed_run(name, "timeout", {
            "kind": "timeout", "signal": None, "path": path, "line": line,
            "message": _message(f"no result after {job.timeout_s:g} s; the worker's process "
                                f"group was killed", tail)}, job.log_rel, duration)
    if stopped == "output":
        return _failed_run(name, "error", {
            "kind": "exception", "signal": None, "path": None, "line": None,
            "message": _message(f"the worker wrote more than {LOG_CAP_BYTES} bytes of output "
                                f"and was stopped", tail)}, job.log_rel, duration)
    rc = proc.returncode
    # The worker writes its result atomically as its last act, so a result that is there is
    # complete even when the process then died (some native libraries crash at exit).
    run = _read_run(job.out_path)
    if isinstance(run, dict):
        run = _normalise_run(run, name=name, log_rel=job.log_rel, duration_s=duration)
        if rc != 0:
            late = classify_exit(rc, tail, repo_root=job.cwd, oom_before=None, oom_after=None)
            errors = run.get("phase_errors") if isinstance(run.get("phase_errors"), list) else []
            run["phase_errors"] = [*errors, {
                "phase": "exit", "kind": late["kind"], "path": None, "line": None,
                "message": f"the worker exited with {late['signal'] or f'code {rc}'} "
                           f"after writing its result"}]
        return run
    error = classify_exit(rc, tail, repo_root=job.cwd, oom_before=oom_before,
                          oom_after=_oom_kills())
    if rc == 0:   # exit 0 but no usable result: a worker bug, say so
        error["message"] = _message(run, tail)
    return _failed_run(name, "error", error, job.log_rel, duration)


def _normalise_run(run: dict[str, Any], *, name: str, log_rel: str,
                   duration_s: float) -> dict[str, Any]:
    """Trust the worker's RUN, but pin the fields the runner owns."""
    run = dict(run)
    if run.get("name") != name:
        run["name"] = name
    run["log"] = log_rel
    run.setdefault("duration_s", round(duration_s, 3))
    run.setdefault("reason", None)
    if run["status"] in ("error", "timeout"):
        err = run.get("error")
        if not isinstance(err, dict):
            err = {"kind": "exception", "message": str(err) if err else "no detail given"}
        if err.get("kind") not in ERROR_KINDS:
            err = {**err, "kind": "exception"}
        run["error"] = err
    else:
        run.pop("error", None)
    return run


# --------------------------------------------------------------------------- all models

def default_phases(config: Config) -> list[str]:
    return [p for p in PHASES if p != "latency" or config.run.latency]


def _model_spec(model: ModelConfig) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(model), default=str))


def build_jobs(config: Config, models: Iterable[ModelConfig], *, repo_root: str, out_dir: str,
               work_dir: str, device: str, phases: Sequence[str],
               environ: Mapping[str, str]) -> list[WorkerJob]:
    run_cfg = config.run
    cache_dir = run_cfg.cache_dir
    if cache_dir:
        # Relative to the config, not repo_root: a review runs the base in a throw-away
        # worktree, and the cache must outlive it (and be shared with the head's run).
        cache_dir = os.path.abspath(os.path.join(config.root, os.path.expanduser(cache_dir)))
    env = scrub_env(environ, repo_root=repo_root, threads=run_cfg.threads, cache_dir=cache_dir)
    logs = os.path.join(out_dir, "logs")
    os.makedirs(logs, exist_ok=True)
    run_dict = json.loads(json.dumps(dataclasses.asdict(run_cfg), default=str))
    jobs = []
    for k, model in enumerate(models):
        lname = log_name(model.name)
        log_path = os.path.join(logs, lname)
        with open(log_path, "wb"):   # a fresh log per run
            pass
        spec = {"repo_root": repo_root, "model": _model_spec(model), "run": run_dict,
                "device": device, "phases": list(phases), "log_path": log_path}
        jobs.append(WorkerJob(
            model=model, spec=spec,
            spec_path=os.path.join(work_dir, f"{k}.spec.json"),
            out_path=os.path.join(work_dir, f"{k}.out.json"),
            log_path=log_path, log_rel=f"logs/{lname}",
            timeout_s=float(model.timeout_s or run_cfg.timeout_s), env=env, cwd=repo_root))
    return jobs


def run_models(config: Config, *, repo_root: str, out_dir: str,
               models: Sequence[str] | None = None, device: str | None = None,
               shard: str | tuple[int, int] | None = None,
               phases: Sequence[str] | None = None,
               progress: Callable[[dict[str, Any]], None] | None = None,
               started: Callable[[str, int], None] | None = None,
               python: str = sys.executable,
               worker_argv: Sequence[str] = WORKER_ARGV) -> dict[str, Any]:
    """Run the selected models (each in its own worker) and return the results JSON dict.

    `progress` is called with each RUN as it finishes (in completion order), `started` with
    (model name, worker pid) as each worker starts (from pool threads). `python` and
    `worker_argv` choose the worker command (tests; a different interpreter).
    """
    repo_root = os.path.abspath(repo_root)
    out_dir = os.path.abspath(out_dir)
    index, count = parse_shard(shard)
    chosen = shard_models(pick_models(config, models), index, count)
    phases = list(phases) if phases is not None else default_phases(config)
    bad = [p for p in phases if p not in PHASES]
    if bad:
        raise UserError(f"unknown phase {', '.join(bad)}; expected some of {', '.join(PHASES)}")
    dev = resolve_device(device or config.run.device,
                         scrub_env(os.environ, repo_root=repo_root))
    results: dict[str, Any] = {
        "schema": RESULTS_SCHEMA,
        "commit": git_head(repo_root),
        "torch": torch_version(),
        "python": platform.python_version(),
        "device": dev.device,
        "device_name": dev.name,
        "backend": config.run.backend,
        "config_digest": config.digest,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "shard": f"{index}/{count}",
        "models": [],
    }
    os.makedirs(out_dir, exist_ok=True)
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="pt2bot-run-") as work_dir:
        jobs = build_jobs(config, chosen, repo_root=repo_root, out_dir=out_dir,
                          work_dir=work_dir, device=dev.device, phases=phases,
                          environ=os.environ)
        workers = max(1, min(int(config.run.jobs or 1), len(jobs) or 1))
        groups = WorkerGroups()
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        try:
            futures = [pool.submit(run_worker, j, python=python, worker_argv=worker_argv,
                                   groups=groups, started=started) for j in jobs]
            for fut in concurrent.futures.as_completed(futures):
                run = fut.result()
                runs.append(run)
                if progress is not None:
                    progress(run)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM, a failing progress callback): leave no workers.
            groups.kill_all()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    results["models"] = sorted(runs, key=lambda r: r["name"])
    return results


# --------------------------------------------------------------------------- merge

def merge_results(parts: Sequence[dict[str, Any]], *, labels: Sequence[str] | None = None
                  ) -> dict[str, Any]:
    """Join shard results: same schema, config digest, torch, commit and device required."""
    if not parts:
        raise UserError("merge: no results to merge")
    labels = list(labels) if labels else [f"input {k + 1}" for k in range(len(parts))]
    for label, part in zip(labels, parts):
        if not isinstance(part, dict) or part.get("schema") != RESULTS_SCHEMA \
                or not isinstance(part.get("models"), list):
            raise UserError(f"merge: {label}: not a {RESULTS_SCHEMA} results file")
    first = parts[0]
    for key in ("config_digest", "torch", "commit", "device"):
        for label, part in zip(labels[1:], parts[1:]):
            if part.get(key) != first.get(key):
                raise UserError(f"merge: {label}: {key} {part.get(key)!r} differs from "
                                f"{labels[0]}'s {first.get(key)!r}; shards must come from one "
                                f"config, commit and torch")
    seen: dict[str, str] = {}
    models: list[dict[str, Any]] = []
    for label, part in zip(labels, parts):
        for run in part["models"]:
            name = run.get("name") if isinstance(run, dict) else None
            if not isinstance(name, str):
                raise UserError(f"merge: {label}: a model entry has no name")
            if name in seen:
                raise UserError(f"merge: model {name!r} is in both {seen[name]} and {label}")
            seen[name] = label
            models.append(run)
    merged = dict(first)
    merged["models"] = sorted(models, key=lambda r: r["name"])
    merged["created"] = max(str(p.get("created") or "") for p in parts) or None
    merged["shard"] = _merged_shard([str(p.get("shard") or "1/1") for p in parts])
    names = sorted({p.get("device_name") for p in parts if p.get("device_name")})
    merged["device_name"] = ", ".join(names) if names else None
    return merged


def _merged_shard(shards: list[str]) -> str:
    """`1/1` when the inputs are exactly shards 1..N of N, else the list of what was joined."""
    try:
        pairs = sorted(parse_shard(s) for s in shards)
    except UserError:
        return ",".join(shards)
    n = pairs[0][1]
    if all(c == n for _, c in pairs) and [i for i, _ in pairs] == list(range(1, n + 1)):
        return "1/1"
    return ",".join(f"{i}/{c}" for i, c in pairs)


# --------------------------------------------------------------------------- CLI


def status_line(run: Mapping[str, Any]) -> str:
    """One short line per model for the console (the details are in the results)."""
    name = run.get("name")
    status = run.get("status")
    dur = run.get("duration_s")
    took = f" in {dur:.1f} s" if isinstance(dur, (int, float)) else ""
    if status in ("error", "timeout"):
        err = run.get("error") or {}
        detail = err.get("kind") or "error"
        if err.get("signal"):
            detail += f" {err['signal']}"
        where = f" at {err['path']}:{err['line']}" if err.get("path") and err.get("line") else ""
        return f"pt2bot run: {name}: {status} ({detail}{where}){took}; log: {run.get('log')}"
    breaks = run.get("graph_breaks")
    extra = f", {len(breaks)} graph break(s)" if isinstance(breaks, list) else ""
    return f"pt2bot run: {name}: {status}{extra}{took}"


@contextlib.contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """Turn SIGTERM (a cancelled CI job) into SystemExit, so run_models kills its workers."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cli_run(args: Any) -> int:
    from pt2bot.config import load_config

    config = load_config(getattr(args, "config", None), required=True)
    out = os.path.abspath(args.out)
    out_dir = os.path.dirname(out)

    def progress(run: dict[str, Any]) -> None:
        print(status_line(run), file=sys.stderr, flush=True)

    with _sigterm_as_exit():
        results = run_models(config, repo_root=config.root, out_dir=out_dir,
                             models=getattr(args, "model", None) or None,
                             device=getattr(args, "device", None),
                             shard=getattr(args, "shard", None), progress=progress)
    write_json(out, results)
    failed = sum(1 for r in results["models"] if r.get("status") in ("error", "timeout"))
    print(f"pt2bot run: {len(results['models'])} model(s) on {results['device']}, "
          f"{failed} failed; results: {args.out}", file=sys.stderr)
    return 0


def _load_results(path: str) -> dict[str, Any]:
    try:
        size = os.path.getsize(path)
        if size > 4 * OUT_CAP_BYTES:
            raise UserError(f"merge: {path}: {size} bytes is too large for a results file")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as e:
        raise UserError(f"merge: {path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise UserError(f"merge: {path}: not valid JSON: {e}") from None


def cli_merge(args: Any) -> int:
    parts = [_load_results(p) for p in args.inputs]
    merged = merge_results(parts, labels=list(args.inputs))
    write_json(args.out, merged)
    print(f"pt2bot merge: {len(merged['models'])} model(s) from {len(parts)} file(s); "
          f"results: {args.out}", file=sys.stderr)
    return 0
