from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import node_span, replace_spans, segment, source_lines
from pt2bot.analysis.infer import PARAM, SHAPE, SIZE, SIZES, TENSORISH
from pt2bot.analysis.sizeargs import is_parameter, local_values, pending

# Where a symbolic size is turned into a Python int (a specialisation: dynamo guards on its
# value), measured with dynamo on torch 2.13.0+cpu (and the f-strings, linspace and math.copysign/
# math.log on 2.14.1): a function of x.shape[0] compiled with dynamic=True for sizes 8, 10, 12
# compiles 3 times with these, once with their symbolic neighbours (torch.arange(n),
# torch.zeros(n), x.new_ones(n), torch.full((n,), v), torch.eye(n), torch.randperm(n),
# torch.tensor(n), F.interpolate(size=n), x.split(n), x.topk(n), x.narrow(0, 0, n),
# math.floor/ceil/trunc/sqrt/log2/sin/cos/prod, int(n), float(n), "{}".format(n) are not listed;
# torch.export specialises any float computed from a size, math or not: not this rule's claim).
# Factory arguments (position, keyword) that take the value of a size.
_FACTORY_ARGS: dict[str, tuple[tuple[int, str], ...]] = {
    "torch.linspace": ((2, "steps"),),
    "torch.logspace": ((2, "steps"),),
    "torch.tril_indices": ((0, "row"), (1, "col")),
    "torch.triu_indices": ((0, "row"), (1, "col")),
    "torch.hann_window": ((0, "window_length"),),
    "torch.hamming_window": ((0, "window_length"),),
    "torch.blackman_window": ((0, "window_length"),),
    "torch.bartlett_window": ((0, "window_length"),),
    "torch.kaiser_window": ((0, "window_length"),),
    "torch.as_tensor": ((0, "data"),),
    "torch.histc": ((1, "bins"),),
    "torch.chunk": ((1, "chunks"),),
    "torch.nn.functional.one_hot": ((1, "num_classes"),),
    "torch.nn.functional.adaptive_avg_pool1d": ((1, "output_size"),),
    "torch.nn.functional.adaptive_avg_pool2d": ((1, "output_size"),),
    "torch.nn.functional.adaptive_max_pool1d": ((1, "output_size"),),
    "torch.nn.functional.adaptive_max_pool2d": ((1, "output_size"),),
    "torch.nn.functional.avg_pool1d": ((1, "kernel_size"),),
    "torch.nn.functional.avg_pool2d": ((1, "kernel_size"),),
}
# Tensor methods (receiver a tensor) and the argument that takes the value of a size.
_METHOD_ARGS: dict[str, tuple[tuple[int, str], ...]] = {
    "chunk": ((0, "chunks"),), "unfold": ((1, "size"),), "histc": ((0, "bins"),),
}
# math functions dynamo evaluates on the size's value; the second set also breaks the graph.
_MATH_SPECIALISE = frozenset({
    "copysign", "log", "log10", "exp", "fabs", "pow", "atan2", "hypot", "fmod", "frexp", "modf", "erf",
    "lgamma", "dist", "fsum",
})
_MATH_BREAK = frozenset({"isfinite", "isnan", "isinf", "isqrt", "factorial", "gcd", "ldexp", "comb", "perm"})
_MATH = frozenset(f"math.{n}" for n in _MATH_SPECIALISE | _MATH_BREAK)

_KEEP = ("keep the size symbolic: torch ops on sizes (`torch.arange(n)`, `torch.zeros(n)`), "
         "`torch._check` for a range, or mark the dim static (`torch._dynamo.mark_static`) if it "
         "does not vary")


