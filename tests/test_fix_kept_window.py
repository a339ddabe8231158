"""Numbers read back at once and tested by an early return further down (pt2bot/rules/
scalar_fixes.py `_kept_then_chained`): a window of intensities over the batch, `lo, hi =
x.min().item(), x.max().item()`, a blank input returned as zeros `if hi - lo < 1e-6:`, and
the rest dividing by `hi - lo`. Two held-out batches wrote this code (a new user's CT
classifier; complextorch's `rescale_intensity`, where the numbers are made in one arm of an
`if` and the other arm binds the caller's range) and got no edit: keeping the numbers alone
makes the `if` branch on a tensor. The recipe keeps them, detached, and selects the return
over the rest with PTC201's chain, 1 standing in for `hi - lo` where the test holds: without
it, a constant input makes the division not selected 0 / 0, whose gradient is NaN.
"""
from __future__ import annotations

import dataclasses

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo
from test_fixes import fixed

WINDOW = '''\
import torch
from torch import nn


class Window(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.head = nn.Linear(8, 3)

    def forward(self, x):
        lo, hi = x.min().item(), x.max().item()
        if hi - lo < 1e-6:
            return torch.zeros(x.shape[0], self.head.out_features, device=x.device)
        x = (x - lo) / (hi - lo)
        h = torch.relu(self.proj(x))
        return self.head(h)
'''
LINE = 12
TARGET = break_target("window", "pkg/model.py", LINE, "GB0124",
                      "Unsupported Tensor.item() call with capture_scalar_outputs=False")
KEPT = "keep `lo` and `hi` tensors"

RESCALE = '''\
import torch
from torch import nn


def rescale_intensity(x, in_range=None, out_range=(0.0, 1.0)):
    if x.is_complex():
        raise TypeError("rescale_intensity expects a real tensor; pass abs(x) first")
    if in_range is None:
        in_lo, in_hi = float(x.min()), float(x.max())
    else:
        in_lo, in_hi = in_range
    out_lo, out_hi = out_range
    if in_hi == in_lo:
        return torch.full_like(x, out_lo)
    x = x.clamp(in_lo, in_hi)
    return (x - in_lo) / (in_hi - in_lo) * (out_hi - out_lo) + out_lo


class Rescale(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return rescale_intensity(self.lin(x).abs())
'''
RLINE = 9
RTARGET = break_target("rescale", "pkg/model.py", RLINE, "GB0124",
                       "Unsupported Tensor.item() call with capture_scalar_outputs=False")


def test_the_numbers_the_return_and_the_rest_are_one_edit():
    [c] = offered(TARGET, WINDOW, KEPT)
    assert (c.start_line, c.end_line) == (LINE, 17)
    assert c.lines == (
        "        lo, hi = x.min().detach(), x.max().detach()",
        "        value1 = torch.zeros(x.shape[0], self.head.out_features, device=x.device)",
        "        safe_operand = torch.where(hi - lo < 1e-6, torch.ones_like(hi - lo), hi - lo)",
        "        x = (x - lo) / safe_operand",
        "        h = torch.relu(self.proj(x))",
        "        return torch.where(hi - lo < 1e-6, value1, self.head(h))")
    assert c.title == (
        "keep `lo` and `hi` tensors, detached (`.item()` carried no gradient), and select the early "
        "returns' values with nested `torch.where`; 1 stands in for `hi - lo` where the test holds, so "
        "that the division computed there and not selected is defined")
    # zeros make the min equal the max: the input that takes the return
    assert "zero" in c.guards and not c.safe
    fixed(WINDOW, c)


def test_numbers_made_in_one_arm_get_the_rest_repeated_there():
    [c] = offered(RTARGET, RESCALE, "keep `in_lo` and `in_hi` tensors")
    # the edit runs to the function's end: the other arm and the code after it as they were
    assert (c.start_line, c.end_line) == (RLINE, 16)
    assert c.lines == (
        "        in_lo, in_hi = x.min().detach(), x.max().detach()",
        "        out_lo, out_hi = out_range",
        "        value1 = torch.full_like(x, out_lo)",
        "        safe_operand = torch.where(in_hi == in_lo, torch.ones_like(in_hi - in_lo), in_hi - in_lo)",
        "        x = x.clamp(in_lo, in_hi)",
        "        return torch.where(in_hi == in_lo, value1,",
        "                           (x - in_lo) / safe_operand * (out_hi - out_lo) + out_lo)",
        *RESCALE.splitlines()[RLINE:16])
    assert "detached (`float()` carried no gradient), repeat the rest of the function in this block" in c.title
    out = fixed(RESCALE, c)
    # the caller's own range still runs the code it ran
    assert out.count("    return (x - in_lo) / (in_hi - in_lo) * (out_hi - out_lo) + out_lo") == 1


