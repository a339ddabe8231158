"""Compile-time bookkeeping shared by the matrix and latency phases (no torch import).

Cold and warm describe what the first compiled call found in the on-disk caches (the FX
graph cache and the AOTAutograd cache under `TORCHINDUCTOR_CACHE_DIR`), read from torch's
own lookup counters around that call, never from whether the cache directory has files (a
directory that other models or an earlier commit filled says nothing about this model's
graphs):

- **warm**: every graph the call compiled was loaded from the cache (hits, no miss);
- **cold**: at least one graph missed the cache (or could not be cached) and was compiled
  from scratch, or the backend keeps nothing on disk. With `eager` and `aot_eager` every
  compile is cold: dynamo (and AOTAutograd) trace from scratch in each process, and there
  is no cache that could be warm.
"""
from __future__ import annotations

from typing import Any, Mapping

# torch's counters["inductor"] keys for the FX graph cache's lookups (torch/_inductor/
# codecache.py); a bypass (a graph it cannot cache) is compiled from scratch, as a miss is.
HIT_KEYS = ("fxgraph_cache_hit",)
MISS_KEYS = ("fxgraph_cache_miss", "fxgraph_cache_bypass")


def cache_lookups(inductor_counters: Mapping[str, Any]) -> tuple[int, int]:
    """(hits, misses) in a snapshot of torch's `counters["inductor"]`."""
    def total(keys: tuple[str, ...]) -> int:
        return sum(int(inductor_counters.get(k, 0) or 0) for k in keys)
    return total(HIT_KEYS), total(MISS_KEYS)


def cache_delta(before: Mapping[str, Any], after: Mapping[str, Any]
                ) -> tuple[int, int]:
    """The lookups between two snapshots of `counters["inductor"]`: (hits, misses)."""
    h0, m0 = cache_lookups(before)
    h1, m1 = cache_lookups(after)
    return h1 - h0, m1 - m0


def is_warm(hits: int | None, misses: int | None) -> bool:
    """Warm: the call's graphs all came from the cache (at least one hit, no miss)."""
    return bool(hits) and not misses


def compile_times(first_call_s: float | None, warm: bool) -> dict[str, Any]:
    """`{"cold": s, "warm": null}` or the reverse: the first compiled call, by cache state."""
    s = None if first_call_s is None else round(first_call_s, 4)
    return {"cold": None if warm else s, "warm": s if warm else None}