# Hashing a size specialises it: dynamo hashes a SymInt by its value. Measured on torch 2.13.0+cpu
# and 2.14.1 (backend=eager, a dim taking 8/10/12/14, default and dynamic=True): one compile per
# size, `TORCH_LOGS=dynamic` shows `eval Eq(s0, 10) [guard added]` at the hashing line, then
# `range_refined_to_singleton`; strict torch.export reports a constraint violation, non-strict
# export raises `unhashable type: non-nested SymInt`. So: a set display or comprehension holding a
# size (`{h, w}`, `{tuple(t.shape[-2:]) for t in xs}`: torchvision v2/_utils.py:182/197), a dict
# key (`{h: 1}`, `{n: 1 for n in x.shape}`, `d[h]`, `d[h] = v`, `d.get(h)`), `set(x.shape)`,
# `frozenset(...)`, `hash(n)`, `h in {3, 5}` or in a dict, even a set built and never read. Kept
# symbolic, so not flagged: `h in (3, 5)` or a list (compared with `==` element by element: one
# compile), a size as a dict *value* (`{"h": h}`), a set of dtypes, a list of shapes compared with
# `!=`. The container must be one we can see is a set or dict: a display, `set()`/`dict()`/
# `frozenset()`, or a name bound only to one in the function or at module level (not `self.cache`:
# a list there would compare, not hash).
_HASH_FUNCS = frozenset({"set", "frozenset", "hash"})
_HASH_METHODS = frozenset({"get", "add", "setdefault", "discard", "pop"})
_LOOKUP_METHODS = frozenset({"get", "discard", "pop"})
_CONTAINER_NODES = (ast.Set, ast.Dict, ast.SetComp, ast.DictComp)
_CONTAINER_CALLS = frozenset({"set", "frozenset", "dict"})
# what `d[k]` of a dict we can see looks like (a cheap test first: subscripts are many)
_SUBSCRIPTED = frozenset({ast.Name, ast.Dict, ast.DictComp})
_KEYS = frozenset({ast.Name, ast.Subscript, ast.Call, ast.BinOp, ast.Attribute, ast.Tuple})


def _hashed_size(ctx, e: ast.AST, follow: bool = True) -> tuple[ast.AST | None, tuple | None]:
    """(the size, None) if hashing `e` hashes a tensor size here; (the part, needs) if it does when
    a parameter holds a size (pt2bot/analysis/sizeargs.py, only with `follow`); else (None, None)."""
    t = type(e)
    if t is ast.Tuple:
        for x in e.elts:
            if ctx.kind(x) == SIZE:
                return x, None
        if follow:
            n = pending(ctx, e, "size")
            if n is not None:
                return e, n
        return None, None
    if t is ast.Call and type(e.func) is ast.Name and e.func.id in ("tuple", "list") and len(e.args) == 1 \
            and not e.keywords:
        a = e.args[0]        # `tuple(x.shape[-2:])`
        if ctx.kind(a) in (SIZES, SHAPE):
            return a, None
        n = pending(ctx, a, "sized") if follow else None
        return (a, n) if n is not None else (None, None)
    if t is ast.Constant:
        return None, None
    if ctx.kind(e) in (SIZE, SIZES, SHAPE):
        return e, None
    if follow:
        n = pending(ctx, e, "size")
        if n is not None:
            return e, n
    return None, None


def _is_container(ctx, e: ast.AST, lookup: bool) -> bool:
    """A set or dict we can see is one (see above). For a lookup (`in`, `d[h]`, `.get(h)`) not
    one of constants only (`x.shape[1] in {1, 3}`, `{8: 1.0, 16: 0.5}.get(h)`): dynamo specialises
    the size there too, but like `x.shape[1] == 3` (which PTC301 leaves out, pt2bot/rules/
    shape_branch.py) that dispatches on a few admitted values of a dim that nearly always does not
    vary (kornia's channel checks, random_rain.py:97). Putting a size in (`{h, w}`, `s.add(h)`,
    `d[h] = v`) is flagged whatever the container holds."""
    t = type(e)
    if t in _CONTAINER_NODES:
        return not (lookup and _constants_only(e))
    if t is ast.Call:
        return not e.args and not e.keywords and ctx.mod.resolve(e.func) in _CONTAINER_CALLS or \
            type(e.func) is ast.Name and e.func.id in ("set", "frozenset") and len(e.args) == 1 and \
            not (lookup and _constants_only(e.args[0]))
    if t is not ast.Name:
        return False
    name = e.id
    values = local_values(ctx, name)
    if values is not None:
        return all(v is not None and _container_value(v) and not (lookup and _constants_only(v)) for v in values)
    if is_parameter(ctx, name) or name in ctx.env:
        return False
    const = _module_containers(ctx.mod).get(name)
    return const is not None and not (lookup and const)


