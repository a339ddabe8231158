"""Import a model's `entry` ("pkg.mod:attr") from the user's repository and build the model.

A failure here is the user's code failing, so it is reported as data (`EntryError.kind`,
message, and the user file:line it came from) for the results JSON, never a pt2bot crash.
torch is imported lazily: `load_entry` needs none, `build_model` imports it.
"""
from __future__ import annotations

import difflib
import importlib
import inspect
import os
import pkgutil
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

# The entry pattern is the config's ("module.path:attr"): one definition, checked at load
# time with file:line there, and again here for callers that skip the config.
from pt2bot.config import ENTRY
from pt2bot.smoke.env import import_roots
from pt2bot.smoke.location import Location, ModelError, RepoPaths, user_frames, user_location

KINDS = ("bad_spec", "module_not_found", "attribute_missing", "import_raised",
         "bad_kwargs", "build_raised", "not_a_model")

# The entry could not be imported or built: the one error type for a model's faults
# (pt2bot/smoke/location.py), with `kind` one of KINDS. `path`/`line` locate the user code
# responsible (repo-relative) when known; `exc_type` names the exception it raised, if any.
EntryError = ModelError


def _exception_location(exc: BaseException, root: str) -> Location:
    return user_location(exc, RepoPaths(root))


def _where(path: str | None, line: int | None) -> str:
    return f" at {path}:{line}" if path else ""


def _short(exc: BaseException, limit: int = 500) -> str:
    text = str(exc) if not isinstance(exc, SyntaxError) else (exc.msg or str(exc))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _similar_module(missing: str, root: str) -> str:
    """A did-you-mean over the modules next to the missing one (its package, or the root)."""
    parent, _, leaf = missing.rpartition(".")
    try:
        where = list(getattr(importlib.import_module(parent), "__path__", [])) if parent else [root]
        names = [m.name for m in pkgutil.iter_modules(where)]
    except Exception:  # the parent's import raising is reported elsewhere; no hint then
        return ""
    close = difflib.get_close_matches(leaf, names, n=1, cutoff=0.6)
    return f'; did you mean "{parent + "." if parent else ""}{close[0]}"?' if close else ""


