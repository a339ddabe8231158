"""The PTC110 cache recipes and the PTC102 `list(range(...))` recipe on the real-code benchmark's
own classes: does the candidate `fix_candidates` writes at the finding stop the recompile (or
the break), and does it compute what head computes?

For each site below, the finding is read from the stored check of the real-code benchmark
(`benchmarks/real_code/results/check@final/<lib>.json`), its candidate applied to the library's
file text, and the function the edit is in compiled into a subclass of the library's class (the
library's files are never written). Head and candidate are then compiled from a fresh module
(eager backend, one thread) over four calls with one input: the frames dynamo compiled, the
graphs it handed the backend and its graph breaks counted (dynamo's counters); the candidate's compiled and eager outputs are
compared with head's eager outputs with `torch.equal`.

Run it with the real-code benchmark's venv (torch 2.13 and the libraries), this checkout on the path:

    PYTHONPATH=. /work/venvs/realcode/bin/python benchmarks/bench_state_recipes.py [--out FILE.md]

A fresh module matters: pt2bot's own smoke run (and the proof worker) computes head's eager
outputs before compiling, which fills such a cache first; and with more than one shape case
dynamo reports the size mismatch, not the cache's guard. There the recompile these candidates
remove is not observed.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import json
import os
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real_code")
sys.path.insert(0, REAL)
sys.path.insert(0, os.path.dirname(HERE))


def sites(torch):
    """(lib, path, line, rule, module, class, constructor kwargs, call(module, inputs), inputs)."""
    fwd = lambda m, *a: m(*a)   # noqa: E731
    return [
        ("timm", "models/levit.py", 305, "PTC110", "timm.models.levit", "Attention",
         dict(dim=32, key_dim=8, num_heads=2, attn_ratio=2, resolution=4), fwd, (torch.randn(2, 16, 32),)),
        ("timm", "models/tiny_vit.py", 273, "PTC110", "timm.models.tiny_vit", "Attention",
         dict(dim=32, key_dim=8, num_heads=2, attn_ratio=1, resolution=(4, 4)), fwd, (torch.randn(2, 16, 32),)),
        ("timm", "models/efficientformer.py", 109, "PTC110", "timm.models.efficientformer", "Attention",
         dict(dim=32, key_dim=8, num_heads=2, attn_ratio=2, resolution=4), fwd, (torch.randn(2, 16, 32),)),
        ("timm", "layers/patch_embed.py", 409, "PTC110", "timm.layers.patch_embed",
         "PatchEmbedResamplerFixedOrigSize", dict(orig_size=(4, 4)), fwd, (torch.randn(8, 3, 4, 4), [6, 6])),
        ("kornia", "geometry/ransac.py", 613, "PTC110", "kornia.geometry.ransac", "RANSAC",
         dict(model_type="homography"), lambda m, n: m._prosac_schedule(4, n, torch.device("cpu")), (12,)),
        ("monai", "losses/dice.py", 200, "PTC102", "monai.losses.dice", "DiceLoss", dict(sigmoid=True), fwd,
         (torch.randn(2, 3, 8, 8), torch.randint(0, 2, (2, 3, 8, 8)).float())),
    ]


def measure(torch, site) -> dict:
    from torch._dynamo.utils import counters

    from pt2bot.findings import Finding
    from pt2bot.rules import apply_candidate, fix_candidates
    import evaluate

    lib, path, line, rule, modname, clsname, kw, call, args = site
    check, _ = evaluate.load_library(os.path.join(REAL, "results"), lib, "check@final")
    pkg = check["benchmark"]["package_dir"]
    f = next(Finding.from_dict(x) for x in check["findings"]
             if (x["rule"], x["path"], x["line"]) == (rule, path, line))
    with open(os.path.join(pkg, path), encoding="utf-8") as fh:
        text = fh.read()
    cands = fix_candidates(f, text)
    if not cands:
        return {"site": f"{lib} {path}:{line}", "rule": rule, "candidate": None}
    cand = cands[0]
    patched = apply_candidate(text, cand)
    fn = max((n for n in ast.walk(ast.parse(patched)) if isinstance(n, ast.FunctionDef)
              and n.lineno <= cand.start_line <= (n.end_lineno or n.lineno)), key=lambda n: n.lineno)
    first = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    src = textwrap.dedent("\n".join(patched.splitlines()[first - 1:fn.end_lineno]))
    mod = importlib.import_module(modname)
    ns: dict = {}
    exec(compile(src, os.path.join(pkg, path), "exec"), mod.__dict__, ns)
    cls = getattr(mod, clsname)
    sub = type(clsname, (cls,), {fn.name: ns[fn.name]})

    def fresh(kind):
        torch.manual_seed(0)
        m = kind(**kw)
        m.eval()   # some of these `train` overrides return None
        return m

    def compiled(m):
        graphs = []

        def backend(gm, example_inputs):
            graphs.append(gm)
            return gm.forward

        torch._dynamo.reset()
        counters.clear()
        c = torch.compile(lambda *a: call(m, *a), backend=backend)
        outs = [c(*args) for _ in range(4)]
        breaks = sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values())
        # frames dynamo compiled: a call that finds a cache filled compiles the frame again even
        # when what it runs then has no tensor op (no graph for the backend)
        return {"frames": counters["frames"]["ok"], "graphs": len(graphs), "breaks": breaks}, outs

    h, _ = compiled(fresh(cls))
    c, outs = compiled(fresh(sub))
    with torch.no_grad():
        ref = call(fresh(cls), *args)
        eager = call(fresh(sub), *args)
    return {"site": f"{lib} {path}:{line}", "rule": rule, "candidate": cand.title, "safe": cand.safe,
            "head": h, "candidate_run": c,
            "compiled_equal": all(torch.equal(o, ref) for o in outs), "eager_equal": bool(torch.equal(eager, ref))}


def markdown(rows, load) -> str:
    out = ["# PTC110 / PTC102 candidates on the real-code classes", "",
           "Generated by `benchmarks/bench_state_recipes.py` (torch " + rows[0]["torch"] + ", CPU, eager backend, "
           "one thread, a fresh module compiled over 4 calls with one input; machine " + load + ").", "",
           "| site | rule | candidate | head: frames compiled / graphs / breaks | candidate: frames / graphs / "
           "breaks | compiled = head eager | eager = head eager |", "|---|---|---|---:|---:|---|---|"]
    for r in rows:
        if r["candidate"] is None:
            out.append(f"| {r['site']} | {r['rule']} | none | – | – | – | – |")
            continue
        out.append(f"| {r['site']} | {r['rule']} | {r['candidate']}{' (safe)' if r['safe'] else ''} | "
                   f"{r['head']['frames']} / {r['head']['graphs']} / {r['head']['breaks']} | "
                   f"{r['candidate_run']['frames']} / {r['candidate_run']['graphs']} / "
                   f"{r['candidate_run']['breaks']} | "
                   f"{'yes' if r['compiled_equal'] else 'NO'} | {'yes' if r['eager_equal'] else 'NO'} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="write the table there (Markdown) and the rows beside it (.json)")
    args = ap.parse_args(argv)
    import torch

    import collect
    collect.shim_torchvision()   # timm imports torchvision's Python parts
    torch.set_num_threads(1)
    rows = [measure(torch, s) for s in sites(torch)]
    for r in rows:
        r["torch"] = torch.__version__
    load = "load average %.2f" % os.getloadavg()[0]
    md = markdown(rows, load)
    print(md)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(md)
        with open(os.path.splitext(args.out)[0] + ".json", "w", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
