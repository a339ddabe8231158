"""Dynamic-shape specs: the bounds a user declares in pt2bot.yml, and the shape advice the
smoke run derives and verifies per model (real torch, eager backend, tiny models in
tests/fixtures/models/shape_advice.py)."""
from __future__ import annotations

from typing import Any

import pytest

from test_worker import line_of, spec

pytestmark = pytest.mark.torch

GPT_INPUTS = [{"shape": ["batch", "seq"], "dtype": "int64", "high": 32}]


def run_model(entry: str, *, phases: Any = ("export",), **kw: Any) -> dict:
    from pt2bot.smoke.worker import measure
    return measure(spec(entry.rsplit(":", 1)[1], entry, phases=phases, **kw))


# --------------------------------------------------------------------------- declared bounds

def test_context_length_exports_once_its_bound_is_declared() -> None:
    """An LLM that checks its context length (`assert t <= self.block_size`) fails export
    with the default Dim (up to 2^20) and exports once pt2bot.yml declares `seq: {max: 64}`."""
    kw = dict(inputs=GPT_INPUTS, shapes={"batch": [2, 3], "seq": [8, 32]},
              dynamic=("batch", "seq"))
    unbounded = run_model("models.shape_advice:TinyGPT", **kw)["export"]
    assert unbounded["ok"] is False and unbounded["kind"] == "constraint_violation"
    assert (unbounded["path"], unbounded["line"]) == (
        "models/shape_advice.py", line_of("shape_advice.py", "block-size"))
    bounded = run_model("models.shape_advice:TinyGPT",
                        bounds={"seq": {"min": None, "max": 64, "multiple_of": None}}, **kw)
    ex = bounded["export"]
    assert ex["ok"] is True and ex["static_dims"] == []
    assert [c["match"] for c in ex["cases"]] == [True] * 4


def test_declared_divisibility_exports_as_a_multiple_of_a_dim() -> None:
    """`multiple_of: 2` becomes `2*Dim`: a model that needs an even length exports."""
    kw = dict(inputs=[{"shape": ["batch", "seq", 4]}], shapes={"batch": [2], "seq": [8, 16]},
              dynamic=("seq",))
    assert run_model("models.shape_advice:PairPool", **kw)["export"]["ok"] is False
    ex = run_model("models.shape_advice:PairPool",
                   bounds={"seq": {"min": None, "max": None, "multiple_of": 2}}, **kw)["export"]
    assert ex["ok"] is True and [c["match"] for c in ex["cases"]] == [True, True]
