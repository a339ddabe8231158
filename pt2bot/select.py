"""Which configured models a change can affect.

A model is affected when

- a changed `.py` file is in the *import closure* of its entry module (and its
  `inputs_entry` module) over the repo's own modules: imports are read with `ast`, nothing
  is executed; relative imports and `from pkg import submodule` are resolved; importing
  `a.b.c` imports `a/__init__.py` and `a/b/__init__.py` too; imports under
  `if TYPE_CHECKING:` never run and are ignored; a deleted or renamed module still counts
  through the name that imports it;
- or pt2bot.yml changed in a way that touches it: its own section differs between base
  and head (or is new), or a top-level section other than `models`/`static` changed
  (`run`, `thresholds`, ... affect every model);
- or, when a previous smoke run recorded the repo files the model's traced frames actually
  executed (`stored_files[name]`, repo-relative, or absolute under repo_root), a changed
  file is in that set (plus the entry module file, where the factory lives). The import
  closure is then not used for that model: model zoos whose package `__init__` imports
  every model would otherwise select all. An empty or missing record falls back to the
  closure. (Code that only runs while the model is *built*, e.g. in `__init__`, is not
  traced and so not in the record, unless it lives in a traced file.)

A model whose entry module cannot be found in the repo is selected (we cannot tell what
affects it; the run will say whether it imports). Other files (README, data) select nothing.
The head tree is read from disk at `repo_root` for a working-tree change set, and from git
when the change set has a head commit.
"""
from __future__ import annotations

import ast
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from pt2bot import git
from pt2bot.analysis.model import import_base, import_name
from pt2bot.changes import ChangeSet
from pt2bot.config import DEFAULT_CONFIG_NAMES, Config, ModelConfig


@dataclass(frozen=True)
class Selection:
    selected: tuple[str, ...] = ()
    skipped: dict[str, str] = field(default_factory=dict)   # name -> why not run
    reasons: dict[str, str] = field(default_factory=dict)   # name -> why run


def select_all(config: Config, reason: str = "--all: every model runs") -> Selection:
    names = tuple(m.name for m in config.models)
    return Selection(selected=names, reasons={n: reason for n in names})


def select_models(config: Config, changeset: ChangeSet, repo_root: str | os.PathLike[str], *,
                  stored_files: Mapping[str, Iterable[str]] | None = None) -> Selection:
    """Split the configured models into those the change can affect and the rest (with why)."""
    root = os.path.abspath(os.fspath(repo_root))
    tree = head_tree(changeset, root)
    index = ModuleIndex(tree, module_roots(config, root, tree))
    changed = changeset.paths()
    changed_py = sorted(p for p in changed if p.endswith(".py"))
    by_config = config_effects(config, changeset, root, tree)
    selected: list[str] = []
    skipped: dict[str, str] = {}
    reasons: dict[str, str] = {}
    for model in config.models:
        why = by_config.get(model.name) or by_config.get("*")
        recorded = _normalise_stored((stored_files or {}).get(model.name) or (), root)
        if why is None and recorded:
            # An empty record (the stored run failed before tracing, or its paths lay outside
            # this checkout) says nothing: the import closure decides then.
            files = recorded | {p for p in (index.entry_file(model),) if p}
            hits = sorted(changed & files)
            if hits:
                why = f"changes {_list(hits)} (executed by the model in the stored run)"
            else:
                skipped[model.name] = (f"no file it executed in the stored run changed "
                                       f"({len(files)} file{'s' if len(files) != 1 else ''})")
                continue
        elif why is None:
            why, skip = _closure_verdict(index, model, changed_py)
            if why is None:
                skipped[model.name] = skip
                continue
        selected.append(model.name)
        reasons[model.name] = why
    return Selection(selected=tuple(selected), skipped=skipped, reasons=reasons)


