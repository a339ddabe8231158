"""One pass over one file: imports, classes, call sites, and candidate findings.

Why one pass: `pt2bot check` must cost about as much as parsing. Each file is parsed once
and every function body is walked once. The walk collects the calls the cross-file graph
needs *and* runs every rule as if the function were compiled; the candidates of functions
that turn out not to be compiled are dropped later (pt2bot/rules/_graph.py). So nothing
needs a second parse or a second walk, and files can be analysed in separate processes
(the result, `FileSummary`, is plain picklable data).
"""
from __future__ import annotations

import ast
from typing import Callable, Iterable

from pt2bot.rules._infer import (
    COMPILE_FUNCS,
    DISABLE_FUNCS,
    OTHER,
    PARAM,
    TENSOR,
    TENSORISH,
    FunctionContext,
    ModuleContext,
    Rules,
    is_compiling_check,
)
from pt2bot.rules._model import ClassInfo, FileSummary, FunctionInfo, module_name

class Walker:
    """The single recursive walk of a function body: kinds, calls, rule dispatch."""

    def __init__(self, ctx: FunctionContext) -> None:
        self.ctx = ctx
        self.handlers = ctx.mod.rules.handlers

    def walk(self, node: ast.AST) -> None:
        t = type(node)
        if t is ast.Call:
            # resolved once per call, used by the call graph and by every rule (see call_target)
            self.ctx.call_target = self.ctx.mod.resolve(node.func)
        hs = self.handlers.get(t)
        if hs:
            for h in hs:
                h(self.ctx, node)
        m = _SPECIAL.get(t)
        if m is not None:
            m(self, node)
            return
        fields = _CHILD_FIELDS.get(t)
        if fields is None:
            fields = _child_fields(t)
        for name in fields:
            v = getattr(node, name, None)
            if v is None:
                continue
            if type(v) is list:
                for item in v:
                    if isinstance(item, ast.AST) and type(item) not in _LEAVES:
                        self.walk(item)
            elif type(v) not in _LEAVES and isinstance(v, ast.AST):
                self.walk(v)

    def walk_all(self, nodes: Iterable[ast.AST]) -> None:
        for n in nodes:
            self.walk(n)

    # statements that change the environment or the context
    def _assign(self, node: ast.Assign) -> None:
        self.walk(node.value)
        k = self.ctx.kind(node.value)
        for t in node.targets:
            self.ctx.assign(t, k, node.value)
            self._walk_target(t, node.value)

    def _walk_target(self, t: ast.AST, value: ast.AST) -> None:
        if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                and self.ctx.cls is not None and isinstance(value, ast.Call):
            ctor = self.ctx.mod.resolve(value.func)
            if ctor:
                self.ctx.cls.attrs.setdefault(t.attr, ctor)
        if not isinstance(t, ast.Name):
            self.walk(t)

    def _annassign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.walk(node.value)
            self.ctx.assign(node.target, self.ctx.kind(node.value), node.value)
            self._walk_target(node.target, node.value)

    def _augassign(self, node: ast.AugAssign) -> None:
        self.walk(node.value)
        if isinstance(node.target, ast.Name):
            k = self.ctx.kind(ast.BinOp(left=node.target, op=node.op, right=node.value))
            self.ctx.env[node.target.id] = k
        else:
            self.walk(node.target)

    def _namedexpr(self, node: ast.NamedExpr) -> None:
        self.walk(node.value)
        self.ctx.assign(node.target, self.ctx.kind(node.value), node.value)

    def _loop(self, node: ast.For | ast.While | ast.AsyncFor) -> None:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            self.walk(node.iter)
            it = self.ctx.kind(node.iter)
            self.ctx.assign(node.target, TENSOR if it in TENSORISH else OTHER)
        else:
            self.walk(node.test)
        self.ctx.loop_depth += 1
        self.walk_all(node.body)
        self.ctx.loop_depth -= 1
        self.walk_all(node.orelse)

    def _if(self, node: ast.If) -> None:
        self.walk(node.test)
        c = is_compiling_check(self.ctx.mod, node.test)
        self._branch(node.body, c == -1)
        self._branch(node.orelse, c == 1)

    def _branch(self, body: list[ast.stmt], eager: bool) -> None:
        if eager:
            self.ctx.eager_only += 1
        self.walk_all(body)
        if eager:
            self.ctx.eager_only -= 1

    def _comp(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        for g in node.generators:
            self.walk(g.iter)
            self.ctx.assign(g.target, TENSOR if self.ctx.kind(g.iter) in TENSORISH else OTHER)
            for cond in g.ifs:
                self.walk(cond)
        self.ctx.loop_depth += 1
        if isinstance(node, ast.DictComp):
            self.walk(node.key)
            self.walk(node.value)
        else:
            self.walk(node.elt)
        self.ctx.loop_depth -= 1

    def _call(self, node: ast.Call) -> None:
        _record_call(self.ctx, node, self.ctx.call_target)
        f = node.func
        if type(f) is ast.Attribute:
            if type(f.value) not in _LEAVES:
                self.walk(f.value)
        elif type(f) not in _LEAVES:
            self.walk(f)
        for a in node.args:
            if type(a) not in _LEAVES:
                self.walk(a)
        for k in node.keywords:
            if type(k.value) not in _LEAVES:
                self.walk(k.value)

    def _funcdef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        # A nested function: its body is part of the enclosing compiled code; parameters shadow.
        saved = dict(self.ctx.env)
        for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs:
            self.ctx.env[a.arg] = PARAM
        self.walk_all(node.body)
        self.ctx.env = saved

    def _lambda(self, node: ast.Lambda) -> None:
        saved = dict(self.ctx.env)
        for a in node.args.args:
            self.ctx.env[a.arg] = PARAM
        self.walk(node.body)
        self.ctx.env = saved

    def _classdef(self, node: ast.ClassDef) -> None:
        return   # a class defined inside a function is not compiled by calling the function


# Nodes without children that matter: never visited (a large share of all nodes).
_LEAVES = frozenset({ast.Name, ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break,
                     ast.Continue, ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal})
_NOT_CHILDREN = frozenset({"ctx", "type_comment", "kind", "id", "attr", "arg", "name", "names", "level",
                           "module", "conversion", "is_async", "op", "ops", "returns", "annotation",
                           "type_params", "simple"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(t: type) -> tuple[str, ...]:
    fields = tuple(f for f in t._fields if f not in _NOT_CHILDREN)
    _CHILD_FIELDS[t] = fields
    return fields


_SPECIAL: dict[type, Callable[[Walker, ast.AST], None]] = {
    ast.Assign: Walker._assign, ast.AnnAssign: Walker._annassign, ast.AugAssign: Walker._augassign,
    ast.NamedExpr: Walker._namedexpr, ast.For: Walker._loop, ast.AsyncFor: Walker._loop,
    ast.While: Walker._loop, ast.If: Walker._if, ast.ListComp: Walker._comp, ast.SetComp: Walker._comp,
    ast.GeneratorExp: Walker._comp, ast.DictComp: Walker._comp, ast.Call: Walker._call,
    ast.FunctionDef: Walker._funcdef, ast.AsyncFunctionDef: Walker._funcdef, ast.Lambda: Walker._lambda,
    ast.ClassDef: Walker._classdef,
}


def _record_call(ctx: FunctionContext, node: ast.Call, target: str | None) -> None:
    """Remember call edges for the call graph (kinds: self, selfattr, name)."""
    f = node.func
    calls = ctx.info.calls
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        calls.append(("self", f.attr))
        return
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Attribute) and \
            isinstance(f.value.value, ast.Name) and f.value.value.id == "self" and f.attr == "forward":
        calls.append(("selfattr", f.value.attr))
        return
    if target is None:
        return
    if target in COMPILE_FUNCS and node.args:
        _record_root(ctx.mod, node.args[0])
    calls.append(("name", target))


def _record_root(mod: ModuleContext, arg: ast.AST) -> None:
    """`torch.compile(f)`, `torch.compile(Net())`, `torch.export.export(Net(), ...)`."""
    if isinstance(arg, ast.Call):
        arg = arg.func
    name = mod.resolve(arg)
    if name and "." not in name.strip(".") and name in mod.summary.module_names:
        name = mod.summary.module_names[name]
    if name:
        mod.summary.roots.append(name)


def _decorator_name(mod: ModuleContext, d: ast.AST) -> str | None:
    return mod.resolve(d.func if isinstance(d, ast.Call) else d)


class LiveModule:
    """What a worker keeps of one file between rounds: the AST nodes of its functions."""

    def __init__(self, mod: ModuleContext, nodes: dict[str, tuple[ast.AST, ClassInfo | None]]) -> None:
        self.mod = mod
        self.nodes = nodes
        self.walked: set[str] = set()

    def walk(self, qualnames: Iterable[str]) -> None:
        for q in qualnames:
            if q in self.walked or q not in self.nodes:
                continue
            self.walked.add(q)
            node, cls = self.nodes[q]
            ctx = FunctionContext(self.mod, self.mod.summary.functions[q], node, cls)
            Walker(ctx).walk_all(node.body)


def skeleton_module(path: str, tree: ast.Module, lines: list[str], rules: Rules, *,
                    scan_module_code: bool = True) -> tuple[FileSummary, LiveModule]:
    """Names, imports, classes, decorators, `self.x = ...` attributes; compile/export sites."""
    modname = module_name(path)
    summary = FileSummary(path=path, module=modname, lines=lines)
    mod = ModuleContext(summary, tree, rules)
    package = modname if path.endswith("__init__.py") else modname.rpartition(".")[0]
    body = tree.body
    nodes: dict[str, tuple[ast.AST, ClassInfo | None]] = {}
    for st in body:
        _declare_top(mod, st, modname, package)
    for st in body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _declare_function(mod, st, None, st.name)
            nodes[st.name] = (st, None)
        elif isinstance(st, ast.ClassDef):
            cls = ClassInfo(st.name, [b for b in (mod.resolve(x) for x in st.bases) if b], {}, {})
            summary.classes[st.name] = cls
            for d in (st.decorator_list if scan_module_code else ()):
                _walk_module_level(mod, d)
            for item in st.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    q = f"{st.name}.{item.name}"
                    cls.methods[item.name] = q
                    _declare_function(mod, item, cls, q)
                    if "init" in item.name or "build" in item.name or "setup" in item.name:
                        # submodules are assigned at construction time
                        _scan_self_attrs(mod, cls, item.body)
                    nodes[q] = (item, cls)
                elif scan_module_code and not isinstance(item, ast.ClassDef):
                    _walk_module_level(mod, item)
        elif scan_module_code:
            _walk_module_level(mod, st)
    live = LiveModule(mod, nodes)
    if scan_module_code:
        # Functions that mention compile/export may call torch.compile (roots, PTC4xx rules
        # that apply anywhere): walk them now, whatever the call graph says later.
        marked = [i for i, line in enumerate(lines, 1)
                  if "compile" in line or "export(" in line or "torch.export" in line]
        if marked:
            import bisect
            for q, (node, _) in nodes.items():
                k = bisect.bisect_left(marked, node.lineno)
                if k < len(marked) and marked[k] <= (node.end_lineno or node.lineno):
                    live.walk([q])
    for h in rules.module_handlers:
        h(mod)
    return summary, live


def _scan_self_attrs(mod: ModuleContext, cls: ClassInfo, body: list[ast.stmt]) -> None:
    """`self.x = Ctor(...)` anywhere in a method's statements (not expressions): cheap."""
    for st in body:
        if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
            for t in st.targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    ctor = mod.resolve(st.value.func)
                    if ctor:
                        cls.attrs.setdefault(t.attr, ctor)
        elif isinstance(st, (ast.If, ast.For, ast.While, ast.With, ast.Try, ast.AsyncFor, ast.AsyncWith)):
            for field in ("body", "orelse", "finalbody"):
                _scan_self_attrs(mod, cls, getattr(st, field, []) or [])
            for h in getattr(st, "handlers", []):
                _scan_self_attrs(mod, cls, h.body)


def _declare_top(mod: ModuleContext, st: ast.stmt, modname: str, package: str) -> None:
    names = mod.summary.module_names
    if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        names[st.name] = f"{modname}.{st.name}"
    elif isinstance(st, ast.Import):
        for a in st.names:
            if a.asname:
                mod.imports[a.asname] = a.name
            else:
                head = a.name.partition(".")[0]
                mod.imports[head] = head
    elif isinstance(st, ast.ImportFrom):
        base = st.module or ""
        if st.level:
            pkg_parts = package.split(".") if package else []
            up = st.level - 1
            pkg_parts = pkg_parts[:len(pkg_parts) - up] if up else pkg_parts
            base = ".".join([p for p in pkg_parts if p] + ([st.module] if st.module else []))
        for a in st.names:
            if a.name != "*":
                mod.imports[a.asname or a.name] = f"{base}.{a.name}" if base else a.name
    elif isinstance(st, ast.Assign) and isinstance(st.value, ast.Call):
        callee = mod.resolve(st.value.func) or ""
        if callee.endswith(("getLogger", "get_logger")):
            for t in st.targets:
                if isinstance(t, ast.Name):
                    mod.loggers.add(t.id)
    elif isinstance(st, (ast.If, ast.Try)):
        # `try: import x except ImportError: ...` and `if TYPE_CHECKING:` imports
        for sub in st.body + getattr(st, "orelse", []) + [s for h in getattr(st, "handlers", []) for s in h.body]:
            _declare_top(mod, sub, modname, package)


def _declare_function(mod: ModuleContext, node: ast.FunctionDef | ast.AsyncFunctionDef,
                      cls: ClassInfo | None, qualname: str) -> None:
    info = FunctionInfo(qualname, cls.name if cls else None, node.lineno)
    mod.summary.functions[qualname] = info
    # Decorators run when the function is defined, not when it is called: never walked.
    for d in node.decorator_list:
        name = _decorator_name(mod, d)
        if name in DISABLE_FUNCS:
            info.disabled_at = (d.lineno, d.col_offset)
        elif name in COMPILE_FUNCS:
            info.compiled_root = True


def _walk_module_level(mod: ModuleContext, st: ast.AST) -> None:
    """Module-level code is not compiled, but `torch.compile(...)` calls there matter."""
    info = mod.summary.functions.get("<module>")
    if info is None:
        info = mod.summary.functions["<module>"] = FunctionInfo("<module>", None, 1)
    fake = ast.FunctionDef(name="<module>", args=ast.arguments(posonlyargs=[], args=[], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]), body=[],
                           decorator_list=[], lineno=1, col_offset=0)
    ctx = FunctionContext(mod, info, fake, None)
    Walker(ctx).walk(st)
