from __future__ import annotations

import ast

from pt2bot.rules.base import Candidate, Rule
from pt2bot.rules.edits import (binds_torch, enclosing_function, finding_statement, function_binds, indent_unit,
                                indentation, is_elif, nested, node_span, owns_lines, parents_of, replace_spans,
                                replace_statement, segment, statement_lines, with_replaced)

# Container methods that grow what an attribute holds (a list gets longer, a dict gains a key);
# `clear`/`pop` return it to a state it had before, which does not keep recompiling.
_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "appendleft", "extendleft"})
_CONTAINER_CTORS = frozenset({"dict", "list", "set", "collections.OrderedDict", "collections.defaultdict",
                              "collections.deque", "OrderedDict", "defaultdict", "deque"})


def _self_chain(e: ast.AST) -> str | None:
    """`self.freqs` / `self.rope.cache` as a dotted string (the attribute a store changes)."""
    parts: list[str] = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if isinstance(e, ast.Name) and e.id == "self" and parts and len(parts) <= 3:
        return "self." + ".".join(reversed(parts))
    return None


def _chains_read(e: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(e):
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Load):
            chain = _self_chain(n)
            if chain:
                out.add(chain)
    return out


def _guards(ctx) -> list[tuple[int, int, frozenset[str]]]:
    """(first line, last line, attributes its test reads) of every `if` in the function: a
    store under `if self.cache is None:` / `if key not in self.cache:` is a cache filled on
    some call, the transition dynamo's guard sees."""
    memo = ctx.__dict__.get("_ptc110_guards")
    if memo is None:
        ifs = ctx.__dict__["_ptc110_ifs"] = [n for n in _statements(ctx.node) if type(n) is ast.If and n.body]
        memo = ctx.__dict__["_ptc110_guards"] = [
            (n.body[0].lineno, n.end_lineno or n.lineno, frozenset(_chains_read(n.test))) for n in ifs]
    return memo


def _statements(node: ast.AST) -> list[ast.stmt]:
    """Every statement inside `node`, nested defs included: what `ast.walk` finds of them
    without visiting expressions (an `ast.walk` per function cost ~2 % of a cold check)."""
    out: list[ast.stmt] = []
    todo = [node]
    while todo:
        st = todo.pop()
        for field in ("body", "orelse", "finalbody"):
            sub = getattr(st, field, None)
            if type(sub) is list:
                out.extend(sub)
                todo.extend(sub)
        for h in getattr(st, "handlers", None) or ():
            out.extend(h.body)
            todo.extend(h.body)
        for c in getattr(st, "cases", None) or ():
            out.extend(c.body)
            todo.extend(c.body)
    return out


def _transition(ctx, node: ast.AST, value: ast.AST | None, chain: str) -> bool:
    """The store replaces what the attribute held with something derived from it
    (`self.x = self.x.to(...)`) or fills it under a test of it (a cache)."""
    if value is not None and chain in _chains_read(value):
        return True
    return any(first <= node.lineno <= last and chain in read for first, last, read in _guards(ctx))


def _under_state_test(ctx, node: ast.AST) -> bool:
    """The statement sits in an `if` whose test reads module state (`if key not in self.cache:`,
    `if not self._registered:`): it runs on the calls that find the state missing, not on every
    call. Measured on torch 2.13: a cache filled under `key not in` compiles twice in 6 calls."""
    return any(first <= node.lineno <= last and read for first, last, read in _guards(ctx))


# -- "once per key": a store made only on the calls that find the state it tests missing --------
#
# A cache filled under `if key not in self.cache:`, after `hit = self.cache.get(key); if hit is not
# None: return hit` (timm's pinv cache), under `b = self.blocks[0]; if b.dtype != x.dtype:`
# (kornia's DeDoDe backbone), or in a helper every caller calls under `if not self.registered:`
# (vit-pytorch's hook registration) changes the module only when that test asks for it. Dynamo
# guards on the state the test reads, so the call that fills it compiles once more (once per new
# key), and the calls after it reuse the compiled code. Measured on torch 2.13 (CPU):
# tests/test_ptc110_once.py; vit-pytorch's Extractor compiles its forward twice in 6 calls, with
# the one recompile reason `self.hook_registered == False`.


def _state_alias(value: ast.AST) -> str | None:
    """The self chain a local reads the stored state from: `self.x`, `self.x[k]`,
    `self.x.get(k)`. Only reads of what is stored, not calls of a submodule (`self.proj(x)`)."""
    if isinstance(value, ast.Subscript):
        return _self_chain(value.value)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get":
        return _self_chain(value.func.value)
    return _self_chain(value) if isinstance(value, ast.Attribute) else None


def _blocks(node: ast.AST) -> list[list[ast.stmt]]:
    """Every statement list (body, orelse, finalbody, handler and case bodies) inside `node`."""
    out: list[list[ast.stmt]] = []
    todo = [node]
    while todo:
        st = todo.pop()
        subs = [getattr(st, f, None) for f in ("body", "orelse", "finalbody")]
        subs += [h.body for h in getattr(st, "handlers", None) or ()]
        subs += [c.body for c in getattr(st, "cases", None) or ()]
        for sub in subs:
            if type(sub) is list and sub:
                out.append(sub)
                todo.extend(sub)
    return out