def _closure_verdict(index: ModuleIndex, model: ModelConfig,
                     changed_py: list[str]) -> tuple[str | None, str]:
    """(why selected, None) or (None, why skipped) from the model's import closure."""
    entries = [_entry_module(model.entry)]
    if model.inputs_entry:
        entries.append(_entry_module(model.inputs_entry))
    for mod in entries:
        if index.resolve(mod) is None and not index.is_namespace(mod):
            return f"entry module {mod} is not a module of this repo", ""
    closure = index.closure(entries)
    hits: list[tuple[str, str]] = []          # (changed path, module it is)
    for path in changed_py:
        if path in closure.file_module:
            hits.append((path, closure.file_module[path]))
            continue
        # A deleted or moved module: its old name may still be imported in the closure.
        for name in index.module_names(path):
            if name in closure.names:
                hits.append((path, name))
                break
    if not hits:
        return None, (f"no changed file in its import closure ({len(closure.file_module)} "
                      "repo modules)")
    path, mod = hits[0]
    more = f" and {len(hits) - 1} more" if len(hits) > 1 else ""
    return f"changes {path}{more} ({' → '.join(closure.chain(mod))})", ""


def _list(paths: list[str]) -> str:
    return paths[0] + (f" and {len(paths) - 1} more" if len(paths) > 1 else "")


def _entry_module(entry: str) -> str:
    return entry.split(":", 1)[0].strip()


def _normalise_stored(paths: Iterable[str], root: str) -> set[str]:
    """Repo-relative forward-slash paths; absolute paths under the repo are made relative."""
    out: set[str] = set()
    for p in paths:
        p = str(p)
        if os.path.isabs(p):
            rel = os.path.relpath(p, root)
            if rel.startswith(".."):
                continue  # a file outside the repo (torch, site-packages) cannot change here
            p = rel
        out.add(p.replace(os.sep, "/").removeprefix("./"))
    return out


# ---------------------------------------------------------------------------- modules

class Tree:
    """The head tree that selection reads: the files on disk (working tree) by default."""

    def __init__(self, repo_root: str) -> None:
        self.repo_root = repo_root

    def is_file(self, rel: str) -> bool:
        return os.path.isfile(os.path.join(self.repo_root, rel))

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(os.path.join(self.repo_root, rel))

    def read(self, rel: str) -> bytes | None:
        try:
            with open(os.path.join(self.repo_root, rel), "rb") as fh:
                return fh.read()
        except OSError:
            return None


class CommitTree(Tree):
    """A commit's tree, read through git (head given as a ref: the disk may hold another tree)."""

    def __init__(self, repo_root: str, sha: str) -> None:
        super().__init__(repo_root)
        self.sha = sha
        out = git.run_git(repo_root, "ls-tree", "-r", "-z", "--name-only", "--full-tree", sha).stdout
        self._files = {git.decode(p) for p in out.split(b"\0") if p}
        self._dirs = {d for f in self._files for d in _parents(f)}

    def is_file(self, rel: str) -> bool:
        return rel in self._files

    def is_dir(self, rel: str) -> bool:
        return rel.rstrip("/") in self._dirs

    def read(self, rel: str) -> bytes | None:
        return git.show_file(self.repo_root, self.sha, rel) if rel in self._files else None


def _parents(path: str) -> Iterator[str]:
    parts = path.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        yield "/".join(parts[:i])


def head_tree(changeset: ChangeSet, repo_root: str) -> Tree:
    return CommitTree(repo_root, changeset.head) if changeset.head else Tree(repo_root)


def entry_file(config: Config, model: ModelConfig, repo_root: str) -> str | None:
    """The repo-relative file of the model's entry module in the tree at `repo_root`, or None
    (the module is not in that tree: e.g. a model the pull request adds, on base)."""
    tree = Tree(repo_root)
    return ModuleIndex(tree, module_roots(config, repo_root, tree)).entry_file(model)


def module_roots(config: Config, repo_root: str, tree: Tree | None = None) -> tuple[str, ...]:
    """Repo-relative directories that hold top-level packages ("" is the repo root).

    The config's directory (where the smoke run imports from), the repo root, and `src/`.
    """
    tree = tree or Tree(repo_root)
    roots: list[str] = []
    candidates = [config.root if config.path else None, repo_root, os.path.join(repo_root, "src")]
    for c in candidates:
        if not c:
            continue
        rel = os.path.relpath(os.path.realpath(c), os.path.realpath(repo_root))
        if rel.startswith(".."):
            continue
        rel = "" if rel == "." else rel.replace(os.sep, "/")
        if rel and not tree.is_dir(rel):
            continue
        rel = rel + "/" if rel else ""
        if rel not in roots:
            roots.append(rel)
    return tuple(roots)


