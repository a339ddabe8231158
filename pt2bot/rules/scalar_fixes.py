"""The recipes for a tensor copied to Python (`.item()`, `.tolist()`, `float(t)`, `int(t)`)
whose value only feeds tensor arithmetic: keep the tensor; and for a size read back from a
tensor of Python sizes: compute it from those sizes.

Keep the tensor. The edit is on the finding's own statement: `x * t.item()` -> `x * t`, or, for
`v = t.item()`, `v = t` when every later read of `v` in the function is an operand of
arithmetic (`x / v`, `-v`, `x *= v`) outside a condition, an index, a size or a formatted
string (in `n += t.item()` where `n` was a number literal, and in `v = t.item() - 1`, a
number before the edit, the same of every later read of `v`), or the one bound of a clamp
(`x.clamp(max=v)`) or a value of `torch.where(c, a, v)`, or a fill value that may be a 0-d tensor (`x.masked_fill(m, v)`,
`x.fill_(v)`, `x.index_fill(d, i, v)`, `torch.full(size, v)`: kept in the graph on torch 2.13,
unlike `new_full`, `full_like` and `F.pad`'s value, which read it back); there
a tensor behaves like the number (a 0-d tensor keeps the other operand's dtype), and dynamo
keeps it in the graph. For `.tolist()`, a read may also be one element (`w[0]`, `w[-1]`) that
is such an operand: the tensor's element is a 0-d tensor. `int(...)` truncates toward zero, as
`.long()` does, so `int(t.item())` / `int(t)` becomes `t.long()` (just `t` where `t` is an
integer draw or index already: `torch.randint(...)`, `.argmax()`). Not safe: a one-element
tensor of another shape broadcasts, a float64 `t` may change a result's dtype, an int64
tensor divides to float32 where Python divides to a double; the candidate is run and compared
before it is posted. A `v = t.item()` whose later reads are arithmetic or arguments of the
project's own functions (tntorch's `delta = delta.item()` then `tn.truncated_svd(M,
delta=delta)`) becomes `v = t.detach().reshape(())`: detached, as the number carried no
gradient, and 0-d as the number was (a tensor of another shape takes part in type promotion
where a number does not). Whether the callee takes a tensor where it took a number (compares
it, scales by it) only the proof shows (`_passed_on`). Where the value meets a Python float
before any tensor (`eps * t.item()`, `eps` a float literal or a parameter typed or defaulted
as one), or a name it is kept in is read into `math.*`, `round`, `int` or `float` (torchvision's
crop size, `math.sqrt(target_area * aspect_ratio)`), the kept forms are first tried as a 0-d float64 tensor, `t.double()` (`_DOUBLE`),
then as they are.

Sizes from a list. `n = int(lengths.amax().item())` where the function built
`lengths = torch.tensor(<sizes>, ...)` from a list of Python numbers (`[s.shape[0] for s in
seqs]`, a list name) and changed neither since: `n = int(max(s.shape[0] for s in seqs))`
(`max`/`amax`, `min`/`amin`, `sum` without arguments); the same number, computed where dynamo
knows it (sizes are traced as sizes). Not safe either: it is compared before it is posted.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses

from pt2bot.rules.base import Candidate
from pt2bot.rules.check_fixes import number_check_fixes
from pt2bot.rules.edits import (enclosing_function, finding_statement, function_binds, indentation, next_if_testing,
                                node_span, parameters, parents_of, replace_spans, replace_statement, segment,
                                with_replaced)

# reading a value in one of these is a Python number's job (a size, an index, a message; the
# fill value of `new_full`, `full_like` and `F.pad`, which read a tensor back: GB0033)
_SCALAR_CALLS = frozenset({"range", "int", "float", "len", "round", "str", "print", "format", "bool", "list",
                           "tuple", "enumerate", "isinstance", "min", "max", "sum", "abs", "math",
                           "new_full", "full_like", "pad"})


_CLAMPS = frozenset({"clamp", "clip", "clamp_", "clip_"})
_BUILTINS = frozenset(dir(builtins))
# modules whose functions take sizes and numbers where the project's own take what they are given
_NUMBER_MODULES = frozenset({"torch", "numpy", "np", "math", "F", "nn", "functools", "itertools", "operator",
                             "random", "builtins"})
# Calls whose fill value may be a 0-d tensor without a break (measured on torch 2.13: dynamo
# keeps `x.masked_fill(m, t)`, `x.fill_(t)`, `x.index_fill(0, i, t)` and `torch.full(size, t)`
# in the graph): method or `torch.` name -> (the fill value's position, its keyword).
# `x.new_full(size, t)`, `torch.full_like(x, t)` and `F.pad(..., value=t)` read it back (GB0033).
_FILLS = {"masked_fill": (1, "value"), "masked_fill_": (1, "value"), "fill_": (0, "value"),
          "index_fill": (2, "value"), "index_fill_": (2, "value")}
_TORCH_FILLS = {"full": (1, "fill_value"), "masked_fill": (2, "value")}


# why a second form keeps the tensor detached: `.item()` (and `float(t)`) cut the gradient, so
# where the tensor depends on trainable parameters only the detached form trains as head did
# (the proof compares the parameters' gradients and refuses the plain form there)
DETACHED = "`.item()` carried no gradient"


def _tensor_argument(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node` is an argument a torch call takes as a tensor as well as a number: the one bound
    of a clamp (`x.clamp(max=v)`, `torch.clamp(x, max=v)`: with the other bound a number, dynamo
    reads the tensor back and breaks, measured on torch 2.13), a value of
    `torch.where(c, a, b)`, or a fill value (`_FILLS`)."""
    p = parents.get(id(node))
    call = parents.get(id(p)) if isinstance(p, ast.keyword) else p
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return False
    f = call.func
    module = isinstance(f.value, ast.Name) and f.value.id == "torch"
    if f.attr == "where" and module:
        return len(call.args) == 3 and not call.keywords and node in call.args[1:]
    fill = (_TORCH_FILLS if module else _FILLS).get(f.attr)
    if fill is not None:
        pos, kw = fill
        return (isinstance(p, ast.keyword) and p.arg == kw) or \
            (len(call.args) > pos and call.args[pos] is node)
    if f.attr not in _CLAMPS:
        return False
    return _clamp_given(call) == [node]