def _state_tests(fn: ast.AST) -> list[tuple[int, int, frozenset[str]]]:
    """(first line, last line, self chains the test reads, directly or through a local alias) of
    the lines that run only as a test of module state decides: an `if`'s body and else branch,
    and the rest of the block after `if <test>: return ...` (a cache hit returned early)."""
    # name -> [(line, chain or None)] of its assignments: a test reads the alias its latest
    # assignment above it made (`hit = self.cache.get(k)` ... `hit = compute()` later is no alias)
    assigned: dict[str, list[tuple[int, str | None]]] = {}
    for st in _statements(fn):
        if type(st) is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name:
            assigned.setdefault(st.targets[0].id, []).append((st.lineno, _state_alias(st.value)))

    def reads(test: ast.AST) -> frozenset[str]:
        out = _chains_read(test)
        for n in ast.walk(test):
            if type(n) is ast.Name and n.id in assigned:
                before = [a for a in assigned[n.id] if a[0] < test.lineno]
                latest = max(before, key=lambda a: a[0])[1] if before else None
                if latest:
                    out.add(latest)
        return frozenset(out)

    spans = []
    for block in _blocks(fn):
        for i, st in enumerate(block):
            if type(st) is not ast.If or not st.body:
                continue
            r = reads(st.test)
            if not r:
                continue
            spans.append((st.body[0].lineno, st.end_lineno or st.lineno, r))
            if not st.orelse and type(st.body[-1]) is ast.Return and i + 1 < len(block):
                spans.append((block[i + 1].lineno, block[-1].end_lineno or block[-1].lineno, r))
    return spans


def _class_node(ctx) -> ast.ClassDef | None:
    cls = ctx.cls
    return None if cls is None else next(
        (n for n in ctx.mod.tree.body if isinstance(n, ast.ClassDef) and n.name == cls.name), None)


def _class_state(ctx) -> tuple[frozenset[str], dict[str, list[tuple[ast.AST, int]]]]:
    """(self chains the class's methods other than `__init__` assign: the flags and caches its
    code fills; `self.<method>(...)` call sites per method name, as (calling function, line))."""
    memo = ctx.mod.__dict__.setdefault("_ptc110_class_state", {})
    hit = memo.get(ctx.cls.name)
    if hit is None:
        writes: set[str] = set()
        calls: dict[str, list[tuple[ast.AST, int]]] = {}
        node = _class_node(ctx)
        for item in (node.body if node is not None else ()):
            if not isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for n in ast.walk(item):
                if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)) and "init" not in item.name:
                    for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                        chain = _self_chain(t)
                        if chain:
                            writes.add(chain)
                elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                        _self_chain(n.func) and n.func.value.__class__ is ast.Name:
                    calls.setdefault(n.func.attr, []).append((item, n.lineno))
        hit = memo[ctx.cls.name] = (frozenset(writes), calls)
    return hit


def _once(ctx, node: ast.AST, chain: str) -> bool:
    """The store runs only when a test of the state it fills (the stored chain, or a flag the
    class's own methods set) finds it missing: in this function, or because every call of this
    method in the class sits under such a test."""
    writes, calls = _class_state(ctx)
    state = writes | {chain}
    line = node.lineno
    if any(first <= line <= last and read & state for first, last, read in _tests_of(ctx, ctx.node)):
        return True
    sites = calls.get(ctx.node.name) or []
    return bool(sites) and all(
        any(first <= at <= last and read & state for first, last, read in _tests_of(ctx, fn))
        for fn, at in sites)


def _tests_of(ctx, fn: ast.AST) -> list[tuple[int, int, frozenset[str]]]:
    memo = ctx.mod.__dict__.setdefault("_ptc110_tests", {})
    hit = memo.get(id(fn))
    if hit is None:
        hit = memo[id(fn)] = (fn, _state_tests(fn))
    return hit[1]


# -- "settled": a store that makes the test guarding it false ----------------------------------
#
# `if self.k.dtype != x.dtype: self.k = self.k.to(x.dtype)`, `if self.state is None or
# self.state.shape[0] != n: self.state = torch.zeros(n, d)`, `if self.cfg.kind is None:
# self.cfg.kind = "a"`: once the store has run, the same inputs find the test false and the body
# does not run again, so the module changes once per new dtype, size or first call. The same
# holds for a value written back: `t = self.cache.get(k); if t is None: t = make(); self.cache[k]
# = t` and `self.x = self.x if self.x is not None else make()` put back, on a hit, the object
# they read, which dynamo's guards still accept. Measured on torch 2.13 (CPU, backend="eager"):
# tests/fixtures/rules/ptc110_written_back.py compiles twice in 6 calls with one input, once
# more per new dtype, then not again (tests/test_ptc110_once.py).


def _slot(e: ast.AST) -> str | None:
    """What a store writes or a test reads: a self chain (`self.k`) or a local name."""
    return e.id if type(e) is ast.Name else _self_chain(e)


def _owner(e: ast.AST, stored: dict[str, ast.AST | None]) -> str | None:
    """The stored slot a test operand is a property of: `self.k` of `self.k`, `self.k.dtype`,
    `self.state.shape[0]`, `self.w.size(0)`."""
    for _ in range(4):
        s = _slot(e)
        if s is not None and s in stored:
            return s
        if type(e) is ast.Call and type(e.func) is ast.Attribute:
            e = e.func.value
        elif type(e) in (ast.Attribute, ast.Subscript):
            e = e.value
        else:
            return None
    return None


def _is_none(e: ast.AST | None) -> bool:
    return type(e) is ast.Constant and e.value is None


