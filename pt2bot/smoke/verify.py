"""The proof of a fix: head's model and each candidate edit, measured in ONE worker process.

    python -m pt2bot.smoke.verify SPEC.json OUT.json

SPEC is a smoke worker's spec (pt2bot/smoke/runner.py `build_jobs`: repo_root, model, run,
device, phases, log_path) plus `candidates` (`[{id, path, start_line, end_line, lines,
original, patched, guards, safe, targets}]`: `original`/`patched` are the whole file's text before
and after the edit), `candidate_timeout_s` and `progress_path`. The worker builds the model
and its inputs once, measures head (eager outputs on every shape case; the break pass; the
shape matrix and export when `phases` has them, all with the eager backend: breaks and
recompiles do not depend on the backend), then puts each candidate in place
(pt2bot/smoke/patch.py: same process, same weights, same inputs, the user's files never
written), measures it the same way and judges it (`judge`): its eager outputs (and, unless it
is safe by construction, the gradients of its parameters and inputs on every case, and the
values the replaced statements leave behind, pt2bot/smoke/values.py), the break pass,
the guard inputs (their outputs, then their gradients), the model's inputs all alike (all 0,
then all 1), its weights all 0 and one reading of its first input NaN (outputs and gradients,
`constant_checks`; on the NaN reading, gradients that differ and head raising where the
candidate returns are said, not refused), then the shape
matrix and export,
each step only when the ones before have not already refused it (a candidate whose targeted
break is still there pays for no guard input and no matrix). Where the matrix's first case
compiles as the break pass does (eager backend, no dim marked dynamic, torch's recompile
limit), that one compile gives both, for head and each candidate alike (`one_compile`). A candidate those facts accept,
unless it is safe by construction, is compiled once more with the configured backend when
that backend generates code (`backend_check`), and its outputs compared with head's eager
outputs. Each verdict is one JSON line appended to `progress_path` as soon as it is known,
so a candidate that crashes or hangs the worker loses only itself: the caller
(pt2bot/fixes.py) reads which one was running.
Candidates come in the order to try; one whose targets an earlier accepted candidate already
fixed is skipped (most likely first). OUT gets a minimal RUN, for the supervisor.

`judge` is pure (no torch): a candidate is accepted only when its targeted break, recompile
or export failure is gone, nothing else got worse (no other break, no more graphs, no new
recompile, no export failure), its eager outputs equal head's on every case (its gradients too,
and the values the edited statements bind, right after them; the shape matrix's
compiled outputs equal its eager ones), and where the
replaced code guards against a special value, it equals head on an input with that value,
and on the model's inputs all alike and its weights all 0 too (where head's own run ends
within `GUARD_RUN_S`). An
edit that keeps one arm of an `if`/`else` is accepted only where head ran the arm it drops on
one of the shape cases (`_dropped_arm`): on the others the kept arm is what head ran. An edit
that drops an `if`'s test for its masked writes selected (`_dropped_test`) is accepted only
where a shape case or a guard input skips the block in head's eager run: where head entered
it, the mask decides in both. Head's outputs and gradients, on the shape cases and on the
inputs all alike, are taken twice; a result on which head's own two runs differ (a draw the
seeding does not fix) is left out of the comparison and counted in the evidence, and a case
where every result differs is compared on nothing and refuses the candidate.
"""
from __future__ import annotations

import ast
import contextlib
import copy
import dataclasses
import functools
import json
import math
import os
import re
import sys
import textwrap
import time
from typing import Any, Callable, Collection, Mapping, Sequence

from pt2bot.findings import normalise_source
from pt2bot.jsonio import write_json
from pt2bot.results import RESUME_RE, on_break_stack, split_off_frame, value_guard
from pt2bot.smoke.breaks import RecordingBackend, collect_breaks, measure_breaks
from pt2bot.smoke.export import measure_export
from pt2bot.smoke.inputs import (CaseInputs, build_inputs, build_model, call_mode, compare_outputs,
                                 flatten_outputs, forward_params, infer_dims, nothing_finite, one_value,
                                 parameters_at, remember_state, module_scalars, run_forward, seed_all, start_call,
                                 tolerances, special_weights, zero_weights)
from pt2bot.smoke.location import ModelError, RepoPaths
from pt2bot.smoke.ops import eager_frames
from pt2bot.smoke.matrix import compile_configured, measure_matrix, varying_dims
from pt2bot.smoke.patch import (EQUAL, GUARD_KINDS, MAX_GUARD_ARGS, WATCH_ONLY, Edit, GuardOverrun, Injection,
                                ROW_PATTERNS, NotApplicable, Swap, asks_compiling, enclosing_function, equal_pattern,
                                function_at, guard_patterns, injecting, injector, patched_function, watchable)
from pt2bot.smoke.timelimit import Overrun, time_limit
from pt2bot.smoke.trace import TraceCollector, compilation_metrics, reset_dynamo
from pt2bot.smoke.values import ProbeSite, collecting, compare, defined_memory, probe_site
from pt2bot.smoke.worker import read_spec, route_logs, shape_cases

HEAD = "head"
HEAD_STATE = "head state"   # what head's model keeps after each case (a list, a case each)
KEPT = "kept attributes"     # the Python scalars compared in it (`scalar_attributes`)
GRADIENTS = "head gradients"   # the key of head's gradients in a model's cache (a list, a case each)
# head's outputs and gradients once more: what its own two runs disagree on is its noise
HEAD_AGAIN = "head again"
GRADIENT_NOISE = "head gradient noise"   # per case, the gradients head's two runs disagree on
SETTING_RUNS = "setting runs"   # per dynamo setting, what its run of head's code measured
HEAD_S = "head seconds"   # how long head's own measurement took in this worker: a candidate's
# time run out is said beside it (slower under load, or a hang)
# one eager run on a guard input: past this many times the model's own run of the case (timed
# once a function, at least GUARD_RUN_MIN_S, at most GUARD_RUN_S), a run that still calls the
# edited function ends
# (pt2bot/smoke/patch.py `GuardOverrun`); head's is then not compared, a candidate's is refused.
# Relative, so that a solver's inputs that never end cost a few seconds each of the candidate's
# time, not its whole time (torchdiffeq's event solver, two such inputs of a step size)
GUARD_RUN_TIMES, GUARD_RUN_MIN_S, GUARD_RUN_S = 20.0, 2.0, 10.0
ALIASES = "head aliases"       # and of which arguments head's edited function returns, per function
# the guard rows of a parameter set past an `if`'s test (`parameter_guards`)
PARAM = "param"
GUARD_WORDS = {"nan": "NaN", "inf": "inf", "empty": "an empty mask", "zero": "zeros",
               "invalid": "values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several)",
               "large": "large finite values (1e6, and 1e6 beside one NaN)",
               EQUAL: "an argument set to the one a test compares it with",
               PARAM: "a parameter its test reads set to ±1e6"}
# one guard input (pt2bot/smoke/patch.py `guard_patterns`), as the evidence names it
PATTERN_WORDS = {"-huge": "-1e6", "negative": "-1", "zeros": "0", "large": "1e3", "huge": "1e6", "hugenan": "1e6 beside one NaN", "nan": "NaN", "one": "one NaN",
                 "all": "all NaN", "off": "a mask all off", "positive": "+1",
                 "rownegative": "-1", "rowzeros": "0"}
# the guard kinds whose check raises: head must raise on one of their inputs, or the check the
# candidate keeps was never exercised
RAISING_GUARDS = frozenset({"invalid"})
# the exception class a replaced `raise` names (`raise ValueError(...)`, `raise errors.Bad`)
_RAISE_RE = re.compile(r"\braise\s+(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)")
# Backends that run eager's own kernels: their outputs are what the eager-backend runs already
# compared. Any other backend (inductor) generates code whose numerics may differ, so an
# accepted candidate is also run once under it.
EAGER_KERNELS = frozenset({"eager", "aot_eager"})


# head's runs on guard inputs, kept across the candidates that edit one function:
# (kind, pattern, argument, watched line, names preferred) -> (the Injection, the output or
# exception), or the CandidateTimeout that cut head's own run there (it hangs on that input);
# ("gradients", kind, pattern, argument, names preferred) -> head's gradients there
# (`guard_gradients`); and "run_s" -> how long one run on a guard input may take (`guard_checks`)
GuardCache = dict[Any, Any]


class CandidateTimeout(Overrun):
    """The candidate's own time ran out (a patched model that hangs)."""


# --------------------------------------------------------------------------- measuring

def _seeded_forward(model: Any, case: CaseInputs, paths: RepoPaths) -> Any:
    """One eager call from the model's state as built, with torch's generator seeded the same
    for head and every candidate (`start_call`): a model that draws random numbers in forward
    compares like with like."""
    start_call(model)
    return run_forward(model, case, paths)


def _breaks_summary(got: Mapping[str, Any]) -> list[dict[str, Any]]:
    # (the explanation and the package's place: what names a refused candidate's new break;
    # the user stack: which frames the break splits off, `_split_off_by`)
    return [{**{k: b.get(k) for k in ("gb", "gb_type", "path", "line", "function", "source")},
             **{k: b[k] for k in ("explanation", "library") if b.get(k)},
             "stack": [[f.get("path"), f.get("line"), f.get("function")]
                       for f in b.get("user_stack") or () if isinstance(f, Mapping)]}
            for b in got.get("graph_breaks") or ()]


def _recompiles_summary(got: Mapping[str, Any]) -> dict[str, Any]:
    rec = got.get("recompiles") or {}
    cases = []
    for c in rec.get("cases") or ():
        sites = sorted({(r.get("path"), r.get("line")) for r in c.get("reasons") or ()
                        if r.get("kind") != "size_one" and r.get("path")},
                       key=lambda s: (s[0] or "", s[1] or 0))
        user = [r for r in c.get("reasons") or () if r.get("kind") != "size_one"]
        frames = sorted({tuple((r.get("frame") or {}).get(k) for k in ("function", "path", "line"))
                         for r in user}, key=str)
        cases.append({"shape": c.get("shape"), "n": (c.get("recompiles") or 0) if user else 0,
                      "sites": [list(s) for s in sites], "error": c.get("error"),
                      # which frames recompiled, and whether only because a size changed (a
                      # static shape guard failed: dynamo's first recompile on a new size)
                      "frames": [list(f) for f in frames],
                      # each frame's first failed guard, as torch says it (what changed)
                      "guards": [[(r.get("frame") or {}).get("function"), str(r.get("guard") or "")[:200]]
                                 for r in user],
                      # frames other than the model's own (frame 0): only a break makes those
                      "split": sorted({tuple((r.get("frame") or {}).get(k) for k in ("function", "path", "line"))
                                       for r in user
                                       if split_off_frame(r.get("compile_id"))},
                                      key=str),
                      "sizes_only": bool(user) and all(r.get("kind") == "size_mismatch" for r in user)})
    return {"count": rec.get("count") or 0, "eager_fallback": bool(rec.get("eager_fallback")),
            "cases": cases}


def _accuracy_summary(got: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The shape matrix's compiled-against-eager comparison, a row a case. For an edit that
    asks `torch.compiler.is_compiling()` the eager outputs are head's own (eager runs as
    before), so these rows are the only comparison of what compiled code now does."""
    # (the comparison's message too: "NaN or inf on one side only ...", where the largest
    # finite error alone would read "differ (max abs error 0)")
    return [{k: a.get(k) for k in ("shape", "match", "max_abs_err", "message") if k in a}
            for a in got.get("accuracy") or ()]


def _export_summary(got: Mapping[str, Any]) -> dict[str, Any]:
    return {k: got.get(k) for k in ("ok", "kind", "path", "line", "message")}


def measure_state(model: Any, cases: list[CaseInputs], eager_outs: list[Any],
                  model_spec: dict[str, Any], run_cfg: dict[str, Any], paths: RepoPaths,
                  phases: Sequence[str],
                  proceed: Callable[[dict[str, Any]], bool] | None = None) -> dict[str, Any]:
    """The break pass, the shape matrix and export (as `phases` asks), eager backend.

    `proceed(state)`, after the break pass: the phases after it run only when it returns
    True (a candidate the break pass already refuses pays for nothing more)."""
    out: dict[str, Any] = {"phase_errors": {}}
    eager_cfg = {**run_cfg, "backend": "eager", "mode": None}
    todo = list(phases)
    if one_compile(todo, model_spec, run_cfg):
        done = _breaks_in_matrix(out, model, cases, eager_outs, model_spec, eager_cfg, paths,
                                 proceed)
        if done is not None:
            if not done:
                return out
            todo = [p for p in todo if p not in ("breaks", "matrix")]
    for phase in todo:
        try:
            if phase == "breaks":
                # no ATen op counts: the judge never reads them, and the counting mode costs
                # a dispatch per operator (it does not change what dynamo captures)
                got = measure_breaks(model, cases[0], paths, count_ops=False,
                                     before_call=lambda: start_call(model), locate=False)
                out.update(_break_state(got, paths))
            elif phase == "matrix":
                got = measure_matrix(model, cases, eager_outs, model_spec, eager_cfg, paths,
                                     before_call=lambda: start_call(model))
                out["recompiles"] = _recompiles_summary(got)
                out["accuracy"] = _accuracy_summary(got)
            elif phase == "export":
                out["export"] = _export_summary(
                    measure_export(model, cases, eager_outs, model_spec, paths))
        except CandidateTimeout:
            raise
        except Exception as e:  # noqa: BLE001 - a phase that fails is a result
            out["phase_errors"][phase] = f"{type(e).__name__}: {str(e)[:500]}"
            with contextlib.suppress(Exception):
                reset_dynamo()
        if phase == "breaks" and proceed is not None and not proceed(out):
            return out
    return out


def one_compile(phases: Sequence[str], model_spec: Mapping[str, Any],
                run_cfg: Mapping[str, Any]) -> bool:
    """Whether the shape matrix's first case can stand in for the break pass in the proof:
    both compile the first case with the eager backend there, and the settings are the same
    unless a declared dynamic dim gets marked or the matrix's recompile limit is not torch's
    (the break pass runs with torch's), benchmarks/results/onepass.md."""
    import torch

    return ("breaks" in phases and "matrix" in phases and not model_spec.get("dynamic")
            and int(run_cfg.get("recompile_limit") or 8) == torch._dynamo.config.recompile_limit)


def _breaks_in_matrix(out: dict[str, Any], model: Any, cases: list[CaseInputs],
                      eager_outs: list[Any], model_spec: dict[str, Any],
                      eager_cfg: dict[str, Any], paths: RepoPaths,
                      proceed: Callable[[dict[str, Any]], bool] | None) -> bool | None:
    """The break pass and the shape matrix as one compile sequence: the matrix's first case
    compiled with the break pass's recording backend, its facts read once that case has run,
    the other cases after it only when `proceed` says so. True: both measured into `out`;
    False: stopped after the break facts; None: the first case failed, and nothing is kept
    (the two passes then run apart, so that a failure reads as it always did)."""
    backend = RecordingBackend()
    state: dict[str, Any] = {}

    def after_first(events: TraceCollector, rec: dict[str, Any]) -> bool:
        if rec.get("error") or not rec.get("compiled"):
            state["failed"] = True
            return False
        state.update(_break_state({
            "graph_count": backend.graphs, "graph_breaks": collect_breaks(events, paths, locate=False),
            "graph_coverage": {"eager_frames": eager_frames(compilation_metrics(), paths),
                               "graph_ops": list(backend.graph_ops)}},
            paths))
        state["proceed"] = proceed is None or proceed({**out, **state})
        return state["proceed"]

    try:
        got = measure_matrix(model, cases, eager_outs, model_spec,
                             {**eager_cfg, "backend": backend}, paths, after_first=after_first,
                             before_call=lambda: start_call(model))
    except CandidateTimeout:
        raise
    except Exception:  # noqa: BLE001 - the passes apart then say what failed
        with contextlib.suppress(Exception):
            reset_dynamo()
        return None
    if state.get("failed") or "proceed" not in state:
        return None
    out.update({k: v for k, v in state.items() if k != "proceed"})
    if state["proceed"]:
        out["recompiles"] = _recompiles_summary(got)
        out["accuracy"] = _accuracy_summary(got)
    return bool(state["proceed"])


def _break_state(got: Mapping[str, Any], paths: RepoPaths) -> dict[str, Any]:
    """What the judge reads of a break pass: the graphs, the operations in them, the breaks,
    the frames run in eager."""
    ops = (got.get("graph_coverage") or {}).get("graph_ops")
    return {"graph_count": got.get("graph_count"), "breaks": _breaks_summary(got),
            "graph_ops": sum(ops) if isinstance(ops, list) else None,
            "eager_frames": [
                {**{k: f.get(k) for k in ("function", "path", "line")},
                 "end": _function_end(paths, f.get("path"), f.get("line"))}
                for f in (got.get("graph_coverage") or {}).get("eager_frames") or ()]}


def probe_shape(cases: list[CaseInputs], model_spec: Mapping[str, Any]) -> dict[str, int] | None:
    """A shape case the matrix does not have, each dim that varies in it at a new size: a
    multiple of the sizes' greatest common divisor between the smallest and the largest (a
    divisibility the model needs is kept), else one step past the largest, within a declared
    range. The last case's shape otherwise. None where some dim has no such size."""
    varying = varying_dims(cases)
    if not varying:
        return None
    shape = dict(cases[-1].shape)
    bounds = model_spec.get("bounds") or {}
    for d in sorted(varying):
        values = sorted({int(c.shape[d]) for c in cases})
        step = math.gcd(*values)
        bound = bounds.get(d) if isinstance(bounds, Mapping) else None
        bound = bound if isinstance(bound, Mapping) else {}
        lo, hi, multiple = bound.get("min"), bound.get("max"), bound.get("multiple_of")
        if isinstance(multiple, int) and multiple > 0:
            step = step * multiple // math.gcd(step, multiple)
        tries = [v for v in range(values[0] + step, values[-1], step) if v not in values]
        tries += [values[-1] + step]
        ok = [v for v in tries if v > 1 and (not isinstance(lo, int) or v >= lo)
              and (not isinstance(hi, int) or v <= hi)]
        if not ok:
            return None
        shape[d] = ok[0]
    return shape


def _probe_run(model: Any, cases: list[CaseInputs], outs: list[Any], model_spec: dict[str, Any],
               run_cfg: dict[str, Any], paths: RepoPaths) -> dict[str, Any]:
    """The shape matrix compiled again with a third size after its cases (`probe_shape`), in
    one session: which frames recompile on that size, `{shape, n, frames, guards, sizes_only}`,
    or `{shape, error}`. Only the recompiles are read; the eager backend, as the proof's matrix."""
    shape = probe_shape(cases, model_spec)
    if shape is None:
        return {"shape": None, "error": "no size the matrix lacks fits the declared range"}
    try:
        device = next((t.device.type for t in (*cases[0].args, *cases[0].kwargs.values())
                       if hasattr(t, "device")), "cpu")
        probe = build_inputs(model_spec, model, shape, device, paths)
        if not probe.dims:
            # (a factory's inputs: the dims the matrix's cases were read to have)
            probe.dims = cases[-1].dims
        with call_mode():
            expected = _seeded_forward(model, probe, paths)
        got = measure_matrix(model, [*cases, probe], [*outs, expected], model_spec,
                             {**run_cfg, "backend": "eager", "mode": None}, paths,
                             before_call=lambda: start_call(model))
    except CandidateTimeout:
        raise
    except Exception as e:  # noqa: BLE001 - a probe that fails tells nothing either way
        return {"shape": shape, "error": f"{type(e).__name__}: {str(e)[:300]}"}
    last = _recompiles_summary(got)["cases"][-1]
    if last.get("error"):
        return {"shape": shape, "error": str(last["error"])[:300]}
    return {k: last.get(k) for k in ("shape", "n", "frames", "guards", "sizes_only")}


def _measure_more(measured: dict[str, Any], model: Any, cases: list[CaseInputs],
                  outs: list[Any], model_spec: dict[str, Any], run_cfg: dict[str, Any],
                  paths: RepoPaths, phases: Sequence[str],
                  proceed: Callable[[dict[str, Any]], bool] | None = None) -> None:
    """`measure_state` of `phases` into `measured`, its phase errors added to those before."""
    if not phases:
        return
    got = measure_state(model, cases, outs, model_spec, run_cfg, paths, phases, proceed)
    errors = {**(measured.get("phase_errors") or {}), **got.pop("phase_errors")}
    measured.update(got, phase_errors=errors)


def _refused_by_breaks(head: Mapping[str, Any], measured: Mapping[str, Any],
                       targets: Sequence[Mapping[str, Any]], edit: Edit) -> bool:
    """Whether the break pass alone already refuses the candidate: `judge` on what is measured
    so far, with its break targets only (the matrix and export have not run). Whatever
    refuses here refuses the whole candidate too, the same facts read the same way."""
    # (whether an input takes an exit or enters a block now eager only, runs an arm the edit
    # drops, or skips a block whose test it drops, was read before the break pass, and guard
    # inputs that skip it come after; what it says is judged with the rest)
    early = {k: v for k, v in measured.items()
             if k not in ("block", "exit", "dropped", "always", "reached", "early", "frozen", "skip", "skipped",
                          "enter", "entered", "told")}
    return not judge(head, early, [t for t in targets if t.get("kind") == "break"],
                     edit)["accepted"]


def _function_end(paths: RepoPaths, path: Any, line: Any) -> int | None:
    """The last line of the function holding `line` of the repository file `path` (a frame's
    first line, or a resume frame's line), None when it cannot be read or found."""
    if not isinstance(path, str) or not isinstance(line, int):
        return None
    tree = _parsed(os.path.join(paths.root, path))
    found = enclosing_function(tree, line, line) if tree is not None else None
    return found[1].end_lineno if found is not None else None


@functools.lru_cache(maxsize=32)
def _parsed(filename: str) -> Any:
    """A file of the checkout parsed once per proof worker (head and every candidate's break
    pass ask for the same files; the checkout is never written during the proof)."""
    import ast

    try:
        with open(filename, encoding="utf-8") as fh:
            return ast.parse(fh.read())
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None


def _compare(expected: Any, got: Any, tolerance: Any) -> dict[str, Any]:
    res = compare_outputs(expected, got, tolerance, types=True)
    return {k: res.get(k) for k in ("match", "max_abs_err", "message")}


# Head's own noise. A model can compute part of its result from what the proof's seeding does
# not fix (tntorch's Tucker compression runs CP-ALS from numpy's unseeded generator): head's
# own two runs differ there, and a candidate compared with one of them would be refused or
# accepted by chance (the same edit was refused in one session and verified in the next). The
# leaves on which head's two runs differ are left out of every comparison, and the evidence
# says how many; where every leaf differs nothing is compared and the candidate is refused.

def _compare_stable(expected: Any, again: Any, got: Any, tolerance: Any) -> dict[str, Any]:
    """`_compare` of a candidate's result with head's (`expected`), leaving out the leaves on
    which head's second run (`again`) differs from its first: `noise` counts them."""
    row = _compare(expected, got, tolerance)
    if row["match"] or again is None or _compare(expected, again, tolerance)["match"]:
        return row
    e, a, g = flatten_outputs(expected), flatten_outputs(again), flatten_outputs(got)
    if not len(e) == len(a) == len(g) or not e or _skeleton(expected) != _skeleton(got):
        return row      # a different structure is the candidate's own difference
    noise, worst = 0, 0.0
    for x, y, z in zip(e, a, g):
        if not _compare(x, y, tolerance)["match"]:
            noise += 1
            continue
        one = _compare(x, z, tolerance)
        if not one["match"]:
            return one
        worst = max(worst, one["max_abs_err"] or 0.0)
    if noise == len(e):
        return {"match": False, "max_abs_err": None, "noise": noise,
                "message": f"head's own two runs differ on all {noise} of its outputs: nothing "
                           "could be compared"}
    return {"match": True, "max_abs_err": worst, "message": None, "noise": noise}


def _skeleton(o: Any) -> Any:
    """A result's containers and leaf types, without the values (`flatten_outputs`' walk)."""
    if isinstance(o, dict):
        return ("dict", tuple((str(k), _skeleton(o[k])) for k in sorted(o, key=str)))
    if isinstance(o, (list, tuple)):
        return (type(o).__name__, tuple(_skeleton(v) for v in o))
    if hasattr(o, "__dataclass_fields__"):
        return (type(o).__name__, tuple(_skeleton(getattr(o, k)) for k in o.__dataclass_fields__))
    return type(o).__name__


# What a module keeps past a call besides its outputs: its buffers, and the Python scalars it
# holds as attributes (an average kept for logging, a step count, a mode). A fix that keeps a
# tensor (`.item()` dropped) can turn such a float into a tensor, or move a buffer, while the
# outputs stay equal; the caller that reads the attribute sees the change.


def scalar_attributes(model: Any) -> dict[tuple[int, str], tuple[Any, Any]]:
    """(id of the module, name) -> (the module, the value) of each public Python scalar
    attribute of `model`'s modules (`module_scalars`: `training` aside, the run's mode is set
    by pt2bot), and of each public record: a dict, list or tuple of such scalars and tensors
    (`record`), a block's statistics kept for logging (`self.last_router_probs = {"ra":
    p.mean().item(), ...}`), where a kept tensor stored in head's float's place reaches whoever
    reads them (`json.dumps`, a logger's sum)."""
    modules = list(model.modules()) if hasattr(model, "modules") else []
    scalars = {(id(m), k): (m, v) for m in modules for k, v in module_scalars(m).items() if not k.startswith("_")}
    records = {(id(m), k): (m, v) for m in modules
               for k, v in vars(m).items() if not k.startswith("_") and record(v) is not None}
    return {**scalars, **records}


# the leaves a record may hold, at most: a larger container (a cache of tensors, a history)
# is not a record of one call, and copying it after every call would cost what it holds
RECORD_LEAVES = 64


def record(value: Any) -> Any:
    """A copy of `value` if it is a dict, list or tuple (nested at most twice) of Python
    scalars and tensors, at most `RECORD_LEAVES` of them, tensors cloned; else None."""
    import torch

    count = [0]

    def copy(v: Any, depth: int) -> tuple[bool, Any]:
        if isinstance(v, torch.Tensor):
            count[0] += 1
            return True, v.detach().clone()
        if isinstance(v, (bool, int, float, complex, str, type(None))):
            count[0] += 1
            return True, v
        if depth < 3 and type(v) in (dict, list, tuple):
            out = []
            for k, x in (v.items() if isinstance(v, dict) else enumerate(v)):
                ok, c = copy(x, depth + 1)
                if not ok or count[0] > RECORD_LEAVES:
                    return False, None
                out.append((k, c))
            return True, dict(out) if isinstance(v, dict) else type(v)(c for _, c in out)
        return False, None

    if type(value) not in (dict, list, tuple):
        return None
    ok, got = copy(value, 0)
    return got if ok and count[0] else None


def kept_state(model: Any, kept: Mapping[tuple[int, str], tuple[Any, Any]]) -> dict[str, Any]:
    """`model`'s buffers and the current values of the attributes of `kept`, by a label a
    reader can find (`lift.fill_frac_ema`)."""
    out: dict[str, Any] = {}
    if not hasattr(model, "named_modules"):
        return out
    names: dict[int, list[str]] = {}
    for i, k in sorted(kept, key=lambda ik: ik[1]):
        names.setdefault(i, []).append(k)
    for prefix, m in model.named_modules():
        for name, b in list(m._buffers.items()):
            if b is not None:
                out[f"{prefix}.{name}" if prefix else name] = b.detach().clone()
        for k in names.get(id(m), ()):
            v = vars(m).get(k)
            # a record is copied: the module may fill the same dict again on the next call
            out[f"{prefix}.{k}" if prefix else k] = record(v) if isinstance(v, (dict, list, tuple)) else v
    return out


def compare_state(expected: Mapping[str, Any], got: Mapping[str, Any], tolerance: Any
                  ) -> dict[str, Any]:
    """`{match, max_abs_err, message}` of a candidate's kept state against head's after the
    same call: the first attribute or buffer that differs, by its label."""
    for label, value in expected.items():
        if label not in got:
            return {"match": False, "max_abs_err": None, "message": f"`{label}` is gone"}
        row = _compare(value, got[label], tolerance)
        if not row["match"]:
            what = str(row.get("message") or f"max abs error {row.get('max_abs_err') or 0:.3g}")
            return {**row, "message": f"`{label}` " + what.removeprefix("output ")}
    return {"match": True, "max_abs_err": 0.0, "message": None}


def backend_check(model: Any, case: CaseInputs, expected: Any, paths: RepoPaths,
                  run_cfg: Mapping[str, Any], tolerance: Any) -> dict[str, Any] | None:
    """The model compiled with the configured backend, on one case, against `expected` (head's
    eager outputs): `{backend, match, max_abs_err, message}`, or None for a backend that runs
    eager's kernels. A compile or run that raises is a mismatch with its message."""
    backend = str(run_cfg.get("backend") or "inductor")
    if backend in EAGER_KERNELS:
        return None
    reset_dynamo()
    try:
        row = _compiled_row(lambda: compile_configured(model, dict(run_cfg)), case, expected, paths,
                            tolerance)
    finally:
        reset_dynamo()
    return {"backend": backend, **row}


def _compiled_row(compiled: Callable[[], Any], case: CaseInputs, expected: Any,
                  paths: RepoPaths, tolerance: Any, again: Any = None) -> dict[str, Any]:
    """One case of the model `compiled()` gives against `expected` (and head's second run,
    `again`: `_compare_stable`); a compile or run that raises is a mismatch with its message
    (a backend torch does not know, a backend failure, dynamo raising under a setting)."""
    try:
        with call_mode():
            got = _seeded_forward(compiled(), case, paths)
        return _compare_stable(expected, again, got, tolerance)
    except ModelError as e:
        return {"match": False, "max_abs_err": None, "message": e.message, "raised": True}
    except Exception as e:  # noqa: BLE001 - a failure is a result
        return {"match": False, "max_abs_err": None, "raised": True,
                "message": f"{type(e).__name__}: {str(e)[:300]}"}


def gradients(model: Any, case: CaseInputs, paths: RepoPaths,
              run_model: Any = None) -> dict[str, list[Any] | None] | str | None:
    """The gradients of the model's trainable parameters, and of its floating-point tensor
    inputs, for the sum of its floating-point outputs on `case` (eager, seeded as the forward
    runs are): what training computes from this code, and what reaches the layers before it
    (a model is often one block of a larger one, whose input is an activation). A rewrite can
    equal head in the forward pass and not in backward: `torch.where(c, h.sqrt(), h)` selects
    `h` where `h < 0`, but the NaN of the unselected `sqrt` reaches the gradient (0 times NaN);
    `x.abs().max()` kept where `.item()` cut the gradient lets one through to `x` that the
    parameters may never see. `{"parameters": [...], "inputs": [...] or None, "none": [...]}`
    (`inputs` None where the forward refuses inputs that require grad, an in-place write into
    one: then the parameters alone; `none` the names of the parameters backward gave no
    gradient, compared as zeros but not the same to an optimizer, which skips them); None when
    nothing is differentiable; the exception's text when backward raises. `run_model`: what
    runs the forward pass instead of `model` (its compiled form), the parameters `model`'s."""
    import torch

    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad and p.is_floating_point()]
    params = [p for _, p in named]

    def run(with_inputs: bool) -> dict[str, list[Any] | None] | None:
        inputs: list[Any] = []

        def leaf(a: Any) -> Any:
            if with_inputs and isinstance(a, torch.Tensor) and a.is_floating_point():
                a = a.detach().clone().requires_grad_(True)
                inputs.append(a)
            return a

        with torch.enable_grad():
            forward = model if run_model is None else run_model
            outs = flatten_outputs(_seeded_forward(forward, case.replace_tensors(leaf), paths))
            leaves = [o for o in outs if isinstance(o, torch.Tensor) and o.requires_grad and o.is_floating_point()]
            wrt = params + inputs
            if not leaves or not wrt:
                return None
            loss = functools.reduce(lambda a, b: a + b, (o.float().sum() for o in leaves))
            raw = torch.autograd.grad(loss, wrt, allow_unused=True)
            grads = [torch.zeros_like(w) if g is None else g.detach().clone() for w, g in zip(wrt, raw)]
        return {"parameters": grads[:len(params)], "inputs": grads[len(params):] if with_inputs else None,
                "none": [n for (n, _), g in zip(named, raw) if g is None]}

    try:
        try:
            return run(True)
        except Exception:  # noqa: BLE001 - inputs that require grad refused (an in-place write)
            return run(False)
    except ModelError as e:
        return e.message
    except Exception as e:  # noqa: BLE001 - a backward that fails is a result
        return f"{type(e).__name__}: {str(e)[:300]}"