def _container_value(v: ast.AST) -> bool:
    return type(v) in _CONTAINER_NODES or type(v) is ast.Call and type(v.func) is ast.Name and \
        v.func.id in _CONTAINER_CALLS


def _constant(e: ast.AST) -> bool:
    t = type(e)
    return t is ast.Constant or t is ast.Tuple and all(_constant(x) for x in e.elts) or \
        t is ast.UnaryOp and type(e.operand) is ast.Constant


def _constants_only(v: ast.AST) -> bool:
    """A non-empty display whose elements (a set) or keys (a dict) are all literals."""
    t = type(v)
    if t in (ast.Set, ast.Tuple, ast.List):
        return bool(v.elts) and all(_constant(x) for x in v.elts)
    if t is ast.Dict:
        return bool(v.keys) and all(k is not None and _constant(k) for k in v.keys)
    return False


def _module_containers(mod) -> dict[str, bool]:
    """Module-level names bound only to a set or dict (`_SUPPORTED = {224, 384}`) -> whether it
    holds constants only; once per file."""
    memo = mod.__dict__.get("_ptc307_containers")
    if memo is None:
        seen: dict[str, tuple[bool, bool]] = {}
        for st in mod.tree.body:
            targets = st.targets if type(st) is ast.Assign else [st.target] if type(st) is ast.AnnAssign \
                and st.value is not None else ()
            for tg in targets:
                if type(tg) is ast.Name:
                    ok, const = seen.get(tg.id, (True, True))
                    seen[tg.id] = (ok and _container_value(st.value), const and _constants_only(st.value))
        memo = mod.__dict__["_ptc307_containers"] = {n: const for n, (ok, const) in seen.items() if ok}
    return memo


def _sized(ctx, e: ast.AST) -> bool:
    if isinstance(e, (ast.Tuple, ast.List)):
        return any(ctx.kind(x) == SIZE for x in e.elts)
    return ctx.kind(e) in (SIZE, SIZES)


def _pins_a_size(ctx, test: ast.AST) -> bool:
    """`H == 224` / `W == self.img_size[1]`: an equality of a size itself (not `H % p == 0`)."""
    return type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.Eq and \
        any(type(o) is not ast.BinOp and (ctx.kind(o) == SIZE or pending(ctx, o, "size") is not None)
            for o in (test.left, test.comparators[0]))


def _size_args(ctx, node: ast.Call, args: tuple[tuple[int, str], ...]):
    """(argument, keyword, None) of the first argument in `args` that is a size; else
    (argument, keyword, needs) of the first that is one if a parameter is (pt2bot/analysis/sizeargs.py)."""
    given = [(a, kw) for pos, kw in args if (a := _arg(node, pos, kw)) is not None]
    for a, kw in given:
        if _sized(ctx, a):
            yield a, kw, None
            return
    for a, kw in given:
        needs = pending(ctx, a, "sized")
        if needs is not None:
            yield a, kw, needs
            return


def _arg(node: ast.Call, pos: int, kw: str) -> ast.AST | None:
    for k in node.keywords:
        if k.arg == kw:
            return k.value
    if pos < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[:pos + 1]):
        return node.args[pos]
    return None


