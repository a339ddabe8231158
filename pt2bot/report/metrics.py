"""summary.md's lines for a model's graph coverage and compile cost (report.json's
`models[i].delta.coverage` and `models[i].compile`, pt2bot/compare.py).

- "Graph coverage: captured ops 412 → 380; largest graph 100 % → 61 %": what changed
  between base and head; with no base to compare, head's figures.
- "Compile (first call, aot_eager, cold): 0.47 → 0.81 CPU s (×1.72) · FX nodes 10 → 19 ·
  guards 45 → 80 · ❌ regression (threshold 30 %)".

Numbers and fixed words only, except the backend name (escaped like any text from a run).
"""
from __future__ import annotations

from typing import Any, Mapping

from pt2bot.report.markdown import escape_inline
from pt2bot.reportdata import ModelDelta


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _share(v: Any) -> str:
    return f"{v * 100:.0f} %" if _num(v) else "—"


def coverage_line(m: ModelDelta) -> str:
    """The model's graph-coverage line, or "" when there is nothing to say."""
    cov = m.delta.coverage
    if not isinstance(cov, Mapping) or not isinstance(cov.get("head"), Mapping):
        return ""
    changes = [c for c in cov.get("changes") or () if isinstance(c, str)]
    if changes:
        return "Graph coverage: " + escape_inline("; ".join(changes), limit=600) + "."
    if cov.get("base") is not None:
        return ""            # compared and unchanged: nothing to say
    h = cov["head"]
    parts = []
    if _num(h.get("captured_ops")):
        parts.append(f"{h['captured_ops']} captured ops in {h.get('unique_graphs', '?')} "
                     f"graph{'' if h.get('unique_graphs') == 1 else 's'} (largest "
                     f"{_share(h.get('largest_share'))})")
    if _num(h.get("aten_outside")):
        parts.append(f"{h['aten_outside']} ATen ops outside graphs"
                     + (f" ({h['aten_in_graphs']} inside)" if _num(h.get("aten_in_graphs"))
                        else ""))
    if h.get("eager_frames"):
        parts.append(f"{h['eager_frames']} frame{'s' if h['eager_frames'] != 1 else ''} "
                     "run eagerly")
    return ("Graph coverage: " + "; ".join(parts) + ".") if parts else ""


def _pair(b: Mapping[str, Any] | None, h: Mapping[str, Any], key: str, fmt: str = "{}") -> str:
    hv = h.get(key)
    if not _num(hv):
        return ""
    bv = b.get(key) if b is not None else None
    return (f"{fmt.format(bv)} → {fmt.format(hv)}" if _num(bv) else fmt.format(hv))


def compile_line(m: ModelDelta) -> str:
    """The model's compile-cost line, or "" when head's first compile was not measured."""
    c = m.compile
    if not isinstance(c, Mapping) or not isinstance(c.get("head"), Mapping):
        return ""
    b = c.get("base") if isinstance(c.get("base"), Mapping) else None
    h = c["head"]
    backend = m.head.get("compile_cost", {}).get("backend") if isinstance(m.head, Mapping) \
        and isinstance(m.head.get("compile_cost"), Mapping) else None
    # the caches each side found: "cold" alone, of head, read as both sides' where base's
    # graphs came from the cache of an earlier run and the line then says base warm
    caches = [s.get("cache") for s in (b, h) if s is not None and s.get("cache") in ("cold", "warm")]
    cache = (" → ".join(caches) if len(caches) == 2 and caches[0] != caches[1]
             else h.get("cache") if h.get("cache") in ("cold", "warm") else "")
    what = ", ".join(x for x in ("first call", escape_inline(backend, limit=40) if backend
                                 else "", cache) if x)
    parts = []
    cpu = _pair(b, h, "cpu_s", "{:.2f}")
    if cpu:
        ratio = c.get("ratio")
        parts.append(f"{cpu} CPU s" + (f" (×{ratio:.2f})" if c.get("basis") == "cpu_s"
                                       and _num(ratio) else ""))
    for key, label in (("fx_nodes", "FX nodes"), ("guards", "guards"), ("graphs", "graphs"),
                       ("kernels", "kernels"), ("kernel_bytes", "bytes of generated code")):
        pair = _pair(b, h, key)
        if pair:
            parts.append(f"{label} {pair}")
    if c.get("regression") and c.get("follows_breaks"):
        verdict = (f"⚠️ costlier (threshold {c.get('threshold_pct', 0):g} %), following from the "
                   "new graph breaks: more graphs, FX nodes within the threshold")
    elif c.get("regression"):
        verdict = f"❌ regression (threshold {c.get('threshold_pct', 0):g} %)"
    elif b is None:
        verdict = "no base to compare"
    elif isinstance(c.get("note"), str) and c["note"].startswith("not compared"):
        return f"Compile ({what}): " + " · ".join(parts) + f" · {escape_inline(c['note'], limit=300)}."
    else:
        verdict = "no regression"
        ratio, pct = c.get("ratio"), c.get("threshold_pct")
        fx = [s.get("fx_nodes") for s in (b, h)]
        if c.get("basis") == "cpu_s" and _num(ratio) and _num(pct) and ratio < 1 / (1 + pct / 100) and \
                all(_num(x) for x in fx) and fx[1] >= fx[0] * (1 - pct / 200):
            # a compile of the same work in less CPU time is the machine's load, not the PR:
            # guided-diffusion's "×0.42" read as an improvement for a PR that split the graph
            verdict += (": less CPU time for about the same work (FX nodes), not a cheaper "
                        "compile: more likely the machine's load")
    note = c.get("note")
    # (a split into more graphs that follows from the breaks is what the verdict said already)
    tail = f": {escape_inline(note, limit=300)}" if isinstance(note, str) and note and not (
        c.get("follows_breaks") and note.startswith("the compile is split into more graphs")) else ""
    return f"Compile ({what}): " + " · ".join(parts) + f" · {verdict}{tail}."


__all__ = ["compile_line", "coverage_line"]