def head_gradients(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths) -> list[Any]:
    """Head's gradients (`gradients`) on every shape case: in full on the first, as digests
    (`_digest`) on the others, so that a model with many parameters keeps one copy of them."""
    out = []
    for i, case in enumerate(cases):
        got = gradients(model, case, paths)
        out.append(got if i == 0 else _digest(got))
    return out


def compare_gradients(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths,
                      head: Sequence[Any], tolerance: Any, compiled: bool = False,
                      noise: Sequence[Mapping[str, set[int]]] | None = None) -> dict[str, Any] | None:
    """The candidate's gradients against head's (`head_gradients`), case by case until one
    differs: `{shape, match, max_abs_err, of, message, cases}`, `cases` the number of shape
    cases compared; None when head has none to compare on any case. Where they match, `zeroed`
    names the parameters that get zero gradients on some case where head's get none (and
    `unlinked` the reverse): equal numbers, but an optimizer with momentum or weight decay moves
    a parameter with a zero gradient and skips one with none, so the evidence says so.
    `compiled`: the candidate's gradients through the model compiled (eager backend), for an
    edit that asks `torch.compiler.is_compiling()`, whose eager code, backward included, is
    head's: compiled code's backward is what training with it computes. `noise`: per case,
    the gradients on which head's second run differs from its first (`_gradient_noise`),
    not compared (the row's `noise` counts them)."""
    import torch

    if compiled:
        reset_dynamo()
        try:
            return _compare_gradients(model, cases, paths, head, tolerance, noise,
                                      run=torch.compile(model, backend="eager"))
        finally:
            reset_dynamo()
    return _compare_gradients(model, cases, paths, head, tolerance, noise)


def _compare_gradients(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths,
                       head: Sequence[Any], tolerance: Any,
                       noise: Sequence[Mapping[str, set[int]]] | None = None,
                       run: Any = None) -> dict[str, Any] | None:
    row: dict[str, Any] | None = None
    compared = 0
    left_out = 0
    zeroed: set[str] = set()
    unlinked: set[str] = set()
    skips = list(noise) if noise is not None else [{}] * len(head)
    for i, (case, expected, skip) in enumerate(zip(cases, head, skips)):
        got = gradients(model, case, paths, run)
        one = _gradient_row(expected, got if i == 0 else _digest(got), tolerance, digest=i > 0,
                            skip=skip)
        if one is None:
            continue
        compared += 1
        left_out += sum(len(v) for v in skip.values())
        row = {"shape": dict(case.shape), **one, "cases": compared}
        if left_out:
            row["noise"] = left_out
        if not one["match"]:
            break
        if isinstance(expected, dict) and isinstance(got, dict):
            before, after = set(expected.get("none") or ()), set(got.get("none") or ())
            zeroed |= before - after
            unlinked |= after - before
    if row is not None and row["match"]:
        row["shape"] = dict(cases[0].shape)
        row.update({k: sorted(v) for k, v in (("zeroed", zeroed), ("unlinked", unlinked)) if v})
    return row


def _digest(grads: Any) -> Any:
    """Gradients as three float64 numbers a tensor: its sum, the sum of its magnitudes and its
    number of elements (NaN stays NaN); a failure's text or None as they are."""
    import torch

    if not isinstance(grads, dict):
        return grads

    def one(g: Any) -> Any:
        d = g.detach().double()
        return torch.stack([d.sum(), d.abs().sum(), torch.tensor(float(d.numel()), dtype=torch.float64)])
    return {of: v if v is None or of == "none" else [one(g) for g in v] for of, v in grads.items()}


def _digests_match(expected: Sequence[Any], got: Sequence[Any], tolerance: Any) -> dict[str, Any]:
    """Digests (`_digest`) compared within the sums of the elementwise tolerance: where every
    element is within `atol + rtol * |head's|`, the sums are within `n * atol + rtol * sum |head's|`,
    so this never refuses what the full comparison would accept."""
    rtol, atol = tolerances(tolerance)["float32"]
    worst = 0.0
    if len(expected) != len(got):
        return {"match": False, "max_abs_err": None, "message": f"{len(got)} gradients, expected {len(expected)}"}
    for e, g in zip(expected, got):
        es, ea, n = (float(v) for v in e)
        gs, ga, _ = (float(v) for v in g)
        if (es != es) != (gs != gs):   # NaN on one side only
            return {"match": False, "max_abs_err": None,
                    "message": "NaN where head's are finite" if gs != gs else "finite where head's are NaN"}
        if es != es:
            continue
        bound = n * atol + rtol * ea
        err = max(abs(es - gs), abs(ea - ga))
        worst = max(worst, err)
        if err > bound:
            return {"match": False, "max_abs_err": err,
                    "message": f"their sums differ by {err:.3g} (at most {bound:.3g} allowed)"}
    return {"match": True, "max_abs_err": worst, "message": None}


def _gradient_noise(expected: Any, again: Any, tolerance: Any, *, digest: bool = False
                    ) -> dict[str, set[int]]:
    """Per `of` (the parameters', the inputs'), which of head's gradients its second run
    (`again`) does not reproduce."""
    out: dict[str, set[int]] = {}
    if not isinstance(expected, dict) or not isinstance(again, dict):
        return out
    for of in ("parameters", "inputs"):
        e, a = expected.get(of), again.get(of)
        if e is None or a is None or len(e) != len(a):
            continue
        bad = {i for i, (x, y) in enumerate(zip(e, a))
               if not (_digests_match([x], [y], tolerance) if digest else _compare(x, y, tolerance))["match"]}
        if bad:
            out[of] = bad
    return out


def _gradient_row(expected: Any, got: Any, tolerance: Any, *, digest: bool = False,
                  skip: Mapping[str, set[int]] | None = None) -> dict[str, Any] | None:
    """Head's gradients (`gradients`) against the candidate's: None when head's backward fails
    (nothing to compare: a training step of head's code raises, and an edit under which it runs
    is not held against the fix, pyg's `new_full` fill value that requires a gradient), or
    when neither has any. Where head's outputs carry no gradient at all and the candidate's
    carry some that are not all zero, they differ: a result made without the layers (the block
    that computes from them skipped), which the edit's `torch.where` links to them
    (torchmetrics' Pearson on constant predictions: NaN gradients where head's training step
    had none to take). Zeros there (`torch.where` selecting a constant) change no step, on
    what this run computed; on a guard input the function is called with the values set, not
    the layers with inputs that make them, and zeros through an infinite derivative in those
    layers would be NaN: the masked-rows recipe offers no edit where its mask marks such values
    (pt2bot/rules/branch_fixes.py `_made_from`), and the model's inputs all alike
    (`constant_checks`) make them where its layers do. `of`:
    whose gradients the row is about, the parameters' or, where those match, the inputs'
    (compared where both runs took gradients of the inputs)."""
    import torch

    if not isinstance(expected, dict):
        if expected is not None or not isinstance(got, dict):
            return None
        grads = [g for of in ("parameters", "inputs") for g in got.get(of) or ()]
        # (a digest's second number is the sum of the magnitudes: 0 only for zeros, not NaN)
        if all(not bool(g[1] != 0 if digest else g.any()) for g in grads):
            return {"match": True, "max_abs_err": 0.0, "message": None}
        nan = "NaN " if any(bool(torch.isnan(g).any()) for g in grads) else ""
        return {"match": False, "max_abs_err": None, "of": None,
                "message": f"the outputs carry {nan}gradients where head's carry none"}
    if not isinstance(got, dict):
        return {"match": False, "max_abs_err": None, "of": "parameters",
                "message": f"backward {'fails: ' + got if got else 'has nothing to differentiate'}"}
    row: dict[str, Any] = {"match": True, "max_abs_err": 0.0, "message": None}
    for of in ("parameters", "inputs"):
        e, g = expected.get(of), got.get(of)
        if e is None or g is None:
            continue
        noisy = (skip or {}).get(of) or set()
        if noisy and len(e) == len(g):
            # (head's noise: `_gradient_noise`)
            if len(noisy) == len(e):
                return {"match": False, "max_abs_err": None, "of": of,
                        "message": f"head's own two runs differ on all {len(e)} of its {of}' "
                                   "gradients: nothing could be compared"}
            e = [x for i, x in enumerate(e) if i not in noisy]
            g = [x for i, x in enumerate(g) if i not in noisy]
        row = {**(_digests_match(e, g, tolerance) if digest else _compare(e, g, tolerance)), "of": of}
        if not row["match"]:
            if any(bool(torch.isnan(b).any()) and not bool(torch.isnan(a).any()) for a, b in zip(e, g)):
                row["message"] = "NaN where head's are finite"
            break
    return row


def guard_checks(model: Any, case: CaseInputs, paths: RepoPaths, kinds: Sequence[str],
                 head_swap: Swap, cand_swap: Swap, tolerance: Any,
                 head_cache: GuardCache, *,
                 compiled: bool = False, watch: int | None = None,
                 prefer: tuple[str, ...] = (), equal: Sequence[str] = (), block: int | None = None,
                 on_stage: Callable[[str | None], None] = lambda _stage: None,
                 cand_watch: int | None = None) -> list[dict[str, Any]]:
    """Head and the patched code on inputs with each guarded special value, injected into
    the tensor arguments of the function the edit is in, and one level into its tuple, named
    tuple, list and dict arguments (a solver's state tuple, a batch dict). A kind no argument
    can carry is `hit: false` (the judge then refuses the candidate).

    `compiled` (an edit that asks `torch.compiler.is_compiling()`): eager is unchanged by such
    an edit, so the patched model is also run compiled (eager backend) on each guard input
    that matched in eager, and compared with head's eager outputs: `if not
    torch.compiler.is_compiling() and (x < 0).any(): raise ...` deletes the check from
    compiled code, and only a compiled run on a negative `x` shows it. Only the model's
    outputs are compared there: what the edited function returns under compile is what such
    an edit changes (an early `return t, None` skipped, the caller applying a mask that does
    nothing); whether the model's result stays the same is the question.

    `prefer`: the names the replaced code reads; the arguments (and elements of a state tuple
    or a dict argument) of those names are tried first, before the others in order.
    `equal`: for the kind "equal", the pairs of arguments a test of the replaced code compares
    (`equal_tests`); a pair that is not two tensor arguments alike is no input, and no row.
    `block`: the first line of the block of the `if` the edit replaces, where there is one: a NaN
    or an inf no argument can hold is put into the model's weights instead (`_weights_guards`),
    and such an input counts only where head entered that block on it.
    `cand_watch`: a line of the patched file the candidate's run is watched at too
    (`cand_reached` in each row; `_kept_test_block`).
    `on_stage`: told when head's own run on a guard input starts (and None when it ends), so
    that a run past the candidate's time is blamed on head where head's run hangs (a solver
    whose state holds -1 or 1e6 may never end), not on the patch."""
    out = []
    # the rows that matched in eager, for the compiled runs after the eager ones
    pending: list[tuple[dict[str, Any], Injection, Any]] = []
    # the inputs on which head's own run did not end (`run_s`): not compared
    unfinished: list[dict[str, Any]] = []
    if "run_s" not in head_cache:
        t0 = time.monotonic()
        with call_mode():
            _try_forward(model, case, paths)
        head_cache["run_s"] = min(GUARD_RUN_S, max(GUARD_RUN_MIN_S, GUARD_RUN_TIMES * (time.monotonic() - t0)))
    run_s = float(head_cache["run_s"])
    for kind in kinds:
        for arg in range(1 if kind == EQUAL else MAX_GUARD_ARGS):
            for pattern in guard_patterns(kind, equal):
                key = (kind, pattern, arg, watch, prefer)
                stage = f"head's own run with {GUARD_WORDS.get(kind, kind)} injected"
                # (whatever line an earlier candidate watched: a watch does not change the run)
                ran_out = next((v for k, v in head_cache.items() if isinstance(v, CandidateTimeout)
                                and isinstance(k, tuple) and len(k) == 5
                                and k[:3] + k[4:] == key[:3] + key[4:]), None)
                if ran_out is not None:
                    # head never finished on this input for an earlier candidate: the same
                    # verdict now, without spending this candidate's time on it again
                    on_stage(stage)
                    raise CandidateTimeout(f"{ran_out}, for an earlier candidate")
                if key not in head_cache:
                    inj = Injection(kind, pattern, arg, watch=watch, prefer=prefer,
                                    time_limit=run_s)
                    on_stage(stage)
                    try:
                        # uninitialised memory filled alike in both runs: an injected value a
                        # solver refuses may leave rows of its `torch.empty` result unwritten
                        with injecting(head_swap, inj), call_mode(), defined_memory():
                            result = _try_forward(model, case, paths)
                    except CandidateTimeout as e:
                        head_cache[key] = e
                        raise
                    except GuardOverrun as e:
                        # a solver handed the value on every step never ends: this input shows
                        # nothing of the check, and the others still may
                        result = e
                    on_stage(None)
                    head_cache[key] = (inj, result)
                head_inj, head_out = head_cache[key]
                if not head_inj.hit:
                    continue
                if isinstance(head_out, GuardOverrun):
                    unfinished.append({"kind": kind, "pattern": pattern, "argument": head_inj.argument,
                                       "run_s": run_s})
                    continue
                inj = Injection(kind, pattern, arg, prefer=prefer, time_limit=run_s, watch=cand_watch)
                try:
                    with injecting(cand_swap, inj), call_mode(), defined_memory():
                        got = _try_forward(model, case, paths)
                except GuardOverrun as e:
                    got = e
                row = _guard_row(kind, pattern, arg, head_inj.argument, head_inj, head_out, got,
                                 tolerance, run_s)
                if cand_watch is not None:
                    row["cand_reached"] = inj.reached
                if row["match"] and not isinstance(got, BaseException):
                    inner = _compare(head_inj.returns, inj.returns, tolerance)
                    if not inner["match"]:
                        row.update(inner, message=f"{cand_swap.qualname} returns differ"
                                   + (f": {inner['message']}" if inner.get("message") else ""))
                if compiled and row["match"]:
                    pending.append((row, Injection(kind, pattern, arg, prefer=prefer), head_out))
                out.append(row)
        if not any(r["kind"] == kind for r in out) and kind in WEIGHT_KINDS \
                and not any(u["kind"] == kind for u in unfinished):
            out += _weights_guards(model, case, paths, kind, head_swap, cand_swap, tolerance, head_cache,
                                   block, run_s, on_stage, pending if compiled else None)
        if not any(r["kind"] == kind for r in out) and kind != EQUAL:
            out.append({"kind": kind, "hit": False, "match": None, "message": (
                f"head's own run did not end on any input with {GUARD_WORDS.get(kind, kind)} "
                f"within {run_s:.3g} s" if any(u["kind"] == kind for u in unfinished) else
                f"no tensor argument of {head_swap.qualname} can hold {GUARD_WORDS.get(kind, kind)}")})
    if pending:
        runs = [(inj, head_out) for _, inj, head_out in pending]
        results = _compiled_guards(model, case, paths, cand_swap, runs, tolerance, keep=True)
        differ = [k for k, res in enumerate(results) if not res["match"]]
        # dynamo's own error where head's eager code raised another exception: head's own
        # compiled code may raise it too (a bool mask given as int64 -1 fails dynamo's fake
        # tensors in either; a new user's caveat "TorchRuntimeError where head raises
        # IndexError" was head's own). A `torch._assert_async`'s RuntimeError is the edit's.
        swapped = [k for k, res in enumerate(results) if res["match"]
                   and isinstance(res.get("got"), BaseException) and isinstance(runs[k][1], BaseException)
                   and "TorchDynamoException" in (getattr(res["got"], "exc_bases", ()) or ())
                   and getattr(res["got"], "exc_type", None) != getattr(runs[k][1], "exc_type", None)]
        if differ or swapped:
            # a library may take another path in compiled code (`if is_compiling():`, tad-dftd3's
            # C6 lookup on an atomic number of -1): where head's own compiled run differs from
            # its eager run too, the edit's compiled run is compared with head's compiled run
            heads = _compiled_guards(model, case, paths, head_swap, [runs[k] for k in differ + swapped],
                                     tolerance, keep=True)
            for k, h in zip(differ + swapped, heads):
                if k in swapped:
                    if getattr(h.get("got"), "exc_type", None) == getattr(results[k]["got"], "exc_type", None):
                        results[k] = {**results[k], "head_compiled_raised_type": getattr(h["got"], "exc_type", None)}
                    continue
                if h["match"]:
                    continue   # head's compiled code computes what its eager code does: the edit's
                same = _versus(h["got"], results[k]["got"], tolerance, same_type=False)
                if same["match"]:
                    results[k] = {**results[k], "match": True, "head_compiled": True,
                                  "message": None}
        for (row, _, _), res in zip(pending, results):
            row.update({k: v for k, v in res.items() if k != "got"})
    # (said with the evidence where the kind was compared on other inputs; judged on those)
    out += [{**u, "hit": False, "match": None, "unfinished": True} for u in unfinished
            if any(r["kind"] == u["kind"] and r.get("hit") for r in out)]
    return out