def formatted_size(ctx, node: ast.JoinedStr) -> tuple[ast.FormattedValue | None, tuple | None]:
    """(the part, needs) of an f-string that formats a tensor size, needs None for a size here and
    a pending need for a size through a parameter (pt2bot/analysis/sizeargs.py); (None, None) if none."""
    # dynamo keeps a lone `f"{n}"` lazy; text around it (BUILD_STRING) makes it format the
    # value. A format spec (`{n:d}`) is left out: torch 2.13/2.14 fail to compile it
    # (InternalTorchDynamoError), which is not what this rule says.
    if not any(type(v) is ast.Constant and v.value for v in node.values):
        return None, None
    values = [v for v in node.values if type(v) is ast.FormattedValue and v.format_spec is None]
    hit = next((v for v in values if ctx.kind(v.value) == SIZE), None)
    if hit is not None:
        return hit, None
    return next(((v, n) for v in values if (n := pending(ctx, v.value, "size")) is not None), (None, None))


# f-strings handed straight to a call that breaks the graph (`print`, a logging call): the
# call's own finding (PTC105/PTC106, which run on the call before its arguments are walked)
# names the size, so the line gets one comment. Measured on torch 2.13.0+cpu: dynamo builds
# the f-string before the call breaks, so `logger.info(f"rows {x.shape[0]}")` compiles the frame
# once per size (tests/test_rules_fstring_message.py); guarding or removing the call fixes both.
_CONSUMED = "_ptc307_consumed"


def break_message_sizes(ctx, call: ast.Call) -> str:
    """For a graph-breaking call that is reported: take its f-string arguments off PTC307 and
    return the clause its message adds where one formats a tensor size on this path."""
    clause = ""
    for a in (*call.args, *(k.value for k in call.keywords)):
        if type(a) is not ast.JoinedStr:
            continue
        ctx.__dict__.setdefault(_CONSUMED, set()).add(id(a))
        if not clause and not ctx.message_only and id(a) not in ctx.__dict__.get("_ptc307_pinned", ()):
            hit, needs = formatted_size(ctx, a)
            if hit is not None and needs is None:
                clause = (f"; its f-string formats the tensor size `{ast.unparse(hit.value)}`, which "
                          "specialises it too (each size compiles again)")
    return clause


