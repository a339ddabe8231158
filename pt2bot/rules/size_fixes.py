"""The recipes for a tensor where Python needs a number, when the number is a size or a fill
value (PTC104, PTC101; also tried at a break dynamo records as GB0033, "Data dependent
operator", where no finding flags the line).

Sizes through a tensor. `torch.prod(torch.tensor(x.shape[1:]))` (also `torch.tensor(S).prod()`,
`sum`, `max`/`amax`, `min`/`amin`) is a 0-d tensor made of Python sizes; used as a size
(`x.view(n, r)`, `torch.zeros(r)`) or read back (`int(...)`, `.item()`) dynamo must read its
value, which it does not know while tracing: GB0033 (`aten._local_scalar_dense`; measured on
torch 2.13). The same number as a Python int from the sizes: `x.shape[1:].numel()` (a
`torch.Size` has `numel`), `sum(S)`, `max(S)`, `min(S)`; for a list of sizes `[a, b]`,
`a * b`, `a + b`. numpy's reductions of sizes, `np.prod(x.shape[1:])` and
`np.array(S).prod()`, are tensors to dynamo too (it traces numpy into torch ops): `range()` of
one breaks (GB0059 on torch 2.13), `int()` of one (GB0208 or GB0033), an `if` on one (GB0170);
they get the same Python int (and `int(np.prod(S))` of an S not known to be sizes, a
parameter, `math.prod(S)` or a loop over S: `numpy_product_fixes`, which also rewrites the
products `n = np.prod(S)` made at the top of the function and read as sizes by the finding's
statement). The edit is where the tensor is made: in the finding's statement
(of an `if`, `while` or `for`, its header's lines only), or in the one earlier statement that assigns it to a name the finding's statement passes to a call,
when no read of that name uses it as a tensor (`r.item()`, `r[0]`). Where the name is the one
size of a `view`/`reshape` right after it that the others do not fix (no `-1` among them),
a second candidate drops the assignment and writes `-1` there, as the maintainers of mace did;
it is tried second because `-1` cannot be inferred when another dim is 0.

A fill value. `x.new_full(size, t)` and `torch.full_like(x, t)` read a tensor fill value back
(GB0033); `x.new_empty(size).fill_(t)` and `torch.empty_like(x).fill_(t)` make the same tensor
with the fill kept in the graph (`fill_` takes a 0-d tensor; the other arguments are kept as
they were). And `v = t.item()` whose later reads are arithmetic or such fill values, in the
lines up to its last read: one candidate from the `.item()` to that read, the tensor kept and
each fill rewritten (a `.item()` dropped alone would only move the break to the fill).

None of these is safe by construction: an int where a 0-d int64 tensor was can change a later
division's dtype, and `numel` is a `torch.Size` method (a numpy array's shape has none); the
candidates are run and compared before they are posted.
"""
from __future__ import annotations

import ast
import dataclasses
from collections.abc import Collection

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import (enclosing_function, finding_statement, function_binds, indent_unit, indentation,
                                module_names, node_span, owns_lines, parents_of, replace_spans,
                                replace_statement, segment, statement_at, with_replaced)
from pt2bot.rules.scalar_fixes import DETACHED, INT_DTYPES, arith_only

# Methods and attributes of a tensor that are Python ints: sizes dynamo knows while tracing.
_SIZE_CALLS = frozenset({"dim", "size", "numel", "ndimension"})


