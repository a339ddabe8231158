"""Phase "breaks": every graph-break site, with a cheap backend.

`torch._dynamo.explain` misses breaks in loops (the frame is skipped), breaks with nothing
traced before them, and repeats nested breaks once per frame; so instead the model is
compiled with a recording eager backend while the structured trace is caught in memory,
and each `dynamo_graph_break_reason` artifact is one (break, frame) event. Events are
deduplicated on (GB id, innermost user frame): a break hit in a loop or in every repeated
layer is one break with a `count`.

This is a compile of its own, although the "matrix" phase compiles the same first case
again: the matrix cannot stand in for it. The matrix marks the declared dynamic dims with
`mark_dynamic` (and traces the case twice when that raises ConstraintViolationError) and
compiles with `run.backend`; under either setting this pass's facts change. Symbolic sizes add
graph nodes (`captured_ops`, `graph_ops`), can add a graph (`graph_count`) or a break, and
change the text of a break's reason; another backend's compiled graphs dispatch other ATen
operators (`aten_in_graphs`), and a backend that fails ends the call before the breaks after
that graph. Under the settings of an aot_eager review's matrix, 92 of 310 models (the test
fixtures and the four of benchmarks/bench_floor.py, all four among them) give other facts.
With the eager backend and no dim marked the two compiles have the same settings, but a model
with a dynamic dim never has (benchmarks/bench_onepass.py, benchmarks/results/onepass.md).
"""
from __future__ import annotations

import ast
import contextlib
import re
import sys
from typing import Any, Callable

from pt2bot.smoke import graph_breaks
from pt2bot.smoke.coverage import LineCoverage
from pt2bot.smoke.inputs import CaseInputs, call_mode
from pt2bot.smoke.ops import OpCounter, count_calls, eager_frames, graph_coverage
from pt2bot.smoke.trace import (RepoPaths, TraceCollector, compilation_metrics, frame_file,
                                intern_table, reset_dynamo)


class RecordingBackend:
    """Eager backend that counts graphs and their call nodes, and notes every code object
    dynamo traced; with an `OpCounter`, each graph's operators count as inside a graph."""

    def __init__(self, ops: OpCounter | None = None) -> None:
        self.graphs = 0
        self.graph_ops: list[int] = []
        self.code_files: set[str] = set()
        self.ops = ops

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        self.graphs += 1
        self.graph_ops.append(count_calls(gm))
        try:
            from torch._guards import TracingContext
            codes = TracingContext.get_traced_code() or []
        except Exception:  # noqa: BLE001 - older torch: the frame files still come from the trace
            codes = []
        for code in codes:
            self.code_files.add(code.co_filename)
        return self.ops.in_graph(gm.forward) if self.ops is not None else gm.forward


# the other lines a break site was reached from that are kept (`call_sites`)
MAX_CALL_SITES = 8