def _versus(head_out: Any, got: Any, tolerance: Any, *, same_type: bool = True,
            again: Any = None) -> dict[str, Any]:
    """`{match, max_abs_err, message}` of a run against head's on the same input: a raise on
    both sides is the same outcome (of the same exception type unless `same_type` is off),
    a raise on one side only is not; `again`, head's second run, for its noise."""
    if isinstance(head_out, BaseException) or isinstance(got, BaseException):
        # the same exception: a model's fault is ModelError on both sides, and the user
        # code's exception type is in it (ValueError is not RuntimeError)
        same = (isinstance(head_out, BaseException) and isinstance(got, BaseException)
                and type(head_out) is type(got)
                and (not same_type
                     or getattr(head_out, "exc_type", None) == getattr(got, "exc_type", None)))
        return {"match": same, "message": None if same else
                f"head {_outcome(head_out)}, patched {_outcome(got)}"}
    return _compare_stable(head_out, None if isinstance(again, BaseException) else again, got,
                           tolerance)


def _guard_row(kind: str, pattern: str, arg: int, argument: str, head_inj: Injection, head_out: Any,
               got: Any, tolerance: Any, run_s: float) -> dict[str, Any]:
    """One guard input's row: what head did on it (raised, reached the watched line) and the
    candidate's run against head's (`_versus`), or a run of the candidate cut past `run_s`."""
    return {"kind": kind, "pattern": pattern, "arg": arg, "argument": argument, "hit": True,
            "raised": isinstance(head_out, BaseException),
            "raised_type": getattr(head_out, "exc_type", None),
            **({"raised_message": _raised_message(head_out)} if isinstance(head_out, BaseException) else {}),
            "reached": head_inj.reached,
            **(_versus(head_out, got, tolerance) if not isinstance(got, GuardOverrun)
               else {"match": False, "message": f"head's run ends, the patched "
                     f"model's was still running after {run_s:.3g} s"})}


def _raised_message(exc: BaseException) -> str:
    """The first line of what the user's exception said (a ModelError's message reads
    "forward(...) raised ValueError: ..."), at most 200 characters, backticks made quotes: it
    goes into evidence text whose code spans are ours."""
    text = str(getattr(exc, "message", None) or exc)
    kind = getattr(exc, "exc_type", None)
    if kind and f" raised {kind}: " in text:
        text = text.split(f" raised {kind}: ", 1)[1]
    lines = text.strip().splitlines()
    first = (lines[0] if lines else "").replace("`", "'")
    return first if len(first) <= 200 else first[:199] + "…"


# the kinds a model's weights can carry into an intermediate where no argument holds them
WEIGHT_KINDS = frozenset({"nan", "inf"})
WEIGHTS = "the model's weights"
# the values a parameter an `if`'s test reads is set to where no shape case reaches the block
# (`parameter_guards`), as `guard_patterns` names them
PARAM_VALUES = (("huge", 1e6), ("-huge", -1e6))