def int_valued(e: ast.AST, fn: ast.AST, depth: int = 0) -> bool:
    """`e` is a Python int whatever the input: an int literal, `len(...)`, a size (`x.shape[i]`,
    `x.ndim`, `x.size(i)`, `x.dim()`), integer arithmetic (`+ - * // %`) of those, a local
    the function assigns once from one of them or unpacks once from sizes (`b, h, w =
    x.shape`), or a parameter annotated `int`."""
    if depth > 8:
        return False
    t = type(e)
    if t is ast.Constant:
        return type(e.value) is int
    if t is ast.UnaryOp:
        return isinstance(e.op, (ast.USub, ast.UAdd)) and int_valued(e.operand, fn, depth + 1)
    if t is ast.BinOp:
        return isinstance(e.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)) and \
            int_valued(e.left, fn, depth + 1) and int_valued(e.right, fn, depth + 1)
    if t is ast.Call:
        f = e.func
        if type(f) is ast.Name:
            return f.id == "len" and len(e.args) == 1 and not e.keywords
        return type(f) is ast.Attribute and f.attr in _SIZE_CALLS and \
            (f.attr != "size" or len(e.args) == 1 and not e.keywords)
    if t is ast.Attribute:
        return e.attr == "ndim"
    if t is ast.Subscript:
        return type(e.value) is ast.Attribute and e.value.attr == "shape" and type(e.slice) is not ast.Slice
    if t is ast.Name:
        if _unpacked_size(fn, e.id):
            return True
        one = _assigned_once(fn, e.id)
        if one is False:
            args = fn.args
            for a in args.posonlyargs + args.args + args.kwonlyargs:
                if a.arg == e.id:
                    return type(a.annotation) is ast.Name and a.annotation.id == "int"
            return False
        value = one.value if one is not None else _paired_value(fn, e.id)
        return value is not None and int_valued(value, fn, depth + 1)
    return False


def _assigned_once(fn: ast.AST, name: str) -> ast.Assign | None | bool:
    """The one `name = ...` of `fn` (None when `name` is bound otherwise or more than once;
    False when `fn` never binds it)."""
    bound = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name and not isinstance(n.ctx, ast.Load)]
    if not bound:
        return False
    if len(bound) != 1:
        return None
    return next((a for a in ast.walk(fn) if type(a) is ast.Assign and a.targets == bound), None)


def _paired_value(fn: ast.AST, name: str) -> ast.AST | None:
    """The value `name` is bound to, once, by a parallel assignment (`shape, n = x.shape[:-1],
    x.shape[-1]`: `x.shape[:-1]` for `shape`), else None."""
    bound = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name and not isinstance(n.ctx, ast.Load)]
    if len(bound) != 1:
        return None
    for a in ast.walk(fn):
        if type(a) is ast.Assign and len(a.targets) == 1 and type(a.targets[0]) is ast.Tuple \
                and type(a.value) is ast.Tuple and len(a.value.elts) == len(a.targets[0].elts) \
                and not any(type(v) is ast.Starred for v in a.targets[0].elts + a.value.elts):
            for target, value in zip(a.targets[0].elts, a.value.elts):
                if target is bound[0]:
                    return value
    return None


def _unpacked_size(fn: ast.AST, name: str) -> bool:
    """`name` is bound once, by unpacking sizes: `b, c, h, w = x.shape`, `h, w = x.shape[-2:]`."""
    bound = [n for n in ast.walk(fn) if type(n) is ast.Name and n.id == name and not isinstance(n.ctx, ast.Load)]
    if len(bound) != 1:
        return False
    return any(type(a) is ast.Assign and len(a.targets) == 1 and type(a.targets[0]) is ast.Tuple
               and any(v is bound[0] for v in a.targets[0].elts)
               and not any(type(v) is ast.Starred for v in a.targets[0].elts) and _torch_size(a.value)
               for a in ast.walk(fn))


def _torch_size(e: ast.AST) -> bool:
    """`x.shape`, `x.size()`, or a slice of either: a `torch.Size`."""
    if isinstance(e, ast.Subscript) and isinstance(e.slice, ast.Slice):
        e = e.value
    if isinstance(e, ast.Attribute):
        return e.attr == "shape"
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "size" \
        and not e.args and not e.keywords


# a reduction of a tensor of sizes -> the Python that gives the same number from the sizes
_REDUCTIONS = {"prod": "prod", "sum": "sum", "max": "max", "amax": "max", "min": "min", "amin": "min"}


