"""The recipe for a check on a tensor's values that raises (PTC201, PTC101, PTC104): keep the check in
compiled code, as an assertion dynamo traces, and leave eager code exactly as it was.

    if (gamma < 0.0).any():
        raise ValueError(f"Gamma must be non-negative. Got {gamma}")

becomes

    if torch.compiler.is_compiling():
        torch._assert_async(torch.logical_not((gamma < 0.0).any()), "Gamma must be non-negative.")
    elif (gamma < 0.0).any():
        raise ValueError(f"Gamma must be non-negative. Got {gamma}")

Dynamo reads `torch.compiler.is_compiling()` as True and traces only the assertion: one graph
(also under `fullgraph=True`, eager backend and inductor, measured on torch 2.13), and a value
that fails the check still stops compiled code: on CPU a RuntimeError with the message below;
on CUDA a device-side assert, which torch documents as ending the process's CUDA context
(`torch._assert_async` is not meant for errors a caller catches and recovers from). In eager
`is_compiling()` is False and the original test and raise run unchanged, with their exception
type and message. Skipping the check under compile instead deletes it from
compiled code; `torch._assert_async` alone changes the exception eager code raises.

Which code gets the edit:
- `if <test>: raise E(...)` with no `else`, and a chain of such `elif <test>: raise ...`
  (every link raises, none has an `else`): one assertion per link, in order; assignments to
  local names before the `raise` (monai's `wrong_dims = ...`, for the message) stay in the
  eager branch with it;
- `assert <test>, <message>` where dynamo cannot trace it (a formatted message, `not` before
  the test, or an `and`, which takes its first part's truth value: PTC201 says which, or
  dynamo's break where no rule knows the parts' types): `if torch.compiler.is_compiling():
  torch._assert_async(...) else: assert ...`, the message made constant as below. An `and`
  there needs one part surely a tensor, not each (a Python bool `&` a bool tensor is one), and
  its later parts may index (`grid[0] == t[0] and grid[-1] == t[-1]`): `&` evaluates them
  where head stopped at a false part, and there head raises anyway;
- `CHECK(<test>, msg)` as a statement, where the callee's name says it is a check (contains
  "check" or "assert", any case) and is not torch's (`torch._check` traces already), with at
  most a message besides the test (a string: `assert_equal(a, b)` is not a check of `a`):
  `if torch.compiler.is_compiling(): torch._assert_async(...) else: CHECK(...)`.

The asserted condition must be a tensor, so the test is translated, part by part, and the
recipe offers nothing where a part has no safe translation: `a and b` -> `a & b`, `a or b` ->
`a | b` (each part but a call bracketed: `&` binds tighter than a comparison), `not c` ->
`torch.logical_not(c)` (a raise under `not c` asserts `c` itself), `a & b` / `a | b` as written
where a side is surely a tensor (torchdiffeq's `(t0 <= t) & (t <= t1)`), `t.item() < v` -> `t < v`,
the builtins `any(t)` / `all(t)` -> `t.any()` / `t.all()` and `bool(t)` -> `t`. A part is kept only where it is a tensor for sure: `.any()` / `.all()`,
torch's boolean functions and methods (`torch.isclose`, `.isnan()`, `.eq(...)`), and a single
comparison one of whose sides is a tensor: a reduction or other tensor method, a torch call, a
`.item()` dropped, or the value the rule flagged (the finding's position). A bare name is kept
only where it is that value (torchmetrics' `check = torch.any(...)` then `if check: raise`). A
chained comparison is the `&` of its pairs (torchsde's `assert t0 <= t <= t1, f"..."` ->
`(t0 <= t) & (t <= t1)`), where its middle operands are names, attributes or constants (each is
read twice). `is` / `in`, or a size (`x.size(0) > 0`: a Python number, where
`torch.logical_not` would fail and `~` would compute -2) get no edit, with one exception: the
leading parts of a raise-check's `and` that have no tensor form, before parts that all have
one, stay Python tests, run first as head runs them, and the assertion goes under them:

    if torch.compiler.is_compiling():
        if not allow_non_binary_target:
            torch._assert_async(torch.logical_not((target.max() > 1) | (target.min() < 0)), "...")
    elif not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
        raise ValueError("`target` must contain `binary` values")

(a flag, a size, or a name that is a Python bool in one call and a tensor in another, such as
pytorch-crf's `not no_empty_seq and not no_empty_seq_bf`: where it is a tensor, the Python test
still breaks, and the proof refuses the edit for that model).

The assertion's message must be a constant string (formatting a tensor into a string breaks
the graph). It is the literal text of the original message (f-string, `.format`, `%`, `+`),
(or of the exception an `assert` gives as its message, `assert c, ValueError("...")`),
cut after the last full sentence before the first value formatted into it ("Gamma must be
non-negative. Got {gamma}" -> "Gamma must be non-negative."), or before the clause that holds
several values ("... in the range [0, 1], but got Min: %.10f Max: %.10f" -> "... in the range
[0, 1]"); with no full sentence there, each
value is written "..." and one at the end is dropped with the punctuation before it ("std
evaluated to zero after conversion to {dtype}, leading to division by zero." -> "std evaluated
to zero after conversion to ..., leading to division by zero."; "Bad value: {x}" -> "Bad
value"; but "non-finite values in {name}" -> "non-finite values in ..."). With no literal text at all
it is the exception's (or the check's) name and the test's source, e.g. "ValueError: (x <
0).any()".

A number read only for such a check (PTC101, PTC104: `num_valid = int((~mask).sum())`, then
`if num_valid == 0: raise ValueError(...)`, a new user's DETR check; `peak = x.abs().max().item()`
before `if peak > 1e4: raise ...`), the name read nowhere else: both statements go under `else:`
as they were, and compiled code asserts the test with the tensor in the name's place
(`(~mask).sum() == 0`; `int()` of a float tensor truncates first, `.long()`) (`number_check_fixes`).

Not safe: the candidate is run and compared before it is posted, with the "invalid" guard (the
proof injects negative values, zeros, 1e3, 1e6 and NaN into the function's tensor arguments,
and -1 and 0 into the first row alone of one with several
and needs head to raise on at least one, and head and the patched code to agree on every one,
the same exception type where either raises). A proof on CUDA does not run it: the compiled
guard run would fire the device-side assert on purpose and end the worker's CUDA context.
"""
from __future__ import annotations