def _import(module: str, root: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as e:
        path, line = _exception_location(e, root)
        missing = e.name or ""
        # The entry's own module (or a package on its path) is missing, vs. something it imports.
        if missing and (module == missing or module.startswith(missing + ".")):
            raise EntryError("module_not_found",
                             f'module "{module}" not found (no "{missing}" under {root} '
                             f"or on sys.path){_similar_module(missing, root)}",
                             exc_type="ModuleNotFoundError") from None
        what = f'"{missing}", which is not installed' if missing else f"a missing module ({_short(e)})"
        raise EntryError("module_not_found",
                         f'"{module}" imports {what}{_where(path, line)}',
                         path=path, line=line, exc_type="ModuleNotFoundError") from None
    except (Exception, SystemExit) as e:  # user code ran at import time and raised
        path, line = _exception_location(e, root)
        raise EntryError("import_raised",
                         f'importing "{module}" raised {type(e).__name__}: {_short(e)}{_where(path, line)}',
                         path=path, line=line, exc_type=type(e).__name__) from None


def _public_names(obj: Any) -> list[str]:
    try:
        return [n for n in dir(obj) if not n.startswith("_")]
    except Exception:  # a hostile __dir__
        return []


def load_entry(spec: str, root: str) -> Any:
    """Import `module.path:attr` with `root` (and a src layout's `src/`) first on sys.path;
    raise EntryError on failure.

    `root` stays on sys.path afterwards: the model may import lazily from its repository
    (the smoke worker is one process per model, so nothing leaks between models).
    """
    if not isinstance(spec, str) or ENTRY.fullmatch(spec) is None:
        raise EntryError("bad_spec", f'expected "module.path:attr", got {spec!r}')
    module, _, attr = spec.partition(":")
    root = os.path.abspath(root)
    for where in reversed(import_roots(root)):   # (the root first, then a src layout's src/)
        if where not in sys.path:
            sys.path.insert(0, where)
    importlib.invalidate_caches()  # files may have appeared since the last import
    obj: Any = _import(module, root)
    owner = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            hint = difflib.get_close_matches(part, _public_names(obj), n=1, cutoff=0.6)
            dym = f'; did you mean "{hint[0]}"?' if hint else ""
            raise EntryError("attribute_missing",
                             f'"{owner}" has no attribute "{part}"{dym}') from None
        except Exception as e:  # a module-level __getattr__ or property that raises
            path, line = _exception_location(e, root)
            raise EntryError("import_raised",
                             f'getting "{owner}.{part}" raised {type(e).__name__}: {_short(e)}'
                             f"{_where(path, line)}",
                             path=path, line=line, exc_type=type(e).__name__) from None
        owner = f"{owner}.{part}"
    return obj


def _check_kwargs(target: Any, kwargs: dict[str, Any], label: str, positional: int = 0) -> None:
    """Bind kwargs to the signature first, so a typo gets a did-you-mean, not a TypeError.
    `positional`: how many positional arguments come before them (a config object)."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):  # builtins, C extensions: let the call decide
        return
    params = dict(list(sig.parameters.items())[positional:])
    takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    names = [n for n, p in params.items() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if not takes_any:
        for k in kwargs:
            if k not in names:
                close = difflib.get_close_matches(k, names, n=1, cutoff=0.6)
                dym = f'; did you mean "{close[0]}"?' if close else ""
                raise EntryError("bad_kwargs", f'{label} got an unexpected keyword argument "{k}"{dym} '
                                               f"(it accepts: {', '.join(names) or 'none'})")
    missing = [n for n, p in params.items()
               if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
               and n not in kwargs]
    if missing:
        raise EntryError("bad_kwargs", f"{label} needs {', '.join(missing)}: add "
                                       f"{'them' if len(missing) > 1 else 'it'} to the model's kwargs")


def _label(obj: Any) -> str:
    return getattr(obj, "__qualname__", None) or type(obj).__name__


def _call(obj: Any, args: tuple[Any, ...], kwargs: dict[str, Any], label: str,
          root: str | None) -> Any:
    try:
        return obj(*args, **kwargs)
    except (Exception, SystemExit) as e:
        path, line = _exception_location(e, root) if root else (None, None)
        raise EntryError("build_raised", f"{label}(...) raised {type(e).__name__}: {_short(e)}"
                                         f"{_where(path, line)}",
                         path=path, line=line, exc_type=type(e).__name__,
                         frames=user_frames(e, RepoPaths(root)) if root else ()) from None


def build_config_object(obj: Any, kwargs: dict[str, Any] | None = None, *,
                        root: str | None = None) -> Any:
    """A model's `config:` object: the class (or factory, `Config.from_name`) called with its
    kwargs. Raises EntryError (`bad_kwargs`, `build_raised`, `not_a_model` when it cannot be
    called), each message saying it is the config."""
    kwargs = dict(kwargs or {})
    label = f"the config {_label(obj)}"
    if not callable(obj):
        raise EntryError("not_a_model", f"the config entry is a {type(obj).__name__}, expected "
                                        "a class or a factory function")
    _check_kwargs(obj, kwargs, f"{label}()")
    return _call(obj, (), kwargs, label, root)


def build_model(obj: Any, kwargs: dict[str, Any] | None = None, *, root: str | None = None,
                configs: Sequence[tuple[str | None, Any]] = ()) -> Any:
    """An nn.Module class is instantiated with kwargs, a factory is called with them; each
    config object of `configs` ((arg, object)) goes by its keyword `arg`, or without one
    first, positionally.

    Returns the nn.Module. Raises EntryError: `bad_kwargs` (they do not fit the signature),
    `build_raised` (the constructor/factory raised; located in user code under `root`),
    `not_a_model` (the result is not an nn.Module).
    """
    import torch  # lazily: only the smoke worker builds models

    kwargs = dict(kwargs or {})
    label = _label(obj)
    args: tuple[Any, ...] = ()
    for config_arg, config in configs:
        if config_arg and config_arg in kwargs:
            raise EntryError("bad_kwargs", f'"{config_arg}" is set twice: by a config and in kwargs')
        if config_arg:
            kwargs[config_arg] = config
        else:
            args = (config,)
    if isinstance(obj, torch.nn.Module):  # the entry names a ready instance
        if kwargs or args:
            raise EntryError("bad_kwargs", f"{label} is already an nn.Module instance; "
                                           "it takes no kwargs or config")
        return obj
    if not callable(obj):
        raise EntryError("not_a_model", f"the entry is a {type(obj).__name__}, expected an "
                                        "nn.Module class or a factory function")
    _check_kwargs(obj, kwargs, f"{label}()", positional=len(args))
    model = _call(obj, args, kwargs, label, root)
    if not isinstance(model, torch.nn.Module):
        raise EntryError("not_a_model", f"{label}(...) returned a {type(model).__name__}, "
                                        "expected a torch.nn.Module")
    return model


__all__ = ["EntryError", "KINDS", "load_entry", "build_config_object", "build_model"]
