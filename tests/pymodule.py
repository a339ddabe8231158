"""Load a Python file (a rule fixture, a generated model) as a module, for the torch-backed tests."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(path: str | Path, prefix: str = "pt2bot_test") -> ModuleType:
    """Import `path` as `<prefix>_<stem>`, registered in sys.modules (where dataclasses and
    pickling look a module up) and executed anew on every call. The files beside it import
    by their names while it runs (a fixture's helpers in another file: `sibling_imports`)."""
    path = Path(path)
    name = f"{prefix}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.path.remove(str(path.parent))
    return mod


def sibling_imports(path: str | Path) -> list[str]:
    """The files beside `path` that its top-level imports name (`import _helpers`, `from _helpers
    import f`): the context a rule fixture split over two files is checked with."""
    path = Path(path)
    out = []
    for node in ast.parse(path.read_text()).body:
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        out += [f"{n}.py" for n in names if (path.parent / f"{n}.py").is_file()]
    return out