def _clamp_given(call: ast.Call) -> list[ast.AST]:
    """The bounds a clamp call is given (`x.clamp(lo, hi)`, `torch.clamp(x, max=hi)`)."""
    module = isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and \
        call.func.value.id == "torch"
    return [k.value for k in call.keywords if k.arg in ("min", "max")] + list(call.args[1:] if module else call.args)


def arith_only(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node` is an operand of arithmetic or an argument a torch call takes as a tensor
    (`_tensor_argument`), and nothing above it needs a Python number."""
    p = parents.get(id(node))
    if _tensor_argument(node, parents):
        return True
    if not (isinstance(p, ast.BinOp) or (isinstance(p, ast.UnaryOp) and isinstance(p.op, (ast.USub, ast.UAdd)))
            or (isinstance(p, ast.AugAssign) and p.value is node)):
        return False
    child = node
    while p is not None and not isinstance(p, ast.stmt):
        if isinstance(p, (ast.JoinedStr, ast.Compare, ast.BoolOp, ast.Slice)) or \
                (isinstance(p, ast.Subscript) and p.slice is child) or \
                (isinstance(p, ast.IfExp) and p.test is child):
            return False
        if isinstance(p, ast.Call):
            f = p.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
            if name in _SCALAR_CALLS or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                         and f.value.id == "math"):
                return False
        child, p = p, parents.get(id(p))
    return not isinstance(p, (ast.If, ast.While)) or p.test is not child


# calls whose result is an integer tensor already: `int()` of one of them is `.long()`'s job done
_INTEGER_CALLS = frozenset({"randint", "randint_like", "argmax", "argmin", "long", "int", "count_nonzero",
                            "bincount", "randperm"})
# reductions of `torch.tensor(<sizes>)` and the Python builtin that gives the same number
_LIST_REDUCTIONS = {"max": "max", "amax": "max", "min": "min", "amin": "min", "sum": "sum"}
# the integer dtypes a recipe reads from `dtype=torch.<name>` (`.tolist()` of them gives Python ints)
INT_DTYPES = frozenset({"long", "int", "int64", "int32", "int16", "int8", "uint8"})


def _element_arith(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node[i]` with a constant integer `i` (`w[0]`, `w[-1]`) that is an operand of arithmetic."""
    p = parents.get(id(node))
    if not (isinstance(p, ast.Subscript) and p.value is node and isinstance(p.ctx, ast.Load)):
        return False
    i = p.slice
    if isinstance(i, ast.UnaryOp) and isinstance(i.op, ast.USub):
        i = i.operand
    return isinstance(i, ast.Constant) and type(i.value) is int and arith_only(p, parents)


def _conversion(call: ast.AST, parents: dict[int, ast.AST]) -> ast.Call | None:
    """The `float(...)` / `int(...)` whose only argument is `call`, if there is one."""
    p = parents.get(id(call))
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id in ("float", "int") \
            and p.args == [call] and not p.keywords:
        return p
    return None


def _integer_valued(node: ast.AST) -> bool:
    """A call whose result is an integer tensor (`torch.randint(...)`, `x.argmax()`)."""
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else "") in _INTEGER_CALLS


def _unchanged_between(fn: ast.AST, names: set[str], after: int, before: int) -> bool:
    """None of `names` is assigned, deleted, stored into or called a method on (`xs.append`)
    on the lines strictly between `after` and `before` (a comprehension's own variables aside)."""
    for n in ast.walk(fn):
        line = getattr(n, "lineno", 0)
        if not after < line < before:
            continue
        if isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Load):
            return False
        if isinstance(n, (ast.Attribute, ast.Subscript)) and isinstance(n.value, ast.Name) \
                and n.value.id in names and (not isinstance(n.ctx, ast.Load) or isinstance(n, ast.Attribute)):
            return False
    return True


def _finding_call(finding, source: str, tree: ast.Module) -> tuple[ast.stmt | None, list[str], ast.Call | None]:
    """The finding's statement (None unless it owns its lines), the lines, and the call the
    finding is at (None if there is none)."""
    st, _, lines = finding_statement(finding, source, tree)
    call = None if st is None else next(
        (n for n in ast.walk(st) if isinstance(n, ast.Call)
         and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    return st, lines, call


def stored_number_reason(finding, source: str, tree: ast.Module) -> str | None:
    """Why a number read back only to be kept on the module gets no edit: `self.last_losses =
    {"pixel": pix.item(), ...}`, a training log (two new users wrote it). Storing the tensor
    keeps the graph whole, but whoever reads the attribute then gets a 0-d tensor where head
    gave a float: the proof compares what the module keeps (pt2bot/smoke/verify.py
    `scalar_attributes`) and refuses it, rightly for `json.dumps`. The reason says the edit,
    and what it changes, for the author to decide."""
    st, lines, call = _finding_call(finding, source, tree)
    if st is None or call is None or not isinstance(st, ast.Assign) or len(st.targets) != 1 or \
            not isinstance(call.func, ast.Attribute) or call.func.attr != "item" or call.args:
        return None
    target = st.targets[0]
    while isinstance(target, ast.Subscript):
        target = target.value
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return None
    parents = parents_of(st)
    node: ast.AST = call
    while node is not st.value:        # the number itself, or an item of a literal record
        node = parents[id(node)]
        if not isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
            return None
    kept = segment(lines, call.func.value)
    where = segment(lines, st.targets[0])
    return (f"no edit keeps what `{where}` holds: head stores a Python number read back from the "
            f"tensor (the break); storing `{kept}.detach()` instead keeps the graph whole, but "
            f"whoever reads `{where}` then gets a 0-d tensor where head gave a float (formatting, "
            "arithmetic and loggers that take tensors read it the same; `json.dumps` does not); "
            "where its readers can take that, call `.item()` where they read it, outside the "
            "compiled code")


def sizes_from_list_fixes(code: str, finding, source: str, tree: ast.Module, what: str) -> list[Candidate]:
    """`int(lengths.amax().item())` where `lengths = torch.tensor(<Python numbers>)`: the
    builtin `max`/`min`/`sum` of those numbers (the module doc). `what` as for `keep_tensor_fixes`."""
    st, lines, call = _finding_call(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None or call is None:
        return []
    if what == "item":
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "item" and not call.args):
            return []
        reduced, outer = call.func.value, call
    elif isinstance(call.func, ast.Name) and call.func.id in ("int", "float") and len(call.args) == 1:
        reduced, outer = call.args[0], call
    else:
        return []
    if not (isinstance(reduced, ast.Call) and isinstance(reduced.func, ast.Attribute) and not reduced.args
            and not reduced.keywords and reduced.func.attr in _LIST_REDUCTIONS
            and isinstance(reduced.func.value, ast.Name)):
        return []
    name = reduced.func.value.id
    made = [s for s in ast.walk(fn) if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and any(isinstance(t, ast.Name) and t.id == name
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target]))]
    if len(made) != 1 or not isinstance(made[0], ast.Assign) or made[0].lineno >= st.lineno:
        return []
    build = made[0].value
    if not (isinstance(build, ast.Call) and segment(lines, build.func) == "torch.tensor" and len(build.args) == 1
            and all(k.arg in ("device", "dtype") for k in build.keywords)):
        return []
    values = build.args[0]
    if isinstance(values, ast.ListComp):
        listed = f"({segment(lines, values)[1:-1]})"   # the comprehension as a generator
        bound = {t.id for g in values.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
        used = {n.id for n in ast.walk(values) if isinstance(n, ast.Name)} - bound
    elif isinstance(values, (ast.Name, ast.List, ast.Tuple)):
        listed = f"({segment(lines, values)})"
        used = {n.id for n in ast.walk(values) if isinstance(n, ast.Name)}
    else:
        return []
    if not _unchanged_between(fn, used | {name}, made[0].end_lineno or made[0].lineno, st.lineno):
        return []
    dtype = next((k.value for k in build.keywords if k.arg == "dtype"), None)
    integer = isinstance(dtype, ast.Attribute) and dtype.attr in INT_DTYPES
    parents = parents_of(st)
    conv = _conversion(outer, parents) if what == "item" else outer
    func = _LIST_REDUCTIONS[reduced.func.attr]
    if function_binds(tree, st, func):
        return []   # `max` is not the builtin there
    text = f"{func}{listed}"
    if conv is not None and not (integer and segment(lines, conv.func) == "int"):
        text = f"{segment(lines, conv.func)}({text})"   # keep the conversion: the list may hold floats
    elif what == "item" and not integer and dtype is not None:
        return []   # `.item()` of a float tensor of the numbers: a float where `max` may give an int
    replaced = conv if conv is not None else outer
    return [replace_statement(code, finding.path, st, with_replaced(lines, st, replaced, text),
                              f"compute the size from the Python numbers `{name}` was made of: `{func}(...)`",
                              safe=False)]


def keep_tensor_fixes(code: str, finding, source: str, tree: ast.Module, what: str) -> list[Candidate]:
    """`what`: "item" / "tolist" (a method call at the finding) or "float" (`float(t)` or
    `int(t)`)."""
    st, lines, call = _finding_call(finding, source, tree)
    if st is None or call is None:
        return []
    parents = parents_of(st)
    if what == "float":
        if not (isinstance(call.func, ast.Name) and call.func.id in ("float", "int") and len(call.args) == 1
                and not call.keywords):
            return []
        tensor, outer, conv = call.args[0], call, call.func.id
        if isinstance(tensor, ast.Call) and isinstance(tensor.func, ast.Attribute) and \
                tensor.func.attr in ("item", "tolist") and not tensor.args:
            # `int(t.item())`: the number is a Python one, which has no `.long()`; the `.item()`
            # finding's own recipe drops both (torchkge's sampler got `t.item().long()` here)
            return []
    else:
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == what and not call.args
                and not call.keywords):
            return []
        tensor, outer, conv = call.func.value, call, ""
        wrap = _conversion(call, parents)   # `float(t.item())`, `int(t.item())`: the conversion goes too
        if wrap is not None:
            outer, conv = wrap, wrap.func.id   # type: ignore[union-attr]
    text = segment(lines, tensor)
    atom = isinstance(tensor, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    if conv == "int" and getattr(finding, "gb", None) == "GB0033":
        return []   # `int()` of a numpy value (PTC104's GB0033): an array has no `.long()`
    if conv == "int" and not _integer_valued(tensor):
        text = f"{text if atom else f'({text})'}.long()"   # truncates toward zero, as int() does
    elif not atom and isinstance(parents.get(id(outer)), (ast.BinOp, ast.UnaryOp, ast.Attribute, ast.Subscript)):
        text = f"({text})"   # `x * float(a + b)` -> `x * (a + b)`
    dropped = " and ".join(f"`{d}`" for d in ([] if what == "float" else [f".{what}()"])
                           + ([f"{conv}()"] if conv else []))
    title = f"keep the tensor: drop {dropped}" + (", truncate with `.long()` as `int()` does"
                                                   if text.endswith(".long()") else "")
    # the name the statement binds the value to, if it is one name (`v = t.item() * 2`)
    named = st.targets[0].id if isinstance(st, ast.Assign) and len(st.targets) == 1 and \
        isinstance(st.targets[0], ast.Name) else None
    # one number, not a list nor what `int()` made (likely a size): what may be kept in float64
    # where Python computed with it in double (`_DOUBLE`), or passed on as a 0-d tensor
    widen = what != "tolist" and conv != "int"
    if arith_only(outer, parents):
        # `n = 0 ... n += t.item()`: a Python number becomes a tensor, so what reads it later
        # must take one
        if isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name) and \
                _number_before(tree, st, st.target.id) and \
                not _later_reads_arith(tree, st, st.target.id, what, need_one=False):
            return []
        # `v = t.item() - 1`, `n = int(i.max()) + 1 if i.numel() else 0`: the name that held a
        # Python number holds a tensor after the edit, so every later read must take one (a
        # fill value `new_full` reads back, a size in `(n,) + x.shape[1:]`, cannot)
        if named is not None and _number_arith(outer, st.value, parents) and \
                not _later_reads_arith(tree, st, named, what, need_one=False):
            return []
        return _with_detached(code, finding, st, lines, outer, text, title,
                              double=widen and (_meets_float(outer, parents, tree, st)
                                                or (named is not None and _read_with_float(tree, st, named))))
    if named is not None and st.value is outer:
        name = named
        # read only by the test of a check right after it (`if n == 0: raise ...`): asserted
        # on the tensor in compiled code, both statements as they were in eager
        checked = number_check_fixes(code, finding, source, tree, text)
        if checked:
            return checked
        if _later_reads_arith(tree, st, name, what, need_one=True):
            return _with_detached(code, finding, st, lines, outer, text,
                                  title + f" (`{name}` only feeds tensor arithmetic)",
                                  double=widen and _read_with_float(tree, st, name))
        callees = _passed_on(tree, st, name) if widen else None
        if not callees and widen:
            selected = _kept_then_selected(code, finding, tree, st, lines, outer, text, name) or \
                _kept_then_chained(code, finding, tree, st, lines)
            if selected:
                return selected
        if callees:
            # a 0-d tensor, as the number was: a one-element tensor of another shape takes part in
            # type promotion and broadcasting where a number does not (tntorch's float64 `delta`
            # of shape [1] made its callee's float32 rank threshold a float64 one, which an
            # independent re-run found deciding a rank differently at a rounding boundary)
            return [_detached(code, finding, st, lines, outer, text,
                              f"{title}, detached ({DETACHED}) and 0-d as the number was: `{name}` is passed "
                              "on to " + ", ".join(f"`{c}`" for c in callees)
                              + ", which the proof runs with the tensor", rank=0, scalar=True)]
    if widen and isinstance(st, ast.Assign) and isinstance(st.value, ast.Tuple):
        return _kept_then_chained(code, finding, tree, st, lines)
    return []


def _kept_then_selected(code: str, finding, tree: ast.Module, st: ast.stmt, lines: list[str],
                        outer: ast.AST, text: str, name: str) -> list[Candidate]:
    """`v = t.item()` read by the test of the `if` right after it and nowhere outside that `if`
    (`peak = x.max().item()`, then `if peak > 1.0: x = x / peak`: a new user's intensity scaling,
    PTC203's own example): the two statements as one edit, the value kept a tensor, detached as
    the number was, and the `if` as PTC201's edits of a test on a tensor make it (`x =
    torch.where(peak > 1.0, x / peak, x)`, then `torch.cond`). Not safe: `torch.where` computes
    the arm head skipped, and the proof compares outputs and gradients, on guard inputs too.
    Not the edits that let compiled code decide otherwise than eager code (`is_compiling()`: the
    block run always, or the exit taken in eager only): on xitorch's conjugate gradients,
    `if max_resid_norm < best_resid: best_xk = xk_1` run always keeps the last iterate where head
    keeps the best, which the proof's converging shape cases cannot tell apart."""
    # (imported here: the branch recipes import no scalar recipe, but keep the rules' import
    # order free)
    from pt2bot.rules.branch_fixes import tensor_condition_fixes
    # (read elsewhere too, after the `if` or earlier in a loop, it may need the number)
    nxt = next_if_testing(tree, st, name)
    if nxt is None:
        return []
    kept = _detached(code, finding, st, lines, outer, text, "", rank=0)
    if len(kept.lines) != kept.end_line - kept.start_line + 1:
        return []
    patched = "\n".join(lines[:kept.start_line - 1] + list(kept.lines) + lines[kept.end_line:]) + "\n"
    try:
        ptree = ast.parse(patched)
    except SyntaxError:
        return []
    at = dataclasses.replace(finding, line=nxt.test.lineno, col=nxt.test.col_offset)
    between = tuple(lines[kept.end_line:nxt.lineno - 1])    # comments, blank lines: kept as they are
    return [dataclasses.replace(
        c, start_line=kept.start_line, lines=tuple(kept.lines) + between + c.lines, variants=(),
        title=f"keep `{name}` a tensor, detached ({DETACHED}), and {c.title}")
        for c in tensor_condition_fixes(code, at, patched, ptree)
        if c.start_line == nxt.lineno and not c.setting
        and not any("torch.compiler.is_compiling()" in line for line in c.lines)]


def _read_back(node: ast.AST) -> ast.AST | None:
    """The tensor that `node` copies to one Python float (`float(t)`, `t.item()`,
    `float(t.item())`), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float" and \
            len(node.args) == 1 and not node.keywords:
        node = node.args[0]
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "item" and not node.args and not node.keywords):
            return node
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "item" \
            and not node.args and not node.keywords:
        return node.func.value
    return None


def _kept_then_chained(code: str, finding, tree: ast.Module, st: ast.stmt,
                       lines: list[str]) -> list[Candidate]:
    """`lo, hi = x.min().item(), x.max().item()` (or `float(...)`s, or one name) in a function's
    own block, an early return further down that block on a test of those names (`if hi - lo <
    1e-6: return zeros`), and every other read of them after it an operand of arithmetic or a
    clamp's bounds (`x.clamp(lo, hi)`, both kept): the numbers kept as tensors, detached as they
    were, and the early return selected over the rest of the function with nested
    `torch.where` (the chain recipe of PTC201, which puts 1 in for a divisor the return kept
    away from zero). A window of intensities over the batch and a rescale to a range are this
    code in two held-out libraries. Not safe: `torch.where` computes the rest where head
    returned; the proof runs it on an input that takes the return (zeros make a min equal to a
    max) and compares gradients too."""
    from pt2bot.rules.branch_fixes import chain_fixes
    from pt2bot.rules.edits import statement_at
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
        return []
    target, value = st.targets[0], st.value
    if isinstance(target, ast.Name):
        pairs = [(target, value)]
    elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and \
            len(target.elts) == len(value.elts) and all(isinstance(t, ast.Name) for t in target.elts):
        pairs = list(zip(target.elts, value.elts))
    else:
        return []
    kept = [(v, _read_back(v)) for _, v in pairs]
    if any(t is None for _, t in kept):
        return []
    names = {t.id for t, _ in pairs}   # type: ignore[union-attr]
    fn = enclosing_function(tree, st)
    _, body = statement_at(tree, st.lineno, st.col_offset)
    st_end = st.end_lineno or st.lineno
    if fn is None:
        return []
    copied: list[str] = []   # the rest of the function, repeated in the block that binds the names
    if body is fn.body:
        after = body[body.index(st) + 1:]
    else:
        # `if in_range is None: lo, hi = float(x.min()), float(x.max())` / `else: lo, hi =
        # in_range`: on the other path the names are numbers, so the rest of the function is
        # repeated, with tensors, at the end of the block that makes them (complextorch's
        # rescale_intensity); the other path runs the code as it was
        blk = next((s for s in fn.body if isinstance(s, ast.If) and s.body and s.body[-1] is st), None)
        after = fn.body[fn.body.index(blk) + 1:] if blk is not None else []
        if not after or not isinstance(after[-1], ast.Return):
            return []
        outer_indent, inner_indent = indentation(lines, blk), indentation(lines, st)
        span = lines[after[0].lineno - 1:after[-1].end_lineno or after[-1].lineno]
        if not inner_indent.startswith(outer_indent) or \
                any(ln.strip() and not ln.startswith(outer_indent) for ln in span):
            return []
        copied = [inner_indent[len(outer_indent):] + ln if ln.strip() else ln for ln in span]
    exit_ = next((s for s in after if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(s))), None)
    if not (isinstance(exit_, ast.If) and not exit_.orelse and len(exit_.body) == 1 and
            isinstance(exit_.body[0], ast.Return) and
            any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(exit_.test))):
        return []
    fparents = parents_of(fn)
    start, end = exit_.test.lineno, exit_.test.end_lineno or exit_.test.lineno
    for n in (n for s in after for n in ast.walk(s)):
        if not (isinstance(n, ast.Name) and n.id in names):
            continue
        if not isinstance(n.ctx, ast.Load):
            return []   # bound again: which value a later read sees is not followed here
        if not (start <= n.lineno <= end or arith_only(n, fparents) or _clamp_bounds(n, fparents, names)):
            return []
    spans = []
    for v, t in kept:
        text = segment(lines, t)
        spans.append((*node_span(v), f"{text}.detach()" if _atom_text(text) else f"({text}).detach()"))
    new_st = replace_spans(lines, st.lineno, st_end, spans)
    if len(new_st) != st_end - st.lineno + 1:
        return []
    patched_lines = lines[:st.lineno - 1] + new_st + copied + lines[st_end:]
    try:
        ptree = ast.parse("\n".join(patched_lines) + "\n")
    except SyntaxError:
        return []
    # the exit in the patched text: where it was, or in the copy below the kept statement
    line = exit_.lineno if not copied else st_end + 1 + exit_.lineno - after[0].lineno
    col = exit_.col_offset + (len(indentation(lines, st)) - len(indentation(lines, after[0])) if copied else 0)
    pst, pbody = statement_at(ptree, line, col)
    if not isinstance(pst, ast.If):
        return []
    at = dataclasses.replace(finding, line=pst.test.lineno, col=pst.test.col_offset)
    copy_end = st_end + len(copied)
    which = " and ".join(f"`{t.id}`" for t, _ in pairs)   # type: ignore[union-attr]
    why = DETACHED if any(isinstance(v.func, ast.Attribute) for v, _ in kept) else \
        DETACHED.replace("`.item()`", "`float()`")
    title = f"keep {which} {'tensors' if len(pairs) > 1 else 'a tensor'}, detached ({why})" + \
        (", repeat the rest of the function in this block, where they are tensors (the other path "
         "runs it as it was)," if copied else ",")
    # with a copy, the edit runs to the function's end, the other path's code kept as it was:
    # it changes where this path leaves the function, so the proof compares what the function
    # returns, as for a chain, not what the kept statement binds (never reached after it now)
    fn_end = (after[-1].end_lineno or after[-1].lineno) if copied else 0
    return [dataclasses.replace(
        c, start_line=st.lineno, end_line=c.end_line if not copied else fn_end,
        lines=tuple(patched_lines[st.lineno - 1:c.start_line - 1]) + c.lines
        + tuple(patched_lines[c.end_line:copy_end + (fn_end - st_end if copied else 0)]),
        variants=(), rank=0, title=f"{title} and {c.title}")
        for c in chain_fixes(code, at, pst, pbody, ptree, patched_lines)
        if c.start_line == line and (not copied or c.end_line == copy_end)]


def _clamp_bounds(node: ast.AST, parents: dict[int, ast.AST], names: set[str]) -> bool:
    """`node` is a bound of a clamp whose bounds are all names of `names` (`x.clamp(lo, hi)`):
    with both bounds tensors dynamo keeps the clamp in the graph (measured on torch 2.13; one
    tensor bound beside a number reads it back)."""
    p = parents.get(id(node))
    call = parents.get(id(p)) if isinstance(p, ast.keyword) else p
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _CLAMPS):
        return False
    given = _clamp_given(call)
    return any(g is node for g in given) and \
        all(isinstance(g, ast.Name) and g.id in names for g in given)


# Why a kept value is first tried in float64: Python computes with the number `.item()` gave in
# double (`eps * t.item()`, then its square), where a float32 tensor kept in its place rounds
# each step to float32, and a threshold at a rounding boundary then decides otherwise (tntorch's
# SVD rank, found by an independent re-run). A 0-d float64 tensor computes those steps as Python
# did, and where it meets a tensor of more dimensions it takes that tensor's dtype, as the
# number did; it differs where it meets another 0-d tensor (float64 wins there), which the
# proof sees in the outputs' dtypes.
_DOUBLE = "Python computed with it in double"


def _python_float(node: ast.AST, fn: ast.AST | None) -> bool:
    """`node` is a Python float: a float literal, a `float(...)` call, or a name of `fn` that is
    a parameter annotated `float` (`Optional[float]`, `float | None`) or with a float literal
    default, or that `fn` sets to float literals only."""
    if isinstance(node, ast.Constant):
        return type(node.value) is float
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id == "float"
    if not isinstance(node, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    for a, default in parameters(fn):
        if a.arg == node.id:
            ann = a.annotation
            named = {n.id for n in ast.walk(ann) if isinstance(n, ast.Name)} if ann is not None else set()
            return "float" in named or (isinstance(default, ast.Constant) and type(default.value) is float)
    sets = [a.value for a in ast.walk(fn) if isinstance(a, (ast.Assign, ast.AnnAssign, ast.AugAssign))
            and any(isinstance(t, ast.Name) and t.id == node.id
                    for t in (a.targets if isinstance(a, ast.Assign) else [a.target]))]
    return bool(sets) and all(isinstance(v, ast.Constant) and type(v.value) is float for v in sets)


def _meets_float(node: ast.AST, parents: dict[int, ast.AST], tree: ast.Module, st: ast.stmt) -> bool:
    """`node`, through a sign, is an operand of arithmetic whose other operand is a Python
    float (`eps * t.item()`): where head computed in double."""
    p = parents.get(id(node))
    while isinstance(p, ast.UnaryOp) and isinstance(p.op, (ast.USub, ast.UAdd)):
        node, p = p, parents.get(id(p))
    if not isinstance(p, ast.BinOp):
        return False
    return _python_float(p.right if p.left is node else p.left, enclosing_function(tree, st))


def _in_python_math(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node`, through arithmetic, is an argument of `math.*`, `float`, `round` or `int`:
    Python computes there in double (torchvision's `math.sqrt(target_area * aspect_ratio)`,
    where a float32 tensor kept as `target_area` rounds the product to float32 first)."""
    p = parents.get(id(node))
    while isinstance(p, (ast.BinOp, ast.UnaryOp)):
        p = parents.get(id(p))
    if not isinstance(p, ast.Call):
        return False
    f = p.func
    return (isinstance(f, ast.Name) and f.id in ("float", "round", "int")) or \
        (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "math")


def _read_with_float(tree: ast.Module, st: ast.stmt, name: str) -> bool:
    """A read of `name` after `st` in its function meets a Python float (`_meets_float`) or
    ends in Python's own arithmetic (`_in_python_math`)."""
    fn = enclosing_function(tree, st)
    if fn is None:
        return False
    fparents = parents_of(fn)
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               and n.lineno > (st.end_lineno or st.lineno)
               and (_meets_float(n, fparents, tree, st) or _in_python_math(n, fparents))
               for n in ast.walk(fn))