@pytest.mark.parametrize("change", [
    ("        return self.head(h)\n", "        return self.head(h) * int(hi)\n"),   # a number's job after it
    ("        h = torch.relu(self.proj(x))\n", "        h = torch.relu(self.proj(x))\n        lo = 0\n"),
    ("        x = (x - lo) / (hi - lo)\n", "        x = (x - lo) / (hi - lo)\n        print(f'{lo}')\n"),
    # a clamp with one kept bound beside a number reads the tensor back (a break of its own)
    ("        x = (x - lo) / (hi - lo)\n", "        x = (x - lo) / (hi - lo)\n        x = x.clamp(lo, 1.0)\n"),
])
def test_no_edit_where_a_number_is_read_as_one_or_bound_again(change):
    assert offered(TARGET, WINDOW.replace(*change), KEPT) == []


def test_no_edit_where_the_other_arm_falls_through_to_no_return():
    text = RESCALE.replace("    return (x - in_lo) / (in_hi - in_lo) * (out_hi - out_lo) + out_lo\n",
                           "    x = (x - in_lo) / (in_hi - in_lo) * (out_hi - out_lo) + out_lo\n")
    assert offered(RTARGET, text, "keep `in_lo` and `in_hi` tensors") == []


@pytest.mark.torch
def test_the_proof_verifies_both_on_a_constant_input_and_refuses_them_without_the_stand_in(tmp_path):
    files = {"pkg/model.py": WINDOW}
    root = write_repo(tmp_path / "repo", files,
                      one_model("window", "pkg.model:Window", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}"))
    [c] = offered(TARGET, WINDOW, KEPT)
    # the same edit with the division by `hi - lo` left as it was: computed on the input that
    # takes the return, 0 / 0, and selected away in the forward pass but not in the gradient
    bare = dataclasses.replace(c, lines=tuple(
        ln.replace("safe_operand", "(hi - lo)") for ln in c.lines if "safe_operand =" not in ln))
    v = prove(root, "window", [item("kept", c, WINDOW, TARGET)], tmp_path / "work")
    assert v["kept"]["accepted"] is True, v["kept"]
    assert "equal with zeros injected" in v["kept"]["evidence"]
    v = prove(root, "window", [item("bare", bare, WINDOW, TARGET)], tmp_path / "work-bare")
    assert v["bare"]["accepted"] is False and "NaN" in v["bare"]["reason"], v["bare"]

    root = write_repo(tmp_path / "repo2", {"pkg/model.py": RESCALE},
                      one_model("rescale", "pkg.model:Rescale", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}"))
    [r] = offered(RTARGET, RESCALE, "keep `in_lo` and `in_hi` tensors")
    v = prove(root, "rescale", [item("kept", r, RESCALE, RTARGET)], tmp_path / "work2")
    assert v["kept"]["accepted"] is True, v["kept"]
    assert v["kept"]["evidence"].startswith("GB0124 gone, 1 graph instead of 4"), v["kept"]


def test_a_layer_is_a_tensor_value_unless_it_returns_a_tuple():
    """`self.head(h)` where `__init__` set `self.head = nn.Linear(...)` is a tensor the chain may
    select; an LSTM cell's `(h, c)` or a pooling layer's `(values, indices)` is not."""
    import ast

    from pt2bot.rules.branch_fixes import _torch_layers

    tree = ast.parse("""\\
import torch
from torch import nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.cell = nn.LSTMCell(4, 4)
        self.pool = nn.MaxPool1d(2, return_indices=True)
        self.norm = torch.nn.LayerNorm(4)
        self.mixed = nn.Linear(4, 4)
        self.mixed = make()

    def forward(self, x):
        return x
""")
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")
    assert _torch_layers(tree, fn) == {"head", "norm"}
