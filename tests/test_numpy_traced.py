"""pt2bot/analysis/numpy_calls.py against the installed torch: the numpy functions and ndarray methods
pt2bot takes for traced arrays are ones torch._numpy implements, and dynamo does trace them (a
branch on the result of each function breaks the graph with GB0170, static shapes included)."""
from __future__ import annotations

import inspect
import re

import pytest

from pt2bot.analysis.numpy_calls import ARRAY_METHODS, FUNCS

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")
pytestmark = pytest.mark.torch


def test_listed_numpy_names_are_traced_by_torch_numpy():
    import torch._numpy as tnp

    assert torch._dynamo.config.trace_numpy
    for name in FUNCS:
        assert inspect.isfunction(getattr(tnp, name, None)), name
    for name in ARRAY_METHODS:
        assert callable(getattr(tnp.ndarray, name, None)), name


@pytest.mark.parametrize("name", ["prod", "sqrt", "array", "abs", "ceil", "max", "where", "mean"])
def test_branch_on_a_numpy_result_breaks(name, capfd):
    from torch._dynamo.utils import counters

    fn = getattr(np, name)

    def f(x):
        v = fn(np.array(x.shape) > 4, 1, 0) if name == "where" else fn(np.array(x.shape))
        if (v > 3).any():
            return x * 2
        return x

    torch._dynamo.reset()
    counters.clear()
    torch.compile(f, backend="eager")(torch.randn(8, 8))
    # a break with nothing traced before it is counted under "unimplemented" (the frame runs eagerly)
    msgs = list(counters["graph_break"]) + list(counters["unimplemented"])
    gbs = {n for m in msgs for n in re.findall(r"gb(\d{4})\.html", m)}
    assert "0170" in gbs, (name, msgs)
    capfd.readouterr()
