"""An independent re-run of the four sites the real-code proof verifies at s48, with no pt2bot
code: each edit (its lines are copied below, as the proof's file gives them) is applied to its own
copy of its library, beside an unpatched copy of head's package, and the two are run side by side
in fresh processes on inputs of our own, eager and compiled (eager backend,
`torch._dynamo.reset()` before every call so that no call falls back to eager for hitting the
recompile limit; `torch.manual_seed(1234)` before every call, so that random ops draw the same on
both sides). Outputs and input gradients are compared bit for bit (dtype, shape, values; NaN equal
to NaN); exceptions by type ("raised X"). An input's gradient is "none" where the output does not
depend on it (`autograd.grad`'s None, or no output requiring grad at all): "none" against a
tensor is a difference, and where that tensor is all zeros it is listed apart as "none vs zeros".
The listed models' parameters' gradients follow the input gradients in their results.

    /work/venvs/realcode/bin/python benchmarks/results/realcode_rerun_sites_s48.py [EDIT...]

- `pearson`: torchmetrics 1.9.0 `functional/regression/pearson.py:141-145` (the masked write
  under `if valid_mask.any():` as `torch.where`, the left-out entries read as 1), through
  `torchmetrics.functional.pearson_corrcoef` on 1-D and 2-D (multi-output) inputs, float32,
  float64 (and float16), 16, 5, 2 and 1 rows, constant and near-constant columns, columns with
  inf and NaN, huge values, perfectly (anti-)correlated columns, all columns invalid, one
  column; gradients with respect to both inputs; and the spec model `torchmetrics:pearson` on
  its cases and fresh random ones;
- `checks`: torchmetrics 1.9.0 `utilities/checks.py:147-148` (the binary-target check kept in
  eager, `torch._assert_async` when compiling), through
  `torchmetrics.functional.retrieval.retrieval_reciprocal_rank` and `retrieval_precision` with
  bool, int64, int32 and float targets, all-zero, all-one, fractional, NaN, ties in preds,
  negative preds, several top_k; and non-binary targets (2, -1, 1.5, -0.5), where head raises
  ValueError and the patched code, compiled, RuntimeError from `_assert_async`: those compare
  "raised or not" only, the types listed; and the spec models `torchmetrics:retrieval_mrr` and
  `torchmetrics:retrieval_precision` on their cases and fresh random ones;
- `reciprocal_rank`: torchmetrics 1.9.0 `functional/retrieval/reciprocal_rank.py:58-62` (the
  early return and `torch.nonzero(target).view(-1)` as `argmax` and `torch.where`), through
  `retrieval_reciprocal_rank` on the inputs above (non-binary ones compared as results: the edit
  does not touch the check) and top_k None, 0, 1, 2, n, n + 3, -1, 2.0; and the spec model
  `torchmetrics:retrieval_mrr`;
- `divisor`: pytorch-metric-learning 2.9.0 `reducers/divisor_reducer.py:24` (the `and`'s two
  parts swapped, dtype test first), through direct calls of
  `DivisorReducer().sum_and_divide(losses, embeddings, divisor)` with float32, float16 and
  bfloat16 losses, divisor a Python int, a float, inf, a tensor (int, float, float16, inf) and
  zero (int, tensor), float16 sums that are NaN (a NaN loss; inf / inf, where the float32
  fallback gives 0; inf + -inf), gradients with respect to the losses and the embeddings; and the
  spec models `pytorch-metric-learning:margin_distance_weighted` (MarginLoss on a
  DistanceWeightedMiner's triplets) and `pytorch-metric-learning:proxy_anchor_batch_hard`
  (ProxyAnchorLoss weighted by a BatchHardMiner) on their cases, fresh random batches, and the
  loss and miner of each spec called directly on float16 embeddings.
"""
from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

