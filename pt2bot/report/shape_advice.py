"""A model's shape advice as Markdown (the review's summary and the audit's report).

The advice is the RUN's `shape_advice` (docs/formats.md; pt2bot/smoke/advice.py): per input
dim, dynamic with a range and divisibility, or static with the line that pins it; the
compiles over the matrix before and after the advised settings; paste-ready code. Every text
in it came from the user's code or torch's messages about it: each goes through
pt2bot/report/escape.py (code spans, code blocks, inline escapes).
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from pt2bot.report.markdown import code_block, code_inline, details, escape_inline, message_inline

MAX_DIMS = 20


def located_at(x: Mapping[str, Any], word: str = "at") -> str:
    """" at `path:line`" of a located item, else ""."""
    if not x.get("path"):
        return ""
    line = x.get("line")
    where = f"{x['path']}:{line}" if isinstance(line, int) else str(x["path"])
    return f" {word} {code_inline(where, limit=160)}"


def _range(e: Mapping[str, Any]) -> str:
    lo, hi, k = e.get("min"), e.get("max"), e.get("multiple_of")
    bits = []
    if isinstance(lo, int) and isinstance(hi, int):
        bits.append(f"{lo}..{hi}")
    elif isinstance(hi, int):
        bits.append(f"≤ {hi}")
    elif isinstance(lo, int):
        bits.append(f"≥ {lo}")
    if isinstance(k, int):
        bits.append(f"multiple of {k}")
    return ", ".join(bits) or "any size"


_LEN_CALL = re.compile(r"\blen\(")


def _len_words(e: Mapping[str, Any]) -> str:
    """What to write where the line that pins the dim takes a `len()`: torch.export's default
    (non-strict) tracing gets a Python int from `Tensor.__len__`, where `.shape[0]` stays
    symbolic (PTC307's fix; a V-JEPA user read "cannot be dynamic" for three `len(x)`)."""
    src = e.get("source")
    if not isinstance(src, str) or not _LEN_CALL.search(src):
        return ""
    return ("; if the `len()` there is of a tensor, it is a Python int to torch.export's default "
            "tracing: `.shape[0]` keeps the dim symbolic (PTC307)")


def per_size_words(e: Mapping[str, Any]) -> str:
    """"; each new size compiles again ...": what a pinned dim that every new size of the
    matrix recompiled on costs over many sizes, or ""."""
    p = e.get("per_size")
    if not isinstance(p, Mapping) or not isinstance(p.get("sizes"), int):
        return ""
    limit = p.get("limit") if isinstance(p.get("limit"), int) else 8
    again = p.get("recompiled")
    return (f"; each new size compiles again ({again} recompile{'s' if again != 1 else ''} on it "
            f"over the matrix's {p['sizes']} sizes): past {limit} sizes (`recompile_limit`) "
            "dynamo runs this code eagerly, so pad inputs to a few fixed sizes")


def dim_line(inp: str, ax: str, e: Mapping[str, Any]) -> str:
    """One dim of the advice: "- `idx.shape[1]` (`seq`): dynamic, ≤ 64" / "... static: the
    code specialises batch to 4 at `m.py:35`: `y = x.view(4, -1)`"."""
    what = code_inline(f"{inp}.shape[{ax}]", limit=80)
    if e.get("static"):
        where = located_at(e)
        src = f": {code_inline(e['source'], limit=200)}" if e.get("source") else ""
        base = " (base's export, which head's stops before)" if e.get("from_base") else ""
        return (f"- {what}: **cannot be dynamic**, "
                f"{message_inline(e.get('reason') or 'pinned by the code', limit=300)}{where}{src}"
                + base + per_size_words(e) + _len_words(e))
    name = f" ({code_inline(e.get('name') or '?', limit=60)})"
    line = f"- {what}{name}: dynamic, {escape_inline(_range(e), limit=80)}"
    if e.get("from_base"):
        line += " (the bound base's export needed, which head's stops before)"
    if isinstance(e.get("auto"), Mapping) and e.get("multiple_of"):
        took = [n for n in e["auto"].get("took") or () if isinstance(n, int)]
        line += ("; the multiple is torch's fix for a `Dim`, not the model's need: `Dim.AUTO` "
                 "exports it with none" + (f" (ran {', '.join(map(str, took))})" if took else ""))
    split = e.get("not_one_range")
    if isinstance(split, Mapping):
        where = f" (branch{located_at(split)})" if split.get("path") else ""
        line += f"; not one range over the matrix: {escape_inline(split.get('reason') or '', limit=200)}{where}"
    return line


def dims_markdown(advice: Mapping[str, Any]) -> list[str]:
    ds = (advice.get("export") or {}).get("dynamic_shapes")
    out: list[str] = []
    if not isinstance(ds, Mapping):
        return out
    for inp, axes in ds.items():
        if not isinstance(axes, Mapping):
            continue
        for ax, e in axes.items():
            if isinstance(e, Mapping) and len(out) < MAX_DIMS:
                out.append(dim_line(str(inp), str(ax), e))
    return out


def compiles_text(advice: Mapping[str, Any]) -> str:
    """"compiles over the matrix: 3 → 1 with `mark_dynamic`" (or what is known)."""
    c = advice.get("compile") or {}
    before, after, method = c.get("compiles_before"), c.get("compiles_after"), c.get("method")
    if not isinstance(before, int):
        return ""
    if not isinstance(after, int) or not method:
        return f"compiles over the matrix: {before} (no dynamic setting to advise)"
    if c.get("worse"):
        return (f"compiles over the matrix: {before} as configured, {after} with "
                f"{code_inline(method, limit=40)}: not advised for compiling")
    # why not `mark_dynamic`, where it was tried and raised (MAE's user met its
    # ConstraintViolationError on each PR's head, where the advice had quietly moved on)
    tried = (c.get("tried") or {}).get("mark_dynamic") if isinstance(c.get("tried"), Mapping) else None
    err = tried.get("error") if isinstance(tried, Mapping) else None
    why = (f" (`mark_dynamic` raises: {message_inline(str(err).splitlines()[0], limit=160)})"
           if method != "mark_dynamic" and isinstance(err, str) and err.strip() else "")
    return (f"compiles over the matrix: {before} → {after} with "
            f"{code_inline(method, limit=40)}{why}")


def export_text(advice: Mapping[str, Any]) -> str:
    e = advice.get("export") or {}
    if e.get("ok") is True:
        return "the advised `dynamic_shapes` exports"
    if e.get("ok") is False:
        where = located_at(e)
        return (f"export still fails: {escape_inline(e.get('kind') or 'error', limit=40)}"
                f"{where}")
    return ""


def with_base_pins(head: Mapping[str, Any], pins: Any) -> Mapping[str, Any]:
    """Head's advice where its export stopped before the dims (at the pull request's new
    failure), with each dim that base's export found pinned (report.json's `base_pins`, placed
    in head's file) said as base found it (`from_base`) and left out of the YAML to paste; the
    Python, a spec of those dims, is left out (held-out batch 38's PR 2 offered `size: null`
    beside base's "the code specialises size to 16", and the pasted block failed there).
    `head` itself where there are none."""
    hx = head.get("export") or {}
    hd = hx.get("dynamic_shapes")
    pins = [p for p in pins or () if isinstance(p, Mapping) and isinstance(p.get("entry"), Mapping)]
    if not isinstance(hd, Mapping) or not pins:
        return head
    shapes = {inp: dict(axes) for inp, axes in hd.items() if isinstance(axes, Mapping)}
    names = []
    bounded: dict[str, Mapping[str, Any]] = {}   # a dim name -> base's bounds of it
    for p in pins:
        axes = shapes.get(str(p.get("input")))
        if axes is not None and str(p.get("axis")) in axes:
            if not p["entry"].get("static"):
                axes[str(p["axis"])] = {**p["entry"], "from_base": True}
                bounded.setdefault(str(p["entry"].get("name")), p["entry"])
                continue
            names.append((axes[str(p["axis"])] or {}).get("name"))
            axes[str(p["axis"])] = {**p["entry"], "from_base": True}
    # a dim name stays in the YAML while an axis of it is still dynamic
    still = {e.get("name") for axes in shapes.values() for e in axes.values()
             if isinstance(e, Mapping) and not e.get("static")}
    gone = {n for n in names if n and n not in still}
    code = dict(head.get("code") or {})
    yaml = [ln for ln in str(code.get("yaml") or "").splitlines()
            if not any(ln.startswith(f"  {n}:") for n in gone)]
    yaml = [_bounded_yaml(ln, bounded) for ln in yaml]
    yaml += [f"  # {p['input']}.shape[{p['axis']}]: cannot be dynamic ({p['entry'].get('reason')}, on base)"
             for p in pins if p["entry"].get("static")]
    code.update(yaml="\n".join(yaml) if len(yaml) > 1 else "dynamic: []  # no dim can be dynamic")
    if any(p["entry"].get("static") or p["entry"].get("multiple_of") for p in pins):
        # (a multiple is written `k * _dim` with bounds of its own: no line to patch here)
        code.update(python=None, compile=None)
    else:
        # base's bounds written into the paste-ready spec (`Dim('size', min=4)`)
        code.update(python="\n".join(_bounded_python(ln, bounded) for ln in str(code.get("python") or "").splitlines())
                    or None)
    return {**head, "export": {**hx, "dynamic_shapes": shapes}, "code": code}


def _bounds_words(e: Mapping[str, Any]) -> list[str]:
    return [f"{k}={e[k]}" for k in ("min", "max") if isinstance(e.get(k), int)]


def _bounded_python(line: str, bounded: Mapping[str, Mapping[str, Any]]) -> str:
    """`size = Dim('size')` with base's bounds: `size = Dim('size', min=4)`."""
    m = re.fullmatch(r"(\w+) = Dim\('(\w+)'\)", line)
    e = bounded.get(m.group(2)) if m else None
    return line if e is None or not _bounds_words(e) else \
        f"{m.group(1)} = Dim({m.group(2)!r}, {', '.join(_bounds_words(e))})"


def _bounded_yaml(line: str, bounded: Mapping[str, Mapping[str, Any]]) -> str:
    """`  size: null` with base's bounds: `  size: {min: 4}`."""
    m = re.fullmatch(r"  (\w+): null", line)
    e = bounded.get(m.group(1)) if m else None
    if e is None:
        return line
    parts = [f"{k}: {e[k]}" for k in ("min", "max", "multiple_of") if isinstance(e.get(k), int)]
    return f"  {m.group(1)}: {{{', '.join(parts)}}}" if parts else line


def advice_markdown(advice: Mapping[str, Any], title: str = "Shape advice") -> str:
    """The advice as a `<details>` block: the dims, export and compile verdicts, notes, and
    the code to paste."""
    lines = dims_markdown(advice)
    export = advice.get("export") or {}
    failed = export.get("ok") is False
    if failed and lines:
        # Export stopped before it could check these dims (minGPT's head: at a data-dependent
        # branch above the position table that bounds `seq`): "any size" is what was asked,
        # not what was verified.
        lines.insert(0, f"- the dims export was asked for; not verified, export stops first{located_at(export)}:")
    said = [t for t in (export_text(advice), compiles_text(advice)) if t]
    if said:
        lines.append("- " + "; ".join(said))
    for n in list(advice.get("notes") or ())[:5]:
        lines.append(f"- ℹ️ {escape_inline(n, limit=400)}")
    code = advice.get("code") or {}
    blocks = []
    if code.get("python"):
        py = str(code["python"]) + ("\n\n" + str(code["compile"]) if code.get("compile") else "")
        if failed:
            where = (f" at {export['path']}:{export.get('line')}" if export.get("path") else "")
            note = " ".join(f"not verified: export with these dims fails "
                            f"({export.get('kind') or 'error'}{where})".split())  # one line
            py = f"# {note}\n" + py
        blocks.append(code_block(py, "python", limit=3000))
    pinned = "cannot be dynamic" in str(code.get("yaml") or "")
    if code.get("yaml") and not pinned and ((advice.get("compile") or {}).get("reused")
                                            or (advice.get("compile") or {}).get("yaml_as_configured")):
        # the advised dims are the configured ones: a `dynamic:` block to paste over the same
        # `dynamic:` read as advice to change something (a new user's `[batch, depth]`); not
        # where the advice says a declared dim cannot be dynamic (recurrentgemma's `seq`, pinned
        # by its scan: "already declares these dims" read as false beside it)
        lines.append("- pt2bot.yml's `dynamic:` already declares these dims, with these ranges")
    elif code.get("yaml"):
        blocks.append("pt2bot.yml:\n\n" + code_block(code["yaml"], "yaml", limit=1500))
    body = "\n".join(lines) + ("\n\n" + "\n\n".join(blocks) if blocks else "")
    return details(escape_inline(title, limit=200), body)


def causes_markdown(causes: Any) -> str:
    """The delta's `new_export_causes`: dims that can no longer be dynamic and export failures
    with a new cause."""
    lines = []
    for c in list(causes or ())[:20]:
        if not isinstance(c, Mapping):
            continue
        where = located_at(c)
        src = f": {code_inline(c['source'], limit=200)}" if c.get("source") else ""
        if c.get("kind") == "static_dim":
            past = c.get("past_failure") if isinstance(c.get("past_failure"), Mapping) else None
            lines.append(f"- {code_inline(c.get('dim') or '?', limit=60)} can no longer be "
                         f"dynamic{where}{src} "
                         f"({message_inline(c.get('reason') or 'pinned by the code', limit=300)})"
                         + (f", found past the new export failure{located_at(past)}, which may be "
                            "what pins it: fix that first" if past else ""))
        else:
            base = c.get("base") or {}
            was = (f"; base failed with {escape_inline(base.get('export_kind') or 'error', limit=40)}"
                   + located_at(base))
            lines.append(f"- torch.export fails for a new reason: "
                         f"{escape_inline(c.get('export_kind') or 'error', limit=40)}{where}{src}{was}")
    return "\n".join(lines)


__all__ = ["advice_markdown", "causes_markdown", "compiles_text", "dim_line", "dims_markdown", "located_at"]
