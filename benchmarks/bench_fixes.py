"""How many new graph breaks on a PR's lines get a verified fix, per kind; what the proof
rejected and why; what it adds to a review's wall time; whether each posted suggestion
survives an independent re-run.

    python benchmarks/bench_fixes.py [--out benchmarks/results/fixes.json]

The mix of break kinds comes from the real-code benchmark's truth (every graph-break site
dynamo recorded running third-party models: benchmarks/real_code/results/truth). The PRs are
tiny models in real git repositories, each head adding one break site written after a real
one of that kind (the library and line it follows are named in CASES), or after what PRs
add that libraries do not ship (a print, a log line, a NaN guard). Each PR is reviewed by
`pt2bot review` (eager backend, the proof loop on, its default budget); report.json's
`fixes` says which targets got a verified fix and why the others did not, `timings` what the
proof cost next to the smoke runs. Each verified fix is then re-run independently: the
suggestion written into a copy of head on disk, imported from that file in a fresh process
next to head's file, same seed and weights, outputs compared on every shape case, and the
graph breaks of the patched model counted by `pt2bot.testing.graph_breaks`.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRUTH = os.path.join(ROOT, "benchmarks", "real_code", "results", "truth")

HEADER = "import logging\n\nimport torch\nfrom torch import nn\n\nlog = logging.getLogger(__name__)\n\n\n"
CLASS = """\
class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("factor", torch.ones(8))
        self.register_buffer("weights", torch.tensor([0.5, 2.0]))

    def forward(self, x):
        h = self.lin(x)
{body}        return h
"""

# name: (GB code, the real site it follows or why a PR adds it, the lines the PR adds)
CASES = {
    # GB0124 .item(): the real sites mostly turn a tensor into a size or a random draw
    "item_size_list": ("GB0124", "monai networks/nets/navit.py:522 `int(lengths.amax().item())` of "
                       "`lengths = torch.tensor([s.shape[0] for s in ...])`, used as a size",
                       ["parts = [h[:, :3], h[:, 3:]]",
                        "lengths = torch.tensor([p.shape[1] for p in parts], dtype=torch.long)",
                        "max_len = int(lengths.amax().item())", "h = torch.nn.functional.pad(h, (0, max_len))"]),
    "item_size": ("GB0124", "monai networks/nets/navit.py:522 `int(lengths.amax().item())` used as a size",
                  ["lengths = (h > 0).sum(1)", "max_len = int(lengths.amax().item())",
                   "h = torch.nn.functional.pad(h, (0, max_len))"]),
    "item_scale": ("GB0124", "a scalar read back into arithmetic (the issue's `.item()` feeding tensor math)",
                   ["scale = h.abs().max().item()", "h = h / scale"]),
    "item_random": ("GB0124", "torchvision transforms/autoaugment.py:356 `int(torch.randint(...).item())`",
                    ["k = int(torch.randint(3, (1,)).item())", "h = h * (k + 1)"]),
    # GB0109 / GB0033 .tolist()
    "tolist": ("GB0109", "torchvision transforms/functional.py:703 `res.tolist()` feeding arithmetic",
               ["w = self.weights.tolist()", "h = h * w[0] + w[1]"]),
    # GB0170 a branch on a tensor value
    "branch_neutral": ("GB0170", "kornia augmentation/_2d/intensity/color_jiggle.py:98 "
                       "`if (factors[idx] != neutral[idx]).any():`",
                       ["if (self.factor != 1).any():", "    h = h * self.factor"]),
    "nan_guard": ("GB0170", "a NaN guard a PR adds (`if torch.isnan(h).any(): ...`)",
                  ["if torch.isnan(h).any():", "    h = torch.nan_to_num(h)"]),
    "branch_or": ("GB0170", "torchdiffeq _impl/misc.py:60 `if d0 < 1e-5 or d1 < 1e-5:` picking a step size",
                  ["d0 = h.norm()", "d1 = x.norm()", "if d0 < 1e-5 or d1 < 1e-5:", "    s = torch.ones(())",
                   "else:", "    s = d0 / d1", "h = h * s"]),
    "assert_message": ("GB0170", "torchdiffeq _impl/rk_common.py:285 `assert torch.isfinite(y0).all(), "
                       "'non-finite values in state `y`: {}'.format(y0)`",
                       ["assert torch.isfinite(h).all(), 'non-finite values in `h`: {}'.format(h)"]),
    "branch_flag": ("GB0170", "torchdiffeq _impl/rk_common.py:336 `if accept_step:` on a name bound to a "
                    "comparison of tensors earlier",
                    ["ok = h.abs().mean() < 1.0", "if ok:", "    h = h * 0.5"]),
    # GB0036 boolean-mask indexing
    "masked_mean": ("GB0036", "segmentation-models-pytorch losses/focal.py:118 mask indexing, then a mean",
                    ["mask = x > 0", "m = h[mask].mean()", "h = h - m"]),
    "masked_select": ("GB0036", "monai networks/nets/navit.py:583 `pooled = pooled[is_valid]` (the shape changes)",
                      ["keep = h.sum(1) > 0", "h = h[keep]"]),
    "masked_write": ("GB0036", "torchvision transforms/_functional_tensor.py:571 `img[mask] = fill_img[mask]`",
                     ["fill = self.factor.expand_as(h)", "mask = h < 0", "h[mask] = fill[mask]"]),
    "masked_add": ("GB0036", "monai networks/nets/vista3d.py:543 `point_embedding[point_labels == 0] += w` "
                   "(a mask over the leading dimensions)",
                   ["e = h.unsqueeze(1).repeat(1, 2, 1)", "labels = (h[:, :2] > 0).long()",
                    "e[labels == 0] += self.factor", "h = e.sum(1)"]),
    # what PRs add: a print, a log line
    "print": ("GB0059", "a debugging print a PR adds", ['print("h", h.shape)']),
    "logging": ("GB0059", "a log line a PR adds", ['log.warning("h %s", h.shape)']),
}
PRS = [["item_size", "item_scale", "item_random", "tolist"],
       ["branch_neutral", "nan_guard", "print", "logging"],
       ["masked_mean", "masked_select"],
       ["item_size_list", "masked_write", "masked_add"],
       ["branch_or", "assert_message", "branch_flag"]]


def model_source(name: str, lines: list[str]) -> str:
    cls = "".join(p.capitalize() for p in name.split("_"))
    body = "".join(f"        {ln}\n" for ln in lines)
    return HEADER + CLASS.format(name=cls, body=body)


def config(names: list[str], backend: str = "eager") -> str:
    out = ["version: 1", "static: {paths: [pkg/]}", "models:"]
    for n in names:
        cls = "".join(p.capitalize() for p in n.split("_"))
        out += [f"  - name: {n}", f"    entry: pkg.{n}:{cls}",
                "    inputs: [{name: x, shape: [batch, 8]}]", "    shapes: {batch: [2, 4]}",
                "    export: false"]
    out.append(f"run: {{backend: {backend}, latency: false, timeout_s: 300}}")
    return "\n".join(out) + "\n"


def git(repo: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                          text=True, env=env).stdout


def make_pr(root: str, names: list[str], backend: str = "eager") -> str:
    repo = os.path.join(root, "repo")
    os.makedirs(os.path.join(repo, "pkg"))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "bench@pt2bot.invalid")
    git(repo, "config", "user.name", "bench")
    open(os.path.join(repo, "pt2bot.yml"), "w").write(config(names, backend))
    open(os.path.join(repo, "pkg", "__init__.py"), "w").write("")
    for n in names:
        open(os.path.join(repo, "pkg", f"{n}.py"), "w").write(model_source(n, []))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "pr")
    for n in names:
        open(os.path.join(repo, "pkg", f"{n}.py"), "w").write(model_source(n, CASES[n][2]))
    git(repo, "commit", "-qam", "pr")
    return repo


RERUN = textwrap.dedent("""\
    import importlib.util, json, sys
    import torch
    from pt2bot.testing import graph_breaks

    def load(path, name):
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        return mod

    head_path, fixed_path, cls, root = sys.argv[1:5]
    head_cls = getattr(load(head_path, "bench_head"), cls)
    fixed_cls = getattr(load(fixed_path, "bench_fixed"), cls)
    torch.manual_seed(0)
    head = head_cls().eval()
    torch.manual_seed(0)
    fixed = fixed_cls().eval()
    fixed.load_state_dict(head.state_dict())
    equal = True
    for batch in (2, 4):
        x = torch.randn(batch, 8, generator=torch.Generator().manual_seed(batch))
        with torch.no_grad():
            torch.manual_seed(1)
            a = head(x)
            torch.manual_seed(1)
            b = fixed(x)
        equal = equal and a.shape == b.shape and torch.allclose(a, b, rtol=1e-4, atol=1e-5, equal_nan=True)
    x = torch.randn(2, 8, generator=torch.Generator().manual_seed(2))
    breaks = [(b.gb, b.line) for b in graph_breaks(fixed, x, user_code=root)]
    head_breaks = [(b.gb, b.line) for b in graph_breaks(head, x, user_code=root)]
    print(json.dumps({"equal": bool(equal), "breaks": breaks, "head_breaks": head_breaks}))