def _passed_on(tree: ast.Module, st: ast.stmt, name: str) -> list[str] | None:
    """The functions `name` is passed to after `st` (`delta = delta.item()` then
    `truncated_svd(M, delta=delta)`: tntorch's rounding), where every later read is an operand
    of arithmetic or an argument of a call to the project's own code: a function by its name
    that is no builtin, or a method of `self` or of an imported module that is not torch,
    numpy or math. Whether the callee takes a tensor there (it compares it, scales by it; or
    makes a size or a condition of it, a new break) only running it shows, so this is an edit
    the proof alone can post. None where a read is neither."""
    fn = enclosing_function(tree, st)
    if fn is None:
        return None
    fparents = parents_of(fn)
    modules = {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))
               for a in n.names} - _NUMBER_MODULES
    callees: list[str] = []
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                and n.lineno > (st.end_lineno or st.lineno)) or arith_only(n, fparents):
            continue
        p = fparents.get(id(n))
        call = fparents.get(id(p)) if isinstance(p, ast.keyword) else p
        if not isinstance(call, ast.Call) or call.func is n or (p is call and n not in call.args):
            return None
        f = call.func
        if isinstance(f, ast.Name):
            own = f.id not in _BUILTINS and f.id not in _SCALAR_CALLS
        else:
            own = isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                (f.value.id == "self" or f.value.id in modules) and f.attr not in _SCALAR_CALLS
        if not own:
            return None
        text = f.id if isinstance(f, ast.Name) else f"{f.value.id}.{f.attr}"   # type: ignore[attr-defined]
        if text not in callees:
            callees.append(text)
    return callees or None


