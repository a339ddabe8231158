"""Phase "matrix": compile once, run every shape case, record recompiles and accuracy.

Dims listed in `dynamic` are marked with `mark_dynamic` so torch tells us, with the user
line, when code specialises them (`ConstraintViolationError`); after that the dim is only
`maybe_mark_dynamic`-ed so the rest of the matrix still runs and its recompiles are seen (a
frame the strict mark compiled fails that mark's guard when the case runs again: our retry's
recompile, not counted).
Reasons come from `CompilationMetrics.recompile_reason` (text; torch truncates the file
path, so it is matched back against the files dynamo saw) and from the structured trace's
`symbolic_shape_specialization` events (user stack as data). Size 1 is special: torch
always specialises 0/1, so such guards are tagged `size_one`, never blamed on the user.
"""
from __future__ import annotations

import ast
import os
import re
from typing import Any, Callable, Sequence

from pt2bot.results import RESUME_RE
from pt2bot.smoke import graph_breaks
from pt2bot.smoke.breaks import collect_breaks
from pt2bot.smoke.inputs import CaseInputs, call_mode, compare_outputs, output_shapes, seed_all
from pt2bot.smoke.compile_cost import CompileProbe
from pt2bot.smoke.compile_times import compile_times
from pt2bot.smoke.location import text_location, user_frames
from pt2bot.smoke.trace import (RepoPaths, TraceCollector, compilation_metrics, frame_file,
                                 intern_table, reset_dynamo)

# "0/1: <guard>  # <source>  # <file>:<line> in <fn> (...)"
# (torch 2.13 adds the guard's user stack on lines of its own: "...  # m.py:29 in forward\nUser
# stack trace:\n  File ...", which left the whole text one guard with no line)
_REASON_RE = re.compile(r"^(?P<id>\d+/\d+):\s*(?P<guard>.*?)(?:\s{2}#\s(?P<src>.*?)\s{2}#\s"
                        r"(?P<file>\S+):(?P<line>\d+) in (?P<fn>[\w<>.]+))?"
                        r"(?:\s\(.*|\s*\nUser stack trace:.*)?$", re.S)
_SIZE_RE = re.compile(r"(?:L\[')?(?P<arg>\w+)(?:'\])?\.size\(\)\[(?P<ax>\d+)\]")
# The tensor is any source dynamo names: an argument (`x`, `L['x']`), a tensor an argument
# holds (`self.y0`: a size of its own), or one no input is (`args[1]` of a library helper,
# `___stack0[0]` handed to a frame resumed after a graph break).
_MISMATCH_RE = re.compile(r"tensor '(?P<name>.+?)' size mismatch at index "
                          r"(?P<ax>\d+)\. expected (?P<exp>\d+), actual (?P<act>\d+)")
# A stride guard of the same kind: a tensor handed on whose layout follows sizes that changed
# (`tensor 'iou_token_out' stride mismatch at index 0. expected 256, actual 352`, SAM's mask
# decoder after a break, a slice of a tensor whose row grew). Automatic dynamic makes strides
# dynamic as it does sizes, once: a static shape guard, read as a size mismatch of no dim.
_STRIDE_RE = re.compile(r"tensor '(?P<name>.+?)' stride mismatch at index \d+\. expected \d+, actual \d+")
# ... and when it is an argument: its name, and the attributes read off it (`attr`)
_ARG_RE = re.compile(r"^(?:L\[')?(?P<arg>\w+)(?:'\])?(?P<attr>(?:\.\w+)*)$")
_CONSTRAINT_RE = re.compile(r"L\['(?P<arg>\w+)'\]\.size\(\)\[(?P<ax>\d+)\][^\n]*?constant "
                            r"\((?P<val>\d+)\)")
_LIMIT_TEXT = "recompile limit"
_LOWER_BOUND_ONLY = re.compile(r"^2 <= \S+$")


def varying_dims(cases: list[CaseInputs]) -> set[str]:
    if not cases:
        return set()
    return {d for d in cases[0].shape if len({c.shape.get(d) for c in cases}) > 1}


def _dim_of(arg: str, ax: int, case: CaseInputs) -> str | None:
    return case.dims.get(arg, {}).get(ax)


