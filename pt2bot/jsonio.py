"""Writing JSON and text files (strict JSON, atomic replace), and reading JSON with a size cap.

Every file pt2bot writes is read by something else (the review by the publisher, a shard by
`merge`, a worker's result by the runner), sometimes after the writer was killed: a reader
must never see half a file, and strict JSON readers reject NaN, so NaN/inf become null.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
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


def write_text(path: str, text: str) -> None:
    """Write atomically: a temp file in the same directory, then os.replace."""
    path = os.path.abspath(path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".pt2bot-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text if text.endswith("\n") else text + "\n")
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_json(path: str, data: Any) -> None:
    write_text(path, dumps(data))


__all__ = ["jsonable", "dumps", "read_json", "write_json", "write_text"]


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
