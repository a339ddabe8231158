"""How many findings that hold only on an opt-in path carry their `condition`.

Reads `pt2bot check --format json` output (one `<lib>.json` per library, paths relative to
the library's tree) and the library sources, and sorts every finding into one of:

- `conditioned`: it sits on an opt-in path (below) and pt2bot gave it a `condition`;
- `opt-in, unconditioned`: it sits on an opt-in path and has no `condition` (the gap);
- `default`: no opt-in guard found; split into `default, unconditioned` and
  `default, conditioned` (a condition of another kind: an error path, an `except`, a warning;
  or an over-conditioned default-path finding: look at the examples).

"Opt-in path", operationally: the finding sits under a guard (an `if`/`else` branch, a ternary
arm, a later short-circuit operand, the rest of a block after `if c: return`) whose test this
script evaluates to the value that skips the finding on the default call (a forward in eval
mode, float32 inputs, optional arguments at their defaults, modules built with their
constructor defaults and their configuration classes' defaults), where the deciding part is
one of these kinds:

- `training`: `self.training`;
- `optional-arg`: an argument whose default is None/False (`labels is not None`, `exists(x)`,
  `if flag:`), not assigned before the test; not a forward's first argument (its input, which
  the default call passes even where it defaults to None: `input_ids=None`);
- `optional-submodule`: `self.x` built only when a constructor flag is set
  (`self.gate = nn.Linear(...) if gate else None`, or `self.x = None` then `if flag: self.x = ...`),
  tested as `self.x is not None`, `exists(self.x)` or `if self.x:`;
- `flag`: `self.x` whose constructor default is a switch, None, a bool, 0 or 1 (`use_rope=False;
  self.use_rope = use_rope`, `top_k=0`, `num_streams=1`), tested so that the default fails the
  test, or one of the on-request modes switched on by `enable_*()` (`use_tiling`, `use_slicing`,
  `gradient_checkpointing`);
- `config-flag`: `self.config.x` / `config.x` / `self.x = config.x` where the configuration class
  (the annotation of `__init__`'s `config`) defaults `x` to a switch (None, a bool, 0, 1);
- `dtype`: a floating dtype test that float32 does not pass (`x.dtype == torch.float16`);
- `other-default`: any other constant default of an argument or a constructor (`rollout_steps=1`
  tested `rollout_steps > 1`, `mode="nearest"` tested `mode == "bilinear"`): reported apart,
  not counted as opt-in (an argument a compiled caller passes, a mode a parent module picks);
- `caller`: the finding's function is called, in its own file, only under opt-in guards or from
  functions that are themselves opt-in only, and never by name from another file.

What this script does not evaluate (a comparison with a non-zero number, a shape test, a
value computed from several attributes) counts as default: the share is a lower bound of the
opt-in findings, and every `opt-in` verdict names the guard and its kind for a hand check.

usage: python benchmarks/real_code/conditions.py DIR [--base DIR] [--trees /tmp/trees]
       [--examples N] [--lib NAME ...]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

LIBS = ("transformers", "kornia", "timm", "monai", "torchvision", "vit_pytorch", "x_transformers",
        "denoising_diffusion_pytorch")

UNKNOWN = object()      # a value the script cannot tell
OBJECT = object()       # a value that is surely not None and truthy (a module, a tensor)
_ON_REQUEST = ("use_tiling", "use_slicing", "gradient_checkpointing", "use_framewise_encoding",
               "use_framewise_decoding")
_FLOAT32 = {"float32", "float"}
_FLOATS = {"float32", "float", "float16", "half", "bfloat16", "float64", "double"}


@dataclass
class Value:
    v: Any
    kind: str | None = None          # the kind that decided it (see the docstring)
    guard: str = ""


def _is_switch(v: Any) -> bool:
    """None, a bool, 0 or 1: the defaults of a switch (a flag, a weight, a count); a name or a
    size (`mode="nearest"`, `depth=12`) picks among alternatives instead."""
    return v is None or type(v) is bool or (type(v) in (int, float) and v in (0, 1))


def truthy(v: Any) -> Any:
    if v is UNKNOWN:
        return UNKNOWN
    if v is OBJECT:
        return True
    try:
        return bool(v)
    except Exception:
        return UNKNOWN


# ----------------------------------------------------------------------------------- the tree
class Tree:
    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, "File | None"] = {}
        self._names_elsewhere: dict[str, set[str]] | None = None

    def file(self, rel: str) -> "File | None":
        if rel not in self.files:
            path = os.path.join(self.root, rel)
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
                self.files[rel] = File(self, rel, ast.parse(text), text)
            except (OSError, SyntaxError, ValueError):
                self.files[rel] = None
        return self.files[rel]

    def module_file(self, dotted: str) -> str | None:
        base = dotted.replace(".", "/")
        for cand in (base + ".py", base + "/__init__.py"):
            if os.path.exists(os.path.join(self.root, cand)):
                return cand
        return None

    def called_elsewhere(self, rel: str, name: str) -> bool:
        """`name(` / `.name(` / `name,` (passed by reference) in another file of the tree."""
        if self._names_elsewhere is None:
            self._names_elsewhere = {}
            pat = re.compile(r"\b([A-Za-z_]\w*)\b")
            for dirpath, _, files in os.walk(self.root):
                for f in files:
                    if f.endswith(".py"):
                        p = os.path.join(dirpath, f)
                        r = os.path.relpath(p, self.root)
                        try:
                            with open(p, encoding="utf-8", errors="replace") as fh:
                                for w in set(pat.findall(fh.read())):
                                    self._names_elsewhere.setdefault(w, set()).add(r)
                        except OSError:
                            pass
        return bool(self._names_elsewhere.get(name, set()) - {rel})


class File:
    def __init__(self, tree: Tree, rel: str, node: ast.Module, text: str) -> None:
        self.tree, self.rel, self.node, self.text = tree, rel, node, text
        self.lines = text.splitlines()
        self.module = rel[:-3].replace("/", ".")
        if self.module.endswith(".__init__"):
            self.module = self.module[:-9]
        self.imports: dict[str, str] = {}
        self.functions: dict[str, ast.FunctionDef] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        package = self.module if rel.endswith("__init__.py") else self.module.rpartition(".")[0]
        for st in _top(node.body):
            if isinstance(st, ast.ImportFrom):
                base = st.module or ""
                if st.level:
                    parts = package.split(".")
                    up = parts[:len(parts) - (st.level - 1)] if st.level > 1 else parts
                    base = ".".join(up + ([st.module] if st.module else []))
                for a in st.names:
                    self.imports[a.asname or a.name] = f"{base}.{a.name}"
            elif isinstance(st, ast.Import):
                for a in st.names:
                    self.imports[a.asname or a.name.partition(".")[0]] = a.name if a.asname else \
                        a.name.partition(".")[0]
            elif isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[st.name] = st
            elif isinstance(st, ast.ClassDef):
                self.classes[st.name] = st
        self._init_values: dict[str, dict[str, Value]] = {}
        self._opt_in_funcs: dict[str, Value | None] | None = None

    def src(self, e: ast.AST) -> str:
        try:
            return " ".join(ast.unparse(e).split())[:120]
        except Exception:
            return "?"

    # -- names of the tree
    def resolve_class(self, e: ast.AST | None) -> tuple["File", ast.ClassDef] | None:
        if e is None:
            return None
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            e = ast.Name(id=e.value)
        if isinstance(e, ast.Subscript):          # Optional[XConfig]
            e = e.slice
        if isinstance(e, ast.BinOp):              # XConfig | None
            e = e.left
        if not isinstance(e, ast.Name):
            return None
        if e.id in self.classes:
            return self, self.classes[e.id]
        target = self.imports.get(e.id)
        if not target:
            return None
        mod, _, name = target.rpartition(".")
        rel = self.tree.module_file(mod)
        f = self.tree.file(rel) if rel else None
        if f is not None and name in f.classes:
            return f, f.classes[name]
        return None

    def none_test_helper(self, name: str) -> int:
        """+1 if module-level `name(v)` returns `v is not None`, -1 for `v is None`, 0 otherwise
        (also through one `from x import name`)."""
        fn = self.functions.get(name)
        if fn is None and name in self.imports:
            mod, _, n = self.imports[name].rpartition(".")
            rel = self.tree.module_file(mod)
            f = self.tree.file(rel) if rel else None
            if f is not None:
                fn = f.functions.get(n)
        if fn is None or len(fn.args.args) != 1 or len(fn.body) != 1 or not isinstance(fn.body[0], ast.Return):
            return 0
        r = fn.body[0].value
        p = fn.args.args[0].arg
        if isinstance(r, ast.Compare) and len(r.ops) == 1 and isinstance(r.left, ast.Name) and r.left.id == p \
                and isinstance(r.comparators[0], ast.Constant) and r.comparators[0].value is None:
            return 1 if isinstance(r.ops[0], ast.IsNot) else -1 if isinstance(r.ops[0], ast.Is) else 0
        return 0

    # -- a class's attributes as its constructor leaves them
    def init_values(self, cls: ast.ClassDef) -> dict[str, Value]:
        hit = self._init_values.get(cls.name)
        if hit is not None:
            return hit
        out: dict[str, Value] = {}
        self._init_values[cls.name] = out
        # same-file bases first (their constructor runs through super().__init__)
        for b in cls.bases:
            if isinstance(b, ast.Name) and b.id in self.classes and b.id != cls.name:
                out.update(self.init_values(self.classes[b.id]))
        init = next((i for i in cls.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None)
        if init is None:
            return out
        env = Env(self, cls, init, in_init=True)
        elsewhere = _self_stores_outside(cls, init)
        _run_init(env, init.body, out, elsewhere, True)
        # None by default, a module or tensor when a flag is set: an optional submodule
        for n in ast.walk(init):
            if isinstance(n, (ast.Assign, ast.AnnAssign)) and n.value is not None:
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]):
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        v = out.get(t.attr)
                        if v is not None and v.v is None and v.kind != "config-flag" and _builds(n.value):
                            out[t.attr] = Value(None, "built", v.guard)
        return out

    # -- functions reached only under opt-in guards (fixpoint within the file)
    def opt_in_function(self, qual: str) -> Value | None:
        if self._opt_in_funcs is None:
            self._opt_in_funcs = _opt_in_functions(self)
        return self._opt_in_funcs.get(qual)


def _builds(e: ast.AST) -> bool:
    """A call (a module, a tensor), or a ternary with a call in one arm."""
    if isinstance(e, ast.IfExp):
        return _builds(e.body) or _builds(e.orelse)
    return isinstance(e, ast.Call)


def _top(body: list[ast.stmt]):
    for st in body:
        yield st
        if isinstance(st, (ast.If, ast.Try)):
            for sub in st.body + getattr(st, "orelse", []) + [s for h in getattr(st, "handlers", []) for s in h.body]:
                yield sub


def _self_stores_outside(cls: ast.ClassDef, init: ast.AST) -> set[str]:
    out = set()
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item is not init:
            for n in ast.walk(item):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and \
                        isinstance(n.value, ast.Name) and n.value.id == "self":
                    out.add(n.attr)
    return out


def _run_init(env: "Env", body: list[ast.stmt], out: dict[str, Value], elsewhere: set[str], live: bool) -> None:
    """Assignments of `self.x` in `__init__`, each evaluated on the constructor's defaults;
    those in a branch the defaults do not take are skipped, those in an unknown branch make
    the attribute unknown (if they differ from what it held)."""
    for st in body:
        if isinstance(st, (ast.Assign, ast.AnnAssign)):
            targets = st.targets if isinstance(st, ast.Assign) else [st.target]
            if st.value is None:
                continue
            val = env.value(st.value)
            for t in targets:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    if t.attr in elsewhere:
                        out[t.attr] = Value(UNKNOWN)
                    elif live is True:
                        out[t.attr] = val
                    elif live is UNKNOWN:
                        old = out.get(t.attr)
                        if old is None or old.v is not val.v:
                            out[t.attr] = Value(UNKNOWN)
                elif isinstance(t, ast.Name) and live is True:
                    env.locals[t.id] = val
                elif isinstance(t, ast.Name):
                    env.locals[t.id] = Value(UNKNOWN)
        elif isinstance(st, ast.If):
            tv = env.value(st.test)
            t = truthy(tv.v)
            body_live = live if t is True else (False if t is False else (UNKNOWN if live else False))
            else_live = live if t is False else (False if t is True else (UNKNOWN if live else False))
            _run_init(env, st.body, out, elsewhere, body_live)
            _run_init(env, st.orelse, out, elsewhere, else_live)
        elif isinstance(st, (ast.For, ast.While, ast.With, ast.Try)):
            inner = UNKNOWN if live else False
            for fld in ("body", "orelse", "finalbody"):
                _run_init(env, getattr(st, fld, []) or [], out, elsewhere,
                          live if isinstance(st, ast.With) or fld == "finalbody" else inner)
            for h in getattr(st, "handlers", []):
                _run_init(env, h.body, out, elsewhere, UNKNOWN if live else False)


# ----------------------------------------------------------------------------------- values
class Env:
    """Values on the default call inside one function."""

    def __init__(self, f: File, cls: ast.ClassDef | None, fn: ast.AST, in_init: bool = False) -> None:
        self.f, self.cls, self.fn, self.in_init = f, cls, fn, in_init
        self.params: dict[str, ast.AST | None] = {}
        self.annotations: dict[str, ast.AST | None] = {}
        self.locals: dict[str, Value] = {}
        self.assigned: dict[str, int] = {}
        self.line = 1 << 30
        args = getattr(fn, "args", None)
        if args is not None:
            pos = args.posonlyargs + args.args
            defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
            for a, d in list(zip(pos, defaults)) + list(zip(args.kwonlyargs, args.kw_defaults)):
                self.params[a.arg] = d
                self.annotations[a.arg] = a.annotation
            # a forward's first argument is its input: the default call passes it
            inputs = [a for a in pos if a.arg not in ("self", "cls")]
            if getattr(fn, "name", "") == "forward" and inputs:
                self.params[inputs[0].arg] = None
            count: dict[str, int] = {}
            for n in ast.walk(fn):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    self.assigned.setdefault(n.id, n.lineno)
                    self.assigned[n.id] = min(self.assigned[n.id], n.lineno)
                    count[n.id] = count.get(n.id, 0) + 1
            # a local assigned once (`is_var_length = exists(lens)`, `a, b = x, self.flag`): its value
            self.single: dict[str, tuple[ast.AST, int]] = {}
            for n in ast.walk(fn):
                if isinstance(n, ast.Assign) and len(n.targets) == 1:
                    t, v = n.targets[0], n.value
                    pairs = [(t, v)] if isinstance(t, ast.Name) else \
                        list(zip(t.elts, v.elts)) if isinstance(t, ast.Tuple) and isinstance(v, ast.Tuple) and \
                        len(t.elts) == len(v.elts) else []
                    for a, b in pairs:
                        if isinstance(a, ast.Name) and count.get(a.id) == 1 and a.id not in self.params:
                            self.single[a.id] = (b, n.lineno)
        self._depth = 0

    def value(self, e: ast.AST) -> Value:
        t = type(e)
        if t is ast.Constant:
            return Value(e.value)
        if t is ast.Name:
            if self.in_init and e.id in self.locals:
                return self.locals[e.id]
            hit = getattr(self, "single", {}).get(e.id)
            if hit is not None and hit[1] < self.line and self._depth < 5 and not self.in_init:
                self._depth += 1
                saved, self.line = self.line, hit[1]
                try:
                    return self.value(hit[0])
                finally:
                    self._depth -= 1
                    self.line = saved
            if e.id in self.params and e.id not in ("self", "cls"):
                if self.assigned.get(e.id, 1 << 30) < self.line:
                    return Value(UNKNOWN)
                d = self.params[e.id]
                if isinstance(d, ast.Constant) and (d.value is None or d.value is False):
                    return Value(d.value, None if self.in_init else "optional-arg", e.id)
                if isinstance(d, ast.Constant) and self.in_init:
                    # a mode chosen by name or a size is not a switch: what it computes is not known
                    return Value(d.value) if _is_switch(d.value) else Value(UNKNOWN)
                if isinstance(d, ast.Constant):
                    return Value(d.value, "other-default", e.id)
            return Value(UNKNOWN)
        if t is ast.Attribute:
            return self._attr(e)
        if t is ast.UnaryOp and isinstance(e.op, ast.Not):
            v = self.value(e.operand)
            b = truthy(v.v)
            return Value(UNKNOWN if b is UNKNOWN else not b, v.kind, v.guard)
        if t is ast.BoolOp:
            vals = [self.value(v) for v in e.values]
            is_and = isinstance(e.op, ast.And)
            for v in vals:
                b = truthy(v.v)
                if b is (not is_and):       # `and`: the first false decides; `or`: the first true
                    return Value(b, v.kind, v.guard)
                if b is UNKNOWN:
                    return Value(UNKNOWN)
            return Value(is_and, vals[-1].kind, vals[-1].guard)
        if t is ast.Compare and len(e.ops) == 1:
            return self._compare(e)
        if t is ast.IfExp:
            c = self.value(e.test)
            b = truthy(c.v)
            if b is UNKNOWN:
                a, o = self.value(e.body), self.value(e.orelse)
                return a if a.v is o.v and a.v is not UNKNOWN else Value(UNKNOWN)
            v = self.value(e.body if b else e.orelse)
            return Value(v.v, v.kind or c.kind, v.guard or c.guard)
        if t is ast.Call:
            f = e.func
            if isinstance(f, ast.Name) and len(e.args) == 1 and not e.keywords:
                sign = self.f.none_test_helper(f.id)
                if sign:
                    v = self.value(e.args[0])
                    if v.v is UNKNOWN:
                        return Value(UNKNOWN)
                    is_none = v.v is None
                    return Value(is_none if sign < 0 else not is_none, v.kind, v.guard)
            if self.in_init:
                return Value(OBJECT)          # a module, a tensor, a list (truthy or not: see below)
            return Value(UNKNOWN)
        return Value(UNKNOWN)

    def _attr(self, e: ast.Attribute) -> Value:
        base = e.value
        if isinstance(base, ast.Name) and base.id == "self":
            if e.attr == "training" and not self.in_init:
                return Value(False, "training", "self.training")
            if e.attr in _ON_REQUEST:
                return Value(False, "flag", f"self.{e.attr}")
            if self.cls is None:
                return Value(UNKNOWN)
            vals = self.f.init_values(self.cls)
            v = vals.get(e.attr)
            if v is None or v.v is UNKNOWN:
                return Value(UNKNOWN)
            if v.kind == "config-flag":
                return Value(v.v, "config-flag", f"self.{e.attr}")
            if v.v is None:
                return Value(None, "optional-submodule" if v.kind == "built" else "flag", f"self.{e.attr}")
            if v.v is OBJECT:
                return Value(OBJECT)
            if _is_switch(v.v):
                return Value(v.v, "flag", f"self.{e.attr}")
            return Value(v.v, "other-default", f"self.{e.attr}")
        # `self.config.x` / `config.x` (an argument of the constructor, annotated with its class)
        cfg = None
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name) and base.value.id == "self" \
                and base.attr == "config":
            cfg = self._config_class_of_self()
        elif isinstance(base, ast.Name) and base.id == "config" and base.id in self.annotations:
            cfg = self.f.resolve_class(self.annotations["config"])
        if cfg is not None:
            d = _class_default(cfg[0], cfg[1], e.attr)
            if d is not None and (d is _NONE or _is_switch(d)):
                return Value(None if d is _NONE else d, "config-flag", self.f.src(e))
            if d is not None:
                return Value(d, "other-default", self.f.src(e))
        return Value(UNKNOWN)

    def _config_class_of_self(self) -> tuple[File, ast.ClassDef] | None:
        if self.cls is None:
            return None
        init = next((i for i in self.cls.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None)
        if init is None:
            return None
        for a in init.args.args:
            if a.arg == "config":
                return self.f.resolve_class(a.annotation)
        return None

    def _compare(self, e: ast.Compare) -> Value:
        op, left, right = e.ops[0], e.left, e.comparators[0]
        # a dtype test
        for a, b in ((left, right), (right, left)):
            if isinstance(a, ast.Attribute) and a.attr == "dtype":
                names = _dtype_names(b)
                if not names or not names <= _FLOATS:
                    return Value(UNKNOWN)
                hit = bool(names & _FLOAT32)
                if isinstance(op, (ast.Eq, ast.Is, ast.In)):
                    return Value(hit, "dtype", self.f.src(e)) if not hit else Value(True)
                if isinstance(op, (ast.NotEq, ast.IsNot, ast.NotIn)):
                    return Value(not hit, "dtype", self.f.src(e)) if hit else Value(True)
                return Value(UNKNOWN)
        lv = self.value(left)
        rv = self.value(right)
        if lv.v is UNKNOWN or rv.v is UNKNOWN:
            return Value(UNKNOWN)
        kind = lv.kind or rv.kind
        guard = lv.guard or rv.guard
        if isinstance(op, (ast.Is, ast.IsNot)):
            if rv.v is None or lv.v is None:
                other = lv.v if rv.v is None else rv.v
                same = other is None
                return Value(same if isinstance(op, ast.Is) else not same, kind, guard)
            return Value(UNKNOWN)
        if lv.v is OBJECT or rv.v is OBJECT:
            return Value(UNKNOWN)
        try:
            res = {ast.Eq: lambda a, b: a == b, ast.NotEq: lambda a, b: a != b, ast.Lt: lambda a, b: a < b,
                   ast.LtE: lambda a, b: a <= b, ast.Gt: lambda a, b: a > b, ast.GtE: lambda a, b: a >= b}[type(op)](
                lv.v, rv.v)
        except Exception:
            return Value(UNKNOWN)
        return Value(bool(res), kind, guard)


_NONE = object()


def _class_default(f: File, cls: ast.ClassDef, attr: str, depth: int = 0) -> Any:
    """A configuration class's default for `attr`: a class-level annotated default, or its
    constructor's argument default assigned to `self.attr`; None: not known."""
    for st in cls.body:
        if isinstance(st, ast.AnnAssign) and isinstance(st.target, ast.Name) and st.target.id == attr \
                and isinstance(st.value, ast.Constant):
            return _NONE if st.value.value is None else st.value.value
        if isinstance(st, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in st.targets) \
                and isinstance(st.value, ast.Constant):
            return _NONE if st.value.value is None else st.value.value
    init = next((i for i in cls.body if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None)
    if init is not None:
        args = init.args
        pos = args.posonlyargs + args.args
        defaults = [None] * (len(pos) - len(args.defaults)) + list(args.defaults)
        params = dict(list(zip([a.arg for a in pos], defaults)) +
                      list(zip([a.arg for a in args.kwonlyargs], args.kw_defaults)))
        for st in ast.walk(init):
            if isinstance(st, ast.Assign) and len(st.targets) == 1:
                t = st.targets[0]
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" \
                        and t.attr == attr:
                    v = st.value
                    if isinstance(v, ast.Name) and isinstance(params.get(v.id), ast.Constant):
                        c = params[v.id].value
                        return _NONE if c is None else c
                    if isinstance(v, ast.Constant):
                        return _NONE if v.value is None else v.value
                    return None
    if depth < 3:
        for b in cls.bases:
            hit = f.resolve_class(b)
            if hit is not None:
                d = _class_default(hit[0], hit[1], attr, depth + 1)
                if d is not None:
                    return d
    return None


def _dtype_names(e: ast.AST) -> set[str] | None:
    elts = e.elts if isinstance(e, (ast.Tuple, ast.List, ast.Set)) else [e]
    out = set()
    for el in elts:
        if isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) and el.value.id == "torch":
            out.add(el.attr)
        else:
            return None
    return out


