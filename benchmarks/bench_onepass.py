"""Can the matrix phase's first case stand in for the graph-break pass? (one compile pass)

    /work/main/.venv/bin/python benchmarks/bench_onepass.py [--set fixtures,rules,floor]
        [--backends aot_eager[,inductor]] [--only clean,item_branch] [--json out.json]

The smoke worker compiles each model twice on its first shape case: the "breaks" phase
(pt2bot/smoke/breaks.py: eager recording backend, the inputs as they are) and then the
"matrix" phase (pt2bot/smoke/matrix.py: `run.backend`, the declared dynamic dims marked with
`mark_dynamic`, retried with `maybe_mark_dynamic` after a ConstraintViolationError). Folding the
first into the second saves one compile only if the second yields the same facts. This script
runs the break pass's own recording (`measure_breaks`, with its line coverage) on the first
case under the matrix's settings and lists every fact that differs from the break pass as it
is, per model:

- `marks`: eager backend, the dims marked as the matrix marks its first case;
- `<backend>`: the backend instead of eager, the inputs unmarked (each graph is recorded, then
  compiled by that backend; the ATen operators inside a graph are those its compiled code runs);
- `marks+<backend>`: both, as the matrix's first case really compiles.

Facts compared: every field of every `graph_breaks` site, `graph_count`, `files`, each key of
`graph_coverage`, `traced_lines` (object addresses in texts aside, with the same random seed
before each pass; a fact that differs between two runs of the pass as it is is listed as
`unstable` and left out). A first attempt that raises ConstraintViolationError is
reported (the matrix would trace the case twice, the first attempt's break events included)
and the case is measured again with the relaxed marks, as the matrix does.

The models: tests/fixtures/models with the inputs the worker tests give them, every
`nn.Module` case of tests/fixtures/rules that takes one `(batch, 8)` tensor (batch 8 then 3,
dynamic), and bench_floor.py's models (the real libraries from the real-code venv).
"""
from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import time
from typing import Any, Iterator
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, TOP)

FIXTURES = os.path.join(TOP, "tests", "fixtures")
ROW = [{"shape": ["batch", 8], "dtype": "float32"}]
GPT = [{"shape": ["batch", "seq"], "dtype": "int64", "high": 32}]
# (name, entry, inputs, shapes): the worker tests' specs of the fixture models
FIXTURE_MODELS: list[tuple[str, str, list[dict[str, Any]], dict[str, list[int]]]] = [
    ("clean", "models.clean:Clean", ROW, {"batch": [2, 4]}),
    ("hard_view", "models.hard_view:HardView", [{"shape": ["batch", 4]}], {"batch": [2, 4]}),
    ("item_branch", "models.item_branch:ItemBranch", ROW, {"batch": [2, 4]}),
    ("loop_layers", "models.loop_layers:LoopLayers", ROW, {"batch": [2, 4]}),
    ("nested", "models.nested:Nested", ROW, {"batch": [2, 4]}),
    ("nonzero", "models.nonzero:NonZero", ROW, {"batch": [2, 4]}),
    ("printing", "models.printing:Printing", ROW, {"batch": [2, 4]}),
    ("resume_after_item", "models.resume_after_item:Gated", ROW, {"batch": [2, 4]}),
    ("size_branch", "models.size_branch:SizeBranch", ROW, {"batch": [2, 8]}),
    ("stack", "models.stack:Stack", ROW, {"batch": [2, 4]}),
    ("tiny_gpt", "models.shape_advice:TinyGPT", GPT, {"batch": [2, 3], "seq": [8, 16]}),
    ("pair_pool", "models.shape_advice:PairPool", [{"shape": ["batch", "seq", 4]}],
     {"batch": [2, 3], "seq": [8, 16]}),
    ("four_rows", "models.shape_advice:FourRows", [{"shape": ["batch", "seq"]}],
     {"batch": [4], "seq": [8, 16]}),
]


def rule_models() -> list[tuple[str, str, str, list[dict[str, Any]], dict[str, list[int]]]]:
    """(name, root, entry, inputs, shapes) of each rule fixture's Pos*/Neg* module class."""
    import ast
    rules = os.path.join(FIXTURES, "rules")
    out = []
    for f in sorted(os.listdir(rules)):
        if not (f.startswith("ptc") and f.endswith(".py")):
            continue
        tree = ast.parse(open(os.path.join(rules, f), encoding="utf-8").read())
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name.lower().startswith(("pos", "neg")):
                out.append((f"{f[:-3]}:{node.name}", rules, f"{f[:-3]}:{node.name}", ROW,
                            {"batch": [8, 3]}))
    return out