def collect_breaks(events: TraceCollector, paths: RepoPaths, locate: bool = True) -> list[dict[str, Any]]:
    """Deduplicated break sites from the caught trace. `locate`: a break whose line dynamo put
    outside the function it names keeps its file, not its line (`reported_line`: dynamo's).
    The proof passes False: it compares head and a candidate as dynamo numbered both, and in
    a patched file only the patched function follows the patched text's numbering."""
    sites: dict[tuple[Any, ...], dict[str, Any]] = {}
    files: dict[str, str] = {}   # a frame's repository path -> its file as dynamo gave it
    for ev in events.artifacts("dynamo_graph_break_reason"):
        if not ev.payload:
            continue
        pb = graph_breaks.parse_break(ev.payload)
        stack = []
        for f in pb.frames:
            rel = paths.rel(f.file)
            if rel:
                stack.append({"path": rel, "line": f.line, "function": f.function})
                files.setdefault(rel, f.file)
        inner_src, inner_file = "", None
        if stack:
            inner = stack[-1]
            path, line, func = inner["path"], inner["line"], inner["function"]
            frame = next((f for f in reversed(pb.frames) if paths.rel(f.file) == path and f.line == line), None)
            if frame is not None:
                inner_src, inner_file = frame.source, frame.file
        elif pb.header_file and paths.rel(pb.header_file):
            path, line, func = paths.rel(pb.header_file), pb.header_line, None
        else:
            path, line, func = None, None, None
        installed = paths.installed(pb.header_file) if path is None else None
        library = f"{installed}:{pb.header_line}" if installed and pb.header_line else installed
        explanation = pb.explanation
        if path is not None and pb.frames and not paths.rel(pb.frames[-1].file) \
                and explanation.startswith(("the guard `", "the integer `")):
            # a data-dependent guard inside a package's code reached from the repository's line:
            # the code it quotes is the package's, at the place said here, not on that line
            inner_pkg = paths.installed(pb.frames[-1].file)
            if inner_pkg:
                explanation += f" in {inner_pkg}:{pb.frames[-1].line}"
        reported = None
        if locate and paths.in_function(inner_file, line, func) is False:
            # dynamo's line is not inside the function it names, or holds no code: no comment goes on it, and
            # no fix is tried there (the break is still counted, at its file)
            reported, line, inner_src = line, None, ""
        key = (pb.gb or pb.gb_type, path, line)
        site = sites.get(key)
        if site is None:
            source = inner_src or paths.source_line(path, line)
            sites[key] = {
                "gb": pb.gb, "gb_type": pb.gb_type, "path": path, "line": line,
                "function": func,
                "source": source,
                "reason": pb.reason, "explanation": explanation,
                "hints": [h for h in pb.hints if _applies(h, source, paths.source_line(path, line + 1)
                                                          if line else "")],
                "url": pb.url, "count": 1, "in_loop": pb.in_loop, "user_stack": stack,
            }
            if reported is not None:
                sites[key]["reported_line"] = reported
            deepest = pb.frames[-1] if pb.frames and path is not None else None
            inside = paths.installed(deepest.file) if deepest is not None else None
            if inside:
                # the break is in an installed package's code that this line calls: said beside
                # the line (torchhd's `.as_subclass` read as the user's own code)
                sites[key]["inside"] = f"{inside}:{deepest.line}"
            outer = next((f for f in pb.frames if paths.rel(f.file)), None)
            end = paths.enclosing_end(outer.file, outer.line) if pb.skips_rest and outer else None
            if end:
                # the rest of the outermost frame, from the user_stack's first line to this
                # one, ran eagerly: changed lines there no compile saw (compare.not_traced_lines)
                sites[key]["eager_rest_end"] = end
            if library:
                sites[key]["library"] = library
        else:
            if site.get("library") != library:
                site.pop("library", None)  # one site, two places in libraries: neither is it
            site["count"] += 1
            site["in_loop"] = site["in_loop"] or pb.in_loop
            if stack and site["user_stack"] and stack[0] != site["user_stack"][0]:
                # the same site reached from another line of the outermost frame (V-JEPA's
                # predictor calls `apply_masks` at two lines): dynamo resumes after each call,
                # and each resume frame is this break's
                # (each outermost frame once, keyed by its place)
                site.setdefault("calls", {}).setdefault((stack[0]["path"], stack[0]["line"]), stack[0])
            if len(stack) > len(site["user_stack"]):
                site["user_stack"] = stack  # the outermost view of the same site
    for site in sites.values():
        calls = site.pop("calls", {})
        outer = site["user_stack"][0] if site["user_stack"] else None
        others = [f for at, f in calls.items() if f != outer and at != (site["path"], site["line"])]
        if others:
            site["call_sites"] = others[:MAX_CALL_SITES]
        # the loop read on the fullest view of the site's stack: dynamo's message that says
        # "in a loop" can leave the looping frame out of its stack (DETR's `Joiner.forward`,
        # whose loop over the backbone's outputs calls the position encoding: that view held
        # `DETR.forward` and the encoding only, and the comment named `DETR.forward`'s line)
        loop = _loop_frame(site["user_stack"], paths, files) if site["in_loop"] else None
        if loop is not None:
            site["loop_frame"] = loop
    _fold_package_twins(sites, paths, files)
    return sorted(sites.values(), key=lambda s: (s["path"] or "", s["line"] or 0, s["gb"] or ""))


