"""A forward that writes into its inputs: every call gets its own copy of them.

gemma_pytorch's attention writes each call's keys and values into the KV-cache tensors it is
passed (`k_cache.index_copy_(1, kv_write_indices, xk)`), a list of pairs the input factory
returns. Called again on the same tensors, a call sees what the last one left there, and with
autograd on, that cache holds the last call's graph: "Trying to backward through the graph a
second time". The proof ran head and each candidate on one case's tensors, so an exact
`torch.where` was refused ("outputs differ from head's (max abs error 0.549)" on inputs all 1) and
a setting that works was "not verified: the parameters' gradients differ". Each call now gets a
copy of every input tensor, those inside lists, tuples and dicts too, and the inputs all 0 and
all 1 fill those as well.
"""
from __future__ import annotations

import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate

NET = """\
import torch
from torch import nn


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = nn.Linear(8, 8)

    def forward(self, x, caches):
        h = self.k(x)
        caches[0].add_(h.mean(1, keepdim=True))
        out = h + caches[0]
        if torch.isnan(out).any():
            out = torch.nan_to_num(out)
        return out


def make(batch, seq):
    g = torch.Generator().manual_seed(batch * 100 + seq)
    return {"x": torch.randn(batch, seq, 8, generator=g), "caches": [torch.zeros(batch, 1, 8)]}
"""

CONFIG = """\
version: 1
models:
  - name: cached
    entry: pkg.net:Cached
    inputs: {entry: pkg.net:make}
    shapes: {batch: [2, 3], seq: [4]}
    export: false
    grad: true
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""

BRANCH = 14
TARGET = {"kind": "break", "model": "cached", "path": "pkg/net.py", "line": BRANCH, "gb": "GB0170",
          "gb_type": "Data-dependent branching"}


def test_a_call_leaves_the_case_s_nested_tensors_as_they_were():
    import torch

    from pt2bot.smoke.inputs import CaseInputs, run_forward
    from pt2bot.smoke.trace import RepoPaths
    from pt2bot.smoke.verify import constant_case

    cache = torch.zeros(2, 1, 3)

    class Writes(torch.nn.Module):
        def forward(self, x, caches):
            caches[0].add_(x.mean(1, keepdim=True))
            return x + caches[0]

    x = torch.ones(2, 4, 3)
    case = CaseInputs({"batch": 2}, (), {"x": x, "caches": [cache]}, {}, ())
    paths = RepoPaths("/nonexistent")
    first, second = (run_forward(Writes(), case, paths) for _ in range(2))
    assert torch.equal(first, second)
    assert torch.equal(cache, torch.zeros(2, 1, 3))        # the case's own tensor untouched
    ones = constant_case(case, 1.0)
    assert torch.equal(ones.kwargs["caches"][0], torch.ones(2, 1, 3))   # filled inside the list


@pytest.mark.torch
def test_an_exact_edit_of_a_model_that_writes_into_its_inputs_is_verified(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    cand = Candidate(code="PTC201", path="pkg/net.py", start_line=BRANCH, end_line=BRANCH + 1,
                     lines=("        out = torch.where(torch.isnan(out).any(), torch.nan_to_num(out), out)",),
                     title="where", safe=False, guards=("nan",))
    p = Proposal(cid="c0", cand=cand, original=NET, patched=apply_candidate(NET, cand), findings=[],
                 targets=[0])
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    s = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                     head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(s, config.model("cached"), None, [(p, [TARGET])], str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["c0"]["accepted"], verdicts["c0"]
    assert "gradients equal" in verdicts["c0"]["evidence"]
