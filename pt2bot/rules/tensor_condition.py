from __future__ import annotations

import ast

from pt2bot.rules.base import Rule
from pt2bot.analysis.infer import BOOL_TENSOR, NDARRAY, RANDOM, TENSOR, enumerated
from pt2bot.analysis.queries import condition_part, is_tensorish, mark_boolops, self_tensor_value
from pt2bot.rules.branch_fixes import early_return_reason, optional_value_reason, tensor_condition_fixes
from pt2bot.rules.capture_branch_fixes import capture_branch_fixes
from pt2bot.rules.check_fixes import check_fixes
from pt2bot.rules.size_fixes import sizes_tensor_fixes

_NUMPY_WHY = ("numpy in compiled code is traced into torch ops, so this is a tensor's value: data-dependent "
              "branching, a graph break on every call; compute it with Python ints (or `math`) on the sizes")


def _reads_value(ctx, test: ast.AST) -> tuple[ast.AST | None, ast.AST | None, str]:
    """The part of a condition that is a tensor's value (pt2bot/analysis/queries.py
    `reads_tensor_value`), else the first that is a numpy array's (pt2bot/analysis/numpy_calls.py)
    or a traced random number's (infer.py RANDOM), with that kind, in one pass: the kind of each
    part is computed once, not once per question."""
    other: list[tuple[ast.AST, str]] = []

    def leaf(ctx, e: ast.AST) -> ast.AST | None:
        k = ctx.kind(e)
        if k in (TENSOR, BOOL_TENSOR):
            return e
        hit = self_tensor_value(ctx, e)
        if hit is None and not other and (k == NDARRAY or k == RANDOM):
            other.append((e, k))
        return hit

    hit = condition_part(ctx, test, leaf)
    if hit is not None:
        return hit, None, TENSOR
    return (None, *other[0]) if other else (None, None, TENSOR)


_WHY = {NDARRAY: _NUMPY_WHY,
        RANDOM: "dynamo draws a number of Python's `random` before the graph runs and passes it in as a "
                "graph input, so a branch on it is data-dependent branching and breaks the graph; draw it "
                "with torch (`torch.randint`) and select with `torch.where`, or draw it outside the compiled "
                "code"}
_WHAT = {NDARRAY: "a numpy value", RANDOM: "a random number"}


