"""Writing JSON and text files (strict JSON, atomic replace), and reading JSON with a size cap.

Every file pt2bot writes is read by something else (the review by the publisher, a shard by
`merge`, a worker's result by the runner, a pack of the check's cache by the next check),
sometimes after the writer was killed: a reader must never see half a file, and strict JSON
readers reject NaN, so NaN/inf become null. `atomic_write_bytes` is the one atomic write (the
audit history's SQLite database keeps its own transactions).
"""
from __future__ import annotations

import json
import math
import os
from typing import Any

from pt2bot.errors import UserError


def jsonable(value: Any) -> Any:
    """A copy of `value` that json.dumps(allow_nan=False) accepts."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def dumps(data: Any) -> str:
    return json.dumps(jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_bytes(path: str, data: bytes, *, mode: int = 0o600) -> None:
    """Replace `path` by `data` so that a reader sees the old file or the new one, never a part.

    The bytes go to a temp file beside `path` (created new, with permissions `mode` less the
    umask), which then replaces `path` (os.replace, atomic within a directory). If anything
    fails, the temp file is removed and the error propagates. No fsync: what this guards
    against is a reader racing the writer, or a writer killed mid-way; a file lost to a power
    cut is written again by the next run (and the check's cache writes in its hot path).

    The temp file's name is hidden (an artifact upload leaves hidden files out) and ends in
    `.tmp`: the check's cache sweeps old `*.tmp` files that killed writers left in its
    directory (pt2bot/static/cache.py).
    """
    directory, base = os.path.split(os.path.abspath(path))
    # (the pid and random bytes keep concurrent writers of one path apart; the name is cut so
    # that a long one still fits the file system's limit with its suffix)
    tmp = os.path.join(directory, f".{base[:100]}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_text(path: str, text: str) -> None:
    """Write `text` (UTF-8, ending in a newline) atomically, creating the directory; readable by
    the owner only (0600)."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_bytes(path, (text if text.endswith("\n") else text + "\n").encode("utf-8"))


def write_json(path: str, data: Any) -> None:
    write_text(path, dumps(data))


__all__ = ["atomic_write_bytes", "jsonable", "dumps", "read_json", "write_json", "write_text"]


def read_json(path: str, *, what: str, max_bytes: int) -> Any:
    """A JSON file another job wrote (a shard, a results file, a baseline), size-capped first.

    Every failure is a `UserError` that names `what` and the file: "merge: a/partial.json:
    cannot read: No such file or directory", "...: 70,000,000 bytes is over the 67,108,864-byte
    cap", "...: not valid JSON: ...".
    """
    try:
        size = os.path.getsize(path)
        if size > max_bytes:
            raise UserError(f"{what}: {path}: {size:,} bytes is over the {max_bytes:,}-byte cap")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as e:
        raise UserError(f"{what}: {path}: cannot read: {e.strerror or e}") from None
    except RecursionError:      # deeply nested input: json recurses per level
        raise UserError(f"{what}: {path}: not valid JSON: nested too deeply") from None
    except ValueError as e:
        raise UserError(f"{what}: {path}: not valid JSON: {e}") from None