def _fold_package_twins(sites: dict[tuple[Any, ...], dict[str, Any]], paths: RepoPaths,
                        files: dict[str, str]) -> None:
    """One break dynamo logged twice: from the repository's line that calls into a package
    (`inside`: the package's line) and from the package's frame alone (`library`, no line of
    the repository: the frame skipped for the break in its caller's loop, or compiled on its
    own once the caller ran it eagerly). One site, at the repository's line: egnn-pytorch's
    `.item()` under a model's loop over its layers read as "2 new graph breaks"."""
    for key, s in list(sites.items()):
        if s["path"] is not None or not s.get("library"):
            continue
        twin = next((t for t in sites.values() if t is not s and t["path"] is not None
                     and t.get("inside") == s["library"] and (t["gb"] or t["gb_type"]) == (s["gb"] or s["gb_type"])),
                    None)
        if twin is None:
            continue
        twin["count"] += s["count"]
        if s["in_loop"] and not twin["in_loop"]:
            twin["in_loop"] = True
            loop = _loop_frame(twin["user_stack"], paths, files)
            if loop is not None:
                twin["loop_frame"] = loop
        del sites[key]


def _loop_frame(stack: list[dict[str, Any]], paths: RepoPaths, files: dict[str, str]) -> dict[str, Any] | None:
    """The frame dynamo gave up on for a break inside a loop: the outermost user frame of the
    break's stack whose line lies in a `for`/`while` loop, with that loop's first line. Not
    simply the outermost frame: Swin's `forward` calls `forward_features`, whose loop over
    the layers holds the call that breaks; the comment named `forward`'s line, which is no
    loop, and a reader looked for one there."""
    for f in stack:
        first = paths.loop_at(files.get(f["path"]), f["line"])
        if first is not None:
            return {"path": f["path"], "line": first, "function": f["function"]}
    return None


# torch adds this note to every branch on an `any()`/`all()`, whether or not the line joins
# anything with `or`/`and`: on `if unseen.any():` it read as pt2bot's claim about the line
_OR_AND_NOTE = "Note: Python `or`/`and` between tensor expressions"
_TRANSFORM_NOTE = "For the common pattern `if tensor_cond: x = transform(x)`"
_COND_NOTE = "Use `torch.cond` to express dynamic control flow"


def _applies(hint: str, source: str, after: str = "") -> bool:
    """Whether torch's `hint` can be about the break's line: the note on `or`/`and` not where
    the line is a whole `if`/`while` header (it ends in its colon) with neither word; the advice
    on `if tensor_cond: x = transform(x)` not where the `if`'s block (`after`, its next line)
    leaves it (`raise`, `return`): a check that raises has no transform to apply always."""
    text = source.split("#")[0].strip()
    whole = text.startswith(("if ", "elif ", "while ")) and text.endswith(":")
    if hint.startswith(_TRANSFORM_NOTE):
        return not (whole and re.match(r"(raise|return|assert|break|continue)\b", after.strip()))
    if hint.startswith(_COND_NOTE):
        # `torch.cond` selects between two values and cannot raise: no form of a check whose
        # block raises, or of an `assert` (recurrentgemma's NaN check got it beside the
        # `torch._assert_async` form that keeps the check)
        return not (text.startswith("assert ") or (whole and re.match(r"raise\b", after.strip())))
    if not hint.startswith(_OR_AND_NOTE):
        return True
    if not whole:
        return True
    return re.search(r"\b(or|and)\b", text) is not None and not _guarded_by_identity(text)


