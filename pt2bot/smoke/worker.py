"""The smoke-run worker: measures ONE model in this process and writes its RUN dict.

    python -m pt2bot.smoke.worker SPEC.json OUT.json

SPEC: `{"repo_root", "model": ModelConfig fields, "run": RunConfig fields, "device",
"phases": [...], "log_path", "trace_path", "trace_rel", "trace_cap_bytes", "export_locate",
"watch"}` (`export_locate` false: an export failure whose error names no line is not located
with `draft_export`; `watch`: repo path -> the changed lines whose operands the RUN's
`unevaluated` follows). OUT: the RUN dict of docs/formats.md.

With the "breaks" phase the RUN has `coverage` (the repo lines the model's eager calls
executed and dynamo traced: pt2bot/smoke/coverage.py) and `traced_lines` (those dynamo traced
in the phase's compiled call); with `trace_path`, the structured
trace of the "breaks" and "matrix" phases goes there, capped (the compile report's input,
pt2bot/smoke/compile_report.py), and the RUN's `compile_report` says where. A model that does not
import, gets inputs it cannot take, or raises in forward is a *result* (`status: "error"`,
`error: {kind, message, path, line}`), and the worker still exits 0. A phase that fails for
another reason is recorded in `phase_errors` and the other phases still run; each phase
works alone (the review re-runs only "latency" for its alternating rounds).

`measure(spec)` is the same thing in-process, for tests (`measure_run`: as the typed
`pt2bot.results.ModelRun`).
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import sys
import time
import traceback
import warnings
from typing import Any, Iterator

from pt2bot.config import ModelConfig
from pt2bot.jsonio import write_json
import pt2bot
from pt2bot.results import PHASES, CompileReport, ModelRun, PhaseError
from pt2bot.smoke.advice import measure_advice
from pt2bot.smoke.breaks import measure_breaks
from pt2bot.smoke.coverage import LineCoverage
from pt2bot.smoke.export import measure_export
from pt2bot.smoke.inputs import (CaseInputs, build_inputs, build_model, call_mode, finite_output,
                                  forward_params, infer_dims, one_value, remember_state, run_forward,
                                  seed_all, start_call)
from pt2bot.smoke.matrix import measure_matrix
from pt2bot.smoke.timing import maxrss_mb, measure_latency
from pt2bot.smoke.trace import TRACE_CAP_BYTES, TraceFile, reset_dynamo
from pt2bot.smoke.location import ModelError, RepoPaths, user_location

# The phases whose structured trace goes into the compile report (export and latency compile
# again, for their own purposes; their trace would only repeat the same frames).
TRACED_PHASES = ("breaks", "matrix")
_OWN_CODE = os.path.dirname(os.path.abspath(pt2bot.__file__)) + os.sep


def shape_cases(model_spec: dict[str, Any]) -> list[dict[str, int]]:
    """The matrix of the spec's model, as `ModelConfig.shape_cases` defines it (config.py)."""
    cases = model_spec.get("cases")
    return ModelConfig(
        name=str(model_spec.get("name") or ""), entry=str(model_spec.get("entry") or ""),
        shapes={str(k): tuple(v) for k, v in (model_spec.get("shapes") or {}).items()},
        cases=None if cases is None else tuple(dict(c) for c in cases)).shape_cases()


