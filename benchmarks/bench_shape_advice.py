"""The shape advice on real models: how often it gives a spec that exports, the compiles over
each matrix before and after its settings, its agreement with torch's own answer, and what
the "advice" phase adds to a smoke run.

    # the zoo (benchmarks/zoo: transformers, timm, x-transformers), generated, then each
    # model in a worker process of its own:
    PYTHONPATH=.:/path/to/transformers python benchmarks/bench_shape_advice.py zoo \\
        --repo /tmp/zoo-advice --out benchmarks/results/shape_advice.json [--models a,b]
    # the same with no dim declared dynamic (the matrix's "before" is torch's defaults):
    ... zoo --repo /tmp/zoo-advice --no-generate --undeclared --out ...
    # real-code models (benchmarks/real_code/models.py: library code as it is published):
    python benchmarks/bench_shape_advice.py realcode --out ... --models vit-pytorch:vit,...

Per model the record has the advice (`shape_advice` of the RUN), the seconds of each phase
(breaks, matrix, export, advice; eager backend: the advice's cost is tracing, as in a run
with `backend: eager`) and `torch_auto`: torch's own answer to the same question, an export
with `Dim.AUTO` on every dim the advice covers (torch then picks each dim's range, its
divisibility or a constant itself, and never fails on a dim), read back from the program's
placeholders and `range_constraints`. `agree` compares, per dim, static vs dynamic, the
upper bound and the divisibility.

Summary (printed, and `summary` in --out): the share of models whose advice exports, the
share with every dim dynamic, the compiles before/after summed over the matrices, the
dims that agree with Dim.AUTO, and the advice phase's seconds against the rest of the run.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
PHASES = ["breaks", "matrix", "export", "advice"]


# --------------------------------------------------------------------------- torch's answer

def torch_auto(model: Any, case: Any, advice: dict[str, Any]) -> dict[str, Any]:
    """Export with `Dim.AUTO` on the dims the advice covers: `{input: {axis: {static,
    min, max, multiple_of}}}` as torch decided them, or `{"error": ...}`."""
    import torch
    from torch.export import Dim
    from torch.fx.experimental.symbolic_shapes import is_concrete_int

    ds = (advice.get("export") or {}).get("dynamic_shapes") or {}
    if not ds:
        return {}
    named = case.named()
    spec = {name: ({int(ax): Dim.AUTO for ax in ds[name]} if name in ds else None)
            for name in named}
    try:
        with torch.no_grad():
            ep = torch.export.export(model, case.args, dict(case.kwargs) or None,
                                     dynamic_shapes=spec)
    except Exception as e:  # noqa: BLE001 - recorded
        return {"error": f"{type(e).__name__}: {str(e)[:300]}"}
    user = list(getattr(ep.graph_signature, "user_inputs", ()) or ())
    vals = [n.meta.get("val") for n in ep.graph.nodes if n.op == "placeholder" and n.name in user]
    tensors = [k for k, v in named.items() if isinstance(v, torch.Tensor)]
    if len(vals) != len(tensors):
        return {"error": "placeholders do not pair with the inputs"}
    out: dict[str, Any] = {}
    for name, val in zip(tensors, vals):
        for ax in ds.get(name, {}):
            size = val.shape[int(ax)]
            if is_concrete_int(size):
                out.setdefault(name, {})[ax] = {"static": True, "value": int(size)}
                continue
            expr = size.node.expr
            sym = next(iter(expr.free_symbols))
            k = int(expr.coeff(sym)) if expr != sym else 1
            vr = ep.range_constraints.get(sym)
            hi = _finite(getattr(vr, "upper", None))
            hi = hi * k if hi is not None else None
            out.setdefault(name, {})[ax] = {"static": False, "max": hi,
                                            "multiple_of": k if k > 1 else None}
    return out


def _finite(v: Any) -> int | None:
    """A range end as an int; None for infinity (torch's int_oo, sympy's oo)."""
    if v is None or "oo" in str(v):
        return None
    try:
        n = int(v)
    except (TypeError, ValueError, AttributeError, OverflowError):
        return None
    return n if n < 1 << 62 else None


def agreement(advice: dict[str, Any], auto: dict[str, Any]) -> dict[str, Any]:
    """Per dim of the advice: whether Dim.AUTO says the same (static, max, multiple_of)."""
    ds = (advice.get("export") or {}).get("dynamic_shapes") or {}
    if not ds or "error" in auto:
        return {"dims": 0, "same": 0, "differ": []}
    n, same, differ = 0, 0, []
    for name, axes in ds.items():
        for ax, e in axes.items():
            n += 1
            a = (auto.get(name) or {}).get(ax) or {}
            ours = ("static",) if e.get("static") else ("dynamic", e.get("max"),
                                                          e.get("multiple_of"))
            theirs = ("static",) if a.get("static") else ("dynamic", a.get("max"),
                                                            a.get("multiple_of"))
            if ours == theirs:
                same += 1
            else:
                differ.append({"input": name, "axis": ax, "advice": ours, "auto": theirs})
    return {"dims": n, "same": same, "differ": differ}


# --------------------------------------------------------------------------- one model

def one_zoo(repo: str, name: str, undeclared: bool = False) -> dict[str, Any]:
    """One configured model of the zoo repository, in this process: the worker's RUN with
    the four phases, then torch's Dim.AUTO answer on the same model and example case.
    `undeclared`: as if pt2bot.yml declared no dim dynamic (the matrix then compiles with
    torch's defaults: the "before" of a user who has not said anything)."""
    sys.path.insert(0, repo)
    from pt2bot.configfile import load_config
    from pt2bot.smoke.export import example_case
    from pt2bot.smoke.inputs import build_inputs, build_model, forward_params, infer_dims
    from pt2bot.smoke.runner import _model_spec  # noqa: PLC2701 - the runner's own spec
    from pt2bot.smoke.trace import RepoPaths
    from pt2bot.smoke.worker import measure

    cfg = load_config(os.path.join(repo, "pt2bot.yml"), required=True)
    model = cfg.model(name)
    mspec = _model_spec(model)
    if undeclared:
        mspec.update(dynamic=[], bounds={})
    spec = {"repo_root": repo, "model": mspec,
            "run": {"backend": "eager", "recompile_limit": 8, "threads": 1},
            "device": "cpu", "phases": PHASES, "coverage": False}
    t0 = time.perf_counter()
    run = measure(spec)
    wall = time.perf_counter() - t0
    rec: dict[str, Any] = {"name": name, "status": run["status"], "phase_s": run["phase_s"],
                           "wall_s": round(wall, 2), "phase_errors": run["phase_errors"],
                           "shape_advice": run.get("shape_advice"),
                           "recompiles": (run.get("recompiles") or {}).get("count")}
    if run["status"] == "ok" and run.get("shape_advice"):
        paths = RepoPaths(repo)
        m = build_model(model.entry, dict(model.kwargs), paths)
        cases = [build_inputs(spec["model"], m, s, "cpu", paths) for s in model.shape_cases()]
        infer_dims(cases, forward_params(m))
        dims = {d for c in cases[:1] for ax in c.dims.values() for d in ax.values()}
        auto = torch_auto(m, example_case(cases, dims), run["shape_advice"])
        rec["torch_auto"] = auto
        rec["agree"] = agreement(run["shape_advice"], auto)
    return rec


def one_realcode(key: str) -> dict[str, Any]:
    """One model of benchmarks/real_code/models.py: its cases become a matrix whose dims are
    the input axes that differ between them; the matrix, export and advice phases run on it
    in this process (the library's own package is the user code, for locations)."""
    import importlib

    import torch

    sys.path.insert(0, os.path.join(HERE, "real_code"))
    from collect import shim_torchvision  # noqa: E402 - torchvision beside the CPU torch
    from models import SPECS  # noqa: E402 - the real-code benchmark's list

    shim_torchvision()

    from pt2bot.smoke.advice import measure_advice
    from pt2bot.smoke.export import example_case, measure_export
    from pt2bot.smoke.inputs import CaseInputs, forward_params
    from pt2bot.smoke.matrix import measure_matrix
    from pt2bot.testing import UserCode

    ms = next(s for s in SPECS if s.key == key)
    torch.manual_seed(0)
    model, raw = ms.build()
    model = model.eval()
    params = forward_params(model)
    named = [dict(zip(params, args)) | dict(kw) for args, kw in raw]
    dims: dict[str, dict[int, str]] = {}
    for name, t in named[0].items():
        if isinstance(t, torch.Tensor):
            for ax in range(t.dim()):
                sizes = {c[name].shape[ax] for c in named
                         if isinstance(c.get(name), torch.Tensor) and c[name].dim() > ax}
                if len(sizes) > 1:
                    dims.setdefault(name, {})[ax] = f"{name}_{ax}"
    cases = []
    for (args, kw), n in zip(raw, named):
        shape = {d: int(n[name].shape[ax]) for name, axes in dims.items()
                 for ax, d in axes.items()}
        cases.append(CaseInputs(shape, tuple(args), dict(kw), dims,
                                tuple(params[: len(args)])))
    pkg = os.path.dirname(importlib.import_module(ms.package).__file__)
    paths = UserCode(os.path.dirname(pkg), packages=(pkg,))
    spec = {"name": ms.name, "dynamic": [], "tolerance": {}}
    with torch.no_grad():
        outs = [model(*a, **k) for a, k in raw]
    phase_s: dict[str, float] = {}
    t = time.perf_counter()
    matrix = measure_matrix(model, cases, outs, spec, {"backend": "eager"}, paths)
    phase_s["matrix"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    measure_export(model, cases, outs, spec, paths)
    phase_s["export"] = round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    advice = measure_advice(model, cases, outs, spec, {"recompile_limit": 8}, paths,
                            matrix)["shape_advice"]
    phase_s["advice"] = round(time.perf_counter() - t, 3)
    auto = torch_auto(model, example_case(cases, {d for a in dims.values() for d in a.values()}),
                      advice)
    return {"name": key, "status": "ok", "phase_s": phase_s, "shape_advice": advice,
            "recompiles": matrix["recompiles"]["count"], "torch_auto": auto,
            "agree": agreement(advice, auto), "phase_errors": []}


# --------------------------------------------------------------------------- driver

def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in records if r.get("shape_advice")]
    ex = [r["shape_advice"]["export"] for r in ok]
    with_dims = [e for e in ex if e.get("dynamic_shapes")]
    all_dynamic = [e for e in with_dims if e.get("ok") and not any(
        d.get("static") for axes in e["dynamic_shapes"].values() for d in axes.values())]
    comp = [r["shape_advice"]["compile"] for r in ok]
    before = sum(c["compiles_before"] or 0 for c in comp if c.get("compiles_after") is not None)
    after = sum(c["compiles_after"] or 0 for c in comp if c.get("compiles_after") is not None)
    agree = [r["agree"] for r in ok if r.get("agree")]
    advice_s = sum((r.get("phase_s") or {}).get("advice", 0) for r in ok)
    rest_s = sum(v for r in ok for k, v in (r.get("phase_s") or {}).items() if k != "advice")
    return {
        "models": len(records), "with_advice": len(ok), "with_dims": len(with_dims),
        "exports": sum(1 for e in with_dims if e.get("ok")),
        "all_dims_dynamic": len(all_dynamic),
        "covers_matrix": sum(1 for e in with_dims if e.get("ok")
                             and all(c.get("match") is not False for c in e.get("cases") or ())),
        "methods": {m: sum(1 for c in comp if c.get("method") == m)
                    for m in ("mark_dynamic", "dynamic=True", None)},
        "compiles_before": before, "compiles_after": after,
        "models_fewer_compiles": sum(1 for c in comp if c.get("compiles_after") is not None
                                     and c["compiles_after"] < (c["compiles_before"] or 0)),
        "dims": sum(a["dims"] for a in agree), "dims_agree_with_auto": sum(a["same"] for a in agree),
        "advice_s": round(advice_s, 2), "rest_s": round(rest_s, 2),
        "overhead_pct": round(100 * advice_s / rest_s, 1) if rest_s else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("source", choices=("zoo", "realcode", "one-zoo", "one-realcode"))
    ap.add_argument("--repo", help="zoo: where to generate the repository")
    ap.add_argument("--out", help="JSON file to write (records and summary)")
    ap.add_argument("--models", help="comma-separated names (zoo) or keys lib:name (realcode)")
    ap.add_argument("--name", help="one-*: the model")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--undeclared", action="store_true",
                    help="zoo: run as if no dim were declared dynamic (torch's defaults before)")
    ap.add_argument("--no-generate", action="store_true", help="zoo: reuse --repo as it is")
    args = ap.parse_args()
    if args.source == "one-zoo":
        print(json.dumps(one_zoo(args.repo, args.name, args.undeclared)))
        return 0
    if args.source == "one-realcode":
        print(json.dumps(one_realcode(args.name)))
        return 0
    if args.source == "zoo":
        sys.path.insert(0, os.path.join(HERE, "zoo"))
        from generate import build_repo
        from models import MODELS
        want = args.models.split(",") if args.models else [m.name for m in MODELS]
        repo = os.path.abspath(args.repo)
        if not args.no_generate:
            build_repo(repo, [m for m in MODELS if m.name in want])
        names = [("one-zoo", n) for n in want]
    else:
        names = [("one-realcode", n) for n in args.models.split(",")]
    records = []
    load0 = os.getloadavg()
    for mode, name in names:
        cmd = [sys.executable, __file__, mode, "--name", name] + \
            (["--repo", os.path.abspath(args.repo)] if mode == "one-zoo" else []) + \
            (["--undeclared"] if args.undeclared else [])
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                               env={**os.environ, "OMP_NUM_THREADS": "1"})
            line = (p.stdout.strip().splitlines() or [""])[-1]
            rec = json.loads(line) if line.startswith("{") else {
                "name": name, "status": "error", "stderr": p.stderr[-2000:]}
        except subprocess.TimeoutExpired:
            rec = {"name": name, "status": "timeout"}
        rec["process_s"] = round(time.perf_counter() - t0, 2)
        records.append(rec)
        a = rec.get("shape_advice") or {}
        print(f"{name}: {rec.get('status')} export={((a.get('export') or {}).get('ok'))} "
              f"compiles={(a.get('compile') or {}).get('compiles_before')}->"
              f"{(a.get('compile') or {}).get('compiles_after')} "
              f"agree={(rec.get('agree') or {}).get('same')}/{(rec.get('agree') or {}).get('dims')} "
              f"advice_s={(rec.get('phase_s') or {}).get('advice')}", flush=True)
    summary = summarise(records)
    summary["load_before"], summary["load_after"] = load0, os.getloadavg()
    print(json.dumps(summary, indent=1))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            json.dump({"summary": summary, "records": records}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
