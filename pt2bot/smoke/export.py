"""Phase "export": `torch.export.export` with the configured dynamic dims.

On success each declared-dynamic dim must still be symbolic in the program (a `Dim` can
silently specialise), and the program must match eager on every case. On failure the kind
is classified and located: non-strict export errors rarely carry a file:line (a constraint
violation never does), so `torch.export.draft_export` — which always returns a program and
a report of every failure with its user stack — is asked where the problem is.
"""
from __future__ import annotations

import ast
import contextlib
import io
import linecache
import math
import os
import re
import shutil
import sys
import tempfile
import traceback
from typing import Any

from pt2bot.results import shape_label
from pt2bot.smoke import graph_breaks
from pt2bot.smoke.inputs import (CaseInputs, call_mode, compare_outputs, forget_state, forward_params,
                                 layout, nest_spec, remember_state, restore_state, seed_all, start_call)
from pt2bot.smoke.matrix import MAX_DIM, specialization_sites, user_frame
from pt2bot.smoke.trace import RepoPaths, TraceCollector, frame_file, intern_table, reset_dynamo


def example_case(cases: list[CaseInputs], dynamic: set[str]) -> CaseInputs:
    """The case to trace with: dynamic dims >= 2 (torch specialises sizes 0 and 1), with
    distinct sizes where a case has them (two dynamic dims of equal size in the example
    would be taken for one: duck sizing)."""
    fit = [c for c in cases if all(c.shape.get(d, 2) >= 2 for d in dynamic)]
    for c in fit:
        sizes = [c.shape[d] for d in dynamic if d in c.shape]
        if len(set(sizes)) == len(sizes):
            return c
    return fit[0] if fit else cases[0]


def dim_name(d: str) -> str:
    """A config dim's name as a `Dim`'s (an identifier)."""
    return re.sub(r"\W", "_", d) or "dim"


