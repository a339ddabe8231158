"""Ground truth for one model, in the benchmark venv: what ran, and what dynamo did there.

    python collect.py --model LIB:NAME --out FILE.json

Run by `run.py` in a subprocess per model (one thread, a timeout). It records, for the
files of the model's own library only (the innermost stack frame inside the package):

- `executed`: lines run by the eager forward over both input cases (`sys.settrace`, eval
  mode, no grad) on a copy of the model taken before any call;
- `traced`: lines dynamo symbolically executed (a wrapper on
  `InstructionTranslatorBase.starts_line`), so a line that ran eagerly only because dynamo
  skipped its frame is not taken as "dynamo did not break here";
- `breaks`: every `dynamo_graph_break_reason` artifact of the structured trace
  (`torch.__trace`), deduplicated on (GB id, innermost library frame) — the way
  pt2bot/smoke/breaks.py does it, because `torch._dynamo.explain` misses breaks in loops
  and breaks with nothing traced before them;
- `specializations` (`symbolic_shape_specialization` events), `guards`
  (`guard_added_fast` events on symbolic sizes) and `recompiles` (compilation metrics'
  `recompile_reason`) from `torch.compile(model, backend="eager")` called on case A with the
  dims that differ between the cases marked `maybe_mark_dynamic`, then on case B.

The payload parser is a copy of the few lines of pt2bot/smoke/graph_breaks.py this needs:
that package is being restructured, and this script must also run without pt2bot.
"""
from __future__ import annotations

import argparse
import copy
import importlib
import json
import logging
import os
import re
import sys
import time
import traceback
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

_URL_RE = re.compile(r"compile-graph-break-site/gb/gb(\d{4})\.html", re.IGNORECASE)
_HEADER_RE = re.compile(r"^Graph break in user code at (?P<file>.+):(?P<line>\d+)\s*$", re.M)
_FRAME_RE = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>.+?)\s*$')
_CHAIN_SEP = "*** While handling this graph break, another graph break occurred: ***"
_SYM_RE = re.compile(r"\b[su]\d+\b")
_REASON_LOC_RE = re.compile(r"#\s(?P<file>\S+\.py):(?P<line>\d+) in (?P<fn>[\w<>.]+)")
LOOP_GB = "GB7000"
_SKIP_KINDS = ("chromium_event", "str", "describe_storage", "describe_tensor", "describe_source")


def shim_torchvision() -> None:
    """torchvision 0.28 registers fake kernels for two ops the CPU torch 2.13.0 lacks.

    Defining their schemas first lets its pure-Python parts import (timm and vit-pytorch
    import it); no torchvision op is ever called.
    """
    import torch
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    globals()["_TV_LIB"] = lib   # the definitions live as long as the Library object


class Trace(logging.Handler):
    """In-memory handler on the structured-trace logger (what TORCH_TRACE writes)."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.events: list[tuple[str, str | None, Any, str | None]] = []
        self.where: list[tuple[int, Any, Any]] = []   # (case index, frame_id, frame_compile_id)
        self.case = 0

    def emit(self, record: logging.LogRecord) -> None:
        md = getattr(record, "metadata", None)
        if not isinstance(md, dict) or not md:
            return
        kind = next(iter(md))
        if kind in _SKIP_KINDS:
            return
        name = md["artifact"].get("name") if kind == "artifact" else None
        self.events.append((kind, name, md.get(kind), getattr(record, "payload", None)))
        self.where.append((self.case, md.get("frame_id"), md.get("frame_compile_id")))

    def __enter__(self) -> "Trace":
        lg = logging.getLogger("torch.__trace")
        lg.setLevel(logging.DEBUG)
        lg.propagate = False
        lg.addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger("torch.__trace").removeHandler(self)


class Lib:
    """Maps filenames to paths relative to the library's package directory (or None)."""

    def __init__(self, pkg_dir: str) -> None:
        self.dirs = tuple({pkg_dir.rstrip(os.sep) + os.sep,
                           os.path.realpath(pkg_dir).rstrip(os.sep) + os.sep})
        self._cache: dict[str, str | None] = {}

    def rel(self, filename: Any) -> str | None:
        if not isinstance(filename, str):
            return None
        r = self._cache.get(filename, "")
        if r != "":
            return r
        out = None
        for cand in (filename, os.path.realpath(filename)):
            for d in self.dirs:
                if cand.startswith(d):
                    out = cand[len(d):].replace(os.sep, "/")
                    break
            if out:
                break
        self._cache[filename] = out
        return out