def _guarded_by_identity(header: str) -> bool:
    """Whether every `or`/`and` of an `if`/`elif`/`while` header joins a Python identity test
    (`temperatures is None or (temperatures == 0).all()`, gemma's sampler): there `|` would
    compute the tensor side on the None the test keeps it from, and the `if` still branches on
    a tensor, so torch's note to write `|` is no fix."""
    head = header.split(None, 1)[1][:-1] if " " in header else ""
    try:
        test = ast.parse(head.strip(), mode="eval").body
    except SyntaxError:
        return False
    ops = [n for n in ast.walk(test) if isinstance(n, ast.BoolOp)]
    return bool(ops) and all(
        any(isinstance(v, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in v.ops)
            for v in op.values) for op in ops)


def traced_files(events: TraceCollector, backend: RecordingBackend,
                 paths: RepoPaths) -> list[str]:
    """Repo files of every frame dynamo traced (compiled, inlined, or skipped on a break)."""
    table = intern_table()
    files: set[str] = set()
    for f in backend.code_files:
        rel = paths.rel(f)
        if rel:
            files.add(rel)
    for ev in events.of_kind("dynamo_start"):
        stack = (ev.data or {}).get("stack") or []
        if stack:   # the last frame is the one being compiled
            rel = paths.rel(frame_file(stack[-1], table))
            if rel:
                files.add(rel)
    for ev in events.artifacts("dynamo_graph_break_reason"):
        for f in graph_breaks.parse_frames(ev.payload or ""):
            rel = paths.rel(f.file)
            if rel:
                files.add(rel)
    return sorted(files)


def measure_breaks(model: Any, case: CaseInputs, paths: RepoPaths, *,
                   coverage: LineCoverage | None = None,
                   count_ops: bool = True,
                   before_call: Callable[[], None] | None = None,
                   locate: bool = True) -> dict[str, Any]:
    """`graph_count`, `graph_breaks`, `files`, `graph_coverage` for one call on the first case.
    `before_call()` runs just before that call, outside it (see `measure_matrix`).

    With `coverage`, the lines dynamo traces in the repo's files are added to it (the
    worker records the eagerly executed ones: pt2bot/smoke/coverage.py). `count_ops`: count
    the ATen operators inside and outside the graphs (pt2bot/smoke/ops.py) during the call.
    """
    import torch
    from torch._dynamo.utils import counters

    reset_dynamo()
    ops = OpCounter() if count_ops else None
    backend = RecordingBackend(ops)
    compiled = torch.compile(model, backend=backend)
    traced = coverage.tracing() if coverage is not None else contextlib.nullcontext()
    counting = ops.counting() if ops is not None else contextlib.nullcontext()
    if before_call is not None:
        before_call()
    own = case.fresh()     # (a forward may write into its inputs; copied before the ops are counted)
    try:
        with TraceCollector() as events, call_mode(), traced, counting:
            compiled(*own.args, **own.kwargs)
    except Exception as e:
        if ops is None:
            raise
        # The operator counter is a dispatch mode, and some tensor subclasses cannot be made
        # under one (flowtorch's BijectiveTensor: "Creating a new Tensor subclass ... but the
        # raw Tensor object is already associated to a python object"). The breaks are what
        # this pass is for: it runs again without the counter, the ATen counts left null. A
        # call that raises without it too raises as it always did.
        print(f"pt2bot: the graph-break pass raised with the operator counter on "
              f"({type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}); "
              "running it again without", file=sys.stderr)
        reset_dynamo()
        return measure_breaks(model, case, paths, coverage=coverage, count_ops=False,
                              before_call=before_call, locate=locate)
    result = {
        "graph_count": backend.graphs,
        "graph_breaks": collect_breaks(events, paths, locate),
        "files": traced_files(events, backend, paths),
        "graph_coverage": graph_coverage(dict(counters["stats"]), backend.graph_ops, ops,
                                         eager_frames(compilation_metrics(), paths)),
    }
    reset_dynamo()
    return result
