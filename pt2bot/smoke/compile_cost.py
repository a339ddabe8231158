"""The cost of a model's first compile: CPU seconds, and measures that do not move with load.

Measured around the matrix phase's first compiled call (the compile the run does anyway:
no extra compile pass), with the configured backend:

- `cpu_s`: CPU seconds (user + system) of the whole process tree over the call. Inductor
  compiles C++/Triton in subprocesses: `g++` children the worker waits for (counted by
  `RUSAGE_CHILDREN` once reaped) and a persistent compile pool (`compile_threads` > 1,
  torch/_inductor/compile_worker), whose processes live on and are never reaped by the
  worker, so `RUSAGE_CHILDREN` never sees them. Their CPU time is read from
  `/proc/<pid>/stat` of every live descendant (its `utime + stime` and the `cutime + cstime`
  of the children it reaped), before and after. Off Linux (no /proc) only the worker and
  its reaped children count, and `cpu_method` says so.
- Deterministic (the same on every run of the same code, whatever the load): `fx_nodes`,
  `fx_ops` and `guards` (sums of `graph_node_count`, `graph_op_count` and `guard_count` over
  the frames the call compiled, from torch's compilation metrics), `graphs` (`counters["stats"]
  ["unique_graphs"]`), and with inductor `kernels` (kernel definitions, `name =
  async_compile.<kind>(`, in the generated output code) and `kernel_bytes` (that code's
  size in bytes), read from the structured trace's `inductor_output_code`, which torch
  logs on a cache hit as on a miss.
- `cache_hits`/`cache_misses`: the FX graph cache's lookups during the call
  (pt2bot/smoke/compile_times.py says what cold and warm mean).

Hardware instruction counters are not used: on shared runners they are often blocked.
"""
from __future__ import annotations

import os
import re
import resource
import time
from typing import Any

from pt2bot.smoke.compile_times import cache_delta, is_warm
from pt2bot.smoke.trace import TraceCollector, compilation_metrics

PROC = "/proc"
PROC_METHOD = "worker + reaped children (getrusage) + live descendants (/proc/<pid>/stat)"
RUSAGE_METHOD = "worker + reaped children (getrusage); no /proc: a compile pool is not counted"
_KERNEL_RE = re.compile(r"^\s*\w+\s*=\s*async_compile\.\w+\(", re.M)
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _proc_table(proc: str = PROC) -> dict[int, list[tuple[int, float]]]:
    """parent pid -> [(pid, CPU seconds of it and its reaped children)] of every process."""
    kids: dict[int, list[tuple[int, float]]] = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join(proc, entry, "stat"), encoding="ascii",
                      errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue      # it exited meanwhile
        # the command name may hold spaces and parentheses: fields start after the last ")"
        fields = stat[stat.rfind(")") + 2:].split()
        try:
            ppid = int(fields[1])
            ticks = sum(int(x) for x in fields[11:15])   # utime stime cutime cstime
        except (IndexError, ValueError):
            continue
        kids.setdefault(ppid, []).append((int(entry), ticks / _TICKS))
    return kids


def descendants_cpu_s(pid: int | None = None, proc: str = PROC) -> float | None:
    """CPU seconds of the live descendants of `pid` (and what they reaped); None: no /proc."""
    if not os.path.isdir(proc):
        return None
    try:
        kids = _proc_table(proc)
    except OSError:
        return None
    total = 0.0
    todo = [os.getpid() if pid is None else pid]
    while todo:
        for child, secs in kids.get(todo.pop(), ()):
            total += secs
            todo.append(child)
    return total


def process_tree_cpu_s() -> tuple[float, str]:
    """CPU seconds of this process, its reaped children and its live descendants so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
    live = descendants_cpu_s()
    if live is None:
        return total, RUSAGE_METHOD
    return total + live, PROC_METHOD


def count_kernels(code: str) -> int:
    """Kernel definitions in inductor's generated output code."""
    return len(_KERNEL_RE.findall(code))


class CompileProbe:
    """Wraps one compiled call: `start()` before it, `finish()` after it succeeded."""

    def __init__(self, backend: str, events: TraceCollector | None = None) -> None:
        self.backend = backend
        self.events = events

    def start(self) -> "CompileProbe":
        from torch._dynamo.utils import counters

        self._metrics0 = len(compilation_metrics())
        self._events0 = len(self.events.events) if self.events is not None else 0
        self._inductor0 = dict(counters["inductor"])
        self._graphs0 = int(counters["stats"].get("unique_graphs", 0))
        self._cpu0, _ = process_tree_cpu_s()
        self._t0 = time.perf_counter()
        return self

    def finish(self) -> dict[str, Any]:
        """The RUN's `compile_cost` (docs/formats.md) of the call since `start()`."""
        from torch._dynamo.utils import counters

        wall = time.perf_counter() - self._t0
        cpu, method = process_tree_cpu_s()
        new = compilation_metrics()[self._metrics0:]
        hits, misses = cache_delta(self._inductor0, counters["inductor"])
        inductor = self.backend == "inductor"
        cached = inductor or bool(hits or misses)
        codes = [e.payload for e in (self.events.events[self._events0:]
                                     if self.events is not None else ())
                 if e.kind == "inductor_output_code" and isinstance(e.payload, str)]
        return {
            "cpu_s": round(cpu - self._cpu0, 4),
            "wall_s": round(wall, 4),
            "fx_nodes": _sum(new, "graph_node_count"),
            # the operations alone: a graph split in two has the same ones, and more inputs
            # and outputs (a new break's 4 more graphs grew a model's nodes by 34 %, its ops not)
            "fx_ops": _sum(new, "graph_op_count"),
            "guards": _sum(new, "guard_count"),
            "graphs": int(counters["stats"].get("unique_graphs", 0)) - self._graphs0,
            "kernels": sum(count_kernels(c) for c in codes) if inductor and codes else None,
            "kernel_bytes": (sum(len(c.encode("utf-8")) for c in codes)
                             if inductor and codes else None),
            "cache_hits": hits if cached else None,
            "cache_misses": misses if cached else None,
            "cache": "warm" if cached and is_warm(hits, misses) else "cold",
            "backend": self.backend,
            "cpu_method": method,
        }


def _sum(metrics: list[Any], attr: str) -> int | None:
    vals = [getattr(m, attr, None) for m in metrics]
    vals = [v for v in vals if isinstance(v, int)]
    return sum(vals) if vals else None


__all__ = ["CompileProbe", "PROC_METHOD", "RUSAGE_METHOD", "count_kernels",
           "descendants_cpu_s", "process_tree_cpu_s"]
