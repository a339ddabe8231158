from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import (enclosing_function, finding_statement, function_binds, module_names, node_span,
                                parents_of, replace_spans)
from pt2bot.analysis.queries import method_call

# numpy functions whose torch namesake means the same on one array argument (and `clip` on
# three): `np.sqrt(a)` -> `torch.sqrt(t)`. Not `std`/`var` (numpy's divide by n, torch's by
# n - 1), not `cumsum` (numpy's flattens without an axis, torch's needs a dim), not the binary
# `maximum`/`minimum` (torch's take two tensors, numpy's a number too).
_FUNCS = frozenset("""
abs absolute sqrt exp log log2 log10 log1p expm1 sin cos tan tanh sinh cosh arcsin arccos arctan
sign floor ceil trunc square round isnan isinf isfinite mean sum prod max min argmax argmin any all clip
""".split())
# ndarray methods a tensor has with the same meaning when called with no argument; those in
# `_AXIS_METHODS` also with one positional axis (`a.cumsum(0)`; `a.max(0)` is not: a tensor's
# returns values and indices).
_METHODS = frozenset("mean sum prod max min argmax argmin any all round tolist item cumsum".split())
_AXIS_METHODS = frozenset("mean sum prod cumsum".split())
# a torch call that only turns its one argument back into a tensor: dropped with the numpy
_WRAPPERS = frozenset({"from_numpy", "as_tensor"})
# ndarray-only methods: a later read of the value with one of these needs the array
_ARRAY_ONLY = frozenset({"astype", "copy", "tobytes", "dtype", "size", "itemsize", "nbytes", "flat", "view"})


def _numpy_value_region(call: ast.Call, parents: dict[int, ast.AST], np_names: list[str], torch_name: str | None
                        ) -> tuple[ast.AST, list, bool] | None:
    """From the `.numpy()` call up through what stays a numpy value (arithmetic, indexing,
    `_METHODS`, `np.<_FUNCS>`): the top of that expression, the edits that make it torch, and
    whether a torch call turned it back into a tensor. None when a numpy call or method with no
    torch namesake is applied to it."""
    recv = call.func.value   # type: ignore[attr-defined]
    edits: list = [((recv.end_lineno, recv.end_col_offset), node_span(call)[1], "")]
    cur: ast.AST = call
    while True:
        p = parents.get(id(cur))
        if isinstance(p, ast.Attribute) and p.value is cur:
            gp = parents.get(id(p))
            if not (isinstance(gp, ast.Call) and gp.func is p):
                return (cur, edits, False) if p.attr in ("shape", "ndim", "T") else None
            n_args = len(gp.args)
            if p.attr not in _METHODS or gp.keywords or n_args > 1 or \
                    (n_args == 1 and (p.attr not in _AXIS_METHODS or not isinstance(gp.args[0], ast.Constant))):
                return None
            cur = gp
        elif isinstance(p, ast.Call) and cur in p.args:
            f = p.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id in np_names:
                if f.attr not in _FUNCS or p.keywords or torch_name is None or \
                        len(p.args) != (3 if f.attr == "clip" else 1) or p.args[0] is not cur:
                    return None
                edits.append((*node_span(f.value), torch_name))
                cur = p
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.attr in _WRAPPERS | {"tensor"} and f.value.id == torch_name and len(p.args) == 1 \
                    and not p.keywords:
                # `torch.tensor(a)` copies: `(t).clone()` (a tensor given to torch.tensor warns)
                copy = f.attr == "tensor"
                edits.append((node_span(p)[0], node_span(cur)[0], "(" if copy else ""))
                edits.append((node_span(cur)[1], node_span(p)[1], ").clone()" if copy else ""))
                return p, edits, True
            elif _roots_at(f, np_names):
                return None     # `np.linalg.inv(a)`, `np.asarray(a, dtype=...)`: no namesake here
            else:
                return cur, edits, False   # a consumer (`resize(size=...)`, `float(...)`) gets the tensor
        elif isinstance(p, (ast.BinOp, ast.UnaryOp)) or (isinstance(p, ast.Subscript) and p.value is cur):
            cur = p
        else:
            return cur, edits, False


def _roots_at(e: ast.AST, names: list[str]) -> bool:
    while isinstance(e, ast.Attribute):
        e = e.value
    return isinstance(e, ast.Name) and e.id in names


