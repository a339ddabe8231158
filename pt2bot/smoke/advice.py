"""Phase "advice": the dynamic-shape spec a model can have, derived and verified.

What the user should write so that the whole shape matrix compiles once and exports with
dynamic dims, per input dim: dynamic (with its range and divisibility) or static (with the
line that pins it and why).

Derived from an export with every dim of the matrix dynamic (the dims that vary, and those
`dynamic:` declares, with their declared bounds): when export refuses it, its message ends
with "Suggested fixes" (a narrower range, `dim = 2*_dim`, `dim = 4`), which torch's own
`refine_dynamic_shapes_from_suggested_fixes` applies; export again until it succeeds or fails
for another reason (a few rounds: each fixes every dim torch named). Where torch names a
guard on one dim and suggests nothing (`(size // 2) != 1`, an image halved then pooled to one
value), the least lower bound past which the guard holds is worked out size by size
(`derived_fixes`) and tried as torch's own would be: the export is its proof, and the notes
say so. A dim a fix pins to a
constant is located with `draft_export`, whose report carries the user stack of the guard
that pinned it; failing that, with the matrix's specialisations and recompile guards of that
dim. `draft_export`'s own `apply_suggested_fixes` is not implemented in torch 2.13.

Verified: the last export is the advised `dynamic_shapes` and must succeed; its program is
run on every case of the matrix. Then the matrix is compiled with the advised compile
settings and its compiles counted (one compile = one frame compilation in torch's
compilation metrics; every metric after `reset_dynamo` is the model's): `mark_dynamic` with
the range; `torch.compile(dynamic=True)` instead when a dim needs divisibility, which
`mark_dynamic` cannot express (its first compile raises), and as well when `mark_dynamic`
fails or compiles a frame more than once (the fewer compiles wins). "Before" is the matrix phase's own count with the configured
settings, reused when that phase ran; when the configured settings are the advised ones
(the same dims in `dynamic:`, with the same range), that count is the "after" as well and
nothing is compiled again (`compile.reused`). The verification compiles with the eager backend
(dynamo decides the frame compilations; the backend only compiles each graph), so it costs a
trace per compile and no inductor compile.

Nothing here fails the run: a model that exports with no dim dynamic, a matrix with one size
per dim, a recompile limit hit, or a `draft_export` that raises or overruns its time are
stated in the advice (`notes`, a static dim's `reason`).
"""
from __future__ import annotations

import ast
import contextlib
import io
import math
import re
import time
from typing import Any

from pt2bot.smoke.export import (TRUNCATED_DIVISION, UNRUNNABLE, as_called_spec, classify_failure,
                                 dim_name, draft_failures, example_case, locate_failure, make_dim,
                                 run_exported, short_message, truncated_division_site, var_args_spec)
from pt2bot.smoke.inputs import (CaseInputs, call_mode, compare_outputs, forget_state, forward_params,
                                 layout, remember_state, start_call)
from pt2bot.smoke.matrix import guard_added_site, mark_range, specialization_sites, varying_dims
from pt2bot.smoke.timelimit import Overrun, time_limit
from pt2bot.smoke.trace import RepoPaths, TraceCollector, compilation_metrics, reset_dynamo

MAX_ROUNDS = 6            # export attempts: each applies every fix torch suggested
DRAFT_TIMEOUT_S = 60.0   # a draft_export that runs longer is abandoned (stated, not fatal)
# ... and where it only looks behind an export error for pins that may not be there: a tiny
# TabTransformer whose export fails on the library's `if` in 0.5 s took draft_export 69 s,
# on both sides of each review, for no pin
HIDDEN_TIMEOUT_S = 20.0
MAX_RELOCATE = 4          # pinned dims located one by one when draft_export named only some
METHODS = ("mark_dynamic", "dynamic=True")
_CONSTANT = re.compile(r"specialized it to be a constant \((\d+)\)")
_SOURCE = re.compile(r"L\['(?P<arg>\w+)'\]\.size\(\)\[(?P<ax>\d+)\]")
_LIMIT_TEXT = "recompile limit"


# --------------------------------------------------------------------------- the dims

def advised_dims(cases: list[CaseInputs], model_spec: dict[str, Any]) -> list[str]:
    """The dims to make dynamic: those that vary in the matrix and those `dynamic:` names,
    if some input axis carries them."""
    carried = {d for c in cases[:1] for axes in c.dims.values() for d in axes.values()}
    wanted = varying_dims(cases) | set(model_spec.get("dynamic") or ())
    return sorted(wanted & carried)


def _start_spec(case: CaseInputs, dims: list[str], bounds: dict[str, Any]) -> dict[str, Any]:
    """`{input: {axis: Dim}}`: declared bounds where pt2bot.yml gives them, else unbounded
    (torch's defaults), so that what export narrows is the model's own limit."""
    objs = {d: make_dim(d, (bounds.get(d) or {}).get("min"), (bounds.get(d) or {}).get("max"),
                        (bounds.get(d) or {}).get("multiple_of")) for d in dims}
    spec: dict[str, Any] = {}
    # (the inputs by name, then the tensors inside list, tuple or dict inputs by path: each
    # export call gives those their input's structure, `as_called_spec`)
    for name in [*case.named(), *case.tensors()]:
        axes = {ax: objs[d] for ax, d in sorted(case.dims.get(name, {}).items()) if d in objs}
        spec.setdefault(name, axes or None)
    return spec


def _fix_lines(msg: str) -> list[str]:
    """The lines of export's "Suggested fixes:" block."""
    if "Suggested fixes:" not in msg:
        return []
    out = []
    for line in msg.split("Suggested fixes:", 1)[1].split("\n"):
        line = line.strip()
        if not line:
            if out:
                break
            continue
        if " = " not in line:
            break
        out.append(line)
    return out


# "Not all values of size = L['x'].size()[2] in the specified range [2 <= size <= 64] satisfy
# the generated guard (L['x'].size()[2] // 2) != 1." (torch's text for a guard on one dim that
# it may suggest no fix for)
_UNMET = re.compile(r"Not all values of (?P<name>\w+) = (?P<source>\S+) in the specified range"
                    r"(?:\s+(?:(?P<lo>-?\d+) <= )?(?P=name)(?: <= (?P<hi>-?\d+))?)? satisfy the "
                    r"generated guard (?P<guard>.+?)\.?$", re.M)
_BOUND_LIMIT = 4096     # the sizes a derived lower bound is checked over


