"""pt2bot/analysis/torch_modules.py against the installed torch: the names it lists as torch's
private nn.Module bases are exactly the private nn.Module subclasses of torch.nn.modules.*, and
the upper-case names it says are not modules are not."""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

from pt2bot.analysis.torch_modules import NOT_MODULE_CLASSES, PRIVATE_MODULE_CLASSES, is_torch_module_class

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _torch_nn_classes() -> dict[str, list[tuple[str, type]]]:
    """Class name -> [(module, class)] over torch.nn and every torch.nn.modules submodule."""
    names = ["torch.nn", "torch.nn.modules"] + [
        f"torch.nn.modules.{m.name}" for m in pkgutil.iter_modules(torch.nn.modules.__path__)]
    out: dict[str, list[tuple[str, type]]] = {}
    for mn in names:
        for n, o in vars(importlib.import_module(mn)).items():
            if inspect.isclass(o):
                out.setdefault(n, []).append((mn, o))
    return out


def test_private_module_bases_are_torchs_own():
    classes = _torch_nn_classes()
    private = {n for n, defs in classes.items() if n.startswith("_")
               and any(issubclass(o, torch.nn.Module) for _, o in defs)}
    assert private == PRIVATE_MODULE_CLASSES
    for n in PRIVATE_MODULE_CLASSES:
        mn, _ = next((mn, o) for mn, o in classes[n] if issubclass(o, torch.nn.Module))
        assert is_torch_module_class(f"{mn}.{n}")


def test_listed_non_modules_are_not_modules():
    classes = _torch_nn_classes()
    for n in NOT_MODULE_CLASSES:
        assert n in classes, n
        assert not any(issubclass(o, torch.nn.Module) for _, o in classes[n]), n
        assert not is_torch_module_class(f"torch.nn.{n}")


def test_every_public_torch_nn_module_counts():
    """Every upper-case nn.Module subclass torch.nn exports is one by its spelling, and every
    upper-case class there that is not a module is listed as such."""
    for n, o in vars(torch.nn).items():
        if inspect.isclass(o) and n[:1].isupper():
            assert is_torch_module_class(f"torch.nn.{n}") is issubclass(o, torch.nn.Module), n
    assert is_torch_module_class("torch.nn.modules.loss._Loss")
    assert not is_torch_module_class("torch.nn.modules.loss._Reduction")   # a helper, not a module
    assert not is_torch_module_class("torch.nn.functional.Tensor")