def numpy_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    st, _, lines = finding_statement(finding, source, tree)
    if st is None:
        return []
    call = next((n for n in ast.walk(st) if isinstance(n, ast.Call) and method_call(n, ("numpy",)) is not None
                 and (n.lineno, n.col_offset) == (finding.line, finding.col)), None)
    if call is None or call.args or call.keywords:
        return []
    np_names = [n for n in module_names(tree, "numpy") if not function_binds(tree, st, n)]
    torch_name = next((n for n in module_names(tree, "torch") if not function_binds(tree, st, n)), None)
    parents = parents_of(st)
    region = _numpy_value_region(call, parents, np_names, torch_name)
    if region is None:
        return []
    top, edits, wrapped = region
    if not wrapped and isinstance(st, ast.Assign) and top is st.value and \
            not _later_reads_take_a_tensor(tree, st, np_names):
        return []
    new = replace_spans(lines, st.lineno, st.end_lineno or st.lineno, edits)
    return [Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=st.end_lineno or st.lineno,
                      lines=tuple(new), title="compute it with torch: drop `.numpy()`"
                      + (", numpy's functions become torch's" if len(edits) > 1 else ""), safe=False)]


def _later_reads_take_a_tensor(tree: ast.Module, st: ast.Assign, np_names: list[str]) -> bool:
    """`v = <array>`: no later read of `v` in the function needs an array (a numpy call on it,
    an ndarray-only attribute)."""
    fn = enclosing_function(tree, st)
    names = {t.id for t in st.targets if isinstance(t, ast.Name)}
    if fn is None or len(names) != len(st.targets):
        return False
    parents = parents_of(fn)
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and n.lineno > st.lineno:
            p = parents.get(id(n))
            if isinstance(p, ast.Attribute) and p.attr in _ARRAY_ONLY:
                return False
            while p is not None and not isinstance(p, ast.stmt):
                if isinstance(p, ast.Call) and _roots_at(p.func, np_names):
                    return False
                p = parents.get(id(p))
    return True


class TensorNumpy(Rule):
    """## What it does
    Flags `Tensor.numpy()` in compiled code. Off by default: enable it (`--select PTC103`) in
    projects that use `torch.export`.

    ## Why is this bad?
    Folklore says `.numpy()` breaks the graph; **torch 2.13 does not**: with the default
    `torch._dynamo.config.trace_numpy = True`, dynamo traces `.numpy()` and NumPy calls on the
    result (and `np.exp(tensor)`-style calls on tensors) as torch ops, so `torch.compile`
    keeps one graph. `torch.export`, however, fails on it (`RuntimeError: .numpy() is not
    supported for tensor subclasses`), and with `trace_numpy=False` it is GB0105. So this rule
    is about exportability, hence off by default and a warning.

    ## Example
    ```python
    def forward(self, x):
        return torch.from_numpy(x.numpy() * 2)
    ```

    ## Use instead
    ```python
    def forward(self, x):
        return x * 2
    ```
    Fix offered (not safe: run and compared before it is posted) when what is done with the
    array has a torch namesake: `.numpy()` dropped, `np.sqrt(a)`-style calls of functions that
    mean the same in torch written with the file's own name for torch (`torch.sqrt(t)`; no import
    is added: without one there is no candidate), ndarray methods a tensor has kept
    (`x.numpy().mean()` -> `x.mean()`, `a.cumsum(0)`), a wrapping `torch.from_numpy(...)` /
    `torch.as_tensor(...)` dropped and `torch.tensor(...)` (a copy) written `(...).clone()`. None where a numpy call without a torch namesake
    (`np.linalg.inv`, `.astype(int)`, `np.std`: numpy divides by n, torch by n - 1) touches the
    value, or where the assigned array is later read as one (a numpy call, `.astype`).
    """

    code = "PTC103"
    name = "tensor-numpy"
    summary = "`Tensor.numpy()` in compiled code (fails torch.export; compile traces it)"
    severity = "warning"
    default = False
    claim = "export"
    doc_url = "https://docs.pytorch.org/docs/stable/export.html"
    node_types = (ast.Call,)
    call_keys = frozenset({".numpy"})

    @classmethod
    def fixes(cls, finding, source, tree):
        return numpy_fixes(cls.code, finding, source, tree)

    def check(self, ctx, node):
        if method_call(node, ("numpy",)) is not None:
            ctx.report(self.code, node, "`.numpy()` cannot be exported with torch.export; use torch ops on the tensor")
