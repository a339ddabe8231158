"""What dynamo's two capture settings do to the real-code benchmark's break sites.

    python benchmarks/bench_capture_settings.py --model LIB:NAME [--model ...] --setting both
                                                [--out benchmarks/results/capture_settings.jsonl]
    python benchmarks/bench_capture_settings.py --report [--out ...]   # the Markdown, runs nothing

torch's own hint for `.item()` (GB0124) is `torch._dynamo.config.capture_scalar_outputs = True`,
and for a dynamic-shape operator (GB0036) `capture_dynamic_output_shape_ops = True`; pt2bot's
rule messages named them too, unproven. Per model of the real-code benchmark
(benchmarks/real_code/models.py, its library copied to a scratch directory as
bench_realcode_proof.py does), in the benchmark venv, one subprocess per model and setting:
every input case, the break pass (`pt2bot.smoke.breaks.measure_breaks`, eager backend, one
thread) with the setting (`none`, `scalar`, `dyn` or `both`) patched in, then the model
compiled (eager backend) under the setting against its own eager outputs. The report puts each
model's breaks with the setting beside those without: the sites gone, the sites new (where the
captured value is then used: a size, an `if`, a loop), and whether dynamo raised instead.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "results", "capture_settings.jsonl")
VENV = os.environ.get("REALCODE_VENV", "/work/venvs/realcode")
SETTINGS = {"none": {}, "scalar": {"capture_scalar_outputs": True},
            "dyn": {"capture_dynamic_output_shape_ops": True},
            "both": {"capture_scalar_outputs": True, "capture_dynamic_output_shape_ops": True}}


def _flat(o):  # noqa: ANN001, ANN202 - torch is imported in the worker only
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, (list, tuple)):
        return [t for x in o for t in _flat(x)]
    if isinstance(o, dict):
        return [t for x in o.values() for t in _flat(x)]
    return []


def worker(key: str, which: str) -> None:
    sys.path.insert(0, HERE)
    import bench_realcode_proof as b
    scratch = tempfile.mkdtemp()
    sp = b.from_scratch(key, scratch)
    import torch

    from pt2bot.smoke.breaks import measure_breaks
    from pt2bot.smoke.inputs import CaseInputs
    from pt2bot.smoke.location import RepoPaths
    torch.manual_seed(0)
    model, specs = sp.build()
    if hasattr(model, "eval"):
        model.eval()
    paths = RepoPaths(scratch)
    cfg = SETTINGS[which]
    rows = []
    for i, (args, kwargs) in enumerate(specs):
        case = CaseInputs(shape={"case": i}, args=tuple(args), kwargs=dict(kwargs))
        torch._dynamo.reset()
        with torch.no_grad():
            torch.manual_seed(0)
            eager = model(*args, **kwargs)
        try:
            with torch._dynamo.config.patch(**cfg):
                got = measure_breaks(model, case, paths)
            breaks, err = [(s.get("path"), s.get("line"), s.get("gb")) for s in got["graph_breaks"]], None
        except Exception as e:  # noqa: BLE001 - dynamo raising under the setting is the result
            breaks, err = None, f"{type(e).__name__}: {e}"[:300]
        try:
            torch._dynamo.reset()
            with torch._dynamo.config.patch(**cfg), torch.no_grad():
                torch.manual_seed(0)
                out = torch.compile(model, backend="eager")(*args, **kwargs)
            a, c = _flat(eager), _flat(out)
            equal = len(a) == len(c) and all(
                x.shape == y.shape and torch.allclose(x.float(), y.float(), atol=1e-5, rtol=1e-4,
                                                      equal_nan=True) for x, y in zip(a, c))
        except Exception as e:  # noqa: BLE001
            equal = f"{type(e).__name__}: {e}"[:300]
        rows.append({"case": i, "breaks": breaks, "error": err, "equal": equal})
    print(json.dumps({"model": key, "cfg": which, "rows": rows}, default=str))


def report(path: str) -> str:
    runs: dict[str, dict[str, dict]] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                r = json.loads(line)
                runs.setdefault(r["model"], {})[r["cfg"]] = r
    out = ["| model | setting | sites without it | gone | new with it | compiled = eager | dynamo raised |",
           "|---|---|---:|---:|---:|---|---|"]
    for model, by in runs.items():
        if "none" not in by:
            continue
        base = {tuple(b) for b in by["none"]["rows"][0]["breaks"] or ()}
        for cfg, r in by.items():
            if cfg == "none" or r.get("fail"):
                continue
            row = r["rows"][0]
            if row["breaks"] is None or not isinstance(row["equal"], bool):
                msg = " ".join(str(row["error"] or row["equal"]).split())[:90].replace("|", "\\|")
                out.append(f"| {model} | {cfg} | {len(base)} | – | – | – | {msg} |")
                continue
            now = {tuple(b) for b in row["breaks"]}
            new = sorted(now - base, key=str)
            where = ", ".join(f"{p}:{n} {g or '(no GB)'}" for p, n, g in new[:3])
            out.append(f"| {model} | {cfg} | {len(base)} | {len(base - now)} | {len(new)}"
                       f"{' (' + where + ')' if new else ''} | {'yes' if row['equal'] else 'no'} | |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=2, metavar=("KEY", "SETTING"))
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="both")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--timeout", type=int, default=400)
    ap.add_argument("--report", action="store_true")
    a = ap.parse_args()
    if a.worker:
        worker(*a.worker)
        return 0
    if a.report:
        print(report(a.out), end="")
        return 0
    with open(a.out, "a", encoding="utf-8") as fh:
        for key in a.model:
            for which in ("none", a.setting):
                try:
                    p = subprocess.run([os.path.join(VENV, "bin", "python"), __file__, "--worker", key, which],
                                       capture_output=True, text=True, timeout=a.timeout)
                    line = (p.stdout.strip().splitlines() or [""])[-1]
                    fh.write((line if line.startswith("{") else json.dumps(
                        {"model": key, "cfg": which, "fail": True})) + "\n")
                except subprocess.TimeoutExpired:
                    fh.write(json.dumps({"model": key, "cfg": which, "fail": True}) + "\n")
                fh.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