def _negated(test: ast.AST) -> ast.AST | None:
    """`test` negated, for the forms `_settles` reads (`x is not None` -> `x is None`)."""
    if type(test) is ast.UnaryOp and type(test.op) is ast.Not:
        return test.operand
    if type(test) is ast.Compare and len(test.ops) == 1:
        flip = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
                ast.In: ast.NotIn, ast.NotIn: ast.In}.get(type(test.ops[0]))
        return ast.Compare(test.left, [flip()], test.comparators) if flip else None
    if type(test) is ast.BoolOp:
        parts = [_negated(v) for v in test.values]
        if all(p is not None for p in parts):
            return ast.BoolOp(ast.And() if type(test.op) is ast.Or else ast.Or(), parts)
    return None


def _settles(test: ast.AST, stored: dict[str, ast.AST | None]) -> bool:
    """Whether storing `stored` (slot -> the value stored, None where unknown) makes `test` false
    for the same inputs: `s is None` after a value that is not None, `not s` after a true
    constant, `s != e` after `s = e`, `s.dtype != e` / `s.shape[0] != e` / `e > s.size(0)` after a
    value made from `e` (`s.to(e)`, `torch.zeros(e, d)`)."""
    t = type(test)
    if t is ast.BoolOp:
        parts = [_settles(v, stored) for v in test.values]
        return all(parts) if type(test.op) is ast.Or else any(parts)
    if t is ast.UnaryOp and type(test.op) is ast.Not:
        s = _slot(test.operand)
        if s is not None and s in stored:
            v = stored[s]
            return type(v) is ast.Constant and bool(v.value)
        neg = _negated(test.operand)
        return neg is not None and _settles(neg, stored)
    if t is not ast.Compare or len(test.ops) != 1:
        return False
    op, pair = type(test.ops[0]), (test.left, test.comparators[0])
    for a, b in (pair, pair[::-1]):
        s = _owner(a, stored)
        if s is None:
            continue
        value = stored[s]
        if op is ast.Is and _is_none(b) and _slot(a) == s:
            return value is not None and not _is_none(value)
        if op in (ast.NotEq, ast.Lt, ast.Gt) and value is not None and _slot(b) != s:
            want = ast.dump(b)
            if _slot(a) == s:   # `s != e` after `s = e`
                return ast.dump(value) == want
            return any(ast.dump(n) == want for n in ast.walk(value))
    return False


def _stores_in(body: list[ast.stmt], local: str | None = None) -> dict[str, ast.AST | None]:
    """slot -> the value a block stores in it (None: unpacked from a tuple, value unknown): the
    self chains, which outlive the call, and the one `local` read from them, if given (any
    other local is made afresh on each call: `if pos is None: pos = arange(n)` settles nothing)."""
    out: dict[str, ast.AST | None] = {}
    for top in body:
        for n in (top, *_statements(top)):
            if type(n) is ast.Assign:
                for tg in n.targets:
                    for el in (tg.elts if type(tg) in (ast.Tuple, ast.List) else [tg]):
                        s = _self_chain(el) or (local if type(el) is ast.Name and el.id == local else None)
                        if s is not None:
                            out[s] = n.value if el is tg else n.value if type(n.value) is ast.Call else None
    return out


def _settled_spans(ctx) -> list[tuple[int, int]]:
    """(first line, last line) of every `if` body in the function whose stores make its test
    false: what it stores there changes once per new value of what the test reads."""
    memo = ctx.__dict__.get("_ptc110_settled")
    if memo is None:
        # (only tests that read module state can be settled by what the body stores on it)
        guards = _guards(ctx)
        memo = ctx.__dict__["_ptc110_settled"] = [
            (n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno)
            for n, (_, _, read) in zip(ctx.__dict__["_ptc110_ifs"], guards)
            if read and _settles(n.test, _stores_in(n.body))]
    return memo


def _written_back(ctx, node: ast.stmt, target: ast.AST, chain: str) -> bool:
    """The store puts back what it read unless a settled test replaced it: the value is a local
    read from the same slot (`t = self.cache.get(k)`, `t = self.x`) and every later assignment
    of it before the store sits in an `if` body that settles the test (`if t is None: t =
    make()`); or a conditional expression whose other branch is the slot itself, taken only
    while a settled test asks for it (`self.x if self.x is not None else make()`)."""
    value = getattr(node, "value", None)
    here = ast.dump(target).replace("ctx=Store()", "ctx=Load()")    # the slot as the value reads it
    if type(value) is ast.IfExp:
        for kept, other, test in ((value.body, value.orelse, _negated(value.test)),
                                  (value.orelse, value.body, value.test)):
            if ast.dump(kept) == here and test is not None and _settles(test, {_slot(target): other}):
                return True
        return False
    if type(value) is not ast.Name:
        return False
    key = ast.dump(target.slice) if type(target) is ast.Subscript else None
    stmts = ctx.__dict__.get("_ptc110_stmts")
    if stmts is None:
        stmts = ctx.__dict__["_ptc110_stmts"] = _statements(ctx.node)
    assigns = sorted((st for st in stmts if type(st) is ast.Assign and st.lineno < node.lineno
                      and any(type(tg) is ast.Name and tg.id == value.id for tg in st.targets)),
                     key=lambda st: st.lineno)
    alias = next((st for st in reversed(assigns) if _state_alias(st.value) == chain), None)
    if alias is None:
        return False
    v = alias.value
    read_key = ast.dump(v.slice) if type(v) is ast.Subscript else \
        ast.dump(v.args[0]) if type(v) is ast.Call and v.args else None
    if key != read_key:
        return False
    later = [st for st in assigns if st.lineno > alias.lineno]
    if not later:
        return False        # never refilled: the store changes nothing (and is not what this reports)
    spans = [(n.body[0].lineno, n.body[-1].end_lineno or n.body[-1].lineno)
             for n in stmts if type(n) is ast.If and n.body and alias.lineno < n.lineno < node.lineno
             and value.id in _stores_in(n.body, value.id) and _settles(n.test, _stores_in(n.body, value.id))]
    return all(any(first <= st.lineno <= last for first, last in spans) for st in later)