# name: (package, path under site-packages, start_line, end_line, lines, models verified on)
EDITS = {
    "pearson": ("torchmetrics", "torchmetrics/functional/regression/pearson.py", 141, 145, [
        "    corrcoef = (",
        "        torch.where(valid_mask, (torch.where(valid_mask, corr_xy, 1) / (torch.where(valid_mask, var_x, 1) * "
        "torch.where(valid_mask, var_y, 1)).sqrt()).squeeze().to(corrcoef.dtype), corrcoef)",
        "    )",
        "    corrcoef = torch.clamp(corrcoef, -1.0, 1.0)",
    ], ["torchmetrics:pearson"]),
    "checks": ("torchmetrics", "torchmetrics/utilities/checks.py", 147, 148, [
        "    if torch.compiler.is_compiling():",
        "        if not allow_non_binary_target:",
        "            torch._assert_async(torch.logical_not((target.max() > 1) | (target.min() < 0)), "
        "'`target` must contain `binary` values')",
        "    elif not allow_non_binary_target and (target.max() > 1 or target.min() < 0):",
        "        raise ValueError(\"`target` must contain `binary` values\")",
    ], ["torchmetrics:retrieval_mrr", "torchmetrics:retrieval_precision"]),
    "reciprocal_rank": ("torchmetrics", "torchmetrics/functional/retrieval/reciprocal_rank.py", 58, 62, [
        "    position = (target != 0).int().argmax().reshape(1)",
        "    return torch.where(target.sum() == 0, tensor(0.0, device=preds.device),",
        "                       1.0 / (position[0] + 1.0))",
    ], ["torchmetrics:retrieval_mrr"]),
    "divisor": ("pytorch_metric_learning", "pytorch_metric_learning/reducers/divisor_reducer.py", 24, 24, [
        "            if losses.dtype == torch.float16 and torch.isnan(output):",
    ], ["pytorch-metric-learning:margin_distance_weighted", "pytorch-metric-learning:proxy_anchor_batch_hard"]),
}
EDITS_JSON = "/work/prompts/s48_edits.json"   # checked against the lines above where it exists