import ast
import dataclasses
import re

from pt2bot.rules.base import Candidate
from pt2bot.rules.edits import (BOOL_FUNCS, binds_torch, function_binds, indent_unit, indentation, is_elif,
                                next_if_testing,
                                nested, owns_lines, parents_of, replace_statement, segment,
                                source_lines, statement_at, statement_lines)

# tensor methods whose result is a tensor (what a comparison with a number keeps a tensor)
_TENSOR_METHODS = frozenset({"sum", "mean", "min", "max", "amin", "amax", "abs", "norm", "std", "var",
                             "prod", "median", "float", "double", "half", "to", "sqrt", "exp", "log",
                             "clamp", "detach", "flatten", "reshape", "view", "squeeze", "unsqueeze",
                             "diff", "count_nonzero", "logsumexp", "det", "trace", "sign", "round",
                             "floor", "ceil", "long", "int", "cumsum", "nansum", "nanmean"})
# torch calls that return a Python value, not a tensor
_TORCH_SCALARS = frozenset({"numel", "is_tensor", "is_floating_point", "is_complex", "equal", "allclose",
                            "is_nonzero", "get_default_dtype", "is_grad_enabled", "are_deterministic_algorithms_enabled"})
# methods that copy a tensor to Python, and code a copy of the test must not hold
_TO_PYTHON = frozenset({"item", "tolist", "numpy"})
_UNSAFE = (ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom, ast.Lambda, ast.GeneratorExp,
           ast.ListComp, ast.SetComp, ast.DictComp)