def make_dim(d: str, lo: int | None, hi: int | None, multiple_of: int | None) -> Any:
    """The `Dim` (or `k*Dim` when the size is a multiple of k) of a dim's range; None ends
    are export's defaults."""
    from torch.export import Dim

    k = multiple_of if multiple_of and multiple_of > 1 else None
    if k is None:
        return Dim(dim_name(d), min=lo, max=hi)
    root = Dim("_" + dim_name(d), min=None if lo is None else -(-lo // k),
               max=None if hi is None else hi // k)
    return k * root


def declared_range(d: str, cases: list[CaseInputs], bounds: dict[str, Any] | None
                   ) -> tuple[int, int, int | None]:
    """(min, max, multiple_of) of a dynamic dim: what pt2bot.yml declares (`dynamic: {seq:
    {min, max, multiple_of}}`), else from the matrix's smallest size to 2^20."""
    b = (bounds or {}).get(d) or {}
    values = [c.shape[d] for c in cases if d in c.shape]
    lo = b.get("min") or (max(1, min(values)) if values else 1)
    hi = b.get("max") or max(max(values) if values else 2, 2, MAX_DIM)
    return lo, hi, b.get("multiple_of")


def dynamic_shapes(case: CaseInputs, dynamic: set[str], cases: list[CaseInputs],
                   bounds: dict[str, Any] | None = None) -> Any:
    """`{param: {axis: Dim}}` for the declared-dynamic dims; one Dim object per dim name."""
    dims = {d: make_dim(d, *declared_range(d, cases, bounds)) for d in sorted(dynamic)}
    spec: dict[str, Any] = {}
    # (the inputs by name, then the tensors inside list, tuple or dict inputs by path)
    for name in [*case.named(), *case.tensors()]:
        axes = {ax: dims[d] for ax, d in case.dims.get(name, {}).items() if d in dims}
        spec.setdefault(name, axes or None)
    if not any(v for v in spec.values()):
        return None
    spec = as_called_spec(spec, case.args, case.kwargs)
    return var_args_spec(spec, case) if case.var_args else spec


def as_called_spec(spec: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
    """A spec keyed by input name (the positional inputs first, in order) and by the path of
    each tensor inside a list, tuple or dict input (`kv_caches[0][1]`), as torch.export takes it
    for these `args` and `kwargs`: such an input given its own structure, type for type (torch
    refuses None, or a list for a tuple, there: "`inputs['kv_caches']` is a list, but
    `dynamic_shapes['kv_caches']` is not"). A spec of tensors only is returned as it is."""
    if not isinstance(spec, dict):
        return spec
    names = [k for k in spec if "[" not in k]
    values = dict(zip(names, args))
    values.update({k: kwargs[k] for k in names[len(args):] if k in kwargs})
    if len(values) != len(names) or len(args) > len(names):
        return spec    # keyed otherwise (a `*args` forward's tuple): as the caller made it
    layouts = {n: layout(values[n]) for n in names}
    if all(lay in ("tensor", None) for lay in layouts.values()):
        return {n: spec[n] for n in names}
    if any(spec[n] is not None and lay not in ("tensor", None) for n, lay in layouts.items()):
        return spec    # nested already
    return nest_spec(spec, {n: values[n] for n in names})


def var_args_spec(spec: Any, case: CaseInputs) -> Any:
    """A spec keyed by input name, keyed as torch keys a `*args` forward's: the positional
    inputs that forward() takes as `*args` one tuple under its name, the keywords by theirs."""
    spec = dict(spec or {})
    return {str(case.var_args): tuple(spec.pop(n, None) for n in case.arg_names), **spec}


def classify_failure(exc: BaseException) -> str:
    names = {c.__name__ for c in type(exc).__mro__}
    text = str(exc)
    if "CONSTRAINT_VIOLATION" in str(getattr(exc, "error_type", "")) or \
            "ConstraintViolationError" in names or "Constraints violated" in text[:300]:
        return "constraint_violation"
    if names & {"GuardOnDataDependentSymNode", "DataDependentOutputException",
                "PendingUnbackedSymbolNotFound"} or "data-dependent" in text[:400] or \
            "DATA_DEPENDENT" in str(getattr(exc, "error_type", "")):
        return "data_dependent"
    if names & {"Unsupported", "UnsupportedOperatorException", "DynamicOutputShapeException"}:
        return "unsupported"
    return "error"


def short_message(text: str, limit: int = 1500) -> str:
    cut = text.split("\nThe error above occurred when calling torch.export.export")[0]
    cut = cut.split("\nFor C++ stack trace")[0].strip()
    return cut if len(cut) <= limit else cut[:limit - 1] + "…"


# torch's data-dependent errors end with the user frame that guarded: "Caused by:
# (models/item_branch.py:12 in forward)", the file shortened by torch's shorten_filename
# (torch/utils/_traceback.py): cut after its common path with the torch package's directory.
# A repository that shares only "/" with it loses one character more ("/tmp/r/m.py" ->
# "mp/r/m.py"), one that shares "/tmp" is named from there ("r/m.py"): neither is relative
# to a sys.path entry, so the name is also matched against the repository's own files.
_CAUSED_BY = re.compile(r"Caused by: \((?P<file>[^()\n]+?):(?P<line>\d+) in [^()\n]+\)")


def _repo_files_named(name: str, root: str) -> list[str]:
    """The files under `root` that torch's shorten_filename turns into `name` (exactly)."""
    try:
        from torch.utils._traceback import shorten_filename
    except ImportError:
        return []
    parts = name.split("/")
    tails = ("/".join(parts[i:]) for i in range(len(parts)))
    return [c for c in (os.path.join(root, t) for t in tails if t)
            if os.path.isfile(c) and shorten_filename(c) == name]


def _caused_by(text: str, paths: RepoPaths) -> tuple[str, int, str | None] | None:
    """(path, line, source) of the user frame a data-dependent error names, if it is the user's.
    Read from the message itself: deterministic and free, where `draft_export` (the fallback)
    re-traces the model and, in a process that already ran other exports, sometimes locates
    nothing (seen once in CI on tests/test_worker.py's item-branch model)."""
    m = _CAUSED_BY.search(text)
    if m is None:
        return None
    name, line = m.group("file"), int(m.group("line"))
    candidates = [name] if os.path.isabs(name) else \
        [os.path.join(p or os.getcwd(), name) for p in sys.path] + [os.path.abspath(name)] \
        + _repo_files_named(name, paths.root)
    for c in candidates:
        if os.path.isfile(c):
            rel = paths.rel(c)
            if rel:
                return rel, line, linecache.getline(c, line).strip() or None
    return None


_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _raised_in(e: BaseException, paths: RepoPaths) -> tuple[str, int, str | None] | None:
    """(path, line, source) of the innermost frame of the user's code that the exception was
    raised through. Non-strict export runs the model's Python, so where the message names only
    torch (`Caused by: (_export/non_strict_utils.py:1205 ...)`, a data-dependent branch inside a
    library the model calls) the traceback still holds the user's line that called it."""
    found = None
    seen: set[int] = set()
    exc: BaseException | None = e
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        for f in traceback.extract_tb(exc.__traceback__):
            rel = paths.rel(f.filename)
            # (pt2bot's own frames, which call export, when the repository is pt2bot's)
            if rel and f.lineno and not f.filename.startswith(_OWN_DIR):
                found = (rel, f.lineno, (f.line or "").strip() or None)
        if found:
            return found
        exc = exc.__cause__ or exc.__context__
    return None


@contextlib.contextmanager
def _real_parameters() -> Any:
    """draft_export with the model's parameters' real values.

    draft_export decides data-dependent branches (`if t.sum().item() > 0`) on real values that
    it propagates beside the fake ones. torch 2.13 and 2.14 give each input tensor its real
    copy through meta_utils' `_safe_copy` / `_safe_clone`, which copy only a tensor whose type
    is exactly `torch.Tensor`: an `nn.Parameter`'s copy is left as uninitialised memory. The
    branch taken then followed whatever bytes were there, and NaN bytes made draft_export raise
    "Invalid NaN comparison" (one call in ten or more, in bursts, so retries did not help).
    A parameter is handed over as its detached plain tensor; where torch has no such helpers
    nothing is changed."""
    import torch
    from torch._subclasses import meta_utils

    copy, clone = getattr(meta_utils, "_safe_copy", None), getattr(meta_utils, "_safe_clone", None)
    if copy is None or clone is None:
        yield
        return

    def plain(t: Any) -> Any:
        return t.detach() if isinstance(t, torch.nn.Parameter) else t

    meta_utils._safe_copy = lambda dst, src: copy(dst, plain(src))
    meta_utils._safe_clone = lambda src: clone(plain(src))
    try:
        yield
    finally:
        meta_utils._safe_copy, meta_utils._safe_clone = copy, clone


def draft_failures(model: Any, args: tuple, kwargs: dict, shapes: Any,
                   paths: RepoPaths) -> list[dict[str, Any]] | None:
    """Each failure draft_export reports, located at its innermost user frame: `{type, path,
    line, source, sources, expr, symbols}` (`sources`: the input sizes its guard names,
    `L['x'].size()[0]`; `expr`: the guard, `Eq(s77, 4)`; `symbols`: symbol -> source).
    None when draft_export is missing or raised."""
    import torch

    draft = getattr(torch.export, "draft_export", None)
    if draft is None:
        return None
    # draft_export logs a structured trace to a file in $TORCH_DTRACE, else in
    # <tmp>/export_<user>/, and never deletes it (one file per call: hundreds on a machine that
    # runs pt2bot often). It goes to a directory of our own that is removed afterwards.
    trace_dir = tempfile.mkdtemp(prefix="pt2bot-dtrace-")
    saved = os.environ.get("TORCH_DTRACE")
    os.environ["TORCH_DTRACE"] = trace_dir
    try:
        # draft_export reports failures rather than raising; where it raises anyway, the
        # locator has nothing to say
        try:
            with contextlib.redirect_stderr(io.StringIO()), _real_parameters():
                ep = draft(model, args, kwargs, dynamic_shapes=as_called_spec(shapes, args, kwargs))
        except Exception:  # noqa: BLE001 - the locator is best effort
            return None
    finally:
        if saved is None:
            os.environ.pop("TORCH_DTRACE", None)
        else:
            os.environ["TORCH_DTRACE"] = saved
        shutil.rmtree(trace_dir, ignore_errors=True)
    report = getattr(ep, "_report", None)
    table = intern_table()
    out = []
    for f in getattr(report, "failures", None) or ():
        data = getattr(f, "data", {}) or {}
        stack = data.get("user_stack") or []
        if isinstance(stack, str):
            try:
                stack = ast.literal_eval(stack)
            except (ValueError, SyntaxError):
                stack = []
        srcs = data.get("symbol_to_sources")
        sources = [str(v) for v in srcs.values()] if isinstance(srcs, dict) else []
        for fr in reversed(list(stack)):
            if not isinstance(fr, dict):
                continue
            rel = paths.rel(frame_file(fr, table))
            if rel:
                out.append({"type": getattr(getattr(f, "failure_type", None), "name", None),
                            "path": rel, "line": fr.get("line"), "source": fr.get("loc"),
                            "sources": sources, "expr": str(data.get("expr") or ""),
                            "symbols": dict(srcs) if isinstance(srcs, dict) else {}})
                break
    return out


def _draft_location(model: Any, args: tuple, kwargs: dict, shapes: Any,
                    paths: RepoPaths) -> tuple[str | None, int | None, str | None, str | None]:
    """(path, line, source, failure type) of draft_export's first located failure."""
    for f in draft_failures(model, args, kwargs, shapes, paths) or ():
        return f["path"], f["line"], f["source"], f["type"]
    return None, None, None, None


# a constraint violation's guard that holds a value to a number: "... satisfy the generated guard
# (((0.1 + torch.sym_float(L['x'].size()[2] // 8)) / 4.0)) == 0.525."
_VIOLATED = re.compile(r"satisfy the generated guard .*==\s*(-?[0-9.]+?)\.?$", re.M)
_BOUNDED = re.compile(r"satisfy the generated guard .*?<=\s*(\d+)\.?$", re.M)
# one that clamps the size by a number: "(4*L['x'].size()[1]) == (4*min(8, L['x'].size()[1]))",
# a window `w = min(8, x.shape[1])` sliced off (`x[:, -w:]`), which export can only keep where
# the window is whole (recurrentgemma's local attention)
_CLAMPED = re.compile(r"satisfy the generated guard .*?\b(min|max)\((-?\d+), ", re.M)


def violated_guard_site(events: TraceCollector, message: str, paths: RepoPaths) -> dict[str, Any] | None:
    """`{path, line, source}` where the export added a guard that a constraint violation names
    as holding a value to a number, or bounding it above: the guard's own line in the user's
    code (DINO's position embedding, resized by a float made from the image's size, was placed
    at the patch embedding's conv, the first size specialisation, where torch's guards come
    from the interpolation 50 lines below; nanochat's `seq <= 64` at its attention's window
    test was placed at the rotary table's `assert T <= self.cos.size(1)`, `seq <= 320`), or as
    clamped by a number (recurrentgemma's window slice `keys[:, -w:]`, `w = min(8, seq)`, was
    placed at an `assert` on the input's shape whose guards hold). None where no such guard
    was logged there."""
    numbers = set(_VIOLATED.findall(message))
    bounds = set(_BOUNDED.findall(message))
    clamps = {f"{fn.capitalize()}({n}, " for fn, n in _CLAMPED.findall(message)}
    if not numbers and not bounds and not clamps:
        return None
    table = intern_table()
    for ev in events.of_kind("guard_added_fast"):
        d = ev.data or {}
        expr = str(d.get("expr") or "")
        equal = expr.startswith("Eq(") and any(expr.endswith(f", {n})") for n in numbers)
        below = re.fullmatch(r"\w+ <= (\d+)", expr)
        if not equal and not (below and below.group(1) in bounds) and not any(c in expr for c in clamps):
            continue
        at = user_frame(d, paths, table)
        if at["path"]:
            return {**at, "source": at["source"] or None}
    return None


# A size divided with `/` and truncated by `int()` (Swin's `B = int(windows.shape[0] / (H * W /
# window_size / window_size))`): torch guards on `TruncToInt(FloatTrueDiv(...))`, a float it
# cannot relate to the size, and export pins the dim; `//` keeps it symbolic (measured on torch
# 2.13: Swin's window_reverse exports with batch dynamic once written with `//`). The error
# names the line that used the result (a `view`), not the one that made it.
TRUNCATED_DIVISION = "`int()` of a size divided with `/` here, which export cannot keep symbolic; `//` keeps it"
_TRUNCATED = re.compile(r"\b(?:TruncToInt|FloorToInt|CeilToInt)\(\s*FloatTrueDiv\(")


def truncated_division_site(events: TraceCollector, paths: RepoPaths) -> dict[str, Any] | None:
    """`{path, line, source}` of the first guard the export added on a truncated float
    division of a size (`TRUNCATED_DIVISION`), in the user's code; None where there is none."""
    table = intern_table()
    for ev in events.of_kind("guard_added_fast"):
        d = ev.data or {}
        if _TRUNCATED.search(str(d.get("expr") or "")):
            at = user_frame(d, paths, table)
            if at["path"]:
                return {**at, "source": at["source"] or None}
    return None


def locate_failure(e: BaseException, model: Any, args: tuple, kwargs: dict, shapes: Any,
                   paths: RepoPaths, locate: bool = True,
                   pinned: dict[str, Any] | None = None) -> dict[str, Any]:
    """`{path, line, source}` of an export failure in the user's code: the innermost user
    frame its message names, the "Caused by" of a data-dependent error, else (with `locate`)
    where the failing export specialised a dim (`pinned`, for a constraint violation), else
    draft_export's first located failure; `{}` when none of these says. Where torch's
    innermost frame is in an installed package, `library` says where in it ("pkg/mod.py:219"):
    a new user read base's failure "on `return torch.sigmoid(self.tab(...))`" as their line's,
    where it was the library's `if` that line reached."""
    parsed = graph_breaks.parse_frames(str(e))
    inner = parsed[-1] if parsed else None
    lib = paths.installed(inner.file) if inner is not None and not paths.rel(inner.file) else None
    extra = {"library": f"{lib}:{inner.line}"} if lib and inner is not None else {}
    frames = [f for f in parsed if paths.rel(f.file)]
    if frames:
        f = frames[-1]
        return {"path": paths.rel(f.file), "line": f.line, "source": f.source or None, **extra}
    caused = _caused_by(str(e), paths) or _raised_in(e, paths)
    if caused is not None:
        return {"path": caused[0], "line": caused[1], "source": caused[2], **extra}
    if not locate:
        return {}
    if pinned is not None:
        # the specialisation the export itself logged: draft_export would trace the model
        # again to find it (43 of a 49 s export phase on mamba-minimal's unrolled scan)
        return {"path": pinned["path"], "line": pinned["line"], "source": pinned["source"] or None}
    path, line, src, _ftype = _draft_location(model, args, kwargs, shapes, paths)
    return {"path": path, "line": line, "source": src}


def static_dims(ep: Any, case: CaseInputs, dynamic: set[str]) -> list[dict[str, Any]]:
    """Declared-dynamic dims that the exported program fixed to a constant."""
    import torch
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    user = set(getattr(ep.graph_signature, "user_inputs", ()) or ())
    vals = [n.meta.get("val") for n in ep.graph.nodes
            if n.op == "placeholder" and (not user or n.name in user)]
    vals = [v for v in vals if isinstance(v, torch.Tensor)]
    tensors = [(name, t) for name, t in case.named().items() if isinstance(t, torch.Tensor)]
    out = []
    if len(vals) != len(tensors):
        return out   # nested/odd inputs: cannot pair placeholders with names reliably
    for (name, _t), val in zip(tensors, vals):
        for ax, d in case.dims.get(name, {}).items():
            if d in dynamic and ax < len(val.shape) and is_concrete_int(val.shape[ax]):
                out.append({"dim": d, "input": name, "axis": ax, "value": int(val.shape[ax])})
    return out


UNRUNNABLE = "the exported program cannot be run"


def run_exported(ep: Any, cases: list[CaseInputs], eager_outs: list[Any], tolerance: Any, *,
                 error_chars: int = 500) -> list[dict[str, Any]]:
    """The exported program on every case against eager: `{shape, match, max_abs_err}`, or
    `{shape, match: false, error}` for a case it refuses (a guard on a specialised dim). Each
    call starts as its eager call did (pt2bot/smoke/inputs.py `start_call`): from the
    program's buffers and constants as exported, which the model's were as built
    (`measure_export`), so a buffer the program updates does not carry one case's update into
    the next; and from the generator state of its eager call, so a random op draws what eager
    drew. Where torch cannot make the program a module (torch 2.13's guard code for a dict
    input keyed by an enum, gemma's `freqs_cis`, does not parse), every case says so."""
    try:
        module = ep.module()
    except Exception as e:  # noqa: BLE001 - torch's own failure is the result
        error = short_message(f"{UNRUNNABLE}: torch's `ep.module()` raised {type(e).__name__}: {e}",
                              error_chars)
        return [{"shape": dict(c.shape), "match": False, "error": error} for c in cases]
    remember_state(module)
    rows = []
    try:
        for case, expected in zip(cases, eager_outs):
            row: dict[str, Any] = {"shape": dict(case.shape)}
            try:
                start_call(module)
                with call_mode():
                    own = case.fresh()
                    out = module(*own.args, **own.kwargs)
                cmp = compare_outputs(expected, out, tolerance)
                row.update(match=cmp["match"], max_abs_err=cmp["max_abs_err"])
            except Exception as e:  # noqa: BLE001 - a case outside what the program accepts
                row.update(match=False, error=short_message(f"{type(e).__name__}: {e}", error_chars))
            rows.append(row)
    finally:
        forget_state(module)
    return rows


# the seed of the second draw `frozen_draws` compares (every compared call starts from seed 0)
OTHER_SEED = 1


def frozen_draws(model: Any, ep: Any, case: CaseInputs, eager_out: Any, tolerance: Any) -> str | None:
    """Where the model's outputs on `case` change with the seed (it draws random numbers) and
    the exported program's, under another seed, differ from eager's there: why, in words; None
    otherwise. Every compared call starts from the same seed (`start_call`), so a draw the
    export made in Python (numpy's, `random`'s, a torch draw read as a number) and kept as a
    constant equals eager's on every case: a new user's CutMix, its mixing ratio and box drawn
    by numpy, read "export ✓ same" for a program that mixes every batch alike."""
    def run(fn: Any, owner: Any) -> Any:
        restore_state(owner)
        seed_all(OTHER_SEED)
        with call_mode():
            own = case.fresh()
            return fn(*own.args, **own.kwargs)

    try:
        other = run(model, model)
        if compare_outputs(eager_out, other, tolerance)["match"]:
            return None   # no draw this case shows
        module = ep.module()
        remember_state(module)
        try:
            got = run(module, module)
        finally:
            forget_state(module)
    except Exception:  # noqa: BLE001 - a call that fails here says nothing of the draws
        return None
    finally:
        start_call(model)
    cmp = compare_outputs(other, got, tolerance)
    if cmp["match"]:
        return None
    err = cmp.get("max_abs_err")
    size = f" (max abs err {err:.3g})" if isinstance(err, float) and math.isfinite(err) else ""
    return (f"its random draws are fixed: under another seed than the one it was exported under, the "
            f"exported program's outputs differ from eager's on shape case {shape_label(case.shape)}{size}, "
            "where eager's own draw changes them; a number drawn outside torch's ops (numpy, "
            "`random`, a tensor's draw read as a number) is a constant in the program")


def measure_export(model: Any, cases: list[CaseInputs], eager_outs: list[Any],
                   model_spec: dict[str, Any], paths: RepoPaths, *,
                   locate: bool = True) -> dict[str, Any]:
    """The RUN `export` dict. `locate`: ask `draft_export` where a failure is when torch's
    error does not say (it re-traces the model: the most expensive part of a failing export);
    without it such a failure has no path. A review asks only where the report needs it."""
    import torch

    res: dict[str, Any] = {"ok": False, "kind": None, "message": None, "path": None,
                           "line": None, "source": None, "static_dims": [], "cases": []}
    if not model_spec.get("export", True):
        return {**res, "ok": None, "message": "export disabled in the config"}
    reset_dynamo()
    dynamic = set(model_spec.get("dynamic") or ())
    ex = example_case(cases, dynamic)
    shapes = dynamic_shapes(ex, dynamic, cases, model_spec.get("bounds"))
    args, kwargs = ex.args, dict(ex.kwargs)
    through = [n for n in kwargs if ex.var_args and n not in forward_params(model)]
    if through and shapes is not None:
        # (torch 2.13 keys `dynamic_shapes` by forward's own parameters, and refuses a spec for
        # what reaches `**kwargs`: an export here would fail for how pt2bot called it)
        return {**res, "ok": None, "message": (
            f"not measured: forward takes `{'`, `'.join(through)}` through `**kwargs`, which "
            "torch.export's dynamic_shapes cannot key; the first input goes into "
            f"`*{ex.var_args}`, as callers pass it")}
    # the program keeps the buffers and tensor constants it was traced with: the model's as
    # built, which every eager call it is compared with started from
    start_call(model)
    try:
        with contextlib.redirect_stderr(io.StringIO()), call_mode(), TraceCollector() as events:
            ep = torch.export.export(model, args, kwargs or None, dynamic_shapes=shapes)
    except Exception as e:  # noqa: BLE001 - an export failure is a result
        kind = classify_failure(e)
        pinned = (violated_guard_site(events, str(e), paths) or next(
            (site for site in specialization_sites(events, paths) if site["path"]), None)
        ) if kind == "constraint_violation" else None
        res.update(kind=kind, message=short_message(f"{type(e).__name__}: {e}"),
                   **locate_failure(e, model, args, kwargs, shapes, paths, locate, pinned))
        truncated = truncated_division_site(events, paths) if kind == "constraint_violation" else None
        if truncated is not None:
            res.update(path=truncated["path"], line=truncated["line"], source=truncated["source"],
                       hint=TRUNCATED_DIVISION)
        if kind == "unsupported":
            gb, _t = graph_breaks.classify_exception(e)
            res["gb"] = gb
        reset_dynamo()
        return res
    res["ok"] = True
    res["static_dims"] = static_dims(ep, ex, dynamic)
    res["cases"] = run_exported(ep, cases, eager_outs, model_spec.get("tolerance"))
    if res["cases"] and res["cases"][0].get("match"):
        frozen = frozen_draws(model, ep, cases[0], eager_outs[0], model_spec.get("tolerance"))
        if frozen:
            res["frozen"] = frozen
    reset_dynamo()
    return res
