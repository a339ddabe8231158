"""numpy's reductions of sizes in compiled code (`n = np.prod(x.shape[1:])`): dynamo traces
numpy into torch ops, so the product is a tensor to it, and `range(n)`, `int(n)` or an `if`
on it break the graph (GB0059, GB0208, GB0170 on torch 2.13). The finding on `range(n)` and
the recipe that computes the number from the sizes with Python (pt2bot/rules/size_fixes.py),
on source text, and through a real proof worker on a tiny model shaped like normflows'
autoregressive inverse, which refuses the wrong variants."""
from __future__ import annotations

import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.static import check_paths
from tests.test_fix_sizes import stand_in_candidates
from tests.test_fixes import findings_in, fixed
from proofs import one_model

HEAD = """\
import numpy as np
import torch


@torch.compile
def f(x):
{body}
"""


def test_a_numpy_count_of_range_is_flagged_and_computed_from_the_sizes(tmp_path):
    body = ("    n = np.prod(x.shape[1:])\n    out = x\n    for _ in range(n):\n        out = out * 2\n"
            "    return out")
    src, fs = findings_in(tmp_path, HEAD.format(body=body), "PTC104")
    (f,) = fs
    assert (f.line, f.gb) == (9, "GB0059") and "`range()`" in f.message
    (c,) = fix_candidates(f, src)
    # the edit is the assignment, two lines above the finding
    assert (c.start_line, c.end_line, c.lines, c.safe) == (7, 7, ("    n = x.shape[1:].numel()",), False)
    fixed(src, c)


INVERSE = """\
import numpy as np
import torch


class Autoregressive(torch.nn.Module):
    def inverse(self, inputs):
        num_inputs = np.prod(inputs.shape[1:])
        outputs = torch.zeros_like(inputs)
        for _ in range(num_inputs):
            outputs = outputs + inputs
        return outputs
"""


@pytest.mark.parametrize("gb", ["GB0059", "GB0208"])   # torch 2.13's code there, and 2.14.1's
def test_the_break_at_range_brings_the_recipe_where_no_rule_walked_the_method(gb):
    """normflows reaches a flow's `inverse` through a list of flows the call graph cannot
    follow: no finding there, but dynamo's break on the `for` line brings PTC104's recipes."""
    (c,) = stand_in_candidates(INVERSE, 9, gb)
    assert (c.start_line, c.end_line, c.lines) == (7, 7, ("        num_inputs = inputs.shape[1:].numel()",))


MONARCH = """\
import numpy as np
import torch


def blockdiag_multiply(x, weight):
    batch_shape, n = x.shape[:-1], x.shape[-1]
    batch_dim = np.prod(batch_shape)
    nblocks, q, p = weight.shape
    x_reshaped = x.reshape(batch_dim, nblocks, p).transpose(0, 1)
    out = torch.bmm(x_reshaped, weight.transpose(-1, -2)).transpose(0, 1)
    return out.reshape(*batch_shape, nblocks * q), n
"""


def test_sizes_bound_by_a_parallel_assignment_are_sizes():
    """torch-structured's Monarch multiply: the batch shape comes from `shape, n = x.shape[:-1],
    x.shape[-1]`, numpy's product of it is the reshape's size (GB0033 there): the product is
    the shape's `numel()`, and `n`, paired with a size, is an int."""
    (c,) = stand_in_candidates(MONARCH, 9, "GB0033")
    assert (c.start_line, c.end_line, c.lines) == (7, 7, ("    batch_dim = batch_shape.numel()",))
    # a name paired with something else is not a size (its product is then only numpy's
    # made a Python number, `numpy_product_fixes`)
    other = MONARCH.replace("x.shape[:-1], x.shape[-1]", "x.tolist(), x.shape[-1]")
    assert [c.title for c in stand_in_candidates(other, 9, "GB0033")] == [
        "compute `batch_dim` as a loop over Python numbers, not through numpy (dynamo makes "
        "numpy's product a tensor, and the size it feeds breaks the graph)"]


@pytest.mark.parametrize("body,want", [
    ("    n = int(np.prod(x.size()[1:]))\n    return x.view(-1, n)", "    n = x.size()[1:].numel()"),
    ("    return x.new_zeros(int(np.sum(x.shape)))", "    return x.new_zeros(sum(x.shape))"),
    ("    b, h, w = x.shape\n    return x.view(b, int(np.prod([h, w])))", "    return x.view(b, (h * w))"),
    ("    return x * int(np.array(x.shape[1:]).prod())", "    return x * x.shape[1:].numel()"),
])
def test_int_of_a_numpy_reduction_of_sizes_becomes_the_python_int(tmp_path, body, want):
    src, fs = findings_in(tmp_path, HEAD.format(body=body), "PTC104")
    (f,) = fs
    (c,) = [c for c in fix_candidates(f, src) if "from the sizes" in c.title]
    assert c.lines == (want,) and not c.safe
    fixed(src, c)


