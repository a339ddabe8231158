"""Independent re-run of the forty-fourth held-out batch (mixup 0.2.2, torch-image-metrics 0.1.0),
with no pt2bot code. The benchmark found eighteen break sites, the same with one case and with the
shape matrix. The verified candidates: PTC101's edit of PuzzleMix's block loop, `bh = idx //
num_blocks_w` at mixup/methods.py:289 ("keep the tensor: drop `.item()`"; mx_puzzle_train, one
case and matrix; it uncovers the same `.item()` at :290), and the dynamo setting
`capture_scalar_outputs` (verified on FMix's `.item()` at methods.py:152 and on torch-image-
metrics' `.item()` returns, basic.py:67, 208, 252, 296 and calculator.py:304; one distinct
candidate, re-run on every model that was offered it). The hand edits (heldout44_hand_edits.json:
'verified' there only marks them for this script), one per site group as a careful engineer would
write it: hand1, `if self.probability < 1.0 and random.random() > self.probability:` (base.py:34);
hand2, CutMix's corners as Python ints and np.clip as min/max (methods.py:53-59, for the slice at
:62); hand3, FMix's label weight kept a tensor (methods.py:152-153); hand4, SaliencyMix's boxes
for the whole batch by argmax, clamps and a torch.where box mask (methods.py:202-219); hand5,
PuzzleMix's blocks by one batched topk, scatter and repeat_interleave (methods.py:281-302); hand6
and hand7, torch-image-metrics' metrics returning 0-d tensors, PSNR without its `if mse == 0`
branch (basic.py:61-67, 208, 252, 296; hand7 also calculator.py:304-308). mixup's np.random
draws (methods.py:20, 44, 53, 54, 123, 190, 260) get no hand edit: a draw from numpy's global
generator cannot be traced, and a torch sampler draws other numbers. The harness is
heldout43_rerun.py's, unchanged but for the prefix H44_.

    H44_FRESH=8 H44_CALL_TIMEOUT=300 /work/venvs/realcode/bin/python benchmarks/results/heldout44_rerun.py \
        benchmarks/results/realcode_proof_heldout44.json \
        benchmarks/results/realcode_proof_heldout44_matrix.json \
        benchmarks/results/heldout44_hand_edits.json > benchmarks/results/heldout44_rerun.log

(the verified candidates first, as batches 42 and 43 ran them, so that a run cut by the batch's
deadline has them whole)

(8 fresh draws, batch sizes 1 to 8, as in batches 34 to 43: the machine's two cores are shared with
the main session and another helper.)

For each distinct verified candidate in the JSON files (read only for `path`, `start_line`,
`end_line`, `lines`, `edits`, `setting`, and the models that were offered it):
1. a copy of the installed package; an edit replaces `start_line..end_line` of `path` with
   `lines` (each of `edits` likewise); a setting leaves the package as installed and sets
   `torch._dynamo.config.<setting> = True` in the patched side's process before anything is
   compiled;
2. each side is a subprocess (`TORCH_LOGS=graph_breaks,recompiles`) that imports the package from its copy
   (asserted), builds the model from models.py (seed 0, one thread, eval mode) and runs it on
   the spec's cases plus 24 freshly drawn inputs (batch sizes 1 to 24: every input whose first
   dim is the first input's redrawn at that size, the others kept as the spec's; other sizes as
   the first case's) and edge inputs: with floating inputs, all floating inputs zero; all 1; all
   x 50; the first input negated; a NaN, an inf in the first floating input; a NaN, an inf in
   the last floating input; with integer inputs, all 0, all at their maximum, the first row
   repeated. Weights all 0 (every floating parameter and buffer zeroed) on the spec's cases and
   the first four fresh draws. Fresh draws keep each input's kind (integers up to the spec's
   maximum, values in [0, 1] as powers of torch.rand, other floats scale x randn, scales 0.3 to
   4; their number is `H44_FRESH`, 24 unless set). Eager and compiled
   (`torch.compile(model, backend="eager")`, compiled once per side and gradient mode, so shapes
   recompile as in training), each without gradients and with the gradients of the summed
   (non-finite zeroed) floating outputs with respect to the floating inputs and all parameters.
   The state dict is put back and torch and numpy's global RNG are seeded (1) before every call
   (flowtorch's rsample draws from the base distribution);
3. head and patched are compared exactly (`torch.equal` with equal NaN positions, dtype and
   shape; the same exception type and first message line), with the indices of the outputs and
   the max |difference| where they differ; graph-break sites logged in the library's files are
   counted per side (a break logged inside another library at the innermost frame of the
   package in its traceback, where the benchmark puts it); the warnings the library's own files
   give on each call, and what each call prints, are compared apart from the outputs;
4. head runs twice, each in its own process: a result head's two runs do not agree on is not
   reproducible without any edit, and a patched difference there is reported apart ("differ
   where head is not reproducible") from one where head's two runs agree ("DIFFER", the edit's).

With `H44_OUTPUTS=0,1` only these outputs are kept, compared and summed for the gradients; with
`H44_MODEL=lib:name` only that model runs; with `H44_CAND=ID` only the candidate of that id
(hand edits); with `H44_CALL_TIMEOUT=N` one call may run N seconds, and a call past that is the
result ("timeout"); unset, there is no limit.

Prints per candidate and model; exits 1 if any model result differs between head and patched
where head's own two runs agree.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(os.path.dirname(HERE), "real_code")
PY = sys.executable
# fresh draws per model (`H44_FRESH=N`; 24 as in batches 20 and 21 unless set)
N_FRESH = int(os.environ.get("H44_FRESH", "24"))


def installed(package: str) -> str:
    import importlib.util
    spec = importlib.util.find_spec(package)
    # a library that is one module (rtdl_num_embeddings.py): its file
    return spec.origin if spec.submodule_search_locations is None else spec.submodule_search_locations[0]


def _mark(package: str) -> str:
    """What a path of the package's files holds: `/pkg/`, or `/pkg.py` for a one-module library."""
    return "/" + package + (".py" if installed(package).endswith(".py") else "/")