_OPS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_CHECK_NAME = re.compile(r"check|assert", re.IGNORECASE)
_MESSAGE_KEYWORDS = ("msg", "message")


class _Untranslatable(Exception):
    """A part of the test that is not surely a tensor: the recipe offers no edit."""


def _torch_call(node: ast.AST) -> str | None:
    """`torch.f(...)` -> "f" (the module name `torch` only)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            isinstance(node.func.value, ast.Name) and node.func.value.id == "torch":
        return node.func.attr
    return None


def _method(node: ast.AST) -> str | None:
    """`x.f(...)` -> "f" for a method call on anything but the name `torch`."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _torch_call(node) is None:
        return node.func.attr
    return None


def _builtin(node: ast.AST, name: str) -> ast.AST | None:
    """The one argument of `name(x)` (a builtin called by its bare name), else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name and \
            len(node.args) == 1 and not node.keywords and not isinstance(node.args[0], ast.Starred):
        return node.args[0]
    return None


def _holds(node: ast.AST, at: tuple[int, int]) -> bool:
    return (node.lineno, node.col_offset) <= at < (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _atom(node: ast.AST, text: str) -> str:
    """`text` bracketed unless `node` binds tighter than any operator (a name, a call)."""
    return text if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)) \
        else f"({text})"


class _Translator:
    """The tensor form of a test (see the module doc), from its source `lines`; `at` is the
    finding's position (the part its rule found to be a tensor). With `one_tensor`, an
    `and`/`or` needs one part surely a tensor, not each: a comparison no side of which is known
    to be one is kept as it is in the others, since a Python bool `&` or `|` a bool tensor is
    a bool tensor (PTC201's `torch.where` / `torch.cond` conditions, pt2bot/rules/branch_fixes.py;
    the assertions of this file keep the default, each part known). `not` of such a comparison
    stays untranslatable either way: `torch.logical_not` of a Python bool fails."""

    def __init__(self, lines: list[str], at: tuple[int, int], *, one_tensor: bool = False,
                 asserted: ast.AST | None = None) -> None:
        self.lines, self.at, self.one_tensor = lines, at, one_tensor
        # the test of an `assert`: where its own top-level `and` has a part that is false, head
        # raises AssertionError, so `&` evaluating the later parts there (one that indexes may
        # raise another error) changes no outcome but the exception's type, which the proof
        # reports; within an `or` it would (a later part runs where head passed)
        self.asserted = asserted

    def text(self, node: ast.AST) -> str:
        """`node`'s source, kept as it is: it must not copy a tensor to Python (that is the
        break the edit removes) nor bind a name."""
        for n in ast.walk(node):
            if (_method(n) in _TO_PYTHON and not n.args) or isinstance(n, _UNSAFE) or \
                    any(_builtin(n, b) is not None for b in ("int", "float", "bool")):
                raise _Untranslatable
        return segment(self.lines, node)

    def tensor(self, node: ast.AST) -> bool:
        """Whether the value `node` computes is surely a tensor."""
        if _holds(node, self.at):
            return True
        name = _torch_call(node)
        if name is not None:
            return name not in _TORCH_SCALARS
        name = _method(node)
        if name is not None:
            return name in _TENSOR_METHODS or name in BOOL_FUNCS
        if isinstance(node, ast.BinOp):
            return self.tensor(node.left) or self.tensor(node.right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            return self.tensor(node.operand)
        return False

    def operand(self, node: ast.AST) -> tuple[str, bool]:
        """(text of a comparison's side with `.item()` dropped, whether it is a tensor)."""
        if _method(node) == "item" and not node.args and not node.keywords:   # type: ignore[attr-defined]
            recv = node.func.value                                            # type: ignore[attr-defined]
            return _atom(recv, self.text(recv)), True
        # `ast` spans leave a side's brackets out: one that binds looser than a comparison
        # (`x > (a if c else b)`, `x == (y > 0)`, `x > (lo or hi)`) gets them back
        loose = isinstance(node, (ast.BoolOp, ast.IfExp, ast.Compare, ast.Lambda, ast.NamedExpr)) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not))
        return (f"({self.text(node)})" if loose else self.text(node)), self.tensor(node)

    def condition(self, node: ast.AST, either: bool = False) -> str:
        """The tensor form of `node` as a truth value; _Untranslatable where there is none.
        `either`: `node` is a part of an `and`/`or` another part of which is surely a tensor
        (`one_tensor`), so a comparison of unknown sides may stay as it is."""
        if isinstance(node, _UNSAFE):
            raise _Untranslatable
        if isinstance(node, ast.BoolOp):
            op = " & " if isinstance(node.op, ast.And) else " | "
            # a part of an `and`/`or` that has a tensor part is `&`/`|`-ed with it: its
            # own parts may be Python bools too
            if self.one_tensor:
                own = [self._translates(v) for v in node.values]   # each part, once
                either = either or any(own)
            if self.one_tensor and either:
                # `&`/`|` evaluate every part where `and`/`or` stop at the first that decides:
                # a later part that calls or indexes (`i < len(xs) and xs[i].sum() > 0`) may
                # raise where head never ran it, unless it and all before it are tensors
                python = False
                for i, (v, tensor) in enumerate(zip(node.values, own)):
                    if (python or not tensor) and i > 0 and node is not self.asserted and any(
                            isinstance(n, (ast.Call, ast.Subscript)) for n in ast.walk(v)):
                        raise _Untranslatable
                    python = python or not tensor
            # `&` binds tighter than a comparison: every part but a call is bracketed
            return op.join(self.condition(v, either) if isinstance(v, ast.Call) and _builtin(v, "bool") is None
                           or isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)
                           else f"({self.condition(v, either)})" for v in node.values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return f"torch.logical_not({self.condition(node.operand)})"
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            # `(t0 <= t) & (t <= t1)` is already the tensor: both sides are evaluated in Python
            # too, so it is kept as written where one side is surely a tensor
            if _holds(node, self.at) and not (_holds(node.left, self.at) or _holds(node.right, self.at)) \
                    or self._translates(node.left) or self._translates(node.right):
                return self.text(node)
            raise _Untranslatable
        inner = _builtin(node, "bool")
        if inner is not None:
            return self.condition(inner)
        for name in ("any", "all"):
            inner = _builtin(node, name)
            if inner is not None:
                # the rule found this call's argument to be a tensor (PTC201 flags `any(t)` there)
                if self.tensor(inner) or _holds(node, self.at):
                    return f"{_atom(inner, self.text(inner))}.{name}()"
                return f"({self.condition(inner)}).{name}()"
        if isinstance(node, ast.Compare):
            if any(type(op) not in _OPS for op in node.ops):
                raise _Untranslatable
            if len(node.ops) > 1:
                return self._chained(node, either)
            (left, lt), (right, rt) = self.operand(node.left), self.operand(node.comparators[0])
            if not (lt or rt or either):
                raise _Untranslatable
            return f"{left} {_OPS[type(node.ops[0])]} {right}"
        if (_torch_call(node) or _method(node)) in BOOL_FUNCS:
            return self.text(node)
        if isinstance(node, (ast.Name, ast.Attribute)) and (node.lineno, node.col_offset) == self.at:
            # the finding is on the name itself: its rule found it a tensor (`check =
            # torch.any(...)` above), or, with no finding, dynamo broke on its truth value
            return self.text(node)
        raise _Untranslatable

    def _chained(self, node: ast.Compare, either: bool) -> str:
        """`a <= b <= c` -> `(a <= b) & (b <= c)`: Python's `and` of the pairs, where one pair has
        a side surely a tensor (a Python bool `&` a bool tensor is one). Each middle operand is
        read twice, so it must be a name, an attribute or a constant; `&` also evaluates the
        later pair where the first is false, which compares names only."""
        sides = [node.left, *node.comparators]
        if not all(isinstance(m, (ast.Name, ast.Attribute, ast.Constant)) for m in sides[1:-1]):
            raise _Untranslatable
        pairs = [(self.operand(a), op, self.operand(b)) for a, op, b in zip(sides, node.ops, sides[1:])]
        if not (either or any(lt or rt for (_l, lt), _op, (_r, rt) in pairs)):
            raise _Untranslatable
        return " & ".join(f"({left} {_OPS[type(op)]} {right})" for (left, _lt), op, (right, _rt) in pairs)

    def _translates(self, node: ast.AST) -> bool:
        """Whether `node` alone has a tensor form (each `and`/`or` in it with a tensor part)."""
        try:
            self.condition(node)
        except _Untranslatable:
            return False
        return True

    def negated(self, node: ast.AST) -> str:
        """What must hold for a check that fails when `node` is true."""
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.condition(node.operand)
        return f"torch.logical_not({self.condition(node)})"


