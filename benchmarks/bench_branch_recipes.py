"""The branch and mask recipes written for the real-code benchmark's sites (the dispatch on
a tensor's value, the check that computes its message first, the masked values that only feed
reductions, `repeat_interleave`'s output size) on the libraries' own code: does the candidate
`fix_candidates` writes remove the site's graph break, and does eager code compute what head
computes?

For each site below, the finding is read from the stored check of the real-code benchmark
(`benchmarks/real_code/results/check@final/<lib>.json`), its candidate applied to the
library's file text and the result executed as a module of its own (the library's files are
never written). Head (the library's module) and the candidate's module are then called on the
same inputs with torch's generator seeded the same before each call (eager: outputs compared
with `torch.equal`, an exception compared by type), and compiled once (eager backend, one
thread) on the first input: the lines of that file where dynamo records a graph break.

Run it with the real-code benchmark's venv (torch 2.13 and the libraries), this checkout on
the path:

    PYTHONPATH=. /work/venvs/realcode/bin/python benchmarks/bench_branch_recipes.py [--out FILE.md]

torchvision's pure-Python parts import beside torch 2.13.0+cpu only with its two op schemas
defined first (see /work/shared/TORCH-NOTES.md); no torchvision op is called.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
RESULTS = os.path.join(HERE, "real_code", "results", "check@final")


def sites(torch):
    """(lib, path, line, module, what to call on a module, the inputs)."""
    g = torch.Generator().manual_seed(0)

    def images(n):
        return [(torch.rand(3, 16, 16, generator=g),) for _ in range(n)]

    def uint8(n):
        out = [(torch.randint(0, 256, (3, 8, 8), dtype=torch.uint8, generator=g),) for _ in range(n)]
        out.append((torch.full((3, 8, 8), 7, dtype=torch.uint8),))                    # one value: step 0
        out.append(((torch.randint(0, 2, (3, 8, 8), generator=g) * 255).to(torch.uint8),))   # two values
        return out

    def navit(mod):
        torch.manual_seed(0)
        m = mod.NaViT(image_size=16, patch_size=4, num_classes=5, dim=16, depth=1, heads=2, mlp_dim=32)
        return m.eval()

    def swin(mod):
        return lambda x: (mod.SwinUNETR._check_input_size(types.SimpleNamespace(patch_size=2), x.shape[2:]), x)[1]

    return [
        ("torchvision", "transforms/transforms.py", 1281, "torchvision.transforms.transforms",
         lambda mod: mod.ColorJitter(0.5, 0.5, 0.5, 0.2), images(6)),
        ("torchvision", "transforms/transforms.py", 1281, "torchvision.transforms.transforms",
         lambda mod: mod.ColorJitter(0.5, 0, 0.5, 0), images(3)),
        ("torchvision", "transforms/_functional_tensor.py", 873, "torchvision.transforms._functional_tensor",
         lambda mod: mod.equalize, uint8(10)),
        ("vit-pytorch", "na_vit.py", 318, "vit_pytorch.na_vit", navit,
         [([[torch.rand(3, 16, 16, generator=g), torch.rand(3, 8, 12, generator=g)], [torch.rand(3, 12, 8, generator=g)]],)
          for _ in range(3)]),
        ("monai", "networks/nets/swin_unetr.py", 385, "monai.networks.nets.swin_unetr", swin,
         [(torch.rand(1, 1, 32, 64, 32, generator=g),), (torch.rand(1, 1, 32, 48, 32, generator=g),)]),
    ]


class _Breaks(logging.Handler):
    """The `file:line` of each graph break dynamo logs (torch._logging graph_breaks)."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def emit(self, record):
        msg = record.getMessage()
        if "Graph break in user code at " in msg:
            self.seen.append(msg.split("Graph break in user code at ", 1)[1].split("\n", 1)[0])


