"""Workers forked from a process that has already imported torch (a fork server).

Every model runs in a process of its own (a crash, a hang or the OOM killer takes one model,
not the run), and a fresh interpreter pays seconds for `import torch` and dynamo before the
model is even built: several times per model in a review (each side, each latency round). A
fork server pays that once. It is started in the worker's scrubbed environment (torch reads
some variables at import: thread counts, cache directories, log settings) less PYTHONPATH, which
each child sets to its own repository (so a review's head and base share one server, and no
repository's files are on the path while torch is imported), imports torch, dynamo and the
worker's modules, and then only forks: each model runs in a child that leads its own
session and process group, exactly as a spawned worker does, so the supervisor's timeout, log
cap and group kill work unchanged (pt2bot/smoke/supervise.py). The server never runs a model,
so nothing one model leaves behind (threads, memory, imported modules, patched globals) reaches
the next one: each child starts from the same pristine process.

Fork is only safe in a single-threaded process: the server checks that it has one thread
before every fork (importing torch starts no OpenMP or inductor pools; nothing here runs a torch
op) and refuses otherwise, and the runner then spawns. Where fork is unsafe or missing (macOS,
Windows) or `PT2BOT_WORKER_START=spawn`, workers are spawned as before.

The protocol: JSON lines. The runner writes `{"id", "spec", "out", "log", "cwd", "pythonpath",
"main"}` to the server's stdin (`main`: which of MAINS the child runs, the smoke worker or the
proof of fixes); the server answers `{"id", "pid"}` once the child leads its own session
(or `{"id", "error"}`), and `{"exit": pid, "rc": returncode}` when it has reaped the child
(`rc` as `subprocess.Popen.returncode`: negative for a signal). Its stdout carries nothing
else: the server moves torch's own output to its log. When the runner goes away (its end of
stdin closes), the server kills its children's process groups and exits; when the server
dies, the runner kills the children it knew of and reports each as an error with that reason
(supervise.py), and spawns the models still to run.
"""
from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import sys
import threading
import time
from typing import IO, Any, Callable, Mapping, Sequence

MODE_ENV = "PT2BOT_WORKER_START"         # "spawn" turns the fork server off
SERVER_LOG = "pt2bot-forkserver.log"     # in the server's temp directory
READY_TIMEOUT_S = 600.0                  # for the server's imports on a very busy machine
MAX_IDLE_SERVERS = 2                     # a review keeps two: head's and base's environment
# What a worker imports before it builds a model: loaded once in the server. Inductor only when
# the backend is inductor (seconds of import a run with another backend would not pay).
PRELOAD = ("torch", "torch._dynamo", "torch.export", "torch._functorch.aot_autograd",
           "pt2bot.smoke.worker")
# The worker mains a child may run (`python -m <main> SPEC OUT` when spawned): a request names
# one of these, never an arbitrary module.
MAINS = ("pt2bot.smoke.worker", "pt2bot.smoke.verify")
PRELOAD_INDUCTOR = ("torch._inductor.compile_fx",)
# The pt2bot that runs the server is the runner's own: its parent directory is appended to the
# server's path (after the environment's), so a development checkout's workers run its code.
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_BOOT = ("import sys; sys.path.append(sys.argv[1]); "
         "from pt2bot.smoke.forkserver import serve; serve(sys.argv[2:])")


def fork_supported() -> bool:
    """Fork is safe to use here: Linux (macOS's system libraries are not fork-safe once
    initialised, Windows has no fork), and not turned off."""
    if os.environ.get(MODE_ENV, "fork").strip().lower() == "spawn":
        return False
    return sys.platform.startswith("linux") and hasattr(os, "fork")


def preload_for(backend: str | None) -> tuple[str, ...]:
    return PRELOAD + (PRELOAD_INDUCTOR if (backend or "inductor") == "inductor" else ())


# --------------------------------------------------------------------------- the server

def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _send(out: IO[str], msg: dict[str, Any]) -> None:
    out.write(json.dumps(msg) + "\n")
    out.flush()


