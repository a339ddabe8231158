"""Dynamo's structured trace, caught in memory, and user-frame helpers.

The `torch.__trace` logger carries what `TORCH_TRACE` writes and tlparse reads: every
graph-break reason (one per break per frame, loop skips included), recompile reasons,
shape specialisations with user stacks. Filenames in structured stacks are interned ints;
`torch._logging.structured.INTERN_TABLE` maps them back (process-global).

`TraceFile` writes the same records to a file in `TORCH_TRACE`'s format (capped), which
tlparse turns into a compile report (pt2bot/smoke/compile_report.py).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import time
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


def _reads_the_trace(handler: logging.Handler) -> bool:
    """torch's own trace handler (`TORCH_TRACE`'s file) and pt2bot's read a record's
    `metadata`; any other handler sees a DEBUG record with an empty message."""
    module = type(handler).__module__ or ""
    return module.startswith(("torch.", "pt2bot."))


@contextlib.contextmanager
def private_trace_logger() -> Iterator[logging.Logger]:
    """`torch.__trace` at DEBUG that reaches only the trace's own handlers while inside.

    torch makes the logger non-propagating, but a test runner may attach handlers to it
    directly: pytest adds its log-capture handlers to every non-propagating logger, and each
    trace record (data, no message) became an empty `DEBUG torch.__trace` line in a failing
    test's "Captured log" section, 101 of 147 lines in one failure. Those handlers are
    detached while inside and put back, in their order, on exit, with level and propagation.
    """
    lg = logging.getLogger(TRACE_LOGGER)
    level, propagate, handlers = lg.level, lg.propagate, list(lg.handlers)
    for h in handlers:
        if not _reads_the_trace(h):
            lg.removeHandler(h)
    lg.setLevel(logging.DEBUG)
    lg.propagate = False      # never let the trace reach the console or the log file
    try:
        yield lg
    finally:
        added = [h for h in lg.handlers if h not in handlers]
        lg.handlers = [*handlers, *added]
        lg.setLevel(level)
        lg.propagate = propagate


class TraceCollector(logging.Handler):
    """An in-memory handler on `torch.__trace`; use as a context manager."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.events: list[TraceEvent] = []
        self._private: contextlib.ExitStack | None = None

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
        self._private = contextlib.ExitStack()
        self._private.enter_context(private_trace_logger()).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(TRACE_LOGGER).removeHandler(self)
        if self._private is not None:
            self._private.close()
            self._private = None

    def artifacts(self, name: str) -> Iterator[TraceEvent]:
        return (e for e in self.events if e.kind == "artifact" and e.name == name)

    def of_kind(self, kind: str) -> Iterator[TraceEvent]:
        return (e for e in self.events if e.kind == kind)


TRACE_CAP_BYTES = 8 * 1024 * 1024    # one model's trace.log on one side stops growing here


