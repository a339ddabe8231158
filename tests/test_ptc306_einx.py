"""PTC306 against dynamo (torch 2.13, CPU, backend="eager", einx 0.4.3, einops 0.8.2): an einx
operation compiles once per input shape even with dynamic=True (it reads every dim as a Python
int); the torch op and einops compile once for all shapes with dynamic=True."""
from __future__ import annotations

from pathlib import Path

import pytest

from pymodule import load_module

torch = pytest.importorskip("torch")
pytest.importorskip("einx")
pytestmark = pytest.mark.torch

FIXTURE = Path(__file__).parent / "fixtures" / "rules" / "ptc306_einx_specialises_shapes.py"


def _load():
    return load_module(FIXTURE, "pt2bot_ptc306")


def _compiles(module, dynamic) -> int:
    n = 0

    def backend(gm, example_inputs):
        nonlocal n
        n += 1
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(module, backend=backend, dynamic=dynamic)
    for b in (2, 8, 3, 5):
        compiled(torch.randn(b, 8))
    return n


@pytest.mark.parametrize("name", ["Masked", "Scaled", "Summed"])
def test_einx_compiles_once_per_shape_even_with_dynamic_true(name, capfd):
    mod = _load()
    assert _compiles(getattr(mod, name)(), True) == 4
    assert _compiles(getattr(mod, name)(), None) == 4
    capfd.readouterr()


@pytest.mark.parametrize("name", ["MaskedFixed", "SummedEinops"])
def test_torch_and_einops_keep_the_dims_symbolic(name, capfd):
    mod = _load()
    assert _compiles(getattr(mod, name)(), True) == 1
    assert _compiles(getattr(mod, name)(), None) == 2     # static first, then dynamic
    capfd.readouterr()