def _with_detached(code: str, finding, st: ast.stmt, lines: list[str], outer: ast.AST, text: str,
                   title: str, *, double: bool = False) -> list[Candidate]:
    """The tensor kept as it is, then (rank 1) detached as the Python number was: the form the
    proof posts where head's gradients do not flow through the value. An integer (`.long()`)
    carries no gradient either way. `double`: the value meets a Python float before any
    tensor, so those two forms are first tried in float64 (`_DOUBLE`), and the float32 ones
    come after them (ranks 2 and 3) for where a float64 result reaches what the model returns."""
    plain = replace_statement(code, finding.path, st, with_replaced(lines, st, outer, text), title, safe=False)
    if text.endswith(".long()"):
        return [plain]
    detached = _detached(code, finding, st, lines, outer, text, f"{title}, detached ({DETACHED})", rank=1)
    if not double:
        return [dataclasses.replace(plain, variants=(detached,))]
    wide = f"{text if _atom_text(text) else f'({text})'}.double()"
    first = replace_statement(code, finding.path, st, with_replaced(lines, st, outer, wide),
                              f"{title}, in float64 as the Python number was ({_DOUBLE})", safe=False)
    return [dataclasses.replace(first, variants=(
        _detached(code, finding, st, lines, outer, text,
                  f"{title}, detached ({DETACHED}) and in float64 as the Python number was", rank=1,
                  double=True),
        dataclasses.replace(plain, rank=2), dataclasses.replace(detached, rank=3)))]