def measure(torch, site, handler) -> dict:
    from pt2bot.findings import Finding
    from pt2bot.rules import apply_candidate, fix_candidates

    lib, path, line, modname, make, inputs = site
    with open(os.path.join(RESULTS, f"{lib}.json"), encoding="utf-8") as fh:
        check = json.load(fh)
    pkg = check["benchmark"]["package_dir"]
    with open(os.path.join(pkg, path), encoding="utf-8") as fh:
        src = fh.read()
    finding = next(Finding.from_dict(f) for f in check["findings"] if (f["path"], f["line"]) == (path, line))
    cand = fix_candidates(finding, src)[0]
    head_mod = __import__(modname, fromlist=["_"])
    cand_mod = types.ModuleType(modname)
    cand_mod.__dict__.update(__file__=os.path.join(pkg, path), __package__=modname.rpartition(".")[0])
    exec(compile(apply_candidate(src, cand), os.path.join(pkg, path), "exec"), cand_mod.__dict__)
    head, new = make(head_mod), make(cand_mod)

    def call(fn, args):
        torch.manual_seed(0)
        try:
            return fn(*args)
        except Exception as e:   # a check's exception is an output too
            return type(e)

    equal = 0
    for args in inputs:
        h, c = call(head, args), call(new, args)
        same = (h == c) if isinstance(h, type) or isinstance(c, type) else torch.equal(h, c)
        equal += bool(same)

    def breaks(fn):
        torch._dynamo.reset()
        handler.seen.clear()
        call(torch.compile(fn, backend="eager"), inputs[0])
        name = os.path.basename(path)
        return sorted({int(b.rsplit(":", 1)[1]) for b in handler.seen if b.rsplit(":", 1)[0].endswith(name)})

    return {"lib": lib, "path": path, "line": line, "candidate": cand.title, "lines": f"{cand.start_line}-{cand.end_line}",
            "added_lines": len(cand.lines) - (cand.end_line - cand.start_line + 1),
            "inputs": len(inputs), "equal": equal, "head_breaks": breaks(head), "cand_breaks": breaks(new)}


def render(rows, torch_version) -> str:
    out = ["# The branch and mask recipes on the real libraries' code", "",
           f"`PYTHONPATH=. /work/venvs/realcode/bin/python benchmarks/bench_branch_recipes.py`, torch {torch_version}, "
           "eager backend, one thread. Breaks: the lines of the site's file where dynamo records a graph break, "
           "compiled on the first input (the candidate's lines after the edit shift by the lines it adds).", "",
           "| site | candidate (lines) | eager outputs equal | head's breaks | candidate's breaks |",
           "|---|---|---:|---|---|"]
    for r in rows:
        out.append(f"| {r['lib']} {r['path']}:{r['line']} | {r['candidate']} ({r['lines']}, "
                   f"{r['added_lines']:+d} lines) | {r['equal']}/{r['inputs']} | {r['head_breaks']} | {r['cand_breaks']} |")
    out += ["", "How to read it: a break of head's the candidate no longer has is the site's, gone. A break only the "
            "candidate has, past the site, is code head ran uncompiled (a break inside a loop makes dynamo skip "
            "the whole frame, so head never traced it): NaViT's later `.item()` and `x[is_images]`, which the "
            "proof's judge (pt2bot/smoke/verify.py) reports as uncovered, not new, where head's run records "
            "that frame as skipped. ColorJitter's 1261-1264 are `float(torch.empty(1).uniform_"
            "(...))` in `get_params` (GB0124; only the factors that are not None are drawn), equalize's 871 is "
            "`torch.bincount` and 875/876 the `if step == 0:` that follows (both have their own findings)."]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "results", "branch_recipes.md"))
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)
    lib = torch.library.Library("torchvision", "DEF")   # noqa: F841 - kept alive while torchvision imports
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor qdata, Tensor scores, float iou_threshold) -> Tensor")
    handler = _Breaks()
    torch._logging.set_logs(graph_breaks=True)
    logging.getLogger("torch._dynamo").addHandler(handler)
    logging.getLogger("torch._dynamo").propagate = False
    rows = [measure(torch, s, handler) for s in sites(torch)]
    text = render(rows, torch.__version__)
    with open(args.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    with open(os.path.splitext(args.out)[0] + ".json", "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1)
    print(text)


if __name__ == "__main__":
    main()