def tensor_test(lines: list[str], test: ast.AST, at: tuple[int, int], *, one_tensor: bool = False,
                asserted: bool = False) -> str | None:
    """The tensor form of `test` (`_Translator`, with `at` the finding's position), None where
    a part of it has none. `asserted`: `test` is an `assert`'s."""
    try:
        return _Translator(lines, at, one_tensor=one_tensor, asserted=test if asserted else None).condition(test)
    except _Untranslatable:
        return None


_HOLE = "\0"   # where a value is formatted into the message
# a `%` conversion: flags, width, precision, type
_PERCENT = re.compile(r"%[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[diouxXeEfFgGcrsa]")


def _literal_text(node: ast.AST | None) -> str:
    """A message's literal text with `_HOLE` where a value goes ("" when it is not a string)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace(_HOLE, "")
    if isinstance(node, ast.JoinedStr):
        return "".join(p.value if isinstance(p, ast.Constant) and isinstance(p.value, str) else _HOLE
                       for p in node.values)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        text = _literal_text(node.func.value).replace("{{", "\1").replace("}}", "\2")
        return re.sub(r"\{[^{}]*\}", _HOLE, text).replace("\1", "{").replace("\2", "}")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _PERCENT.sub(_HOLE, _literal_text(node.left).replace("%%", "\1")).replace("\1", "%")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        right = _literal_text(node.right)
        return _literal_text(node.left) + (right if right else _HOLE)
    if isinstance(node, ast.Call) and node.args and re.search(r"(?:Error|Exception|Warning)$", _name_of(node)):
        # an exception made for the message (focal-loss-torch's `assert ..., ValueError('The
        # predictions values should be between 0 and 1, ...')`): its text, not the fallback
        return _literal_text(node.args[0])
    return ""


def _is_message(node: ast.AST) -> bool:
    """A string: a literal, an f-string, `"...".format(...)`, `"..." % ...`, `"..." + ...`."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return _is_message(node.func.value)
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.Add)) and _is_message(node.left)