def make_copy(package: str, cand: dict[str, Any] | None, dest: str) -> str:
    if installed(package).endswith(".py"):
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(installed(package), os.path.join(dest, package + ".py"))
    else:
        shutil.copytree(installed(package), os.path.join(dest, package))
    if cand and not cand.get("setting"):
        # several edits (norse's eight lines in five files): each file's from the bottom up, so
        # that the line numbers of the others stay those of the installed file
        for e in sorted(_edits(cand), key=lambda e: (e["path"], -e["start_line"])):
            path = os.path.join(dest, e["path"])
            with open(path) as f:
                src = f.read().splitlines(keepends=True)
            src[e["start_line"] - 1:e["end_line"]] = [ln + "\n" for ln in e["lines"]]
            with open(path, "w") as f:
                f.writelines(src)
    return dest


def _edits(cand: dict[str, Any]) -> list[dict[str, Any]]:
    """The candidate's edits: its `edits`, or the one edit its own keys give."""
    return cand.get("edits") or [cand]


# ------------------------------------------------------------------------------ one side
def _flat(o: Any) -> list[Any]:
    import torch
    if isinstance(o, torch.Tensor):
        # flowtorch's BijectiveTensor: the plain tensor it holds (the subclass keeps its bijector
        # and context, which torch.save would pickle with it)
        return [o.as_subclass(torch.Tensor) if type(o) is not torch.Tensor else o]
    if isinstance(o, (tuple, list)):
        return [t for x in o for t in _flat(x)]
    if isinstance(o, dict):
        return [t for k in sorted(o) for t in _flat(o[k])]
    # batch 37: TorchCRF's viterbi_decode returns lists of Python int labels, which the harness of
    # batches 20 to 36 dropped (compared as nothing); a Python number is kept as a 0-d tensor
    if isinstance(o, (bool, int, float)):
        return [torch.tensor(o)]
    return []


def _kind(a: Any) -> str:
    import torch
    if a.dtype == torch.bool:
        return "bool"
    if a.is_complex():   # complextorch's cfloat signals and images (batch 34)
        return "complex"
    if not a.is_floating_point():
        return "int"
    fin = a[torch.isfinite(a)]
    if fin.numel() < a.numel():
        return "nan_marked"
    if fin.numel() and bool((fin == fin.round()).all()) and bool((fin >= 0).all()):
        return "whole"
    if fin.numel() and bool((fin >= 0).all()) and bool((fin <= 1).all()):
        return "unit_interval"
    if a.dim() >= 2 and a.shape[-1] == 3 and bool(((a.norm(dim=-1) - 1).abs() < 1e-5).all()):
        return "unit_norm"
    return "real"