RUN = r'''
import sys, warnings, torch
warnings.filterwarnings("ignore")
torch.manual_seed(0)
torch.set_num_threads(1)
edit, compiled, out, real, root, pkg = sys.argv[1:7]
compiled = compiled == "1"
results = []   # (label, value, compare "raised or not" only, inputs)

def call(fn, *a, grad=False, params=()):
    torch.manual_seed(1234)
    if compiled:
        torch._dynamo.reset()
        f = torch.compile(fn, backend="eager")
    else:
        f = fn
    a = [x.detach().clone().requires_grad_(grad) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
         for x in a]
    try:
        got = f(*a)
    except Exception as e:
        return f"raised {type(e).__name__}"
    outs = [o for o in (got if isinstance(got, (tuple, list)) else [got]) if isinstance(o, torch.Tensor)]
    if not grad:
        return [o.detach() for o in outs] if isinstance(got, (tuple, list)) else got
    wrt = [x for x in a if isinstance(x, torch.Tensor) and x.requires_grad] + list(params)
    losses = [o.float().sum() for o in outs if o.requires_grad]
    if losses:
        grads = torch.autograd.grad(sum(losses), wrt, allow_unused=True)
    else:
        grads = [None] * len(wrt)
    return [o.detach() for o in outs] + [g if g is not None else "none" for g in grads]

def show(x):
    if isinstance(x, torch.Tensor):
        return f"{str(x.dtype)[6:]}{list(x.shape)} {x.tolist()}" if x.numel() <= 40 else f"{str(x.dtype)[6:]}{list(x.shape)}"
    return repr(x)

def add(label, value, inputs=(), raise_only=False):
    results.append((label, value, raise_only, ", ".join(show(x) for x in inputs)))

sys.path.insert(0, real)
import collect; collect.shim_torchvision()
mod = __import__(pkg)
assert mod.__file__.startswith(root), (mod.__file__, root)
import models
specs = models.by_key()

def run_model(key, extra):
    torch.manual_seed(0)
    model, cases = specs[key].build()
    if hasattr(model, "eval"):
        model.eval()
    params = [p for p in model.parameters() if p.requires_grad] if hasattr(model, "parameters") else []
    for i, (args, kw) in enumerate(list(cases) + list(extra)):
        name = f"case {i}" if i < len(cases) else f"fresh {i - len(cases)}"
        add(f"model {key} {name}", call(lambda *xs: model(*xs, **kw), *args, grad=True, params=params), args)

g = torch.Generator().manual_seed(48)
nan, inf = float("nan"), float("inf")
if edit == "pearson":
    from torchmetrics.functional import pearson_corrcoef as P
    def pc(label, x, y):
        add(f"pearson {label} {str(x.dtype)[6:]} {list(x.shape)}", call(P, x, y, grad=True), (x, y))
    for dt in (torch.float32, torch.float64):
        for n in (16, 5, 2, 1):
            pc(f"1-D random n={n}", torch.randn(n, generator=g).to(dt), torch.randn(n, generator=g).to(dt))
            x, y = torch.randn(n, 3, generator=g).to(dt), torch.randn(n, 3, generator=g).to(dt)
            pc(f"2-D random n={n}", x, y)
            x[:, 1] = 0.7                      # a constant column in preds
            y[:, 2] = -2.0                     # another in target
            pc(f"2-D cols 1,2 constant n={n}", x, y)
            x2 = torch.randn(n, 4, generator=g).to(dt)
            y2 = torch.randn(n, 4, generator=g).to(dt)
            x2[0, 1] = inf
            y2[-1, 2] = nan
            x2[:, 3] = -inf if n > 1 else x2[:, 3]
            pc(f"2-D col 1 with inf, col 2 with NaN, col 3 all -inf n={n}", x2, y2)
        x = torch.randn(8, generator=g).to(dt)
        pc("1-D constant preds", torch.full((8,), 3.0, dtype=dt), x)
        pc("1-D constant target", x, torch.zeros(8, dtype=dt))
        pc("1-D near-constant preds (1 + 1e-7 * randn)", 1 + 1e-7 * torch.randn(8, generator=g).to(dt), x)
        pc("1-D preds with inf", torch.cat([x[:7], torch.tensor([inf], dtype=dt)]), x)
        pc("1-D target with NaN", x, torch.cat([torch.tensor([nan], dtype=dt), x[1:]]))
        pc("1-D huge preds (1e30 * randn)", 1e30 * x, torch.randn(8, generator=g).to(dt))
        pc("1-D y = x", x, x.clone())
        pc("1-D y = -x", x, -x)
        pc("1-D y = 3x + 1", x, 3 * x + 1)
        pc("2-D all columns constant", torch.ones(6, 3, dtype=dt), torch.randn(6, 3, generator=g).to(dt))
        pc("2-D one column (n, 1)", torch.randn(6, 1, generator=g).to(dt), torch.randn(6, 1, generator=g).to(dt))
        pc("2-D one constant column (n, 1)", torch.ones(6, 1, dtype=dt), torch.randn(6, 1, generator=g).to(dt))
        x = torch.randn(7, 3, generator=g).to(dt)
        pc("2-D y = x with a constant column", torch.cat([x[:, :2], torch.ones(7, 1, dtype=dt)], 1), x)
    for n in (10, 2):
        pc(f"1-D random n={n}", torch.randn(n, generator=g).half(), torch.randn(n, generator=g).half())
        x, y = torch.randn(n, 3, generator=g).half(), torch.randn(n, 3, generator=g).half()
        x[:, 0] = 1.0
        pc(f"2-D col 0 constant n={n}", x, y)
    run_model("torchmetrics:pearson", [((torch.randn(n, generator=g), torch.randn(n, generator=g)), {})
                                       for n in (3, 7, 25)] + [((torch.ones(5), torch.randn(5, generator=g)), {})])
elif edit in ("checks", "reciprocal_rank"):
    from torchmetrics.functional.retrieval import retrieval_reciprocal_rank as RR, retrieval_precision as RP
    p6 = torch.rand(6, generator=g)
    preds = {"rand6": p6, "ties": torch.tensor([0.5, 0.2, 0.5, 0.5, 0.2, 0.9]), "all equal": torch.full((6,), 0.3),
             "some negative": torch.tensor([-0.3, 0.8, -0.1, 0.4, 0.0, 0.6])}
    tgts = {"bool": torch.tensor([0, 1, 0, 0, 1, 0]).bool(), "long": torch.tensor([1, 0, 0, 1, 0, 0]),
            "int32": torch.tensor([0, 0, 1, 0, 0, 1], dtype=torch.int32),
            "float": torch.tensor([0.0, 1.0, 0.0, 0.0, 0.0, 1.0]),
            "float fractional": torch.tensor([0.0, 0.25, 0.0, 0.5, 0.0, 0.0]),
            "float with NaN": torch.tensor([0.0, nan, 0.0, 1.0, 0.0, 0.0]),
            "float -0.0 only": torch.tensor([-0.0] * 6),
            "all-zero bool": torch.zeros(6, dtype=torch.bool), "all-zero long": torch.zeros(6, dtype=torch.long),
            "all-zero float": torch.zeros(6), "all-one bool": torch.ones(6, dtype=torch.bool),
            "all-one long": torch.ones(6, dtype=torch.long), "all-one float": torch.ones(6),
            "last only long": torch.tensor([0, 0, 0, 0, 0, 1])}
    bad = {"long with 2": torch.tensor([0, 2, 0, 0, 1, 0]), "long with -1": torch.tensor([0, -1, 0, 1, 0, 0]),
           "float with 1.5": torch.tensor([0.0, 1.5, 0.0, 0.0, 0.0, 0.0]),
           "float with -0.5": torch.tensor([0.0, -0.5, 1.0, 0.0, 0.0, 0.0]),
           "int32 all 2": torch.full((6,), 2, dtype=torch.int32)}
    fns = [("reciprocal_rank", RR)] + ([("precision", RP)] if edit == "checks" else [])
    top_ks = [None, 1, 2, 6, 9] + ([0, -1, 2.0] if edit == "reciprocal_rank" else [])
    for fname, fn in fns:
        for pn, p in preds.items():
            for tn, t in tgts.items():
                for k in (top_ks if pn == "rand6" else [None, 4] if pn == "ties" else [None]):
                    add(f"{fname} preds={pn} target={tn} top_k={k}", call(lambda p, t: fn(p, t, top_k=k), p, t, grad=True), (p, t))
        if fname == "precision":
            for tn in ("bool", "all-zero long", "all-one float"):
                add(f"precision preds=rand6 target={tn} top_k=9 adaptive_k=True",
                    call(lambda p, t: RP(p, t, top_k=9, adaptive_k=True), p6, tgts[tn], grad=True), (p6, tgts[tn]))
        for tn, t in bad.items():
            add(f"{fname} preds=rand6 target={tn} (non-binary)", call(lambda p, t: fn(p, t), p6, t, grad=True), (p6, t),
                raise_only=edit == "checks")
        for n in (1, 3, 17):
            p, t = torch.rand(n, generator=g), torch.rand(n, generator=g) > 0.6
            add(f"{fname} random n={n}", call(lambda p, t: fn(p, t), p, t, grad=True), (p, t))
        add(f"{fname} preds long", call(lambda p, t: fn(p, t), torch.tensor([1, 2, 3]), torch.tensor([0, 1, 0])), ())
    mr = models._retrieval
    run_model("torchmetrics:retrieval_mrr", [mr(n) for n in (4, 8, 13)])
    if edit == "checks":
        run_model("torchmetrics:retrieval_precision", [mr(n) for n in (3, 8, 13)])
elif edit == "divisor":
    from pytorch_metric_learning.reducers import DivisorReducer
    def sd(losses, emb, divisor):
        return DivisorReducer().sum_and_divide(losses, emb, divisor)
    emb = torch.randn(4, 3, generator=g)
    divisors = [3, 2.5, inf, torch.tensor(3), torch.tensor(3.0), torch.tensor(3.0).half(), torch.tensor(inf), 0,
                torch.tensor(0), torch.tensor(0.0)]
    loss_sets = {
        "random": lambda dt: torch.rand(5, generator=g).to(dt),
        "with NaN": lambda dt: torch.tensor([0.5, nan, 1.0], dtype=dt),
        "[60000, 60000] (float16 sum inf)": lambda dt: torch.tensor([60000.0, 60000.0], dtype=dt),
        "[inf, -inf]": lambda dt: torch.tensor([inf, -inf], dtype=dt),
        "empty": lambda dt: torch.zeros(0, dtype=dt),
        "zeros": lambda dt: torch.zeros(4, dtype=dt),
    }
    for dt in (torch.float32, torch.float16, torch.bfloat16):
        for ln, mk in loss_sets.items():
            losses = mk(dt)
            for d in divisors:
                add(f"sum_and_divide {str(dt)[6:]} losses={ln} divisor={d!r}", call(lambda l, e: sd(l, e, d), losses, emb, grad=True),
                    (losses, emb))
    from pytorch_metric_learning import losses as L, miners as M, distances as D
    for key in ("pytorch-metric-learning:margin_distance_weighted", "pytorch-metric-learning:proxy_anchor_batch_hard"):
        extra = []
        k = 3 if "margin" in key else 4        # MarginLoss learns a beta for each of 3 classes
        for b, classes in ((6, k), (9, k), (20, k), (8, 2)):
            extra.append(((torch.randn(b, 8, generator=g), torch.arange(b) % classes), {}))
        extra.append(((torch.randn(10, 8, generator=g), torch.tensor([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])), {}))
        run_model(key, extra)
    torch.manual_seed(0)
    margin = L.MarginLoss(margin=0.2, nu=0.1, beta=1.2, learn_beta=True, num_classes=3)
    dwm = M.DistanceWeightedMiner(cutoff=0.5, nonzero_loss_cutoff=1.4,
                                  distance=D.LpDistance(normalize_embeddings=True, p=2, power=1))
    proxy = L.ProxyAnchorLoss(num_classes=4, embedding_size=4, margin=0.1, alpha=32)
    bhm = M.BatchHardMiner()
    for b in (8, 12):
        e16 = torch.randn(b, 4, generator=g).half()
        lab = torch.arange(b) % 3
        add(f"MarginLoss+DistanceWeightedMiner float16 embeddings b={b}",
            call(lambda e: margin(e, lab, dwm(e, lab)), e16, grad=True, params=[margin.beta]), (e16, lab))
        lab = torch.arange(b) % 4
        add(f"ProxyAnchorLoss+BatchHardMiner float16 embeddings b={b}",
            call(lambda e: proxy(e, lab, bhm(e, lab)), e16, grad=True, params=list(proxy.parameters())), (e16, lab))
        add(f"MarginLoss no miner float16 embeddings b={b}",
            call(lambda e: margin(e, torch.arange(b) % 3), e16, grad=True, params=[margin.beta]), (e16,))
torch.save(results, out)
'''