def parse_break(payload: str) -> dict[str, Any]:
    """GB id (root cause), gb_type, reason and the user frames of one break payload."""
    header = _HEADER_RE.search(payload)
    body = payload[header.end():] if header else payload
    for marker in ("User code traceback:", "from user code:"):
        at = body.find(marker)
        if at >= 0:
            body = body[:at]
    sections = [s for s in body.split(_CHAIN_SEP) if s.strip()]
    ids = ["GB" + m.group(1) for m in _URL_RE.finditer(payload)]
    root_ids = [i for i in ids if i != LOOP_GB]
    gb_type = ""
    first = sections[0].splitlines() if sections else []
    for i, ln in enumerate(first):
        if ln.strip().startswith("Explanation:"):
            gb_type = next((p.strip() for p in reversed(first[:i]) if p.strip()), "")
            break
    frames = []
    for m in (_FRAME_RE.match(ln) for ln in payload.splitlines()):
        if m:
            frames.append((m.group("file"), int(m.group("line")), m.group("func")))
    return {"gb": root_ids[0] if root_ids else (ids[0] if ids else None),
            "in_loop": LOOP_GB in ids, "gb_type": gb_type,
            "reason": (sections[0].strip() if sections else payload.strip())[:600],
            "header": (header.group("file"), int(header.group("line"))) if header else None,
            "frames": frames}


def _lib_stack(frames: list[tuple[Any, int, str]], lib: Lib) -> list[dict[str, Any]]:
    out = []
    for f, line, fn in frames:
        rel = lib.rel(f)
        if rel:
            out.append({"path": rel, "line": line, "function": fn})
    return out


def _structured_stack(stack: list[dict[str, Any]], table: dict[int, str],
                      lib: Lib) -> list[dict[str, Any]]:
    frames = []
    for fr in stack or ():
        f = fr.get("filename")
        f = table.get(f) if isinstance(f, int) else f
        frames.append((f, int(fr.get("line") or 0), str(fr.get("name") or "")))
    return _lib_stack(frames, lib)