class SizeSpecialised(Rule):
    """## What it does
    Flags a tensor size (`x.shape[i]`, `n = x.size(0)`, arithmetic on them) handed to Python
    code that needs its value: a factory argument that fixes the output's length
    (`torch.linspace(a, b, n)`'s `steps`, `torch.tril_indices(n, n)`, window lengths,
    `torch.as_tensor(n)`, `F.one_hot(t, n)`, `torch.histc(bins=n)`, adaptive pooling
    `output_size`, pooling `kernel_size`, `x.chunk(n)`, `x.unfold(d, n, s)`), a `math` function
    dynamo computes in Python (`math.copysign`, `math.log`, `math.exp`, `math.pow`, ...), and an
    f-string with text that formats the size on the compiled path (`_assert(c, f"H ({H}) ...")`),
    and a size hashed: put in a set (`{h, w}`, `{tuple(t.shape[-2:]) for t in xs}`,
    `set(x.shape)`, `seen.add(h)`, `hash(n)`) or used as a dict key (`{h: v}`, `d[h] = v`, and
    `d[h]`, `d.get(h)`, `h in s` where the set or dict is not one of constants only).
    A size is followed into a helper's parameter when a compiled caller passes one there
    (`warp(x, (h, w))` calling `h_out, w_out = dsize; torch.linspace(-1, 1, w_out)`, also
    across files); the message names that caller.

    ## Why is this bad?
    Under dynamic shapes the size is a symbol; these uses read its value, so dynamo specialises
    it: the graph holds for that size only, other sizes compile again, and `torch.export` with
    the dim dynamic fails with a constraint violation. Measured with dynamo on torch 2.13 (and
    2.14 for the f-strings, `linspace` and `math.copysign`/`math.log`): one compile per size with
    these, one compile in all with their symbolic neighbours, which are not flagged
    (`torch.arange(n)`, `torch.zeros(n)`, `torch.full((n,), v)`, `torch.tensor(n)`,
    `F.interpolate(size=n)`, `x.split(n)`, `math.floor`/`ceil`/`trunc`, `int(n)`, a
    `"{}".format(n)` and an f-string of the size alone are kept symbolic; `math.sqrt`/`log2`/
    `sin` too under torch.compile, though `torch.export` specialises any float computed from a
    size). `math.isfinite`,
    `isnan`, `isinf`, `isqrt`, `factorial`, `gcd`, `comb`, `perm`, `ldexp` also break the graph.
    Dynamo hashes a size by its value (one compile per size on torch 2.13 and 2.14; non-strict
    `torch.export` raises `unhashable type: non-nested SymInt`); `h in (3, 5)` or a list compares
    element by element and keeps it symbolic under torch.compile, a size as a dict value is not
    hashed. A lookup in a set or dict of constants (`x.shape[1] in {1, 3}`) specialises too but is
    left out, like the equality tests of PTC301: it nearly always checks a dim that does not vary.
    An f-string is not flagged where it is built only on failure: in a `raise`, an `assert`'s
    message, or a lambda (`torch._check(c, lambda: f"...")`). Handed to `print` or a logging
    call it is said in that call's finding (PTC105/PTC106: one comment for the line; guarding
    the call fixes both). An f-string specialises under torch.compile and strict
    `torch.export`; non-strict export (the default) keeps the dim dynamic. `len(x)` is the
    reverse: torch.compile and strict export trace it as dim 0 (one compile for every size on
    torch 2.13 and 2.14.1), but non-strict export, which runs the Python, gets a Python int from
    `Tensor.__len__` and fails with dim 0 dynamic ("specialized it to be a constant"), where
    `x.shape[0]` exports (V-JEPA's attentive pooler, `self.query_tokens.repeat(len(x), 1, 1)`).
    It is not flagged: on the real-code benchmark most `len()` of a tensor are of one whose
    size is fixed (`len(bin_boundaries)`) or data-dependent (`len(torch.unique(t))`), where no
    dynamic dim is pinned (108 findings, s66); only export measures which one is.

    Fix offered for an export target of kind `constraint_violation` (export pinned a dim at the
    line; no finding needed), on each `len(...)` of its line (not safe: run and compared before
    it is posted; a 0-d tensor raises IndexError there instead of TypeError): `x.shape[0]`. The
    proof refuses it where the argument is not a tensor (a list, a tuple).

    ## Example
    ```python
    def forward(self, x):
        n = x.shape[0]
        _assert(n % 2 == 0, f"size ({n}) must be even")
        return x * torch.linspace(0.0, 1.0, n)[:, None]
    ```

    ## Use instead
    ```python
    def forward(self, x):
        n = x.shape[0]
        assert n % 2 == 0, f"size ({n}) must be even"     # the message is built only on failure
        return x * (torch.arange(n, dtype=x.dtype) / (n - 1))[:, None]
    ```
    """

    code = "PTC307"
    name = "size-specialised"
    summary = "a tensor size passed where Python needs its value (specialises the dim)"
    severity = "warning"
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_dynamic_shapes.html"
    node_types = (ast.Call, ast.JoinedStr, ast.Expr, ast.Subscript, ast.Compare, *_CONTAINER_NODES)
    call_keys = frozenset({*_FACTORY_ARGS, *_MATH, *("." + m for m in (*_METHOD_ARGS, *_HASH_METHODS)),
                           *_HASH_FUNCS})
    # `len(x)` where export pins dim 0 (no finding says so: see the docstring)
    export_kinds = ("constraint_violation",)

    @classmethod
    def fixes(cls, finding, source, tree):
        # `len(x)` of a tensor: `x.shape[0]`, which non-strict export keeps symbolic
        node = next((n for n in ast.walk(tree) if isinstance(n, ast.Call)
                     and (n.lineno, n.col_offset) == (finding.line, finding.col)
                     and isinstance(n.func, ast.Name) and n.func.id == "len"
                     and len(n.args) == 1 and not n.keywords), None)
        if node is None:
            return []
        lines = source_lines(source)
        arg = node.args[0]
        text = segment(lines, arg)
        if "\n" in text:
            return []
        if not isinstance(arg, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            text = f"({text})"
        first, last = node.lineno, node.end_lineno or node.lineno
        new = replace_spans(lines, first, last, [(*node_span(node), f"{text}.shape[0]")])
        return [Candidate(code=cls.code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                          title=f"read the size from the tensor, `{text}.shape[0]`, which export keeps symbolic",
                          safe=False)]

    def check(self, ctx, node):
        t = type(node)
        if t is ast.JoinedStr:
            self._fstring(ctx, node)
            return
        if t is ast.Subscript:
            # `d[h]`, `d[h] = v` of a dict: only a size known here (subscripts are many; the
            # container is looked at only then)
            sl = node.slice
            if type(node.value) in _SUBSCRIPTED and type(sl) in _KEYS and not ctx.message_only and \
                    _hashed_size(ctx, sl, follow=False)[0] is not None and \
                    _is_container(ctx, node.value, lookup=type(node.ctx) is ast.Load):
                self._hashed(ctx, sl, "as a dict key", None)
            return
        if t is ast.Compare:
            if isinstance(node.ops[0], (ast.In, ast.NotIn)) and len(node.ops) == 1 and not ctx.message_only:
                part, needs = _hashed_size(ctx, node.left)
                if part is not None and _is_container(ctx, node.comparators[0], lookup=True):
                    self._hashed(ctx, node.left, "tested with `in` against a set or dict", needs)
            return
        if t in _CONTAINER_NODES:
            if not ctx.message_only:
                self._container(ctx, node)
            return
        if t is ast.Expr:
            # `_assert(H == self.img_size[0], f"height ({H}) ...")`: the check admits one size
            # (every other raises), so the message costs no compile a working call makes
            # (timm patch_embed.py:124, swin_transformer_v2_cr, crossvit, tnt)
            v = node.value
            if type(v) is ast.Call and v.args and _pins_a_size(ctx, v.args[0]):
                pinned = ctx.__dict__.setdefault("_ptc307_pinned", set())
                pinned.update(id(a) for a in (*v.args[1:], *(k.value for k in v.keywords)) if type(a) is ast.JoinedStr)
            return
        target = ctx.call_target
        args = _FACTORY_ARGS.get(target or "")
        if args is not None:
            for a, kw, needs in _size_args(ctx, node, args):
                ctx.report(self.code, a, f"a tensor size as `{target.rpartition('.')[2]}`'s `{kw}` is "
                           "specialised (dynamo needs its value: other sizes compile again, export cannot "
                           f"keep the dim dynamic); {_KEEP}", needs=needs)
                return
            return
        if target in _MATH:
            sized = any(_sized(ctx, a) for a in node.args)
            # else a size through a parameter: pending on a caller passing one (pt2bot/analysis/sizeargs.py)
            needs = None if sized else next(filter(None, (pending(ctx, a, "size") for a in node.args)), None)
            if sized or needs is not None:
                fn = target.rpartition(".")[2]
                also = " and breaks the graph" if fn in _MATH_BREAK else ""
                ctx.report(self.code, node, f"`{target}` of a tensor size computes in Python: it specialises "
                           f"the size{also} (other sizes compile again, export cannot keep the dim dynamic); "
                           f"use a symbolic alternative (`math.floor`/`ceil`/`sqrt`, torch ops on a tensor) "
                           f"or {_KEEP.replace('keep the size symbolic: ', '')}", needs=needs)
            return
        f = node.func
        if target in _HASH_FUNCS and len(node.args) == 1 and not node.keywords and not ctx.message_only:
            a = node.args[0]
            if target == "hash" or type(a) in (ast.Tuple, ast.List):
                for x in ([a] if target == "hash" else a.elts):
                    part, needs = _hashed_size(ctx, x)
                    if part is not None:
                        self._hashed(ctx, part, f"in `{target}()`'s argument", needs)
                        return
            else:        # `set(x.shape)`, `set(sizes)`: each element is hashed
                needs = None if ctx.kind(a) in (SIZES, SHAPE) else pending(ctx, a, "sized")
                if needs is not None or ctx.kind(a) in (SIZES, SHAPE):
                    self._hashed(ctx, a, f"in `{target}()`'s argument", needs)
            return
        if type(f) is ast.Attribute and f.attr in _HASH_METHODS:
            if node.args and not ctx.message_only and \
                    _is_container(ctx, f.value, lookup=f.attr in _LOOKUP_METHODS):
                part, needs = _hashed_size(ctx, node.args[0])
                if part is not None:
                    self._hashed(ctx, part, "added to a set" if f.attr == "add" else f"as the key of `.{f.attr}()`", needs)
            return
        if isinstance(f, ast.Attribute) and f.attr in _METHOD_ARGS and ctx.kind(f.value) in TENSORISH + (PARAM,):
            for a, kw, needs in _size_args(ctx, node, _METHOD_ARGS[f.attr]):
                ctx.report(self.code, a, f"a tensor size as `.{f.attr}()`'s `{kw}` is specialised (dynamo "
                           "needs its value: other sizes compile again, export cannot keep the dim "
                           f"dynamic); {_KEEP}", needs=needs)
                return

    def _container(self, ctx, node: ast.AST) -> None:
        t = type(node)
        if t is ast.Set:
            parts, what = node.elts, "as a set element"
        elif t is ast.Dict:
            parts, what = [k for k in node.keys if k is not None], "as a dict key"
        else:
            # a comprehension: its element with the kinds its loops bind (the walk assigns them
            # after the rules have seen the node: pt2bot/analysis/walk.py Walker._comp)
            saved = ctx.env
            ctx.env = dict(saved)
            try:
                for g in node.generators:
                    ctx.assign(g.target, ctx.iter_kind(g.iter))
                part, needs = _hashed_size(ctx, node.elt if t is ast.SetComp else node.key)
            finally:
                ctx.env = saved
            if part is not None:
                self._hashed(ctx, part, "as a set element" if t is ast.SetComp else "as a dict key", needs)
            return
        for p in parts:
            part, needs = _hashed_size(ctx, p)
            if part is not None:
                self._hashed(ctx, part, what, needs)
                return

    def _hashed(self, ctx, part: ast.AST, what: str, needs: tuple | None) -> None:
        ctx.report(self.code, part, f"a tensor size {what} is hashed, which specialises it (dynamo hashes "
                   "its value: other sizes compile again, export cannot keep the dim dynamic); compare sizes "
                   "with `==` (a list, `a == b`) instead of putting them in a set or dict, or mark the dim "
                   "static (`torch._dynamo.mark_static`) if it does not vary", needs=needs)

    def _fstring(self, ctx, node: ast.JoinedStr) -> None:
        if ctx.message_only or id(node) in ctx.__dict__.get("_ptc307_pinned", ()) \
                or id(node) in ctx.__dict__.get(_CONSUMED, ()):
            return
        hit, needs = formatted_size(ctx, node)
        if hit is not None:
            ctx.report(self.code, node, f"the f-string formats the tensor size `{ast.unparse(hit.value)}` on "
                       "every call, which specialises it (torch.compile compiles each size again, strict "
                       "torch.export cannot keep the dim dynamic); build the message only on failure "
                       "(`assert cond, f\"...\"`, `torch._check(cond, lambda: f\"...\")`) or leave the size "
                       "out of it", needs=needs)