# ------------------------------------------------------------------------ the guards of a line
def guards_at(fn: ast.AST, line: int, col: int) -> list[tuple[ast.AST, bool, int]]:
    """(test, holds-when-true?, line of the test) of every guard between `fn` and (line, col)."""
    out: list[tuple[ast.AST, bool, int]] = []

    def holds(n: ast.AST) -> bool:
        lo, hi = getattr(n, "lineno", None), getattr(n, "end_lineno", None)
        if lo is None or hi is None or not lo <= line <= hi:
            return False
        if lo == line and n.col_offset > col:
            return False
        if hi == line and (n.end_col_offset or 1 << 30) <= col:
            return False
        return True

    def block(stmts: list[ast.stmt]) -> None:
        for st in stmts:
            if holds(st):
                stmt(st)
                return
            if getattr(st, "end_lineno", 0) < line and isinstance(st, ast.If) and not st.orelse and \
                    st.body and isinstance(st.body[-1], (ast.Return, ast.Raise, ast.Continue, ast.Break)):
                out.append((st.test, False, st.lineno))

    def stmt(st: ast.AST) -> None:
        if isinstance(st, ast.If):
            if holds(st.test):
                expr(st.test)
            elif any(holds(s) for s in st.body):
                out.append((st.test, True, st.lineno))
                block(st.body)
            else:
                out.append((st.test, False, st.lineno))
                block(st.orelse)
            return
        for fld in ("body", "orelse", "finalbody", "handlers"):
            sub = getattr(st, fld, None)
            if isinstance(sub, list) and any(holds(s) for s in sub):
                if fld == "handlers":
                    h = next(s for s in sub if holds(s))
                    block(h.body)
                else:
                    block(sub)
                return
        for ch in ast.iter_child_nodes(st):
            if isinstance(ch, ast.expr) and holds(ch):
                expr(ch)
                return

    def expr(e: ast.AST) -> None:
        while e is not None:
            nxt = None
            if isinstance(e, ast.BoolOp):
                for i, v in enumerate(e.values):
                    if holds(v):
                        for p in e.values[:i]:
                            out.append((p, isinstance(e.op, ast.And), p.lineno))
                        nxt = v
                        break
            elif isinstance(e, ast.IfExp):
                if holds(e.body):
                    out.append((e.test, True, e.lineno))
                    nxt = e.body
                elif holds(e.orelse):
                    out.append((e.test, False, e.lineno))
                    nxt = e.orelse
                else:
                    nxt = e.test if holds(e.test) else None
            else:
                for ch in ast.iter_child_nodes(e):
                    if isinstance(ch, ast.expr) and holds(ch):
                        nxt = ch
                        break
            e = nxt

    block(fn.body)
    return out