def _sizes_tensor(e: ast.AST, lines: list[str], fn: ast.AST, np_names: Collection[str] = ()) -> ast.AST | None:
    """`torch.tensor(S)` (dtype, if given, an integer one; a device) of sizes S, or numpy's
    `np.array(S)`: S's node, else None."""
    made = ["torch.tensor", "torch.as_tensor"] + [f"{n}.{f}" for n in np_names for f in ("array", "asarray")]
    if not (isinstance(e, ast.Call) and segment(lines, e.func) in made and len(e.args) == 1):
        return None
    for k in e.keywords:
        if k.arg == "dtype":
            if not (isinstance(k.value, ast.Attribute) and k.value.attr in INT_DTYPES):
                return None
        elif k.arg != "device":
            return None
    return _sizes(e.args[0], fn)


def _sizes(s: ast.AST, fn: ast.AST) -> ast.AST | None:
    """`s` when it is sizes: a `torch.Size` (or a name assigned one once, alone or in a
    parallel assignment: `shape, n = x.shape[:-1], x.shape[-1]`) or a list/tuple of ints; else
    None."""
    if isinstance(s, ast.Name):
        one = _assigned_once(fn, s.id)
        value = one.value if isinstance(one, ast.Assign) else _paired_value(fn, s.id)
        return s if value is not None and _torch_size(value) else None
    if _torch_size(s):
        return s
    if isinstance(s, (ast.List, ast.Tuple)) and s.elts and all(int_valued(v, fn) for v in s.elts):
        return s
    return None


def _reduction(e: ast.AST, lines: list[str], fn: ast.AST, np_names: Collection[str] = ()
               ) -> tuple[str, ast.AST] | None:
    """(the reduction's Python name, S) for `torch.prod(torch.tensor(S))` or
    `torch.tensor(S).prod()` (and `_REDUCTIONS`' others), numpy's `np.prod(S)` or
    `np.array(S).prod()`, else None."""
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.keywords
            and e.func.attr in _REDUCTIONS):
        return None
    owner = segment(lines, e.func.value)
    if owner in np_names and len(e.args) == 1:
        s = _sizes(e.args[0], fn)       # numpy reduces the sizes themselves
    else:
        if owner == "torch" and len(e.args) == 1:
            made = e.args[0]
        elif not e.args:
            made = e.func.value
        else:
            return None
        s = _sizes_tensor(made, lines, fn, np_names)
    return None if s is None else (_REDUCTIONS[e.func.attr], s)


def _atom(e: ast.AST) -> bool:
    return isinstance(e, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))


def _python_number(func: str, s: ast.AST, lines: list[str]) -> str:
    """The Python expression of the reduction `func` of sizes `s`."""
    if isinstance(s, (ast.List, ast.Tuple)):
        parts = [segment(lines, v) if _atom(v) else f"({segment(lines, v)})" for v in s.elts]
        if len(parts) == 1:
            return parts[0]
        if func in ("prod", "sum"):
            return "(" + (" * " if func == "prod" else " + ").join(parts) + ")"
        return f"{func}({', '.join(parts)})"
    text = segment(lines, s)
    return f"{text}.numel()" if func == "prod" else f"{func}({text})"


def _widen(node: ast.AST, parents: dict[int, ast.AST]) -> ast.AST:
    """The reduction with what only converts it to a Python number: `.item()` (which an int
    lacks) and `int(...)` (redundant on an int)."""
    p = parents.get(id(node))
    if isinstance(p, ast.Attribute) and p.attr == "item":
        call = parents.get(id(p))
        if isinstance(call, ast.Call) and call.func is p and not call.args and not call.keywords:
            node, p = call, parents.get(id(call))
    if isinstance(p, ast.Call) and isinstance(p.func, ast.Name) and p.func.id == "int" and p.args == [node] \
            and not p.keywords:
        node = p
    return node