def _is_constraint_violation(exc: BaseException) -> bool:
    names = {c.__name__ for c in type(exc).__mro__}
    if "ConstraintViolationError" in names:
        return True
    et = getattr(exc, "error_type", None)
    return "CONSTRAINT_VIOLATION" in str(et) or "Constraints violated" in str(exc)[:200]


def specializations_from_exception(exc: BaseException, case: CaseInputs,
                                   paths: RepoPaths) -> list[dict[str, Any]]:
    """ConstraintViolationError text → one `specialized` entry per named dim."""
    text = str(exc)
    frames = [f for f in graph_breaks.parse_frames(text) if paths.rel(f.file)]
    inner = frames[-1] if frames else None
    out = []
    for m in _CONSTRAINT_RE.finditer(text):
        dim = _dim_of(m.group("arg"), int(m.group("ax")), case)
        path = paths.rel(inner.file) if inner else None
        line = inner.line if inner else None
        out.append({"dim": dim, "value": int(m.group("val")), "path": path, "line": line,
                    "source": (inner.source if inner else "") or paths.source_line(path, line),
                    "reason": (f"{dim} was marked dynamic" if dim else
                               f"`{m.group('arg')}.size()[{m.group('ax')}]` (torch's name, in the "
                               "code that specialised it) was marked dynamic")
                              + f" but the code specialised it to {m.group('val')}",
                    "input": f"{m.group('arg')}.size()[{m.group('ax')}]"})
    return out


def parse_recompile_reason(text: str, case: CaseInputs, known_files: list[str],
                           paths: RepoPaths,
                           events: TraceCollector | None = None) -> list[dict[str, Any]]:
    """One compile's `recompile_reason` → reasons as data. A guard torch wrote with no line
    is placed from the trace's `events` where they say where it was added."""
    out = []
    # torch joins several failed guards of one cache entry with newlines / " and "
    for part in [p for p in re.split(r"\n(?=\d+/\d+:)", text) if p.strip()]:
        m = _REASON_RE.match(part.strip())
        guard = (m.group("guard") if m else part).strip()
        guard = _UNKNOWN_VAR.sub("", guard)
        rec: dict[str, Any] = {"guard": guard[:500], "dim": None, "kind": "guard",
                               "path": None, "line": None, "source": None}
        if m and m.group("file"):
            rec["path"] = paths.resolve_suffix(m.group("file"), known_files)
            rec["line"] = int(m.group("line")) if rec["path"] else None
            rec["source"] = (m.group("src") or "").strip() or None
        elif m and events is not None:
            rec.update(guard_added_site(guard, m.group("id"), events, paths) or {})
        mm = _MISMATCH_RE.search(part)
        sm = _SIZE_RE.search(guard)
        if mm:
            rec["kind"] = "size_mismatch"   # a static shape guard: the dim was not dynamic
            arg = _input_arg(mm)
            rec["dim"] = _dim_of(arg, int(mm.group("ax")), case) if arg else None
        elif _STRIDE_RE.search(part):
            rec["kind"] = "size_mismatch"
        elif sm:
            rec["dim"] = _dim_of(sm.group("arg"), int(sm.group("ax")), case)
        # a range guard torch places at the first of its bounds' lines: where the case's size
        # is past one bound, the line that added that bound (nanochat's `3 <= idx.size()[1] <=
        # 128` was placed at a linear layer, line 50; a sequence of 160 fails the window's
        # test, `window >= Tq`, at flash_attention.py:87)
        rng = _RANGE_RE.match(guard)
        size = case.shape.get(rec["dim"]) if rec["dim"] else None
        if rng and m and events is not None and isinstance(size, int):
            lo, what, hi = int(rng.group(1)), rng.group(2), int(rng.group(3))
            bound = f"{what} <= {hi}" if size > hi else f"{lo} <= {what}" if size < lo else None
            site = guard_added_site(bound, m.group("id"), events, paths) if bound else None
            if site:
                rec.update(site)
        # Size 1 is torch's own 0/1 specialisation, not the user's bug: the case has size 1,
        # a static guard saw 1, or the only bound is the framework's lower bound of 2.
        if (rec["dim"] and case.shape.get(rec["dim"]) == 1) or (
                mm and (mm.group("exp") == "1" or mm.group("act") == "1")) or \
                _LOWER_BOUND_ONLY.match(guard):
            rec["kind"] = "size_one"
        out.append(rec)
    return out