def serve(preload: Sequence[str]) -> None:
    """The server's main loop (runs in the server process; see the module docstring)."""
    import importlib

    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)             # torch's own prints go to the server's log, not the protocol
    sys.stdout = sys.stderr
    for name in preload:
        importlib.import_module(name)
    if _threads() != 1:
        _send(proto, {"unsafe": f"{_threads()} threads after the imports"})
        return
    _send(proto, {"ready": os.getpid()})
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    children: set[int] = set()
    requests = sys.stdin.buffer
    import select

    buf = b""
    try:
        while True:
            ready, _, _ = select.select([requests.raw, wake_r], [], [])
            if wake_r in ready:
                os.read(wake_r, 4096)
            _reap(children, proto)
            if requests.raw not in ready:
                continue
            chunk = os.read(requests.raw.fileno(), 65536)
            if not chunk:
                return        # the runner is gone
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                req = json.loads(line)
                if _threads() != 1:
                    _send(proto, {"id": req["id"], "error": f"{_threads()} threads: no fork"})
                    continue
                pid = _fork_worker(req, keep=(proto, wake_r, wake_w))
                children.add(pid)
                _send(proto, {"id": req["id"], "pid": pid})
    finally:
        for pid in children:     # nothing the server started outlives it
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        # no interpreter teardown of torch (seconds on a busy machine): the runner waits for it
        proto.close()
        os._exit(0)


def _reap(children: set[int], proto: IO[str]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        _send(proto, {"exit": pid, "rc": os.waitstatus_to_exitcode(status)})


def _fork_worker(req: dict[str, Any], keep: tuple[Any, ...]) -> int:
    """Fork one worker; return once it leads its own session (so its pid is its group)."""
    sync_r, sync_w = os.pipe()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:    # the child: never returns
        code = 1
        try:
            os.close(sync_r)
            os.setsid()
            os.close(sync_w)
            _child(req, keep)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:   # noqa: BLE001 - the worker's own failure, into its log
            import traceback
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
    os.close(sync_w)
    os.read(sync_r, 1)      # EOF once the child has called setsid (or died)
    os.close(sync_r)
    return pid


def _child(req: dict[str, Any], keep: tuple[Any, ...]) -> None:
    """In the forked child: the spawned worker's process state, then the worker's main."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for obj in keep:
        try:
            obj.close() if hasattr(obj, "close") else os.close(obj)
        except OSError:
            pass
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    log = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    sys.stdout = sys.__stdout__ = open(1, "w", encoding="utf-8", errors="replace",
                                       closefd=False, buffering=1)
    sys.stderr = sys.__stderr__ = open(2, "w", encoding="utf-8", errors="backslashreplace",
                                       closefd=False, buffering=1)
    os.chdir(req["cwd"])
    if req.get("pythonpath"):
        # The repository goes where a spawned worker has it (after the script's directory):
        # one server serves the worktrees of both sides of a review.
        os.environ["PYTHONPATH"] = req["pythonpath"]
        sys.path[1:1] = req["pythonpath"].split(os.pathsep)
    import importlib

    main = req.get("main") or MAINS[0]
    if main not in MAINS:
        print(f"pt2bot: the fork server runs {', '.join(MAINS)}, not {main!r}", file=sys.stderr)
        raise SystemExit(2)
    sys.argv = [main, req["spec"], req["out"]]
    raise SystemExit(importlib.import_module(main).main([req["spec"], req["out"]]))


# --------------------------------------------------------------------------- the runner's side

class ForkedProcess:
    """A worker forked by the server, with the part of `subprocess.Popen`'s interface the
    supervisor uses (`pid`, `returncode`, `poll`, `wait`). `lost`: the server died while it
    ran, so its exit status is unknown (the runner killed its group)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.lost = False
        self.lost_reason: str | None = None
        self._done = threading.Event()

    def poll(self) -> int | None:
        return self.returncode if self._done.is_set() else None

    def wait(self, timeout: float | None = None) -> int | None:
        if not self._done.wait(timeout):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0.0)
        return self.returncode

    def _finish(self, rc: int, lost: str | None = None) -> None:
        if not self._done.is_set():
            self.returncode, self.lost, self.lost_reason = rc, lost is not None, lost
            self._done.set()