def floor_models(work: str, site: str) -> list[tuple[str, str, str, list[dict[str, Any]],
                                                     dict[str, list[int]], dict[str, Any]]]:
    """bench_floor.py's models, in a copy of its repository's files under `work`."""
    spec = importlib.util.spec_from_file_location("bench_floor", os.path.join(HERE,
                                                                             "bench_floor.py"))
    bf = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(bf)
    zoo = os.path.join(work, "zoo")
    shutil.copytree(os.path.join(TOP, "examples", "zoo"), zoo)
    with open(os.path.join(zoo, "real.py"), "w", encoding="utf-8") as fh:
        fh.write(bf.REAL_PY.format(site=site))
    return [(n, work, m["entry"], m["inputs"], m["shapes"], m["kwargs"])
            for n, m in bf.MODELS.items()]


@contextlib.contextmanager
def compiled_with(backend: str) -> Iterator[None]:
    """The break pass's recording backend hands each graph, once recorded, to `backend`."""
    if backend == "eager":
        yield
        return
    from torch._dynamo.backends.registry import lookup_backend

    from pt2bot.smoke import breaks

    class Delegating(breaks.RecordingBackend):
        def __call__(self, gm: Any, example_inputs: Any) -> Any:
            super().__call__(gm, example_inputs)          # the graph and its code, recorded
            fn = lookup_backend(backend)(gm, example_inputs)
            return self.ops.in_graph(fn) if self.ops is not None else fn

    with mock.patch.object(breaks, "RecordingBackend", Delegating):
        yield


def facts(model: Any, case: Any, paths: Any, backend: str) -> dict[str, Any]:
    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.coverage import LineCoverage

    import random

    import torch

    cov = LineCoverage(paths.rel)
    # the same random state for every pass: a branch on `torch.rand(...)` takes the same way
    random.seed(0)
    torch.manual_seed(0)
    with compiled_with(backend):
        got = measure_breaks(model, case, paths, coverage=cov)
    got["traced_lines"] = cov.traced_json()
    return got


_ADDR = re.compile(r"0x[0-9a-fA-F]{6,}")


def same(x: Any, y: Any) -> bool:
    """Equal, but for object addresses in texts: `torch.compiler.disable(f)` called in forward
    makes a new wrapper on each call, whose address a break's explanation names, so two runs
    of the same pass differ there."""
    if isinstance(x, str) and isinstance(y, str):
        return _ADDR.sub("0x?", x) == _ADDR.sub("0x?", y)
    return bool(x == y)


def differences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """fact -> [today's, under the matrix's settings], for each fact that differs."""
    out: dict[str, Any] = {}
    for k in ("graph_count", "files", "traced_lines"):
        if a.get(k) != b.get(k):
            out[k] = [a.get(k), b.get(k)]
    ga, gb = a.get("graph_coverage") or {}, b.get("graph_coverage") or {}
    for k in sorted(set(ga) | set(gb)):
        if ga.get(k) != gb.get(k):
            out[f"graph_coverage.{k}"] = [ga.get(k), gb.get(k)]
    sa, sb = a.get("graph_breaks") or [], b.get("graph_breaks") or []
    if len(sa) != len(sb):
        out["graph_breaks"] = [[(s["gb"], s["path"], s["line"], s["count"]) for s in x]
                               for x in (sa, sb)]
    else:
        for i, (x, y) in enumerate(zip(sa, sb)):
            for k in sorted(set(x) | set(y)):
                if not same(x.get(k), y.get(k)):
                    out[f"graph_breaks[{i}].{k}"] = [x.get(k), y.get(k)]
    return out