def message_of(node: ast.AST | None, fallback: str) -> str:
    """The assertion's constant message from the original message `node` (module doc)."""
    text = " ".join(_literal_text(node).split())
    first = text.find(_HOLE)
    if first >= 0:
        ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text[:first])]
        comma = text.rfind(", ", 0, first)
        if ends:
            text = text[:ends[-1]]
        elif comma > 0 and len(text[:comma].split()) >= 3 and text.count(_HOLE) > 1 and all(
                text[:comma].count(o) == text[:comma].count(c) for o, c in ("[]", "()")):
            # a clause that only reports the values ("..., but got Min: {a} Max: {b}") goes
            # whole: its labels without their values read cut ("but got Min: ... Max")
            text = text[:comma]
        else:
            # a value that ends a sentence takes its full stop into the "...": "t1={t1}." ->
            # "t1=...", not "t1=...."
            text = re.sub(_HOLE + r"\.(?=\s|$)", _HOLE, text).replace(_HOLE, "...").strip()
            # a value at the end is dropped with the punctuation that introduces it ("Bad
            # value: {x}" -> "Bad value"), but kept as "..." after a word, where dropping it
            # would leave the sentence cut ("non-finite values in {name}" -> "... in ...")
            while True:
                text = text.rstrip()
                if text.endswith("..."):
                    before = text[:-3].rstrip()
                    if before and before[-1] not in ":,;-":
                        break
                    text = before
                elif text[-1:] in (":", ",", ";", "-"):
                    text = text[:-1]
                else:
                    break
    text = text.strip()
    return text if text.replace(".", "").strip() else " ".join(fallback.split())[:200]