def _settled(ctx, node: ast.stmt, target: ast.AST, chain: str) -> bool:
    """The store runs only in the body of an `if` its stores make false, or writes back what it read."""
    line = node.lineno
    return any(first <= line <= last for first, last in _settled_spans(ctx)) or \
        type(node) is ast.Assign and _written_back(ctx, node, target, chain)


def _grown_defaults(ctx) -> frozenset[int]:
    """`self.cache.setdefault(k, [])` calls whose result is grown (`.append(x)`): the list in the
    cache gets longer on every call, not once per key."""
    memo = ctx.__dict__.get("_ptc110_grown")
    if memo is None:
        memo = ctx.__dict__["_ptc110_grown"] = frozenset(
            id(n.func.value) for n in ast.walk(ctx.node)
            if type(n) is ast.Call and type(n.func) is ast.Attribute and n.func.attr in _MUTATORS
            and type(n.func.value) is ast.Call and type(n.func.value.func) is ast.Attribute)
    return memo


# Methods whose result has the tensor's own dtype, device and shape: `self.x = self.x.detach()`
# stores a new object that dynamo's tensor guards (metadata, not identity) still accept.
_SAME_METADATA = frozenset({"detach", "clone", "contiguous"})


def _same_metadata(value: ast.AST | None, chain: str) -> bool:
    return isinstance(value, ast.Call) and not value.args and not value.keywords and \
        isinstance(value.func, ast.Attribute) and value.func.attr in _SAME_METADATA and \
        _self_chain(value.func.value) == chain


def _resets(ctx) -> frozenset[str]:
    """Containers the function empties itself (`self.outs = []`, `self.outs.clear()`): what it
    appends afterwards does not accumulate across calls."""
    memo = ctx.__dict__.get("_ptc110_resets")
    if memo is None:
        out = set()
        for n in ast.walk(ctx.node):
            if isinstance(n, ast.Assign) and isinstance(n.value, (ast.List, ast.Dict, ast.Set)) and \
                    not getattr(n.value, "elts", getattr(n.value, "keys", None)):
                out.update(c for c in map(_self_chain, n.targets) if c)
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "clear":
                chain = _self_chain(n.func.value)
                if chain:
                    out.add(chain)
        memo = ctx.__dict__["_ptc110_resets"] = frozenset(out)
    return memo


def _containers(ctx) -> frozenset[str]:
    """Attributes the class's constructor sets to a list/dict/set (`self.cache = {}`)."""
    memo = ctx.mod.__dict__.setdefault("_ptc110_containers", {})
    cls = ctx.cls
    if cls is None:
        return frozenset()
    hit = memo.get(cls.name)
    if hit is None:
        out = set()
        node = next((n for n in ctx.mod.tree.body if isinstance(n, ast.ClassDef) and n.name == cls.name), None)
        for item in (node.body if node is not None else ()):
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and "init" in item.name:
                for st in ast.walk(item):
                    if isinstance(st, (ast.Assign, ast.AnnAssign)) and st.value is not None and (
                            isinstance(st.value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp)) or
                            isinstance(st.value, ast.Call) and ctx.mod.resolve(st.value.func) in _CONTAINER_CTORS):
                        for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
                            chain = _self_chain(t)
                            if chain:
                                out.add(chain)
        hit = memo[cls.name] = frozenset(out)
    return hit


def local_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """`self.freqs = self.freqs.to(x.dtype)` ... `x * self.freqs` -> `freqs = ...` ... `x * freqs`:
    the stored value becomes a local, and the function's later reads of the attribute read it.
    Only for a plain store of `self.<name>` in the function's own body (not under an `if`: a
    cache filled on some calls), read back later in the function, that no other method of the
    class reads or writes (`__init__` aside): then the module's state was only a way to pass the
    value down the function. The edit spans the store to the statement holding the last read."""
    st, body, lines = finding_statement(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None or not isinstance(st, ast.Assign) or len(st.targets) != 1:
        return []
    target = st.targets[0]
    chain = _self_chain(target)
    if chain is None or chain.count(".") != 1 or (target.lineno, target.col_offset) != (finding.line, finding.col):
        return []
    attr = chain.split(".")[1]
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and fn in c.body), None)
    if cls is None:
        return []
    for other in cls.body:
        if isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) and other is not fn and \
                other.name != "__init__" and _mentions(other, chain, attr):
            return []
    if any(isinstance(n, ast.Name) and n.id == attr for n in ast.walk(fn)) or \
            attr in [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]:
        return []
    if body is not fn.body:
        return _nested_local(code, finding, fn, st, chain, attr, lines)
    if not _converted_only(st.value, chain):
        return []
    end = st.end_lineno or st.lineno
    reads = [n for n in ast.walk(fn) if isinstance(n, ast.Attribute) and _self_chain(n) == chain
             and isinstance(n.ctx, ast.Load) and n.lineno > end]
    stores = [n for n in ast.walk(fn) if n is not target and (
        isinstance(n, ast.Attribute) and _self_chain(n) == chain and not isinstance(n.ctx, ast.Load)
        or _mentions_by_name(n, attr))]
    if not reads or stores:
        return []
    last = max(reads, key=lambda n: (n.lineno, n.col_offset))
    stop = next(s for s in fn.body if s.lineno <= last.lineno <= (s.end_lineno or s.lineno))
    new = replace_spans(lines, st.lineno, stop.end_lineno or stop.lineno,
                        [(*node_span(target), attr)] + [(*node_span(n), attr) for n in reads])
    return [Candidate(code=code, path=finding.path, start_line=st.lineno, end_line=stop.end_lineno or stop.lineno,
                      lines=tuple(new), title=f"keep it local: `{attr}` instead of `{chain}`", safe=False)]