# torch writes "  # (unknown var s16, please file a bug)" where it lost the symbol's source
# (a size of a tensor passed in `**kwargs`, marked dynamic): the guard then has no line
_UNKNOWN_VAR = re.compile(r"\s+#\s*(?:\(unknown var[^)]*\))?\s*$")
_SYMBOL = re.compile(r"\b[su]\d+\b")
_RELATION = {"==": "Eq(", "!=": "Ne("}


def _numbers(text: str) -> set[float]:
    return {float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", text)}


def _source_name(source: str) -> str:
    """A trace source as a recompile reason writes it: `L['kwargs']['x']` → `kwargs['x']`."""
    return re.sub(r"^L\['(\w+)'\]", r"\1", source)


_RANGE_RE = re.compile(r"^(\d+) <= (.+?) <= (\d+)$")


def guard_added_site(guard: str, guard_id: str | None, events: TraceCollector,
                     paths: RepoPaths) -> dict[str, Any] | None:
    """`{path, line, source}` where the compile `guard_id` ("0/0"; None: the one trace of an
    export) added the failed `guard`, from the trace: the sizes it names become that compile's
    symbols (`create_symbol`), and the guard added on the same symbols with the same relation
    and numbers (`guard_added_fast`) holds the user's stack. Where torch lost a size's source it writes the failed guard with no line: DINOv2's
    `if npatch == N and w == h:`, with the image passed by keyword, was placed at `forward`,
    140 lines from its `if`. None unless every such guard was added at one line."""
    try:
        want = None if guard_id is None else tuple(int(x) for x in guard_id.split("/"))
    except ValueError:
        return None
    symbols: dict[str, str] = {}
    for ev in events.of_kind("create_symbol"):
        d = ev.data or {}
        if want in (None, ev.frame) and d.get("symbol") and d.get("source"):
            symbols[_source_name(str(d["source"]))] = str(d["symbol"])
    text = guard
    for src in sorted(symbols, key=len, reverse=True):
        text = text.replace(src, symbols[src])
    named = set(_SYMBOL.findall(text))
    if not named or not set(symbols.values()) >= named:
        return None
    rel = next((f for op, f in _RELATION.items() if op in text), None)
    numbers = _numbers(text)
    table = intern_table()
    sites = []
    for ev in events.of_kind("guard_added_fast"):
        d = ev.data or {}
        expr = str(d.get("expr") or "")
        # the same sizes, the same relation, and every number the guard has (`Eq(Mod(s0, 8),
        # 0)` of a check on the image's sides is not `(0.1 + sym_float(x.size()[3] // 8)) / 4.0
        # == 1.025` of the interpolation below it)
        if want not in (None, ev.frame) or set(_SYMBOL.findall(expr)) != named or \
                (rel and not expr.startswith(rel)) or not numbers <= _numbers(expr):
            continue
        at = user_frame(d, paths, table)
        if at["path"] and at not in sites:
            sites.append(at)
    return sites[0] if len(sites) == 1 else None


def _input_arg(m: re.Match[str]) -> str | None:
    """The argument whose own size a size-mismatch guard is on, or None for a tensor an
    argument holds (`self.y0`) or one that is no argument (`args[1]`, `___stack0[0]`)."""
    a = _ARG_RE.match(m.group("name"))
    return a.group("arg") if a and not a.group("attr") else None


def recompiled_frame(metric: Any, paths: RepoPaths) -> dict[str, Any]:
    """Which frame a compile was for, from its CompilationMetrics: `frame` {function, path,
    line} (the code's own name, so a resume function keeps the name that says so), the
    compile id, and `resumed_after` {path, line} when dynamo made the frame to resume after
    a graph break. The frame of a recompile is what ties it to a break (pt2bot/compare.py)."""
    name = getattr(metric, "co_name", None)
    path = paths.rel(getattr(metric, "co_filename", None))
    first = getattr(metric, "co_firstlineno", None)
    out: dict[str, Any] = {
        "frame": {"function": name if isinstance(name, str) else None, "path": path,
                  "line": first if isinstance(first, int) else None}}
    # a frame in an installed package: its file there, so that a reader can tell the
    # package's recompiles from the repository's (flowtorch's `_inverse`, on its tensor type)
    library = None if path else paths.installed(getattr(metric, "co_filename", None))
    if library:
        out["frame"]["library"] = library
    cid = getattr(metric, "compile_id", None)
    if cid is not None:
        out["compile_id"] = str(cid)
    m = RESUME_RE.match(name) if isinstance(name, str) else None
    if m:
        out["resumed_after"] = {"path": path, "line": int(m.group("line"))}
    return out


def _limit_frame(metric: Any, metrics: list[Any], paths: RepoPaths) -> dict[str, Any]:
    """The frame a recompile-limit hit was for. torch records that failure without the
    code's name or file: they come from the frame's earlier compile (compile id "0/1" is
    frame 0's second), which did record them."""
    frame = recompiled_frame(metric, paths)["frame"]
    if frame["function"] is None:
        fid = str(getattr(metric, "compile_id", "") or "").split("/")[0]
        earlier = next((m for m in metrics if getattr(m, "co_name", None) and
                        str(getattr(m, "compile_id", "") or "").split("/")[0] == fid), None)
        if earlier is not None:
            frame = recompiled_frame(earlier, paths)["frame"]
    return frame


# the largest size an unbounded dynamic dim ranges to, in `mark_dynamic` and in export's `Dim`
MAX_DIM = 1 << 20


def mark_range(lo: int | None, hi: int | None) -> dict[str, int]:
    """`mark_dynamic`'s min/max for a declared range: torch 2.13 refuses a max without a min
    and a min without a max (the compile raises, "not simple sympy type <class 'NoneType'>": a
    new user's `width: {min: 4}`, the advice's own yaml, made every compiled case raise), so a
    bounded dim gets the least size it can keep symbolic (2) and the largest export takes."""
    if hi is None:
        return {"min": lo, "max": max(lo, MAX_DIM)} if lo is not None else {}
    return {"min": lo or 2, "max": hi}


def mark_dims(case: CaseInputs, dynamic: set[str], relaxed: set[str],
              bounds: dict[str, Any] | None = None) -> CaseInputs:
    """Fresh tensors (marks are attributes; copies, as `CaseInputs.fresh` gives each call) with
    the declared dynamic dims marked, with their declared range (`mark_dynamic` cannot express
    divisibility)."""
    import torch

    marked = case.replace_tensors(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v)
    named = marked.tensors()
    for name, axes in case.dims.items():
        t = named.get(name)
        if not isinstance(t, torch.Tensor):
            continue
        for ax, d in axes.items():
            if d not in dynamic or case.shape.get(d, 0) < 2:
                continue   # size 0/1 cannot stay symbolic: torch specialises it by design
            if d in relaxed:
                torch._dynamo.maybe_mark_dynamic(t, ax)
            else:
                b = (bounds or {}).get(d) or {}
                torch._dynamo.mark_dynamic(t, ax, **mark_range(b.get("min"), b.get("max")))
    return marked


def compile_configured(model: Any, run_cfg: dict[str, Any]) -> Any:
    """`torch.compile(model)` with the configured backend (and inductor's mode)."""
    import torch

    backend = run_cfg.get("backend") or "inductor"
    kw: dict[str, Any] = {"backend": backend}
    if run_cfg.get("mode") and backend == "inductor":
        kw["mode"] = run_cfg["mode"]
    return torch.compile(model, **kw)


# The guard a frame compiled with `mark_dynamic` inputs fails when called with
# `maybe_mark_dynamic` ones: "_dynamo_weak_dynamic_indices should be absent but is present".
_REMARKED = "_dynamo_weak_dynamic_indices"


def measure_matrix(model: Any, cases: list[CaseInputs], eager_outs: list[Any],
                   model_spec: dict[str, Any], run_cfg: dict[str, Any],
                   paths: RepoPaths, *,
                   after_first: Callable[[TraceCollector, dict[str, Any]], bool] | None = None,
                   before_call: Callable[[], None] | None = None) -> dict[str, Any]:
    """`recompiles`, `specialized`, `accuracy` over the shape matrix.

    `after_first(events, case_record)` is called once the first case has run, with the trace
    caught so far (that case's compile alone); the cases after it run only when it returns
    True (the proof of fixes reads the break pass there, pt2bot/smoke/verify.py).
    `before_call()` runs before each compiled call, outside it (the proof puts the model's
    buffers back as built there, so each case's compiled run starts where its eager run did)."""
    import torch

    reset_dynamo()
    dynamic = set(model_spec.get("dynamic") or ())
    varying = varying_dims(cases)
    limit = int(run_cfg.get("recompile_limit") or 8)
    backend = run_cfg.get("backend") or "inductor"
    compiled = compile_configured(model, run_cfg)
    relaxed: set[str] = set()
    specialized: dict[tuple[Any, ...], dict[str, Any]] = {}
    case_recs: list[dict[str, Any]] = []
    accuracy: list[dict[str, Any]] = []
    fallback = False
    limit_frames: list[dict[str, Any]] = []   # frames that hit the recompile limit
    first_call_s: float | None = None   # the process's first compile: the cold/warm figure
    cost: dict[str, Any] | None = None  # and what it cost (pt2bot/smoke/compile_cost.py)
    total = 0        # recompiles the user's code caused (size-1 ones are counted apart)
    size_one = 0
    compiles = 0     # every frame compilation, first ones too (the shape advice's "before")
    limit_key = ("recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit")
                 else "cache_size_limit")
    with torch._dynamo.config.patch(**{limit_key: limit}), TraceCollector() as events, \
            call_mode():
        for case, expected in zip(cases, eager_outs):
            n0 = len(compilation_metrics())
            rec: dict[str, Any] = {"shape": dict(case.shape), "compiled": False, "recompiles": 0,
                                   "reasons": [], "eager_fallback": fallback}
            out = None
            retried = False
            cut = False      # the process's first compile raised before it ended
            for _attempt in range(2):
                marked = mark_dims(case, dynamic, relaxed, model_spec.get("bounds"))
                try:
                    probe = CompileProbe(backend, events).start() if cost is None else None
                    if before_call is not None:
                        before_call()
                    out = compiled(*marked.args, **marked.kwargs)
                    if probe is not None:
                        # one clock for both figures, so the cold/warm time is the cost's wall
                        cost = probe.finish()
                        first_call_s = cost["wall_s"]
                        if cut:
                            # measured on the call run again, which reuses what the first
                            # compiled before it raised (ESM-2's contact head: FX nodes 245 → 57
                            # beside graphs 2 → 4, "no regression"): no figure of one compile
                            cost["retried"] = True
                    break
                except Exception as e:  # noqa: BLE001 - a compile failure is a result
                    if _is_constraint_violation(e) and _attempt == 0:
                        cut = cut or cost is None
                        # the compile that raised it: its frame says whether a break split
                        # it off (a resumed frame's inputs computed before the break carry
                        # no dynamic mark; an operation tying a marked input to one pins it)
                        failed = next((m for m in reversed(compilation_metrics()[n0:])
                                       if getattr(m, "fail_type", None)), None)
                        frame = recompiled_frame(failed, paths) if failed is not None else {}
                        for s in specializations_from_exception(e, case, paths):
                            s.update(frame)
                            specialized.setdefault((s["dim"], s["path"], s["line"]), s)
                            if s["dim"]:
                                relaxed.add(s["dim"])
                        relaxed.update(dynamic)   # never mark strictly again: see the matrix
                        retried = True
                        continue
                    rec["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
                    at = text_location(str(e), paths)
                    if at[0] is None:
                        at = (user_frames(e, paths) or ((None, None),))[-1]
                    if at[0] is not None:
                        rec["error_at"] = {"path": at[0], "line": at[1]}
                    break
            n_new, recompiled, limited = _compiled_since(n0, case, paths, events, limit_frames)
            if limited:
                fallback = True
                rec["eager_fallback"] = True
            if n_new:
                rec["compiled"] = True
            compiles += n_new
            for reasons in recompiled:
                if retried and reasons and all(_REMARKED in r["guard"] for r in reasons):
                    # our own retry: a frame the strict marking compiled, called again with
                    # the inputs marked weakly, fails that marking's guard; nothing in the
                    # user's code asked for this compile
                    continue
                rec["recompiles"] += 1
                rec["reasons"].extend(reasons)
                if reasons and all(r["kind"] == "size_one" for r in reasons):
                    size_one += 1
                else:
                    total += 1
            case_recs.append(rec)
            if out is not None:
                acc = compare_outputs(expected, out, model_spec.get("tolerance"))
                accuracy.append({"shape": dict(case.shape), **acc})
            else:
                accuracy.append({"shape": dict(case.shape), "match": None, "max_abs_err": None,
                                 "rtol": None, "atol": None})
            accuracy[-1]["out_shapes"] = output_shapes(expected)
            if after_first is not None and len(case_recs) == 1 and not after_first(events, rec):
                break
        if before_call is not None and len(case_recs) == len(cases) > 1:
            # Each compared call started from the model as built (`before_call`), so what a
            # call leaves on the module for the next never reached a guard: ESM-2's rotary
            # embedding keeps the last sequence length (`self._seq_len_cached = seq_len`),
            # dynamo guards on it, and a user's process compiles `forward` again for every
            # new length, up to the recompile limit, where this matrix saw none. The cases
            # run once more in order from the built state, each call keeping what the one
            # before left: only a guard on that state fails there (the compiled code for the
            # built state is cached). Where one does, the counts are a user's process's: the
            # sequence again from a fresh dynamo, one compile where a new size and a new
            # state come together (the compared pass's own counts would add a compile for
            # each), its reasons on that state marked `carried`.
            # (the generators seeded before every call first: only the module's state carries
            # over; then not, as a user's process draws: a number drawn anew on every call and
            # passed across a break, guarded by value, fails there and only there, a new user's
            # CutMix's `random.random()` and `np.random.randint(H)` read as module state)
            state = _sequence(compiled, cases, before_call, dynamic, relaxed, model_spec, paths,
                              events, [], each_call=seed_all)
            drawn = _sequence(compiled, cases, before_call, dynamic, relaxed, model_spec, paths,
                              events, [])
            if any(state[0]) or any(drawn[0]):
                subjects = {_subject(r["guard"]) for groups in state[0] for rs in groups for r in rs}
                draws = {_subject(r["guard"]) for groups in drawn[0] for rs in groups for r in rs} - subjects
                reset_dynamo()
                seq, n_compiles, limited = _sequence(compiled, cases, before_call, dynamic, relaxed,
                                                     model_spec, paths, events, limit_frames)
                total = size_one = 0
                for rec, groups in zip(case_recs, seq):
                    reasons = [r for rs in groups for r in rs]
                    for r in reasons:
                        if _subject(r["guard"]) in draws:
                            r["drawn"] = True
                        elif _subject(r["guard"]) in subjects:
                            r["carried"] = True
                            try:
                                stored = _state_store(paths, r.get("path"), r.get("line"),
                                                      _subject(r["guard"]))
                            except Exception:  # noqa: BLE001 - a place to point at, never a lost count
                                stored = None
                            if stored:
                                r["stored_at"] = stored
                    rec["recompiles"], rec["reasons"] = len(groups), reasons
                    for group in groups:
                        if group and all(r["kind"] == "size_one" for r in group):
                            size_one += 1
                        else:
                            total += 1
                compiles, fallback = n_compiles, fallback or limited
        for s in _trace_specializations(events, cases, dynamic, varying, paths, compilation_metrics()):
            key = (s["dim"], s["path"], s["line"])
            specialized.setdefault(key, s)
    reset_dynamo()
    return {
        "recompiles": {"count": total, "size_one": size_one, "eager_fallback": fallback,
                       "limit": limit,
                       "cases": case_recs, "limit_frames": limit_frames, "compiles": compiles},
        "specialized": [s for s in specialized.values()
                        if s["dim"] is None or s["dim"] in varying],
        "accuracy": accuracy,
        "compile_s": compile_times(first_call_s, cost is not None and cost["cache"] == "warm"),
        "compile_cost": cost,
        # the breaks these compiles hit: the worker keeps those the break pass did not
        "breaks": collect_breaks(events, paths),
    }


def _sequence(compiled: Any, cases: list[CaseInputs], before_call: Callable[[], None],
              dynamic: set[str], relaxed: set[str], model_spec: dict[str, Any], paths: RepoPaths,
              events: TraceCollector, limit_frames: list[dict[str, Any]],
              each_call: Callable[[], None] | None = None
              ) -> tuple[list[list[list[dict[str, Any]]]], int, bool]:
    """The shape cases in order from the model as built, each compiled call keeping the state
    the one before left, as a user's process calls it (see `measure_matrix`): per case its
    recompiles (each the reasons of one compile), the compiles, and whether a frame hit the
    recompile limit (its frame added to `limit_frames`). A call that raises ends the
    sequence: the compared pass said what fails. `each_call` runs before every call (the
    generators seeded alike)."""
    per_case: list[list[list[dict[str, Any]]]] = [[] for _ in cases]
    compiles = 0
    fallback = False
    before_call()
    for k, case in enumerate(cases):
        if each_call is not None:
            each_call()
        n0 = len(compilation_metrics())
        marked = mark_dims(case, dynamic, relaxed, model_spec.get("bounds"))
        try:
            compiled(*marked.args, **marked.kwargs)
        except Exception:  # noqa: BLE001 - said by the compared pass, or a state no input gave
            break
        n_new, per_case[k], limited = _compiled_since(n0, case, paths, events, limit_frames)
        compiles += n_new
        fallback = fallback or limited
    return per_case, compiles, fallback


def _compiled_since(n0: int, case: CaseInputs, paths: RepoPaths, events: TraceCollector,
                    limit_frames: list[dict[str, Any]]) -> tuple[int, list[list[dict[str, Any]]], bool]:
    """The frame compilations after the first `n0` of this process, for one case's call: how
    many compiled, the reasons of each recompile (its frame added to each reason), and whether
    a frame hit the recompile limit (its frame added to `limit_frames`)."""
    files = sorted({m.co_filename for m in compilation_metrics() if m.co_filename}
                   | set(intern_table().values()))
    compiles, recompiled, limited = 0, [], False
    for m in compilation_metrics()[n0:]:
        if getattr(m, "fail_type", None):
            if _LIMIT_TEXT in str(getattr(m, "fail_reason", "") or ""):
                limited = True
                frame = _limit_frame(m, compilation_metrics(), paths)
                if frame not in limit_frames:
                    limit_frames.append(frame)
            continue
        compiles += 1
        if m.recompile_reason:
            reasons = parse_recompile_reason(m.recompile_reason, case, files, paths, events)
            for r in reasons:
                r.update(recompiled_frame(m, paths))
            recompiled.append(reasons)
    return compiles, recompiled, limited


def _subject(guard: str) -> str:
    """What a guard holds to a value (`self._seq_len_cached` of `self._seq_len_cached == 4` and
    of `self._seq_len_cached is None`): the same state failing again with another value."""
    return re.split(r"\s+(?:==|!=|is not|is)\s+", guard.split("  #")[0].strip(), maxsplit=1)[0]


def _state_store(paths: RepoPaths, path: Any, line: Any, subject: str) -> dict[str, Any] | None:
    """Where the code writes the state a carried guard holds: the first store to
    `self.<attr>` (`self.size += seq_len`, torchtune's KV cache before its maintainers' fix)
    in the function holding the guard's line, else in its class; `{path, line, source}`, or
    None where none is found. The guard names what dynamo read (`self._modules['cache'].size`),
    the store is the line to change."""
    names = re.findall(r"\.(\w+)|\['(\w+)'\]", subject)
    if not isinstance(path, str) or not isinstance(line, int) or not names:
        return None
    attr = next(a or b for a, b in reversed(names))
    try:
        with open(os.path.join(paths.root, path), encoding="utf-8") as fh:
            text = fh.read()
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None

    def within(nodes: list[ast.AST]) -> list[ast.AST]:
        return [n for n in nodes if n.lineno <= line <= (n.end_lineno or n.lineno)]

    fns = within([n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))])
    classes = within([n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)])
    for scope in ([max(fns, key=lambda n: n.lineno)] if fns else []) + \
            ([max(classes, key=lambda n: n.lineno)] if classes else []):
        for n in sorted(ast.walk(scope), key=lambda n: getattr(n, "lineno", 0)):
            targets = (n.targets if isinstance(n, ast.Assign) else [n.target]
                       if isinstance(n, (ast.AugAssign, ast.AnnAssign)) else [])
            if any(isinstance(t, ast.Attribute) and t.attr == attr and isinstance(t.value, ast.Name)
                   and t.value.id == "self" for t in targets) and not _in_init(n, scope):
                src = text.splitlines()[n.lineno - 1].strip()
                return {"path": path, "line": n.lineno, "source": src[:200]}
    return None