def _tensors(obj: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """(position, tensor) pairs of a case's args: top level, lists/tuples, dict values."""
    import torch
    if isinstance(obj, torch.Tensor):
        return [(path, obj)]
    out: list[tuple[tuple[Any, ...], Any]] = []
    if isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            out += _tensors(v, path + (i,))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out += _tensors(v, path + (k,))
    return out


def varying_axes(case_a: Any, case_b: Any) -> dict[tuple[Any, ...], list[int]]:
    """Axes whose size differs between the two cases, per tensor position in case A."""
    tb = dict(_tensors(case_b))
    out: dict[tuple[Any, ...], list[int]] = {}
    for pos, t in _tensors(case_a):
        u = tb.get(pos)
        if u is None or u.dim() != t.dim():
            continue
        axes = [ax for ax in range(t.dim()) if t.shape[ax] != u.shape[ax] and t.shape[ax] >= 2]
        if axes:
            out[pos] = axes
    return out


def shapes(case: Any) -> list[list[int]]:
    return [list(t.shape) for _p, t in _tensors(case)]


def run_eager_coverage(model: Any, cases: list[Any], lib: Lib) -> dict[str, set[int]]:
    import torch
    lines: dict[str, set[int]] = {}

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            rel = lib.rel(frame.f_code.co_filename)
            if rel:
                lines.setdefault(rel, set()).add(frame.f_lineno)
        return local

    def glob(frame: Any, event: str, arg: Any) -> Any:
        rel = lib.rel(frame.f_code.co_filename)
        if rel is None:
            return None     # not the library's file: no per-line tracing (cheap)
        lines.setdefault(rel, set()).add(frame.f_lineno)
        return local

    with torch.no_grad():
        for args, kwargs in cases:
            torch.manual_seed(0)
            sys.settrace(glob)
            try:
                model(*args, **kwargs)
            finally:
                sys.settrace(None)
    return lines


def run_dynamo(model: Any, cases: list[Any], lib: Lib) -> dict[str, Any]:
    import torch
    from torch._dynamo import symbolic_convert as sc
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    from torch._dynamo.utils import (clear_compilation_metrics, get_compilation_metrics,
                                     set_compilation_metrics_limit)
    clear_compilation_metrics()
    # torch keeps the last 64 records by default: a model that compiles more frames (a solver
    # of torchdiffeq) lost its earliest recompiles from the ground truth
    set_compilation_metrics_limit(1 << 16)

    traced: dict[str, set[int]] = {}
    orig = sc.InstructionTranslatorBase.starts_line

    def starts_line(self: Any, lineno: int) -> None:
        rel = lib.rel(self.f_code.co_filename)
        if rel:
            traced.setdefault(rel, set()).add(lineno)
        return orig(self, lineno)

    graphs = 0

    def backend(gm: Any, example_inputs: Any) -> Any:
        nonlocal graphs
        graphs += 1
        return gm.forward

    sc.InstructionTranslatorBase.starts_line = starts_line  # type: ignore[method-assign]
    compiled = torch.compile(model, backend=backend)
    (args_a, kw_a), case_b = cases[0], cases[1]
    marked = varying_axes((args_a, kw_a), case_b)
    for pos, t in _tensors((args_a, kw_a)):
        for ax in marked.get(pos, ()):
            torch._dynamo.maybe_mark_dynamic(t, ax)
    errors: list[str] = []
    t0 = time.perf_counter()
    with Trace() as trace, torch.no_grad():
        for i, (args, kwargs) in enumerate(cases):
            torch.manual_seed(0)
            trace.case = i
            try:
                compiled(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - a failure is a result, recorded
                errors.append(f"case {i}: {type(e).__name__}: {str(e)[:1500]}")
    sc.InstructionTranslatorBase.starts_line = orig  # type: ignore[method-assign]
    compile_s = time.perf_counter() - t0

    try:
        from torch._logging.structured import INTERN_TABLE
        table = {v: k for k, v in INTERN_TABLE.items()}
    except ImportError:
        table = {}

    breaks: dict[tuple[Any, ...], dict[str, Any]] = {}
    outside = 0
    for kind, name, _data, payload in trace.events:
        if kind != "artifact" or name != "dynamo_graph_break_reason" or not payload:
            continue
        pb = parse_break(payload)
        stack = _lib_stack(pb["frames"], lib)
        if not stack and pb["header"] and lib.rel(pb["header"][0]):
            stack = [{"path": lib.rel(pb["header"][0]), "line": pb["header"][1],
                      "function": None}]
        if not stack:
            outside += 1    # a break with no frame in the library (e.g. in torch itself)
            continue
        inner = stack[-1]
        key = (pb["gb"] or pb["gb_type"], inner["path"], inner["line"])
        site = breaks.get(key)
        if site is None:
            breaks[key] = {"gb": pb["gb"], "gb_type": pb["gb_type"], "reason": pb["reason"],
                           "path": inner["path"], "line": inner["line"],
                           "function": inner["function"], "in_loop": pb["in_loop"],
                           "count": 1, "stack": stack}
        else:
            site["count"] += 1
            site["in_loop"] = site["in_loop"] or pb["in_loop"]
            if len(stack) > len(site["stack"]):
                site["stack"] = stack

    # Which symbols are dims the USER varies. Symbol names repeat across frames, so they are
    # keyed by (frame_id, frame_compile_id, name) → source. In the first frame (the model's
    # forward) the only symbols are the dims marked dynamic and, in case B, dims whose size
    # changed from case A: all the user's. In later frames (resumed after a graph break, or a
    # frame of its own after a skip) automatic dynamic also makes a dim symbolic because one
    # code object is called with different sizes within ONE forward (each decoder stage's
    # channel count): not a dim the user varies. There a symbol counts as the user's when its
    # axis is one that differs between the two input cases (`varying_axes`): a heuristic
    # (a rank-changing reshape moves axes), which the hand labels of sites can overrule.
    user_axes = {ax for axes in marked.values() for ax in axes}
    sym_source: dict[tuple[Any, Any, str], str] = {}
    for (kind, _n, data, _p), (_case, fid, fcid) in zip(trace.events, trace.where):
        if kind == "create_symbol" and isinstance(data, dict):
            sym_source[(fid, fcid, str(data.get("symbol")))] = str(data.get("source"))

    def is_user(fid: Any, src: str | None) -> bool:
        if src is None or "._base" in src:
            return False    # unknown, or a view's storage bound: no dim of the user's
        if fid == 0:
            return True
        m = re.search(r"(?:\.size\(\)|\.shape)?\[(\d+)\]$", src)
        return bool(m) and int(m.group(1)) in user_axes

    def provenance(fid: Any, fcid: Any, syms: list[str]) -> tuple[list[str], bool]:
        srcs = [sym_source.get((fid, fcid, sym)) for sym in syms]
        return ([s or sym for s, sym in zip(srcs, syms)],
                any(is_user(fid, s) for s in srcs))

    specs: dict[tuple[Any, ...], dict[str, Any]] = {}
    guards: dict[tuple[Any, ...], dict[str, Any]] = {}
    for (kind, _n, data, _p), (case, fid, fcid) in zip(trace.events, trace.where):
        if not isinstance(data, dict):
            continue
        if kind == "symbolic_shape_specialization":
            try:
                value = int(data.get("value"))
            except (TypeError, ValueError):
                continue
            stack = _structured_stack(data.get("user_stack") or [], table, lib)
            if not stack or value in (0, 1):
                continue    # 0/1 specialisation is torch's own, not the code's
            inner = stack[-1]
            _srcs, user = provenance(fid, fcid, [str(data.get("symbol"))])
            key = (inner["path"], inner["line"], tuple(data.get("sources") or ()))
            sp = specs.setdefault(key, {"path": inner["path"], "line": inner["line"],
                                        "function": inner["function"], "value": value,
                                        "sources": list(data.get("sources") or ()),
                                        "reason": str(data.get("reason")), "stack": stack,
                                        "user_dim": False, "values": {},
                                        "frame": f"{fid}/{fcid}"})
            sp["user_dim"] = sp["user_dim"] or user
            vs = sp["values"].setdefault(str(case), [])
            if value not in vs:
                vs.append(value)
        elif kind == "guard_added_fast":
            expr = str(data.get("expr"))
            syms = sorted(set(_SYM_RE.findall(expr)))
            if not syms:
                continue
            stack = _structured_stack(data.get("user_stack") or [], table, lib)
            if not stack:
                continue
            inner = stack[-1]
            srcs, user = provenance(fid, fcid, syms)
            key = (inner["path"], inner["line"], expr)
            g = guards.get(key)
            if g is None:
                guards[key] = {"path": inner["path"], "line": inner["line"],
                               "function": inner["function"], "expr": expr[:300],
                               "sources": srcs, "user_dim": user, "count": 1, "stack": stack,
                               "case": case, "frame": f"{fid}/{fcid}"}
            else:
                g["count"] += 1
                g["user_dim"] = g["user_dim"] or user

    recompiles = []
    lib_files = {os.path.join(lib.dirs[0], p) for p in traced}
    for m in get_compilation_metrics():
        rr = getattr(m, "recompile_reason", None)
        if not rr:
            continue
        loc = _REASON_LOC_RE.search(rr)
        path = line = None
        if loc:
            suffix = loc.group("file")
            hit = next((f for f in lib_files if f.endswith(suffix)), None)
            if hit:
                path, line = lib.rel(hit), int(loc.group("line"))
        recompiles.append({"reason": rr[:500], "path": path, "line": line,
                           "co_name": getattr(m, "co_name", None)})
    torch._dynamo.reset()
    return {"graph_count": graphs, "breaks": list(breaks.values()),
            "breaks_outside_library": outside,
            "specializations": list(specs.values()), "guards": list(guards.values()),
            "recompiles": recompiles, "traced": {k: sorted(v) for k, v in traced.items()},
            "errors": errors, "marked_dynamic": [[list(p), ax] for p, ax in marked.items()],
            "compile_s": round(compile_s, 2)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="LIB:NAME (see models.py)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    t0 = time.perf_counter()
    import torch
    torch.set_num_threads(1)
    shim_torchvision()
    import models
    sp = models.by_key()[a.model]
    pkg = importlib.import_module(sp.package)
    pkg_dir = list(pkg.__path__)[0]    # also a namespace package's (no __init__.py)
    lib = Lib(pkg_dir)
    result: dict[str, Any] = {"model": sp.key, "lib": sp.lib, "package": sp.package,
                              "note": sp.note, "status": "ok", "error": None}
    try:
        torch.manual_seed(0)
        model, cases = sp.build()
        if hasattr(model, "eval"):
            model.eval()
        twin = copy.deepcopy(model)    # eager coverage on a twin, so dynamo sees fresh state
        result["cases"] = [shapes(c) for c in cases]
        t1 = time.perf_counter()
        executed = run_eager_coverage(twin, copy.deepcopy(cases), lib)
        result["eager_s"] = round(time.perf_counter() - t1, 2)
        result["executed"] = {k: sorted(v) for k, v in sorted(executed.items())}
        result.update(run_dynamo(model, cases, lib))
        if result["errors"]:
            result["status"] = "compile_error"
    except Exception as e:  # noqa: BLE001 - the model's failure is the result
        result["status"] = "error"
        result["error"] = f"{type(e).__name__}: {e}"[:2000]
        result["traceback"] = traceback.format_exc()[-4000:]
    result["duration_s"] = round(time.perf_counter() - t0, 2)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
