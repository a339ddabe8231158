"""Load a Python file (a rule fixture, a generated model) as a module, for the torch-backed tests."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_module(path: str | Path, prefix: str = "pt2bot_test") -> ModuleType:
    """Import `path` as `<prefix>_<stem>`, registered in sys.modules (where dataclasses and
    pickling look a module up) and executed anew on every call."""
    path = Path(path)
    name = f"{prefix}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