@dataclass
class Closure:
    file_module: dict[str, str] = field(default_factory=dict)   # repo path -> module name
    names: set[str] = field(default_factory=set)                # every module name imported
    parent: dict[str, str | None] = field(default_factory=dict)  # module -> who imported it

    def chain(self, mod: str) -> list[str]:
        out = [mod]
        seen = {mod}
        while (p := self.parent.get(out[-1])) is not None and p not in seen:
            out.append(p)
            seen.add(p)
        return out[::-1]


class ModuleIndex:
    """Resolves module names to files of the head tree and reads their imports (cached).

    Not the analysis engine's index (pt2bot/analysis/graph.py, which `pt2bot check` and `pt2bot
    init` use): that one tells what a *name* refers to, from the top-level names of the files of
    the working tree; this one tells which *modules* importing a module runs: every import in it,
    a function's too (not those under `if TYPE_CHECKING:`), `import_module("...")` calls and
    parent packages, under several roots, in the head tree (a commit read through git, or the
    disk). Both name a module from its path and resolve relative imports the same way
    (pt2bot/analysis/model.py `import_name`, `import_base`).
    """

    def __init__(self, tree: Tree, roots: tuple[str, ...]) -> None:
        self.tree = tree
        self.roots = roots
        self._imports: dict[str, frozenset[str]] = {}
        self._resolved: dict[str, str | None] = {}

    def resolve(self, name: str) -> str | None:
        """Repo-relative path of module `name` (`a/b.py` or `a/b/__init__.py`), or None."""
        if name in self._resolved:
            return self._resolved[name]
        found = None
        if name and all(part.isidentifier() for part in name.split(".")):
            rel = name.replace(".", "/")
            for root in self.roots:
                for cand in (f"{root}{rel}.py", f"{root}{rel}/__init__.py"):
                    if self.tree.is_file(cand):
                        found = cand
                        break
                if found:
                    break
        self._resolved[name] = found
        return found

    def is_namespace(self, name: str) -> bool:
        rel = name.replace(".", "/")
        return any(self.tree.is_dir(f"{r}{rel}") for r in self.roots)

    def entry_file(self, model: ModelConfig) -> str | None:
        return self.resolve(_entry_module(model.entry))

    def module_names(self, path: str) -> list[str]:
        """The module names a repo path has under each root (none for a non-module)."""
        if not path.endswith(".py"):
            return []
        names = (import_name(path[len(root):]) for root in self.roots if path.startswith(root))
        return [n for n in names if n]

    def imports_of(self, path: str, name: str) -> frozenset[str]:
        """Absolute module names `path` (module `name`) may import, submodule candidates included."""
        if path not in self._imports:
            self._imports[path] = frozenset(self._read_imports(path, name))
        return self._imports[path]

    def _read_imports(self, path: str, name: str) -> set[str]:
        source = self.tree.read(path)
        try:
            module_ast = ast.parse(source or b"", filename=path)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            # An unparsable module imports nothing we can know; it is still in the closure.
            return set()
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        found: set[str] = set()
        for node in _runtime_nodes(module_ast):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = import_base(node.level, node.module, package)
                if not base:
                    continue   # above the top-level packages: the repo root is no package
                found.add(base)
                for a in node.names:
                    if a.name != "*":
                        # `from pkg import x`: x may be a submodule; resolve() tells later.
                        found.add(f"{base}.{a.name}")
            elif isinstance(node, ast.Call) and _is_dynamic_import(node):
                found.add(node.args[0].value)  # type: ignore[attr-defined]
        return found

    def closure(self, entries: Iterable[str]) -> Closure:
        """Breadth-first over imports from the entry modules, parents packages included."""
        c = Closure()
        queue: deque[str] = deque()

        def visit(mod: str, by: str | None) -> None:
            if mod in c.names:
                return
            c.names.add(mod)
            c.parent[mod] = by
            queue.append(mod)

        for e in entries:
            visit(e, None)
        while queue:
            mod = queue.popleft()
            parts = mod.split(".")
            for i in range(1, len(parts)):  # importing a.b.c runs a/__init__ and a/b/__init__
                visit(".".join(parts[:i]), mod)
            path = self.resolve(mod)
            if path is None:
                continue
            c.file_module[path] = mod
            for imported in sorted(self.imports_of(path, mod)):
                if self.resolve(imported) is not None or self.is_namespace(imported) \
                        or self._top_is_local(imported):
                    visit(imported, mod)
        return c

    def _top_is_local(self, name: str) -> bool:
        # Keep unresolvable names under the repo's own packages (a deleted module), so a
        # changed old path can still match; drop third-party names (torch, numpy, ...).
        top = name.split(".", 1)[0]
        return self.resolve(top) is not None or self.is_namespace(top)