def _lmap(a: Any, f: Any) -> Any:
    """f over a tensor, or over each tensor of a list of tensors (tad-dftd3's packed batch)."""
    return [f(x) for x in a] if isinstance(a, list) else f(a)


def _first(a: Any) -> Any:
    return a[0] if isinstance(a, list) else a


def _draw_like(a: Any, size: int | None, dim: int, scale: float, g: Any,
               per_col: bool = False) -> Any:
    import torch
    if isinstance(a, list):   # each tensor drawn like itself, its sizes kept
        return [_draw_like(x, None, dim, scale, g) for x in a]
    shape = list(a.shape)
    if size is not None:
        shape[dim] = size
    shape = tuple(shape)
    k = _kind(a)
    if k == "bool":
        return torch.rand(shape, generator=g) < 0.4
    if k == "complex":
        return scale * torch.randn(shape, generator=g, dtype=a.dtype)
    if k == "int":
        if per_col and a.dim() == 2 and a.numel():
            # one column per categorical feature: each within its own range (negative codes, a
            # missing value, kept where the spec has them)
            lo, hi = a.min(dim=0).values, a.max(dim=0).values
            u = torch.rand(shape, generator=g)
            return (lo + (u * (hi - lo + 1)).floor().clamp_max(hi - lo)).to(a.dtype)
        return torch.randint(0, int(a.max()) + 1, shape, generator=g, dtype=a.dtype)
    if k == "whole":
        return torch.randint(0, int(a.max()) + 1, shape, generator=g).to(a.dtype)
    if k == "unit_interval":
        return torch.rand(shape, generator=g) ** scale
    if k == "unit_norm":
        v = torch.randn(shape, generator=g)
        return v / v.norm(dim=-1, keepdim=True)
    v = scale * torch.randn(shape, generator=g)
    if k == "nan_marked":
        v[torch.rand(shape, generator=g) < 0.33] = float("nan")
    return v


# the dim the fresh draws vary, where it is not the first: dct_token_mixer's token ids are
# [batch, sequence] and its cases differ in the sequence, the size of the DCT
VARY_DIM: dict[str, int] = {"dctorch:dct_token_mixer": 1}


def _bdim(a: Any, b0: int, dim: int) -> int | None:
    """The dim of `a` that holds the batch: `dim` where its size is b0, else its first dim of
    size b0 (none for a list or a 0-d tensor)."""
    if isinstance(a, list) or not a.dim():
        return None
    if a.dim() > dim and a.shape[dim] == b0:
        return dim
    return next((i for i, n in enumerate(a.shape) if n == b0), None)