def _in_init(node: ast.AST, scope: ast.AST) -> bool:
    """Whether `node` is in an `__init__` of `scope` (a class): the state as built, not a
    call's store."""
    return any(isinstance(f, ast.FunctionDef) and f.name == "__init__"
               and f.lineno <= node.lineno <= (f.end_lineno or f.lineno)
               for f in ast.walk(scope))


def user_frame(data: dict[str, Any], paths: RepoPaths, table: dict[int, str]) -> dict[str, Any]:
    """`{path, line, source}` of a trace event's innermost frame in the user's code (all None
    where it has none). Dynamo's compiles log the traced code's frames as `user_stack`;
    export's non-strict trace has none, and the Python `stack` at the event holds the user's
    frames."""
    stack = [f for f in data.get("user_stack") or data.get("stack") or ()
             if isinstance(f, dict) and paths.rel(frame_file(f, table))]
    inner = stack[-1] if stack else None
    path = paths.rel(frame_file(inner, table)) if inner else None
    line = inner.get("line") if inner else None
    return {"path": path, "line": line,
            "source": (inner.get("loc") if inner else None) or paths.source_line(path, line)}


def specialization_sites(events: TraceCollector, paths: RepoPaths) -> list[dict[str, Any]]:
    """Every `symbolic_shape_specialization` of the caught trace: which input size
    (`arg`, `ax`: `L['x'].size()[1]`), the constant it became (`value`), torch's `reason`,
    and where in the user's code (`path`, `line`, `source` of the innermost user frame);
    `event` numbers the trace event (one event may name several sizes); `frame_key` the
    compile it was made in ("2/0"), where the trace says."""
    table = intern_table()
    out = []
    for k, ev in enumerate(events.of_kind("symbolic_shape_specialization")):
        d = ev.data or {}
        try:
            value = int(d.get("value"))
        except (TypeError, ValueError):
            continue
        at = user_frame(d, paths, table)
        fid, cid = ev.frame or (None, None)
        key = f"{fid}/{cid}" if fid is not None and cid is not None else None
        for src in d.get("sources") or ():
            m = _SIZE_RE.search(str(src))
            if m:
                out.append({"arg": m.group("arg"), "ax": int(m.group("ax")), "value": value,
                            "reason": d.get("reason"), **at, "event": k, "frame_key": key})
    return out