def _is_dynamic_import(node: ast.Call) -> bool:
    f = node.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    return (name in ("import_module", "__import__") and bool(node.args)
            and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith("."))


def _runtime_nodes(tree: ast.AST) -> Iterable[ast.AST]:
    """Every node except the bodies of `if TYPE_CHECKING:` (they never run)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


# ---------------------------------------------------------------------------- config

def config_effects(config: Config, changeset: ChangeSet, repo_root: str,
                   tree: Tree | None = None) -> dict[str, str]:
    """Models the config change affects: {name: why}, with "*" meaning every model."""
    tree = tree or head_tree(changeset, repo_root)
    rel = _config_relpath(config, changeset, repo_root, tree)
    if rel is None:
        return {}
    fc = changeset.files.get(rel)
    if fc is None or fc.status == "deleted":
        return {}
    name = os.path.basename(rel)
    if fc.old_path is None:
        return {"*": f"{name} is new in this change"}
    base = _load_yaml(git.show_file(repo_root, changeset.base, fc.old_path))
    head = _load_yaml(tree.read(rel))
    if not isinstance(base, dict) or not isinstance(head, dict):
        return {"*": f"{name} changed and one side could not be read as a mapping"}
    top = sorted(k for k in set(base) | set(head)
                 if k not in ("models", "static") and base.get(k) != head.get(k))
    if top:
        return {"*": f"{name} changed `{'`, `'.join(map(str, top))}` (affects every model)"}
    base_models, head_models = _model_sections(base), _model_sections(head)
    out: dict[str, str] = {}
    for model_name, section in head_models.items():
        old = base_models.get(model_name)
        if old is None:
            out[model_name] = f"added to {name}"
        elif old != section:
            keys = sorted(k for k in set(old) | set(section) if old.get(k) != section.get(k)) \
                if isinstance(old, dict) and isinstance(section, dict) else []
            what = f" (`{'`, `'.join(map(str, keys))}`)" if keys else ""
            out[model_name] = f"its section in {name} changed{what}"
    return out


def _config_relpath(config: Config, changeset: ChangeSet, repo_root: str,
                    tree: Tree) -> str | None:
    if config.path:
        # realpath on both sides: a temp dir or checkout reached through a symlink.
        rel = os.path.relpath(os.path.realpath(config.path), os.path.realpath(repo_root))
        return None if rel.startswith("..") else rel.replace(os.sep, "/")
    for cand in DEFAULT_CONFIG_NAMES:
        if cand in changeset.files or tree.is_file(cand):
            return cand
    return None


def _load_yaml(data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return yaml.safe_load(data.decode("utf-8", "replace"))
    except yaml.YAMLError:
        return None


def _model_sections(doc: dict[str, Any]) -> dict[str, Any]:
    models = doc.get("models")
    if isinstance(models, dict):  # {name: section} form
        return {str(k): v for k, v in models.items()}
    out: dict[str, Any] = {}
    if isinstance(models, list):
        for m in models:
            if isinstance(m, dict) and "name" in m:
                out[str(m["name"])] = m
    return out


__all__ = ["Closure", "CommitTree", "ModuleIndex", "Selection", "Tree", "config_effects",
           "entry_file", "head_tree", "module_roots", "select_all", "select_models"]