@contextlib.contextmanager
def route_logs(log_path: str | None) -> Iterator[None]:
    """Torch's loggers and Python warnings go to `log_path` instead of the console.

    Torch installs its own stderr handlers on its loggers; swap them for a file handler
    rather than calling `torch._logging.set_logs` (which resets every torch logger).
    """
    if not log_path:
        yield
        return
    import torch._dynamo  # noqa: F401 - torch installs its log handlers on import; swap after

    os.makedirs(os.path.dirname(os.path.abspath(log_path)) or ".", exist_ok=True)
    fh = logging.FileHandler(log_path, encoding="utf-8", delay=True)
    fh.setFormatter(logging.Formatter("%(levelname).1s %(name)s: %(message)s"))
    swapped: list[tuple[logging.Logger, list[logging.Handler]]] = []
    names = ["torch", "py.warnings"] + [n for n in logging.root.manager.loggerDict
                                        if n.startswith("torch.") and n != "torch.__trace"]
    for n in names:
        lg = logging.getLogger(n)
        if n in ("torch", "py.warnings") or lg.handlers:
            swapped.append((lg, list(lg.handlers)))
            for h in list(lg.handlers):
                if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler):
                    lg.removeHandler(h)
            lg.addHandler(fh)
    logging.captureWarnings(True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            yield
    finally:
        logging.captureWarnings(False)
        for lg, handlers in swapped:
            lg.removeHandler(fh)
            for h in handlers:
                if h not in lg.handlers:
                    lg.addHandler(h)
        fh.close()


def _phase_error(phase: str, exc: BaseException, paths: RepoPaths) -> PhaseError:
    path, line = user_location(exc, paths)
    return PhaseError(phase=phase, kind=type(exc).__name__, message=f"{exc}"[:2000],
                      path=path, line=line,
                      traceback="".join(traceback.format_exception(exc))[-4000:])


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Measure one model as SPEC says; return the RUN dict (never raises for model faults)."""
    return measure_run(spec).to_json()


def measure_run(spec: dict[str, Any]) -> ModelRun:
    """`measure`, as the typed RUN."""
    t_start = time.perf_counter()
    model_spec = dict(spec.get("model") or {})
    run_cfg = dict(spec.get("run") or {})
    device = spec.get("device") or "cpu"
    phases = [p for p in (spec.get("phases") or PHASES) if p in PHASES]
    paths = RepoPaths(spec.get("repo_root") or os.getcwd())
    run = ModelRun.empty(str(model_spec.get("name") or "model"))

    def took() -> float:
        return round(time.perf_counter() - t_start, 3)

    # Coverage goes with the break-counting phase: a latency-only round does not pay for it.
    # `watch`: a review's changed lines on head, whose operands are followed (coverage.py)
    coverage = (LineCoverage(paths.rel, exclude=(_OWN_CODE,), watch=spec.get("watch"))
                if "breaks" in phases and spec.get("coverage", True) else None)
    with route_logs(spec.get("log_path")), contextlib.ExitStack() as stack:
        import torch

        if run_cfg.get("threads"):
            torch.set_num_threads(int(run_cfg["threads"]))
        # The lines the model executes: its import and construction (the latency gate asks
        # whether changed code ran there too), then every case's eager call, once (a line
        # that runs under dynamo runs here too, or dynamo traces it: measure_breaks adds those).
        executing = coverage.executing() if coverage is not None else contextlib.nullcontext()
        try:
            with executing:
                # The same weights on every run of the model (base and head, a shard and the
                # whole review): what the model computes, and the values a data-dependent
                # guard holds, then differ only where the code does.
                seed_all()
                model = build_model(str(model_spec.get("entry") or ""),
                                    model_spec.get("kwargs") or {}, paths,
                                    model_spec.get("config"), train=bool(model_spec.get("train")),
                                    grad=bool(model_spec.get("grad")))
                model = model.to(device)
                cases: list[CaseInputs] = [build_inputs(model_spec, model, shape, device, paths)
                                           for shape in shape_cases(model_spec)]
                infer_dims(cases, forward_params(model))
                remember_state(model)
                eager_outs = []
                with call_mode():
                    for c in cases:
                        start_call(model)
                        eager_outs.append(run_forward(model, c, paths))
        except ModelError as e:
            # the model's log says why too: it is where a user looks first, and it held only what
            # the model printed (often nothing); the worker's stderr is that log
            at = f" at {e.path}:{e.line}" if e.path and e.line else ""
            print(f"pt2bot: the model failed ({e.kind}{at}): {e.message}", file=sys.stderr, flush=True)
            return run.with_(status="error", error=e.to_error(), duration_s=took())
        bad = [dict(c.shape) for c, out in zip(cases, eager_outs) if not finite_output(out)]
        if bad:
            run = run.with_(nonfinite=tuple(bad), unset_weights=unset_weights(model) or None)
        elif eager_outs and all(one_value(out) for out in eager_outs):
            run = run.with_(uniform=True)
        trace = _open_trace(spec, phases)
        if trace is not None:
            stack.callback(trace.close)
        rss0 = maxrss_mb()
        for phase in phases:
            t_phase = time.perf_counter()
            try:
                attached = (trace.attached() if trace is not None and phase in TRACED_PHASES
                            else contextlib.nullcontext())
                with attached:
                    got = _run_phase(phase, model, cases, eager_outs, model_spec, run_cfg,
                                     device, paths, rss0, coverage, so_far=run,
                                     locate_export=spec.get("export_locate", True) is not False)
                if run.compile_s is not None and got.get("compile_s"):
                    # the process's first compile is the cold/warm figure; later phases
                    # reuse what it put in the inductor cache
                    got.pop("compile_s")
                run = run.updated(got).with_(phases=(*run.phases, phase))
            except Exception as e:  # noqa: BLE001 - one broken phase must not lose the rest
                run = run.with_(phase_errors=(*run.phase_errors, _phase_error(phase, e, paths)))
                with contextlib.suppress(Exception):
                    reset_dynamo()
            run = run.with_(phase_s={**run.phase_s,
                                     phase: round(time.perf_counter() - t_phase, 3)})
        if coverage is not None:   # the eager lines hold even when the breaks phase failed
            run = run.with_(coverage=coverage.to_json())
            unevaluated = coverage.unevaluated_json()
            if unevaluated is not None:
                run = run.with_(unevaluated=unevaluated)
            traced = coverage.traced_json()
            if traced is not None and run.graph_breaks is not None:
                # only with the breaks it goes with: a failed pass traced an unknown part
                run = run.with_(traced_lines=traced)
        if trace is not None:
            trace.close()
            run = run.with_(compile_report=CompileReport(
                trace=str(spec.get("trace_rel") or spec["trace_path"]), bytes=trace.bytes,
                truncated=trace.truncated))
    return run.with_(duration_s=took())


def _open_trace(spec: dict[str, Any], phases: list[str]) -> TraceFile | None:
    """The compile report's trace file, when the spec asks for one and a traced phase runs."""
    path = spec.get("trace_path")
    if not path or not any(p in TRACED_PHASES for p in phases):
        return None
    try:
        return TraceFile(str(path), int(spec.get("trace_cap_bytes") or TRACE_CAP_BYTES))
    except OSError:
        return None   # no trace is a missing report, never a failed model


def _run_phase(phase: str, model: Any, cases: list[CaseInputs], eager_outs: list[Any],
               model_spec: dict[str, Any], run_cfg: dict[str, Any], device: str,
               paths: RepoPaths, rss0: float,
               coverage: LineCoverage | None = None,
               so_far: ModelRun | None = None, locate_export: bool = True) -> dict[str, Any]:
    """One phase's keys of the RUN, as JSON (the phase modules speak the file format);
    `so_far`: the RUN of the phases before (the advice reuses the matrix's compiles)."""
    # each compiled call starts from the buffers and the generator state its eager call
    # started from
    fresh = functools.partial(start_call, model)
    if phase == "breaks":
        return measure_breaks(model, cases[0], paths, coverage=coverage, before_call=fresh)
    if phase == "matrix":
        got = measure_matrix(model, cases, eager_outs, model_spec, run_cfg, paths, before_call=fresh)
        return {**got, **_matrix_only_breaks(got.pop("breaks", []), so_far)}
    if phase == "export":
        return {"export": measure_export(model, cases, eager_outs, model_spec, paths,
                                         locate=locate_export)}
    if phase == "advice":
        matrix = None
        if so_far is not None and so_far.recompiles is not None:
            matrix = {"recompiles": so_far.recompiles.to_json(),
                      "specialized": [x.to_json() for x in so_far.specialized or ()]}
        return measure_advice(model, cases, eager_outs, model_spec, run_cfg, paths, matrix)
    if phase == "latency":
        return measure_latency(model, cases, model_spec, run_cfg, device, rss_baseline_mb=rss0)
    raise ValueError(f"unknown phase {phase!r}")


# a weight past this is not one a model computes with: memory never written (`torch.empty`)
UNSET_ABS = 1e30


def unset_weights(model: Any, most: int = 3) -> tuple[str, ...]:
    """The floating-point parameters and buffers of `model` holding NaN, inf or values past
    `UNSET_ABS` as built, by name (at most `most`): what an output with no finite value often
    comes from in a model built from source, a weight left `torch.empty` until a checkpoint
    is loaded (whisper's `positional_embedding`: values up to 5.7e33)."""
    import torch

    out: list[str] = []
    named = list(model.named_parameters()) + list(model.named_buffers()) if hasattr(model, "named_buffers") else []
    for name, t in named:
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() and t.layout == torch.strided:
            v = t.detach()
            if not bool(torch.isfinite(v).all()) or float(v.abs().max()) > UNSET_ABS:
                out.append(name)
                if len(out) >= most:
                    break
    return tuple(out)


def _matrix_only_breaks(seen: list[dict[str, Any]], so_far: ModelRun | None) -> dict[str, Any]:
    """The break pass's breaks and, after them, those only the shape matrix's compiles hit
    (`matrix_only`), as the RUN's `graph_breaks`; nothing where the break pass did not run.
    The pass compiles one case with its sizes static; the matrix makes sizes dynamic, and a
    break can then appear that no static compile has (whisper's `is_causal=mask is not None
    and n_ctx > 1` becomes a symbolic bool `scaled_dot_product_attention` refuses). Reported
    only as recompiles and resumed frames, it left a review saying "0 graph breaks"."""
    if so_far is None or so_far.graph_breaks is None:
        return {}
    known = {(b.path, b.line) for b in so_far.graph_breaks}
    extra = [{**b, "matrix_only": True} for b in seen
             if b.get("path") and isinstance(b.get("line"), int) and (b["path"], b["line"]) not in known]
    if not extra:
        return {}
    return {"graph_breaks": [b.to_json() for b in so_far.graph_breaks] + extra}


def redirect_std_to(log_path: str) -> None:
    """Everything the model or torch prints (C++ included) lands in the log, not the console."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def read_spec(argv: list[str] | None, module: str) -> tuple[dict[str, Any], str] | None:
    """A worker's command line, `SPEC.json OUT.json`: the spec read, and stdout/stderr sent to
    its log. None (usage printed) when the arguments are not those two."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2:
        print(f"usage: python -m {module} SPEC.json OUT.json", file=sys.stderr)
        return None
    spec_path, out_path = argv
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if spec.get("log_path"):
        redirect_std_to(spec["log_path"])
    return spec, out_path


def main(argv: list[str] | None = None) -> int:
    got = read_spec(argv, "pt2bot.smoke.worker")
    if got is None:
        return 2
    spec, out_path = got
    write_json(out_path, measure(spec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