def specialised_at(guard: str, sites: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The site that made a static size guard (`tensor 'x' size mismatch at index 1.
    expected 12, actual 16`) out of a dim that was dynamic: the last specialisation of that
    size to the expected value, in the user's code. None for other guards, or when none
    specialised it (a dim that was never dynamic)."""
    m = _MISMATCH_RE.search(guard)
    arg = _input_arg(m) if m else None
    if not arg:
        return None
    ax, expected = int(m.group("ax")), int(m.group("exp"))
    return next((s for s in reversed(sites) if (s["arg"], s["ax"], s["value"]) ==
                 (arg, ax, expected) and s["path"]), None)


def _trace_specializations(events: TraceCollector, cases: list[CaseInputs], dynamic: set[str],
                           varying: set[str], paths: RepoPaths,
                           metrics: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """`symbolic_shape_specialization` events of declared-dynamic, varying dims, each with
    the frame it was made in where `metrics` (the compilation metrics) name it: a
    specialisation in a frame resumed after a graph break is that break's doing (the resumed
    frame's inputs computed before the break carry no dynamic mark, and an operation that
    ties a marked input to one of them pins it: held-out batch 38's batch, pinned at an
    unchanged line after a PR's new `.item()`)."""
    compiles = {str(getattr(m, "compile_id", "")): m for m in metrics}
    probe = cases[0] if cases else None
    by_event: dict[int, dict[str, Any]] = {}     # one entry per trace event
    dims_of: dict[int, set[str]] = {}
    for s in specialization_sites(events, paths):
        if s["value"] in (0, 1):
            continue   # 0/1 specialisation is torch's, reported as size_one in the cases
        key = s["event"]
        by_event.setdefault(key, s)
        dim = _dim_of(s["arg"], s["ax"], probe) if probe is not None else None
        if dim:
            dims_of.setdefault(key, set()).add(dim)
    out = []
    for key, s in by_event.items():
        for dim in sorted(dims_of.get(key, set()) & dynamic & varying):
            metric = compiles.get(s["frame_key"]) if s.get("frame_key") else None
            frame = recompiled_frame(metric, paths) if metric is not None else {}
            out.append({"dim": dim, "value": s["value"], "path": s["path"], "line": s["line"],
                        "source": s["source"],
                        "reason": f"{dim} specialised to {s['value']} ({s['reason']})", **frame})
    return out
