"""PTC110's "once per key" message against dynamo (torch 2.13, CPU, backend="eager").

A store made only on the calls that find the state it tests missing (a cache hit returned early,
a conversion under a test of a local read from the stored list, a helper called only under
`if not self.registered:`: the shapes of timm's, kornia's and vit-pytorch's real code) compiles
once more when it stores, then never again: 2 compiles in 6 calls. A list grown on every call
compiles on every call. The findings say which is which."""
from __future__ import annotations

from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

from pymodule import load_module

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
ONCE = FIXTURES / "ptc110_once_per_key.py"
WRITTEN_BACK = FIXTURES / "ptc110_written_back.py"
EVERY = FIXTURES / "ptc110_module_state_mutation.py"


def _load(path: Path):
    return load_module(path, "pt2bot_ptc110")


def _compiles(module, calls: int, dtypes=(torch.float32,)) -> list[int]:
    """The compile count after each call: `calls` calls per dtype, in the order given."""
    n = 0

    def backend(gm, example_inputs):
        nonlocal n
        n += 1
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(module, backend=backend)
    seen = []
    for dtype in dtypes:
        x = torch.randn(4, 8, dtype=dtype)
        for _ in range(calls):
            compiled(x)
            seen.append(n)
    return seen


def _messages(path: Path) -> dict[int, str]:
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("PTC110",)), jobs=1)
    return {f.line: f.message for f in findings}


@pytest.mark.parametrize("name", ["CacheHitReturnedEarly", "ConvertedWhenItDiffers", "RegisteredOnce"])
def test_a_store_once_per_key_compiles_twice_not_every_call(name, capfd):
    mod = _load(ONCE)
    assert _compiles(getattr(mod, name)(), 6)[-1] == 2      # the call that stores, then the reuse
    assert _compiles(mod.Fixed(), 6)[-1] == 1
    capfd.readouterr()


WRITTEN = ["GetWrittenBack", "SetDefault", "LazyConditional", "LazyThroughLocal", "ConvertedWhenDtypeDiffers",
           "ResizedWhenShapeDiffers"]


@pytest.mark.parametrize("name", WRITTEN)
def test_a_store_written_back_or_settled_compiles_once_per_new_value(name, capfd):
    """On a hit the store puts back the object it read (or its test is false): 2 compiles in 6
    calls with one input, as the fill under `key not in`; then float64 and float32 again: new
    compiles while a dtype is new, none once each has been seen twice."""
    mod = _load(WRITTEN_BACK)
    assert _compiles(getattr(mod, name)(), 6)[-1] == 2
    seen = _compiles(getattr(mod, name)(), 3, (torch.float32, torch.float64, torch.float32, torch.float64))
    assert seen[-1] > seen[2]                                     # a new dtype may compile again...
    assert seen[-6:] == [seen[-6]] * 6, seen                      # ...but steady once both were seen
    assert seen[-1] <= 5, seen
    assert _compiles(mod.Fixed(), 6)[-1] == 1
    capfd.readouterr()


def test_the_messages_say_once_where_dynamo_compiles_once_and_every_call_where_it_does(capfd):
    once = _messages(ONCE)
    assert len(once) == 3
    for line, msg in once.items():
        assert "once per new key" in msg and "every call" in msg and "not every call" in msg, (line, msg)
    written = _messages(WRITTEN_BACK)
    assert len(written) == len(WRITTEN)
    for line, msg in written.items():
        assert "once per new key" in msg and "not every call" in msg, (line, msg)
    every = _messages(EVERY)
    grows = [m for m in every.values() if "`self.outputs`" in m]
    assert grows and all("changes on every call" in m for m in grows)
    # ...and dynamo does recompile that one on every call (up to the limit)
    mod = _load(EVERY)
    assert _compiles(mod.Calls(), 6)[-1] == 6
    capfd.readouterr()