def _detached(code: str, finding, st: ast.stmt, lines: list[str], outer: ast.AST, text: str, title: str, *,
              rank: int, scalar: bool = False, double: bool = False) -> Candidate:
    whole = _atom_text(text) or (text.startswith("(") and text.endswith(")") and _parses(text[1:-1]))
    det = (f"{text}.detach()" if whole else f"({text}).detach()") + (".reshape(())" if scalar else "") \
        + (".double()" if double else "")
    return replace_statement(code, finding.path, st, with_replaced(lines, st, outer, det), title, safe=False,
                             rank=rank)


def _parses(text: str) -> bool:
    """Whether `text` is an expression: for `(...)`, that its first bracket closes last (`(a +
    b)` is one bracketed expression, `(a) + (b)` is not)."""
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True


def _atom_text(text: str) -> bool:
    """Whether `text` parses as a name, attribute, call or subscript (`.detach()` binds to all
    of it without brackets)."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))


def _number_arith(node: ast.AST, value: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`value` is `node` in arithmetic with number literals only (`t.item() - 1`, `-t.item()`),
    also as an arm of a conditional expression whose other arm is one (`int(i.max()) + 1 if
    i.numel() > 0 else 0`): a Python number before the edit, a tensor after it."""
    while node is not value:
        p = parents.get(id(node))
        if isinstance(p, ast.BinOp):
            other = p.right if p.left is node else p.left
            if not (isinstance(other, ast.Constant) and type(other.value) in (int, float)):
                return False
        elif isinstance(p, ast.IfExp) and p.test is not node:
            other = p.orelse if p.body is node else p.body
            if not (isinstance(other, ast.Constant) and type(other.value) in (int, float)):
                return False
        elif not (isinstance(p, ast.UnaryOp) and isinstance(p.op, (ast.USub, ast.UAdd))):
            return False
        node = p
    return True


def _number_before(tree: ast.Module, st: ast.stmt, name: str) -> bool:
    """`name` is set to a number literal somewhere in the function of `st` (`n = 0`)."""
    fn = enclosing_function(tree, st)
    return fn is not None and any(
        isinstance(a, ast.Assign) and isinstance(a.value, ast.Constant) and type(a.value.value) in (int, float)
        and any(isinstance(t, ast.Name) and t.id == name for t in a.targets) for a in ast.walk(fn))


def _later_reads_arith(tree: ast.Module, st: ast.stmt, name: str, what: str, *, need_one: bool) -> bool:
    """Every read of `name` after `st` in its function is an operand of arithmetic (for
    `.tolist()`, also one element of it that is); `need_one`: and there is such a read."""
    fn = enclosing_function(tree, st)
    if fn is None:
        return False
    fparents = parents_of(fn)
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load) and n.lineno > (st.end_lineno or st.lineno)]
    return (bool(reads) or not need_one) and all(
        arith_only(n, fparents) or (what == "tolist" and _element_arith(n, fparents)) for n in reads)


__all__ = ["DETACHED", "INT_DTYPES", "arith_only", "keep_tensor_fixes", "sizes_from_list_fixes"]