def compare_model(name: str, root: str, entry: str, inputs: list[dict[str, Any]],
                  shapes: dict[str, list[int]], kwargs: dict[str, Any],
                  backends: list[str]) -> dict[str, Any]:
    import torch

    from pt2bot.smoke.inputs import build_inputs, build_model, forward_params, infer_dims
    from pt2bot.smoke.location import RepoPaths
    from pt2bot.smoke.matrix import _is_constraint_violation, mark_dims
    from pt2bot.smoke.worker import shape_cases

    paths = RepoPaths(root)
    spec = {"name": name, "entry": entry, "kwargs": kwargs, "inputs": inputs,
            "shapes": shapes, "dynamic": list(shapes), "tolerance": {}}
    rec: dict[str, Any] = {"model": name}
    try:
        torch.manual_seed(0)
        model = build_model(entry, kwargs, paths)
        cases = [build_inputs(spec, model, s, "cpu", paths) for s in shape_cases(spec)]
        infer_dims(cases, forward_params(model))
        with torch.no_grad():
            model(*cases[0].args, **cases[0].kwargs)
        today = facts(model, cases[0], paths, "eager")
    except Exception as e:  # noqa: BLE001 - a fixture that is not a runnable model is skipped
        rec["skipped"] = f"{type(e).__name__}: {str(e)[:200]}"
        return rec
    rec["breaks"] = [(s["gb"], s["path"], s["line"], s["count"])
                     for s in today["graph_breaks"]]
    # facts that differ between two runs of the pass as it is are noise, not the settings'
    unstable = differences(today, facts(model, cases[0], paths, "eager"))
    if unstable:
        rec["unstable"] = unstable
    dynamic = set(shapes)
    settings = [("marks", "eager", True)] + [
        (label, be, marked) for be in backends
        for label, marked in ((be, False), (f"marks+{be}", True))]
    for label, backend, marked in settings:
        t0 = time.perf_counter()
        case = mark_dims(cases[0], dynamic, set()) if marked else cases[0]
        entry_rec: dict[str, Any] = {}
        try:
            got = facts(model, case, paths, backend)
        except Exception as e:  # noqa: BLE001
            if not (marked and _is_constraint_violation(e)):
                entry_rec["raised"] = f"{type(e).__name__}: {str(e)[:200]}"
                rec[label] = entry_rec
                continue
            # the matrix's retry: every dim only maybe_mark_dynamic-ed
            entry_rec["constraint_violation_first"] = True
            got = facts(model, mark_dims(cases[0], dynamic, dynamic), paths, backend)
        entry_rec["differs"] = {k: v for k, v in differences(today, got).items()
                                if k not in unstable}
        entry_rec["s"] = round(time.perf_counter() - t0, 2)
        rec[label] = entry_rec
    return rec


def summarise(models: list[dict[str, Any]], labels: list[str]) -> dict[str, Any]:
    """Per setting: how many models give other facts, which facts, and how many would be
    traced twice by the matrix (a ConstraintViolationError on the first attempt)."""
    ran = [m for m in models if "skipped" not in m]
    out: dict[str, Any] = {"models": len(ran), "skipped": len(models) - len(ran)}
    for lab in labels:
        recs = [m.get(lab) or {} for m in ran]
        facts: dict[str, int] = {}
        for r in recs:
            for k in r.get("differs") or {}:
                k = re.sub(r"\[\d+\]", "", k)
                facts[k] = facts.get(k, 0) + 1
        out[lab] = {
            "facts_differ": sum(1 for r in recs if r.get("differs")),
            "retried_after_constraint_violation": sum(
                1 for r in recs if r.get("constraint_violation_first")),
            "either": sum(1 for r in recs if r.get("differs") or r.get("raised")
                          or r.get("constraint_violation_first")),
            "raised": sum(1 for r in recs if r.get("raised")),
            "by_fact": dict(sorted(facts.items())),
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--set", default="fixtures,rules,floor")
    ap.add_argument("--backends", default="aot_eager",
                    help="backends besides eager (inductor: slow, cold compiles)")
    ap.add_argument("--site", default="/work/venvs/realcode/lib/python3.11/site-packages")
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    import torch
    torch.set_num_threads(1)
    backends = [b for b in a.backends.split(",") if b]
    which = set(a.set.split(","))
    todo: list[tuple[str, str, str, list[dict[str, Any]], dict[str, list[int]],
                     dict[str, Any]]] = []
    if "fixtures" in which:
        todo += [(n, FIXTURES, e, i, s, {}) for n, e, i, s in FIXTURE_MODELS]
    if "rules" in which:
        todo += [(n, r, e, i, s, {}) for n, r, e, i, s in rule_models()]
    work = tempfile.mkdtemp(prefix="onepass-")
    if "floor" in which:
        todo += floor_models(work, a.site)
    only = {n for n in a.only.split(",") if n}
    todo = [t for t in todo if not only or t[0] in only]
    out = {"torch": torch.__version__, "backends": ["eager", *backends],
           "load": os.getloadavg()[0], "models": []}
    try:
        for n, root, e, i, s, kw in todo:
            if root not in sys.path:
                sys.path.insert(0, root)
            rec = compare_model(n, root, e, i, s, kw, backends)
            out["models"].append(rec)
            print(json.dumps(rec, default=str), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out["summary"] = summarise(out["models"], ["marks"] + [x for b in backends
                                                          for x in (b, f"marks+{b}")])
    print(json.dumps(out["summary"]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
