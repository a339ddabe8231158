"""How many of the real-code benchmark's graph-break sites get a VERIFIED fix? (the proof half of
`bench_recipes.py`, which only counts sites where a recipe offers an edit).

    python benchmarks/bench_realcode_proof.py [--lib kornia]... [--model kornia:augmentation_seq]...
                                              [--matrix] [--out benchmarks/results/realcode_proof.json]
    python benchmarks/bench_realcode_proof.py --report     # the Markdown of --out, runs nothing

For each model of the real-code benchmark (benchmarks/real_code/models.py: tiny instances of
third-party models, built from configs, no weights), in the benchmark's own venv
(`bash benchmarks/real_code/setup.sh`), one subprocess a model:

1. the library's package is copied to a scratch directory put first on `sys.path` (the proof
   reads and patches user code, and code under site-packages is never the user's), and the
   model is built from that copy with one thread and seed 0, in eval mode;
2. its first input case runs through the proof worker's own head measurement
   (`pt2bot.smoke.verify.measure_state`, the break pass, eager backend): every graph break in
   the library's code is a target, as a new break on a PR's line is in `pt2bot review` (a
   head whose breaks pass itself fails is reported as `head_error`, with what it found);
3. `pt2bot check` on the files with a break gives the findings, and `pt2bot.fixes.gather`
   the candidates for the targets exactly as the review gathers them (the findings on the
   line or in its statement, else the recipes dynamo's GB code selects), tried in the
   review's order (`fixes.order`);
4. each candidate is proven in the same process by `pt2bot.smoke.verify.prove_candidate`, as
   the review's proof worker does, with two differences said in the report: one shape case
   (the models have no pt2bot.yml shape matrix: no recompile or compiled-against-eager
   comparison) and no export. With `--matrix`, every input case of the spec is the shape
   matrix, run for head and for each candidate as a review runs its matrix (recompiles,
   compiled outputs against eager); the targets are still the first case's breaks. A candidate whose targets an earlier accepted one fixed is
   skipped, as in the review.

Every site counts as if a PR had added it (there is no diff: a candidate need not fit in a
hunk). The figure is per site (library file and line), by kind and by library, with the
libraries' held-out batches apart (models.HELD_OUT_BATCHES). A model that fails to build or
run is a reported result.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
REAL = os.path.join(HERE, "real_code")
OUT = os.path.join(HERE, "results", "realcode_proof.json")
VENV = os.environ.get("REALCODE_VENV", "/work/venvs/realcode")
CANDIDATE_S = 60.0        # one candidate's time, as `fixes.budget_s` bounds a review's


def from_scratch(key: str, scratch: str) -> Any:
    """The model's spec (models.py), its library's package copied to `scratch` and put first on
    `sys.path` (the proof reads and patches user code, and code under site-packages is never
    the user's), one thread."""
    import importlib
    import shutil

    sys.path.insert(0, REAL)
    import torch

    torch.set_num_threads(1)
    import collect
    import models

    collect.shim_torchvision()
    sp = models.by_key()[key]
    spec = importlib.util.find_spec(sp.package)
    if spec.submodule_search_locations is None:  # a single-module distribution (one .py file)
        os.makedirs(scratch, exist_ok=True)
        shutil.copy2(spec.origin, os.path.join(scratch, sp.package + ".py"))
    else:
        src = spec.submodule_search_locations[0]   # also a namespace package's (no __init__.py)
        shutil.copytree(src, os.path.join(scratch, sp.package), symlinks=True)
    sys.path.insert(0, scratch)
    for name in [m for m in sys.modules if m == sp.package or m.startswith(sp.package + ".")]:
        del sys.modules[name]
    return sp


def head_of(sp: Any, scratch: str, matrix: bool = False
            ) -> tuple[Any, list[Any], Any, list[Any], dict[str, Any], list[str]]:
    """(model, its cases, RepoPaths, head's eager outputs, head's state, the phases): the model
    built from the scratch copy with seed 0, in eval mode, its buffers kept as built and put
    back before every call, through the proof worker's own head measurement, eager backend:
    its first case through the break pass; with `matrix`, every case of the spec as the shape
    matrix too (recompiles, compiled outputs against eager), as a review with a pt2bot.yml
    shape matrix runs it."""
    import importlib

    import torch

    from pt2bot.smoke.inputs import CaseInputs, call_mode, remember_state
    from pt2bot.smoke.location import RepoPaths
    from pt2bot.smoke.verify import _seeded_forward, measure_state

    torch.manual_seed(0)
    model, specs = sp.build()
    mod = importlib.import_module(sp.package)
    where = list(mod.__path__)[0] if hasattr(mod, "__path__") else mod.__file__
    if not os.path.realpath(where).startswith(os.path.realpath(scratch)):
        raise RuntimeError(f"{sp.package} was not imported from the scratch copy")
    if hasattr(model, "eval"):
        model.eval()
    cases = [CaseInputs(shape={"case": i}, args=tuple(args), kwargs=dict(kwargs))
             for i, (args, kwargs) in enumerate(specs if matrix else specs[:1])]
    paths = RepoPaths(scratch)
    # as the proof worker does: every call from the buffers as built (a training model's
    # running radius, a normaliser's count), head's and each candidate's alike
    remember_state(model)
    with call_mode():
        outs = [_seeded_forward(model, case, paths) for case in cases]
    phases = ["breaks", "matrix"] if matrix else ["breaks"]
    return model, cases, paths, outs, measure_state(model, cases, outs, {}, {}, paths, phases), phases


def worker(key: str, out: str, scratch: str, matrix: bool = False) -> int:
    """One model, in the benchmark venv (see the module doc); writes OUT."""
    sp = from_scratch(key, scratch)
    from pt2bot.smoke.inputs import calls_with_grad

    with calls_with_grad(sp.grad):   # the spec's `grad`, for every call head's and the proof's
        return _worker(sp, key, out, scratch, matrix)


def _worker(sp: Any, key: str, out: str, scratch: str, matrix: bool) -> int:
    from pt2bot.config import StaticConfig
    from pt2bot.fixes import gather, gather_settings, order
    from pt2bot.smoke.verify import prove_candidate
    from pt2bot.static import check_paths

    result: dict[str, Any] = {"model": key, "lib": sp.lib, "status": "ok", "targets": [],
                              "candidates": []}
    t0 = time.perf_counter()
    try:
        model, cases, paths, head_outs, head, phases = head_of(sp, scratch, matrix)
        if head.get("phase_errors"):
            # the head's own breaks pass failed (dynamo raised): its sites are not all known, so
            # the model is reported as not run rather than as one with no break
            result.update(status="head_error",
                          error="; ".join(f"{k}: {v}" for k, v in head["phase_errors"].items()))
        seen = set()
        targets = []
        # a break whose line dynamo put outside the function it names has no line in a review
        # (pt2bot/smoke/breaks.py `locate`: no comment on it, no fix tried there); the proof's
        # head measurement keeps dynamo's lines, so the same test is made here: a site of its
        # own, with that reason
        unlocated = [b for b in head.get("breaks") or () if b.get("path") and paths.in_function(
            os.path.join(scratch, b["path"]), b.get("line"), b.get("function")) is False]
        result["unlocated"] = [{"path": b["path"], "reported_line": b.get("line"), "gb": b.get("gb"),
                                "function": b.get("function")} for b in unlocated]
        for b in head.get("breaks") or ():
            if any(b is u for u in unlocated):
                continue
            k = (b.get("path"), b.get("line"), b.get("gb"))
            if b.get("path") and b.get("line") and k not in seen:
                seen.add(k)
                targets.append({"kind": "break", "path": b["path"], "line": b["line"],
                                "gb": b.get("gb"), "gb_type": b.get("gb_type"),
                                "source": b.get("source")})
        files = sorted({t["path"] for t in targets})
        findings = check_paths(scratch, files, StaticConfig(select=("ALL",)), jobs=1) if files else []
        proposals, why = gather(targets, findings, scratch, None)
        # the dynamo settings torch's hint names (GB0124, GB0036), after every edit as in the
        # review; a verified one is counted apart: it is text, not a fix of the line
        proposals += gather_settings(targets, findings, scratch)
        fixed: dict[int, str] = {}
        settled: dict[int, str] = {}
        guard_cache: dict[str, Any] = {}
        backend_cache: dict[str, Any] = {}
        for p in order(proposals):
            row = {"id": p.cid, "path": p.cand.path, "start_line": p.cand.start_line,
                   "end_line": p.cand.end_line, "lines": list(p.cand.lines), "rule": p.cand.code,
                   "title": p.cand.title, "targets": list(p.targets),
                   **({"setting": p.cand.setting} if p.cand.setting else {})}
            if all(i in fixed for i in p.targets):
                row.update(verified=False, skipped=True,
                           reason="an earlier candidate already fixed its targets")
            else:
                t1 = time.perf_counter()
                verdict = prove_candidate(
                    {"path": p.cand.path, "start_line": p.cand.start_line,
                     "end_line": p.cand.end_line, "lines": list(p.cand.lines),
                     "original": p.original, "patched": p.patched, "guards": list(p.cand.guards),
                     "safe": p.cand.safe, "targets": [targets[i] for i in p.targets],
                     "setting": p.cand.setting},
                    model, cases, head_outs, head, {}, {"backend": "eager"}, paths, phases,
                    CANDIDATE_S, guard_cache, backend_cache)
                row.update(verified=bool(verdict.get("accepted")), evidence=verdict.get("evidence"),
                           reason=verdict.get("reason"), unexercised=bool(verdict.get("unexercised")),
                           s=round(time.perf_counter() - t1, 2))
                if verdict.get("accepted"):
                    (settled if p.cand.setting else fixed).update({i: p.cid for i in p.targets})
                    # head's other breaks on the replaced lines that the proof saw gone: the
                    # review points their comments at this suggestion (pt2bot/fixes.py `_riders`);
                    # a setting has no suggestion, so what it also removed is settled, not fixed
                    for i, t in enumerate(targets):
                        if i not in fixed and any(a.get("path") == t.get("path") and a.get("line") == t.get("line")
                                                  and a.get("gb") == t.get("gb") for a in verdict.get("also") or ()):
                            (settled if p.cand.setting else fixed).setdefault(i, p.cid)
            result["candidates"].append(row)
        for i, t in enumerate(targets):
            t["fixed_by"] = fixed.get(i)
            t["setting"] = settled.get(i)
            t["why"] = why.get(i)
        result["targets"] = targets
    except Exception as e:  # noqa: BLE001 - the model's failure is the result
        result.update(status="error", error=f"{type(e).__name__}: {e}"[:1000])
    result["s"] = round(time.perf_counter() - t0, 1)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
    return 0


def run_all(libs: list[str], timeout: int, keys: list[str] | None = None, matrix: bool = False
            ) -> dict[str, Any]:
    import tempfile

    sys.path.insert(0, REAL)
    import models

    py = os.path.join(VENV, "bin", "python")
    env = {**os.environ, "PYTHONPATH": ROOT}
    out: dict[str, Any] = {"commit": _commit(), "load_before": os.getloadavg()[0], "matrix": matrix,
                           "models": {}}
    for sp in models.SPECS:
        if (libs and sp.lib not in libs) or (keys and sp.key not in keys):
            continue
        with tempfile.TemporaryDirectory() as tmp:
            res = os.path.join(tmp, "out.json")
            t0 = time.perf_counter()
            try:
                subprocess.run([py, __file__, "--worker", sp.key, res, os.path.join(tmp, "code")]
                               + (["--matrix"] if matrix else []), env=env, timeout=timeout, capture_output=True, check=False)
                got = json.load(open(res)) if os.path.exists(res) else {
                    "model": sp.key, "lib": sp.lib, "status": "error", "error": "no result"}
            except subprocess.TimeoutExpired:
                got = {"model": sp.key, "lib": sp.lib, "status": "timeout", "targets": []}
            got["wall_s"] = round(time.perf_counter() - t0, 1)
        out["models"][sp.key] = got
        n = len(got.get("targets") or ())
        v = sum(1 for t in got.get("targets") or () if t.get("fixed_by"))
        print(f"{sp.key:45s} {got.get('status'):8s} sites {n:3d} verified {v:3d} "
              f"{got['wall_s']:6.1f} s", flush=True)
    out["load_after"] = os.getloadavg()[0]
    return out


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def _verified_everywhere(data: dict[str, Any]) -> set[tuple[str, str, int]]:
    """The sites one review of every model that breaks there would verify a fix for
    (pt2bot/fixes.py `_verdict`): one edit accepted on each of those models, or on some and
    `unexercised` on the others. Each model here is its own proof, so where models verified
    different edits, or one model skipped the edit after an earlier one fixed its target, no
    single edit is verified everywhere."""
    per_site: dict[tuple[str, str, int], list[dict[Any, str]]] = collections.defaultdict(list)
    for m in data["models"].values():
        targets = m.get("targets") or ()
        for i, t in enumerate(targets):
            verdicts: dict[Any, str] = {}
            for c in m.get("candidates") or ():
                # (a target the verified edit also fixed, on its replaced lines, is its too)
                if c.get("setting") or (i not in (c.get("targets") or ()) and t.get("fixed_by") != c.get("id")):
                    continue
                key = (c.get("path"), c.get("start_line"), c.get("end_line"), tuple(c.get("lines") or ()))
                verdicts[key] = "ok" if c.get("verified") else ("weak" if c.get("unexercised") else "no")
            per_site[(m["lib"], t["path"], t["line"])].append(verdicts)
    out = set()
    for site, models in per_site.items():
        keys = set.intersection(*(set(k for k, v in vs.items() if v in ("ok", "weak")) for vs in models))
        if any(any(vs[k] == "ok" for vs in models) for k in keys):
            out.add(site)
    return out


def report(data: dict[str, Any]) -> str:
    sys.path.insert(0, REAL)
    import models

    batch_of = {lib: name for name, libs in models.HELD_OUT_BATCHES.items() for lib in libs}
    sites: dict[tuple[str, str, int], dict[str, Any]] = {}
    failed = []
    for key, m in data["models"].items():
        if m.get("status") != "ok":
            err = " ".join(str(m.get("error") or "").split())
            failed.append(f"{key} ({m.get('status')}: {err[:160]})")
        for u in m.get("unlocated") or ():
            sites.setdefault((m["lib"], u["path"], u["reported_line"]), {
                "lib": m["lib"], "gb": u.get("gb"), "source": "", "verified": False, "candidates": 0,
                "why": f"dynamo put the break at line {u['reported_line']}, which holds none of "
                       f"`{u.get('function')}`'s code: no line to fix"})
        for t in m.get("targets") or ():
            k = (m["lib"], t["path"], t["line"])
            s = sites.setdefault(k, {"lib": m["lib"], "gb": t.get("gb"), "source": t.get("source"),
                                     "verified": False, "candidates": 0, "why": t.get("why"),
                                     "setting": False})
            s["verified"] = s["verified"] or bool(t.get("fixed_by"))
            s["setting"] = s["setting"] or bool(t.get("setting"))
            ids = [c for c in m.get("candidates") or () if not c.get("setting") and any(
                (m["targets"][i]["path"], m["targets"][i]["line"]) == (t["path"], t["line"])
                for i in c["targets"])]
            s["candidates"] = max(s["candidates"], len(ids))
            if not t.get("fixed_by") and ids:
                why = "; ".join(dict.fromkeys(str(c.get("reason")) for c in ids if not c.get("verified")))
                # cut at a word, and say so, rather than mid-word ("...; the pat")
                s["why"] = why if len(why) <= 300 else why[:300].rsplit(" ", 1)[0] + " ..."
    lines = [f"Run at {data.get('commit')}, load average {data.get('load_before')} before and "
             f"{data.get('load_after')} after. Sites are a library's file and line (a site broken in "
             "several models counts once, verified if any model's proof verified it).", ""]

    def table(title: str, keyf) -> None:
        groups: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
        for s in sites.values():
            groups[keyf(s)].append(s)
        lines.extend([f"| {title} | sites | with a candidate | verified | share verified |",
                      "|---|---:|---:|---:|---:|"])
        for g, ss in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            c = sum(1 for s in ss if s["candidates"])
            v = sum(1 for s in ss if s["verified"])
            lines.append(f"| {g} | {len(ss)} | {c} | {v} | {100 * v // max(len(ss), 1)} % |")
        lines.append("")

    n = len(sites)
    c = sum(1 for s in sites.values() if s["candidates"])
    v = sum(1 for s in sites.values() if s["verified"])
    lines.append(f"**{v} of {n} graph-break sites get a verified fix** ({c} with a candidate).")
    every = _verified_everywhere(data)
    lines.append(f"As one review of all the models that break at a site would decide (the same edit "
                 f"accepted on each of them, or refused on some only because their inputs cannot "
                 f"exercise a guard another model exercised): **{len(every)} of {n}**.")
    st = [s for s in sites.values() if s.get("setting")]
    if any("setting" in t for m in data["models"].values() for t in m.get("targets") or ()):
        lines.append(f"Apart from those, {len(st)} of the {n} sites get a verified dynamo setting "
                     f"(torch's own hint for GB0124 and GB0036; {sum(1 for s in st if not s['verified'])} "
                     "of them with no verified fix): text in a review, not a fix of the line.")
    lines.append("")
    table("kind", lambda s: s["gb"] or "?")
    table("library (held-out batch)", lambda s: f"{s['lib']} ({batch_of.get(s['lib'], 'tuned')})")
    lines += ["| site | kind | source | candidates | verified | why not |", "|---|---|---|---:|---|---|"]
    for (lib, path, line), s in sorted(sites.items()):
        src = str(s.get("source") or "").replace("|", "\\|")[:90]
        why = "" if s["verified"] else " ".join(str(s.get("why") or "").split()).replace("|", "\\|")
        lines.append(f"| {lib} {path}:{line} | {s['gb']} | `{src}` | {s['candidates']} | "
                     f"{'yes' if s['verified'] else 'no'}{' (a setting)' if s.get('setting') else ''} | {why} |")
    if failed:
        lines += ["", "Models that did not run: " + "; ".join(failed)]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", nargs=3, metavar=("KEY", "OUT", "SCRATCH"))
    ap.add_argument("--lib", action="append", default=[])
    ap.add_argument("--model", action="append", default=[], help="a model's key, lib:name")
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--matrix", action="store_true",
                    help="every input case of a model as its shape matrix (recompiles, compiled "
                         "outputs against eager), as a review runs it; default: the first case, "
                         "the break pass only")
    a = ap.parse_args()
    if a.worker:
        return worker(*a.worker, matrix=a.matrix)
    if a.report:
        print(report(json.load(open(a.out))), end="")
        return 0
    data = run_all(a.lib, a.timeout, a.model, a.matrix)
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1)
        fh.write("\n")
    print(report(data), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