def _used_as_tensor(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node`'s value has an attribute read (`r.item()`, `r.to(...)`) or is indexed (`r[0]`)."""
    p = parents.get(id(node))
    return isinstance(p, (ast.Attribute, ast.Subscript)) and p.value is node


def _size_argument(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """`node` is passed to a call (an argument, a keyword's value, or an element of a list or
    tuple that is one) or converted with `int(...)`: where a size or a number goes."""
    p = parents.get(id(node))
    if isinstance(p, (ast.List, ast.Tuple)):
        p = parents.get(id(p))
    if isinstance(p, ast.keyword):
        return True
    return isinstance(p, ast.Call) and node is not p.func


def _builtins_free(tree: ast.Module, st: ast.stmt, func: str) -> bool:
    return func == "prod" or not function_binds(tree, st, func)


def sizes_tensor_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """A tensor of sizes reduced to one number, as the Python int (the module doc)."""
    st, body, lines = finding_statement(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None:
        return []
    out: list[Candidate] = []
    parents = parents_of(st)
    np_names = [n for n in module_names(tree, "numpy") if not function_binds(tree, st, n)]
    # in the finding's own statement; of an `if`/`while`/`for`, in its header (the edit
    # replaces the header's lines only)
    header = next((getattr(st, k) for k in ("test", "iter") if isinstance(st, (ast.If, ast.While, ast.For))
                   and isinstance(getattr(st, k, None), ast.expr)), None)
    edits = []
    for n in ast.walk(header or st):
        red = _reduction(n, lines, fn, np_names)
        if red is None or not _builtins_free(tree, st, red[0]):
            continue
        whole = _widen(n, parents)
        if whole is n and _used_as_tensor(n, parents):
            continue
        edits.append((whole, _python_number(red[0], red[1], lines)))
    edits = [(w, t) for w, t in edits
             if not any(o is not w and _inside(w, o) for o, _ in edits)]   # the outermost only
    if edits:
        first, last = st.lineno, (header or st).end_lineno or st.lineno
        new = replace_spans(lines, first, last, [(*node_span(w), t) for w, t in edits])
        out.append(Candidate(code=code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                             title="compute the size as a Python int from the sizes, not through a tensor",
                             safe=False))
    # in the assignment of a name the statement passes where a size goes
    fparents = parents_of(fn)
    seen: set[str] = set()
    for n in ast.walk(st):
        if not (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)) or n.id in seen \
                or not _size_argument(n, fparents):
            continue
        seen.add(n.id)
        one = _assigned_once(fn, n.id)
        if not isinstance(one, ast.Assign) or (one.end_lineno or one.lineno) >= st.lineno \
                or not owns_lines(lines, one):
            continue
        vparents = parents_of(one)
        red = None
        for m in ast.walk(one.value):
            r = _reduction(m, lines, fn, np_names)
            if r is not None and _widen(m, vparents) is one.value:
                red = (m, r)
        if red is None or not _builtins_free(tree, one, red[1][0]):
            continue
        reads = [r for r in ast.walk(fn) if isinstance(r, ast.Name) and r.id == n.id
                 and isinstance(r.ctx, ast.Load)]
        if any(_used_as_tensor(r, fparents) for r in reads):
            continue
        number = _python_number(red[1][0], red[1][1], lines)
        out.append(replace_statement(code, finding.path, one, with_replaced(lines, one, one.value, number),
                                     f"compute `{n.id}` as a Python int from the sizes, not through a tensor",
                                     safe=False))
        inferred = _inferred_dim(n, reads, one, st, body, fparents)
        if inferred is not None:
            between = lines[(one.end_lineno or one.lineno):st.lineno - 1]
            new = between + replace_spans(lines, st.lineno, st.end_lineno or st.lineno,
                                          [(*node_span(n), "-1")])
            out.append(Candidate(code=code, path=finding.path, start_line=one.lineno,
                                 end_line=st.end_lineno or st.lineno, lines=tuple(new),
                                 title=f"let `{inferred}` infer the size: `-1` for `{n.id}`",
                                 safe=False, rank=1))
    return out


def numpy_product_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`int(np.prod(S))` where S is not known to be sizes (unfoldNd's
    `return int(numpy.prod(shape_tuple))`, a parameter): numpy's product is a tensor to dynamo
    (GB0033 at the `int`), Python's is not. `math.prod(S)` where the file binds `math`;
    otherwise the product as a loop over S in the lines before the statement (no import: an
    import is an edit outside the hunk). Equal where S holds numbers; the proof runs it."""
    st, _body, lines = finding_statement(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None or not isinstance(st, (ast.Return, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
        return []
    np_names = [n for n in module_names(tree, "numpy") if not function_binds(tree, st, n)]
    bound = _bound_products(st, fn, lines, np_names)
    if bound:
        return _bound_product_fixes(code, finding, tree, st, lines, bound)
    parents = parents_of(st)
    for n in ast.walk(st):
        if not (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "prod"
                and segment(lines, n.func.value) in np_names and len(n.args) == 1 and not n.keywords
                and not isinstance(n.args[0], ast.Starred) and _sizes(n.args[0], fn) is None):
            continue
        whole = _widen(n, parents)
        if whole is n:      # numpy's scalar used as it is: a Python int is another type there
            continue
        seq = segment(lines, n.args[0])
        if "\n" in seq:
            continue
        first, last = st.lineno, st.end_lineno or st.lineno
        math = next((m for m in module_names(tree, "math") if not function_binds(tree, st, m)), None)
        if math is not None:
            new = replace_spans(lines, first, last, [(*node_span(whole), f"{math}.prod({seq})")])
            return [Candidate(code=code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                              title="the product with `math.prod`, a Python int, not through numpy", safe=False)]
        var = next(v for v in ("numel", "numel_", "numel__") if not function_binds(tree, st, v))
        item = next(v for v in ("size", "size_", "size__") if not function_binds(tree, st, v) and v != var)
        indent = indentation(lines, st)
        loop = [f"{indent}{var} = 1", f"{indent}for {item} in {seq}:",
                f"{indent}{indent_unit(indent, lines)}{var} *= {item}"]
        new = loop + replace_spans(lines, first, last, [(*node_span(whole), f"int({var})")])
        return [Candidate(code=code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                          title="the product as a loop over Python numbers, not through numpy", safe=False)]
    return []


def _bound_products(st: ast.stmt, fn: ast.AST, lines: list[str], np_names: list[str]) -> list[ast.Assign]:
    """The statements `n = np.prod(S)` at the top of `fn`'s body, before `st`, each the one
    binding of its name in `fn`, where `st` reads one of those names (complextorch's
    `prod_kernel_size = np.prod(kernel_size)`, then `x.view(batch, c, prod_kernel_size, L)`):
    numpy's product is a 0-d array, a tensor to dynamo, and the size it feeds breaks the graph
    where it is read (GB0033), not where it is made. All of them, so that every line that reads
    one gets the same edit, which fixes the later reads too."""
    reads = {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    stores: dict[str, list[ast.AST]] = {}
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            stores.setdefault(n.id, []).append(n)
        elif isinstance(n, ast.arg):
            stores.setdefault(n.arg, []).append(n)
    out = []
    for s in getattr(fn, "body", ()):
        if s.lineno >= st.lineno:
            break
        if not (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)):
            continue
        name, v = s.targets[0].id, s.value
        if len(stores.get(name, ())) == 1 and isinstance(v, ast.Call) and \
                isinstance(v.func, ast.Attribute) and v.func.attr == "prod" and \
                segment(lines, v.func.value) in np_names and len(v.args) == 1 and not v.keywords and \
                not isinstance(v.args[0], ast.Starred) and "\n" not in segment(lines, v.args[0]) and \
                _sizes(v.args[0], fn) is None:    # (sizes known as such: their `numel()`, `sizes_tensor_fixes`)
            out.append(s)
    return out if any(s.targets[0].id in reads for s in out) else []   # type: ignore[attr-defined]


def _bound_product_fixes(code: str, finding, tree: ast.Module, st: ast.stmt, lines: list[str],
                         bound: list[ast.Assign]) -> list[Candidate]:
    """Each of the `bound` products as a Python int, in one edit from the first to the last
    (the lines between kept): `math.prod(S)` where the file binds `math`, else a loop over S
    into the same name (no import: an import is an edit outside the hunk). Equal where S holds
    numbers, but for an empty S, whose numpy product is the float 1.0; the proof runs it."""
    first, last = bound[0].lineno, bound[-1].end_lineno or bound[-1].lineno
    math = next((m for m in module_names(tree, "math") if not function_binds(tree, st, m)), None)
    item = next(v for v in ("size", "size_", "size__") if not function_binds(tree, st, v))
    new: list[str] = []
    at = first
    for s in bound:
        new += lines[at - 1:s.lineno - 1]
        call, name = s.value, s.targets[0].id   # type: ignore[attr-defined]
        seq = segment(lines, call.args[0])      # type: ignore[attr-defined]
        end = s.end_lineno or s.lineno
        if math is not None:
            new += replace_spans(lines, s.lineno, end, [(*node_span(call), f"{math}.prod({seq})")])
        else:
            indent = indentation(lines, s)
            # (what follows the statement on its last line, a comment, stays on the first)
            tail = lines[end - 1].encode("utf-8")[s.end_col_offset or 0:].decode("utf-8", "replace")
            new += [f"{indent}{name} = 1{tail}", f"{indent}for {item} in {seq}:",
                    f"{indent}{indent_unit(indent, lines)}{name} *= {item}"]
        at = end + 1
    names = ", ".join(f"`{s.targets[0].id}`" for s in bound)   # type: ignore[attr-defined]
    how = f"with `{math}.prod`" if math is not None else "as a loop over Python numbers"
    return [Candidate(code=code, path=finding.path, start_line=first, end_line=last, lines=tuple(new),
                      title=f"compute {names} {how}, not through numpy (dynamo makes "
                            "numpy's product a tensor, and the size it feeds breaks the graph)",
                      safe=False)]


def _inside(inner: ast.AST, outer: ast.AST) -> bool:
    return any(x is inner for x in ast.walk(outer))


def _inferred_dim(n: ast.Name, reads: list[ast.Name], one: ast.Assign, st: ast.stmt,
                  body: list[ast.stmt], parents: dict[int, ast.AST]) -> str | None:
    """`view`/`reshape` when `n` is read only once, as one of its positional sizes, in `st`,
    which follows the assignment `one` in the same block, and no other size is `-1`."""
    if len(reads) != 1 or reads[0] is not n or one not in body or body.index(st) != body.index(one) + 1:
        return None
    call = parents.get(id(n))
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("view", "reshape") and n in call.args and not call.keywords):
        return None
    for a in call.args:
        if isinstance(a, ast.Starred) or (isinstance(a, ast.UnaryOp) and isinstance(a.op, ast.USub)
                                          and isinstance(a.operand, ast.Constant) and a.operand.value == 1):
            return None
    return call.func.attr


# calls that read a tensor fill value back (GB0033) -> how the same tensor is made with `fill_`
_READS_FILL = {"new_full": ("size", "fill_value"), "full_like": ("input", "fill_value")}


def _fill_call(call: ast.AST, lines: list[str]) -> tuple[ast.AST, str] | None:
    """For `X.new_full(size, v, **kw)` / `torch.full_like(X, v, **kw)`: (v's node, the text of
    the call without its fill value: `X.new_empty(size, **kw)` / `torch.empty_like(X, **kw)`)."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in _READS_FILL) or any(isinstance(a, ast.Starred) for a in call.args) \
            or any(k.arg is None for k in call.keywords):
        return None
    first, value = _READS_FILL[call.func.attr]
    module = segment(lines, call.func.value) == "torch"
    if (call.func.attr == "full_like") != module or len(call.args) > 2:
        return None
    named = {k.arg: k.value for k in call.keywords}
    pa = list(call.args)
    made = pa[0] if pa else named.pop(first, None)
    v = pa[1] if len(pa) == 2 else named.pop(value, None)
    if made is None or v is None or first in named or value in named:
        return None
    rest = [segment(lines, made)] + [f"{k}={segment(lines, e)}" for k, e in named.items()]
    head = "torch.empty_like" if module else f"{segment(lines, call.func.value)}.new_empty"
    return v, f"{head}({', '.join(rest)})"


def _number_literal(e: ast.AST) -> bool:
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, (ast.USub, ast.UAdd)):
        e = e.operand
    return isinstance(e, ast.Constant) and type(e.value) in (int, float, bool)


def fill_value_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`X.new_full(size, t)` -> `X.new_empty(size).fill_(t)`, `torch.full_like(X, t)` ->
    `torch.empty_like(X).fill_(t)`, in the finding's statement (the module doc)."""
    st, _, lines = finding_statement(finding, source, tree)
    if st is None:
        return []
    edits = []
    for n in ast.walk(st):
        got = _fill_call(n, lines)
        if got is None or _number_literal(got[0]):
            continue
        edits.append((n, f"{got[1]}.fill_({segment(lines, got[0])})"))
    edits = [(w, t) for w, t in edits if not any(o is not w and _inside(w, o) for o, _ in edits)]
    if not edits:
        return []
    new = replace_spans(lines, st.lineno, st.end_lineno or st.lineno, [(*node_span(w), t) for w, t in edits])
    return [replace_statement(code, finding.path, st, new,
                              "keep the fill value a tensor: an empty tensor `.fill_()`ed, not `new_full`/`full_like`",
                              safe=False)]


def item_to_fill_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`v = t.item() ...` whose later reads are arithmetic or the fill value of `new_full` /
    `full_like`: one edit from the `.item()` to the last read (the module doc)."""
    st, _, lines = finding_statement(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None or not (isinstance(st, ast.Assign) and len(st.targets) == 1
                          and isinstance(st.targets[0], ast.Name)):
        return []
    call = next((n for n in ast.walk(st.value) if isinstance(n, ast.Call)
                 and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "item"
            and not call.args and not call.keywords):
        return []
    name = st.targets[0].id
    if not isinstance(_assigned_once(fn, name), ast.Assign):
        return []
    fparents = parents_of(fn)
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name
             and isinstance(n.ctx, ast.Load) and n.lineno > (st.end_lineno or st.lineno)]
    tensor = call.func.value
    text = segment(lines, tensor)
    text = text if _atom(tensor) else f"({text})"
    edits = [(*node_span(call), text)]
    last = st.end_lineno or st.lineno
    fills = 0
    for r in reads:
        if arith_only(r, fparents):
            continue
        p = fparents.get(id(r))
        consumer = fparents.get(id(p)) if isinstance(p, ast.keyword) else p
        got = _fill_call(consumer, lines)
        if got is None or got[0] is not r:
            return []
        user, _body = statement_at(tree, consumer.lineno, consumer.col_offset)
        if user is None or not owns_lines(lines, user):
            return []
        edits.append((*node_span(consumer), f"{got[1]}.fill_({name})"))
        last = max(last, user.end_lineno or user.lineno)
        fills += 1
    if not fills:
        return []
    title = f"keep the tensor: drop `.item()` and fill with `{name}` through `.fill_()`"
    detached = [(*node_span(call), f"{text}.detach()")] + edits[1:]
    plain, det = (Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=last,
                            lines=tuple(replace_spans(lines, st.lineno, last, e)), title=t, safe=False, rank=r)
                  for r, (e, t) in enumerate([(edits, title), (detached, f"{title}, detached ({DETACHED})")]))
    return [dataclasses.replace(plain, variants=(det,))]


__all__ = ["fill_value_fixes", "int_valued", "item_to_fill_fixes", "sizes_tensor_fixes"]