def opt_in_guard(env: Env, guards: list[tuple[ast.AST, bool, int]]) -> tuple[str, str] | None:
    """(kind, guard text) of the first guard the default call does not pass."""
    for test, want, line in guards:
        env.line = line
        v = env.value(test)
        b = truthy(v.v)
        if b is not UNKNOWN and b is not want and v.kind:
            return v.kind, env.f.src(test) if want else f"not ({env.f.src(test)})"
    return None


def _defs(f: File) -> dict[str, tuple[ast.AST, ast.ClassDef | None]]:
    out: dict[str, tuple[ast.AST, ast.ClassDef | None]] = {}
    for name, fn in f.functions.items():
        out[name] = (fn, None)
    for cname, c in f.classes.items():
        for item in c.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[f"{cname}.{item.name}"] = (item, c)
    return out


def _opt_in_functions(f: File) -> dict[str, Value | None]:
    """qualname -> the opt-in guard every call of it in this file is under (or None), for the
    functions called in this file and never named in another file: a fixpoint, so a helper
    called only from an opt-in-only method is opt-in too. Methods are matched by name within
    their class and its same-file relatives (`self.m(...)`); `forward` is never opt-in."""
    defs = _defs(f)
    # call sites: callee qualname -> [(caller qualname, guard or None)]
    sites: dict[str, list[tuple[str, tuple[str, str] | None]]] = {}
    for q, (fn, cls) in defs.items():
        env = Env(f, cls, fn)
        for n in ast.walk(fn):
            if not isinstance(n, ast.Call):
                continue
            callee = None
            if isinstance(n.func, ast.Name) and n.func.id in f.functions:
                callee = n.func.id
            elif isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name) and \
                    n.func.value.id == "self" and cls is not None:
                callee = f"{cls.name}.{n.func.attr}"
            if callee is None or callee not in defs:
                continue
            g = opt_in_guard(env, guards_at(fn, n.lineno, n.col_offset))
            sites.setdefault(callee, []).append((q, g))
    out: dict[str, Value | None] = {}
    names_elsewhere = {}
    for q in sites:
        short = q.rpartition(".")[2]
        if short == "forward" or short.startswith("__"):
            continue
        if short not in names_elsewhere:
            names_elsewhere[short] = f.tree.called_elsewhere(f.rel, short)
        if names_elsewhere[short]:
            continue
        # a method a subclass may call: only where no other class of the file names it
        out[q] = None
    changed = True
    while changed:
        changed = False
        for q in out:
            if out[q] is not None:
                continue
            calls = sites[q]
            reasons = []
            ok = True
            for caller, g in calls:
                if g is not None:
                    reasons.append(g)
                elif caller in out and out[caller] is not None:
                    reasons.append(("caller", f"only when `{caller}` runs ({out[caller].guard})"))
                else:
                    ok = False
                    break
            if ok and reasons:
                out[q] = Value(False, "caller", reasons[0][1] if reasons[0][0] != "caller" else reasons[0][1])
                changed = True
    return out


