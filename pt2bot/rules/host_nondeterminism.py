from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import (call_target, enclosing_function, finding_statement, import_targets, indent_unit,
                                indentation, nested, parameter_names, parents_of, replace_statement, segment)

_TIME = frozenset({"time.time", "time.perf_counter", "time.monotonic", "time.process_time", "time.time_ns",
                   "time.perf_counter_ns", "time.monotonic_ns"})
# Measured on torch 2.13: `random.random()` breaks (GB0007) but `random.randint` is traced,
# so only the functions verified to break are listed.
_RANDOM = frozenset({"random.random", "random.uniform", "random.gauss"})


class HostNondeterminism(Rule):
    """## What it does
    Flags host clock and host RNG calls in compiled code: `time.time()` / `time.perf_counter()`
    and friends, `random.random()` / `random.uniform()` / `random.gauss()`, and
    `numpy.random.*`.

    ## Why is this bad?
    These read host state that dynamo cannot trace. torch 2.13 breaks the graph on each call:
    the time functions and `random.random` with GB0007 ("Attempted to call function marked as
    skipped"), `numpy.random.*` with GB0033. Timing inside `forward` also measures nothing
    useful: compiled kernels run asynchronously. (NumPy math on tensors, e.g. `np.exp(t)`, is
    *not* flagged: with `trace_numpy` dynamo traces it. `random.randint` is traced too.)

    ## Example
    ```python
    def forward(self, x):
        t0 = time.perf_counter()
        noise = np.random.rand()
        return x * noise
    ```

    ## Use instead
    Time outside the model, and use torch's RNG, which compiles:
    ```python
    def forward(self, x):
        noise = torch.rand((), device=x.device)
        return x * noise
    ```
    Fix offered (not safe: run and compared before it is posted) for a clock read only for a
    verbose print, `start = time.time()` whose every read is under `if verbose:` (tntorch's
    rounding): the read moves under the same flag, `if verbose: start = time.time()`.
    """

    code = "PTC107"
    name = "host-nondeterminism"
    summary = "`time.*`, `random.*`, `numpy.random.*` calls in compiled code (graph break)"
    gb = "GB0007"
    callee_until = {"random.random": "2.14"}   # traced from 2.14 on (tests/test_rules_torch.py)
    node_types = (ast.Call,)

    @classmethod
    def fixes(cls, finding, source, tree):
        return _timed_when_told_fixes(cls.code, finding, source, tree)

    def check(self, ctx, node):
        target = ctx.call_target
        if not target:
            return
        if target in _TIME:
            ctx.report(self.code, node, f"`{target}()` is a host call that breaks the graph; "
                       "time outside the compiled model")
        elif target in _RANDOM:
            ctx.report(self.code, node, f"`{target}()` breaks the graph; use torch's RNG "
                       "(`torch.rand`, `torch.randint`)")
        elif target.startswith("numpy.random."):
            ctx.report(self.code, node, f"`{target}()` breaks the graph; use torch's RNG "
                       "(`torch.rand`, `torch.randn`)", gb="GB0033")


def _time_call(node: ast.AST, targets: dict[str, str]) -> bool:
    """`node` is a call of one of `_TIME` with no arguments, by any name the imports give it
    (`targets`: pt2bot/rules/edits.py `import_targets`)."""
    return isinstance(node, ast.Call) and not node.args and not node.keywords and \
        call_target(node.func, targets) in _TIME


def _timed_when_told_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`start = time.time()` whose every read is under `if verbose:` (tntorch's rounding and
    CP-ALS: `if verbose: print("Time (SVD):", time.time() - start)`) -> the clock read under the
    same test, `if verbose: start = time.time()`. With the flag off the name is never read, so
    eager runs as before but for one host call, and dynamo, which folds a Python flag, traces
    no clock. The flag must be a parameter the function never rebinds, or an attribute of
    `self` it never sets; `start` may be set more than once, each time the same way."""
    st, _body, lines = finding_statement(finding, source, tree)
    imports = import_targets(tree)
    if not (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name)
            and _time_call(st.value, imports)):
        return []
    fn = enclosing_function(tree, st)
    if fn is None:
        return []
    name = st.targets[0].id
    parents = parents_of(fn)
    tests: set[str] = set()
    for n in ast.walk(fn):
        if not (isinstance(n, ast.Name) and n.id == name):
            continue
        if isinstance(n.ctx, ast.Store):
            a = parents.get(id(n))
            if not (isinstance(a, ast.Assign) and a.targets == [n] and _time_call(a.value, imports)):
                return []   # set otherwise too: a read may see that value
            continue
        child, p = n, parents.get(id(n))
        while p is not None and not (isinstance(p, ast.If) and child in p.body):
            child, p = p, parents.get(id(p))
        if p is None:
            return []
        tests.add(segment(lines, p.test))
    if len(tests) != 1:
        return []
    (flag,) = tests
    try:
        flag_node = ast.parse(flag, mode="eval").body
    except SyntaxError:
        return []
    if isinstance(flag_node, ast.Name):
        fixed = flag_node.id in parameter_names(fn) and not any(
            isinstance(n, ast.Name) and n.id == flag_node.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(fn))
    else:
        fixed = isinstance(flag_node, ast.Attribute) and isinstance(flag_node.value, ast.Name) and \
            flag_node.value.id == "self" and not any(
                isinstance(n, ast.Attribute) and segment(lines, n) == flag and not isinstance(n.ctx, ast.Load)
                for n in ast.walk(fn))
    if not fixed:
        return []
    indent = indentation(lines, st)
    new = [f"{indent}if {flag}:"] + nested(lines, st, indent_unit(indent, lines))
    return [replace_statement(code, finding.path, st, new,
                              f"read the clock only under `if {flag}:`, where `{name}` is read", safe=False)]