def _inputs(cases: list[Any], key: str = "") -> list[tuple[str, tuple[Any, ...]]]:
    """The spec's cases, N_FRESH fresh draws shaped like the first case with other sizes of the
    varied dim and scales, and edge inputs."""
    import torch
    g = torch.Generator().manual_seed(2024)
    args0 = cases[0][0]
    dim = VARY_DIM.get(key, 0)
    b0 = _first(args0[0]).shape[dim]
    # TabTransformer's and FTTransformer's categorical codes: one column per feature
    per_col = key.startswith("tab-transformer-pytorch:")
    out = [(f"case{i}", tuple(a)) for i, (a, _) in enumerate(cases)]
    batches = list(range(1, 25))
    scales = [0.3, 1.0, 2.0, 4.0]
    for i in range(N_FRESH):
        b, s = batches[i % len(batches)], scales[i % len(scales)]
        # each input is redrawn along its first dim of the first input's batch size (an LRU's
        # initial state h_0 is (layers * directions, batch, hidden): its batch is dim 1)
        new = tuple(_draw_like(a, b, _bdim(a, b0, dim), s, g, per_col) if _bdim(a, b0, dim) is not None
                    else _draw_like(a, None, dim, s, g, per_col) for a in args0)
        out.append((f"fresh{i}_b{b}_x{s}", new))
    ints = [j for j, a in enumerate(args0) if not isinstance(a, list) and a.dtype != torch.bool
            and not a.is_floating_point() and not a.is_complex() and a.numel()]
    if ints:
        # torchkge's indices: all 0, all at their maximum over the spec's cases, the first fact
        # of the first case repeated over its batch
        top = {j: max(int(c[0][j].max()) for c in cases) for j in ints}
        out.append(("int_zeros", tuple(torch.zeros_like(a) if j in ints else a
                                       for j, a in enumerate(args0))))
        # each column at its own maximum (TabTransformer's columns differ in categories)
        out.append(("int_max", tuple((torch.cat([c[0][j] for c in cases]).amax(dim=0)
                                      .expand_as(a).clone() if per_col
                                      else torch.full_like(a, top[j])) if j in ints else a
                                     for j, a in enumerate(args0))))
        out.append(("int_repeat", tuple(a[:1].expand_as(a).clone() if j in ints and a.dim() else a
                                        for j, a in enumerate(args0))))
        # a missing value: the first code of each integer input -1
        def _m1(a: Any) -> Any:
            a = a.clone()
            a.view(-1)[0] = -1
            return a
        out.append(("int_minus1", tuple(_m1(a) if j in ints else a for j, a in enumerate(args0))))
    # boolean inputs (batch 35: egnn's adjacency matrix): all False and all True
    bl = [j for j, a in enumerate(args0) if not isinstance(a, list) and a.dtype == torch.bool and a.numel()]
    if bl:
        out.append(("bool_none", tuple(torch.zeros_like(a) if j in bl else a for j, a in enumerate(args0))))
        out.append(("bool_all", tuple(torch.ones_like(a) if j in bl else a for j, a in enumerate(args0))))
    # complex inputs count as floating ones here (batch 34): zeros, ones, large, negated, NaN, inf
    fl = [j for j, a in enumerate(args0) if (_first(a).is_floating_point() or _first(a).is_complex())
          and _first(a).numel()]
    if not fl:
        return out
    isf = lambda a: _first(a).is_floating_point() or _first(a).is_complex()   # noqa: E731
    out.append(("zeros", tuple(_lmap(a, torch.zeros_like) if isf(a) else a for a in args0)))
    out.append(("ones", tuple(_lmap(a, torch.ones_like) if isf(a) else a for a in args0)))
    out.append(("large", tuple(_lmap(a, lambda x: 50.0 * torch.randn(x.shape, generator=g, dtype=x.dtype))
                               if isf(a) else a for a in args0)))
    out.append(("negated", tuple(_lmap(a, lambda x: -x) if j == fl[0] else a
                                 for j, a in enumerate(args0))))
    for where, j in (("first", fl[0]), ("last", fl[-1])):
        for name, val in (("nan", float("nan")), ("inf", float("inf"))):
            a = [_lmap(x, lambda t: t.clone()) for x in args0]
            t = _first(a[j])
            t.view(-1)[min(1, t.numel() - 1)] = val
            out.append((f"{name}_{where}", tuple(a)))
    return out


class CallTimeout(BaseException):
    """A call that ran past CALL_TIMEOUT: a result."""


def _alarm(*_: Any) -> None:
    raise CallTimeout()


# seconds one call may run (0: no limit, the default)
# `H44_OUTPUTS=0,1`: only these outputs are kept, compared and summed for the gradients, and
# `H44_MODEL=lib:name`: only this model is run
KEEP = [int(i) for i in os.environ.get("H44_OUTPUTS", "").split(",") if i.strip()]
ONLY = os.environ.get("H44_MODEL", "")
# `H44_CAND=hand1`: only the candidate with this id (hand edits) is run
ONLY_CAND = os.environ.get("H44_CAND", "")
CALL_TIMEOUT = int(os.environ.get("H44_CALL_TIMEOUT", "0"))


