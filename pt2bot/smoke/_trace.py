"""Dynamo's structured trace, caught in memory, and user-frame helpers.

The `torch.__trace` logger carries what `TORCH_TRACE` writes and tlparse reads: every
graph-break reason (one per break per frame, loop skips included), recompile reasons,
shape specialisations with user stacks. Filenames in structured stacks are interned ints;
`torch._logging.structured.INTERN_TABLE` maps them back (process-global).
"""
from __future__ import annotations

import logging
import os
import sys
import sysconfig
from dataclasses import dataclass, field
from typing import Any, Iterator

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
    f = frame.get("filename")
    if isinstance(f, int):
        return table.get(f)
    return f if isinstance(f, str) else None


@dataclass
class RepoPaths:
    """Decides which files are the user's and makes them repo-relative."""
    root: str
    _excluded: tuple[str, ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        self.root = os.path.realpath(self.root)
        # A virtualenv or site-packages inside the repo (e.g. ./.venv) is not user code.
        excl = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        for key in ("purelib", "platlib", "stdlib"):
            try:
                excl.add(os.path.realpath(sysconfig.get_paths()[key]))
            except KeyError:
                pass
        self._excluded = tuple(sorted(excl))

    def rel(self, filename: str | None) -> str | None:
        """Repo-relative path with forward slashes, or None when not user code."""
        if not filename or filename.startswith("<"):
            return None
        try:
            real = os.path.realpath(filename)
        except (OSError, ValueError):
            return None
        for ex in self._excluded:
            if real == ex or real.startswith(ex + os.sep):
                if not (ex == self.root or self.root.startswith(ex + os.sep)):
                    return None
        parts = real.split(os.sep)
        if "site-packages" in parts or "dist-packages" in parts:
            return None
        if real != self.root and not real.startswith(self.root + os.sep):
            return None
        return os.path.relpath(real, self.root).replace(os.sep, "/")

    def source_line(self, rel: str | None, line: int | None) -> str:
        """The stripped source line from the working tree (user text: data, never code)."""
        if not rel or not line:
            return ""
        try:
            with open(os.path.join(self.root, rel), encoding="utf-8", errors="replace") as fh:
                for i, text in enumerate(fh, 1):
                    if i == line:
                        return text.strip()[:500]
        except OSError:
            pass
        return ""

    def resolve_suffix(self, suffix: str, candidates: list[str]) -> str | None:
        """Torch truncates paths in guard comments ("mp/exp/pkg/m.py"): match the tail."""
        suffix = suffix.strip()
        for c in candidates:
            if c.endswith(suffix):
                r = self.rel(c)
                if r:
                    return r
        r = self.rel(os.path.join(self.root, suffix))
        if r and os.path.isfile(os.path.join(self.root, r)):
            return r
        return None


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