class ForkServer:
    """One server process for one worker environment (python, env, preloads)."""

    def __init__(self, python: str, env: Mapping[str, str], cwd: str,
                 preload: Sequence[str], log_dir: str) -> None:
        self._lock = threading.Lock()
        self._next = 0
        self._replies: dict[int, list[Any]] = {}     # id → [Event, pid or error]
        self._procs: dict[int, ForkedProcess] = {}
        self._ready = threading.Event()
        self.dead: str | None = None                 # why it cannot fork (None: it can)
        self.users = 0
        os.makedirs(log_dir, exist_ok=True)
        self.log_path = os.path.join(log_dir, SERVER_LOG)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [python, "-c", _BOOT, _TOP, *preload], cwd=cwd, env=dict(env),
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                start_new_session=True)
        self._reader = threading.Thread(target=self._read, name="pt2bot-forkserver",
                                        daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                continue
            if "ready" in msg:
                self._ready.set()
            elif "unsafe" in msg:
                self._die(f"the fork server refused to fork: {msg['unsafe']}")
            elif "exit" in msg:
                with self._lock:
                    proc = self._procs.pop(int(msg["exit"]), None)
                if proc is not None:
                    proc._finish(int(msg["rc"]))
            elif "id" in msg:
                with self._lock:
                    slot = self._replies.pop(int(msg["id"]), None)
                    if slot is not None and "pid" in msg:
                        proc = ForkedProcess(int(msg["pid"]))
                        self._procs[proc.pid] = proc
                        slot[1] = proc
                    elif slot is not None:
                        slot[1] = str(msg.get("error") or "no fork")
                if slot is not None:
                    slot[0].set()
        rc = self.proc.wait()
        self._die(f"the fork server exited with {_exit_text(rc)}")

    def _die(self, why: str) -> None:
        """The server is gone (or refused): fail what waits on it, kill what it ran."""
        with self._lock:
            if self.dead is None:
                self.dead = why
            replies, self._replies = list(self._replies.values()), {}
            procs, self._procs = list(self._procs.values()), {}
        self._ready.set()
        for slot in replies:
            slot[1] = why
            slot[0].set()
        for proc in procs:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc._finish(-signal.SIGKILL, lost=why)

    def launch(self, *, spec_path: str, out_path: str, log_path: str, cwd: str,
               pythonpath: str | None = None, main: str = MAINS[0],
               timeout: float = READY_TIMEOUT_S,
               cancelled: Callable[[], bool] = lambda: False) -> ForkedProcess | str:
        """Fork one worker; the process, or why the server could not (then spawn it).
        Waiting for the server's imports ends early when `cancelled()` (an interrupted run)."""
        deadline = time.monotonic() + timeout
        while not self._ready.wait(0.1):
            if cancelled():
                return "the run was interrupted"
            if time.monotonic() >= deadline:
                return "the fork server did not start in time"
        slot: list[Any] = [threading.Event(), None]
        with self._lock:
            if self.dead is not None:
                return self.dead
            self._next += 1
            key = self._next
            self._replies[key] = slot
            line = json.dumps({"id": key, "spec": spec_path, "out": out_path, "log": log_path,
                               "cwd": cwd, "pythonpath": pythonpath, "main": main}) + "\n"
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(line.encode())
                self.proc.stdin.flush()
            except OSError as e:
                self._replies.pop(key, None)
                return f"the fork server is gone: {e}"
        slot[0].wait()      # answered at once (or failed by _die when the server goes)
        return slot[1]

    def close(self) -> None:
        """End the server (it kills whatever it still runs); wait for it briefly. A server
        still importing does not read its input yet: it is killed (it has no children)."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5 if self._ready.is_set() else 0)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        self._reader.join(timeout=5)


def _exit_text(rc: int) -> str:
    if rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"code {rc}"


class ForkServers:
    """The servers of this process, one per worker environment, reused across runs (a review's
    head and base runs and its latency rounds all fork from the same two); at most
    MAX_IDLE_SERVERS idle ones are kept, and all end when this process exits."""

    def __init__(self, max_idle: int = MAX_IDLE_SERVERS) -> None:
        self._lock = threading.Lock()
        self._servers: dict[tuple[Any, ...], ForkServer] = {}   # in order of last use
        self.max_idle = max_idle

    def acquire(self, python: str, env: Mapping[str, str], preload: Sequence[str],
                log_dir: str) -> ForkServer:
        """The server for workers with this environment. Its own environment is the workers'
        without PYTHONPATH, which each worker gets from its request (`launch`): so neither
        side's repository is on the path while torch is imported, and the head and base
        worktrees of a review share one server. It runs in `log_dir`, a directory of ours."""
        env = {k: v for k, v in env.items() if k != "PYTHONPATH"}
        key = (python, tuple(sorted(env.items())), tuple(preload))
        cwd = log_dir
        closing = []
        with self._lock:
            server = self._servers.pop(key, None)
            if server is None or server.dead is not None:
                if server is not None:
                    closing.append(server)
                server = ForkServer(python, env, cwd, preload, log_dir)
            server.users += 1
            self._servers[key] = server
            idle = [k for k, s in self._servers.items() if s.users == 0]
            for k in idle[:max(0, len(idle) - self.max_idle)]:
                closing.append(self._servers.pop(k))
        for s in closing:
            s.close()
        return server

    def release(self, server: ForkServer) -> None:
        with self._lock:
            server.users = max(0, server.users - 1)

    def close_all(self) -> None:
        with self._lock:
            servers, self._servers = list(self._servers.values()), {}
        for s in servers:
            s.close()


SERVERS = ForkServers()
atexit.register(SERVERS.close_all)

__all__ = ["ForkServer", "ForkServers", "ForkedProcess", "MODE_ENV", "SERVERS", "fork_supported",
           "preload_for", "serve"]