class TraceFile(logging.Handler):
    """`torch.__trace` records written to a file as `TORCH_TRACE` does, at most `cap` bytes.

    Attached only while a traced phase runs (`attached()`); the file stays open between
    phases. A record that would pass the cap is dropped with everything after it, so the file
    is always whole records (tlparse reads it); `truncated` and `dropped` say so.
    """

    def __init__(self, path: str, cap: int = TRACE_CAP_BYTES) -> None:
        super().__init__(level=logging.DEBUG)
        self.path = path
        self.cap = int(cap)
        self.bytes = 0
        self.truncated = False
        self.dropped = 0
        self._formatter = _trace_formatter()
        os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
        self._fh = open(path, "wb")   # noqa: SIM115 - closed by close()
        # Strings interned before this file existed (an earlier compile in this process) are
        # never logged again: repeat them first, or tlparse cannot name those files.
        for s, i in sorted(_intern_items(), key=lambda kv: kv[1]):
            self._write(self._record({"str": [s, i]}))

    def _record(self, metadata: dict[str, Any]) -> logging.LogRecord:
        return logging.makeLogRecord({"name": TRACE_LOGGER, "levelno": logging.DEBUG,
                                      "levelname": "DEBUG", "msg": "", "pathname": __file__,
                                      "lineno": 0, "created": time.time(),
                                      "metadata": metadata, "payload": None})

    def _write(self, record: logging.LogRecord) -> None:
        if self.truncated or self._fh.closed:
            self.dropped += 1
            return
        payload = getattr(record, "payload", None)
        if isinstance(payload, str) and self.bytes + len(payload) > self.cap:
            self.truncated = True   # known too big before paying for the formatting
            self.dropped += 1
            return
        data = (self._formatter(record) + "\n").encode("utf-8", "backslashreplace")
        if self.bytes + len(data) > self.cap:
            self.truncated = True
            self.dropped += 1
            return
        self._fh.write(data)
        self.bytes += len(data)

    def emit(self, record: logging.LogRecord) -> None:  # noqa: D102 - logging API
        if not isinstance(getattr(record, "metadata", None), dict):
            return
        try:
            self._write(record)
        except Exception:  # noqa: BLE001 - a trace that cannot be written is not the model's fault
            self.truncated = True

    @contextlib.contextmanager
    def attached(self) -> Iterator["TraceFile"]:
        with private_trace_logger() as lg:
            lg.addHandler(self)
            try:
                yield self
            finally:
                lg.removeHandler(self)
                self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()
        super().close()


def _trace_formatter() -> Any:
    """torch's own trace formatter (what tlparse expects from this torch), else the same
    glog-style line: `V<mmdd hh:mm:ss.us> <pid> <file>:<line>] <json>` + tab-indented payload."""
    try:
        from torch._logging._internal import TorchLogsFormatter
        fmt = TorchLogsFormatter(trace=True)
        return fmt.format
    except Exception:  # noqa: BLE001 - another torch: write the documented format ourselves
        pass

    def format_record(record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        us = int((record.created % 1) * 1e6)
        head = (f"V{time.strftime('%m%d %H:%M:%S', t)}.{us:06d} {record.process or os.getpid()} "
                f"{os.path.basename(record.pathname or '')}:{record.lineno}] "
                f"{json.dumps(record.metadata, default=repr)}")   # type: ignore[attr-defined]
        payload = getattr(record, "payload", None)
        if payload is not None:
            head += "".join(f"\n\t{line}" for line in str(payload).split("\n"))
        return head
    return format_record


def _intern_items() -> list[tuple[str, int]]:
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:
        return []
    return list(INTERN_TABLE.items())


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


# How many compilation records torch keeps from a reset on. Its default is the last 64, and
# every count here reads the records made since a mark by their position in that list: past 64
# the earliest are dropped and the position reads the wrong ones. torchdiffeq's solvers compile
# about sixty frames on their first input alone, so the shape matrix's second case lost part of
# its recompiles, more of them the more frames the model had before.
METRICS_KEPT = 1 << 16


def reset_dynamo() -> None:
    """Forget compiled code, counters and metrics, so phases and models do not leak; and keep
    every compilation record from here on (METRICS_KEPT)."""
    import torch
    import torch._dynamo.utils as dynamo_utils

    torch._dynamo.reset()
    dynamo_utils.counters.clear()
    if hasattr(dynamo_utils, "clear_compilation_metrics"):
        dynamo_utils.clear_compilation_metrics()
    if hasattr(dynamo_utils, "set_compilation_metrics_limit"):
        dynamo_utils.set_compilation_metrics_limit(METRICS_KEPT)


def compilation_metrics() -> list[Any]:
    try:
        from torch._dynamo.utils import get_compilation_metrics
    except ImportError:
        return []
    return list(get_compilation_metrics())


__all__ = ["RepoPaths", "TRACE_CAP_BYTES", "TRACE_LOGGER", "TraceCollector", "TraceEvent",
           "TraceFile", "compilation_metrics",
           "frame_file", "intern_table", "private_trace_logger", "reset_dynamo"]
