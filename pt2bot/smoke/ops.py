"""Graph coverage of one compiled call: ops captured in graphs vs ops that ran outside them.

Two counts, at two levels, taken in the graph-break pass's one compiled call (no extra
compile):

- **Captured ops**, as PyTorch CI's expected-results files count them: dynamo's
  `counters["stats"]["calls_captured"]`, the call nodes (`call_function`, `call_method`,
  `call_module`) of every graph it made (torch/_dynamo/output_graph.py, `count_calls`), and
  `counters["stats"]["unique_graphs"]`. The recording backend also counts each graph's call
  nodes, so the share of the largest graph is known.
- **ATen ops inside vs outside the graphs**: a `TorchDispatchMode` whose
  `ignore_compile_internals()` is True sees every ATen operator dispatched during the call
  except dynamo's own tracing (torch switches such a mode off while it compiles, and does
  not skip the frame because of it, as it does for other modes). The eager backend's graphs
  run ATen operators too: the recording backend marks the time spent inside a graph, so each
  operator is counted as inside a graph or outside any (the eager code around and between
  the graphs: the break itself, resumed Python, frames dynamo skipped). Both counts are in
  the same unit, so `aten_in_graphs / (aten_in_graphs + aten_outside)` is the share of the
  call's work the graphs hold. Those outside are also counted by operator (`aten.addmm`), so
  a change in their number says which operators moved out of the graphs (V-JEPA's user read
  "ops outside graphs 10 → 14" and could not tell which 4).

The mode does not change what dynamo captures (the graphs and guards are the same with and
without it: tests/test_graph_coverage.py).
"""
from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any, Callable, Iterator

from pt2bot.smoke.trace import RepoPaths


def count_calls(gm: Any) -> int:
    """The call nodes of an FX graph, as dynamo counts `calls_captured`."""
    return sum(1 for n in gm.graph.nodes if "call" in n.op)


class OpCounter:
    """ATen operators dispatched while `counting()` is active, inside graphs or outside."""

    def __init__(self) -> None:
        self.inside = 0
        self.outside = 0
        self.outside_ops: Counter[str] = Counter()    # by operator, `aten.addmm`
        self._depth = 0          # > 0 while a graph runs (graphs may nest via a resume)
        self._mode: Any = None

    def in_graph(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """`fn` (a compiled graph) with its operators counted as inside a graph."""
        def run_graph(*args: Any) -> Any:
            self._depth += 1
            try:
                return fn(*args)
            finally:
                self._depth -= 1
        return run_graph

    @contextlib.contextmanager
    def counting(self) -> Iterator["OpCounter"]:
        from torch.utils._python_dispatch import TorchDispatchMode

        counter = self

        class _Count(TorchDispatchMode):
            # `torch.cond`, `torch.while_loop` and other higher-order operators refuse to run
            # under a mode that does not declare it handles them: without this, a model that
            # uses them fails in eager under the counter. Each counts as one operator (its
            # branches run below the mode, uncounted).
            supports_higher_order_operators = True

            @classmethod
            def ignore_compile_internals(cls) -> bool:
                return True     # invisible to dynamo's tracing, which it does not skip for

            def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                if counter._depth:
                    counter.inside += 1
                else:
                    counter.outside += 1
                    counter.outside_ops[str(getattr(func, "overloadpacket", func))] += 1
                return func(*args, **(kwargs or {}))

        self._mode = _Count()
        with self._mode:
            yield self


def eager_frames(metrics: list[Any], paths: RepoPaths) -> list[dict[str, Any]]:
    """Frames of the compilation metrics that dynamo gave up on (`fail_type` set and no
    code installed): they run eagerly, every op in them outside any graph."""
    out = []
    seen = set()
    for m in metrics:
        if not getattr(m, "fail_type", None) or getattr(m, "has_guarded_code", None):
            continue
        text = str(getattr(m, "fail_reason", "") or "").strip()
        reason = text.split("\n", 1)[0][:300]
        if "graph break in loop" in text:   # the root cause first, then why the whole frame
            reason = f"graph break in a loop, the whole frame skipped: {reason}"
        frame = {"function": getattr(m, "co_name", None),
                 "path": paths.rel(getattr(m, "co_filename", None)),
                 "line": getattr(m, "co_firstlineno", None), "reason": reason or None}
        key = (frame["function"], frame["path"], frame["line"])
        if key not in seen:
            seen.add(key)
            # (its last line: which changed lines ran in it only eagerly, compare.not_traced_lines)
            end = paths.function_end(getattr(m, "co_filename", None), frame["function"], frame["line"]) \
                if frame["path"] else None
            out.append({**frame, "end_line": end} if end else frame)
    return out


def graph_coverage(stats: dict[str, int], graph_ops: list[int], ops: OpCounter | None,
                   frames: list[dict[str, Any]]) -> dict[str, Any]:
    """The RUN's `graph_coverage` (docs/formats.md) from what the pass recorded."""
    captured = int(stats.get("calls_captured", 0))
    return {
        "captured_ops": captured,
        "unique_graphs": int(stats.get("unique_graphs", 0)),
        "graph_ops": list(graph_ops),
        "largest_share": round(max(graph_ops) / captured, 4) if captured and graph_ops
        else None,
        "aten_in_graphs": ops.inside if ops is not None else None,
        "aten_outside": ops.outside if ops is not None else None,
        "aten_outside_ops": dict(sorted(ops.outside_ops.items())) if ops is not None else None,
        "eager_frames": frames,
    }


__all__ = ["OpCounter", "count_calls", "eager_frames", "graph_coverage"]
