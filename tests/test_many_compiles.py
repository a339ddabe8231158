"""A model that compiles more frames than torch keeps compilation records for (the last 64 by
default) still has every recompile counted. torchdiffeq's solvers compile about sixty frames on
their first input; on the second batch size each recompiles, and a count of "the records since
the case began", read by position in torch's capped list, lost the earliest ones. The count then
depended on how many frames came before: a fix that removed one graph break (one frame fewer)
was charged with recompiles that head made too but that head's count had lost.

The truth the counts are held to is torch's own `recompiles` log."""
from __future__ import annotations

import logging
import textwrap

import pytest

torch = pytest.importorskip("torch")

from pt2bot.smoke.inputs import CaseInputs  # noqa: E402
from pt2bot.smoke.location import RepoPaths  # noqa: E402
from pt2bot.smoke.matrix import measure_matrix  # noqa: E402
from pt2bot.smoke.trace import reset_dynamo  # noqa: E402
from tests.pymodule import load_module  # noqa: E402

CALLS = 40   # each call's graph break gives the caller one more resume frame


def _model(tmp_path):
    body = "\n".join(f"        x = step(x + {k})" for k in range(CALLS))
    src = textwrap.dedent("""\
        import torch


        def step(x):
            y = x * 2
            torch._dynamo.graph_break()
            return y - 1


        class Chain(torch.nn.Module):
            def forward(self, x):
        """) + body + "\n        return x\n"
    (tmp_path / "chain.py").write_text(src)
    return load_module(tmp_path / "chain.py").Chain()


class _Recompiles(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.n += "Recompiling function" in record.getMessage()


def test_every_recompile_is_counted_past_torchs_kept_records(tmp_path):
    model = _model(tmp_path)
    cases = [CaseInputs(shape={"batch": b}, args=(torch.randn(b, 3),), kwargs={}) for b in (2, 3)]
    for c in cases:
        c.dims = {"x": {0: "batch"}}
    with torch.no_grad():
        outs = [model(*c.args) for c in cases]
    truth = _Recompiles()
    torch._logging.set_logs(recompiles=True)
    logger = logging.getLogger("torch._dynamo")
    logger.addHandler(truth)
    try:
        got = measure_matrix(model, cases, outs, {}, {"backend": "eager", "recompile_limit": 8},
                             RepoPaths(str(tmp_path)))
    finally:
        logger.removeHandler(truth)
        torch._logging.set_logs()
        reset_dynamo()
    rec = got["recompiles"]
    assert rec["compiles"] > 64 + CALLS // 2, rec["compiles"]   # past torch's 64 kept records
    assert truth.n > CALLS
    assert rec["cases"][1]["recompiles"] == truth.n
    assert rec["count"] + rec["size_one"] == truth.n