def _holds(node: ast.AST, s: int) -> Any:
    """A guard torch printed, of one size `s` (the name `s`), evaluated; ValueError where it
    holds anything else (a function, another size), which no bound is derived from."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name) and node.id == "s":
        return s
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        v = _holds(node.operand, s)
        return -v if isinstance(node.op, ast.USub) else not v
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        a, b = _holds(node.left, s), _holds(node.right, s)
        if isinstance(node.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise ValueError("division by zero")
        if isinstance(node.op, ast.Pow) and not 0 <= b <= 8:
            raise ValueError("power")
        return _BIN[type(node.op)](a, b)
    if isinstance(node, ast.BoolOp):
        vals = [_holds(v, s) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    if isinstance(node, ast.Compare) and all(type(o) in _CMP for o in node.ops):
        left = _holds(node.left, s)
        for op, right in zip(node.ops, node.comparators):
            r = _holds(right, s)
            if not _CMP[type(op)](left, r):
                return False
            left = r
        return True
    raise ValueError(f"not a guard of one size: {type(node).__name__}")


_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b, ast.Pow: lambda a, b: a ** b}
_CMP = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
        ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}


def derived_fixes(msg: str) -> list[str]:
    """Fix lines in torch's own form (`size = Dim('size', min=4)`) for the guards on one dim
    that a constraint violation names without suggesting a fix: the least lower bound past
    which every guard holds, checked size by size up to `_BOUND_LIMIT`. Held-out batch 39's
    age CNN halves its image twice, `(size // 2) != 1`: torch suggested nothing, the advice
    printed `Dim('size')` as "any size", and that block failed; `min=4` exports. Where every
    guard on a dim already holds on every size of its range but reads the size halved (`s // 2`),
    torch cannot prove it of a floor division: the size as a multiple of the divisors,
    `2*_width`, which it can (flux's autoencoder: `(8 % (8*(width // 2))) != 0` for widths from
    4, refused again with `min=4`; `2*Dim('_width', min=2)` exports). Nothing (an empty list)
    where a guard fails past the sizes checked or reads anything but the one size."""
    bounds: dict[str, tuple[int, int | None]] = {}
    divisors: dict[str, tuple[int, int, int | None]] = {}   # name -> (multiple, least, most)
    for m in _UNMET.finditer(msg):
        name = m.group("name")
        lo = int(m.group("lo")) if m.group("lo") else 2
        hi = int(m.group("hi")) if m.group("hi") else None
        try:
            tree = ast.parse(m.group("guard").replace(m.group("source"), "s").strip(), mode="eval").body
            top = min(hi if hi is not None else _BOUND_LIMIT, _BOUND_LIMIT)
            fails = [s for s in range(max(lo, 0), top + 1) if not _holds(tree, s)]
        except (SyntaxError, ValueError, TypeError, OverflowError, RecursionError):
            return []
        if not fails:
            ks = {n.right.value for n in ast.walk(tree) if isinstance(n, ast.BinOp)
                  and isinstance(n.op, ast.FloorDiv) and isinstance(n.left, ast.Name) and n.left.id == "s"
                  and isinstance(n.right, ast.Constant) and type(n.right.value) is int and n.right.value > 1}
            if not ks:
                return []
            k = math.lcm(divisors.get(name, (1, lo, hi))[0], *ks)
            divisors[name] = (k, lo, hi)
            continue
        if fails[-1] >= top - 1:
            return []
        least = max(fails[-1] + 1, bounds.get(name, (0, None))[0])
        bounds[name] = (least, hi)
    # a bound and a multiple of one dim: one round at a time, the bound first (the next
    # export names the guards that still stand)
    divisors = {n: v for n, v in divisors.items() if n not in bounds}
    out = [f"{n} = Dim('{n}', min={lo}" + (f", max={hi})" if hi is not None else ")")
           for n, (lo, hi) in bounds.items()]
    for n, (k, lo, hi) in divisors.items():
        least = max(-(-lo // k), 2)
        out += [f"_{n} = Dim('_{n}', min={least}" + (f", max={hi // k})" if hi is not None else ")"),
                f"{n} = {k}*_{n}"]
    return out


def _dim_json(obj: Any, name: str) -> dict[str, Any]:
    """A `Dim` (or `k*Dim`) as the advice's `{name, min, max, multiple_of}`: `name` is the
    config dim whose Dim it is (inputs that share a name share the Dim); unbounded ends null."""
    def end(v: Any, default: int) -> int | None:
        if isinstance(v, bool) or not isinstance(v, int) or type(v).__module__ != "builtins":
            return None     # None, int_oo or sympy's infinity: unbounded
        n = v
        return None if n == default or n >= 1 << 62 else n

    out: dict[str, Any] = {"name": name, "min": end(getattr(obj, "min", None), 0),
                           "max": end(getattr(obj, "max", None), -1), "multiple_of": None}
    fn = getattr(obj, "fn", None)
    if fn is not None:      # a derived dim, k*root (+ c)
        try:
            k, c = fn(1) - fn(0), fn(0)
        except Exception:  # noqa: BLE001 - an expression we cannot read: say it as text
            k, c = None, None
        if c == 0 and isinstance(k, int) and k > 1:
            out["multiple_of"] = k
        else:
            out["expr"] = str(getattr(obj, "__name__", ""))
    return out


def _names_of(case: CaseInputs, dims: list[str]) -> dict[tuple[str, int], str]:
    return {(inp, ax): d for inp, axes in case.dims.items() for ax, d in axes.items()
            if d in dims}


# --------------------------------------------------------------------------- export

def derive_export(model: Any, cases: list[CaseInputs], eager_outs: list[Any],
                  model_spec: dict[str, Any], paths: RepoPaths,
                  matrix: dict[str, Any] | None) -> dict[str, Any]:
    """`shape_advice.export`: the advised `dynamic_shapes` and whether it exports."""
    dims = advised_dims(cases, model_spec)
    bounds = dict(model_spec.get("bounds") or {})
    res: dict[str, Any] = {"ok": None, "dynamic_shapes": {}, "rounds": 0, "suggested": [],
                           "cases": [], "notes": []}
    if not dims:
        wanted = sorted(varying_dims(cases) | set(model_spec.get("dynamic") or ()))
        if wanted:
            # (`infer_dims` finds a dim on an axis whose size equals it in every case, of a
            # tensor argument or of one inside a list, tuple or dict argument: an input
            # factory's list of crops of other sizes has none)
            res["notes"].append(
                f"{', '.join(wanted)} {'varies' if len(wanted) == 1 else 'vary'} in the shape "
                "matrix or is declared dynamic, but no tensor argument of forward, nor one "
                "inside a list, tuple or dict argument, has it on an axis pt2bot can mark (one "
                "whose size equals it in every case): nothing was made dynamic")
        else:
            res["notes"].append("no dim varies in the shape matrix and none is declared "
                                "dynamic: nothing to make dynamic (give a dim two sizes in "
                                "`shapes`)")
        return res
    if not model_spec.get("export", True):
        res["notes"].append("export is disabled for this model in pt2bot.yml (`export: "
                            "false`): no spec is derived")
        return res
    ex = example_case(cases, set(dims))
    args, kwargs = ex.args, dict(ex.kwargs)
    real = model
    if ex.var_args:
        through = [n for n in kwargs if n not in forward_params(model)]
        if through:
            # (torch keys `dynamic_shapes` by forward's own parameters: an input that reaches
            # `**kwargs` can be given no dims, so no spec of the model's own is proven)
            res["notes"].append(f"forward takes `{'`, `'.join(through)}` through `**kwargs`, which "
                                "torch.export's dynamic_shapes cannot key: the shape advice is "
                                "not derived")
            return res
        # derived on a module that names the inputs `*args` takes, so that every step keys
        # them by name; the spec it ends with is exported on the model itself, keyed as torch
        # keys it there (dinov2's backbone, `forward(self, *args, is_training=False, **kwargs)`)
        model = _named_positional(model, ex)
    spec = _start_spec(ex, dims, bounds)
    where = _names_of(ex, dims)
    pinned: dict[str, dict[str, Any]] = {}     # dim -> its static entry
    rows: list[dict[str, Any]] = []
    seen: list[TraceCollector] = []
    for _pass in range(len(dims) + 1):
        ep, spec = _export_rounds(res, model, args, kwargs, spec, where, pinned, matrix, paths, seen)
        if ep is None:
            break
        # a static dim's other sizes are refused: those cases carry the error
        rows = [{k: v for k, v in row.items() if k != "max_abs_err"}
                for row in run_exported(ep, cases, eager_outs, model_spec.get("tolerance"),
                                        error_chars=300)]
        # a dim the exported program still guards to the example's value (its own runtime
        # assert, not a refusal of the spec) is not dynamic: pinned, and exported again.
        # DINO's position embedding is resized by a Python float made from the image's size
        # (`scale_factor=(w0 / math.sqrt(N), ...)`): export took height and width as
        # multiples of 8, and the program then refused 6 of the matrix's 8 cases
        guarded = _guarded(rows, where, spec)
        if not guarded:
            break
        spec = {k: dict(v) if isinstance(v, dict) else v for k, v in spec.items()}
        for (inp, ax), guard in guarded.items():
            d = where[(inp, ax)]
            # (the line that added the guard, in the trace of the export that made it: DINOv2's
            # `if npatch == N and w == h:` held height and width to the example's)
            site = next((s for ev in seen if (s := guard_added_site(guard.strip("`"), None, ev, paths))), None)
            entry = _static_entry(d, ex.shape[d], True, site, matrix)
            entry["reason"] = (f"the exported program guards {guard} (export follows the "
                               f"example's path), which holds only for {d} = {ex.shape[d]}")
            pinned.setdefault(d, entry)
            spec[inp][ax] = ex.shape[d]
    res["dynamic_shapes"] = _spec_json(spec, where, pinned)
    if ep is not None and real is not model:
        ep = _export_as_called(res, real, ex, spec, paths)
    if ep is not None:
        res["ok"] = True
        res["cases"] = rows
        if real is model:
            _auto_instead(res, model, ex, spec, where, bounds, cases, eager_outs,
                          model_spec.get("tolerance"))
    _note_refused_cases(res, pinned)
    _mark_split_ranges(res, where, cases, matrix)
    if pinned and len(pinned) == len(dims):
        res["notes"].append("no dim can be dynamic: the code pins every one of them")
    reset_dynamo()
    return res


def _named_positional(model: Any, case: CaseInputs) -> Any:
    """`model` behind a forward whose parameters name what its `*args` takes (`case.arg_names`,
    then the case's keywords): torch.export binds `dynamic_shapes` by that signature."""
    import inspect

    import torch

    P = inspect.Parameter

    class Named(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return self.inner(*args, **kwargs)

    Named.forward.__signature__ = inspect.Signature(   # type: ignore[attr-defined]
        [P("self", P.POSITIONAL_OR_KEYWORD)]
        + [P(n, P.POSITIONAL_OR_KEYWORD) for n in case.arg_names]
        + [P(n, P.KEYWORD_ONLY) for n in case.kwargs])
    return Named()


def _auto_instead(res: dict[str, Any], model: Any, ex: CaseInputs, spec: Any,
                  where: dict[tuple[str, int], str], bounds: dict[str, Any],
                  cases: list[CaseInputs], eager_outs: list[Any], tolerance: Any) -> None:
    """Whether a multiple torch's suggested fixes put on a dim is the model's need or only
    torch's: where `Dim.AUTO` in its place exports with that dim a plain size and the program
    runs every case the advised spec ran equal to eager, and sizes that are no multiple
    (`_auto_sizes`), the dim's entries get `auto`: `{"took", "min", "refused", "cases"}`, and
    the notes say so. DETR's advice was "width: multiple of 16" (`width =
    16*_width`, torch's fix for `4 % (4 + 4*((width - 1)//16)) != 0`, which every width from
    17 meets); `Dim.AUTO` exports widths from 17 with none, and a `Dim` with `min=17` torch
    refuses for that guard. A multiple pt2bot.yml declares is the user's and is left alone."""
    import torch
    from torch.export import Dim

    ds = res["dynamic_shapes"]
    torch_k = sorted({d for (inp, ax), d in where.items()
                      if (ds.get(inp, {}).get(str(ax)) or {}).get("multiple_of")})
    if not torch_k or any((bounds.get(d) or {}).get("multiple_of") for d in where.values()):
        return
    auto = {k: dict(v) if isinstance(v, dict) else v for k, v in spec.items()}
    for (inp, ax), d in where.items():
        if d in torch_k and isinstance(auto.get(inp), dict):
            auto[inp][ax] = Dim.AUTO
    reset_dynamo()
    start_call(model)
    try:
        with contextlib.redirect_stderr(io.StringIO()), call_mode(), TraceCollector():
            ep = torch.export.export(model, ex.args, dict(ex.kwargs) or None,
                                     dynamic_shapes=as_called_spec(auto, ex.args, dict(ex.kwargs)))
    except Exception:  # noqa: BLE001 - AUTO refused: the multiple stands as torch's advice
        return
    # a multiple the program still needs is a `k*s` among its inputs' sizes
    for node in ep.graph.nodes:
        for s in getattr(node.meta.get("val"), "shape", ()) if node.op == "placeholder" else ():
            if isinstance(s, torch.SymInt) and not s.node.expr.is_Symbol:
                return
    rows = run_exported(ep, cases, eager_outs, tolerance, error_chars=300)
    if not any(r.get("match") for r in rows) or any(
            was.get("match") and not r.get("match") for was, r in zip(res["cases"], rows)):
        return
    module = ep.module()
    remember_state(module)
    try:
        sizes = {d: _auto_sizes(model, module, ex, where, d, tolerance) for d in torch_k}
    finally:
        forget_state(module)
    n = sum(1 for r in rows if r.get("match"))
    for d, got in sizes.items():
        if got is None:
            continue
        k = next(e["multiple_of"] for axes in ds.values() for e in axes.values() if e.get("name") == d
                 and e.get("multiple_of"))
        for (inp, ax), name in where.items():
            if name == d and str(ax) in ds.get(inp, {}):
                ds[inp][str(ax)]["auto"] = {**got, "cases": n}
        res["notes"].append(
            f"{d} a multiple of {k} is torch's suggested fix for guards a `Dim` cannot prove, not "
            f"what the model needs: with `Dim.AUTO` for {d} the program exports with no multiple, "
            f"runs {d} = {' and '.join(map(str, got['took']))} (no multiples of {k}) and "
            f"{n} of the matrix's cases equal to eager"
            + (f", and refuses {got['min'] - 1}" if got["refused"] else ""))


def _auto_sizes(model: Any, module: Any, ex: CaseInputs, where: dict[tuple[str, int], str],
                d: str, tolerance: Any) -> dict[str, Any] | None:
    """What the AUTO program does with sizes of `d` below the example's: `{"took": [the
    least size halving found, the example's less one], "min": that least, "refused": whether
    the size below it was refused}`, each size taken equal to the model's outputs; None where
    the example's size less one (no multiple of the suggested k) is not taken so (PairPool's
    even length: AUTO keeps the multiple as a runtime check, not in the sizes)."""
    top = ex.shape[d] - 1
    # (a size the program refuses is no equal output: `_equal_at` answers both)
    if top < 2 or not _equal_at(model, module, ex, where, d, top, tolerance):
        return None
    lo, hi = 2, top
    while lo < hi:
        mid = (lo + hi) // 2
        if _takes(module, ex, where, d, mid):
            hi = mid
        else:
            lo = mid + 1
    if lo < top and not _equal_at(model, module, ex, where, d, lo, tolerance):
        lo = top
    return {"took": sorted({lo, top}), "min": lo,
            "refused": lo > 2 and not _takes(module, ex, where, d, lo - 1)}


def _cropped(case: CaseInputs, where: dict[tuple[str, int], str], d: str, n: int) -> CaseInputs:
    """`case` with every input axis of dim `d` cut to its first `n` entries."""
    import torch

    axes = {inp: ax for (inp, ax), name in where.items() if name == d}

    def cut(name: str, v: Any) -> Any:
        ax = axes.get(name)
        return v.narrow(ax, 0, n) if ax is not None and isinstance(v, torch.Tensor) else v

    names = case.arg_names or tuple(f"_{i}" for i in range(len(case.args)))
    return CaseInputs({**case.shape, d: n}, tuple(cut(nm, a) for nm, a in zip(names, case.args)),
                      {k: cut(k, v) for k, v in case.kwargs.items()}, case.dims, case.arg_names,
                      case.var_args)


def _takes(module: Any, ex: CaseInputs, where: dict[tuple[str, int], str], d: str, n: int) -> bool:
    """Whether the exported program runs with dim `d` cut to `n`."""
    c = _cropped(ex, where, d, n)
    try:
        start_call(module)
        with call_mode():
            c = c.fresh()
            module(*c.args, **c.kwargs)
        return True
    except Exception:  # noqa: BLE001 - a size its guards refuse
        return False


def _equal_at(model: Any, module: Any, ex: CaseInputs, where: dict[tuple[str, int], str], d: str,
              n: int, tolerance: Any) -> bool:
    """Whether the program and the model agree with dim `d` cut to `n`."""
    c = _cropped(ex, where, d, n)
    try:
        start_call(model)
        with call_mode():
            own = c.fresh()
            expected = model(*own.args, **own.kwargs)
        start_call(module)
        with call_mode():
            own = c.fresh()
            got = module(*own.args, **own.kwargs)
    except Exception:  # noqa: BLE001 - either side refusing the size: no claim on it
        return False
    return bool(compare_outputs(expected, got, tolerance)["match"])


def _export_as_called(res: dict[str, Any], model: Any, case: CaseInputs, spec: Any,
                      paths: RepoPaths) -> Any:
    """The derived spec exported on the model itself; None (with why in `res`) where torch
    refuses it there."""
    import torch

    reset_dynamo()
    start_call(model)
    try:
        # (in a collector, as every export here: the trace's records stay off the root logger)
        with contextlib.redirect_stderr(io.StringIO()), call_mode(), TraceCollector():
            return torch.export.export(model, case.args, dict(case.kwargs) or None, dynamic_shapes=var_args_spec(
                as_called_spec(spec, case.args, dict(case.kwargs)), case))
    except Exception as e:  # noqa: BLE001 - a refusal is the advice's result
        res.update(ok=False, kind=classify_failure(e), message=short_message(
            f"the spec derived with the inputs named does not export keyed under "
            f"`*{case.var_args}`: {type(e).__name__}: {e}"),
            **locate_failure(e, model, case.args, dict(case.kwargs), spec, paths, locate=False))
        return None


_GUARDED = re.compile(r"\b([A-Za-z_]\w*)\.size\(\)\[(\d+)\]")


def _guarded(rows: list[dict[str, Any]], where: dict[tuple[str, int], str],
             spec: Any) -> dict[tuple[str, int], str]:
    """(input, axis) -> the guard, for the dynamic dims a case's run of the exported program
    failed a guard on ("Guard failed: ... x.size()[3] ..."), the case's every size inside the
    range the spec gives it: sizes the program holds to the example's path. (A size past the
    range fails a guard too: that is the range, `_mark_split_ranges`' to say.)"""
    def inside(shape: dict[str, Any]) -> bool:
        for (inp, ax), d in where.items():
            obj = ((spec or {}).get(inp) or {}).get(ax)
            if d not in shape or obj is None:
                continue
            if shape[d] != obj if isinstance(obj, int) else _outside(_dim_json(obj, d), shape[d]):
                return False
        return True

    out: dict[tuple[str, int], str] = {}
    for row in rows:
        err = str(row.get("error") or "")
        if "Guard failed" not in err or not inside(row.get("shape") or {}):
            continue
        guard = err.split("Guard failed:", 1)[1].strip().splitlines()[0]
        for name, ax in _GUARDED.findall(guard):
            key = (name, int(ax))
            if key in where and not isinstance(((spec or {}).get(name) or {}).get(int(ax)), int):
                out.setdefault(key, f"`{guard[:160]}`")
    return out


def _export_rounds(res: dict[str, Any], model: Any, args: tuple, kwargs: dict, spec: Any,
                   where: dict[tuple[str, int], str], pinned: dict[str, dict[str, Any]],
                   matrix: dict[str, Any] | None, paths: RepoPaths,
                   seen: list[TraceCollector] | None = None) -> tuple[Any, Any]:
    """Export with `spec`, applying torch's suggested fixes until it exports or cannot:
    `(the program or None, the spec it ended with)`, `res` saying why where it cannot, the
    dims it pinned in `pinned`, and in `seen` the trace of the export that succeeded."""
    import torch
    from torch.export.dynamic_shapes import refine_dynamic_shapes_from_suggested_fixes

    ep = None
    for _ in range(MAX_ROUNDS):
        res["rounds"] += 1
        reset_dynamo()
        start_call(model)   # traced from the state the eager outputs it is compared with started from
        try:
            with contextlib.redirect_stderr(io.StringIO()), call_mode(), \
                    TraceCollector() as events:
                ep = torch.export.export(model, args, kwargs or None,
                                         dynamic_shapes=as_called_spec(spec, args, kwargs))
            if seen is not None:
                seen[:] = [events]
            break
        except Exception as e:  # noqa: BLE001 - a refusal is what the advice reads
            msg = str(getattr(e, "msg", None) or e)
            fixes = _fix_lines(msg)
            derived = derived_fixes(msg) if not fixes else []
            if derived:
                multiple = any("*_" in d for d in derived)
                res["notes"].append("torch suggested no fix for " + "; ".join(
                    f"`{g.group('guard')}`" for g in _UNMET.finditer(msg))[:400]
                    + (f": it holds on every size of the range but reads the size floor-divided, "
                       f"so the size as a multiple torch can prove it of, {', '.join(derived)}, "
                       "tried" if multiple else
                       f": the least bound past which it holds, {', '.join(derived)}, tried"))
                fixes = derived
            if not fixes:
                res.update(ok=False, kind=classify_failure(e),
                           message=short_message(f"{type(e).__name__}: {e}"),
                           **locate_failure(e, model, args, kwargs, spec, paths))
                # export stops at the first error it raises; the pins it would have named
                # after tracing are in draft_export's report
                for key, pin in _hidden_pins(model, args, kwargs, spec, paths,
                                             res["notes"]).items():
                    if key in where and not isinstance(spec[key[0]][key[1]], int):
                        pinned.setdefault(where[key], _static_entry(
                            where[key], pin["value"], True, pin, matrix))
                        spec = {k: dict(v) if isinstance(v, dict) else v
                                for k, v in spec.items()}
                        spec[key[0]][key[1]] = pin["value"]
                break
            if not derived:
                res["suggested"].extend(fixes)
            try:
                new = refine_dynamic_shapes_from_suggested_fixes(
                    "Suggested fixes:\n" + "\n".join(fixes), spec)
            except Exception as e2:  # noqa: BLE001 - torch could not apply its own fixes
                res.update(ok=False, kind="error", message=short_message(
                    f"torch could not apply its suggested fixes: {type(e2).__name__}: {e2}"))
                break
            newly = [(inp, ax) for (inp, ax) in where
                     if isinstance(((new or {}).get(inp) or {}).get(ax), int)
                     and not isinstance(((spec or {}).get(inp) or {}).get(ax), int)]
            if newly:
                # where the export itself pinned each size (its specialisation events); only
                # the ones it did not log are asked of draft_export, which traces the model
                # again (26 s of mamba-minimal's advice)
                sites = {k: v for k, v in _logged_pins(events, paths).items() if k in newly}
                truncated = truncated_division_site(events, paths) if len(newly) == 1 else None
                if truncated is not None:
                    # the one size pinned, by a truncated float division: its line, not the
                    # `view` that used it, and what to write instead (Swin's window_reverse)
                    sites[newly[0]] = {**truncated, "hint": TRUNCATED_DIVISION}
                if any(p not in sites for p in newly):
                    sites = {**_pin_sites(model, args, kwargs, spec, paths, res["notes"]), **sites}
                # draft_export may report only the first of several pins: ask again for each
                # one it did not locate, with the others static as the fixes say
                for inp, ax in [p for p in newly if p not in sites][:MAX_RELOCATE]:
                    alone = {k: dict(v) if isinstance(v, dict) else v for k, v in new.items()}
                    alone[inp][ax] = spec[inp][ax]
                    sites.update({k: v for k, v in _pin_sites(
                        model, args, kwargs, alone, paths, res["notes"]).items()
                        if k == (inp, ax)})
                for inp, ax in newly:
                    d = where[(inp, ax)]
                    pinned.setdefault(d, _static_entry(
                        d, new[inp][ax], bool(_CONSTANT.search(msg)), sites.get((inp, ax)),
                        matrix))
            if new == spec:
                res.update(ok=False, kind="constraint_violation", message=short_message(
                    "torch's suggested fixes do not converge (export refused the spec they "
                    f"gave): {msg}"))
                break
            spec = new
    else:
        res.update(ok=False, kind="constraint_violation",
                   message=f"export still refused the spec after {MAX_ROUNDS} rounds of fixes")
    return ep, spec


def _shape_text(shape: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in shape.items()) + ")"


def _note_refused_cases(res: dict[str, Any], pinned: dict[str, dict[str, Any]]) -> None:
    """A note for the matrix's cases the advised program refused: they take another path than
    the example export followed; or, where torch made no module of the program, that no case
    ran at all."""
    # (the cases a static dim's other size refuses are what static means, not a path)
    static = {d: e["value"] for d, e in pinned.items() if isinstance(e.get("value"), int)}
    covered = [c for c in res["cases"]
               if all(c["shape"].get(d) == v for d, v in static.items() if d in c["shape"])]
    outside = [c for c in covered if c.get("error")]
    if outside and all(str(c["error"]).startswith(UNRUNNABLE) for c in outside):
        # (gemma's decoder: torch's guard code on a dict keyed by an enum does not parse)
        res["notes"].append(f"the advised spec exports, but {outside[0]['error'].splitlines()[0][:240]}")
    elif outside:
        res["notes"].append(
            f"the advised spec holds {len(covered) - len(outside)} of the matrix's "
            f"{len(covered)} cases{' at its static sizes' if len(covered) < len(res['cases']) else ''}"
            ": export follows the example's path, and "
            + ", ".join(_shape_text(c["shape"]) for c in outside[:5])
            + (" and more" if len(outside) > 5 else "")
            + f" take another (torch: {outside[0]['error'].splitlines()[0][:200]})")


def _spec_json(spec: Any, where: dict[tuple[str, int], str],
               pinned: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The refined spec as `{input: {"axis": entry}}`; a Dim is named after the config dim
    it was made for, so two inputs torch found equal (`b2 = b`) carry the same name."""
    by_dim_name = {dim_name(d): d for d in where.values()}
    out: dict[str, Any] = {}
    for (inp, ax), d in sorted(where.items()):
        obj = ((spec or {}).get(inp) or {}).get(ax)
        if isinstance(obj, int) or obj is None:
            entry = pinned.get(d) or {"static": True, "reason": f"export pinned {d}",
                                      "path": None, "line": None}
        else:
            root = getattr(obj, "root", obj)
            own = str(getattr(root, "__name__", ""))
            entry = _dim_json(obj, by_dim_name.get(own, by_dim_name.get(own.lstrip("_"), d)))
        out.setdefault(inp, {})[str(ax)] = entry
    return out


def _outside(e: dict[str, Any], size: int) -> bool:
    """Whether `size` is outside an advised dim's range (`{min, max, multiple_of}`)."""
    lo, hi, k = e.get("min"), e.get("max"), e.get("multiple_of")
    return bool((lo is not None and size < lo) or (hi is not None and size > hi) or (k and size % k))


def _mark_split_ranges(res: dict[str, Any], where: dict[tuple[str, int], str],
                       cases: list[CaseInputs], matrix: dict[str, Any] | None) -> None:
    """A dynamic dim whose advised range leaves out sizes of the matrix cannot be one range
    over it (the code branches on it): its entry gets `not_one_range` {sizes, reason, path,
    line, source}, located at the matrix's guard on that dim when it saw one."""
    for (inp, ax), d in where.items():
        e = res["dynamic_shapes"].get(inp, {}).get(str(ax))
        if not e or e.get("static"):
            continue
        out = sorted({c.shape[d] for c in cases if d in c.shape and _outside(e, c.shape[d])})
        if not out:
            continue
        site = _matrix_site(d, matrix) or {}
        e["not_one_range"] = {
            "sizes": out, "reason": f"the matrix has {d} = {', '.join(map(str, out))}, outside "
                                    "the range export derived from the example's path",
            "path": site.get("path"), "line": site.get("line"),
            "source": site.get("source") or None}


def _static_entry(d: str, value: int, by_code: bool, site: dict[str, Any] | None,
                  matrix: dict[str, Any] | None) -> dict[str, Any]:
    """`{"static": true, "value", "reason", "path", "line", "source"}` of a pinned dim
    (`by_code`: a guard of the code equates it to the constant, rather than a range that
    narrowed to one size)."""
    why = (f"the code specialises {d} to {value}" if by_code
           else f"export's guards hold only for {d} = {value}")
    if site is not None and site.get("hint") == TRUNCATED_DIVISION:
        why += f": {TRUNCATED_DIVISION}"
    entry: dict[str, Any] = {"static": True, "value": value, "reason": why, "path": None,
                             "line": None, "source": None}
    if site is None:
        site = _matrix_site(d, matrix)
    if site is not None:
        entry.update(path=site.get("path"), line=site.get("line"),
                     source=site.get("source") or None)
    per_size = _per_size(d, matrix) if by_code else None
    if per_size is not None:
        entry["per_size"] = per_size
    return entry


def _per_size(d: str, matrix: dict[str, Any] | None) -> dict[str, Any] | None:
    """`{sizes, recompiled, limit}` where the shape matrix ran `d` at three sizes or more and
    each new one compiled again on `d`: what a pinned dim costs where inputs are padded to the batch's
    longest (a CRF tagger's sentences), a compile per length until the recompile limit, then
    eager code. None where the matrix did not show it."""
    rc = (matrix or {}).get("recompiles") or {}
    cases = rc.get("cases") or ()
    sizes = {c["shape"][d] for c in cases if isinstance(c.get("shape"), dict) and d in c["shape"]}
    again = sum(1 for c in cases if any(r.get("dim") == d and r.get("kind") != "size_one"
                                        for r in c.get("reasons") or ()))
    # (three sizes at least: over two, automatic dynamic's one recompile, after which the dim
    # is symbolic, reads the same as a compile per size)
    if len(sizes) < 3 or again < len(sizes) - 1:
        return None
    return {"sizes": len(sizes), "recompiled": again, "limit": rc.get("limit")}


def _matrix_site(d: str, matrix: dict[str, Any] | None) -> dict[str, Any] | None:
    """Where the matrix saw `d` specialised or guarded, in the user's code."""
    if not matrix:
        return None
    for s in matrix.get("specialized") or ():
        if s.get("dim") == d and s.get("path"):
            return s
    for c in (matrix.get("recompiles") or {}).get("cases") or ():
        for r in c.get("reasons") or ():
            if r.get("dim") == d and r.get("path") and r.get("kind") != "size_one":
                return r
    return None


_EQ = re.compile(r"^Eq\((?P<sym>\w+), (?P<val>\d+)\)$")


def _draft(model: Any, args: tuple, kwargs: dict, spec: Any, paths: RepoPaths,
           notes: list[str], lost: str, limit_s: float | None = None) -> list[dict[str, Any]] | None:
    """draft_export's located failures within its time (`limit_s`, DRAFT_TIMEOUT_S unless
    given); past it, or when it raised, None and a note saying what is `lost` then."""
    limit = DRAFT_TIMEOUT_S if limit_s is None else limit_s
    try:
        with time_limit(limit):
            failures = draft_failures(model, args, kwargs, spec, paths)
    except Overrun:
        notes.append(f"draft_export ran past {limit:.0f} s: {lost}")
        return None
    if failures is None:
        notes.append(f"draft_export failed: {lost}")
    return failures


def _hidden_pins(model: Any, args: tuple, kwargs: dict, spec: Any, paths: RepoPaths,
                 notes: list[str]) -> dict[tuple[str, int], dict[str, Any]]:
    """(input, axis) -> {value, path, line, source} of each input size a guard of
    draft_export's report pins to a constant (`Eq(s77, 4)`)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for f in _draft(model, args, kwargs, spec, paths, notes,
                    "dims the code pins behind the export error are not known",
                    min(HIDDEN_TIMEOUT_S, DRAFT_TIMEOUT_S)) or ():
        m = _EQ.match(f.get("expr") or "")
        src = (f.get("symbols") or {}).get(m.group("sym")) if m else None
        s = _SOURCE.search(str(src or ""))
        if m and s and int(m.group("val")) > 1:
            out.setdefault((s.group("arg"), int(s.group("ax"))),
                           {**f, "value": int(m.group("val"))})
    return out


def _logged_pins(events: TraceCollector, paths: RepoPaths
                 ) -> dict[tuple[str, int], dict[str, Any]]:
    """(input, axis) -> {path, line, source} where the export's own trace specialised that
    size in the user's code (the first place for each)."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for site in specialization_sites(events, paths):
        if site["path"]:
            out.setdefault((site["arg"], site["ax"]), site)
    return out


def _pin_sites(model: Any, args: tuple, kwargs: dict, spec: Any, paths: RepoPaths,
               notes: list[str]) -> dict[tuple[str, int], dict[str, Any]]:
    """(input, axis) -> {path, line, source} of the guard draft_export saw pin that size."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for f in _draft(model, args, kwargs, spec, paths, notes,
                    "pinned dims are located from the matrix only") or ():
        for src in f["sources"]:
            m = _SOURCE.search(src)
            if m and f["path"]:
                out.setdefault((m.group("arg"), int(m.group("ax"))), f)
    return out


# --------------------------------------------------------------------------- compile

def count_compiles(model: Any, cases: list[CaseInputs], method: str, spec_json: dict[str, Any],
                   limit: int) -> dict[str, Any]:
    """Compile the matrix with `method` and the advised dims; count the frame compilations
    (`once`: what compiling each frame once would have cost)."""
    import torch

    reset_dynamo()
    compiled = torch.compile(model, backend="eager", dynamic=True if method == "dynamic=True"
                             else None)
    limit_key = ("recompile_limit" if hasattr(torch._dynamo.config, "recompile_limit")
                 else "cache_size_limit")
    n, hit, error, once = 0, False, None, 0
    with torch._dynamo.config.patch(**{limit_key: limit}), call_mode():
        for k, case in enumerate(cases):
            if k and any(v == 1 for v in case.shape.values()):
                once += 1   # torch specialises size 1 whatever the settings: one more compile
            n0 = len(compilation_metrics())
            fresh = case.replace_tensors(lambda v: v.detach().clone() if isinstance(v, torch.Tensor) else v)
            if method == "mark_dynamic":
                _mark(fresh, spec_json)
            try:
                with contextlib.redirect_stderr(io.StringIO()):
                    compiled(*fresh.args, **fresh.kwargs)
            except Exception as e:  # noqa: BLE001 - e.g. mark_dynamic on a dim needing divisibility
                error = short_message(f"{type(e).__name__}: {e}", 400)
                break
            for m in compilation_metrics()[n0:]:
                fail = str(getattr(m, "fail_reason", "") or "")
                if getattr(m, "fail_type", None):
                    hit = hit or _LIMIT_TEXT in fail
                    continue
                n += 1
                once += k == 0   # compiling once per frame: the first case's compiles
    reset_dynamo()
    return {"compiles": n, "once": once, "limit_hit": hit, "error": error}


def _mark(case: CaseInputs, spec_json: dict[str, Any]) -> None:
    import torch

    named = case.tensors()
    for inp, axes in spec_json.items():
        t = named.get(inp)
        if not isinstance(t, torch.Tensor):
            continue
        for ax, e in axes.items():
            a = int(ax)
            if e.get("static") or a >= t.dim() or t.shape[a] < 2:
                continue    # size 0/1 is always specialised: torch's rule, not the advice's
            torch._dynamo.mark_dynamic(t, a, **mark_range(e.get("min"), e.get("max")))


def pick_method(model: Any, cases: list[CaseInputs], spec_json: dict[str, Any],
                limit: int) -> dict[str, Any]:
    """The compile settings that compile the matrix least often, and their count:
    `dynamic=True` when a dim needs divisibility; else `mark_dynamic` (it says the range),
    and `dynamic=True` too when that fails or compiles a frame again."""
    dyn = [e for axes in spec_json.values() for e in axes.values() if not e.get("static")]
    if not dyn:
        return {"method": None, "compiles_after": None, "tried": {}}
    if any(e.get("multiple_of") for e in dyn):
        # mark_dynamic cannot say "a multiple of k": its first compile would raise
        tried = {"dynamic=True": count_compiles(model, cases, "dynamic=True", spec_json, limit)}
        return _best(tried)
    tried = {"mark_dynamic": count_compiles(model, cases, "mark_dynamic", spec_json, limit)}
    got = tried["mark_dynamic"]
    if got["error"] or got["compiles"] > got["once"]:
        tried["dynamic=True"] = count_compiles(model, cases, "dynamic=True", spec_json, limit)
    return _best(tried)


def _best(tried: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The method with the fewest compiles among those that compiled the matrix."""
    ok = {m: r for m, r in tried.items() if not r["error"]}
    if not ok:
        return {"method": None, "compiles_after": None, "tried": tried}
    best = min(ok, key=lambda m: (ok[m]["compiles"], METHODS.index(m)))
    return {"method": best, "compiles_after": ok[best]["compiles"], "tried": tried}


def _as_configured(spec_json: dict[str, Any], model_spec: dict[str, Any],
                   matrix: dict[str, Any]) -> bool:
    """Whether the matrix phase compiled with the advised settings already: it marks the
    dims `dynamic:` names with `mark_dynamic` and their declared range, so when those are
    exactly the advised dynamic dims, with the same range, no divisibility, and none of
    them was specialised there (it would have been unmarked), its compiles are the after."""
    bounds = model_spec.get("bounds") or {}
    dyn: dict[str, tuple[Any, Any]] = {}
    for axes in spec_json.values():
        for e in axes.values():
            if e.get("static"):
                continue
            if e.get("multiple_of") or e.get("not_one_range") or e.get("expr"):
                return False
            dyn[e["name"]] = (e.get("min"), e.get("max"))
    declared = set(model_spec.get("dynamic") or ())
    if not dyn or set(dyn) != declared:
        return False
    if any(dyn[d] != ((bounds.get(d) or {}).get("min"), (bounds.get(d) or {}).get("max"))
           for d in dyn):
        return False
    return not any(s.get("dim") in declared for s in matrix.get("specialized") or ())


# --------------------------------------------------------------------------- code

def configured_spec(spec_json: dict[str, Any], model_spec: dict[str, Any]) -> dict[str, Any]:
    """`spec_json` (the advised export spec) as pt2bot.yml configures the same axes: each dim
    dynamic where the config's `dynamic` names it, with the config's bounds, and no other
    bound; an axis the config leaves static is left out. What the advice's `dynamic:` block
    is compared with."""
    declared = set(model_spec.get("dynamic") or ())
    bounds = model_spec.get("bounds") or {}
    out: dict[str, Any] = {}
    for inp, axes in spec_json.items():
        for ax, e in axes.items():
            name = e.get("name")
            if e.get("static") or name not in declared:
                continue
            b = bounds.get(name) if isinstance(bounds.get(name), dict) else {}
            out.setdefault(inp, {})[ax] = {"name": name, **{k: b[k] for k in ("min", "max", "multiple_of")
                                                            if b.get(k) is not None}}
    return out


def advice_code(spec_json: dict[str, Any], method: str | None,
                var_args: tuple[str, tuple[str, ...]] | None = None,
                layouts: dict[str, Any] | None = None) -> dict[str, str]:
    """Paste-ready Python (the `dynamic_shapes` with `Dim`s, how to compile) and the
    `dynamic:` lines of pt2bot.yml. `var_args`: (the name of forward's `*args`, the inputs
    it takes in order), whose dims the spec keys as one tuple under that name. `layouts`:
    every input by name with its structure (`inputs.layout`), where one is not a tensor: each
    is named, a list, tuple or dict input given its structure with the axes of the tensors in
    it (keyed by path in `spec_json`), anything else None."""
    dims: dict[str, dict[str, Any]] = {}
    static: list[tuple[str, str, dict[str, Any]]] = []
    for inp, axes in spec_json.items():
        for ax, e in axes.items():
            if e.get("static"):
                static.append((inp, ax, e))
            else:
                dims.setdefault(e["name"], e)
    if not spec_json:
        return {"python": "# nothing to make dynamic", "compile": "", "yaml": "dynamic: []"}
    py = ["from torch.export import Dim", ""]
    for name, e in dims.items():
        var = dim_name(name)
        k = e.get("multiple_of")
        if k and e.get("auto"):
            # torch's multiple is for a `Dim`; the model takes the dim without it (`auto`)
            took = " and ".join(map(str, e["auto"].get("took") or ()))
            py.append(f"{var} = Dim.AUTO  # not {k}*_{var}: exported with AUTO, the program "
                      f"needs no multiple (it ran {name} = {took})")
        elif k:
            lo = None if e.get("min") is None else -(-e["min"] // k)
            hi = None if e.get("max") is None else e["max"] // k
            py.append(f"_{var} = Dim({('_' + var)!r}{_bounds_py(lo, hi)})")
            py.append(f"{var} = {k} * _{var}")
        else:
            py.append(f"{var} = Dim({var!r}{_bounds_py(e.get('min'), e.get('max'))})")
    def axes_py(inp: str) -> str:
        inner = ", ".join(f"{ax}: {dim_name(e['name'])}" for ax, e in spec_json.get(inp, {}).items()
                          if not e.get("static"))
        return f"{{{inner}}}" if inner else "None"

    imports: set[str] = set()

    def imported(cls: str) -> str:
        # `module:qualname` → the name the pasted code writes, its top class imported
        module, qual = cls.split(":", 1)
        imports.add(f"from {module} import {qual.split('.')[0]}")
        return qual

    def nested_py(lay: Any, path: str) -> str:
        if lay == "tensor":
            return axes_py(path)
        if isinstance(lay, dict) and "dict" in lay:
            for cls in lay.get("classes") or ():
                imported(cls)
            exprs = set(lay.get("exprs") or ())   # keys written as their text (an enum member)
            return "{" + ", ".join(
                f"{k if k in exprs else repr(k)}: {nested_py(v, path + (f'[{k}]' if k in exprs else f'[{k!r}]'))}"
                for k, v in lay["dict"].items()) + "}"
        if isinstance(lay, dict) and ("list" in lay or "tuple" in lay):
            items = [nested_py(v, f"{path}[{i}]") for i, v in enumerate(lay.get("list", lay.get("tuple")))]
            if "list" in lay:
                return "[" + ", ".join(items) + "]"
            if lay.get("class"):    # a named tuple: torch refuses a plain tuple's spec for it
                return f"{imported(lay['class'])}(" + ", ".join(items) + ")"
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        return "None"

    parts = []
    if layouts:
        parts = [f"{inp!r}: {nested_py(lay, inp)}" for inp, lay in layouts.items()]
    elif var_args:
        name, positional = var_args
        parts.append(f"{name!r}: (" + ", ".join(axes_py(n) for n in positional)
                     + ("," if len(positional) == 1 else "") + ")")
    if not layouts:
        parts += [f"{inp!r}: {axes_py(inp)}" for inp in spec_json if not var_args or inp not in var_args[1]]
    py.append("dynamic_shapes = {" + ", ".join(parts) + "}")
    py[1:1] = sorted(imports)
    # (an example of size 1 in a dynamic dim is one torch specialises, and export then fails:
    # MAE's user pasted this with a batch of one, what evaluation feeds)
    py.append("# args, kwargs: example inputs with every dynamic dim at least 2 (torch specialises a size of 1)")
    py.append("ep = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)")
    for inp, ax, e in static:
        where = f"{e.get('path')}:{e.get('line')}" if e.get("path") else "unlocated"
        py.append(f"# {inp}.shape[{ax}] stays static ({e.get('reason')}; {where})")
    comp = []
    if method == "dynamic=True":
        comp.append("compiled = torch.compile(model, dynamic=True)")
    elif method == "mark_dynamic":
        for inp, axes in spec_json.items():
            for ax, e in axes.items():
                if not e.get("static"):
                    r = mark_range(e.get("min"), e.get("max"))
                    # the min the spec leaves out, said where it appears: the export's `Dim`
                    # above has none, and two ranges for one dim read as a mistake
                    why = ("  # min: mark_dynamic refuses a max without one; 2 is the least "
                           "size it keeps symbolic" if e.get("min") is None and "min" in r else "")
                    comp.append(f"torch._dynamo.mark_dynamic({inp}, {ax}"
                                f"{_bounds_py(r.get('min'), r.get('max'))}){why}")
        comp.append("compiled = torch.compile(model)")
    yml = ["dynamic:"]
    for name, e in dims.items():
        b = {k: e.get(k) for k in ("min", "max", "multiple_of") if e.get(k) is not None}
        yml.append(f"  {name}: " + ("{" + ", ".join(f"{k}: {v}" for k, v in b.items()) + "}"
                                    if b else "null")
                   + ("  # the multiple is for pt2bot's own export, which takes a Dim; the "
                      "model needs none (Dim.AUTO)" if e.get("auto") and e.get("multiple_of") else ""))
    for inp, ax, e in static:
        yml.append(f"  # {inp}.shape[{ax}]: cannot be dynamic ({e.get('reason')})")
    if len(yml) == 1:
        yml = ["dynamic: []  # no dim can be dynamic"]
    return {"python": "\n".join(py), "compile": "\n".join(comp), "yaml": "\n".join(yml)}


def _bounds_py(lo: int | None, hi: int | None) -> str:
    return (f", min={lo}" if lo is not None else "") + (f", max={hi}" if hi is not None else "")


# --------------------------------------------------------------------------- the phase

def measure_advice(model: Any, cases: list[CaseInputs], eager_outs: list[Any],
                   model_spec: dict[str, Any], run_cfg: dict[str, Any], paths: RepoPaths,
                   matrix: dict[str, Any] | None = None) -> dict[str, Any]:
    """The RUN's `shape_advice`. `matrix`: the matrix phase's RUN keys when it ran (its
    compile count is "before"; else the matrix phase runs here for it)."""
    t0 = time.perf_counter()
    if matrix is None or not isinstance((matrix.get("recompiles") or {}).get("compiles"), int):
        from pt2bot.smoke.matrix import measure_matrix
        matrix = measure_matrix(model, cases, eager_outs, model_spec,
                                {**run_cfg, "backend": "eager"}, paths)
    rc = matrix.get("recompiles") or {}
    limit = int(run_cfg.get("recompile_limit") or 8)
    t_export = time.perf_counter()
    export = derive_export(model, cases, eager_outs, model_spec, paths, matrix)
    notes = export.pop("notes")
    t_compile = time.perf_counter()
    if _as_configured(export["dynamic_shapes"], model_spec, matrix):
        # the matrix phase already compiled with exactly these settings: its count is both
        picked = {"method": "mark_dynamic", "compiles_after": rc.get("compiles"), "tried": {}}
    else:
        picked = pick_method(model, cases, export["dynamic_shapes"], limit)
    comp = {"method": picked["method"], "compiles_before": rc.get("compiles"),
            "compiles_after": picked["compiles_after"], "backend": "eager",
            "reused": not picked["tried"] and picked["method"] is not None,
            "limit_hit": any(r["limit_hit"] for r in picked["tried"].values())
            or bool(picked["method"] and not picked["tried"] and rc.get("eager_fallback")),
            "tried": {m: {"compiles": r["compiles"], "error": r["error"]}
                      for m, r in picked["tried"].items()}}
    if rc.get("eager_fallback"):
        notes.append(f"the configured matrix hit the recompile limit ({rc.get('limit')}): "
                     "compiles before count what compiled before the fallback to eager")
    if comp["limit_hit"]:
        notes.append(f"the advised settings still hit the recompile limit ({limit})")
    if picked["tried"] and picked["method"] is None:
        notes.append("no compile setting compiled the matrix with the advised dims: "
                     + "; ".join(f"{m}: {r['error']}" for m, r in picked["tried"].items()))
    before, after = comp["compiles_before"], comp["compiles_after"]
    worse = isinstance(before, int) and isinstance(after, int) and after > before
    if worse:
        # the advice is the export's spec; for compiling, the configured settings did better
        # (DETR's NestedTensor model: 1 compile as configured, "1 → 2 with `dynamic=True`")
        comp["worse"] = True
        notes.append(f"the advised dims compile the matrix {after} times with `{comp['method']}`, the "
                     f"configured settings {before}: keep the configured compile settings (the "
                     "spec above is what export takes)")
    # every input, by name, with its structure where it is not a tensor: the paste-ready
    # `dynamic_shapes` names each one as torch wants it (gemma's `kv_caches`, a list of pairs
    # of tensors, and its `temperatures=None`: a dict without them does not export)
    layouts = {n: layout(v) for n, v in cases[0].named().items()} \
        if cases and not cases[0].var_args else {}
    if all(lay == "tensor" for lay in layouts.values()):
        layouts = {}
    else:
        export["layout"] = layouts
    code = advice_code(export["dynamic_shapes"], None if worse else picked["method"],
                       (cases[0].var_args, cases[0].arg_names)
                       if cases and cases[0].var_args else None, layouts)
    if code.get("yaml") == advice_code(configured_spec(export["dynamic_shapes"], model_spec),
                                       None)["yaml"]:
        # the `dynamic:` block says what pt2bot.yml says already (ESM-2's `{batch: null, seq:
        # null}` under `dynamic: [batch, seq]`): nothing to paste; the compile setting beside
        # it (`dynamic=True`) is the advice
        comp["yaml_as_configured"] = True
    return {"shape_advice": {
        "export": export, "compile": comp,
        "code": code,
        "notes": notes, "seconds": round(time.perf_counter() - t0, 3),
        "steps_s": {"before": round(t_export - t0, 3), "export": round(t_compile - t_export, 3),
                    "compile": round(time.perf_counter() - t_compile, 3)}}}
