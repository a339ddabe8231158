"""A number read only for the check right after it (pt2bot/rules/check_fixes.py
`number_check_fixes`): a new user's DETR PR added `num_valid = int((~mask).sum())`, then `if
num_valid == 0: raise ValueError(...)`; dynamo breaks at `int()` (GB0124), and the recipes had no
edit ("the recipes of PTC101, PTC104 have no edit for this code"). Compiled code now asserts
the test on the tensor, and eager code runs both statements as they were. The recipe's text,
the code it leaves alone, then the proof on real torch."""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

DETR = """\
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x, mask):
        h = self.proj(x)
        num_valid = int((~mask).sum())
        if num_valid == 0:
            raise ValueError("every pixel of the batch is padding")
        return h * (~mask).unsqueeze(-1)
"""
LINE = 12
assert DETR.splitlines()[LINE - 1].strip() == "num_valid = int((~mask).sum())"
FIXED = ("        if torch.compiler.is_compiling():",
         "            torch._assert_async(torch.logical_not((~mask).sum().long() == 0), "
         "'every pixel of the batch is padding')",
         "        else:",
         "            num_valid = int((~mask).sum())",
         "            if num_valid == 0:",
         "                raise ValueError(\"every pixel of the batch is padding\")")
TITLE = "keep the check in compiled code on the tensor"


def _target(path: str = "pkg/head.py") -> dict:
    return break_target("head", path, LINE, "GB0124", "Unsupported Tensor.item() call with capture_scalar_outputs=False")


def test_the_number_and_its_check_go_to_eager_and_compiled_code_asserts_the_tensor():
    (c,) = offered(_target("m.py"), DETR, TITLE)
    assert (c.start_line, c.end_line, c.lines, c.safe, c.rank) == (LINE, LINE + 2, FIXED, False, 0)
    assert c.guards == ("invalid",)
    compile(apply_candidate(DETR, c), "m.py", "exec")
    # `.item()` read by a check: the same, the message made constant
    peak = DETR.replace("num_valid = int((~mask).sum())", "peak = h.abs().max().item()").replace(
        "if num_valid == 0:", "if peak > 1e4:").replace(
        'raise ValueError("every pixel of the batch is padding")', 'raise FloatingPointError(f"exploded: {peak}")')
    (c,) = offered(_target("m.py"), peak, TITLE)
    assert c.lines[1] == "            torch._assert_async(torch.logical_not(h.abs().max() > 1e4), 'exploded')"
    assert c.lines[3:] == ("            peak = h.abs().max().item()", "            if peak > 1e4:",
                           '                raise FloatingPointError(f"exploded: {peak}")')


@pytest.mark.parametrize("change", [
    # the number is read after the check too: compiled code would need it there
    ("return h * (~mask).unsqueeze(-1)", "return h * num_valid"),
    # what follows is no check that raises
    ('raise ValueError("every pixel of the batch is padding")', "h = h * 0"),
])
def test_a_number_read_elsewhere_or_no_check_gets_no_such_edit(change):
    assert offered(_target("m.py"), DETR.replace(*change), TITLE) == []


CONFIG = one_model("head", "pkg.head:Head",
                   "[{name: x, shape: [batch, 5, 4]}, {name: mask, shape: [batch, 5], dtype: bool}]",
                   "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_it_where_a_mask_all_padding_raises(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/head.py": DETR}, CONFIG)
    (c,) = [dataclasses.replace(c, path="pkg/head.py") for c in offered(_target("m.py"), DETR, TITLE)]
    verdict = prove(root, "head", [item("c", c, DETR, _target())], tmp_path / "work")["c"]
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0124 gone"), verdict["evidence"]
    # head raises ValueError on a mask all on, compiled code RuntimeError: said first
    assert verdict["caveats"] and verdict["caveats"][0].startswith(
        "compiled code raises RuntimeError where head raises ValueError"), verdict


GPT = """\
import torch
from torch import nn


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 4)
        self.head = nn.Linear(4, 16)

    def forward(self, idx):
        logits = self.head(self.emb(idx))
        if torch.isnan(logits).any():
            raise FloatingPointError("NaN in the logits")
        return logits
"""
CHECK = 13
assert GPT.splitlines()[CHECK - 1].strip() == "if torch.isnan(logits).any():"


@pytest.mark.torch
def test_values_head_refused_before_the_check_are_said_apart(tmp_path):
    """A new user's NaN check on nanochat's logits was "verified" with "values a check may
    refuse (-1, 0, 1e3, 1e6; head raised on -1, 1e3, 1e6) injected": those went into the token
    ids, and head raised IndexError in the embedding, long before the check. Only NaN in the
    weights reached it."""
    config = one_model("gpt", "pkg.gpt:Tiny", "[{name: idx, shape: [batch, 5], dtype: int64, high: 16}]",
                       "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/gpt.py": GPT}, config)
    target = break_target("gpt", "m.py", CHECK, "GB0170", "Data-dependent branching")
    (c,) = offered(target, GPT, "keep the check in compiled code")
    c = dataclasses.replace(c, path="pkg/gpt.py")
    verdict = prove(root, "gpt", [item("c", c, GPT, dict(target, path="pkg/gpt.py"))], tmp_path / "work")["c"]
    assert verdict["accepted"] is True, verdict
    said = verdict["evidence"]
    assert "head raised IndexError before the check, which these did not reach" in said, said
    assert "head raised on -1" not in said, said


TAGGER = """\
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, mask):
        h = self.lin(x)
        if not mask[:, 0].all():
            raise ValueError("mask[:, 0] must be True")
        ends = mask.sum(1) - 1
        last = h[torch.arange(h.size(0)), ends]
        return torch.where(mask.unsqueeze(-1), h, 0.0).sum(1) + last


def inputs(batch):
    torch.manual_seed(batch)
    mask = torch.ones(batch, 5, dtype=torch.bool)
    mask[0, 3:] = False
    return torch.randn(batch, 5, 4), mask
"""
FIRST = 12
assert TAGGER.splitlines()[FIRST - 1].strip() == "if not mask[:, 0].all():"


@pytest.mark.torch
def test_an_exception_head_s_own_compiled_code_raises_is_no_caveat_of_the_edit(tmp_path):
    """A new user's TorchCRF tagger: the verified check read first "⚠️ Unlike head: compiled
    code raises TorchRuntimeError where head raises IndexError", from a bool mask given as
    int64 values (0/1 labels passed as a bool): head's own compiled code raises that too (its
    `torch.where` refuses an integer condition while tracing), so it is no difference the edit
    makes. The swap the check itself makes, ValueError to RuntimeError, is still said."""
    config = one_model("tagger", "pkg.tagger:Tagger", "{entry: pkg.tagger:inputs}", "{batch: [2, 3]}")
    root = write_repo(tmp_path / "repo", {"pkg/tagger.py": TAGGER}, config)
    target = break_target("tagger", "m.py", FIRST, "GB0170", "Data-dependent branching")
    (c,) = offered(target, TAGGER, "keep the check in compiled code")
    c = dataclasses.replace(c, path="pkg/tagger.py")
    verdict = prove(root, "tagger", [item("c", c, TAGGER, dict(target, path="pkg/tagger.py"))], tmp_path / "work")["c"]
    assert verdict["accepted"] is True, verdict
    assert verdict["caveats"] == ["compiled code raises RuntimeError where head raises ValueError (on CUDA a "
                                  "device-side assert, which ends the process's CUDA context)"], verdict