def _nested_local(code: str, finding, fn: ast.AST, st: ast.Assign, chain: str, attr: str,
                  lines: list[str]) -> list[Candidate]:
    """A store under an `if` (or in a loop) of the function's statement `top`: `<attr> = self.<attr>`
    before `top`, then `top` and the rest of the function up to the last mention read and write the
    local. Only where each store in `top` is an idempotent conversion of what the module held
    (`if self.k.device != x.device: self.k = self.k.to(x.device)`), so every call computes the
    same from the constructor's value. (State the function first resets itself, `self.t =
    zeros_like(x)` ... `if eps: self.t = self.t.mul(...)`, is left alone: measured on torch 2.13
    it compiles once, there is no recompile to remove.)"""
    top = next(s for s in fn.body if s.lineno <= st.lineno <= (s.end_lineno or s.lineno))
    if not owns_lines(lines, top):
        return []
    nodes = _chain_nodes(fn, chain)
    mine = [n for n in nodes if n.lineno >= top.lineno]
    stored = [n for n in mine if not isinstance(n.ctx, ast.Load)]
    assigns = [a for a in ast.walk(top) if type(a) is ast.Assign and len(a.targets) == 1
               and _self_chain(a.targets[0]) == chain]
    end = top.end_lineno or top.lineno
    if len(assigns) != len(stored) or any(n.lineno > end for n in stored) or any(
            _mentions_by_name(n, attr) for n in ast.walk(fn)) or \
            not all(chain in _chains_read(a.value) and _converted_only(a.value, chain) for a in assigns):
        return []
    last = max(mine, key=lambda n: (n.lineno, n.col_offset))
    stop = next(s for s in fn.body if s.lineno <= last.lineno <= (s.end_lineno or s.lineno))
    stop_end = stop.end_lineno or stop.lineno
    new = statement_lines(indentation(lines, top), f"{attr} = {chain}") + \
        replace_spans(lines, top.lineno, stop_end, [(*node_span(n), attr) for n in mine])
    return [Candidate(code=code, path=finding.path, start_line=top.lineno, end_line=stop_end, lines=tuple(new),
                      title=f"keep it local: `{attr}` instead of `{chain}`", safe=False)]


# -- a cache filled inside compiled code: skip it while compiling ---------------------------------
#
# `if key not in self.cache: self.cache[key] = <value>` then `return self.cache[key]` (timm's
# attention-bias caches keyed by device), or `<value>` computed into a local after a missed
# lookup and stored with `self.cache[key] = value` (timm's pinv cache): the function's result is
# the value either way, and the cache only spares eager calls the computation. Compiled code
# that fills it changes the dict dynamo guards on, so the next call compiles again (once per key,
# measured in tests/test_fix_state.py). While compiling, computing the value every call gives
# the same result inside one graph; eager calls keep the cache.


def _emptied(v: ast.AST | None) -> bool:
    """An empty container, or None: what a method that resets a cache stores."""
    if isinstance(v, ast.Constant):
        return v.value is None
    if isinstance(v, ast.Dict):
        return not v.keys
    if isinstance(v, (ast.List, ast.Set, ast.Tuple)):
        return not v.elts
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and not v.args and not v.keywords and \
        v.func.id in ("dict", "list", "set", "OrderedDict")


def _reset_only(cls: ast.ClassDef, fn: ast.AST, chain: str) -> bool:
    """Every mention of `chain` in the class's other methods (`__init__` aside) empties it
    (`self.cache = {}`, `self.cache.clear()`) or tests whether it holds anything (`if
    self.cache:`): nothing outside `fn` reads what `fn` stores there."""
    attr = chain.split(".")[-1]
    for other in cls.body:
        if not isinstance(other, (ast.FunctionDef, ast.AsyncFunctionDef)) or other is fn or other.name == "__init__":
            continue
        parents = parents_of(other)
        for n in ast.walk(other):
            if _mentions_by_name(n, attr):
                return False
            if not (isinstance(n, ast.Attribute) and _self_chain(n) == chain):
                continue
            p = parents.get(id(n))
            if isinstance(n.ctx, ast.Store):
                ok = isinstance(p, ast.Assign) and _emptied(p.value)
            elif isinstance(p, ast.Attribute):
                ok = p.attr == "clear" and isinstance(parents.get(id(p)), ast.Call)
            else:   # `if self.cache:`, `if mode and self.cache:`
                test = n
                while isinstance(p, ast.BoolOp) or isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not):
                    test, p = p, parents.get(id(p))
                ok = isinstance(p, ast.If) and p.test is test
            if not ok:
                return False
    return True


def _chain_nodes(node: ast.AST, chain: str) -> list[ast.Attribute]:
    return [n for n in ast.walk(node) if isinstance(n, ast.Attribute) and _self_chain(n) == chain]