class TensorCondition(Rule):
    """## What it does
    Flags Python control flow whose condition reads a tensor's *value*: `if` / `elif` /
    `while`, conditional expressions (`a if t.any() else b`), and `and` / `or` operands,
    e.g. `if x.sum() > 0:`, `if torch.any(mask):`, `while loss > eps:`; and the builtins
    `any(t)` / `all(t)` of a tensor, which take the truth value of each element
    (`KORNIA_CHECK(any(factor >= 0), ...)`).

    ## Why is this bad?
    The branch taken depends on data that exists only at run time. torch 2.13 breaks the graph
    (GB0170, "Data-dependent branching"), and `torch.export` cannot export it at all.
    Conditions on sizes are a different matter (see PTC301). `assert` on a tensor is flagged
    only where it breaks: torch 2.13 traces `assert (x > 0).all()` and `assert (x > 0).all(),
    "constant message"` as a runtime assertion without a break, but not an assert whose message
    is formatted (`f"bad {name}"`, `"...".format(...)`, `%`, a name) or whose test starts with
    `not`: those break (GB0170) as an `if` on the value does.
    Only values known to be tensors (results of torch ops and tensor methods) are considered;
    a bare parameter (`if flag:`) is not, because it may be a Python bool. numpy arrays made in
    compiled code count too: dynamo traces numpy into torch ops, so `if np.prod(x.shape) > n:` or
    `if (np.array(x.shape) % k > 0).any():` breaks the graph (GB0170) on every call, even with
    static shapes; `len(a)`, `a.ndim` and `a.shape` of an array do not. So do the numbers of
    Python's `random` that dynamo traces (`random.randint`, `random.randrange`, and `random()`,
    `uniform()`, `randint()`, `randrange()` of a `random.Random(seed)`): dynamo draws them before
    the graph runs and passes them in as graph inputs, and a branch on one breaks (GB0170).
    Values of another file count where that file says so: a helper there that surely returns a
    tensor, a tensor a submodule's class stores (`if self.codebook.initted:`). So do the
    elements a `for` takes from a tensor the module holds, `for i, is_continuous in
    enumerate(self.continuous_idx): if is_continuous:` (pytorch-tabnet's embedding layer, over a
    bool tensor set in `__init__`): there the hint is to keep the values as Python ones where
    the tensor is set (`.tolist()` in `__init__`), since the arms run different modules and no
    select fits; that edit is outside the `if`, so it stays a hint.

    ## Example
    ```python
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x
    ```

    ## Use instead
    Compute both sides and select with a mask, or use `torch.cond` for large branches:
    ```python
    def forward(self, x):
        return torch.where(x.sum() > 0, x * 2, x)
    ```
    A guard whose statement leaves ordinary values alone needs no branch at all:
    `if not torch.isfinite(h).all(): h = torch.nan_to_num(h)` is `h = torch.nan_to_num(h)`;
    under `torch.isnan(h).any()` it is not (`nan_to_num` also replaces the infs that test lets
    through): `h = torch.where(torch.isnan(h).any(), torch.nan_to_num(h), h)`.
    `torch.cond(pred, lambda: a, lambda: b, ())` keeps a large branch lazy inside the graph.

    Fixes offered (none safe: each is run and compared with the original before it is
    posted, also on the NaN / inf / empty mask / zero its condition tests for): first, for a
    test on numpy's reduction of sizes, the number computed with Python, `if
    np.prod(x.shape[2:]) > 100:` -> `if x.shape[2:].numel() > 100:` (the header's lines only;
    pt2bot/rules/size_fixes.py); the branchless
    form of a no-op guard (`nan_to_num`, clamps, masked fills, their in-place forms; `if
    m.any():` around writes of plain values through `m`, `x[m] = -1`, which change nothing
    when no entry of `m` is set: the statements, without the `if`), and one arm of an
    `if`/`else` alone, either arm, where both compute the same on the model's inputs (peft's
    `if scaling == 1:` adds `lora_B(lora_A(x))`, its `else` the same `* scaling`, which is
    exact at 1), posted only where a shape case ran the arm the edit drops and the outputs
    still equal head's (on the other cases the kept arm is what head ran); never for arms
    that set one name to different constants (`perturb = Perturb.PREV` / `Perturb.NONE`:
    equal outputs there only say the model never read it), then
    `torch.where` and `torch.cond` for an `if` with one assignment or one `return` a side (a
    missing side is the name's value before, or the `return` after the `if`; where both
    return tuples of one length, each value is selected apart, one both write alike kept as
    it is: `return torch.where(c, torch.full_like(masks, -1e4), masks), iou_pred`), each
    assignment of a block of several (`if c: a = f(a); b = g(b)`, no `else`, each name bound
    before the `if`) selected on the test computed once before the block (`taken = c`, then
    `a = torch.where(taken, f(a), a)`: a raw pair of scans rescaled when either exceeds 1), and
    `torch.where` for a conditional expression. A test of `and` / `or` / `not` becomes `&` /
    `|` / `torch.logical_not` there (`if d0 < 1e-5 or d1 < 1e-5:` -> `torch.where((d0 < 1e-5) |
    (d1 < 1e-5), ...)`) where one part of each `and` / `or` is surely a tensor: the others may
    be Python bools, which `&` / `|` with a bool tensor make a bool tensor; a bare name, or
    `not` of a part not known to be a tensor, gets no edit. A check that raises, `if (gamma < 0).any():
    raise ValueError(...)` (or an `elif` chain of them), and a check call
    `CHECK(any(t >= 0), msg)`, and an `assert` dynamo cannot trace (`assert (t >= 0).all(),
    f"bad {t}"`, `assert a == b and c == d` with one part a tensor: `else: assert ...` instead
    of the `elif`), are kept in compiled code
    (pt2bot/rules/check_fixes.py):
    ```python
    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not((gamma < 0).any()), "Gamma must be non-negative.")
    elif (gamma < 0).any():
        raise ValueError(f"Gamma must be non-negative. Got {gamma}")
    ```
    eager code is unchanged, compiled code traces one graph and still raises (a RuntimeError)
    on a value the check refuses; it is compared on negative values, zeros, 1e3 and NaN, and
    head must raise on one of them. The test is translated into a tensor (`and` -> `&`, `not`
    -> `torch.logical_not`, `any(t)` -> `t.any()`, `t.item() < v` -> `t < v`) or no edit is
    offered; the assertion's message is the original's literal text, cut after its last full
    sentence before a formatted value (else each value written `...`).

    A chain of early returns of tensors, `if bits == 0: return torch.zeros_like(x)` ...
    `return r`, becomes the statements between and one nested `torch.where(c1, a1,
    torch.where(c2, a2, r))` (a test or value that reads a name rebound below it is computed
    first, into a fresh local; `and` between comparisons is `&`). `torch.where` computes the
    code after an early return where head returned too: where the return's test compares a
    name with zero (`if step == 0: return img`, `not n`) and that code divides by it (`/`,
    `//`, `%`, `torch.div`), an integer division raises there and a float one puts NaN into the
    gradient, so 1 stands in for it, `safe_step = torch.where(step == 0,
    torch.ones_like(step), step)`, read by the code after it (torchvision's equalize), in the
    chain and in the one-`return` `torch.where` alike; in a chain, so does any operand the code
    after the return divides by, or takes the log or root of, that reads the test's names (`if
    hi - lo < 1e-6: return zeros`, then `(x - lo) / (hi - lo)`: `safe_operand =
    torch.where(hi - lo < 1e-6, torch.ones_like(hi - lo), hi - lo)`), and the return is also
    compared on zeros, which make a test with nothing special in it hold (a min equal to a max).
    A submodule call is a tensor value where `__init__` set it to a torch layer that returns one
    (`self.head(h)`, `self.head = nn.Linear(...)`). An early return before several more
    statements gets no edit (what keeps both paths is `torch.cond` over two functions, the
    rest of the function in the second: lines the pull request often did not write); the
    reason gives that form with the test and the lines. In an `if`/`else` made one `torch.where`,
    a divisor of the `else` arm that the test also finds below a bound that is not negative
    (torchdiffeq's first step, `if d0 < 1e-5 or d1 < 1e-5:` then `0.01 * d0 / d1`, both norms 0
    on an ODE that starts at 0) reads 1 where the test holds. Last, an early `break`,
    `continue` or `return` of names (`return target, None`) is taken in eager only, `if not
    torch.compiler.is_compiling() and <test>:`: right only where the exit skips work that
    changes nothing, so it is posted only where compiled runs, which do not take the exit,
    equal head's eager outputs on inputs where head takes it, one of the model's own shape
    cases among them (an injected input alone may be one on which the work does nothing).
    Not a `break` out of a loop that grows a result read after it (a sampler's `torch.cat`
    of each token) or counts its iterations (`n_iter += 1`): running on changes that result.
    An early `return` of a value the module holds (a cache read, `return
    self.cached[:n].detach()`) is such an exit too: compiled code computes the values as on a
    miss. A block of work without an `else` that cannot leave the function or loop runs
    always in compiled code, `if torch.compiler.is_compiling() or <test>:` (aimnet's padding
    mask: a `masked_fill` with a mask of all False is the identity), posted only where
    compiled runs of it equal head's eager outputs on a shape case on which head skips it; or
    it runs in eager only (torchrl's truncation of a series once it falls below 1e-7), `if not
    torch.compiler.is_compiling() and <test>:`, posted only where compiled runs that skip it
    equal head's eager outputs on inputs that enter it, a shape case among them. A block that
    only warns, logs or prints (`if (var_x < bound).any(): rank_zero_warn(...)`) under a test
    that only reads values gets the same header and is safe by construction: eager tests and
    warns as before, compiled code skips a block that computes nothing (`check --fix` applies
    it). A `while` gets no edit.

    An `and` whose other parts are Python tests (`if signed and torch.rand(()) <= 0.5: scale
    *= -1`) keeps them as an `if` around the edit of the tensor test (`if signed: scale =
    torch.where(torch.rand(()) <= 0.5, scale * -1, scale)`): the number is drawn exactly where
    head drew it. `x op= v` becomes `x = torch.where(c, x op v, x)`, not where `x` is a parameter
    (`op=` on a tensor writes into the caller's) or surely a Python number (`float(...)`,
    `.item()`: the code after it needs a number, torchvision's `F.rotate(img, magnitude)`). An
    `if`/`elif` chain that tests one value against distinct constants, one assignment to the
    same name a link (torchvision's ColorJitter, `if fn_id == 0 and b is not None: img =
    F.adjust_brightness(img, b)` `elif fn_id == 1 ...`), becomes one `img = torch.where(fn_id ==
    0, F.adjust_brightness(img, b), img)` a link, in order, under its Python test: at most one
    case applies, as in the chain (every case is computed now; not for a value that draws a
    random number or writes in place). An `if`/`else` that writes one element on each side
    (`codebooks[1] = 1` / `codebooks[1] = codebooks[0] - 32311 + 2`, the index without a call)
    writes it once, `codebooks[1] = torch.where(codebooks[0] == 2, 1, codebooks[0] - 32311 +
    2)`; without an `else` it gets no edit (the element would be written where head wrote
    nothing).

    Where a Python flag follows the tensor test in an `and` / `or` (`if mask is not None and
    mask[:, 0].sum() != mask.shape[0] and self.training: raise ...`), the flags go first, `if
    mask is not None and self.training and mask[:, 0].sum() != ...:`, each part on the line of
    the one it replaces: where the flag decides the test (`self.training` false in an eval
    model, for an `and`), the tensor test is not evaluated and nothing breaks; where it does
    not, the graph still breaks there, and the proof, which runs the model as configured,
    refuses the edit. Flags: `self.training`, a parameter annotated `bool` or defaulting to
    `True`/`False`, and `x is None`, `isinstance(...)` and the like on names and `self.`
    attributes (not `x.y is None`, which may raise where an earlier part guarded `x`). Offered
    after the edits that remove the break in every mode.
    """

    code = "PTC201"
    name = "tensor-condition"
    summary = "`if`/`while`/ternary/`and`/`or` on a tensor value (graph break)"
    gb = "GB0170"
    node_types = (ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.Call, ast.Assert)
    call_keys = frozenset({"any", "all"})

    @classmethod
    def fixes(cls, finding, source, tree):
        return (sizes_tensor_fixes(cls.code, finding, source, tree)
                + tensor_condition_fixes(cls.code, finding, source, tree)
                + check_fixes(cls.code, finding, source, tree)
                + capture_branch_fixes(cls.code, finding, source, tree))

    @classmethod
    def no_fix_reason(cls, finding, source, tree):
        return early_return_reason(finding, source, tree) or optional_value_reason(finding, source, tree)

    def check(self, ctx, node):
        if isinstance(node, ast.Call):
            self._builtin_any_all(ctx, node)
            return
        seen = ctx.__dict__.setdefault("_ptc201_tests", set())
        if isinstance(node, ast.Assert):
            self._assert(ctx, node, seen)
            return
        if isinstance(node, ast.BoolOp):
            if id(node) in seen:
                return
            # Only operands whose truth value is taken: all but the last one.
            for v in node.values[:-1]:
                hit, np_hit, k = _reads_value(ctx, v)
                if hit is not None:
                    ctx.report(self.code, hit, "`and`/`or` on a tensor takes its truth value and breaks the "
                               "graph; use `&`/`|` on bool tensors, or `torch.where`")
                    return
                if np_hit is not None:
                    ctx.report(self.code, np_hit, f"`and`/`or` on {_WHAT[k]}: {_WHY[k]}")
                    return
            return
        mark_boolops(node.test, seen)
        hit, np_hit, k = _reads_value(ctx, node.test)
        what = {ast.If: "`if`", ast.While: "`while`", ast.IfExp: "conditional expression"}[type(node)]
        if hit is None:
            if np_hit is not None:
                ctx.report(self.code, np_hit, f"{what} on {_WHAT[k]}: {_WHY[k]}")
            return
        fix = "`torch.where(cond, a, b)` or `torch.cond`" if not isinstance(node, ast.While) else \
            "a fixed number of iterations, `torch.while_loop`, or a loop outside compiled code"
        if isinstance(node, ast.If) and any(isinstance(st, ast.Raise) for st in node.body):
            # a check has no value to select: it stays a check, asserted on the tensor
            fix = ("`torch._assert_async(<the passing condition as a bool tensor>, msg)` in compiled "
                   "code (`torch.compiler.is_compiling()`), the `raise` kept for eager")
        held = _element_of_held(ctx, hit)
        if held is not None:
            # the arms usually run different modules or make different shapes: no select fits;
            # the values are the module's, set once, so Python can hold them
            ctx.report(self.code, hit, f"{what} on `{hit.id}`, an element of `{held}`, a tensor the module "
                       "holds: each element's truth value is data-dependent branching that breaks the graph "
                       f"on every call; keep the values as Python ones where `{held}` is set (`.tolist()` "
                       "in `__init__`) and loop over those")
            return
        ctx.report(self.code, hit, f"{what} on a tensor value is data-dependent branching and breaks the graph; "
                   f"use {fix}")

    def _assert(self, ctx, node: ast.Assert, seen: set[int]) -> None:
        """Dynamo turns `assert <tensor>` into a runtime assertion only when the message is
        absent or a string constant and the test is one tensor: measured on torch 2.13, a
        formatted message (f-string, `.format`, `%`, a name) or a `not` before the test breaks
        the graph (GB0170, data-dependent branching), as an `if` on the value would. `and` /
        `or` in the test are the operands' own findings (the `BoolOp` check) unless the
        message already makes the assert a break: then it is reported once, here."""
        msg = node.msg
        # an f-string without a placeholder is compiled to a constant
        literal = msg is None or (isinstance(msg, ast.Constant) and isinstance(msg.value, str)) or (
            isinstance(msg, ast.JoinedStr) and all(isinstance(v, ast.Constant) for v in msg.values))
        negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
        if literal and not negated:
            return
        mark_boolops(node.test, seen)
        hit, _np_hit, _k = _reads_value(ctx, node.test)
        if hit is None:
            return
        why = "a formatted message" if not literal else "`not` before the test"
        ctx.report(self.code, hit, f"`assert` on a tensor value with {why} is data-dependent branching and "
                   "breaks the graph (dynamo asserts a tensor in the graph only with a constant message); "
                   "use `torch._assert_async(<the condition as a bool tensor>, \"constant message\")` in "
                   "compiled code (`torch.compiler.is_compiling()`), the `assert` kept for eager")

    def _builtin_any_all(self, ctx, node: ast.Call) -> None:
        """`any(t)` / `all(t)` (the builtins) iterate a tensor and take the truth value of
        each element: dynamo breaks there (GB0170, in its own version of the builtin; the
        break is reported at the call's line). A generator (`any(v > 0 for v in xs)`) is not
        a tensor and is not flagged here."""
        f = node.func
        if not (isinstance(f, ast.Name) and len(node.args) == 1 and not node.keywords
                and f.id not in ctx.mod.imports and f.id not in ctx.mod.summary.module_names):
            return
        if is_tensorish(ctx, node.args[0]):
            ctx.report(self.code, node, f"`{f.id}()` of a tensor takes the truth value of each element: "
                       f"data-dependent branching that breaks the graph; use `t.{f.id}()`, a tensor")


def _element_of_held(ctx, test: ast.AST) -> str | None:
    """`self.mask` when `test` is a name a `for` of the function binds to the elements of
    `self.mask`, a tensor the module holds (`for i, flag in enumerate(self.mask):`)."""
    if type(test) is not ast.Name:
        return None
    for loop in ast.walk(ctx.node):
        if type(loop) is not ast.For:
            continue
        it, tg = enumerated(loop.iter, loop.target) or (loop.iter, loop.target)
        if type(tg) is ast.Name and tg.id == test.id and type(it) is ast.Attribute and ctx.self_tensor_attr(it) \
                and any(n is test for st in loop.body for n in ast.walk(st)):
            return ast.unparse(it)
    return None