def tested_parameters(original: str, line: int) -> tuple[str, ...]:
    """The attribute names `self.<name>` that the test of the `if` starting at `line` reads,
    directly or through names the function bound before it (`logit_scale =
    self.logit_scale.exp()`, then `if logit_scale.item() > 100:`), two assignments deep: the
    learned scalars a temperature clamp or a gate tests, which no input of the model changes."""
    node = _if_at(original, line)
    if node is None:
        return ()
    found = enclosing_function(ast.parse(original), node.lineno, node.end_lineno or node.lineno)
    if found is None:
        return ()
    fn = found[1]

    def reads(expr: ast.AST) -> tuple[set[str], set[str]]:
        names = {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
        attrs = {n.attr for n in ast.walk(expr) if isinstance(n, ast.Attribute)
                 and isinstance(n.value, ast.Name) and n.value.id == "self"}
        return names, attrs

    names, attrs = reads(node.test)
    before = [s for s in ast.walk(fn) if isinstance(s, ast.Assign) and s.lineno < node.lineno]
    for _ in range(2):
        for s in before:
            if any(isinstance(t, ast.Name) and t.id in names for t in s.targets):
                more, own = reads(s.value)
                names |= more
                attrs |= own
    return tuple(sorted(attrs))


def parameter_guards(model: Any, case: CaseInputs, paths: RepoPaths, names: Sequence[str], head_swap: Swap,
                     cand_swap: Swap, tolerance: Any, line: int) -> list[dict[str, Any]]:
    """Head and the patched code with the parameters the `if`'s test reads (`tested_parameters`)
    set to each of `PARAM_VALUES`, where no shape case reached the block (or the exit) at
    `line`: a row, kind `PARAM`, for each value on which head then reached it. An edit that
    selects head's own expression was otherwise equal there by construction only, and one
    that rewrites the block in words of its own refused for want of an input that enters it
    (CLIP's temperature clamp at 100, `exp(logit_scale)` 14.3 as built)."""
    rows: list[dict[str, Any]] = []
    for pattern, value in PARAM_VALUES:
        with parameters_at(model, names, value) as changed:
            if not changed:
                return rows
            inj = Injection(WATCH_ONLY, pattern, 0, watch=line)
            with injecting(head_swap, inj), call_mode(), defined_memory():
                head_out = _try_forward(model, case, paths)
            if not inj.reached:
                continue
            with injecting(cand_swap, Injection(WATCH_ONLY, pattern, 0)), call_mode(), defined_memory():
                got = _try_forward(model, case, paths)
        argument = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
        rows.append({**_guard_row(PARAM, pattern, -1, argument, inj, head_out, got, tolerance, 0.0),
                     "weights": True})
    return rows


def _weights_guards(model: Any, case: CaseInputs, paths: RepoPaths, kind: str, head_swap: Swap,
                    cand_swap: Swap, tolerance: Any, head_cache: GuardCache, block: int | None,
                    run_s: float, on_stage: Callable[[str | None], None],
                    pending: list[Any] | None) -> list[dict[str, Any]]:
    """Head and the patched code with `kind` in every floating parameter of the model
    (`special_weights`), where no argument of the function can hold it: a NaN check on a hidden
    state of a model fed token ids is reached that way or not at all. A row per pattern on
    which head entered the replaced `if`'s block (line `block`), the value then having made
    the test hold (`hit`), with argument "the model's weights"; appended to
    `pending` for the compiled runs where those are asked for. None without a block to watch:
    an input that changes the weights everywhere shows nothing unless it reached the test."""
    rows: list[dict[str, Any]] = []
    if block is None:
        return rows
    watch = block
    for pattern in guard_patterns(kind):
        key = (kind, pattern, WEIGHTS, watch)
        if key not in head_cache:
            inj = Injection(WATCH_ONLY, pattern, 0, watch=watch, time_limit=run_s, weights=kind)
            on_stage(f"head's own run with {GUARD_WORDS.get(kind, kind)} in {WEIGHTS}")
            try:
                with special_weights(model, kind, pattern), injecting(head_swap, inj), call_mode(), \
                        defined_memory():
                    result = _try_forward(model, case, paths)
            except GuardOverrun as e:
                result = e
            on_stage(None)
            head_cache[key] = (inj, result)
        head_inj, head_out = head_cache[key]
        # reached: head entered the block, the value having made the test hold (a check's raise
        # is in its block), and ended; a raise elsewhere (a check upstream) shows nothing of it
        if isinstance(head_out, GuardOverrun) or not head_inj.reached:
            continue
        inj = Injection(WATCH_ONLY, pattern, 0, time_limit=run_s, weights=kind)
        try:
            with special_weights(model, kind, pattern), injecting(cand_swap, inj), call_mode(), defined_memory():
                got = _try_forward(model, case, paths)
        except GuardOverrun as e:
            got = e
        row = {**_guard_row(kind, pattern, -1, WEIGHTS, head_inj, head_out, got, tolerance, run_s),
               "weights": True}
        if pending is not None and row["match"]:
            pending.append((row, Injection(WATCH_ONLY, pattern, 0, weights=kind), head_out))
        rows.append(row)
    return rows


def _compiled_guards(model: Any, case: CaseInputs, paths: RepoPaths, cand_swap: Swap,
                     runs: Sequence[tuple[Injection, Any]], tolerance: Any, *, keep: bool = False
                     ) -> list[dict[str, Any]]:
    """The patched model compiled (eager backend, breaks allowed) on each guard input of
    `runs`, against head's eager outputs there: `{compiled: True, match, ...}` per run, with
    what the run gave as `got` with `keep` (`cand_swap` may be head's own function).

    One compile serves them all: the injecting wrapper is one function that dynamo skips
    (pt2bot/smoke/patch.py `injector`), so the model's and the patched function's guards see
    the same objects and shapes on every input and the compiled code is reused; an input
    whose values make dynamo compile again (a number read out of the injected tensor) is
    compiled again. Each input keeps the recompile budget a fresh compile of its own had (the
    limits times the number of inputs): past the limit dynamo runs a frame in eager, where
    `is_compiling()` is false, and the run would compare nothing. Forgotten after, as a
    fresh compile per input was. Uninitialised memory is filled as in head's eager runs on
    the guard inputs (`defined_memory`)."""
    import torch

    out = []
    reset_dynamo()
    cfg = torch._dynamo.config
    n = max(len(runs), 1)
    try:
        compiled = torch.compile(model, backend="eager")
        with cfg.patch(recompile_limit=cfg.recompile_limit * n,
                       accumulated_recompile_limit=cfg.accumulated_recompile_limit * n), \
                injector(cand_swap, compiled=True) as inject, call_mode(), defined_memory():
            for inj, head_out in runs:
                inject.use(inj)
                with special_weights(model, inj.weights, inj.pattern):
                    got = _try_forward(compiled, case, paths)
                # any exception counts: a check kept in compiled code as `torch._assert_async`
                # raises a RuntimeError where eager raises the check's own ValueError
                res = _versus(head_out, got, tolerance, same_type=False)
                if isinstance(got, BaseException):
                    # what compiled code raises instead, said with the evidence: a user who
                    # catches the check's own exception no longer catches it under compile
                    res["compiled_raised_type"] = getattr(got, "exc_type", None)
                    res["compiled_raised_bases"] = list(getattr(got, "exc_bases", ()) or ())
                    res["compiled_raised_message"] = _raised_message(got)
                if not res["match"]:
                    res = {**res, "message": f"compiled, where `is_compiling()` is true"
                                             f"{_detail(res)}"}
                out.append({"compiled": True, **res, **({"got": got} if keep else {})})
    finally:
        reset_dynamo()
    return out


def bound_values(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths, edit: Edit,
                 original: str, site: ProbeSite, tolerance: Any,
                 cache: dict[Any, Any]) -> dict[str, Any]:
    """`{line, names, rows}`: the values the replaced statements bind, right after them, in
    head's eager run and the candidate's, on every shape case (pt2bot/smoke/values.py). Head's
    are kept in `cache` for the other candidates that edit the same statements."""
    def run(text: str) -> list[list[dict[str, Any]]]:
        out = []
        with patched_function(paths, edit.path, original, text, edit), call_mode(), \
                defined_memory():
            for case in cases:
                with collecting(site.names) as snapshots:
                    _seeded_forward(model, case, paths)
                out.append(snapshots)
        return out

    key = ("values", edit.path, site.line, site.names)
    if key not in cache:
        try:
            cache[key] = run(site.head_text)
        except Exception:  # noqa: BLE001 - head's probed run failing says nothing of the edit
            cache[key] = None
    head = cache[key]
    if head is None:
        return {"line": site.line, "names": list(site.names), "rows": []}
    rows = compare(head, run(site.cand_text), [c.shape for c in cases], site.names, tolerance)
    return {"line": site.line, "names": list(site.names), "rows": rows}


def returned_arguments(model: Any, case: CaseInputs, paths: RepoPaths, swap: Swap) -> list[str] | None:
    """The arguments of the swapped function that it returns itself, or a view of (a tensor of
    its result shares their memory), over its calls in one eager run of `case`; None where the
    run never calls it. A caller that writes into such a result writes into the argument, so
    an edit that returns a new tensor where head returned the argument, or the reverse, is
    not the same to every caller even where the values are (`torch.where` always makes a new
    tensor; `if torch.isnan(x).any(): x = torch.nan_to_num(x)` returns `x` itself on clean
    values)."""
    with injecting(swap, Injection(WATCH_ONLY, "", 0, aliases=[])) as inj, call_mode():
        _try_forward(model, case, paths)
    if not inj.aliases:
        return None
    return sorted({label for call in inj.aliases for label in call})


def _try_forward(model: Any, case: CaseInputs, paths: RepoPaths) -> Any:
    try:
        return _seeded_forward(model, case, paths)
    except ModelError as e:
        return e


def _outcome(x: Any) -> str:
    return f"raised {x}" if isinstance(x, BaseException) else "returned"


# --------------------------------------------------------------------------- judging (pure)

def _compiles(run: Mapping[str, Any]) -> int | None:
    """Every compile of the shape matrix: the graphs of its first case and the recompiles of
    all (the break pass's graph count, which the matrix's first case repeats)."""
    graphs, rec = run.get("graph_count"), run.get("recompiles") or {}
    if not isinstance(graphs, int) or not rec.get("cases"):
        return None
    return graphs + sum(int(c.get("n") or 0) for c in rec["cases"])


def _once_more(c: Mapping[str, Any], probe: Mapping[str, Any] | None,
               frames: set[tuple[Any, ...]]) -> bool | None:
    """Whether the frames that recompiled on case `c` did not recompile again on the probe's
    size, measured after the matrix in the same compiled session: True, False, or None (no
    probe, or it raised)."""
    if not isinstance(probe, Mapping) or probe.get("error") or "frames" not in probe:
        return None
    return not ({tuple(f) for f in probe.get("frames") or ()} & frames)


# A frame split off by a break no user stack reaches (a frame of an installed package)
_UNTIED: Mapping[str, Any] = {"path": None, "line": None}


def _split_off_by(frame: Sequence[Any], breaks: Sequence[Mapping[str, Any]]
                  ) -> Mapping[str, Any] | None:
    """The break of `breaks` that makes `frame` (function, path, line) a frame of its own: a
    function resumed after a line of the break's stack, or a function on that stack below its
    root frame (as pt2bot/compare.py `cause_of` reads a review's recompiles), or None."""
    function, path, line = (list(frame) + [None] * 3)[:3]
    resumed = isinstance(function, str) and RESUME_RE.match(function) is not None
    at, fn = ((path, line), None) if resumed else (None, (path, function))
    return next((b for b in breaks if on_break_stack(
        [tuple(s) for s in b.get("stack") or () if isinstance(s, (list, tuple)) and len(s) == 3],
        (b.get("path"), b.get("line")), at, fn)), None)


def _probe_said(probe: Mapping[str, Any]) -> str:
    if probe.get("error"):
        return (f"whether it recompiles once or on every new size is not known: the third size "
                f"{_shape(probe.get('shape'))} raised {probe['error']}" if probe.get("shape")
                else f"whether it recompiles once or on every new size is not known: {probe['error']}")
    return f"it recompiles again on {_shape(probe.get('shape'))}{_recompile_detail(probe)}"


def _value_noise(c: Mapping[str, Any], h: Mapping[str, Any] | None,
                 head_cases: Sequence[Mapping[str, Any]] = ()) -> str | None:
    """Where a shape case's recompiles beyond head's case `h` are guards on a float's value in
    frames whose float head guards too, on any of its shape cases (`head_cases`: an `.item()` of
    head's own, before the edited lines): how many such recompiles a case makes, and on which
    case, depends on the values the data give and on when dynamo makes the float dynamic, not on
    the edit, and head's count is no bound for it. dasp-pytorch's peak normaliser had its right
    `torch.where` refused for "a new recompile ... `(1e-12 + ___stack2) == 0.7677` ... 3
    recompiles there, head 2", head's own line-48 `.item()` recompiling on its values on
    another case. The rest, any other guard, must be no more than head's on the case. None
    where that is not so."""
    def pairs(x: Mapping[str, Any] | None) -> list[tuple[str, str]]:
        return [(str(g[0]), str(g[1])) for g in (x or {}).get("guards") or ()
                if isinstance(g, (list, tuple)) and len(g) == 2]
    mine, theirs = pairs(c), pairs(h)
    valued = [(f, g) for f, g in mine if value_guard(g)]
    head_valued = {f for x in (h, *head_cases) for f, g in pairs(x) if value_guard(g)}
    if not valued or not all(f in head_valued for f, _ in valued):
        return None
    if sum(1 for _, g in mine if not value_guard(g)) > sum(1 for _, g in theirs if not value_guard(g)):
        return None
    frames = sorted({f for f, _ in valued})
    return (f"{_recompiles(len(valued))} on {_shape(c.get('shape'))} on a float's value in "
            f"{', '.join(f'`{f}`' for f in frames[:2])}, as head's own code guards it there (each new "
            "value compiles again, head's too)")


def _recompile_detail(c: Mapping[str, Any], h: Mapping[str, Any] | None = None) -> str:
    """Where a shape case's recompile was, and whether only a size changed, for the refusal:
    a reader can look at that frame instead of re-running the proof to find it. With head's
    case `h`, the frames head recompiles too are left out, the new one's guard is quoted, and
    both counts are said: a new user read three frames, two of them head's own, and "a size
    changed" with no tensor named."""
    frames = [f for f in (c.get("frames") or ()) if isinstance(f, (list, tuple)) and len(f) == 3 and f[0]]
    theirs = {tuple(f) for f in (h or {}).get("frames") or () if isinstance(f, (list, tuple))}
    new = [f for f in frames if tuple(f) not in theirs] or frames
    guard = next((str(g[1]) for f in new[:1] for g in c.get("guards") or ()
                  if isinstance(g, (list, tuple)) and len(g) == 2 and g[0] == f[0] and g[1]), "")
    where = ", ".join(f"{_frame_words(f)} {_at(f[1], f[2])}" + (f" (`{guard}`)" if k == 0 and guard else "")
                      for k, f in enumerate(new[:3]))
    if where:
        where = "in " + where
    else:
        where = ", ".join(_at(*s) for s in (c.get("sites") or ())[:3]
                          if isinstance(s, (list, tuple)) and len(s) == 2)
    kind = "" if "sizes_only" not in c else (
        "a size changed" if c["sizes_only"] else "a guard other than a size failed")
    said = ": ".join(x for x in (where, kind) if x)
    if h is not None:
        said += f"; {_recompiles(c.get('n') or 0)} there, head {h.get('n') or 0}"
    return f" ({said})" if said else ""


def _same_kind(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """The same kind of graph break: the GB code when both have one, else dynamo's type."""
    if a.get("gb") and b.get("gb"):
        return a["gb"] == b["gb"]
    return bool(a.get("gb_type")) and a.get("gb_type") == b.get("gb_type")


def _gb(b: Mapping[str, Any]) -> str:
    return str(b.get("gb") or b.get("gb_type") or "a graph break")


def _at(path: Any, line: Any, library: Any = None) -> str:
    """"at a.py:3" (a file of the repository), "outside the repository" (a library's code, with
    its place in the installed package where the break names one)."""
    if path:
        return f"at {path}:{line}" if line else f"at {path}"
    return f"outside the repository, in {library} of an installed package" if library \
        else "outside the repository"


def _new_break(b: Mapping[str, Any]) -> str:
    """A break the candidate made: its kind and place; for one with no GB id (a guard on a value
    the graph computes, which a captured `.item()` moves into the code that uses it), the
    source line that needs the value."""
    what = _gb(b) if b.get("gb") or not b.get("explanation") else f"{_gb(b)} ({b['explanation']})"
    return f"{what} {_at(b.get('path'), b.get('line'), b.get('library'))}"


def _is_target_line(edit: Edit, target: Mapping[str, Any]) -> bool:
    return target.get("path") == edit.path and isinstance(target.get("line"), int) and \
        edit.start_line <= target["line"] <= edit.end_line


def _break_matches(head_b: Mapping[str, Any], b: Mapping[str, Any], edit: Edit) -> bool:
    """Whether patched break `b` is head's `head_b`, moved by the edit."""
    if not _same_kind(head_b, b) or head_b.get("path") != b.get("path"):
        return False
    if head_b.get("path") != edit.path:
        return head_b.get("line") == b.get("line")
    mapped = edit.map_line(head_b.get("line"))
    if mapped is not None:
        return mapped == b.get("line")
    # head's line is one the edit replaces: the same statement carried over unchanged, told by
    # its text (an early return selected over the rest of a function repeats that rest, where
    # a library call breaks as on head: a new user's `self.unfold(x)` read as a new break)
    src = str(head_b.get("source") or "").strip()
    return bool(src) and edit.in_patched_region(b.get("line")) and str(b.get("source") or "").strip() == src


def _in_skipped_frame(b: Mapping[str, Any], frames: Sequence[Mapping[str, Any]],
                     edit: Edit) -> bool:
    """Whether patched break `b` is in code that head ran in a frame dynamo gave up on (a
    break in a loop skips the whole frame, or the rest of it after a resume): head never
    traced that code, so its breaks there went unrecorded; a fix that lets dynamo trace it
    uncovers them rather than adding them. A frame is the function itself (its first line)
    or `torch_dynamo_resume_in_<function>_at_<line>` (the rest of it from that line)."""
    name, path, line = b.get("function"), b.get("path"), b.get("line")
    if not name or not isinstance(line, int):
        return False
    if path == edit.path and edit.in_patched_region(line):
        return False   # the patch's own lines are never "uncovered"
    return _runs_skipped_code((name, path, line), frames, edit)


_RESUME = re.compile(r"torch_dynamo_resume_in_(.+)_at_(\d+)$")


def _eager_frame_of(frames: Sequence[Mapping[str, Any]], edit: Edit) -> str | None:
    """The function (or resume frame) of the patched run's frames run in eager whose code
    holds the edit's first line, if one does."""
    for f in frames:
        fn, path, start = _frame_code((f.get("function"), f.get("path"), f.get("line")))
        end = f.get("end")
        if path == edit.path and isinstance(start, int) and isinstance(end, int) and \
                start <= edit.start_line <= end:
            return fn
    return None


def _frame_code(frame: Sequence[Any]) -> tuple[str, Any, Any]:
    """(function, path, first line) of the code a recorded frame `(name, path, line)` runs: a
    resume frame, `torch_dynamo_resume_in_forward_at_197`, runs `forward` from line 197."""
    name, path, line = frame
    m = _RESUME.match(str(name or ""))
    return (m.group(1), path, int(m.group(2))) if m else (str(name or ""), path, line)


def _runs_skipped_code(frame: Sequence[Any], head_frames: Sequence[Mapping[str, Any]], edit: Edit) -> bool:
    """Whether the patched model's code at `(function or frame name, path, line)` is code that
    head ran in a frame dynamo skipped: the same function, from a line at or past where head's
    skipped frame starts (a resume frame from its resume line on) and not past that function's
    end (another class's method of the same name further down the file is other code)."""
    fn, path, line = _frame_code(frame)
    if not isinstance(line, int):
        return False
    for f in head_frames:
        hfn, hpath, start = _frame_code((f.get("function"), f.get("path"), f.get("line")))
        end = f.get("end")
        if hfn != fn or hpath != path or not isinstance(start, int) or not isinstance(end, int):
            continue
        if path == edit.path:
            start, end = edit.map_line(start), edit.map_line(end)
            if end is None:     # the function ends inside the edit: its new last line
                end = edit.start_line + max(edit.new_lines, 1) - 1
        if start is not None and start <= line <= end:
            return True
    return False


def _statement_span(original: str, edit: Edit) -> list[int] | None:
    """The patched file's lines of the compound statement whose header the edit replaces (an
    `if`, a loop, a `with`), where its block runs past the replaced lines; None otherwise."""
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return None
    ends = [n.end_lineno for n in ast.walk(tree)
            if isinstance(n, (ast.If, ast.For, ast.While, ast.With, ast.Try)) and n.lineno == edit.start_line
            and (n.end_lineno or 0) > edit.end_line]
    last = edit.map_line(max(ends)) if ends else None
    return [edit.start_line, last] if last is not None else None


def _next_statement(original: str, edit: Edit) -> int | None:
    """The patched file's first line of the statement right after the edited statements in
    their block, where there is one (blank and comment lines between); None otherwise."""
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return None
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            for st, nxt in zip(block, block[1:]):
                if isinstance(st, ast.stmt) and (st.end_lineno or st.lineno) == edit.end_line and \
                        st.lineno >= edit.start_line:
                    return edit.map_line(nxt.lineno)
    return None


def _frame_words(frame: Sequence[Any]) -> str:
    """A frame as a reader of the code names it, not dynamo's resume function."""
    fn, _path, line = _frame_code(frame)
    return f"`{fn}` from line {line}" if _RESUME.match(str(frame[0] or "")) else f"`{fn}`"


def judge(head: Mapping[str, Any], cand: Mapping[str, Any], targets: Sequence[Mapping[str, Any]],
          edit: Edit) -> dict[str, Any]:
    """`{accepted, reason, evidence}` for one candidate on one model (see the module doc)."""
    def no(reason: str) -> dict[str, Any]:
        return {"accepted": False, "reason": reason, "evidence": ""}

    if cand.get("error"):
        return no(str(cand["error"]))
    for row in cand.get("outputs") or ():
        if not row.get("match"):
            return no(f"outputs differ from head's on {_shape(row.get('shape'))}{_detail(row)}")
    for row in cand.get("state") or ():
        if not row.get("match"):
            return no(f"after {_shape(row.get('shape'))}, what the model keeps differs from "
                      f"head's, though the outputs are equal: {row.get('message')}")
    setting = str(cand.get("setting") or "")
    for row in cand.get("compiled") or ():
        if not row.get("match"):
            how = f"compiled with `{setting} = True`" if setting else "compiled"
            said = str(row.get("message") or "")
            if " raised " in said.split("\n", 1)[0]:
                # (no output to differ: a new user read "outputs differ" for a compile that raised
                # on a shape case, as head's own compiled code did there)
                return no(f"{how}, the model raised on {_shape(row.get('shape'))}: {said}")
            return no(f"{how}, the model's outputs differ from head's eager ones on "
                      f"{_shape(row.get('shape'))}{_detail(row)}")
    if _unreached(cand):
        return no(_eager_only_refusal(cand) or _dropped_arm_refusal(cand) or "")
    values = cand.get("values") or {}
    for row in values.get("rows") or ():
        if not row.get("match"):
            return no(f"after line {values.get('line')}, {row.get('message')} on "
                      f"{_shape(row.get('shape'))}, though the outputs are equal")
    guarded = cand.get("guard_gradients")
    if guarded and not guarded.get("match"):
        return no(f"on an input with {GUARD_WORDS.get(str(guarded.get('kind')), str(guarded.get('kind')))} in "
                  f"`{guarded.get('argument')}`"
                  + (", where head skips the block" if guarded.get("skipped") else "")
                  + ", the " + (f"{guarded['of']}' " if guarded.get("of") else "")
                  + f"gradients differ from head's{_detail(guarded)}")
    grads = cand.get("gradients")
    if grads and not grads.get("match"):
        return no("the " + ("compiled model's " if grads.get("compiled") else "")
                  + (f"{grads['of']}' " if grads.get("of") else "") + "gradients differ from head's on "
                  f"{_shape(grads.get('shape'))}"
                  f"{_detail(grads)}")
    constant = _constant_refusal(cand)
    if constant:
        return no(constant)
    # a guard this model's inputs cannot exercise is no evidence either way: the candidate is
    # judged on the rest, and refused here as `unexercised`, which another model of the review
    # that exercises the guard in the same function may make up for (pt2bot/fixes.py `_verdict`)
    unexercised: list[str] = []
    quiet: str | None = None   # the dropped test's, said without its advice beside a model that skipped
    guards = [r for r in cand.get("guards") or () if not r.get("unfinished")]
    hit = [r for r in guards if r.get("hit")]
    # the guard kinds are the values that make the `if`'s test hold; where head took the
    # early return or entered the block on a shape case, the test held there, and that case
    # exercised what no injected input could reach (deel-torchlip's `if
    # self.running_num_batches.item() == 0: return ...`, a buffer no argument holds, taken on
    # every case, was refused as "cannot be reached" beside "taken by head on 2 of the 2")
    held = bool(isinstance(cand.get("early"), int) and cand.get("reached")) or \
        bool(isinstance(cand.get("enter"), int) and cand.get("entered"))
    for row in guards:
        word = GUARD_WORDS.get(str(row.get("kind")), str(row.get("kind")))
        if not row.get("hit"):
            if not held:
                unexercised.append(f"the guard's case ({word}) cannot be reached: {row.get('message')}")
        elif not row.get("match"):
            if row.get("kind") == "large":
                # which of its two inputs: 1e6 alone, or beside a NaN that fails a test on
                # the largest value
                word = f"large finite values ({PATTERN_WORDS.get(str(row.get('pattern')), '1e6')})"
            elif row.get("kind") == PARAM:
                word = PATTERN_WORDS.get(str(row.get("pattern")), "1e6")
            return no(f"differs from head on an input with {word} in "
                      f"`{row.get('argument')}`"
                      + (f": {row.get('message')}" if row.get("message") else ""))
    not_entered = _not_entered(cand)
    if not_entered:
        unexercised.append(not_entered)
    for kind in sorted({str(r.get("kind")) for r in hit} & RAISING_GUARDS):
        rows = [r for r in hit if r.get("kind") == kind]
        # the check's own exception, where the replaced text names it: an IndexError of an
        # embedding fed -1 is head raising, but not the check being exercised. Any guard input
        # may be the one that makes head raise it: a check for non-finite hidden states of a
        # model fed token ids raises on NaN weights, not on ids out of range
        raises = set(cand.get("raises") or ())
        if not any(r.get("raised") and r.get("raised_type") in raises for r in hit) and \
                not any(r.get("raised") and (not raises or r.get("raised_type") in raises) for r in rows):
            args = ", ".join(dict.fromkeys(f"`{r.get('argument')}`" for r in rows))
            what = f" {' or '.join(sorted(raises))}" if raises else ""
            unexercised.append(f"head never raised{what} on {_injected_words(kind, rows)} in {args}: "
                               "the check is not exercised")
    head_acc = {json.dumps(r.get("shape"), sort_keys=True): r.get("match")
                for r in head.get("accuracy") or ()}
    for row in cand.get("accuracy") or ():
        # compiled against eager on one shape case: for an edit asking whether it is being
        # compiled, eager is head's own code, so a difference is what the edit changed
        if row.get("match") is False and head_acc.get(json.dumps(row.get("shape"), sort_keys=True)) is not False:
            return no(f"compiled outputs differ from eager ones on {_shape(row.get('shape'))}"
                      f"{_detail(row)}")
    for phase, msg in (cand.get("phase_errors") or {}).items():
        if phase not in (head.get("phase_errors") or {}):
            return no(f"the {phase} pass failed on the "
                      f"{f'model with `{setting} = True`' if setting else 'patched model'}: {msg}")

    evidence: list[str] = []
    # graph breaks
    if "breaks" in cand and "breaks" in head:
        hb, cb = list(head["breaks"]), list(cand["breaks"])
        for t in targets:
            if t.get("kind") != "break":
                continue
            if not any(_same_kind(b, t) and b.get("path") == t.get("path")
                       and b.get("line") == t.get("line") for b in hb):
                return no(f"head does not break {_at(t.get('path'), t.get('line'))} "
                          "in the proof's run (not reproduced)")
            still = [b for b in cb if _same_kind(b, t) and b.get("path") == edit.path
                     and edit.in_patched_region(b.get("line"))]
            if still:
                return no(f"{_gb(t)} still breaks the graph "
                          f"{_at(edit.path, still[0].get('line'))}")
        unmatched = list(hb)
        uncovered = []
        for b in cb:
            m = next((h for h in unmatched if _break_matches(h, b, edit)), None)
            if m is not None:
                unmatched.remove(m)
            elif _in_skipped_frame(b, head.get("eager_frames") or (), edit) and not setting:
                # (an edit may uncover a break in code head ran uncompiled; a setting's break
                # there is the captured value's use, the break it was to remove moved on:
                # pytorch-crf's Viterbi `.item()` moved two lines down and still ran eagerly)
                uncovered.append(b)
            else:
                return no(f"a new graph break: {_new_break(b)}")
        span = cand.get("statement")
        for b in uncovered:
            # the break moved into the block of the statement the edit changes (an MoE layer's
            # `if mask.any():` run always in compiled code, whose `x[mask]` then breaks): the
            # code the edit was for still breaks. A break of other code head never compiled is
            # uncovered, as a base without the PR's break has it (torchvision's `erase_area =
            # ....item()` kept a tensor, the `int(round(...))` after it breaking as before)
            if span and b.get("path") == edit.path and span[0] <= (b.get("line") or 0) <= span[1]:
                return no(f"the break moves to {_gb(b)} {_at(b.get('path'), b.get('line'))}, inside the "
                          f"statement the edit changes (lines {span[0]} to {span[1]})")
            # the break moved to the very next statement (mixup's PuzzleMix, `bh = idx.item() //
            # n` then `bw = idx.item() % n`: the first kept a tensor, the second broke as the
            # first had, 22 breaks logged before and after): nothing more compiles, and the
            # user who applies the edit meets the same break a line down. The edit of both
            # together is its own candidate (pt2bot/fixes.py `_next_alike`)
            if b.get("path") == edit.path and b.get("line") == cand.get("next_statement"):
                return no(f"the break moves to {_gb(b)} {_at(b.get('path'), b.get('line'))}, the statement "
                          "right after the edit: the frame breaks as before, a line further down")
        compiled_path = bool(cand.get("compiled")) or any(
            isinstance(cand.get(k), int) for k in ("exit", "block"))
        still = _eager_frame_of(cand.get("eager_frames") or (), edit) if uncovered else None
        if still is not None and compiled_path:
            # the uncovered break is in a loop of the frame that holds the edit, so dynamo
            # skips that frame again: an edit with a path of its own for compiled code (under
            # `is_compiling()`) never runs that path, and nothing compared it (otloss's
            # calibration error: `if not torch.compiler.is_compiling() and mask.sum() == 0:
            # continue`, then `confidences[mask]` breaking in the same loop; 14 breaks logged
            # before and after). An edit whose code is one for eager and compiled alike (a kept
            # tensor) was compared in eager, which is what that frame runs.
            b = uncovered[0]
            return no(f"the break moves to {_gb(b)} {_at(b.get('path'), b.get('line'))}, and dynamo "
                      f"still runs `{still}`, which holds the edit, in eager: the edited code never "
                      "runs compiled, so nothing compared its compiled path")
        gone = sorted({_gb(t) for t in targets if t.get("kind") == "break"})
        if gone:
            evidence.append(f"{', '.join(gone)} gone")
        for b in uncovered:
            evidence.append(f"uncovers {_gb(b)} {_at(b.get('path'), b.get('line'))} (code "
                            "head ran uncompiled: dynamo skipped its frame)")
        if still is not None:
            # the same code in eager and compiled alike (a kept tensor) is right, compared in
            # eager; but the frame holding it still runs in eager, so nothing of it compiles yet
            # (mixup's PuzzleMix, both `.item()`s kept tensors: the slice the values index
            # breaks in the same loop, 22 breaks logged before and 26 after)
            evidence.append(f"but dynamo still runs `{still}`, which holds the edit, in eager: the break "
                            "it uncovers is in the same frame, so no more of it compiles until that is "
                            "fixed too")
        hg, cg = head.get("graph_count"), cand.get("graph_count")
        # more graphs are worse, unless frames head skipped whole now compile (head's count
        # left their code out altogether)
        fewer_skipped = len(cand.get("eager_frames") or ()) < len(head.get("eager_frames") or ())
        if isinstance(hg, int) and isinstance(cg, int):
            if cg > hg and not fewer_skipped:
                return no(f"{_graphs(cg)} instead of {hg}")
            if cg > hg:
                evidence.append(f"{_graphs(cg)} instead of {hg}: code in frames head skipped "
                                "now compiles")
            if cg < hg:
                evidence.append(f"{_graphs(cg)} instead of {hg}")
        grown = _grown_graphs(head.get("graph_ops"), cand.get("graph_ops"))
        if grown:
            evidence.append(grown)
    # recompiles
    if "recompiles" in cand and "recompiles" in head:
        hr, cr = head["recompiles"], cand["recompiles"]
        if cr.get("eager_fallback") and not hr.get("eager_fallback"):
            return no("the patched model hits the recompile limit")
        hcases = {json.dumps(c.get("shape"), sort_keys=True): c for c in hr.get("cases") or ()}
        # how often each frame recompiled on a size so far: automatic dynamic recompiles a frame
        # once for each dim that first changes size (a matrix over batch and depth: once on the
        # first new depth, once more on the first new batch), never again for that dim
        recompiled: dict[tuple[Any, ...], int] = {}
        # every compile of the matrix on each side (None where one was not counted)
        cc, hc = _compiles(cand), _compiles(head)
        counted = cc is not None and hc is not None
        first = (cr.get("cases") or [{}])[0].get("shape") or {}
        varied: set[str] = set()      # the dims whose size has changed by the current case
        once_said: list[tuple[int, Any, list[tuple[Any, ...]], str]] = []
        for c in cr.get("cases") or ():
            shape = c.get("shape") or {}
            varied |= {d for d, v in shape.items() if first.get(d) != v}
            h = hcases.get(json.dumps(c.get("shape"), sort_keys=True))
            if h is None or (c.get("n") or 0) <= (h.get("n") or 0):
                continue
            noise = _value_noise(c, h, list(hcases.values()))
            if noise:
                evidence.append(noise)
                continue
            # A frame head ran in eager (a break in a loop skips the whole function) now
            # compiles, and like any compiled frame it recompiles once when a size first
            # changes; head only escaped that by compiling none of it. Once per frame, for a
            # size and nothing else; any other recompile is new.
            frames = {tuple(f) for f in c.get("frames") or ()}
            more = (c.get("n") or 0) - (h.get("n") or 0)
            # also the rest of a function after a break the fix uncovered (nanoGPT's `forward`
            # from the PR's other `if` on): code head ran uncompiled, inside a frame it skipped
            unseen = all(_runs_skipped_code(f, head.get("eager_frames") or (), edit) for f in frames)
            size_once = bool(c.get("sizes_only") and frames and more <= len(frames)
                             and all(recompiled.get(f, 0) < len(varied) for f in frames))
            if size_once and unseen:
                recompiled.update((f, recompiled.get(f, 0) + 1) for f in frames)
                evidence.append(f"{_recompiles(more)} on {_shape(c.get('shape'))} in "
                                f"{', '.join(sorted(_frame_words(f) for f in frames))}, which head ran "
                                "uncompiled (the first recompile on a new size)")
                continue
            # A frame head compiled too, now fed a tensor the edit computes where head passed
            # one of the inputs on (a library's `forward` after its own break, its argument a
            # `torch.where` of the user's input): no dim of it is marked dynamic, so it
            # recompiles when its size first changes, and then compiles that size dynamic.
            # With two sizes in the matrix, once and once per new size look the same: a third
            # size (`probe`, measured only where this is what refuses the edit) tells them
            # apart. And the trade must cost no compile: the graphs the edit removes pay for it.
            # Where each such frame is split off by a break head has too (the library's own),
            # the review does not count that one recompile either (pt2bot/compare.py
            # `after_break`): the edit is judged as the review of it would be, and the compile
            # need not be paid for.
            once = _once_more(c, cand.get("probe"), frames)
            fewer = counted and cc <= hc
            kept = [b for b in cand.get("breaks") or ()
                    if any(_break_matches(hb_, b, edit) for hb_ in head.get("breaks") or ())]
            # (a frame of an installed package is on no break's user stack; any frame but the
            # model's own is one a break split off, and every break here is head's too)
            apart = {tuple(f) for f in c.get("split") or ()}
            split = {f: _split_off_by(f, kept) or (_UNTIED if kept and f in apart else None)
                     for f in frames}
            old = bool(frames) and all(b is not None for b in split.values())
            if not (size_once and once and (fewer or old)):
                verdict = no(f"a new recompile on {_shape(c.get('shape'))}{_recompile_detail(c, h)}")
                if size_once and counted and not (fewer or old):
                    # (a graph fewer would have paid for it)
                    verdict["reason"] += f"; {cc} compiles, head {hc}"
                if size_once and (fewer or old) and cand.get("probe") is None:
                    verdict["probe"] = True
                elif size_once and (fewer or old) and isinstance(cand.get("probe"), Mapping):
                    verdict["reason"] += f"; {_probe_said(cand['probe'])}"
                return verdict
            recompiled.update((f, recompiled.get(f, 0) + 1) for f in frames)
            located = sorted({_at(b.get("path"), b.get("line")) for b in split.values()
                              if b is not None and b.get("path")})
            whose = ("a frame whose input the edit computes" if not old else
                     f"a frame the break {' and '.join(located)} (head's too) splits off, fed what "
                     "the edit computes" if located and _UNTIED not in split.values() else
                     "a frame a break head has too splits off, fed what the edit computes")
            # (the frames head recompiled too left out: a new user read nine frames for two
            # recompiles, seven of them head's own)
            theirs = {tuple(f) for f in h.get("frames") or () if isinstance(f, (list, tuple))}
            once_said.append((more, c.get("shape"), [f for f in frames if f not in theirs], whose))
        if once_said:
            # one clause for all the cases (a new user's evidence ran past what a comment shows,
            # the same frames and words once per case)
            shown = sorted({_frame_words(f) for _, _, fs, _ in once_said for f in fs})
            where = f"in {', '.join(shown)}" if shown else "in frames head recompiles too"
            whose = once_said[0][3] if len({w for *_, w in once_said}) == 1 else \
                "frames a break head has too splits off or whose input the edit computes"
            n = sum(m for m, *_ in once_said)
            cases = (_shape(once_said[0][1]) if len(once_said) == 1 else "shape cases " + " and ".join(
                _shape(s).removeprefix("shape case ") for _, s, _, _ in once_said))
            per_dim = " once for each dim that first changes size" if len(once_said) > 1 else " once"
            evidence.append(f"{_recompiles(n)} on {cases} {where},{per_dim}: none on "
                            f"{_shape(cand['probe'].get('shape'))} after {'them' if n > 1 else 'it'} "
                            f"(the first recompile on a new size of {whose}; {cc} compiles, head {hc})")
        rec_targets = [t for t in targets if t.get("kind") == "recompile"]
        for t in rec_targets:
            at = (t.get("path"), t.get("line"))
            if not any(tuple(s) == at for c in hr.get("cases") or () for s in c.get("sites") or ()):
                return no(f"head does not recompile {_at(*at)} in the proof's run "
                          "(not reproduced)")
            if any(s[0] == edit.path and edit.in_patched_region(s[1])
                   for c in cr.get("cases") or () for s in c.get("sites") or ()):
                return no(f"still recompiles {_at(edit.path, edit.start_line)}")
        if rec_targets:
            evidence.append(f"{_recompiles(cr.get('count') or 0)} instead of "
                            f"{hr.get('count') or 0}")
    elif any(t.get("kind") == "recompile" for t in targets):
        return no("the shape matrix did not run (a model with one shape case)")
    # export
    if "export" in cand and "export" in head:
        he, ce = head["export"], cand["export"]
        exp_targets = [t for t in targets if t.get("kind") == "export"]
        if exp_targets and he.get("ok") is not False:
            return no("head exports in the proof's run (the failure is not reproduced)")
        moved = None
        if ce.get("ok") is False and exp_targets and he.get("ok") is False:
            # export stops at its first failure: once the target's is gone it may stop at the
            # next one, past where head's stopped (another problem, not one the edit added)
            at = (ce.get("path"), ce.get("line"))
            # the targets' lines are head's, the failure's the patched file's
            if isinstance(at[1], int) and not any(
                    (t.get("path"), edit.map_line(t.get("line")) if t.get("path") == edit.path
                     else t.get("line")) == at for t in exp_targets) and not (
                    at[0] == edit.path and edit.in_patched_region(at[1])):
                moved = at
        if ce.get("ok") is False and (he.get("ok") is not False or exp_targets) and not moved:
            return no(f"export fails ({ce.get('kind')}) {_at(ce.get('path'), ce.get('line'))}")
        if moved:
            # (head's line, as a reader of the PR finds it: the patched file's moved with the
            # edit, flux's guidance test said to stop export "at model.py:111", head's 110)
            stop = (moved[0], edit.head_line(moved[1]) if moved[0] == edit.path else moved[1])
            evidence.append(f"export gets past {exp_targets[0].get('path')}:{exp_targets[0].get('line')} "
                            f"and now stops {_at(*stop)}, which head's export never reached")
        elif exp_targets:
            evidence.append("exports")
    elif any(t.get("kind") == "export" for t in targets):
        return no("export did not run")
    # (after the break, recompile and export facts: a candidate those refuse never got as far
    # as the runs that tell whether an input takes its exit or enters its block)
    watched = (_eager_only_refusal(cand) or _dropped_arm_refusal(cand) or _early_return_refusal(cand)
               or _dropped_test_refusal(cand))
    if watched and isinstance(cand.get("skip"), int) and cand["skip"] > 0:
        # no input of this model skips the block where the edit's code enters it: the test it
        # drops is never what decides here (dinov2's models that pass `masks=None` skip it on
        # the part the edit keeps), so this model shows nothing of it either way, and one that
        # does skip it there may make up for it (said there without how to add such an input)
        unexercised.append(watched)
        quiet = _dropped_test_refusal(cand, advise=False)
    elif watched:
        return no(watched)
    n = len(cand.get("outputs") or ())
    nan = sum(1 for r in cand.get("outputs") or () if r.get("blank") == "nan")
    blank = sum(1 for r in cand.get("outputs") or () if r.get("blank"))
    if n and nan == n:
        # NaN equals NaN here: head's own outputs of NaN only show nothing of an edit (whisper's
        # decoder, its positional embedding left `torch.empty` until weights load)
        return no("head's outputs are NaN throughout on every shape case, so equal outputs show "
                  "nothing of the edit")
    # (an inf's place and sign are compared: a norm of 0 past a negative bound, -1 / 0)
    blank_note = (f" ({blank} of them with no finite value on head: only where its NaN and inf "
                  f"fall compared there)" if blank else "")
    if n and all(r.get("uniform") for r in cand.get("outputs") or ()):
        # (torchhd's centroid classifier as built: every prototype 0, every score 0)
        blank_note += (" (on every one head's outputs hold a single value throughout: equal "
                       "outputs show little of the edit)")
    if cand.get("compiled"):
        # eager runs head's own code: what was compared is compiled code (with the setting)
        n = len(cand.get("compiled") or ())
        evidence.append(f"compiled outputs equal head's eager ones on {n} shape case{'s' if n != 1 else ''}"
                        + blank_note + _noise_caveat(cand.get("compiled") or (), "results"))
    else:
        evidence.append(f"outputs equal on {n} shape case{'s' if n != 1 else ''}"
                        + blank_note + _noise_caveat(cand.get("outputs") or (), "results"))
    if grads:
        k = int(grads.get("cases") or 1)
        where = _shape_cases(k) if k > 1 else _shape(grads.get("shape"))
        evidence.append(f"{'compiled ' if grads.get('compiled') else ''}gradients equal on {where}"
                        + _noise_caveat([grads], "gradients") + _unused_caveat(grads))
    aliases = _alias_caveat(cand)
    if aliases:
        evidence.append(f"but {aliases}")
    if any(r.get("compared") for r in values.get("rows") or ()):
        kept = {n: t for r in values.get("rows") or () for n, t in (r.get("tensors") or {}).items()}
        # (and which of them is a 0-d tensor where head's was a number: a new user's `n_tokens =
        # mask.sum()` read "equal"; only the function reads it, the recipe makes sure, so it is
        # said with the values, not first as what the fix does unlike head)
        evidence.append(f"{_named(values.get('names') or ())} equal after line {values.get('line')}"
                        + "".join(f" (`{n}` a 0-d tensor where head's is a Python {t})" for n, t in kept.items()))
    eager_only = (_eager_only_evidence(cand) or _dropped_arm_evidence(cand) or _early_return_evidence(cand)
                  or _dropped_test_evidence(cand) or _entered_evidence(cand) or _selected_evidence(cand))
    if eager_only:
        evidence.append(eager_only)
    if cand.get("loop_exit") and _eager_only_evidence(cand):
        # (said first, as what the fix does unlike head: held-out batch 40's adaptive
        # computation time ran every ponder step to its limit compiled, 11.7x head's time a
        # call, and a cell whose state grew past float range gave NaN where head's stopped)
        evidence.append("but compiled code runs the loop to its end where head's eager run breaks out of "
                        "it: more work a call, the loop's length and not its exit deciding it, and a value "
                        "that overflows in the iterations head skips reaches the outputs")
    # (a parameter set past the test is said where the block or exit it reached is)
    kinds = sorted({str(r.get("kind")) for r in hit} - {PARAM})
    if kinds:
        # the kinds that went into the model's weights said together, after those that went
        # into the arguments: "equal with NaN in the model's weights and values ... and inf in
        # the model's weights injected" read as one list
        weighted = [k for k in kinds if all(r.get("weights") for r in hit if r.get("kind") == k)]
        direct = [k for k in kinds if k not in weighted]
        said = []
        if direct:
            # and into which arguments: a reader re-checking gemma's sampler could not tell
            # whether the -1 went into the logits or an index
            into = sorted({str(r["argument"]) for r in hit if r.get("kind") in direct
                           and r.get("argument") and not r.get("weights")})
            said.append(" and ".join(_injected_words(k, hit, refused=True, raises=cand.get("raises") or ())
                                     for k in direct) + " injected" + (f" into {_named(into)}" if into else "")
                         + (" (one at a time)" if len(into) > 1 else ""))
        if weighted:
            said.append(" and ".join(GUARD_WORDS.get(k, k) for k in weighted) + f" in {WEIGHTS}")
        guarded = cand.get("guard_gradients") or {}
        evidence.append("equal with " + ", and with ".join(said)
                        + (", eager and compiled" if any(r.get("compiled") for r in hit) else "")
                        + (_unused_caveat(guarded) if guarded.get("match") else ""))
        own = sorted({str(r.get("kind")) for r in hit if r.get("head_compiled")})
        if own:
            evidence.append("compiled equal to head's own compiled code with "
                            + " and ".join(GUARD_WORDS.get(k, k) for k in own)
                            + ", where it differs from head's eager code (a path of its own under "
                              "`is_compiling()`)")
    constant = _constant_evidence(cand)
    if constant:
        evidence.append(constant)
    cut = [r for r in cand.get("guards") or () if r.get("unfinished")]
    if cut:
        inputs = sorted({f"{PATTERN_WORDS.get(str(r.get('pattern')), r.get('pattern'))} in `{r.get('argument')}`"
                         for r in cut})
        limit = max(float(r.get("run_s") or 0) for r in cut)
        evidence.append(f"not compared where head's own run does not end within {limit:.3g} s: "
                        + ", ".join(inputs[:3]) + (f" and {len(inputs) - 3} more" if len(inputs) > 3 else ""))
    swapped = sorted({(str(r["raised_type"]), str(r["compiled_raised_type"])) for r in cand.get("guards") or ()
                      if r.get("compiled") and r.get("raised") and r.get("raised_type")
                      and r.get("compiled_raised_type")
                      and r["raised_type"] not in _raised_as(r)
                      # (head's own compiled code raises it there too: not the edit's)
                      and r.get("head_compiled_raised_type") != r["compiled_raised_type"]})
    if swapped:
        # and what it says, where that differs: a check kept as `torch._assert_async` says a
        # constant message, where head's formatted the values it refused (a new user's read
        # "Parameter ... of is out of range." where head named `gain_db`)
        said = next(((str(r["raised_message"]), str(r["compiled_raised_message"]))
                     for r in cand.get("guards") or ()
                     if r.get("raised_message") and r.get("compiled_raised_message")
                     and r["raised_message"] != r["compiled_raised_message"]
                     and (str(r.get("raised_type")), str(r.get("compiled_raised_type"))) in swapped),
                    None)
        evidence.append("but compiled code raises " + " and ".join(
            f"{new} where head raises {old}" for old, new in swapped)
            + (f", saying `{said[1]}` where head says `{said[0]}`" if said else "")
            + " (on CUDA a device-side assert, which ends the process's CUDA context)")
    if cand.get("device_assert") and not swapped and any(
            r.get("compiled") and r.get("raised") and r.get("raised_type") == "RuntimeError"
            and "RuntimeError" in _raised_as(r) for r in cand.get("guards") or ()):
        # head raises RuntimeError too, so no type changes and nothing above is said; yet on
        # CUDA the compiled check is a device-side assert, which a caller cannot catch and go
        # on from
        evidence.append(_DEVICE_ASSERT + "torch._assert_async (on CUDA a device-side assert, "
                        "which ends the process's CUDA context)")
    quieted = _quieted_evidence(cand)
    if quieted:
        evidence.append(quieted)
    if cand.get("assumed"):
        evidence.append(_assumed_caveat(cand["assumed"]))
    be = cand.get("backend")
    if be:
        name = be.get("backend")
        if be.get("match"):
            evidence.append(f"equal under {name} on 1 case")
        elif be.get("head_match") is False and not be.get("raised"):
            evidence.append(f"not compared under {name}: head's own outputs differ there")
        else:
            return no(f"outputs differ from head's eager outputs under {name}{_detail(be)}")
    if unexercised:
        # `said`: what a verified fix's evidence says of this model, where another exercised it
        said = [quiet if quiet is not None and u == watched else u for u in unexercised]
        return {"accepted": False, "reason": "; ".join(unexercised), "evidence": ", ".join(evidence),
                "unexercised": True, "said": "; ".join(said)}
    also = _also_gone(head, cand, targets, edit) + _export_also(head, cand, targets, edit)
    gone = [b for b in also if "stops_at" not in b]
    if gone:
        evidence.append("also gone: " + ", ".join(
            (f"{_gb(b)} " if b.get("kind") != "export" else f"the export failure ({b.get('gb_type')}) ")
            + _at(b["path"], b["line"]) for b in gone))
    for b in also:
        if "stops_at" in b:
            s = b["stops_at"]
            evidence.append(f"export gets past {b['path']}:{b['line']} ({b.get('gb_type')}) and now stops "
                            f"{_at(s.get('path'), s.get('line'))}" + (f" ({s['kind']})" if s.get("kind") else ""))
    # (what a guarded or removed warning no longer gives is the edit's purpose, said in its
    # evidence: no caveat)
    caveats = _caveats([e for e in evidence if e != quieted])
    return {"accepted": True, "reason": None, "evidence": ", ".join(evidence),
            **({"also": also} if also else {}), **({"caveats": caveats} if caveats else {})}


_DEVICE_ASSERT = "compiled code raises RuntimeError where head does, by "


def _raised_as(row: Mapping[str, Any]) -> list[str]:
    """What a `except` of compiled code's exception catches it as: its type and the types it
    derives from (dynamo wraps a RuntimeError as TorchRuntimeError, which derives from it, so
    `except RuntimeError` still catches it: no other type)."""
    return [str(x) for x in row.get("compiled_raised_bases") or ()] or [str(row.get("compiled_raised_type"))]


def _also_gone(head: Mapping[str, Any], cand: Mapping[str, Any], targets: Sequence[Mapping[str, Any]],
               edit: Edit) -> list[dict[str, Any]]:
    """Head's breaks on the replaced lines that the edit was not aimed at and that the patched
    run no longer has there (pytorch-ood's boolean index inside the `if` whose test the edit
    drops): the same suggestion fixes them, and the review says so on their lines."""
    out: list[dict[str, Any]] = []
    for h in head.get("breaks") or ():
        line = h.get("line")
        if h.get("path") != edit.path or not isinstance(line, int) or \
                not edit.start_line <= line <= edit.end_line:
            continue
        if any(t.get("kind") == "break" and t.get("path") == edit.path and t.get("line") == line
               and _same_kind(h, t) for t in targets):
            continue
        if any(_same_kind(b, h) and b.get("path") == edit.path and edit.in_patched_region(b.get("line"))
               for b in cand.get("breaks") or ()):
            continue
        found = {"path": edit.path, "line": line, "gb": h.get("gb"), "gb_type": h.get("gb_type")}
        if found not in out:
            out.append(found)
    return out


def _export_also(head: Mapping[str, Any], cand: Mapping[str, Any], targets: Sequence[Mapping[str, Any]],
                 edit: Edit) -> list[dict[str, Any]]:
    """Head's export failure on the replaced lines, where the edit was aimed at a break and the
    patched model exports, or its export now stops past the edit: the same suggestion fixes it
    (a data-dependent `if` breaks the graph and fails export on the same line; a new user's
    review said "no verified fix" for the export next to the break's verified one)."""
    he, ce = head.get("export") or {}, cand.get("export") or {}
    line = he.get("line")
    if he.get("ok") is not False or he.get("path") != edit.path or not isinstance(line, int) \
            or not edit.start_line <= line <= edit.end_line \
            or any(t.get("kind") == "export" for t in targets):
        return []
    if ce.get("ok") is not True and not (
            ce.get("ok") is False and isinstance(ce.get("line"), int)
            and not (ce.get("path") == edit.path and edit.in_patched_region(ce["line"]))):
        return []
    gone = {"path": edit.path, "line": line, "gb": None, "gb_type": he.get("kind"), "kind": "export"}
    if ce.get("ok") is False:
        # export still fails, further on: "also gone" alone read as export restored (a
        # failure inside torch-nl, which base has too, was still there)
        at = edit.head_line(ce["line"]) if ce.get("path") == edit.path else ce["line"]
        gone["stops_at"] = {"path": ce.get("path"), "line": at, "kind": ce.get("kind")}
    return [gone]


def _returned(model: Any, case: CaseInputs, paths: RepoPaths, edit: Edit, swap: Swap,
              backend_cache: dict[str, Any]) -> dict[str, Any]:
    """`{"aliases": {function, head, patched}}`: the arguments head's edited function and the
    patched one (`swap`, in place) return (`returned_arguments`) on the first shape case; {}
    where either is not called, or where no wrapper can be put in the function's place (a
    property): a fact the evidence may add, never a reason to refuse."""
    cache = backend_cache.setdefault(ALIASES, {})
    key = f"{edit.path}:{swap.qualname}"
    try:
        if key not in cache:
            # head's own function, in place of the patched one for the run
            cache[key] = returned_arguments(model, case, paths, dataclasses.replace(swap, patched=swap.original))
        patched = returned_arguments(model, case, paths, swap)
    except NotApplicable:
        return {}
    if cache[key] is None or patched is None:
        return {}
    return {"aliases": {"function": swap.qualname, "head": cache[key], "patched": patched}}


def _where_compiled_differs(cand: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The shape cases on which compiled code, where `is_compiling()` is true, does what head's
    eager run did not: head took the early exit or entered the block (`reached`) that compiled
    code now never takes or enters; or, for a block compiled code always runs (`always`),
    head skipped it (the cases not reached)."""
    reached = list(cand.get("reached") or ())
    if not cand.get("always"):
        return reached
    seen = {json.dumps(s, sort_keys=True) for s in reached}
    return [r.get("shape") for r in cand.get("outputs") or ()
            if json.dumps(r.get("shape"), sort_keys=True) not in seen]


def _unreached(cand: Mapping[str, Any]) -> bool:
    """Whether the shape cases never ran what the edit changes (`reached`, watched in head's
    eager runs): no case on which compiled code does what head's eager run did not, or none
    on which head ran the arm the edit drops. Such an edit is refused whatever else is
    measured (`_eager_only_refusal`, `_dropped_arm_refusal` say why), so the proof stops
    there, before any compile."""
    if "reached" not in cand or isinstance(cand.get("early"), int):
        return False   # an early return selected may be taken by a guard input instead
    if isinstance(cand.get("block"), int) or isinstance(cand.get("exit"), int):
        return not _where_compiled_differs(cand)
    return not cand.get("reached")


def _compared_where_reached(cand: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Of `_where_compiled_differs`'s shape cases, those on which the shape matrix's compiled
    run of the candidate matched the eager outputs, which are head's (eager runs the edited
    code as head does)."""
    acc = {json.dumps(r.get("shape"), sort_keys=True): r.get("match")
           for r in cand.get("accuracy") or ()}
    return [s for s in _where_compiled_differs(cand) if acc.get(json.dumps(s, sort_keys=True)) is True]


# said after a refusal for want of an input that reaches a line: what the user can add to
# pt2bot.yml so that the next review proves the edit (a new user's review said "no shape case
# takes the early exit" and no more; the silent clip that takes it was theirs to give)
A_CASE_WOULD = ("; a shape case whose input does would show it: an `inputs: {entry: ...}` factory "
                "in pt2bot.yml, called with each case's dims, can give one")


def _eager_only_refusal(cand: Mapping[str, Any]) -> str | None:
    """Why an early exit taken, or a block run, in eager only (or a block run always in
    compiled code) is not shown right, if it is not.

    Such an edit changes what compiled code does on the inputs where head takes the exit or
    enters the block (skips it, for a block compiled code always runs), and nowhere else;
    unless one of the model's own shape cases is such an input, no compiled run compared the
    edit with head on values that mean anything. An injected guard input that takes the exit
    or enters the block is no substitute: it may be one on which the skipped work does nothing
    (zeros through an image augmentation, targets without the label a loss ignores)."""
    block, exit_line = cand.get("block"), cand.get("exit")
    if isinstance(exit_line, int):
        line, what, instead = exit_line, ("takes", "take", "the early exit"), "not taking it"
        if exit_line < 0:
            return ("the early exit is on the `if`'s own line: whether an input takes it cannot "
                    "be observed")
        if cand.get("guards") and not any(r.get("reached") for r in cand.get("guards") or ()):
            # the compiled guard runs compared code that took no exit on either side
            return ("no guard input takes the early exit, so what compiled code does instead "
                    "was never run")
    elif isinstance(block, int) and cand.get("always"):
        line, what, instead = block, ("skips", "skip", "the block"), "running it"
    elif isinstance(block, int):
        line, what, instead = block, ("enters", "enter", "the block"), "skipping it"
    else:
        return None
    one, many, where = what
    reached = len(_where_compiled_differs(cand))
    if not reached:
        return (f"no shape case {one} {where} at line {line}, so compiled code {instead} was "
                "never compared with head on the model's own inputs" + A_CASE_WOULD)
    if not _compared_where_reached(cand):
        why = ("the shape matrix did not run" if not cand.get("accuracy") else
               "the shape matrix's compiled runs of those cases gave nothing to compare (a run that "
               "failed, or head's own compiled outputs differ from its eager ones there)")
        return (f"{_shape_cases(reached)} {one if reached == 1 else many} {where} at line "
                f"{line}, but {why}, so compiled code {instead} was never compared with head "
                "on the model's own inputs")
    if cand.get("loop_exit"):
        # a loop run to its end where head's breaks out is right only where the iterations head
        # skips change nothing; with the eager backend compiled code runs head's own kernels, so
        # any difference there is those iterations' (otloss's Sinkhorn loop, run past its
        # convergence test, moved the outputs by 6e-8 and the gradients by 1e-5: within the
        # tolerance, and refused by the independent re-run, which compares exactly)
        shapes = {json.dumps(s, sort_keys=True) for s in _compared_where_reached(cand)}
        moved = [float(r.get("max_abs_err") or 0.0) for r in cand.get("accuracy") or ()
                 if json.dumps(r.get("shape"), sort_keys=True) in shapes and (r.get("max_abs_err") or 0.0) > 0]
        if moved:
            return (f"compiled code runs the loop on past the early exit at line {line} and the "
                    f"iterations head skips change the outputs (max abs error {max(moved):.3g} on "
                    f"{_shape_cases(len(moved))} where head takes the exit): within the tolerance, but "
                    "not head's result, so the exit decides more than how much work is done")
    return None


def _eager_only_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an accepted early exit or block in eager only (or block always run compiled): on
    how many of the shape cases, and on which guard inputs, head takes the exit or enters the
    block (skips it) and compiled code, which does not, still equals head's eager outputs."""
    always = bool(cand.get("always"))
    if isinstance(cand.get("exit"), int):
        done, where_head = "runs on past the early exit", "takes it"
    elif isinstance(cand.get("block"), int) and always:
        done, where_head = "runs the block", "skips it"
    elif isinstance(cand.get("block"), int):
        done, where_head = "skips the block", "runs it"
    else:
        return None
    k, n = len(_compared_where_reached(cand)), len(cand.get("accuracy") or ())
    reached = sorted({GUARD_WORDS.get(str(r.get("kind")), str(r.get("kind")))
                      for r in cand.get("guards") or () if bool(r.get("reached")) is not always})
    where = [f"the {_shape_cases(n)}" if k == n else f"{k} of the {_shape_cases(n)}"] + \
        [f"inputs with {w}" for w in reached]
    return (f"compiled code {done} and still equals head's eager outputs on "
            f"{' and '.join(where)}, where head {where_head}")


def _early_return_refusal(cand: Mapping[str, Any]) -> str | None:
    """Why an edit that selects an early return's value with `torch.where` (pt2bot/rules/
    branch_fixes.py `chain_fixes`) is not shown right, if it is not.

    `torch.where` computes the code after the early return on every input, where head ran it
    only where it did not return early: there it may raise (`position[0]` of an empty
    `nonzero`) or make a NaN the selection hides. Only an input on which head takes the early
    return, a shape case or a guard input, compares the edit with head where that happens."""
    line = cand.get("early")
    if not isinstance(line, int):
        return None
    exit_words = "the `break`" if cand.get("frozen") else "the early return"
    if line < 0:
        return (f"{exit_words} is on the `if`'s own line: whether an input takes it cannot "
                "be observed")
    if not cand.get("reached") and not any(r.get("reached") for r in cand.get("guards") or ()):
        if cand.get("frozen"):
            return (f"no shape case or guard input takes the `break` at line {line}, so the loop "
                    "run on past it, its values held by `torch.where`, was never compared with head "
                    "where head leaves the loop" + A_CASE_WOULD)
        return (f"no shape case or guard input takes the early return at line {line}, so the "
                "code after it was never run by `torch.where` where head returns early" + A_CASE_WOULD)
    return None


def _early_return_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an accepted early return selected: where head took it."""
    if not isinstance(cand.get("early"), int):
        return None
    k, n = len(cand.get("reached") or ()), len(cand.get("outputs") or ())
    where = [f"{k} of the {_shape_cases(n)}"] if k else []
    where += sorted({_param_words(cand) if r.get("kind") == PARAM else
                     f"inputs with {GUARD_WORDS.get(str(r.get('kind')), str(r.get('kind')))}"
                     for r in cand.get("guards") or () if r.get("reached")})
    exit_words = "the `break`" if cand.get("frozen") else "the early return"
    return f"{exit_words} at line {cand['early']} taken by head on {' and '.join(where)}"


def _dropped_arm_refusal(cand: Mapping[str, Any]) -> str | None:
    """Why an edit that keeps one arm of an `if`/`else` is not shown right, if it is not.

    Where head ran the kept arm, the patched model runs the same code, so equal outputs there
    say nothing; only a shape case on which head ran the arm the edit drops compares the kept
    arm with it (an injected input is no substitute: it may be one on which both arms happen
    to agree, as zeros often are)."""
    dropped = cand.get("dropped")
    if not isinstance(dropped, Mapping):
        return None
    arm, kept, line = dropped.get("arm"), dropped.get("kept"), dropped.get("line")
    if not isinstance(line, int) or line < 0:
        return (f"the dropped `{arm}` arm is on the `if`'s own line: whether a shape case runs "
                "it cannot be observed")
    if not cand.get("reached"):
        return (f"no shape case runs the `{arm}` arm at line {line} that the edit drops, so "
                f"keeping the `{kept}` arm was never compared with head where they differ"
                + A_CASE_WOULD)
    return None


def _dropped_arm_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an accepted edit that keeps one arm: on how many shape cases head ran the arm it
    drops (the outputs are equal on every case, those included)."""
    dropped = cand.get("dropped")
    if not isinstance(dropped, Mapping):
        return None
    k, n = len(cand.get("reached") or ()), len(cand.get("outputs") or ())
    return f"equal where head ran the dropped `{dropped.get('arm')}` arm: {k} of {_shape_cases(n)}"


def _named(names: Sequence[str]) -> str:
    """The first three of `names` in backticks, and how many more."""
    shown = ", ".join(f"`{n}`" for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


# a growth of the operations compiled that the evidence names: a loop whose early exit compiled
# code no longer takes is traced to its last iteration (a Sinkhorn solver's 200), each one into
# the graph, which its first compile pays for (with inductor, minutes)
GROWN_RATIO, GROWN_MIN = 2.0, 100


def _grown_graphs(head_ops: Any, cand_ops: Any) -> str | None:
    """What the evidence says where the patched model's graphs hold many more operations than
    head's (the break pass's first case): compiled code now runs what head ran in eager, and
    its first compile does that much more work."""
    if not (isinstance(head_ops, int) and isinstance(cand_ops, int)) or \
            cand_ops < GROWN_RATIO * head_ops or cand_ops - head_ops < GROWN_MIN:
        return None
    return (f"the graphs hold {cand_ops} operations where head's held {head_ops}: code head ran in "
            "eager now compiles, and its first compile does that much more work")


def _alias_caveat(cand: Mapping[str, Any]) -> str | None:
    """What equal outputs still differ in (`returned_arguments`): the arguments the edited
    function returns itself where head returns a new tensor, or the reverse."""
    got = cand.get("aliases") or {}
    head, patched = set(got.get("head") or ()), set(got.get("patched") or ())
    out = []
    if head - patched:
        out.append(f"`{got.get('function')}` returns a new tensor where head returns "
                   f"{_named(sorted(head - patched))} itself (a caller that writes into the result no "
                   "longer writes into it)")
    if patched - head:
        out.append(f"`{got.get('function')}` returns {_named(sorted(patched - head))} itself, or a view "
                   "of it, where head returns a new tensor (a caller that writes into the result now "
                   "writes into it)")
    return "; ".join(out) or None


def _noise_caveat(rows: Sequence[Mapping[str, Any]], what: str) -> str:
    """" (3 results left out: head's own two runs differ on them)", or ""."""
    n = sum(int(r.get("noise") or 0) for r in rows)
    return (f" ({n} {what if n != 1 else what[:-1]} left out: head's own two runs differ on "
            f"{'them' if n != 1 else 'it'})" if n else "")


def _unused_caveat(grads: Mapping[str, Any]) -> str:
    """What an equal gradient row still differs in (`compare_gradients`' `zeroed`, `unlinked`):
    the parameters that get a zero gradient where head's get none, or the reverse. The numbers
    match, but a training step does not treat them alike: an optimizer skips a parameter whose
    gradient is None and moves one whose gradient is zero by its momentum and weight decay."""
    out = []
    for key, words in (("zeroed", "zero gradients where head's get none"),
                       ("unlinked", "no gradients where head's get zeros")):
        names = grads.get(key) or ()
        if names:
            out.append(f"{_named(names)} {'gets' if len(names) == 1 else 'get'} {words}")
    if not out:
        return ""
    return f" ({'; '.join(out)}: {_UNUSED_WHY})"


_UNUSED_WHY = "an optimizer with momentum or weight decay updates a parameter with a zero gradient and skips one with none"
_UNUSED_SAID = re.compile(r"\(([^()]*: " + re.escape(_UNUSED_WHY) + r")\)")


def _caveats(evidence: Sequence[str]) -> list[str]:
    """What an accepted edit still does unlike head, taken from its evidence to be said first
    (`caveats`): the clauses that begin "but" (an exception of another type under compile, a new
    tensor where head returned its argument, a size a setting asserts), the device assert where head raises
    RuntimeError too, and parameters whose gradient is zero where head's is None. A user read
    DINOv2's NaN check, turned into `torch._assert_async`, as the same check: that compiled
    code raises RuntimeError where head raises FloatingPointError was said in the middle of
    1,900 characters of proof, and a loop that catches FloatingPointError stops catching it."""
    out: list[str] = []
    for clause in evidence:
        said = [clause[4:]] if clause.startswith("but ") else \
            [clause] if clause.startswith(_DEVICE_ASSERT) else []
        said += [m.group(1) for m in _UNUSED_SAID.finditer(clause)]
        out += [s for s in said if s not in out]
    return out


def _detail(row: Mapping[str, Any]) -> str:
    """` (why)` for an output comparison that failed: its message, else the largest error."""
    err = row.get("max_abs_err")
    detail = row.get("message") or (f"max abs error {err:.3g}" if isinstance(
        err, (int, float)) else "")
    return f" ({detail})" if detail else ""


def _injected_words(kind: str, hit: Sequence[Mapping[str, Any]], refused: bool = False,
                    raises: Collection[str] = ()) -> str:
    """What was injected for one guard kind: for a check that raises, the values that went in
    (integer labels get no NaN, a mask only all off and all on), in the order they are tried,
    and with `refused`, those head raised on where not all of them. With `raises`, the
    exceptions the edited code raises, a raise of another type is said apart: it came before the
    check (a new user's NaN check on nanochat's logits read "head raised on -1, 1e3, 1e6", ids
    out of the embedding's range raising IndexError, which the check never saw)."""
    rows = [r for r in hit if r.get("kind") == kind]
    if rows and all(r.get("weights") for r in rows):
        return f"{GUARD_WORDS.get(kind, kind)} in {WEIGHTS}"
    if kind != "invalid":
        return GUARD_WORDS.get(kind, kind)
    went = {str(r.get("pattern")) for r in rows}

    def listed(ps: Collection[str], sep: str = "; ") -> str:
        whole = [PATTERN_WORDS[p] for p in guard_patterns(kind) if p in ps and p not in ROW_PATTERNS]
        row = [PATTERN_WORDS[p] for p in ROW_PATTERNS if p in ps]
        return sep.join(x for x in (", ".join(whole), " and ".join(row) + " in one row of several" if row else "")
                        if x)
    values = listed(went)
    # which of them head's check refused: a torch-nl user read "values a check refuses (-1, 0,
    # 1e3, 1e6, NaN)" of `torch.isfinite(pos).all()`, which refuses none of the first four
    on = {str(r.get("pattern")) for r in rows if r.get("raised")
          and (not raises or r.get("raised_type") in raises)}
    before = {str(r.get("pattern")) for r in rows if r.get("raised")} - on
    said = f"; head raised on {listed(on, ', and ')}" if refused and on and on != went else ""
    if refused and before:
        # (a run that raised with no type recorded is said as an error, never "raised None")
        kinds = sorted({str(r.get("raised_type")) for r in rows
                        if str(r.get("pattern")) in before and r.get("raised_type")})
        said += (f"; on {listed(before, ', and ')} head raised {' and '.join(kinds) or 'an error'} "
                 "before the check, which these did not reach")
    return f"values a check may refuse ({values}{said})" if values else GUARD_WORDS[kind]


def _shape_cases(n: int) -> str:
    return f"{n} shape case{'s' if n != 1 else ''}"


def _graphs(n: int) -> str:
    return f"{n} graph{'s' if n != 1 else ''}"


def _recompiles(n: int) -> str:
    return "no recompile" if n == 0 else f"{n} recompile{'s' if n != 1 else ''}"


def _shape(shape: Any) -> str:
    if isinstance(shape, Mapping) and shape:
        return "shape case " + ", ".join(f"{k}={v}" for k, v in shape.items())
    return "the shape case"


def equal_tests(original_lines: Sequence[str]) -> list[str]:
    """The pairs of names (or attributes of names: `state.t1`) that an `if` or a conditional
    expression of the replaced code tests for equality (`if t == t0: return y0`), as guard
    patterns: an input with one made the other takes that branch, which ordinary inputs rarely
    do (a time on a grid point)."""
    try:
        tree = ast.parse(textwrap.dedent("\n".join(original_lines)))
    except SyntaxError:
        return []

    def name(e: ast.AST) -> str | None:
        if isinstance(e, ast.Name):
            return e.id
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name):
            return f"{e.value.id}.{e.attr}"
        return None

    found = []
    for n in ast.walk(tree):
        if isinstance(n, (ast.If, ast.IfExp, ast.While)):
            for c in ast.walk(n.test):
                if isinstance(c, ast.Compare) and len(c.ops) == 1 and isinstance(c.ops[0], ast.Eq):
                    a, b = name(c.left), name(c.comparators[0])
                    if a and b and a != b and "self" not in (a.split(".")[0], b.split(".")[0]):
                        found.append((a, b))
    pairs = list(dict.fromkeys(found))
    # and the names tests chain together all equal at once (`t == t0` and `t == t1`: an input
    # with t0, t1 and t one value, where head returns at the first test and `torch.where` still
    # computes what comes after: `(t - t0) / (t1 - t0)` is 0/0 there, NaN in the gradients)
    groups: list[list[str]] = []
    for a, b in pairs:
        joined = [g for g in groups if a in g or b in g]
        groups = [g for g in groups if g not in joined] + [
            list(dict.fromkeys([*(n for g in joined for n in g), a, b]))]
    out = [equal_pattern(a, b) for a, b in pairs]
    for g in (g for g in groups if len(g) > 2):
        one = next(b for _a, b in pairs if b in g)   # the value the others are set to
        out.append(equal_pattern(",".join(n for n in g if n != one), one))
    return out


def guard_kinds(declared: Sequence[str], original_lines: Sequence[str]) -> list[str]:
    """The guards to check: those the recipe declares, and those the replaced text shows
    (a recipe that forgot to declare one does not skip its check)."""
    text = normalise_source(" ".join(original_lines))
    kinds = {k for k in declared if k in GUARD_KINDS}
    if any(w in text for w in ("isnan", "nan_to_num", "isfinite", "nanmean", "nansum")):
        kinds.add("nan")
    if any(w in text for w in ("isinf", "isfinite", "posinf", "neginf")):
        kinds.add("inf")
    if any(w in text for w in ("numel() == 0", "numel() > 0", ".sum() == 0", ".sum() > 0",
                               "count_nonzero", "clamp_min(1", "clamp(min=1")):
        kinds.add("empty")
    if any(w in text for w in ("== 0", "!= 0", "> 0", "clamp_min", "clamp(min")):
        kinds.add("zero")
    return sorted(kinds)


# --------------------------------------------------------------------------- the worker

Emit = Callable[[dict[str, Any]], None]


def verify(spec: dict[str, Any], emit: Emit) -> None:
    """Measure head, then each candidate, emitting one verdict per candidate (see the doc)."""
    import torch

    model_spec = dict(spec.get("model") or {})
    run_cfg = dict(spec.get("run") or {})
    device = spec.get("device") or "cpu"
    phases = [p for p in spec.get("phases") or ("breaks",) if p in ("breaks", "matrix", "export")]
    paths = RepoPaths(spec.get("repo_root") or os.getcwd())
    cands = list(spec.get("candidates") or ())
    limit = float(spec.get("candidate_timeout_s") or 0) or None
    if run_cfg.get("threads"):
        torch.set_num_threads(int(run_cfg["threads"]))
    t0 = time.perf_counter()
    try:   # head runs under the worker's own time limit only
        seed_all()
        model = build_model(str(model_spec.get("entry") or ""), model_spec.get("kwargs") or {},
                            paths, model_spec.get("config"), train=bool(model_spec.get("train")),
                            grad=bool(model_spec.get("grad"))).to(device)
        cases = [build_inputs(model_spec, model, shape, device, paths)
                 for shape in shape_cases(model_spec)]
        infer_dims(cases, forward_params(model))
        remember_state(model)
        with call_mode():
            head_outs = [_seeded_forward(model, c, paths) for c in cases]
        head = measure_state(model, cases, head_outs, model_spec, run_cfg, paths, phases)
    except ModelError as e:
        emit({"id": HEAD, "ok": False, "reason": f"head's model does not run in the proof's "
                                                  f"worker: {e}", "s": _since(t0)})
        return
    emit({"id": HEAD, "ok": True, "s": _since(t0), "graph_count": head.get("graph_count")})
    fixed: set[str] = set()
    guard_cache: dict[str, GuardCache] = {}
    backend_cache: dict[str, Any] = {HEAD_S: _since(t0)}
    for cand in cands:
        keys = [str(k) for k in cand.get("target_keys") or ()]
        if keys and all(k in fixed for k in keys):
            emit({"id": cand["id"], "skipped": "an earlier candidate already fixed its target"})
            continue
        t1 = time.perf_counter()
        refused = unprovable_on(device, cand)
        if refused:
            emit({"id": cand["id"], "accepted": False, "evidence": "", "s": 0.0,
                  "reason": refused})
            continue
        verdict = prove_candidate(cand, model, cases, head_outs, head, model_spec, run_cfg,
                                 paths, phases, limit, guard_cache, backend_cache)
        if verdict.get("accepted"):
            fixed.update(keys)
        emit({"id": cand["id"], **verdict, "s": _since(t1)})


@functools.lru_cache(maxsize=4)
def _ifs(original: str) -> tuple[Any, ...]:
    """The `if` statements (and `elif`s) of head's text; parsed once for all of a candidate's
    questions about it (its exit, its block, its dropped arm), which never change the nodes."""
    import ast

    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return ()
    return tuple(n for n in ast.walk(tree) if isinstance(n, ast.If))


def _if_block(original: str, edit: Edit) -> int | None:
    """The first line of the block of the `if` the edit starts on (head's text), where the
    block starts below the header; None for any other edit."""
    node = _if_at(original, edit.start_line)
    if node is None or node.body[0].lineno <= (node.test.end_lineno or node.lineno):
        return None
    return node.body[0].lineno


def _if_at(original: str, line: int) -> Any:
    """The `if` statement (or `elif`) of head's text on `line`, or after it past blank and
    comment lines only (an edit may start on the comment above the `if`), or None."""
    lines = original.splitlines()
    return next((n for n in _ifs(original) if n.lineno >= line and all(
        not ln.strip() or ln.strip().startswith("#") for ln in lines[line - 1:n.lineno - 1])), None)


def _edited_if(original: str, edit: Edit) -> Any:
    """The `if` statement of head's text without an `else` whose header holds the edit's lines
    (the eager-only exits and blocks edit its header; a test over several lines may be edited
    on one of them only, and the edit may start on a comment above it), or None."""
    node = _if_at(original, edit.start_line)
    if node is not None and edit.end_line <= (node.test.end_lineno or node.lineno) and not node.orelse and node.body:
        return node
    return next((n for n in _ifs(original) if n.lineno <= edit.start_line
                 and edit.end_line <= (n.test.end_lineno or n.lineno) and not n.orelse and n.body), None)


def _dropped_arm(original: str, edit: Edit, new_lines: Sequence[str]) -> dict[str, Any] | None:
    """For an edit that replaces a whole `if <test>: <A> else: <B>` by one arm, one level up
    (pt2bot/rules/branch_fixes.py `_keep_arm_fixes`): `{arm, kept, line}`, the arm it drops
    ("if" or "else"), the one it keeps, and head's first line of the dropped arm, whose
    reaching in head's eager run says that a shape case compares the two arms (-1 where that
    line is the `if`'s own: no line event tells the arm from the test). Told from the text:
    the new lines are the kept arm's, indentation, blank lines and comments aside. None for
    any other edit."""
    node = _if_at(original, edit.start_line)
    if node is None or not node.orelse or edit.end_line != node.end_lineno:
        return None
    lines = original.splitlines()
    if not lines[node.lineno - 1].lstrip().startswith("if"):
        return None   # an `elif`: the edit would not be the whole statement

    def code(own: Sequence[str]) -> list[str]:
        return [ln.strip() for ln in own if ln.strip() and not ln.strip().startswith("#")]

    new = code(new_lines)
    for kept, dropped, arm, kept_word in ((node.body, node.orelse, "else", "if"),
                                          (node.orelse, node.body, "if", "else")):
        if new == code(lines[kept[0].lineno - 1:kept[-1].end_lineno]):
            first = dropped[0].lineno
            return {"arm": arm, "kept": kept_word, "line": -1 if first == node.lineno else first}
    return None


def _is_exit(node: Any) -> bool:
    """An `if` whose body ends by leaving (`break`, `continue`, `return`): the statements before
    the exit, if any, only tell the user (pt2bot/rules/branch_fixes.py `_told`)."""
    import ast

    return bool(node.body) and isinstance(node.body[-1], (ast.Break, ast.Continue, ast.Return))


def _exit_line(original: str, edit: Edit) -> int | None:
    """For an edit of `if <test>: break` (or `continue`, `return`), head's line of that exit
    statement: whether a shape case or a guard input takes it decides whether the compiled
    runs on it showed anything. -1 when the exit is on a line of the `if`'s header (no line
    event tells it apart); None for any other edit."""
    node = _edited_if(original, edit)
    if node is None or not _is_exit(node):
        return None
    line = node.body[-1].lineno
    return -1 if line <= (node.test.end_lineno or node.lineno) else line


def _early_return(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For an edit that replaces `if <test>: return <a>` and the code up to a later `return`
    by that code and `return torch.where(...)` (pt2bot/rules/branch_fixes.py `chain_fixes`),
    head's line of the early `return` (-1 where it is on the `if`'s own line); None for any
    other edit. Told from the text: the `if` is gone from the new lines, and `torch.where` is
    in them."""
    import ast

    node = _if_at(original, edit.start_line)
    if node is None or node.orelse or len(node.body) != 1 or not isinstance(node.body[0], ast.Return) \
            or edit.end_line <= (node.end_lineno or node.lineno):
        return None
    lines = original.splitlines()
    if not lines[node.lineno - 1].lstrip().startswith("if"):
        return None
    new = [ln.strip() for ln in new_lines]
    where = f"{_torch(original)}.where("
    if any(ln.startswith(("if ", "if(", "elif ")) for ln in new) or not any(where in ln for ln in new):
        return None
    line = node.body[0].lineno
    return -1 if line <= (node.test.end_lineno or node.lineno) else line


def _frozen_exit(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For an edit that replaces a whole `for` loop holding `if <test>: break` at its top level
    by the loop run to its end, its values held by `torch.where` once the test holds
    (pt2bot/rules/branch_fixes.py `_frozen_loop_fixes`): head's line of that `break` (-1 where
    it is on the `if`'s own line). Head leaves the loop there and the edit runs on, keeping
    what head left with; only an input on which head takes the `break` compares the two. Told
    from the text: no `break` is left in the new lines, and `torch.where` is in them. None
    for any other edit."""
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return None
    loop = next((n for n in ast.walk(tree) if isinstance(n, ast.For) and n.lineno == edit.start_line
                 and n.end_lineno == edit.end_line), None)
    exits = [s for s in loop.body if isinstance(s, ast.If) and not s.orelse and len(s.body) == 1
             and isinstance(s.body[0], ast.Break)] if loop is not None else []
    new = [ln.strip() for ln in new_lines]
    if len(exits) != 1 or any(re.match(r"break\b", ln) for ln in new) or \
            not any(f"{_torch(original)}.where(" in ln for ln in new):
        return None
    line = exits[0].body[0].lineno
    return -1 if line <= (exits[0].test.end_lineno or exits[0].lineno) else line


@functools.lru_cache(maxsize=8)
def _torch(original: str) -> str:
    """The name head's file binds torch to, which the recipes' edits write (`th` where it
    imports torch only as `th`, pt2bot/rules/edits.py `torch_alias`); "torch" by default."""
    # (pt2bot/rules/edits.py `torch_alias` reads the same; the worker does not import the
    # static side, docs/architecture.md)
    try:
        tree = ast.parse(original)
    except (SyntaxError, ValueError, RecursionError):
        return "torch"
    names = [a.asname or "torch" for st in tree.body if isinstance(st, ast.Import) for a in st.names
             if (a.asname is None and a.name.split(".")[0] == "torch") or a.name == "torch"]
    return "torch" if "torch" in names or not names else names[0]


def _whole_if(original: str, edit: Edit, new_lines: Sequence[str]) -> Any:
    """The `if <test>: <block>` (no `else`) that the edit replaces from its header to its end
    by lines with no `if` left, or None."""
    node = _if_at(original, edit.start_line)
    if node is None or node.orelse or edit.end_line != node.end_lineno or \
            not original.splitlines()[node.lineno - 1].lstrip().startswith("if") or \
            any(ln.strip().startswith(("if ", "if(", "elif ")) for ln in new_lines):
        return None
    return node


def _dropped_test(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For an edit that replaces a whole `if <test>: <block>` (no `else`) whose masked writes
    `x[m] = ...` become `x = torch.where(m, ...)`, with no `if` left (pt2bot/rules/
    branch_fixes.py `_masked_rows_fixes`): head's first line of the block, whose not being
    reached on an input says that the test failed there, the one place where dropping it
    can differ from head (-1 where the block starts on the `if`'s own line). None for any
    other edit: `torch.where` on the `if`'s own test keeps it.

    So for an edit that keeps the block as it was and drops the test, or the test's tensor
    part where the rest stays an `if` (`_selected_block_fixes`: the block selects with
    `torch.where` on the mask the dropped `m.any()` read)."""
    import ast

    kept = _kept_block(original, edit, new_lines)
    if kept is not None:
        return kept
    node = _whole_if(original, edit, new_lines)
    if node is None:
        return None
    masks = {s.targets[0].slice.id for s in node.body if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Subscript) and isinstance(s.targets[0].slice, ast.Name)}
    new = [ln.strip() for ln in new_lines]
    if not masks or not any(f"{_torch(original)}.where({m}, " in ln for ln in new for m in masks):
        return None
    first = node.body[0].lineno
    return -1 if first <= (node.test.end_lineno or node.lineno) else first


def _kept_block(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """Head's first line of the block of the `if` (no `else`, its block below its header, each
    statement of it `x = torch.where(...)`) that the edit replaces whole by the same block, with
    no `if` or under an `if` whose test is a part of head's: None for any other edit. (A block
    that computes, `h = torch.nan_to_num(h)` under a NaN test, made branchless is proven on
    what it computes, not on where its test fails.)"""
    import ast

    node = _if_at(original, edit.start_line)
    if node is None or node.orelse or edit.end_line != node.end_lineno or \
            node.body[0].lineno <= (node.test.end_lineno or node.lineno) or not all(
                isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)
                and isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "where"
                for s in node.body):
        return None
    src = original.splitlines()
    body = [ln.strip() for ln in src[node.body[0].lineno - 1:node.end_lineno] if ln.strip()]
    new = [ln.strip() for ln in new_lines if ln.strip()]
    test = " ".join(" ".join(src[node.lineno - 1:node.test.end_lineno]).split())
    if new == body or (len(new) == len(body) + 1 and new[1:] == body and new[0].startswith("if ")
                       and new[0].endswith(":") and new[0][3:-1].strip() in test):
        return node.body[0].lineno
    return None


def _kept_test_block(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For a `_kept_block` edit that keeps a part of head's test as an `if` (`if masks is not
    None:` of `if masks is not None and masks.any():`): the patched file's first line of that
    block. An input on which head skipped the block counts for the dropped part only where the
    patched code entered it: where the kept part failed (`masks=None`), both skip it alike."""
    if _kept_block(original, edit, new_lines) is None or not new_lines[0].strip().startswith("if "):
        return None
    return next((edit.start_line + i for i, ln in enumerate(new_lines) if i and ln.strip()), None)


# guard inputs whose gradients are compared, at most: each costs a backward of head's (kept for
# the function's other candidates) and one of the candidate's
GRADIENT_GUARDS = 8


def guard_gradients(model: Any, case: CaseInputs, paths: RepoPaths, rows: Sequence[Mapping[str, Any]],
                    head_swap: Swap, cand_swap: Swap, tolerance: Any, head_cache: GuardCache,
                    prefer: tuple[str, ...] = (), skip: bool = False) -> dict[str, Any] | None:
    """On guard inputs whose outputs matched head's (`guard_checks`' rows, at most
    `GRADIENT_GUARDS` of them, in their order: the arguments the edited code reads first), the
    gradients (`gradients`), head's against the candidate's, until one differs. Equal outputs
    there can hide a backward that differs: `torch.where(zero, 0.0, y / d)` selects 0 where
    head returned early, but the division it did not select has a gradient there, 0 / 0, NaN;
    where head skipped a block, what it writes kept no link to what the block reads, and the
    edit's `torch.where` makes one (torchmetrics' Pearson on constant predictions: head's NaN
    result has no gradient at all, the edit's carries NaN ones). Head's gradients are kept in
    `head_cache` for the other candidates of the function. `{kind, argument, skipped, match,
    ...}` of the input that differed, else of the last compared; None when none was. `skip`:
    the watched line is the first of a block the edit drops the test of (`_dropped_test`), so
    a row that did not reach it is an input on which head skipped the block (`skipped`)."""
    picked = [r for r in rows if r.get("hit") and r.get("match") and not r.get("raised") and not r.get("weights")
              and not r.get("compiled")][:GRADIENT_GUARDS]
    last: dict[str, Any] | None = None
    # the parameters with a zero gradient where head's has none, or the reverse (`zeroed`,
    # `unlinked`, as `compare_gradients` keeps them): a guard input is often where head skipped
    # the code that reads one (dinov2's mask token, left with no gradient where no patch is
    # masked, got a zero one from the edit's `torch.where`, and AdamW's weight decay moved it)
    zeroed: set[str] = set()
    unlinked: set[str] = set()
    for r in picked:
        kind, pattern, arg = str(r["kind"]), str(r["pattern"]), int(r["arg"])
        key = ("gradients", kind, pattern, arg, prefer)
        if key not in head_cache:
            with injecting(head_swap, Injection(kind, pattern, arg, prefer=prefer)):
                head_cache[key] = gradients(model, case, paths)
        with injecting(cand_swap, Injection(kind, pattern, arg, prefer=prefer)):
            cand = gradients(model, case, paths)
        where = {"kind": kind, "argument": r.get("argument"), "skipped": skip and r.get("reached") is False
                 and r.get("cand_reached") is not False}
        last = {**where, **(_gradient_row(head_cache[key], cand, tolerance) or {"match": True})}
        if not last["match"]:
            break
        if isinstance(head_cache[key], dict) and isinstance(cand, dict):
            before, after = set(head_cache[key].get("none") or ()), set(cand.get("none") or ())
            zeroed |= before - after
            unlinked |= after - before
    if last is not None and last["match"]:
        last.update({k: sorted(v) for k, v in (("zeroed", zeroed), ("unlinked", unlinked)) if v})
    return last


# --------------------------------------------------------------------------- constant inputs

# The model's own input tensors with every element one value, each of CONSTANTS in turn:
# a batch whose rows are all alike, on which what the layers compute is degenerate (a
# variance of 0, the same prediction for every row) as no random shape case makes it. A guard
# input sets the edited function's arguments, not the inputs of the layers that compute them,
# so the derivative of those layers at the degenerate value (infinite for a deviation of 0
# raised to a negative power) never enters its backward; here it does. torchmetrics' Pearson
# with its masked rows selected by `torch.where` equals head on every shape case and guard
# input, and takes NaN gradients on constant predictions where head's skipped block took none;
# torchdiffeq's first step selected by `torch.where` does on an ODE that starts at 0, whose norm
# of 0 the branch kept out of the graph and the square root in it differentiates to inf.
# And the model's weights all 0 on its first case's own inputs: a layer initialised to zero (a
# neural ODE's last layer often is) makes the function it ends constant. torchdiffeq's second
# step size selected by `torch.where` equals head on the benchmark's trained-looking weights and
# takes NaN gradients on a vector field that is 0 at the start, where the branch never computed
# the division by its norms of 0 (an independent re-run found it).
# And one reading NaN: the first element of the model's first floating-point input, the rest as
# the case's. A NaN in one row shows what an edit does to the other rows: a batch of sensor
# readings rescaled by its `amax` only past a threshold, made `torch.where(scale > 50, x / s, x)`,
# equals head on every output, but differentiates through the `amax` head never took, whose
# backward with a NaN maximum makes every row's input gradient NaN where head's is NaN in the one
# row (a held-out trial's verified suggestion; a guard input sets only what the edited code
# tests, and no test there is for NaN). (Its value, 1, is the count of NaN elements: a NaN in
# the rows of report JSON is no JSON.)
CONSTANTS = (("inputs", 0.0), ("inputs", 1.0), ("weights", 0.0), ("reading", 1.0))
CONSTANT = "head on constant inputs"   # head's outputs and gradients there, once per model


class ConstantOverrun(Overrun):
    """Head's own run on a constant input took longer than `GUARD_RUN_S`."""


def constant_case(case: CaseInputs, value: float) -> CaseInputs | None:
    """`case` with every floating-point and integer input tensor filled with `value` (token ids
    and labels too: an embedding of one id gives rows all alike); bool masks kept. None when no
    input is such a tensor."""
    import torch

    filled = False

    def fill(a: Any) -> Any:
        nonlocal filled
        if isinstance(a, torch.Tensor) and a.dtype != torch.bool and not a.is_complex():
            filled = True
            return torch.full_like(a, value)
        return a
    out = case.replace_tensors(fill)
    return out if filled else None


def one_nan_case(case: CaseInputs) -> CaseInputs | None:
    """`case` with the first element of its first floating-point input tensor of more than one
    element set to NaN (a fresh tensor; the others kept). None when it has none."""
    import torch

    done = False

    def put(a: Any) -> Any:
        nonlocal done
        if not done and isinstance(a, torch.Tensor) and a.is_floating_point() and a.numel() > 1:
            done = True
            a = a.detach().clone()
            a.view(-1)[0] = math.nan
        return a
    out = case.replace_tensors(put)
    return out if done else None


@contextlib.contextmanager
def _constant(model: Any, case: CaseInputs, of: str, value: float) -> Any:
    """The case to run for one of CONSTANTS (None where it has none), with the weights all 0
    in place for "weights"."""
    if of == "inputs":
        yield constant_case(case, value)
        return
    if of == "reading":
        yield one_nan_case(case)
        return
    with zero_weights(model) as zeroed:
        yield case if zeroed else None


def _run_constant(model: Any, case: CaseInputs, paths: RepoPaths, of: str, value: float,
                  head_out: Any = None, run: Any = None) -> tuple[bool, Any, Any]:
    """`(ran, outputs or the exception, gradients)` on one of CONSTANTS; gradients only where
    the outputs are not an exception (and, given `head_out`, where head's were not either).
    `run`: what runs the forward pass instead of `model` (its compiled form, under a dynamo
    setting), whose failures (a runtime assertion of compiled code) are results too."""
    with _constant(model, case, of, value) as c:
        if c is None:
            return False, None, None
        with call_mode(), defined_memory():
            try:
                got = _try_forward(model if run is None else run, c, paths)
            except Exception as e:  # noqa: BLE001 - compiled code's own failure is a result
                if run is None:
                    raise
                got = e
        if isinstance(got, BaseException) or isinstance(head_out, BaseException):
            return True, got, None
        with defined_memory():
            return True, got, gradients(model, c, paths, run)


def head_on_constants(model: Any, case: CaseInputs, paths: RepoPaths) -> list[tuple[str, float, Any, Any, Any]]:
    """`(of, value, outputs or the exception, gradients, the same run again)` of head's model
    on each of CONSTANTS (the second run for head's noise, `_compare_stable`); one on which
    head's run does not end within `GUARD_RUN_S` is left out (nothing to compare), as are
    gradients where head's forward raised."""
    out = []
    for of, value in CONSTANTS:
        try:
            with time_limit(GUARD_RUN_S, ConstantOverrun):
                ran, got, grads = _run_constant(model, case, paths, of, value)
                again = _run_constant(model, case, paths, of, value)[1:] if ran else None
        except ConstantOverrun:
            continue
        if ran:
            out.append((of, value, got, grads, again))
    return out


def constant_checks(model: Any, case: CaseInputs, paths: RepoPaths,
                    head_runs: Sequence[tuple[str, float, Any, Any, Any]], tolerance: Any,
                    run: Any = None) -> list[dict[str, Any]]:
    """The candidate against head (`head_on_constants`) on each of CONSTANTS, outputs then
    gradients, until one differs: `{of, value, match, message, ...}` a row (`gradients` where
    the gradients were compared, their `of` then `grads_of`; `compiled` where `run`, the
    model compiled, ran the candidate's side)."""
    rows = []
    for of, value, head_out, head_grads, (out2, grads2) in head_runs:
        _, got, grads = _run_constant(model, case, paths, of, value, head_out, run)
        row = {"of": of, "value": value, **_versus(head_out, got, tolerance, again=out2),
               **({"compiled": True} if run is not None else {})}
        if of == "reading" and not row["match"] and isinstance(head_out, BaseException) \
                and not isinstance(got, BaseException):
            # head fails on a batch with a NaN its code does not test for (LAPACK's `gels`
            # refusing it), the edit returns: said, not refused; the other way round would
            # be a new failure
            row = {"of": of, "value": value, "match": True,
                   "outcome_differs": f"head raises {getattr(head_out, 'exc_type', None) or type(head_out).__name__} "
                                      f"(\"{_raised_message(head_out)[:80].replace(chr(34), chr(39))}\") "
                                      "where the edit returns"}
        if row["match"] and grads is not None:
            g = _gradient_row(head_grads, grads, tolerance,
                              skip=_gradient_noise(head_grads, grads2, tolerance))
            if g is not None and of == "reading" and not g["match"]:
                # outputs equal: the backward on a batch with a NaN is said, not refused; a
                # training step on such a batch is broken on both sides, and which gradients
                # the NaN reaches is what differs (input gradients, a saliency map)
                row = {**row, "gradients": True, "grads_differ": f"the {g.get('of') or ''}"
                       f"{chr(39) + ' ' if g.get('of') else ''}gradients differ from head's{_detail(g)}"}
            elif g is not None:
                row = {**g, "grads_of": g.get("of"), "of": of, "value": value, "gradients": True,
                       **({"compiled": True} if run is not None else {})}
                if row["match"] and isinstance(head_grads, dict) and isinstance(grads, dict):
                    # equal numbers, but zeros where head has none are a training step of
                    # their own (`_unused_caveat`): a silent batch's skipped block run by
                    # `torch.cond` on the inputs all 0
                    before, after = set(head_grads.get("none") or ()), set(grads.get("none") or ())
                    row.update({k: sorted(v) for k, v in (("zeroed", before - after),
                                                          ("unlinked", after - before)) if v})
        rows.append(row)
        if not row["match"]:
            break
    return rows


def _constant_words(of: str, value: Any) -> str:
    if of == "reading":
        return "one NaN in the model's first floating-point input"
    return f"the model's {of} all {float(value or 0):g}"


def _constant_refusal(cand: Mapping[str, Any]) -> str | None:
    for row in cand.get("constants") or ():
        if not row.get("match"):
            what = ("the " + (f"{row['grads_of']}' " if row.get("grads_of") else "") + "gradients"
                    if row.get("gradients") else "the outputs")
            alike = " (rows all alike)" if row.get("of") == "inputs" else ""
            compiled = "compiled, " if row.get("compiled") else ""
            return (f"{compiled}on {_constant_words(str(row.get('of')), row.get('value'))}{alike}, "
                    f"{what} differ from head's{_detail(row)}")
    return None


def _constant_evidence(cand: Mapping[str, Any]) -> str | None:
    rows = cand.get("constants") or ()
    if not rows:
        return None
    parts = []
    for of in ("inputs", "weights"):
        values = [f"all {float(r.get('value') or 0):g}" for r in rows if r.get("of") == of]
        if of == "inputs" and any(r.get("of") == "reading" and not r.get("outcome_differs")
                                  for r in rows):
            values.append("with one NaN")
        if values:
            parts.append(f"{of} " + (", ".join(values[:-1]) + " and " if len(values) > 1 else "")
                         + values[-1])
    # the parameters that get zeros where head's get none here and not on the shape cases
    # (said there already where they do)
    said = cand.get("gradients") or {}
    unused = {k: sorted({n for r in rows for n in r.get(k) or ()} - set(said.get(k) or ()))
              for k in ("zeroed", "unlinked")}
    differ = next((r.get("outcome_differs") or r["grads_differ"] for r in rows
                   if r.get("grads_differ") or r.get("outcome_differs")), None)
    return ("compiled " if any(r.get("compiled") for r in rows) else "") + "equal on " + \
        " and on ".join(parts) + (
        ", gradients too" if any(r.get("gradients") for r in rows) else "") + (
        f" (but with one NaN in an input, {differ})" if differ else "") + _unused_caveat(unused) + _noise_caveat(rows, "results")


def _dropped_test_refusal(cand: Mapping[str, Any], advise: bool = True) -> str | None:
    """Why an edit that drops an `if`'s test for its masked writes selected is not shown
    right, if it is not. Where head entered the block, the mask decides in both; only an
    input on which head skipped it (the test failed: an empty mask, if the test is the one
    the recipe took it for) compares the edit with head where the test alone decided.
    `advise`: with how to add such an input (left out where another model gave one)."""
    line = cand.get("skip")
    if not isinstance(line, int):
        return None
    if line < 0:
        return "the block is on the `if`'s own line: whether an input skips it cannot be observed"
    if not cand.get("skipped") and not _guards_reaching(cand, False):
        return (f"no shape case or guard input skips the block at line {line}, so dropping the "
                "`if`'s test was never compared with head where the test fails"
                + (A_CASE_WOULD if advise else ""))
    return None


def _reached_any(measured: Mapping[str, Any]) -> bool:
    """Whether a shape case or a guard input reached the watched line (a block entered, an
    early exit taken), or the block of the expression an edit selects."""
    return bool(measured.get("entered") or measured.get("reached")
                or (measured.get("told") or {}).get("cases")
                or any(r.get("hit") and r.get("reached") for r in measured.get("guards") or ()))


def _param_words(cand: Mapping[str, Any]) -> str:
    """"`logit_scale` set to 1e6": the parameter inputs on which head reached the watched line."""
    rows = [r for r in cand.get("guards") or () if r.get("kind") == PARAM and r.get("reached")]
    values = " and to ".join(dict.fromkeys(PATTERN_WORDS.get(str(r.get("pattern")), "?") for r in rows))
    names = ", ".join(dict.fromkeys(f"`{r.get('argument')}`" for r in rows))
    return f"{names} set to {values}" if rows else ""


def _guards_reaching(cand: Mapping[str, Any], entered: bool) -> list[str]:
    """The kinds of the guard inputs on which head called the function and entered the
    watched block (`entered`), or skipped it (and the candidate did not skip its own block
    on the part of head's test it kept: `cand_reached`, `_kept_test_block`)."""
    return sorted({str(r.get("kind")) for r in cand.get("guards") or ()
                   if r.get("hit") and r.get("reached") is entered
                   and (entered or r.get("cand_reached") is not False)})


def _watched_inputs(cand: Mapping[str, Any], cases: str, guards: Sequence[str]) -> str:
    """"2 of the 3 shape cases and inputs with NaN": the shape cases listed under `cases` and
    the guard inputs of the kinds `guards`, on which head's run did what the evidence says."""
    k, n = len(cand.get(cases) or ()), len(cand.get("outputs") or ())
    where = [f"{k} of the {_shape_cases(n)}"] if k else []
    return " and ".join(where + [_param_words(cand) for g in guards if g == PARAM]
                        + _guard_input_words(cand, [g for g in guards if g != PARAM]))


def _guard_input_words(cand: Mapping[str, Any], kinds: Sequence[str]) -> list[str]:
    """"inputs with NaN", and "inf and NaN in the model's weights" for the kinds every input of
    which that hit put the value there: ESM-2's token ids hold no NaN, and "entered ... by head
    on inputs with inf and NaN" sent its new user looking for an input that could."""
    def weighted(kind: str) -> bool:
        rows = [r for r in cand.get("guards") or () if r.get("hit") and r.get("kind") == kind]
        return bool(rows) and all(r.get("weights") for r in rows)
    inputs = [GUARD_WORDS.get(k, k) for k in kinds if not weighted(k)]
    weights = [GUARD_WORDS.get(k, k) for k in kinds if weighted(k)]
    return ([f"inputs with {' and '.join(inputs)}"] if inputs else []) + \
        ([f"{' and '.join(weights)} in {WEIGHTS}"] if weights else [])


def _dropped_test_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an accepted edit that drops an `if`'s test: where head skipped the block (None where
    no input did: a model that shows nothing of the test, `unexercised`)."""
    if not isinstance(cand.get("skip"), int) or not (cand.get("skipped") or _guards_reaching(cand, False)):
        return None
    return (f"the block at line {cand['skip']} skipped by head on "
            f"{_watched_inputs(cand, 'skipped', _guards_reaching(cand, False))}")


def _replaced_block(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For an edit that replaces a whole `if <test>: <block>` (no `else`) by code with no `if`
    left, which does the block's work in its own words and selects it (`s = s *
    torch.where(m > 5.0, 5.0 / m, 1.0)` for `if m > 5.0: s = s * (5.0 / m)`): head's first
    line of the block. Where head
    skips the block, equal outputs show only that the selection keeps the values; only an
    input on which head enters it compares the rewritten work with head's. None for any other
    edit, and for a block on the `if`'s own line, where no line event tells the two apart."""
    got = _block_rewrite(original, edit, new_lines)
    return got[0] if got is not None and not got[1] else None


def _selected_block(original: str, edit: Edit, new_lines: Sequence[str]) -> int | None:
    """For an edit that selects head's own expression on the test (`masks =
    torch.where(masks.abs().max() > 1e4, masks.clamp(-1e4, 1e4), masks)` for `if
    masks.abs().max() > 1e4: masks = masks.clamp(-1e4, 1e4)`): head's first line of the
    block. Equal there by construction, so no input need enter it; but where none does, the
    evidence must say so (SAM's mask decoder, whose logits never came near the bound: "`masks`
    equal after line 148" read as the clamp compared)."""
    got = _block_rewrite(original, edit, new_lines)
    return got[0] if got is not None and got[1] else None


def _python_part_kept(original: str, edit: Edit, new_lines: Sequence[str]) -> Any:
    """For an edit of a whole `if <python part> and <tensor test>: <block>` that keeps `if
    <python part>:` as its first line over branchless code (pt2bot/rules/branch_fixes.py
    `_python_part_fixes`: recurrentgemma's `if c and logits.abs().max().item() > 0.5 * c:`
    soft cap as `if c:` over a `torch.cond`): the `if` and the lines under the kept header,
    else None."""
    node = _if_at(original, edit.start_line)
    if node is None or node.orelse or edit.end_line != node.end_lineno or not new_lines or \
            not isinstance(node.test, ast.BoolOp) or not isinstance(node.test.op, ast.And):
        return None
    m = re.match(r"\s*if (.+):\s*$", new_lines[0])
    test = ast.get_source_segment(original, node.test) or ""
    inner = list(new_lines[1:])
    if m is None or not inner or m.group(1).strip() == test or m.group(1).strip() not in test or \
            any(ln.strip().startswith(("if ", "if(", "elif ")) for ln in inner):
        return None
    return node, inner


def _block_rewrite(original: str, edit: Edit, new_lines: Sequence[str]) -> tuple[int, bool] | None:
    """For an edit that replaces a whole `if <test>: <block>` by branchless code (under the
    test's Python part kept as an `if`, `_python_part_kept`): head's first line of the block,
    and whether the edit selects head's own expression on the test (`torch.where`, or
    `torch.cond` between it and the name's value)."""
    node = _whole_if(original, edit, new_lines)
    if node is None:
        kept = _python_part_kept(original, edit, new_lines)
        if kept is None:
            return None
        node, new_lines = kept
    first = node.body[0].lineno
    if first <= (node.test.end_lineno or node.lineno):
        return None
    # the block's own statements, run always (`h = h.clamp(min=-10)` for `if (h < -10).any():
    # h = h.clamp(min=-10)`): where head enters the block the edit runs head's code, so only
    # the inputs that skip it compare anything, and the shape cases are those
    body = [ln.strip() for ln in original.splitlines()[first - 1:node.end_lineno] if ln.strip()]
    new = [ln.strip() for ln in new_lines if ln.strip()]
    if new == body:
        return None
    own = False
    # ... or head's own expression selected (`h = torch.where(c, h * 0.5, h)` for `if c: h = h *
    # 0.5`, the test as the recipe wrote it): where head enters, that is head's value; a shape
    # or dtype of its own would show on the inputs that skip it, where the selection broadcasts
    # and promotes the same way
    st = node.body[0]
    if len(node.body) == 1 and isinstance(st, ast.Assign) and len(st.targets) == 1 and \
            isinstance(st.targets[0], ast.Name):
        expr = ast.get_source_segment(original, st.value)
        name = st.targets[0].id
        forms = ((f"{name} = {_torch(original)}.where(", f", {expr}, {name})"),
                 (f"{name} = {_torch(original)}.cond(", f", lambda: {expr}, lambda: {name}.clone(), ())"))
        own = bool(expr and "\n" not in expr and len(new) == 1 and any(
            new[0].startswith(head) and new[0].endswith(tail) and len(new[0]) > len(head) + len(tail)
            for head, tail in forms))
    return first, own


def _not_entered(cand: Mapping[str, Any]) -> str | None:
    """Why an edit of a whole `if` into branchless code is not shown right on this model: no
    shape case or guard input entered the block, so what the edit computes there was never
    compared with head. As a guard no input exercises, another model of the review that
    enters the block may show it (pt2bot/fixes.py `_verdict`)."""
    line = cand.get("enter")
    if not isinstance(line, int) or "entered" not in cand:
        return None
    if cand.get("entered") or _guards_reaching(cand, True):
        return None
    return (f"no shape case or guard input enters the block at line {line}, so the rewrite of it "
            "was never compared with head where the `if`'s test holds" + A_CASE_WOULD)


def _entered_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an accepted edit of a whole `if` into branchless code: where head entered it."""
    if not isinstance(cand.get("enter"), int):
        return None
    where = _watched_inputs(cand, "entered", _guards_reaching(cand, True))
    return f"the block at line {cand['enter']} entered by head on {where}" if where else None


def _block_line(original: str, edit: Edit) -> int | None:
    """For an edit of `if <test>: <block>` into `if not torch.compiler.is_compiling() and
    <test>:` or `if torch.compiler.is_compiling() or <test>:` (pt2bot/rules/branch_fixes.py
    `_eager_block_fixes`, `_compiled_block_fixes`), head's first line of the block: the edit
    rewrites the header only, and the block starts on a line of its own. None for any other
    edit, an exit (`_exit_line`) included."""
    node = _edited_if(original, edit)
    if node is None or _is_exit(node) or node.body[0].lineno <= (node.test.end_lineno or node.lineno):
        return None
    return node.body[0].lineno


def _told(original: str, edit: Edit) -> dict[str, Any] | None:
    """For a safe edit that gives something in eager only (pt2bot/rules/branch_fixes.py
    `_eager_notes_fixes`: `if not torch.compiler.is_compiling() and <test>:` over a block of
    warnings; pt2bot/rules/edits.py `guard_eager_only`: one call, a print or a log line, put
    under `if not torch.compiler.is_compiling():`), `{line, call}`: head's line whose reaching
    gives it (the block's first line, or the call's own) and the function called there, as
    written (`warnings.warn`; None where that line is no call). None for any other edit."""
    calls = _call_statements(original)
    line = _block_line(original, edit)
    if line is None:
        if _edited_call(calls, edit) is None:
            return None
        line = edit.start_line
    call = calls.get(line)
    return {"line": line, "call": ast.unparse(call.value.func) if call is not None else None}


def _call_statements(original: str) -> dict[int, ast.Expr]:
    """The call statements of `original` by first line (none where it does not parse)."""
    try:
        tree = ast.parse(original)
    except SyntaxError:
        return {}
    return {n.lineno: n for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)}


def _edited_call(calls: Mapping[int, ast.Expr], edit: Edit) -> ast.Expr | None:
    """The call statement that spans exactly the edit's lines, if one does."""
    own = calls.get(edit.start_line)
    return own if own is not None and own.end_lineno == edit.end_line else None


def _selected_evidence(cand: Mapping[str, Any]) -> str | None:
    """For an edit that selects head's own expression on the `if`'s test: on which shape
    cases head entered the block, or that none did (then only the selection's keeping of the
    values was compared, and the expression is head's by construction)."""
    told = cand.get("told")
    if not isinstance(told, Mapping) or not told.get("selected") or not isinstance(told.get("line"), int):
        return None
    shapes, line = told.get("cases") or [], told["line"]
    if shapes:
        return f"the block at line {line} entered by head on {_some_cases(shapes, len(cand.get('outputs') or ()))}"
    params = _param_words(cand)
    if params:
        return f"the block at line {line} entered by head with {params}"
    # a guard input that entered it (held-out batch 39's NaN check: "which no input of the
    # proof compared", then "equal ... with NaN injected", read as a contradiction)
    guards = [g for g in _guards_reaching(cand, True) if g != PARAM]
    if guards:
        words = _guard_input_words(cand, guards)
        return (f"the block at line {line} entered by no shape case, by head "
                + ("with " if all(w.endswith(WEIGHTS) for w in words) else "on ") + " and ".join(words))
    return (f"the block at line {line} entered by no shape case: there the edit selects head's own "
            "expression, the same by construction, which no input of the proof compared")


def _removed_call(original: str, edit: Edit) -> dict[str, Any] | None:
    """For an edit that deletes one call statement and nothing else: `{line, call, removed}`,
    head's line and the function called there, as written. None for any other edit."""
    own = _edited_call(_call_statements(original), edit)
    return None if own is None else {"line": own.lineno, "call": ast.unparse(own.value.func), "removed": True}


def _quieted_evidence(cand: Mapping[str, Any]) -> str | None:
    """For a safe edit that gives a warning in eager only: what compiled code no longer gives,
    and on which shape cases head gave it. The outputs are equal by construction; what the
    user loses, the warning in a compiled training run, is what the evidence must say
    (fast-bss-eval's enhancer warned of a low SI-SDR on one of four shape cases, and the
    evidence said only that the outputs were equal)."""
    told = cand.get("told")
    if not isinstance(told, Mapping) or not isinstance(told.get("line"), int):
        return None
    shapes, line = told.get("cases") or [], told["line"]
    if told.get("selected"):
        return None
    what = f"the `{told['call']}` at line {line}" if told.get("call") else f"line {line}"
    if told.get("removed"):
        # (a print is no output: equal outputs say nothing of it, and eager loses it too)
        if not shapes:
            return f"the edit removes {what}, which no shape case reaches in head's eager run"
        return (f"but the edit removes {what}, which head's eager run reaches on "
                f"{_some_cases(shapes, len(cand.get('outputs') or ()))}: eager code no longer "
                "gives it either")
    if not shapes:
        return (f"no shape case reaches {what} in head's eager run, so none shows what a "
                "compiled run no longer gives")
    where = _some_cases(shapes, len(cand.get("outputs") or ()))
    return (f"but compiled code skips {what}, which head's eager run reaches on {where}: "
            "a compiled run there no longer gives it")


def _some_cases(shapes: Sequence[Any], n: int) -> str:
    """"all 4 shape cases", "shape cases b=2 and b=4", "3 of the 6 shape cases"."""
    if len(shapes) >= n:
        return f"all {n} shape cases" if n > 1 else "the shape case"
    if len(shapes) <= 2 and all(isinstance(s, Mapping) and s for s in shapes):
        return f"shape case{'s' if len(shapes) > 1 else ''} " + " and ".join(
            ", ".join(f"{k}={v}" for k, v in s.items()) for s in shapes)
    return f"{len(shapes)} of the {_shape_cases(n)}"


def _always_runs(original: str, patched: str, edit: Edit) -> bool:
    """Whether the edited `if` (`_edited_if`; the edit leaves the line it starts on) tests
    `<am I compiling?>() or ...` in the patched text: compiled code always enters its block
    (`_compiled_block_fixes`), where `not <am I compiling?>() and ...` never does."""
    import ast

    head = _edited_if(original, edit)
    node = _if_at(patched, head.lineno) if head is not None else None
    return (node is not None and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or)
            and isinstance(node.test.values[0], ast.Call)
            and asks_compiling([ast.unparse(node.test.values[0])], patched))


def _cases_reaching(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths, head_swap: Swap,
                    line: int, skipping: bool = False) -> list[dict[str, Any]]:
    """The shapes of the shape cases on which head's eager run reaches `line` of the swapped
    function (a block's first line, an early exit's statement); `skipping`: those on which it
    calls the function and never reaches the line (the block skipped on every call)."""
    out = []
    for case in cases:
        with injecting(head_swap, Injection(WATCH_ONLY, "", 0, watch=line)) as inj, call_mode():
            _try_forward(model, case, paths)
        if (bool(inj.returns) and not inj.reached) if skipping else inj.reached:
            out.append(dict(case.shape))
    return out


# a runtime assertion's expression, from the message dynamo gives it
_ASSERTED = re.compile(r"Runtime assertion failed for expression (.+?) on node")
# an unbacked size (`u0`) held equal to a number, or above one past 1
_ASSUMED = re.compile(r"^(?:Eq\((u\d+), (\d+)\)|Eq\((\d+), (u\d+)\)|(u\d+) >= (\d+))$")


def _assumes_size(expr: str) -> bool:
    """Whether a runtime assertion holds a data-dependent size to a number (`Eq(u0, 4)`) or
    above 1 (`u0 >= 4`): an assumption compiled code makes that eager code may not. Under
    capture_dynamic_output_shape_ops, torcheval's `num_tp[mask] / num_labels` compiled as
    `Eq(u0, 4)`: where eager broadcasts a selection of one class, compiled code raises. (An
    upper bound, `u0 <= 4`, is what the selection's source size already says.)"""
    m = _ASSUMED.match(expr.strip())
    if not m:
        return False
    number = next(g for g in m.groups() if g is not None and g.isdigit())
    return int(number) >= 2 if m.group(6) else True


def _assumed_caveat(assumed: Sequence[str]) -> str:
    """What a setting's compiled code assumes of a data-dependent size, said with its evidence:
    where eager code would raise for any other size too (pytorch3d's one-hot selection
    reshaped to the batch, `Eq(u0, 2)`), nothing is lost; where it broadcasts a selection of one
    (torcheval's weighted recall, `Eq(u0, 4)`), compiled code raises where head returns. Which
    one it is, no input of the proof tells, so the user is told."""
    shown = ", ".join(f"`{a}`" for a in assumed[:3]) + (f" and {len(assumed) - 3} more" if len(assumed) > 3 else "")
    return (f"but compiled code asserts {shown} of a data-dependent size: an input whose data "
            "make that size another number raises there, as head's eager code does unless it "
            "broadcasts a selection of one element")


def compiled_outputs(model: Any, cases: Sequence[CaseInputs], head_outs: Sequence[Any],
                     paths: RepoPaths, tolerance: Any,
                     head_again: Sequence[Any] | None = None,
                     asserted: list[str] | None = None) -> list[dict[str, Any]]:
    """The model compiled (eager backend, under whatever dynamo settings are in force) on
    every case, against head's eager outputs (less head's own noise, `_compare_stable`): one
    row per case; a compile or run that raises is a mismatch with its message. `asserted`
    gets the expressions of the runtime assertions dynamo put into the graphs."""
    import torch

    def recording(gm: Any, _example_inputs: Any) -> Any:
        for n in gm.graph.nodes:
            if n.op == "call_function" and str(n.target).startswith("aten._assert_scalar") \
                    and len(n.args) > 1:
                m = _ASSERTED.search(str(n.args[1]))
                if m:
                    asserted.append(m.group(1))     # (only given where `asserted` is a list)
        return gm.forward

    again = list(head_again) if head_again is not None else [None] * len(cases)
    reset_dynamo()
    try:
        # once: every case's frames share it
        compiled = torch.compile(model, backend=recording if asserted is not None else "eager")
        return [{"shape": dict(case.shape), **_compiled_row(lambda: compiled, case, expected, paths,
                                                            tolerance, second)}
                for case, expected, second in zip(cases, head_outs, again)]
    finally:
        reset_dynamo()


def unprovable_on(device: str, cand: Mapping[str, Any]) -> str | None:
    """Why `cand` cannot be proven on `device`, if it cannot. On CUDA, a candidate asserting
    with `torch._assert_async`: its guard run fires the assertion on purpose, and there that
    is a device-side assert, which ends the worker's CUDA context for every candidate after
    it."""
    if str(device).startswith("cuda") and any(
            "_assert_async" in str(line) for line in cand.get("lines") or ()):
        return ("not proven on CUDA: a failing torch._assert_async is a device-side assert "
                "that ends the proof worker's CUDA context")
    return None


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def head_states(model: Any, cases: Sequence[CaseInputs], paths: RepoPaths
                ) -> tuple[dict[tuple[int, str], tuple[Any, Any]], list[dict[str, Any]]]:
    """The Python scalars head's modules hold after a call (`scalar_attributes`: the ones a
    call creates too, `self.fill_frac_ema = ...`, which every call starts without, as the
    modules were built), and what head's model keeps after each case's eager call
    (`kept_state`), each call from the model's state as built (`_seeded_forward`) as a
    candidate's is. Every candidate is compared on those same attributes. Measured twice: what
    differs between head's own two runs (the time of the last call, a count kept outside the
    module) says nothing of a candidate, and is left out of every case's state."""
    with call_mode():
        _seeded_forward(model, cases[0], paths)
    kept = scalar_attributes(model)

    def once() -> list[dict[str, Any]]:
        out = []
        with call_mode():
            for case in cases:
                _seeded_forward(model, case, paths)
                out.append(kept_state(model, kept))
        return out

    first, second = once(), once()
    varying = {label for a, b in zip(first, second) for label, value in a.items()
               if label not in b or not _compare(value, b[label], None)["match"]}
    return kept, [{label: v for label, v in state.items() if label not in varying} for state in first]


def prove_candidate(cand: Mapping[str, Any], model: Any, cases: list[CaseInputs],
                    head_outs: list[Any], head: dict[str, Any], model_spec: dict[str, Any],
                    run_cfg: dict[str, Any], paths: RepoPaths, phases: Sequence[str],
                    limit: float | None, guard_cache: dict[str, GuardCache],
                    backend_cache: dict[str, Any] | None = None) -> dict[str, Any]:
    """One candidate (a spec's `candidates[]` item) put in place, measured and judged against
    `head` (what `measure_state` gave for head's model): the verdict `{accepted, reason,
    evidence, ...}`. Whatever the patched code does is a verdict, never an exception.

    A dynamo setting (pt2bot/fixes.py SETTINGS) runs head's own code, so what it measures is
    the same at every site it is offered for: a model's worker measures each setting once
    (`backend_cache`) and judges each site on those facts, unless judging a later site needs
    what the first run left out (`_reusable`)."""
    backend_cache = {} if backend_cache is None else backend_cache
    original = str(cand["original"])
    edit = Edit.in_text(str(cand["path"]), int(cand["start_line"]), int(cand["end_line"]),
                        len(cand.get("lines") or ()), original)
    targets = cand.get("targets") or ()
    setting = str(cand.get("setting") or "")
    runs = backend_cache.setdefault(SETTING_RUNS, {})
    reused = bool(setting) and setting in runs and _reusable(runs[setting], head, targets, edit)
    if reused:
        measured = copy.deepcopy(runs[setting]["measured"])
    else:
        measured, done = _measure_candidate(cand, edit, model, cases, head_outs, head, model_spec,
                                            run_cfg, paths, phases, limit, guard_cache,
                                            backend_cache)
        if setting:
            runs[setting] = {"measured": copy.deepcopy(measured), **done}
    measured["device_assert"] = any("_assert_async" in str(line) for line in cand.get("lines") or ())
    verdict = judge(head, measured, targets, edit)
    verdict.pop("probe", None)   # (the judge's request for a third size, answered or not)
    stats = {k: measured.get(k) for k in ("graph_count",) if k in measured}
    return {**verdict, **stats, "cases": len(measured.get("outputs") or ()),
            "guards": sorted({str(g.get("kind")) for g in measured.get("guards") or ()}),
            **({"reused": True} if reused else {})}


def _reusable(run: Mapping[str, Any], head: Mapping[str, Any],
              targets: Sequence[Mapping[str, Any]], edit: Edit) -> bool:
    """Whether a setting's earlier run (`_measure_candidate`'s facts and how far it went)
    judges another site as that site's own run would: its run would measure the same facts,
    and stop where they refuse it. A run its break pass stopped (the first site's break
    still there) has no matrix or export: reusable only where the break pass refuses this
    site too. A finished run is reusable unless it accepts this site without having compiled
    with the configured backend (the first site was refused before that check)."""
    measured = run["measured"]
    if run.get("stopped"):
        return _refused_by_breaks(head, measured, targets, edit)
    if measured.get("error") or run.get("backend"):
        return True
    so_far = judge(head, measured, targets, edit)
    return not (so_far["accepted"] or so_far.get("unexercised"))


def _measure_candidate(cand: Mapping[str, Any], edit: Edit, model: Any, cases: list[CaseInputs],
                       head_outs: list[Any], head: dict[str, Any], model_spec: dict[str, Any],
                       run_cfg: dict[str, Any], paths: RepoPaths, phases: Sequence[str],
                       limit: float | None, guard_cache: dict[str, GuardCache],
                       backend_cache: dict[str, Any]) -> tuple[dict[str, Any], dict[str, bool]]:
    """What `prove_candidate` judges, and how far the measuring went: `stopped`, the break
    pass refused the candidate and nothing after it ran; `backend`, it reached the compile
    with the configured backend."""
    import torch

    original, patched = str(cand["original"]), str(cand["patched"])
    replaced = original.splitlines()[edit.start_line - 1:edit.end_line]
    done = {"stopped": False, "backend": False}
    # a dynamo setting (pt2bot/fixes.py SETTINGS): head's own code, run with it set; what it
    # can change is only what compiles and what compiled code computes
    setting = str(cand.get("setting") or "")
    kinds = [] if setting else guard_kinds(cand.get("guards") or (), replaced)
    equal = [] if setting else equal_tests(replaced)
    if equal:
        kinds = sorted({*kinds, EQUAL})
    measured: dict[str, Any] = {"setting": setting} if setting else {}
    # the new code, without the comments a candidate keeps from the lines it replaces
    # (pt2bot/rules/edits.py `keep_comments`): what the edit's form is read from
    new_code = tuple(ln for ln in cand.get("lines") or () if not ln.lstrip().startswith("#"))
    compiled = not setting and asks_compiling(new_code, patched)
    # (a safe edit, a block of warnings given in eager only, computes nothing compiled code
    # skips: no shape case needs to enter it)
    block = _block_line(original, edit) if compiled and not cand.get("safe") else None
    exit_at = _exit_line(original, edit) if compiled and not cand.get("safe") else None
    if block is not None:
        measured["block"] = block
        if _always_runs(original, patched, edit):
            measured["always"] = True
    if exit_at is not None:
        measured["exit"] = exit_at
        # a `break` taken in eager only: compiled code runs the loop to its end
        node = _edited_if(original, edit)
        if node is not None and isinstance(node.body[-1], ast.Break):
            measured["loop_exit"] = True
    # a safe edit that gives a warning (a print, a log line) in eager only: on which shape
    # cases head gives it, which compiled code now never does (`_quieted_evidence`)
    told = _told(original, edit) if compiled and cand.get("safe") else None
    if told is None and not setting and not compiled and not any(ln.strip() for ln in new_code):
        # an edit that deletes a call (a print, a log line): what eager code no longer gives
        told = _removed_call(original, edit)
    # the line whose reaching, in head's eager run, says that an input takes the exit or
    # enters the block (none for an exit on the `if`'s own line: no line event tells)
    watch = next((w for w in (exit_at, block) if w is not None and w > 0), None)
    # an edit that keeps one arm of an `if`/`else`: whether a shape case runs the arm it drops
    dropped = None if compiled or setting else _dropped_arm(original, edit, new_code)
    if dropped is not None:
        measured["dropped"] = dropped
        watch = dropped["line"] if dropped["line"] > 0 else None
    # an early return now selected by `torch.where`: which shape cases and guard inputs take it
    early = None if compiled or setting or dropped else _early_return(original, edit, new_code)
    # a loop's `break` that the edit runs past, its values held: the same question, whether
    # an input takes it
    frozen = None if compiled or setting or dropped or early is not None else _frozen_exit(
        original, edit, new_code)
    if frozen is not None:
        early = frozen
        measured["frozen"] = True
    if early is not None:
        measured["early"] = early
        watch = early if early > 0 else None
    # an `if` whose test the edit drops, its masked writes selected instead: which shape
    # cases and guard inputs skip the block
    skip = None if compiled or setting or dropped or early is not None else _dropped_test(
        original, edit, new_code)
    if skip is not None:
        measured["skip"] = skip
        watch = skip if skip > 0 else None
    kept_test = _kept_test_block(original, edit, new_code) if skip is not None else None
    # an `if` the edit replaces whole by branchless code that computes its block's work and
    # selects it (`torch.where` on the test): which shape cases and guard inputs enter the block
    enter = None if compiled or setting or dropped or early is not None or skip is not None \
        else _replaced_block(original, edit, new_code)
    if enter is not None:
        measured["enter"] = enter
        watch = enter
    selected = None if told is not None or compiled or setting or dropped or early is not None \
        or skip is not None or enter is not None else _selected_block(original, edit, new_code)
    if selected is not None:
        # which shape cases enter the block whose expression the edit selects: said, never
        # refused on (equal there by construction)
        told = {"line": selected, "call": None, "selected": True}
    if set(kinds) & RAISING_GUARDS:
        measured["raises"] = sorted(set(_RAISE_RE.findall("\n".join(replaced))))
    span = None if setting else _statement_span(original, edit)
    if span is not None:
        measured["statement"] = span
    after = None if setting else _next_statement(original, edit)
    if after is not None:
        measured["next_statement"] = after
    stage: str | None = None   # what ran out of the candidate's time, when not the model
    targets = cand.get("targets") or ()

    def proceed(state: dict[str, Any]) -> bool:
        done["stopped"] = _refused_by_breaks(head, {**measured, **state}, targets, edit)
        return not done["stopped"]

    # head's outputs once more, once per model: the leaves its own two runs disagree on are
    # its noise, compared with nothing (`_compare_stable`)
    if HEAD_AGAIN not in backend_cache:
        with call_mode():
            backend_cache[HEAD_AGAIN] = [_seeded_forward(model, c, paths) for c in cases]
    head_again = backend_cache[HEAD_AGAIN]
    # head's gradients, once per model, twice for their noise: a candidate safe by
    # construction computes what head does (a setting's compiled gradients are compared too)
    if not cand.get("safe") and GRADIENTS not in backend_cache:
        backend_cache[GRADIENTS] = head_gradients(model, cases, paths)
        backend_cache[GRADIENT_NOISE] = [
            _gradient_noise(h, a, model_spec.get("tolerance"), digest=i > 0)
            for i, (h, a) in enumerate(zip(backend_cache[GRADIENTS], head_gradients(model, cases, paths)))]
    # and head's outputs and gradients on constant inputs, once per model: an edit that asks
    # `is_compiling()` leaves eager, and its backward, as head's
    # (a setting's: compiled code with it set, on the same constant inputs; an unbacked size
    # that compiled code assumes past 1 fails a runtime assertion where head's eager code
    # broadcasts: torcheval's weighted recall with one class in the labels)
    constants = not cand.get("safe") and (bool(setting) or not compiled)
    if constants and CONSTANT not in backend_cache:
        backend_cache[CONSTANT] = head_on_constants(model, cases[0], paths)
    # the Python scalars the model's modules hold after a call, compared after each call, the
    # same for head and every candidate: every call starts from their values as built
    # (pt2bot/smoke/inputs.py `restore_state`; a candidate that made a float a tensor leaves
    # no tensor to the next)
    state = not setting and not cand.get("safe")
    try:
        if state and HEAD_STATE not in backend_cache:
            backend_cache[KEPT], backend_cache[HEAD_STATE] = head_states(model, cases, paths)
        kept = backend_cache.get(KEPT) or {}
        with time_limit(limit, CandidateTimeout), (
                torch._dynamo.config.patch(**{setting: True}) if setting else contextlib.nullcontext()):
            head_swap = (function_at(paths, edit.path, original, edit)
                         if kinds or watch is not None or told is not None else None)
            if watch is not None and head_swap is not None and not watchable(head_swap):
                # every input would read as not reaching the line: "no shape case enters the
                # block" said of a block every case enters (geoopt's weighted midpoint)
                raise NotApplicable(f"`{head_swap.qualname}` runs as TorchScript in eager, where no "
                                    f"Python line of it runs, so which inputs reach line {watch} "
                                    "cannot be observed")
            with patched_function(paths, edit.path, original, patched, edit) as swap:
                outs, states = [], []
                with call_mode():
                    for case in cases:
                        outs.append(_seeded_forward(model, case, paths))
                        states.append(kept_state(model, kept) if state else None)
                rows = [{"shape": dict(c.shape),
                         **_compare_stable(h, h2, o, model_spec.get("tolerance")),
                         **({"blank": blank} if (blank := nothing_finite(h)) else {}),
                         **({"uniform": True} if one_value(h) else {})}
                        for c, h, h2, o in zip(cases, head_outs, head_again, outs)]
                measured["outputs"] = rows
                ok = all(r["match"] for r in rows)
                if ok and state:
                    measured["state"] = [
                        {"shape": dict(c.shape), **compare_state(h, got, model_spec.get("tolerance"))}
                        for c, h, got in zip(cases, backend_cache[HEAD_STATE], states)]
                    ok = all(r["match"] for r in measured["state"])
                if ok and not setting and not cand.get("safe"):
                    measured.update(_returned(model, cases[0], paths, edit, swap, backend_cache))
                if ok and watch is not None and head_swap is not None:
                    # an exit or a block compiled code now decides alone, or an arm dropped:
                    # which shape cases head's eager run takes it on (eager runs only), before
                    # any compile; where none does, nothing after could show the edit right
                    if skip is not None:
                        # (a guard input may skip the block too: nothing to stop at yet)
                        measured["skipped"] = _cases_reaching(model, cases, paths, head_swap, watch,
                                                              skipping=True)
                        if kept_test is not None and measured["skipped"]:
                            entered = _cases_reaching(model, cases, paths, swap, kept_test)
                            measured["skipped"] = [s for s in measured["skipped"] if s in entered]
                    elif enter is not None:
                        # (and a guard input may enter it)
                        measured["entered"] = _cases_reaching(model, cases, paths, head_swap, watch)
                    else:
                        measured["reached"] = _cases_reaching(model, cases, paths, head_swap, watch)
                        # and an exit or a block compiled code decides alone is only ever
                        # shown right by the shape matrix's compiled runs: without it, nothing
                        # more to run (an early return selected may still be taken by a guard
                        # input)
                        ok = early is not None or (not _unreached(measured) and
                                                   (dropped is not None or "matrix" in phases))
                if ok and told is not None and head_swap is not None and watchable(head_swap):
                    measured["told"] = {**told, "cases": _cases_reaching(model, cases, paths, head_swap,
                                                                         told["line"])}
                if ok and (setting or (compiled and watch is None and not cand.get("safe"))):
                    # the same code in eager: only compiled code can differ, on every case (an
                    # edit that sends compiled code down another branch: the function's own
                    # branch for export, a check asserted asynchronously)
                    asserted: list[str] = []
                    stage = "its compiled runs on the shape cases" + (f" with `{setting}` set" if setting else "")
                    measured["compiled"] = compiled_outputs(model, cases, head_outs, paths,
                                                            model_spec.get("tolerance"), head_again,
                                                            asserted if setting else None)
                    stage = None
                    ok = all(r["match"] for r in measured["compiled"])
                    assumed = sorted({a for a in asserted if _assumes_size(a)})
                    if assumed:
                        measured["assumed"] = assumed
                if ok and not cand.get("safe") and not compiled and not setting:
                    # what the replaced statements leave behind, head against candidate: a
                    # value the outputs never read (a time, a flag) still reaches other callers
                    site = probe_site(original, patched, edit)
                    if site is not None:
                        measured["values"] = bound_values(model, cases, paths, edit, original, site,
                                                          model_spec.get("tolerance"), backend_cache)
                        ok = all(r["match"] for r in measured["values"]["rows"])
                # the break pass first: a candidate its facts already refuse (the targeted
                # break still there, a new one) stops before the guard inputs, the shape
                # matrix and export, which could only refuse it for another reason
                first = [p for p in phases if p == "breaks" or (
                    p == "matrix" and one_compile(phases, model_spec, run_cfg))]
                if ok and first:
                    _measure_more(measured, model, cases, outs, model_spec, run_cfg, paths,
                                  first, proceed)
                    ok = not _refused_by_breaks(head, measured, targets, edit)
                if ok and not cand.get("safe"):
                    # a dynamo setting changes only compiled code, its backward too: with
                    # capture_dynamic_output_shape_ops, torcheval's compiled macro accuracy gave
                    # outputs that no longer required grad, where head's compiled ones did
                    grads = compare_gradients(model, cases, paths, backend_cache.get(GRADIENTS) or [],
                                              model_spec.get("tolerance"),
                                              compiled=compiled or bool(setting),
                                              noise=backend_cache.get(GRADIENT_NOISE))
                    if grads is not None and (compiled or setting):
                        grads["compiled"] = True
                    if grads is not None:
                        measured["gradients"] = grads
                        ok = bool(grads["match"])
                if ok and head_swap is not None:
                    def at_stage(now: str | None) -> None:
                        nonlocal stage
                        stage = now

                    cache = guard_cache.setdefault(f"{edit.path}:{head_swap.qualname}", {})
                    prefer = tuple(dict.fromkeys(re.findall(r"[A-Za-z_]\w*", "\n".join(replaced))))
                    # (an edit that selects head's expression watches its block too: which
                    # guard inputs enter it, for the evidence)
                    selected_at = told["line"] if told is not None and told.get("selected") else None
                    measured["guards"] = guard_checks(
                        model, cases[0], paths, kinds, head_swap, swap, model_spec.get("tolerance"),
                        cache, compiled=compiled, watch=watch if watch is not None else selected_at,
                        prefer=prefer, equal=equal,
                        block=_if_block(original, edit), on_stage=at_stage, cand_watch=kept_test)
                    # (a guard no argument can carry is judged apart: the rest still runs)
                    ok = all(g.get("match") for g in measured["guards"] if g.get("hit"))
                    # (an edit that asks `is_compiling()` leaves eager, and its backward, as head's)
                    if ok and not cand.get("safe") and not compiled:
                        measured["guard_gradients"] = guard_gradients(
                            model, cases[0], paths, measured["guards"], head_swap, swap,
                            model_spec.get("tolerance"), cache, prefer, skip is not None)
                        ok = (measured["guard_gradients"] or {}).get("match") is not False
                    # a block entered, or an exit taken, by no shape case nor guard input: the
                    # learned scalars its test reads set past it, which no input changes
                    line = told["line"] if told is not None and told.get("selected") else \
                        enter if enter is not None else early if early is not None and early > 0 else None
                    names = tested_parameters(original, edit.start_line) if ok and line is not None \
                        and not _reached_any(measured) and watchable(head_swap) else ()
                    if names:
                        stage = "head's own run with the parameters the `if`'s test reads set to ±1e6"
                        rows = parameter_guards(model, cases[0], paths, names, head_swap, swap,
                                                model_spec.get("tolerance"), int(line))
                        stage = None
                        measured["guards"] = [*measured["guards"], *rows]
                        ok = all(r.get("match") for r in rows)
                if ok and constants:
                    # (a setting's side is compiled code with it set, from a fresh dynamo)
                    if setting:
                        reset_dynamo()
                    try:
                        measured["constants"] = constant_checks(
                            model, cases[0], paths, backend_cache[CONSTANT], model_spec.get("tolerance"),
                            run=torch.compile(model, backend="eager") if setting else None)
                    finally:
                        if setting:
                            reset_dynamo()
                    ok = all(r["match"] for r in measured["constants"])
                if ok:
                    _measure_more(measured, model, cases, outs, model_spec, run_cfg, paths,
                                  [p for p in phases if p not in first])
                    # only a candidate the eager facts accept pays for a compile with the
                    # configured backend, and only one that changes what is computed: a safe
                    # one (a print kept in eager) leaves the graph's operations as head's
                    so_far = judge(head, measured, targets, edit)
                    if so_far.get("probe"):
                        # only a new recompile, of the kind dynamo makes once per frame, is in
                        # the way: a third size says whether it is once
                        stage = "the shape matrix compiled again with a third size"
                        measured["probe"] = _probe_run(model, cases, outs, model_spec, run_cfg, paths)
                        so_far = judge(head, measured, targets, edit)
                    if not cand.get("safe") and (so_far["accepted"] or so_far.get("unexercised")):
                        done["backend"] = True
                        stage = f"its compile with {run_cfg.get('backend') or 'inductor'}"
                        row = backend_check(model, cases[0], head_outs[0], paths, run_cfg,
                                            model_spec.get("tolerance"))
                        if row is not None:
                            measured["backend"] = row
            if measured.get("backend") and not measured["backend"]["match"]:
                # the fix is to blame only when head's own code matches there
                if HEAD not in backend_cache:
                    backend_cache[HEAD] = backend_check(model, cases[0], head_outs[0], paths,
                                                        run_cfg, model_spec.get("tolerance"))
                measured["backend"]["head_match"] = bool((backend_cache[HEAD] or {}).get("match"))
    except NotApplicable as e:
        measured["error"] = str(e)
    except CandidateTimeout as e:
        # a loop that now runs to its end compiled (an early stop moved to eager) can be a
        # compile of minutes, not a hang: the reason says both, and how long head's own
        # measurement took here, which tells a slow machine from a hang (held-out batch 38's
        # setting read "it hangs" where its compiles were slow under load)
        took = backend_cache.get(HEAD_S)
        head_s = (f"; head's own measurement ({_phase_words(phases)}) took {took:.0f} s here"
                  if isinstance(took, (int, float)) else "")
        measured["error"] = (f"the patched model gave {e}{head_s}: it hangs, or compiles or runs "
                             "slower than that" if stage is None else
                             f"{stage} did not finish in the candidate's time ({e}{head_s})")
    except ModelError as e:
        measured["error"] = f"the patched model raises: {e.message}"
    except Exception as e:  # noqa: BLE001 - whatever the patched code does is a result
        measured["error"] = f"the patched model fails: {type(e).__name__}: {str(e)[:500]}"
    finally:
        with contextlib.suppress(Exception):
            reset_dynamo()
    return measured, done


def _phase_words(phases: Sequence[str]) -> str:
    said = {"breaks": "break pass", "matrix": "shape matrix", "export": "export"}
    return ", ".join(["eager run", *(said.get(p, p) for p in phases)])


def main(argv: list[str] | None = None) -> int:
    got = read_spec(argv, "pt2bot.smoke.verify")
    if got is None:
        return 2
    spec, out_path = got
    progress = str(spec["progress_path"])

    def emit(record: dict[str, Any]) -> None:
        with open(progress, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record, default=str) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    with route_logs(spec.get("log_path")):
        verify(spec, emit)
    write_json(out_path, {"name": (spec.get("model") or {}).get("name"), "status": "ok"})
    return 0


__all__ = ["CandidateTimeout", "unprovable_on", "GUARD_WORDS", "HEAD", "RAISING_GUARDS", "guard_checks",
           "guard_kinds", "judge", "main", "measure_state", "one_compile", "prove_candidate",
           "verify"]


if __name__ == "__main__":
    sys.exit(main())
