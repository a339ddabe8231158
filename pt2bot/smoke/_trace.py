"""Dynamo's structured trace, caught in memory, and user-frame helpers.

The `torch.__trace` logger carries what `TORCH_TRACE` writes and tlparse reads: every
graph-break reason (one per break per frame, loop skips included), recompile reasons,
shape specialisations with user stacks. Filenames in structured stacks are interned ints;
`torch._logging.structured.INTERN_TABLE` maps them back (process-global).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Iterator

# RepoPaths lives with the other "where in the user's code" helpers; it stays importable
# from here (pt2bot.testing and the phases use this path).
from pt2bot.smoke.location import RepoPaths

TRACE_LOGGER = "torch.__trace"


@dataclass
class TraceEvent:
    kind: str                  # the first metadata key: "artifact", "dynamo_start", ...
    name: str | None           # artifact name, for kind == "artifact"
    data: Any                  # metadata[kind]
    payload: str | None
    frame: tuple[Any, Any] | None = None   # (frame_id, frame_compile_id)


class TraceCollector(logging.Handler):
    """An in-memory handler on `torch.__trace`; use as a context manager."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.events: list[TraceEvent] = []
        self._logger = logging.getLogger(TRACE_LOGGER)
        self._saved: tuple[int, bool] | None = None

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102 - logging API
        md = getattr(record, "metadata", None)
        if not isinstance(md, dict) or not md:
            return
        kind = next(iter(md))
        if kind in ("chromium_event", "str", "describe_storage", "describe_tensor",
                    "describe_source"):
            return  # high-volume and useless here; the intern table covers "str"
        art = md.get("artifact")
        name = art.get("name") if kind == "artifact" and isinstance(art, dict) else None
        payload = getattr(record, "payload", None)
        self.events.append(TraceEvent(kind, name, md.get(kind), payload,
                                      (md.get("frame_id"), md.get("frame_compile_id"))))

    def __enter__(self) -> "TraceCollector":
        lg = self._logger
        self._saved = (lg.level, lg.propagate)
        lg.setLevel(logging.DEBUG)
        lg.propagate = False      # never let the trace reach the console or the log file
        lg.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        lg = self._logger
        lg.removeHandler(self)
        if self._saved is not None:
            lg.setLevel(self._saved[0])
            lg.propagate = self._saved[1]

    def artifacts(self, name: str) -> Iterator[TraceEvent]:
        return (e for e in self.events if e.kind == "artifact" and e.name == name)

    def of_kind(self, kind: str) -> Iterator[TraceEvent]:
        return (e for e in self.events if e.kind == kind)


def intern_table() -> dict[int, str]:
    """Interned int → filename (torch keeps str → int)."""
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:  # older torch: stacks carry plain filenames
        return {}
    return {v: k for k, v in INTERN_TABLE.items()}


def frame_file(frame: dict[str, Any], table: dict[int, str]) -> str | None:
    """A structured-trace frame's filename (interned int or plain string)."""
    f = frame.get("filename")
    if isinstance(f, int):
        return table.get(f)
    return f if isinstance(f, str) else None


def reset_dynamo() -> None:
    """Forget compiled code, counters and metrics, so phases and models do not leak."""
    import torch
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    try:
        from torch._dynamo.utils import clear_compilation_metrics
        clear_compilation_metrics()
    except ImportError:
        pass


def compilation_metrics() -> list[Any]:
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return []
    return list(get_compilation_metrics())


__all__ = ["RepoPaths", "TRACE_LOGGER", "TraceCollector", "TraceEvent", "compilation_metrics",
           "frame_file", "intern_table", "reset_dynamo"]