def run_side(pkgdir: str, key: str, out: str, setting: str) -> None:
    signal.signal(signal.SIGALRM, _alarm)
    sys.path.insert(0, pkgdir)
    sys.path.insert(0, REAL)
    import importlib

    import numpy as np
    import torch
    torch.set_num_threads(1)
    import collect
    collect.shim_torchvision()   # as collect.py does before any model is built
    if setting:
        setattr(torch._dynamo.config, setting, True)
    import models
    sp = models.by_key()[key]
    mod = importlib.import_module(sp.package)
    where = list(mod.__path__)[0] if hasattr(mod, "__path__") else mod.__file__
    assert os.path.realpath(where).startswith(os.path.realpath(pkgdir)), where
    torch.manual_seed(0)
    # hyper-connections (TabTransformer's and FTTransformer's residual streams) picks each layer's
    # initial residual stream with Python's random.randrange when no layer_index is given: unseeded,
    # the same spec builds a different model in each process
    import random
    random.seed(0)
    model, cases = sp.build()
    model.eval()
    state = {k: v.clone() for k, v in model.state_dict().items()}
    inputs = _inputs(cases, key)
    # weights all 0: every floating parameter and buffer zeroed, on the spec's cases and the first
    # four fresh draws (tagged `w0_...`)
    state0 = {k: (torch.zeros_like(v) if v.is_floating_point() or v.is_complex() else v)
              for k, v in state.items()}
    runs = [(name, args, state) for name, args in inputs]
    runs += [("w0_" + name, args, state0) for name, args in inputs[:len(cases) + 4]]
    # floating buffers times 3 and negated (a predefined spectrum matrix past [0, 1], which the
    # checked line refuses), on the spec's cases, where the model has floating buffers
    fbuf = {n for n, b in model.named_buffers() if b.is_floating_point()}
    if fbuf:
        for tag, f in (("wx3_", 3.0), ("wneg_", -1.0)):
            st = {k: (v * f if k in fbuf else v) for k, v in state.items()}
            runs += [(tag + name, args, st) for name, args in inputs[:len(cases)]]
    results: dict[str, Any] = {}
    times = {"eager": 0.0, "compiled": 0.0}
    warned: dict[str, Any] = {}
    printed: dict[str, str] = {}
    for mode in ("eager", "compiled"):
        for grad in (False, True):
            torch._dynamo.reset()
            fn = torch.compile(model, backend="eager") if mode == "compiled" else model
            for name, args, st in runs:
                tag = f"{name}/{mode}/{'grad' if grad else 'nograd'}"
                model.load_state_dict(st)
                args_ = tuple(_lmap(a, lambda x: x.detach().clone().requires_grad_(
                    grad and (x.is_floating_point() or x.is_complex()))) for a in args)
                torch.manual_seed(1)
                # torchcfm's OT pairing draws from numpy's global RNG (np.random.choice over the
                # plan), which the benchmark leaves unseeded: seeded here alike on both sides
                np.random.seed(1)
                t0 = time.perf_counter()
                wctx = warnings.catch_warnings(record=True)
                caught = wctx.__enter__()
                # what the call prints (torchcfm's get_map prints a diagnostic for a non-finite
                # plan), compared apart from the outputs
                pbuf = io.StringIO()
                pctx = contextlib.redirect_stdout(pbuf)
                pctx.__enter__()
                warnings.simplefilter("always")
                signal.alarm(CALL_TIMEOUT)
                try:
                    if grad:
                        model.zero_grad(set_to_none=True)
                        outs = _flat(fn(*args_))
                        outs = [outs[i] for i in KEEP] if KEEP else outs
                        fl = [o for o in outs if (o.is_floating_point() or o.is_complex()) and o.requires_grad]
                        grads: list[Any] = []
                        if fl:
                            loss = sum(torch.nan_to_num(o.real if o.is_complex() else o, 0.0, 0.0, 0.0).sum()
                                       for o in fl)
                            loss.backward()
                            grads = ([x.grad for a in args_ for x in (a if isinstance(a, list) else [a])]
                                     + [p.grad for p in model.parameters()])
                        res = ("ok", [o.detach() for o in outs],
                               [None if x is None else x.detach() for x in grads])
                    else:
                        # a grad=True spec's forward differentiates inside itself: autograd on,
                        # as the benchmark runs it, but no backward of the outputs
                        with (torch.enable_grad() if sp.grad else torch.no_grad()):
                            outs = _flat(fn(*args_))
                        outs = [outs[i] for i in KEEP] if KEEP else outs
                        res = ("ok", [o.detach() for o in outs], [])
                except Exception as e:   # noqa: BLE001 - a raise is a result
                    res = ("raise", type(e).__name__, str(e).split("\n")[0][:300])
                except CallTimeout:
                    res = ("timeout", CALL_TIMEOUT)
                finally:
                    signal.alarm(0)
                    pctx.__exit__(None, None, None)
                    wctx.__exit__(None, None, None)
                printed[tag] = pbuf.getvalue()
                times[mode] += time.perf_counter() - t0
                results[tag] = res
                # the library's own warnings, compared apart from the outputs
                warned[tag] = sorted({(w.category.__name__, str(w.message).split("\n")[0][:120])
                                      for w in caught if _mark(sp.package) in (w.filename or "")})
    results["_times"] = times
    results["_warned"] = warned
    results["_printed"] = printed
    torch.save(results, out)