def cache_fixes(code: str, finding, source: str, tree: ast.Module) -> list[Candidate]:
    """The store `self.<cache>[key] = value` of a cache the function fills and reads itself (the
    rule's doc): skipped while compiling (`torch.compiler.is_compiling()`), or where the module
    does not bind `torch`, dropped (the value computed on every call)."""
    st, body, lines = finding_statement(finding, source, tree)
    fn = enclosing_function(tree, st) if st is not None else None
    if fn is None or type(st) is not ast.Assign or len(st.targets) != 1:
        return []
    target = st.targets[0]
    slot = type(target) is ast.Attribute    # `self.c = value`: a cache of one entry
    chain = _self_chain(target) if slot else _self_chain(target.value) if type(target) is ast.Subscript else None
    if chain is None or (target.lineno, target.col_offset) != (finding.line, finding.col):
        return []
    cls = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and fn in c.body), None)
    if cls is None or not _reset_only(cls, fn, chain) or any(_mentions_by_name(n, chain.split(".")[-1])
                                                              for n in ast.walk(fn)):
        return []
    guard = binds_torch(tree) and not function_binds(tree, st, "torch")
    parents = parents_of(fn)
    holder = parents.get(id(st))
    key = None if slot else ast.dump(target.slice)
    if type(holder) is ast.If and holder.body == [st] and not holder.orelse and owns_lines(lines, holder) and \
            not is_elif(lines, holder) and (chain in _chains_read(holder.test) if slot else
                                            _misses(holder.test, chain, key)):
        return _read_through(code, finding, fn, holder, st, chain, key, lines, guard)
    if slot:
        return []
    end = st.end_lineno or st.lineno
    if type(st.value) is not ast.Name or any(n.lineno > end for n in _chain_nodes(fn, chain)) or \
            not any(first <= st.lineno <= last and chain in read for first, last, read in _state_tests(fn)):
        return []
    # `value` computed after a missed lookup, then stored: the function goes on with the local
    if guard:
        indent = indentation(lines, st)
        return [replace_statement(code, finding.path, st, [f"{indent}if not torch.compiler.is_compiling():"]
                                  + nested(lines, st, indent_unit(indent, lines)),
                                  f"fill `{chain}` in eager only: skip the store while compiling "
                                  "(`torch.compiler.is_compiling()`)", safe=True)]
    return [replace_statement(code, finding.path, st, [f"{indentation(lines, st)}pass"] if len(body) == 1 else [],
                              f"do not cache in `{chain}`: compute the value on every call", safe=False)]


def _misses(test: ast.AST, chain: str, key: str) -> bool:
    """`key not in self.<cache>`."""
    return type(test) is ast.Compare and len(test.ops) == 1 and type(test.ops[0]) is ast.NotIn and \
        ast.dump(test.left) == key and _self_chain(test.comparators[0]) == chain