""")


def rerun(repo: str, name: str, fix: dict, python: str) -> dict:
    """The suggestion applied to a copy of the file on disk, re-run in a fresh process."""
    path = os.path.join(repo, fix["path"])
    lines = open(path, encoding="utf-8").read().split("\n")
    fixed = lines[:fix["start_line"] - 1] + fix["lines"] + lines[fix["end_line"]:]
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "fixed_" + os.path.basename(path))
        open(copy, "w", encoding="utf-8").write("\n".join(fixed))
        cls = "".join(p.capitalize() for p in name.split("_"))
        out = subprocess.run([python, "-c", RERUN, path, copy, cls, tmp], capture_output=True,
                             text=True, cwd=tmp)
    if out.returncode != 0:
        return {"ok": False, "error": out.stderr[-800:]}
    got = json.loads(out.stdout.strip().splitlines()[-1])
    gone = len(got["breaks"]) < len(got["head_breaks"])
    return {"ok": bool(got["equal"] and gone), **got}


def real_mix() -> collections.Counter:
    mix: collections.Counter = collections.Counter()
    for f in glob.glob(os.path.join(TRUTH, "*.json")):
        for b in json.load(open(f)).get("breaks") or ():
            mix[b.get("gb") or "?"] += 1
    return mix


def markdown(results: dict) -> str:
    """The figures as Markdown (README and benchmarks/results/fixes.md)."""
    mix = collections.Counter(results["real_mix"])
    total = sum(mix.values())
    cases = results["cases"]
    by_gb: dict[str, list[dict]] = collections.defaultdict(list)
    for c in cases.values():
        by_gb[c["gb"]].append(c)
    rows = ["| kind | real-code sites | PR cases | verified fix | independent re-run ok |",
            "|---|---:|---:|---:|---:|"]
    weighted = 0.0
    for gb, n in mix.most_common():
        cs = by_gb.get(gb, [])
        fixed = sum(c["fixed"] for c in cs)
        targets = sum(c["targets"] for c in cs)
        reruns = [r["ok"] for c in cs for r in c["rerun"]]
        share = fixed / targets if targets else 0.0
        weighted += n / total * share
        rows.append(f"| {gb} | {n} ({100 * n / total:.0f} %) | {targets} | "
                    f"{f'{fixed}/{targets}' if targets else '– (no case: counted 0)'} | "
                    f"{f'{sum(reruns)}/{len(reruns)}' if reruns else '–'} |")
    for gb in sorted(set(by_gb) - set(mix)):
        cs = by_gb[gb]
        fixed, targets = sum(c["fixed"] for c in cs), sum(c["targets"] for c in cs)
        reruns = [r["ok"] for c in cs for r in c["rerun"]]
        rows.append(f"| {gb} (PR-only: print, logging) | 0 | {targets} | {fixed}/{targets} | "
                    f"{sum(reruns)}/{len(reruns)} |")
    all_t = sum(c["targets"] for c in cases.values())
    all_f = sum(c["fixed"] for c in cases.values())
    lines = ["\n".join(rows), "",
             f"PR cases with a verified fix: {all_f}/{all_t}; weighted by the real-code mix "
             f"(kinds without a case count as 0): {100 * weighted:.0f} %.", "",
             "| case | after | verified | why not / rejected candidates |", "|---|---|---|---|"]
    for name, c in cases.items():
        why = "; ".join([*(f"{r['rule']} {r['title'][:50]}: {r['reason']}" for r in c["rejected"]
                           if not (r["reason"] or "").startswith("an earlier candidate")),
                         *(r for r in c["unfixed_reasons"] if not c["rejected"])])
        lines.append(f"| {name} | {c['after']} | {c['fixed']}/{c['targets']} | {why or '–'} |")
    lines += ["", "| PR | models | smoke s (base + head) | proof s | proof / (smoke per side and model × models proven) |",
              "|---|---|---:|---:|---:|"]
    for i, p in enumerate(results["prs"], 1):
        proven = sum(1 for n in p["models"] if cases[n]["candidates"])
        per = p["smoke_s"] / (2 * len(p["models"]))
        ratio = p["fixes_s"] / (per * proven) if proven and p["fixes_s"] else 0.0
        lines.append(f"| {i} | {len(p['models'])} ({proven} with candidates) | {p['smoke_s']:.0f} | "
                     f"{(p['fixes_s'] or 0):.0f} | {ratio:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "fixes.json"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--report", action="store_true", help="print the figures of --out, run nothing")
    ap.add_argument("--backend", default="eager",
                    help="run.backend of the PRs' pt2bot.yml (inductor: the smoke runs and each "
                         "accepted candidate's check compile with it)")
    args = ap.parse_args()
    if args.report:
        with open(args.out) as fh:
            print(markdown(json.load(fh)), end="")
        return 0
    results = {"load_before": os.getloadavg(), "backend": args.backend, "prs": [], "cases": {}}
    for names in PRS:
        with tempfile.TemporaryDirectory(prefix="bench-fixes-") as root:
            repo = make_pr(root, names, args.backend)
            out = os.path.join(root, "out")
            t0 = time.perf_counter()
            proc = subprocess.run([args.python, "-m", "pt2bot", "review", "--base", "main",
                                   "--out", out], cwd=repo, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            report = json.load(open(os.path.join(out, "report.json")))
            fixes = report.get("fixes") or {"targets": [], "candidates": []}
            cands = fixes["candidates"]
            timings = report.get("timings") or {}
            results["prs"].append({"models": names, "wall_s": round(wall, 1),
                                   "smoke_s": timings.get("smoke"), "fixes_s": timings.get("fixes"),
                                   "total_s": timings.get("total"), "rc": proc.returncode})
            for n in names:
                targets = [t for t in fixes["targets"] if t["model"] == n]
                mine = [c for c in cands if any(fixes["targets"][i]["model"] == n
                                                for i in c["targets"])]
                verified = [c for c in mine if c["verified"]]
                case = {"gb": CASES[n][0], "after": CASES[n][1], "targets": len(targets),
                        "fixed": sum(1 for t in targets if t["fixed_by"]),
                        "unfixed_reasons": [t["reason"] for t in targets if not t["fixed_by"]],
                        "candidates": len(mine),
                        "rejected": [{"rule": c["rule"], "title": c["title"], "reason": c["reason"]}
                                     for c in mine if not c["verified"]],
                        "verified": [{"rule": c["rule"], "title": c["title"], "lines": c["lines"],
                                      "evidence": c["evidence"]} for c in verified],
                        "rerun": [rerun(repo, n, c, args.python) for c in verified]}
                results["cases"][n] = case
                print(f"{n:15s} {case['gb']} targets {case['targets']} fixed {case['fixed']} "
                      f"candidates {case['candidates']} rerun "
                      f"{[r['ok'] for r in case['rerun']]}", flush=True)
    results["load_after"] = os.getloadavg()
    results["real_mix"] = dict(real_mix())
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1)
    print(json.dumps(results["prs"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