# ---------------------------------------------------------------------------- comparison
def same(a: Any, b: Any) -> bool:
    import torch
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, torch.Tensor):
        if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        if a.is_complex():
            return same(torch.view_as_real(a), torch.view_as_real(b))
        if a.is_floating_point():
            na, nb = a.isnan(), b.isnan()
            return bool(torch.equal(na, nb)
                        and torch.equal(torch.where(na, 0.0, a), torch.where(nb, 0.0, b)))
        return bool(torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def same_nz(a: Any, b: Any) -> bool:
    """same(), with a None gradient equal to an all-zero one (PTC201's disclosed difference)."""
    import torch
    if a is None or b is None:
        o = b if a is None else a
        return o is None or (isinstance(o, torch.Tensor) and not bool(o.any()))
    if isinstance(a, (list, tuple)) and not isinstance(a, torch.Tensor):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same_nz(x, y) for x, y in zip(a, b))
    return same(a, b)


def maxdiff(a: Any, b: Any) -> float:
    """Max |a - b| over the finite entries of same-shaped float tensors (nan if not comparable)."""
    import torch
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.is_complex() and b.is_complex() and a.shape == b.shape:
            return maxdiff(torch.view_as_real(a), torch.view_as_real(b))
        if a.shape != b.shape or not a.is_floating_point():
            return float("nan") if not same(a, b) else 0.0
        fin = torch.isfinite(a) & torch.isfinite(b)
        return float((a[fin] - b[fin]).abs().max()) if fin.any() else 0.0
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)) and len(a) == len(b):
        ds = [maxdiff(x, y) for x, y in zip(a, b)]
        return max(ds) if ds else 0.0
    return 0.0 if same(a, b) else float("nan")


def breaks(log: str, package: str) -> dict[str, int]:
    """Break sites logged in the package's files. A break logged inside another library (mega's
    next_fast_len breaks in scipy/fftpack/_helper.py) is counted at the innermost frame of the
    package in that record's user code traceback, as the benchmark locates it."""
    found: dict[str, int] = {}
    # an outside site's package frame, from its first record: later records of the same site are
    # logged "user stack suppressed due to duplicate graph break", with no traceback
    outside: dict[tuple[str, str], tuple[str, str]] = {}
    for rec in re.split(r"\n(?=.*\[__graph_breaks\] Graph break)", log):
        m = re.search(r"Graph break.*? in user code at (\S+):(\d+)", rec)
        if not m:
            continue
        p, ln = m.groups()
        if _mark(package) not in p:
            tb = rec[rec.find("User code traceback"):] if "User code traceback" in rec else ""
            frames = [f for f in re.findall(r'File "(\S+)", line (\d+)', tb)
                      if _mark(package) in f[0]]
            if frames:
                outside[(p, ln)] = frames[-1]
            if (p, ln) not in outside:
                continue
            p, ln = outside[(p, ln)]
        i = p.rfind(_mark(package))
        s = f"{p[i + 1:]}:{ln}"
        found[s] = found.get(s, 0) + 1
    return found


def models_package(key: str) -> str:
    sys.path.insert(0, REAL)
    import models
    return models.by_key()[key].package