def copies(edit: str, tmp: str) -> tuple[str, str]:
    """Head's package and a patched copy, under tmp/head and tmp/patched."""
    pkg, path, start, end, lines, _ = EDITS[edit]
    src = os.path.dirname(importlib.util.find_spec(pkg).origin)
    roots = []
    for side in ("head", "patched"):
        root = os.path.join(tmp, side)
        shutil.copytree(src, os.path.join(root, pkg), ignore=shutil.ignore_patterns("__pycache__"))
        roots.append(root)
    target = os.path.join(roots[1], path)
    text = open(target).read().split("\n")
    print(f"{edit}: {path}:{start}-{end}, head's lines:")
    for line in text[start - 1:end]:
        print(f"    - {line}")
    for line in lines:
        print(f"    + {line}")
    text[start - 1:end] = lines
    open(target, "w").write("\n".join(text))
    return roots[0], roots[1]


def run(edit: str, root: str, compiled: bool, out: str) -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    real = os.path.join(os.path.dirname(here), "real_code")
    env = {**os.environ, "PYTHONPATH": root}
    pkg = EDITS[edit][0]
    done = subprocess.run([sys.executable, "-c", RUN, edit, "1" if compiled else "0", out, real, root, pkg],
                          env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{edit} ({root}, compiled={compiled}) failed:\n{done.stderr[-3000:]}")


def same(a, b) -> bool:
    import torch
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.is_floating_point():
            return torch.equal(torch.isnan(a), torch.isnan(b)) and \
                torch.equal(torch.nan_to_num(a, nan=0.5, posinf=math.inf, neginf=-math.inf),
                            torch.nan_to_num(b, nan=0.5, posinf=math.inf, neginf=-math.inf)) and \
                torch.equal(torch.signbit(a), torch.signbit(b))
        return torch.equal(a, b)
    return type(a) is type(b) and a == b


def none_vs_zeros(a, b) -> bool:
    import torch
    for x, y in ((a, b), (b, a)):
        if isinstance(x, str) and x == "none" and isinstance(y, torch.Tensor):
            return bool((y == 0).all())
    return False


def short(v) -> str:
    import torch
    if isinstance(v, torch.Tensor):
        return f"{str(v.dtype)[6:]} {v.tolist()}" if v.numel() <= 12 else f"{str(v.dtype)[6:]} of shape {tuple(v.shape)}"
    return repr(v)


def max_diff(a, b) -> float:
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and a.numel():
        x, y = a.double(), b.double()
        d = (x - y).abs()
        d = torch.where(torch.isnan(x) & torch.isnan(y), 0.0, d)
        d = torch.where(torch.isnan(x) ^ torch.isnan(y), math.inf, d)
        d = torch.where(x == y, 0.0, d)
        return float(d.max())
    return math.inf


def describe(a, b) -> tuple[str, bool]:
    """Where two results differ (items: outputs, then gradients), and whether every difference is
    a "none" gradient against a tensor of zeros."""
    if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
        return f"{short(a)} vs {short(b)}", False
    parts, only_nz = [], True
    for i, (x, y) in enumerate(zip(a, b)):
        if not same(x, y):
            nz = none_vs_zeros(x, y)
            only_nz &= nz
            d = max_diff(x, y)
            parts.append(f"item {i}: " + ("none vs zeros: " if nz else "") +
                         (f"max abs difference {d:.3g}: " if math.isfinite(d) else "") + f"{short(x)} vs {short(y)}")
    return "; ".join(parts), only_nz


def raised(v) -> str | None:
    return v[len("raised "):] if isinstance(v, str) and v.startswith("raised ") else None


def check_json() -> None:
    if not os.path.exists(EDITS_JSON):
        return
    data = json.load(open(EDITS_JSON))
    for e in data:
        name = next(k for k, v in EDITS.items() if v[1].endswith(e["path"]) or e["path"].endswith(v[1]))
        _, _, s, t, lines, models = EDITS[name]
        assert (s, t, lines, models) == (e["start_line"], e["end_line"], e["lines"], e["models"]), name


def main() -> int:
    import torch
    check_json()
    only = sys.argv[1:]
    totals = {}
    for edit in EDITS:
        if only and edit not in only:
            continue
        began = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            head_root, patched_root = copies(edit, tmp)
            runs = {}
            for side, root in (("head", head_root), ("patched", patched_root)):
                for compiled in (False, True):
                    out = os.path.join(tmp, f"{side}{int(compiled)}.pt")
                    run(edit, root, compiled, out)
                    runs[side, compiled] = torch.load(out, weights_only=False)
        took = time.perf_counter() - began
        head = runs["head", False]
        pairs = [(("patched", False), ("head", False)), (("patched", True), ("head", True)),
                 (("head", True), ("head", False)), (("patched", True), ("head", False))]
        for key, ref_key in pairs:
            ref, got = runs[ref_key], runs[key]
            assert [r[0] for r in ref] == [r[0] for r in got]
            equal, nz, notes = 0, 0, []
            for (label, r, raise_only, inputs), (_, v, _, _) in zip(ref, got):
                if raise_only:
                    ok = (raised(r) is None) == (raised(v) is None)
                    equal += ok
                    if not ok:
                        notes.append(f"    {label}: raised or not differ ({r!r} vs {v!r}); inputs: {inputs}")
                elif same(r, v):
                    equal += 1
                else:
                    text, only_nz = describe(r, v)
                    nz += only_nz
                    notes.append(f"    {label}: differs{' (none vs zeros only)' if only_nz else ''}: {text}; "
                                 f"inputs: {inputs}")
            n_raised = sum(raised(v) is not None for _, v, _, _ in got)
            name = lambda k: f"{k[0]} {'compiled' if k[1] else 'eager'}"
            print(f"{edit:15s} {name(key):16s} vs {name(ref_key):16s}: {equal} of {len(ref)} equal, "
                  f"{len(ref) - equal} differ ({nz} of them none vs zeros only) ({n_raised} raised)")
            for line in notes:
                print(line)
            totals[edit, name(key), name(ref_key)] = (equal, len(ref) - equal, nz)
        for i, (label, _, raise_only, _) in enumerate(head):
            kinds = {f"{s} {'compiled' if c else 'eager'}": raised(runs[s, c][i][1]) for s, c in runs}
            if raise_only or any(kinds.values()):
                print(f"    exceptions, {label}{' (raised or not only)' if raise_only else ''}: "
                      + ", ".join(f"{k}: {v or 'none'}" for k, v in kinds.items()))
        print(f"{edit:15s} {len(head)} inputs, 4 runs, {took:.1f} s", flush=True)
    print("summary (equal, differ, of which none vs zeros only):")
    for k, v in totals.items():
        print(f"    {k[0]:15s} {k[1]:16s} vs {k[2]:16s}: {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