def test_an_if_on_a_numpy_product_of_sizes_gets_its_header_rewritten(tmp_path):
    body = "    if np.prod(x.shape[2:]) > 100:\n        x = x * 2\n        x = x + 1\n    return x"
    src, fs = findings_in(tmp_path, HEAD.format(body=body), "PTC201")
    (f,) = fs
    first = fix_candidates(f, src)[0]   # before torch.where / torch.cond / the eager-only guards
    # the header alone is replaced: the block's lines stay as they were
    assert (first.start_line, first.end_line, first.lines) == (7, 7, ("    if x.shape[2:].numel() > 100:",))
    fixed(src, first)


@pytest.mark.parametrize("body", [
    # a count numpy computes from Python numbers alone is a constant dynamo knows
    "    for _ in range(np.int64(3)):\n        x = x * 2\n    return x",
    "    for _ in range(len(np.ones(3))):\n        x = x * 2\n    return x",
])
def test_counts_dynamo_knows_are_not_flagged(tmp_path, body):
    assert findings_in(tmp_path, HEAD.format(body=body), "PTC104")[1] == []


def test_no_numpy_edit_where_np_is_not_numpy_in_the_function(tmp_path):
    body = "    np = x\n    n = int(np.prod(x.shape[1:]))\n    return x.view(-1, n)"
    src = HEAD.format(body=body)
    from pt2bot.findings import Finding
    f = Finding(rule="PTC104", path="m.py", line=8, col=8, severity="error", message="", source="")
    assert [c for c in fix_candidates(f, src) if "from the sizes" in c.title] == []


FLOW = """\
import numpy as np
import torch
from torch import nn


class Flow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 8)

    def forward(self, x):
        num_inputs = np.prod(x.shape[1:])
        out = torch.zeros_like(x)
        for _ in range(num_inputs):
            out = torch.tanh(self.lin(out)[:, :4] + x)
        return out
"""
COUNT, LOOP = 12, 14

CONFIG = one_model("flow", "pkg.flow:Flow", "[{name: x, shape: [batch, 4]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_the_count_from_the_sizes_and_refuses_wrong_counts(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "flow.py").write_text(FLOW)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/flow.py"], StaticConfig(select=("ALL",)), jobs=1)
    (finding,) = [f for f in found if f.rule == "PTC104"]
    assert finding.line == LOOP
    (numel,) = fix_candidates(finding, FLOW)
    import torch

    # what dynamo records there: `range` of a traced tensor (torch 2.13), a torch op returning a
    # non-tensor (2.14)
    gb, gb_type = (("GB0059", "Failed to trace builtin operator")
                   if tuple(int(p) for p in torch.__version__.split(".")[:2]) < (2, 14)
                   else ("GB0208", "torch.* op returned non-Tensor"))
    target = {"kind": "break", "model": "flow", "path": "pkg/flow.py", "line": LOOP, "gb": gb, "gb_type": gb_type}

    def wrong(line: str, title: str) -> Candidate:
        return Candidate(code="PTC104", path="pkg/flow.py", start_line=COUNT, end_line=COUNT,
                         lines=(line,), title=title, safe=False)

    # the wrong ones first: the loop stops trying a target's candidates once one is verified
    cands = {"int": wrong("        num_inputs = int(np.prod(x.shape[1:]))", "int() of the product"),
             "batch": wrong("        num_inputs = x.shape[0]", "a count read from the wrong dim"),
             "numel": numel}
    items = [(Proposal(cid=cid, cand=c, original=FLOW, patched=apply_candidate(FLOW, c), findings=[], targets=[]),
              [target]) for cid, c in cands.items()]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("flow"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))

    ok = verdicts["numel"]
    assert ok["accepted"] is True, ok
    # np.int64(4) before, 4 after: the same number, so the values check passes
    assert ok["evidence"].startswith(f"{gb} gone"), ok
    assert "`num_inputs` equal after line 12" in ok["evidence"], ok
    still = verdicts["int"]     # int() of the traced product breaks too, on its own line
    # GB0208 there: a new kind of break on torch 2.13, the target's own kind moved on 2.14
    assert still["accepted"] is False and still["reason"] == (
        "a new graph break: GB0208 at pkg/flow.py:12" if gb == "GB0059"
        else "GB0208 still breaks the graph at pkg/flow.py:12"), still
    batch = verdicts["batch"]   # 2 or 3 passes where head makes 4
    assert batch["accepted"] is False, batch
    assert batch["reason"].startswith("outputs differ from head's on shape case batch=2"), batch
