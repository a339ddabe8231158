"""Compile-time bookkeeping shared by the matrix and latency phases (no torch import)."""
from __future__ import annotations

import os
from typing import Any


def cache_is_warm(environ: dict[str, str] | None = None) -> bool:
    """Did TORCHINDUCTOR_CACHE_DIR already hold compiled artefacts before this compile?"""
    env = os.environ if environ is None else environ
    d = env.get("TORCHINDUCTOR_CACHE_DIR")
    if not d or not os.path.isdir(d):
        return False
    for _root, _dirs, files in os.walk(d):
        if files:
            return True
    return False


def compile_times(first_call_s: float | None, warm_cache: bool) -> dict[str, Any]:
    """`{"cold": s, "warm": null}` or the reverse: the first compiled call, by cache state."""
    s = None if first_call_s is None else round(first_call_s, 4)
    return {"cold": None if warm_cache else s, "warm": s if warm_cache else None}