def side(pkgdir: str, key: str, out: str, setting: str) -> tuple[dict[str, Any], str]:
    import torch
    # recompiles too (batch 29): the hand edit keeps its break and is about what follows it
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles", PYTHONWARNINGS="ignore")
    p = subprocess.run([PY, __file__, "--side", pkgdir, key, out, setting], env=env,
                       capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError(f"{key} side failed: {p.stderr[-3000:]}")
    return torch.load(out, weights_only=False), p.stderr


def _ckey(c: dict[str, Any]) -> tuple[Any, ...]:
    return ((c["setting"],) if c.get("setting") else
            tuple((e["path"], e["start_line"], e["end_line"], tuple(e["lines"])) for e in _edits(c)))


def verified(paths: list[str]) -> list[tuple[list[str], dict[str, Any], list[str]]]:
    """Each distinct candidate verified on some model, with every model of the JSON files that
    was offered the same candidate, verified there or not (batch 24: one edit verified on one
    model and refused on three whose head the proof could not reproduce)."""
    datas = []
    for path in paths:
        with open(path) as f:
            datas.append((os.path.basename(path), json.load(f)))
    good = {_ckey(c) for _, d in datas for m in d["models"].values()
            for c in m.get("candidates", []) if c.get("verified")}
    seen: dict[tuple[Any, ...], tuple[list[str], dict[str, Any], list[str]]] = {}
    for base, data in datas:
        for m in data["models"].values():
            for c in m.get("candidates", []):
                k = _ckey(c)
                if k not in good:
                    continue
                if k not in seen:
                    seen[k] = ([], c, [])
                if c.get("verified") and base not in seen[k][0]:
                    seen[k][0].append(base)
                if m["model"] not in seen[k][2]:
                    seen[k][2].append(m["model"])
    return list(seen.values())


def _out_idx(a: Any, b: Any) -> list[int]:
    """The indices of the outputs (ok results) that differ."""
    if not (a[0] == b[0] == "ok") or len(a[1]) != len(b[1]):
        return []
    return [i for i, (x, y) in enumerate(zip(a[1], b[1])) if not same(x, y)]


def _describe(h: Any, p: Any) -> str:
    if h[0] == p[0] == "ok":
        return (f"outputs {_out_idx(h, p)} differ, max |diff| {maxdiff(h[1], p[1]):.3g}; "
                f"grads max |diff| {maxdiff(h[2], p[2]):.3g}")
    return f"head {h[0] if h[0] == 'ok' else h[1:]} / patched {p[0] if p[0] == 'ok' else p[1:]}"


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--side":
        run_side(argv[1], argv[2], argv[3], argv[4] if len(argv) > 4 else "")
        return 0
    cands = verified(argv)
    work = tempfile.mkdtemp(prefix="h40rerun_")
    # head runs twice per model, each in its own process: a control for results that head does
    # not reproduce across processes, which are not the edit's
    heads: dict[str, tuple[dict[str, Any], dict[str, int], dict[str, Any]]] = {}
    total = total_eq = total_unrep = total_attr = total_nz = 0
    wtot = [0, 0]
    ptot = [0, 0]
    bad = False
    t_all = time.perf_counter()
    try:
        for srcs, cand, keys in cands:
            if ONLY_CAND and cand.get("id") != ONLY_CAND:
                continue
            if cand.get("setting"):
                print(f"== setting {cand['setting']} ({', '.join(srcs)}; models {keys})")
            else:
                print(f"== {cand.get('id') or cand.get('rule')} ({', '.join(srcs)}; models {keys})")
                for e in _edits(cand):
                    print(f"   {e['path']}:{e['start_line']}-{e['end_line']} edit")
                    print("      " + "\n      ".join(e["lines"]))
            for key in keys:
                if ONLY and key != ONLY:
                    continue
                package = models_package(key)
                if key not in heads:
                    hdir = make_copy(package, None, os.path.join(work, "head_" + key.replace(":", "_")))
                    res, log = side(hdir, key, os.path.join(hdir, "out.pt"), "")
                    h2dir = make_copy(package, None, os.path.join(work, "head2_" + key.replace(":", "_")))
                    res2, _ = side(h2dir, key, os.path.join(h2dir, "out.pt"), "")
                    heads[key] = (res, breaks(log, package), res2, log)
                head, hb, head2, log = heads[key]
                pdir = make_copy(package, cand, tempfile.mkdtemp(dir=work, prefix="patched_"))
                pat, plog = side(pdir, key, os.path.join(pdir, "out.pt"), cand.get("setting") or "")
                pb = breaks(plog, package)
                n = eq = unrep = 0
                differ, unrep_differ, nz_differ = [], [], []
                for k in head:
                    if k.startswith("_"):
                        continue
                    n += 1
                    rep = same(head[k], head2[k])
                    unrep += not rep
                    if same(head[k], pat[k]):
                        eq += 1
                    elif rep and same_nz(head[k], pat[k]):
                        nz_differ.append(k)
                    elif rep:
                        more = ""
                        if "/compiled/" in k:
                            ek = k.replace("/compiled/", "/eager/")
                            more = (f"; head's compiled result equal to its eager one: {same(head[k], head[ek])}, "
                                    f"patched's: {same(pat[k], pat[ek])}; head's and patched's eager equal: "
                                    f"{same(head[ek], pat[ek])}")
                        differ.append(f"{k}: {_describe(head[k], pat[k])}{more}")
                    else:
                        unrep_differ.append(f"{k}: {_describe(head[k], pat[k])} (head's second run: "
                                            f"{_describe(head[k], head2[k])})")
                ce = {"head": 0, "patched": 0}
                for s_, res in (("head", head), ("patched", pat)):
                    for k in res:
                        if "/compiled/" in k and same(res[k], res[k.replace("/compiled/", "/eager/")]):
                            ce[s_] += 1
                total += n
                total_eq += eq
                total_unrep += unrep
                total_attr += len(differ)
                bad |= bool(differ)
                tgt_lines = ({f"{e['path']}:{ln}" for e in _edits(cand)
                              for ln in range(e["start_line"], e["end_line"] + 1)}
                             if not cand.get("setting") else set())
                th = sum(v for b, v in hb.items() if b in tgt_lines)
                tp = sum(v for b, v in pb.items() if b in tgt_lines)
                nrh, nrp = log.count("Recompiling function"), plog.count("Recompiling function")
                print(f"   {key}: recompiles logged {nrh} -> {nrp}", flush=True)
                print(f"   {key}: {eq} of {n} results equal (input and weight runs {n // 4}: eager and compiled, "
                      f"with and without gradients); head's own two runs differ on {unrep} of {n}; "
                      f"patched differs where head's two runs agree on {len(differ)}; "
                      f"compiled equal to eager {ce} (of {n // 2} "
                      f"each); breaks logged on the replaced lines {th} -> {tp}; "
                      f"break sites gone {sorted(b for b in hb if b not in pb)}; new "
                      f"{sorted(b for b in pb if b not in hb)}; all logged breaks "
                      f"{sum(hb.values())} -> {sum(pb.values())}; compiled time "
                      f"{head['_times']['compiled']:.1f} s -> {pat['_times']['compiled']:.1f} s",
                      flush=True)
                if nz_differ:
                    print(f"   DIFFER only as None vs zero gradients (head's None, patched's zeros, or the "
                          f"reverse; outputs and every other gradient equal) on {len(nz_differ)} of {n}: "
                          + ", ".join(nz_differ[:6]) + (" ..." if len(nz_differ) > 6 else ""))
                total_nz += len(nz_differ)
                for d in differ:
                    print(f"   DIFFER {d}")
                for d in unrep_differ:
                    print(f"   differ where head is not reproducible: {d}")
                hw, pw = head.get("_warned", {}), pat.get("_warned", {})
                wdiff = [k for k in hw if hw[k] != pw.get(k)]
                wtot[0] += len(hw)
                wtot[1] += len(hw) - len(wdiff)
                hp, pp = head.get("_printed", {}), pat.get("_printed", {})
                h2p = head2.get("_printed", {})
                pdiff = [k for k in hp if hp[k] != pp.get(k)]
                ptot[0] += len(hp)
                ptot[1] += len(hp) - len(pdiff)
                if pdiff:
                    print(f"   PRINTS differ on {len(pdiff)} of {len(hp)} calls (head's two runs differ on "
                          f"{sum(hp[k] != h2p.get(k) for k in hp)}), e.g. "
                          + "; ".join(f"{k}: head {hp[k][:160]!r} / patched {pp.get(k, '')[:160]!r}"
                                      for k in pdiff[:3]))
                if wdiff:
                    print(f"   WARNINGS differ on {len(wdiff)} of {len(hw)} calls, e.g. "
                          + "; ".join(f"{k}: head {hw[k]} / patched {pw.get(k)}" for k in wdiff[:3]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"library warnings: equal on {wtot[1]} of {wtot[0]} calls")
    print(f"printed text: equal on {ptot[1]} of {ptot[0]} calls")
    print(f"verified candidates: {len(cands)}; model results: {total_eq} of {total} equal; "
          f"{total_unrep} of {total} not reproduced by head's own second run; "
          f"{total_attr} differ where head's two runs agree beyond None vs zero gradients, "
          f"{total_nz} only as None vs zero gradients; {time.perf_counter() - t_all:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