def _name_of(node: ast.AST) -> str:
    """`E`, `errors.E`, `E(...)` -> the class or function name."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def _python_prefix(test: ast.AST, tr: _Translator) -> tuple[str | None, ast.AST]:
    """(`P`, `T`) for a test `P and T` whose leading parts `P` have no tensor form (a flag, a
    size: `if not allow_non_binary and (t.max() > 1 or t.min() < 0):`) and whose other parts
    `T` all have one; (None, `test`) otherwise. Compiled code then tests `P` in Python, as
    head does and first, and asserts only under it: `P` is kept out of the assertion, where
    `torch.logical_not` of a Python bool would fail and `&` would evaluate `T` where head's
    `and` stopped. A part of `P` that is a tensor after all still breaks the graph, and the
    proof refuses the edit for it."""
    if not (isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)):
        return None, test
    parts = test.values
    k = 0
    while k < len(parts) and not tr._translates(parts[k]):
        k += 1
    if k == 0 or k == len(parts) or not all(tr._translates(v) for v in parts[k:]):
        return None, test
    try:
        prefix = " and ".join(f"({tr.text(v)})" if isinstance(v, (ast.BoolOp, ast.IfExp)) else tr.text(v)
                              for v in parts[:k])
    except _Untranslatable:
        return None, test
    if "\n" in prefix:
        return None, test   # its lines were continued by the brackets around the whole test
    rest = parts[k] if k == len(parts) - 1 else ast.BoolOp(
        op=ast.And(), values=parts[k:], lineno=parts[k].lineno, col_offset=parts[k].col_offset,
        end_lineno=parts[-1].end_lineno, end_col_offset=parts[-1].end_col_offset)
    return prefix, rest


def _raise_link(st: ast.If, tr: _Translator) -> tuple[str | None, str] | None:
    """The assertion for one `if <test>: raise E(...)` link, with the Python test it runs under
    (`_python_prefix`, None for none); None when it is not one. Local assignments before the
    `raise` (monai's `wrong_dims = ...` for the message) stay in the eager branch: compiled code
    asserts with a constant message and needs none of them."""
    *before, last = st.body
    if not isinstance(last, ast.Raise) or last.exc is None or not all(
            isinstance(b, (ast.Assign, ast.AnnAssign)) and all(isinstance(t, ast.Name) for t in
                                                               (b.targets if isinstance(b, ast.Assign) else [b.target]))
            for b in before):
        return None
    exc = last.exc
    msg = exc.args[0] if isinstance(exc, ast.Call) and exc.args else None
    prefix, test = _python_prefix(st.test, tr)
    try:
        cond = tr.negated(test)
    except _Untranslatable:
        return None
    text = message_of(msg, f"{_name_of(exc) or 'check'}: {segment(tr.lines, st.test)}")
    return prefix, f"torch._assert_async({cond}, {text!r})"


def _chain_head(tree: ast.Module, st: ast.If, lines: list[str]) -> ast.If:
    parents = parents_of(tree)
    while is_elif(lines, st):
        up = parents.get(id(st))
        if not isinstance(up, ast.If):
            break
        st = up
    return st


def _raise_fixes(code: str, finding, st: ast.If, tree: ast.Module, lines: list[str]) -> list[Candidate]:
    head = _chain_head(tree, st, lines)
    if not owns_lines(lines, head) or is_elif(lines, head):
        return []
    tr = _Translator(lines, (finding.line, finding.col))
    asserts, link = [], head
    while True:
        a = _raise_link(link, tr)
        if a is None:
            return []
        asserts.append(a)
        if not link.orelse:
            break
        if len(link.orelse) != 1 or not isinstance(link.orelse[0], ast.If) or \
                not is_elif(lines, link.orelse[0]):
            return []   # an `else`: what runs there is not a check
        link = link.orelse[0]
    indent = indentation(lines, head)
    own = lines[head.lineno - 1:(head.end_lineno or head.lineno)]
    first = own[0]
    if not first[len(indent):].startswith("if"):
        return []
    inner = indent + indent_unit(indent, lines)
    new = [f"{indent}if torch.compiler.is_compiling():"]
    for prefix, a in asserts:
        if prefix is None:
            new += statement_lines(inner, a)
        else:
            new += statement_lines(inner, f"if {prefix}:")
            new += statement_lines(inner + indent_unit(indent, lines), a)
    new += [indent + "el" + first[len(indent):]] + own[1:]
    return [replace_statement(code, finding.path, head, new,
                              "keep the check in compiled code: `torch._assert_async` under "
                              "`torch.compiler.is_compiling()`, the raise in eager",
                              safe=False, guards=("invalid",), rank=0)]


def _check_callee(call: ast.Call) -> str | None:
    """The dotted name of a check function (module doc), else None."""
    parts = []
    f: ast.AST = call.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if not isinstance(f, ast.Name):
        return None
    parts.append(f.id)
    dotted = ".".join(reversed(parts))
    if parts[-1] == "torch" or not _CHECK_NAME.search(parts[0]):
        return None
    return dotted


def _call_fixes(code: str, finding, st: ast.Expr, lines: list[str]) -> list[Candidate]:
    call = st.value
    assert isinstance(call, ast.Call)
    name = _check_callee(call)
    if name is None or not call.args or any(isinstance(a, ast.Starred) for a in call.args):
        return []
    msg = call.args[1] if len(call.args) == 2 else None
    if len(call.args) > 2 or any(k.arg not in _MESSAGE_KEYWORDS for k in call.keywords):
        return []   # another argument (`raises=False`) may change what the check does
    for k in call.keywords:
        msg = k.value
    if msg is not None and not _is_message(msg):
        return []   # `assert_equal(a, b)`: the second argument is a value, not a message
    test = call.args[0]
    if not _holds(test, (finding.line, finding.col)):
        return []
    cond = tensor_test(lines, test, (finding.line, finding.col))
    if cond is None:
        return []
    return _asserted_else(code, finding, st, lines, cond, message_of(msg, f"{name}: {segment(lines, test)}"),
                          f"`{name}`")


def _assert_fixes(code: str, finding, st: ast.Assert, lines: list[str]) -> list[Candidate]:
    """`assert <test>, <formatted message>` (or `assert not ...`): the assertion dynamo traces
    in compiled code, the `assert` as it was in eager."""
    at = (finding.line, finding.col)
    test = st.test
    # an `and` of the assertion breaks where its first part is a tensor (Python takes its truth
    # value), whatever the message: one part surely a tensor is enough, the others `&`-ed
    one = isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And)
    cond = tensor_test(lines, test, at, one_tensor=one, asserted=one)
    if cond is None:
        return []
    return _asserted_else(code, finding, st, lines, cond,
                          message_of(st.msg, f"AssertionError: {segment(lines, st.test)}"), "the `assert`")


def _asserted_else(code: str, finding, st: ast.stmt, lines: list[str], cond: str, text: str,
                   eager: str) -> list[Candidate]:
    """`if torch.compiler.is_compiling(): torch._assert_async(cond, text)`, and statement `st`
    as it was under `else:` (a check call or an `assert`; `eager` names it in the title)."""
    indent = indentation(lines, st)
    inner = indent + indent_unit(indent, lines)
    new = ([f"{indent}if torch.compiler.is_compiling():"]
           + statement_lines(inner, f"torch._assert_async({cond}, {text!r})")
           + [f"{indent}else:"] + nested(lines, st, indent_unit(indent, lines)))
    return [replace_statement(code, finding.path, st, new,
                              f"keep the check in compiled code: `torch._assert_async` under "
                              f"`torch.compiler.is_compiling()`, {eager} in eager",
                              safe=False, guards=("invalid",), rank=0)]


def number_check_fixes(code: str, finding, source: str, tree: ast.Module, value: str) -> list[Candidate]:
    """`name = <number of tensor>` at the finding (`value`: the tensor's text standing for the
    number: `(~mask).sum()`, `x.long()` for `int()` of a float tensor), then `if <test of
    name>: raise ...` (a chain of such links as `_raise_fixes` takes), the name read nowhere
    else in the function: compiled code asserts the test on the tensor, eager code runs both
    statements as they were."""
    lines = source_lines(source)
    st, _body = statement_at(tree, finding.line, finding.col)
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)) \
            or not binds_torch(tree) or function_binds(tree, st, "torch") or not owns_lines(lines, st):
        return []
    name = st.targets[0].id
    # (read elsewhere too, compiled code would need the number there)
    nxt = next_if_testing(tree, st, name)
    if nxt is None or is_elif(lines, nxt):
        return []
    reads = [n for n in ast.walk(nxt.test) if isinstance(n, ast.Name) and n.id == name]
    end = nxt.end_lineno or nxt.lineno
    if any(n.lineno != n.end_lineno for n in reads) or "\n" in value:
        return []
    # the test with the tensor in the name's place, in a copy of the source, where the check's
    # own recipe asserts it; only its assertions are kept
    spans = sorted(((n.lineno, n.col_offset, n.end_col_offset), n) for n in reads)
    patched = list(lines)
    for (ln, c0, c1), _ in reversed(spans):
        patched[ln - 1] = patched[ln - 1][:c0] + f"({value})" + patched[ln - 1][c1:]
    try:
        ptree = ast.parse("\n".join(patched) + "\n")
    except SyntaxError:
        return []
    (ln, c0, _), _n = spans[0]
    at = dataclasses.replace(finding, line=ln, col=c0 + 1)
    pst, _ = statement_at(ptree, nxt.lineno, nxt.col_offset)
    if not isinstance(pst, ast.If):
        return []
    made = _raise_fixes(code, at, pst, ptree, patched)
    if not made:
        return []
    indent = indentation(lines, st)
    unit = indent_unit(indent, lines)
    asserted = list(made[0].lines[1:])
    cut = next(k for k, ln in enumerate(asserted) if ln.startswith(indent + "el"))
    between = [unit + ln if ln.strip() else ln for ln in lines[(st.end_lineno or st.lineno):nxt.lineno - 1]]
    new = ([f"{indent}if torch.compiler.is_compiling():"] + asserted[:cut] + [f"{indent}else:"]
           + nested(lines, st, unit) + between + nested(lines, nxt, unit))
    return [Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=end, lines=tuple(new),
                      title=f"keep the check in compiled code on the tensor: `torch._assert_async` under "
                            f"`torch.compiler.is_compiling()`, `{name}` and the raise in eager",
                      safe=False, guards=("invalid",), rank=0)]


def check_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """The candidate for a finding in the test of `if ...: raise`, of an `assert`, or in a check
    call's test."""
    lines = source_lines(source)
    st, _body = statement_at(tree, finding.line, finding.col)
    if st is None or not binds_torch(tree) or function_binds(tree, st, "torch"):
        return []
    if isinstance(st, ast.If) and _holds(st.test, (finding.line, finding.col)):
        return _raise_fixes(code, finding, st, tree, lines)
    if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call) and owns_lines(lines, st):
        return _call_fixes(code, finding, st, lines)
    if isinstance(st, ast.Assert) and _holds(st.test, (finding.line, finding.col)) and owns_lines(lines, st):
        return _assert_fixes(code, finding, st, lines)
    return []


__all__ = ["check_fixes", "message_of", "number_check_fixes", "tensor_test"]