def _read_through(code, finding, fn, holder, st, chain, key, lines, guard) -> list[Candidate]:
    """`if key not in self.c: self.c[key] = value` and the next statement reading `self.c[key]`
    once, nothing after it reading the cache: that statement computes `value` itself while
    compiling (a `return`, with torch bound), or always. `key` None: a cache of one entry,
    `if <test of self.c>: self.c = value` then `return self.c` (or `return self.c[i]` of a
    stored tuple `(key, value)`: its element)."""
    block = next((b for b in _blocks(fn) if holder in b), None)
    i = block.index(holder) if block is not None else -1
    nxt = block[i + 1] if 0 <= i < len(block) - 1 else None
    if nxt is None or not owns_lines(lines, nxt):
        return []
    mentions = _chain_nodes(nxt, chain)
    end = nxt.end_lineno or nxt.lineno
    made = st.value
    if key is None:
        got = nxt.value if type(nxt) is ast.Return else None
        if isinstance(got, ast.Subscript) and isinstance(made, ast.Tuple) and isinstance(got.slice, ast.Constant) \
                and type(got.slice.value) is int and -len(made.elts) <= got.slice.value < len(made.elts):
            made = made.elts[got.slice.value]
        elif not isinstance(got, ast.Attribute):
            return []
        one = mentions[0] if len(mentions) == 1 else None
        reads = [got] if one is not None and (got is one or isinstance(got, ast.Subscript) and got.value is one) else []
    else:
        reads = [n for n in ast.walk(nxt) if type(n) is ast.Subscript and isinstance(n.ctx, ast.Load)
                 and _self_chain(n.value) == chain and ast.dump(n.slice) == key]
    if len(mentions) != 1 or len(reads) != 1 or any(n.lineno > end for n in _chain_nodes(fn, chain)):
        return []
    read = reads[0]
    value = segment(lines, made)
    atom = isinstance(made, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
    indent = indentation(lines, holder)
    if guard and type(nxt) is ast.Return and nxt.value is read:
        new = [f"{indent}if torch.compiler.is_compiling():"] + \
            statement_lines(indent + indent_unit(indent, lines), f"return {value}") + lines[holder.lineno - 1:end]
        # safe only for a keyed cache: `key not in self.c` says a value is missing, so the
        # value is what the read returns; a one-entry cache's test may mean anything
        # (`self.c is not None and self.c.shape != x.shape` returns None where the value is)
        return [Candidate(code=code, path=finding.path, start_line=holder.lineno, end_line=end, lines=tuple(new),
                          title=f"skip the cache while compiling: return the value, `{chain}` filled in eager only "
                                "(`torch.compiler.is_compiling()`)", safe=key is not None)]
    new = with_replaced(lines, nxt, read, value if atom else f"({value})")
    return [Candidate(code=code, path=finding.path, start_line=holder.lineno, end_line=end, lines=tuple(new),
                      title=f"do not cache in `{chain}`: compute the value on every call", safe=False)]


# Conversions whose result converted again is the same: `self.x = self.x.to(x.dtype)` stores
# what every call recomputes from the constructor's value alike, so a local loses nothing. A
# value computed otherwise from the state (`self.ema = d * self.ema + (1 - d) * v`) accumulates
# across calls: that state is the point, not a way to pass a value down the function.
_IDEMPOTENT = frozenset({"to", "type", "float", "half", "double", "bfloat16", "cpu", "cuda", "contiguous",
                         "detach"})


def _converted_only(value: ast.AST, chain: str) -> bool:
    """Every read of `chain` in `value` is the receiver of an idempotent conversion."""
    parents = parents_of(value)
    for n in ast.walk(value):
        if isinstance(n, ast.Attribute) and _self_chain(n) == chain:
            p = parents.get(id(n))
            if not (isinstance(p, ast.Attribute) and p.attr in _IDEMPOTENT and
                    isinstance(parents.get(id(p)), ast.Call) and parents[id(p)].func is p):
                return False
    return True


def _mentions(fn: ast.AST, chain: str, attr: str) -> bool:
    """`fn` reads or writes `self.<attr>` (directly or by `getattr`/`setattr`/`delattr` name)."""
    return any(isinstance(n, ast.Attribute) and _self_chain(n) == chain or _mentions_by_name(n, attr)
               for n in ast.walk(fn))


def _mentions_by_name(n: ast.AST, attr: str) -> bool:
    return isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and \
        n.func.id in ("getattr", "setattr", "delattr", "hasattr") and len(n.args) >= 2 and \
        isinstance(n.args[1], ast.Constant) and n.args[1].value == attr


class ModuleStateMutation(Rule):
    """## What it does
    Flags module state that compiled code changes and reads back: an attribute of `self` (or
    of a submodule, `self.rope.cache`) replaced by something derived from it
    (`self.freqs = self.freqs.to(x.dtype)`), augmented (`self.calls += 1`), or filled under a
    test of it (a position cache built on the first call: `if self.cache is None:
    self.cache = ...`); a list or dict the constructor made that `forward` grows
    (`self.outputs.append(y)`, `self.cache[key] = v`); the same through `setattr(self, ...)`.
    A store made only when a test of the state it fills finds it missing (a cache filled under
    `if key not in self.cache:` or after `hit = self.cache.get(key); if hit is not None: return
    hit`, a helper called only under `if not self.registered:`), one under a test the store
    itself makes false (`if self.k.dtype != x.dtype: self.k = self.k.to(x.dtype)`, `if self.state
    is None or self.state.shape[0] != n: self.state = torch.zeros(n, d)`), and a value written
    back (`t = self.cache.get(k); if t is None: t = make(); self.cache[k] = t`,
    `self.cache.setdefault(k, make())`, `self.x = self.x if self.x is not None else make()`:
    on a hit it stores the object it read) are reported as costing one compile per new key,
    not one per call. Plain stores of a value computed in the call
    (`self.last = x.detach()`), and in-place updates of buffers (`self.buf.copy_(x)`,
    `self.steps += 1` on a registered buffer), are not flagged: they do not recompile.

    ## Why is this bad?
    Dynamo guards on what the compiled code reads from `self`; a call that stores a different
    object there fails the guard on the next call, and the function compiles again. Measured on
    torch 2.13 (CPU, no graph break in any of these): `self.freqs = self.freqs.to(x.dtype)`
    with float64 inputs compiles twice in four calls and once more each time the input dtype
    changes (`.to(x.device)` is a no-op on CPU and costs the same recompile on a GPU, where the
    first call moves the tensor); a rope cache stored on the first call compiles twice, and a
    cache filled once per key compiles twice in six calls with one key (written back or not), and
    once more per new key or dtype, then not again; a
    counter (`self.calls += 1`) or a list that grows compiles on *every* call until the
    recompile limit (8), after which torch gives up on the frame (GB0039, "Dynamo recompile
    limit exceeded") and runs it eagerly. Inside compiled code such state is also invisible to
    `torch.export`, which traces one call.

    ## Example
    ```python
    def forward(self, x):
        self.freqs = self.freqs.to(x.device, x.dtype)
        return x * self.freqs
    ```

    ## Use instead
    Keep per-call values local, register fixed tensors as buffers at construction and move the
    module once (`model.to(device, dtype)`), or update a buffer in place:
    ```python
    def forward(self, x):
        freqs = self.freqs.to(x.device, x.dtype)
        return x * freqs
    ```
    Fix offered (not safe: the module no longer keeps the value; run and compared before it is
    posted) for a plain `self.<name> = ...` in the function's own body (not under an `if`) that
    the function reads back later and no other method but `__init__` touches: the store becomes
    the local `<name>` and the later reads read it (one edit from the store to the last read).
    The same under an `if` or in a loop when every store there is an idempotent conversion of
    the attribute (`if self.k.device != x.device: self.k = self.k.to(x.device)`): `<name> =
    self.<name>` before that statement, and the local from there to the last read.
    A cache the function fills and reads itself, that other methods (`__init__` aside) only
    empty or test (`self.cache = {}` or `None`, `self.cache.clear()`, `if self.cache:`): `if key
    not in self.cache: self.cache[key] = <value>` followed by `return self.cache[key]` (or one
    entry, `if <test of self.c>: self.c = <value>` then `return self.c`, or `self.c = (key,
    <value>)` then `return self.c[1]`) gets `if torch.compiler.is_compiling(): return <value>`
    before it (safe for the keyed cache: eager runs exactly as before and keeps the cache;
    compiled code computes the value in its graph and never changes the dict it would guard on;
    not safe for one entry, whose test may mean more than "missing": `self.c is not None and
    self.c.shape != x.shape` returns None where compiled code would return the value; where the module does
    not bind `torch`, not safe: the store goes and the statement reading the cache reads
    `<value>`); a local computed after a missed lookup and then stored (`m =
    self.cache.get(k)`, `if m is not None: return m`, ..., `self.cache[k] = m`) gets the store
    under `if not torch.compiler.is_compiling():` (safe; or, without `torch`, no store).
    A counter, a container that grows, other caches, state other methods read: the text above
    (a buffer set at construction, the module moved once), no candidate.
    """

    code = "PTC110"
    name = "module-state-mutation"
    summary = "state stored on `self` inside compiled code and read there (guard, recompiles)"
    severity = "warning"
    claim = "recompile"
    doc_url = "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html"
    node_types = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Call)
    call_keys = frozenset({"setattr", *("." + m for m in _MUTATORS)})

    @classmethod
    def fixes(cls, finding, source, tree):
        return local_fixes(cls.code, finding, source, tree) or cache_fixes(cls.code, finding, source, tree)

    def check(self, ctx, node):
        # decided once per function (this runs at every assignment of every walked function)
        off = ctx.__dict__.get("_ptc110_off")
        if off is None:
            off = ctx.__dict__["_ptc110_off"] = ctx.cls is None or \
                ctx.info.qualname.endswith(("__init__", "__setstate__"))
        if off:
            return
        t = type(node)
        if t is ast.Call:
            self._check_call(ctx, node)
            return
        targets = node.targets if t is ast.Assign else [node.target]
        for t in targets:
            if type(t) is ast.Name:
                continue        # a local: not module state
            for el in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                self._check_target(ctx, node, el)

    def _check_target(self, ctx, node, t):
        if isinstance(t, ast.Subscript):
            chain = _self_chain(t.value)
            # `self.cache[k] = v` on a dict/list the constructor made (a buffer's `self.buf[i] = v`
            # is an in-place tensor update and fine)
            if chain and chain in _containers(ctx):
                self._report(ctx, t, chain, self._how(ctx, node, chain, t))
            return
        chain = _self_chain(t)
        if chain is None:
            return
        if isinstance(node, ast.AugAssign):
            # `self.steps += 1` on a registered buffer is an in-place add, not a new object
            if chain.count(".") == 1 and ctx.self_tensor_attr(t):
                return
            self._report(ctx, t, chain, "counter")
        elif _transition(ctx, node, node.value, chain) and not _same_metadata(node.value, chain):
            self._report(ctx, t, chain, "once" if _settled(ctx, node, t, chain) else "stores")
        elif type(node) is ast.Assign and _written_back(ctx, node, t, chain):
            # `t = self.x; if t is None: t = make(); self.x = t`: filled on the first call
            self._report(ctx, t, chain, "once")

    def _check_call(self, ctx, node):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _MUTATORS:
            chain = _self_chain(f.value)
            if chain and chain in _containers(ctx) and chain not in _resets(ctx):
                # `setdefault` adds only a missing key (unless what it returns is grown on)
                how = "once" if f.attr == "setdefault" and id(node) not in _grown_defaults(ctx) else \
                    self._how(ctx, node, chain)
                self._report(ctx, node, chain, how)
        elif isinstance(f, ast.Name) and f.id == "setattr" and len(node.args) == 3 and \
                isinstance(node.args[0], ast.Name) and node.args[0].id == "self":
            name = node.args[1].value if isinstance(node.args[1], ast.Constant) else None
            if isinstance(name, str) and _transition(ctx, node, node.args[2], f"self.{name}"):
                self._report(ctx, node, f"self.{name}", "stores")

    @staticmethod
    def _how(ctx, node, chain, target=None):
        """A container store: once per key (under a test of the state it fills, or of one the
        store makes false, or a value written back), on the calls a test of other module state
        picks, or on every call."""
        if _once(ctx, node, chain) or target is not None and _settled(ctx, node, target, chain):
            return "once"
        return "stores" if _under_state_test(ctx, node) else "grows"

    def _report(self, ctx, node, chain, how):
        if how == "once":
            what = (f"`{chain}` is stored inside compiled code only on the calls where a test of module state "
                    "finds it missing or out of date (a cache miss, a first call, a new device, dtype or size); "
                    "the other calls keep, or write back, the object it holds: dynamo guards on that state, so "
                    "each such call compiles once more (once per new key), not every call")
        elif how == "stores":
            what = (f"`{chain}` is stored on the module inside compiled code and read there: dynamo guards on "
                    "it, so a call that stores a different object (another dtype or device, a cache built on "
                    "the first call) recompiles")
        else:
            what = (f"`{chain}` changes on every call inside compiled code: dynamo guards on it and recompiles "
                    "on each call up to the recompile limit (8), then runs the frame eagerly")
        ctx.report(self.code, node, what + "; keep per-call values local, or set module state at construction "
                   "(`register_buffer`, `model.to(...)` once)")
