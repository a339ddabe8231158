"""The smoke-run worker: measures ONE model in this process and writes its RUN dict.

    python -m pt2bot.smoke.worker SPEC.json OUT.json

SPEC: `{"repo_root", "model": ModelConfig fields, "run": RunConfig fields, "device",
"phases": [...], "log_path"}`. OUT: the RUN dict of docs/formats.md. A model that does not
import, gets inputs it cannot take, or raises in forward is a *result* (`status: "error"`,
`error: {kind, message, path, line}`), and the worker still exits 0. A phase that fails for
another reason is recorded in `phase_errors` and the other phases still run; each phase
works alone (the review re-runs only "latency" for its alternating rounds).

`measure(spec)` is the same thing in-process, for tests.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import sys
import time
import traceback
import warnings
from typing import Any, Iterator

from pt2bot.jsonio import write_json
from pt2bot.smoke._inputs import (CaseInputs, WorkerError, build_inputs, build_model,
                                  forward_params, infer_dims, run_forward)
from pt2bot.smoke._trace import RepoPaths

PHASES = ("breaks", "matrix", "export", "latency")


def empty_run(name: str) -> dict[str, Any]:
    """Every RUN key, unmeasured (`null`)."""
    return {
        "name": name, "status": "ok", "reason": None,
        "graph_count": None, "graph_breaks": None, "recompiles": None, "specialized": None,
        "accuracy": None, "export": None, "latency": None, "compile_s": None,
        "peak_mem_mb": None, "peak_mem_method": None, "files": None, "phases": [],
        "phase_s": {}, "phase_errors": [], "duration_s": None,
    }


def shape_cases(model_spec: dict[str, Any]) -> list[dict[str, int]]:
    """The matrix: explicit `cases`, else the product of `shapes` (as ModelConfig does)."""
    if model_spec.get("cases") is not None:
        return [dict(c) for c in model_spec["cases"]]
    shapes = model_spec.get("shapes") or {}
    if not shapes:
        return [{}]
    names = list(shapes)
    return [dict(zip(names, combo)) for combo in itertools.product(*shapes.values())]


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


def _phase_error(phase: str, exc: BaseException, paths: RepoPaths) -> dict[str, Any]:
    from pt2bot.smoke._inputs import user_location

    path, line = user_location(exc, paths)
    return {"phase": phase, "kind": type(exc).__name__, "message": f"{exc}"[:2000],
            "path": path, "line": line,
            "traceback": "".join(traceback.format_exception(exc))[-4000:]}


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """Measure one model as SPEC says; return the RUN dict (never raises for model faults)."""
    t_start = time.perf_counter()
    model_spec = dict(spec.get("model") or {})
    run_cfg = dict(spec.get("run") or {})
    device = spec.get("device") or "cpu"
    phases = [p for p in (spec.get("phases") or PHASES) if p in PHASES]
    paths = RepoPaths(spec.get("repo_root") or os.getcwd())
    run = empty_run(str(model_spec.get("name") or "model"))
    with route_logs(spec.get("log_path")):
        import torch

        if run_cfg.get("threads"):
            torch.set_num_threads(int(run_cfg["threads"]))
        try:
            model = build_model(str(model_spec.get("entry") or ""), model_spec.get("kwargs") or {},
                                paths)
            model = model.to(device)
            cases: list[CaseInputs] = [build_inputs(model_spec, model, shape, device, paths)
                                       for shape in shape_cases(model_spec)]
            infer_dims(cases, forward_params(model))
            with torch.no_grad():
                eager_outs = [run_forward(model, c, paths) for c in cases]
        except WorkerError as e:
            run.update(status="error", error=e.to_dict())
            run["duration_s"] = round(time.perf_counter() - t_start, 3)
            return run
        from pt2bot.smoke._timing import maxrss_mb
        rss0 = maxrss_mb()
        for phase in phases:
            t_phase = time.perf_counter()
            try:
                got = _run_phase(phase, model, cases, eager_outs, model_spec, run_cfg,
                                 device, paths, rss0)
                if run.get("compile_s") and got.get("compile_s"):
                    # the process's first compile is the cold/warm figure; later phases
                    # reuse what it put in the inductor cache
                    got.pop("compile_s")
                run.update(got)
                run["phases"].append(phase)
            except Exception as e:  # noqa: BLE001 - one broken phase must not lose the rest
                run["phase_errors"].append(_phase_error(phase, e, paths))
                with contextlib.suppress(Exception):
                    from pt2bot.smoke._trace import reset_dynamo
                    reset_dynamo()
            run["phase_s"][phase] = round(time.perf_counter() - t_phase, 3)
    run["duration_s"] = round(time.perf_counter() - t_start, 3)
    return run


def _run_phase(phase: str, model: Any, cases: list[CaseInputs], eager_outs: list[Any],
               model_spec: dict[str, Any], run_cfg: dict[str, Any], device: str,
               paths: RepoPaths, rss0: float) -> dict[str, Any]:
    if phase == "breaks":
        from pt2bot.smoke._breaks import measure_breaks
        return measure_breaks(model, cases[0], paths)
    if phase == "matrix":
        from pt2bot.smoke._matrix import measure_matrix
        return measure_matrix(model, cases, eager_outs, model_spec, run_cfg, paths)
    if phase == "export":
        from pt2bot.smoke._export import measure_export
        return {"export": measure_export(model, cases, eager_outs, model_spec, paths)}
    if phase == "latency":
        from pt2bot.smoke._timing import measure_latency
        return measure_latency(model, cases, model_spec, run_cfg, device, rss_baseline_mb=rss0)
    raise ValueError(f"unknown phase {phase!r}")


def _redirect_std_to(log_path: str) -> None:
    """Everything the model or torch prints (C++ included) lands in the log, not the console."""
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) != 2:
        print("usage: python -m pt2bot.smoke.worker SPEC.json OUT.json", file=sys.stderr)
        return 2
    spec_path, out_path = argv
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    if spec.get("log_path"):
        _redirect_std_to(spec["log_path"])
    run = measure(spec)
    write_json(out_path, run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
