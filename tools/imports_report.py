"""Development-time: the import structure of a package, read from the AST (nothing is imported).

Prints, for pt2bot/ by default:

- `cycles: N`: strongly connected components of the graph of imports that run when a module is
  imported (module level, including `if TYPE_CHECKING:` blocks, excluding imports inside
  functions), each listed with its modules;
- `cycles with function-level imports: N`: the same graph plus the imports inside functions
  (a lazy import still is a dependency; it only moves the cost);
- `private imports: N`: `from pkg.mod import _name` (and `pkg.mod._name` through a plain
  import) across modules, where `_name` is private to `pkg.mod`. A package importing its own
  submodule's private name counts too: the rule is "a module's `_names` are its own".
  Submodules named `_x` are not private names: `from pkg import _x` imports a module;
- `private-module crossings: N`: imports of a module whose own name starts with `_`
  (`pkg.sub._engine`) from a module outside its package `pkg.sub`: such a module is its
  package's inside, and another package reaching into it bypasses the package's public names;
- `lines per module` with --lines.

    .venv/bin/python tools/imports_report.py [--root pt2bot] [--lines]
"""
from __future__ import annotations

import argparse
import ast
import os
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Edge:
    src: str           # importing module
    dst: str           # imported module (a module of the package)
    names: tuple[str, ...]  # names imported from dst (empty: `import dst`)
    line: int
    lazy: bool         # inside a function body


def module_name(root: str, path: str) -> str:
    rel = os.path.relpath(path, os.path.dirname(os.path.abspath(root)))
    parts = rel[:-3].split(os.sep)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def find_modules(root: str) -> dict[str, str]:
    out = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                p = os.path.join(d, f)
                out[module_name(root, p)] = p
    return out


def _resolve(mod: str, is_pkg: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = mod.split(".")
    if not is_pkg:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def edges_of(mod: str, path: str, modules: dict[str, str]) -> list[Edge]:
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    is_pkg = path.endswith("__init__.py")
    out: list[Edge] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        for child in ast.iter_child_nodes(node):
            in_func = lazy or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for a in child.names:
                    target = a.name
                    while target and target not in modules:
                        target = target.rpartition(".")[0]
                    if target and target != mod:
                        out.append(Edge(mod, target, (), child.lineno, lazy))
            elif isinstance(child, ast.ImportFrom):
                base = _resolve(mod, is_pkg, child)
                for a in child.names:
                    sub = f"{base}.{a.name}"
                    if sub in modules:  # `from pkg import submodule`
                        if sub != mod:
                            out.append(Edge(mod, sub, (), child.lineno, lazy))
                    elif base in modules and base != mod:
                        out.append(Edge(mod, base, (a.name,), child.lineno, lazy))
            visit(child, in_func)

    visit(tree, False)
    return out


def private_module_crossings(edges: list[Edge]) -> list[Edge]:
    """Import statements of a `_name` module from outside the package that holds it (one
    edge per statement: `from pkg._m import a, b` is one crossing)."""
    out, seen = [], set()
    for e in edges:
        if (e.src, e.line, e.dst) in seen:
            continue
        seen.add((e.src, e.line, e.dst))
        package, _, leaf = e.dst.rpartition(".")
        if leaf.startswith("_") and not leaf.startswith("__") \
                and not (e.src == package or e.src.startswith(package + ".")):
            out.append(e)
    return out


def cycles(nodes: list[str], edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {n: set() for n in nodes}
    for e in edges:
        graph[e.src].add(e.dst)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    comps: list[list[str]] = []
    counter = 0
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return sorted(comps)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "pt2bot"))
    ap.add_argument("--lines", action="store_true", help="also print lines per module")
    args = ap.parse_args(argv)
    modules = find_modules(args.root)
    edges = [e for m, p in modules.items() for e in edges_of(m, p, modules)]
    nodes = sorted(modules)

    eager = cycles(nodes, [e for e in edges if not e.lazy])
    print(f"cycles: {len(eager)}")
    for c in eager:
        print("  " + " <-> ".join(c))
    every = cycles(nodes, edges)
    print(f"cycles with function-level imports: {len(every)}")
    for c in every:
        lazy = [e for e in edges if e.lazy and e.src in c and e.dst in c]
        print("  " + " <-> ".join(c) + "".join(
            f"\n    lazy: {e.src}:{e.line} imports {e.dst}" for e in lazy))
    private = [(e, n) for e in edges for n in e.names if n.startswith("_") and not n.startswith("__")]
    print(f"private imports: {len(private)}")
    for e, n in private:
        print(f"  {modules[e.src]}:{e.line}: {e.src} imports {e.dst}.{n}")
    crossings = private_module_crossings(edges)
    print(f"private-module crossings: {len(crossings)}")
    for e in crossings:
        print(f"  {modules[e.src]}:{e.line}: {e.src} imports {e.dst}")
    if args.lines:
        total = 0
        print("lines per module:")
        for m in nodes:
            with open(modules[m], encoding="utf-8") as fh:
                n = sum(1 for _ in fh)
            total += n
            print(f"  {n:6d} {m}")
        print(f"  {total:6d} total in {len(nodes)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