def _function_of(f: File, line: int) -> tuple[str, ast.AST, ast.ClassDef | None] | None:
    for q, (fn, cls) in _defs(f).items():
        if fn.lineno <= line <= (fn.end_lineno or fn.lineno):
            return q, fn, cls
    return None


# ----------------------------------------------------------------------------------- classify
def classify(tree: Tree, finding: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """(category, kind, guard) of one finding."""
    f = tree.file(finding["path"])
    cond = finding.get("condition")
    hit = None
    if f is not None:
        where = _function_of(f, finding["line"])
        if where is not None:
            q, fn, cls = where
            env = Env(f, cls, fn)
            hit = opt_in_guard(env, guards_at(fn, finding["line"], finding["col"]))
            if hit is None:
                v = f.opt_in_function(q)
                if v is not None:
                    hit = ("caller", f"`{q}` is called only when {v.guard}")
    if hit is not None and hit[0] != "other-default":
        return ("conditioned" if cond else "opt-in, unconditioned"), hit[0], hit[1]
    if hit is not None:
        return ("other-default, conditioned" if cond else "other-default, unconditioned"), hit[0], hit[1]
    return ("default, conditioned" if cond else "default, unconditioned"), None, None


def run(dir_: str, trees: str, libs: list[str]) -> dict[str, list[tuple[dict[str, Any], str, str | None, str | None]]]:
    out = {}
    for lib in libs:
        path = os.path.join(dir_, f"{lib}.json")
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            findings = json.load(fh)["findings"]
        tree = Tree(os.path.join(trees, lib))
        out[lib] = [(fd, *classify(tree, fd)) for fd in findings]
    return out


def table(res: dict[str, list]) -> list[str]:
    rows = ["| library | findings | opt-in | conditioned | opt-in, unconditioned | share conditioned | "
            "other default (cond./all) | default, conditioned |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    tot = [0, 0, 0, 0, 0, 0, 0]
    for lib, items in res.items():
        n = len(items)
        a = sum(1 for i in items if i[1] == "conditioned")
        b = sum(1 for i in items if i[1] == "opt-in, unconditioned")
        c = sum(1 for i in items if i[1] == "default, conditioned")
        oc = sum(1 for i in items if i[1] == "other-default, conditioned")
        ou = sum(1 for i in items if i[1] == "other-default, unconditioned")
        for k, v in enumerate((n, a + b, a, b, c, oc, ou)):
            tot[k] += v
        share = f"{a / (a + b):.2f}" if a + b else "–"
        rows.append(f"| {lib} | {n} | {a + b} | {a} | {b} | {share} | {oc}/{oc + ou} | {c} |")
    n, ab, a, b, c, oc, ou = tot
    rows.append(f"| **all** | {n} | {ab} | {a} | {b} | {a / ab if ab else 0:.2f} | {oc}/{oc + ou} | {c} |")
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="directory of <lib>.json from `pt2bot check --format json`")
    ap.add_argument("--base", help="a second directory to compare (before)")
    ap.add_argument("--trees", default="/tmp/trees")
    ap.add_argument("--lib", action="append")
    ap.add_argument("--examples", type=int, default=0, help="examples per category and kind")
    ap.add_argument("--category", action="append", help="categories whose examples to print")
    args = ap.parse_args(argv)
    libs = args.lib or list(LIBS)
    if args.base:
        print("before:")
        print("\n".join(table(run(args.base, args.trees, libs))))
        print("\nafter:")
    res = run(args.dir, args.trees, libs)
    print("\n".join(table(res)))
    kinds: dict[tuple[str, str], int] = {}
    for items in res.values():
        for fd, cat, kind, guard in items:
            if kind:
                kinds[(cat, kind)] = kinds.get((cat, kind), 0) + 1
    print("\nby kind:", ", ".join(f"{c} {k}: {n}" for (c, k), n in sorted(kinds.items())))
    if args.examples:
        cats = args.category or ["opt-in, unconditioned", "default, conditioned"]
        for cat in cats:
            print(f"\n## {cat}")
            seen: dict[str, int] = {}
            for lib, items in res.items():
                for fd, c, kind, guard in items:
                    if c != cat:
                        continue
                    key = f"{lib}:{kind}"
                    if seen.get(key, 0) >= args.examples:
                        continue
                    seen[key] = seen.get(key, 0) + 1
                    print(f"- {lib} {fd['path']}:{fd['line']} {fd['rule']} [{kind}] guard `{guard}` "
                          f"condition `{fd.get('condition')}` | {fd['source'][:70]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
