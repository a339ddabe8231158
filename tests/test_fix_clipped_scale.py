"""A norm clipped to its bound without the `if` (pt2bot/rules/branch_fixes.py
`_clipped_scale_fixes`): FrEIA's invertible ResNet corrects each layer's spectral norm with `if
spectral_norm > self.spectral_norm_max: weight.data *= self.spectral_norm_max / spectral_norm`,
a branch on a tensor (GB0170) that makes dynamo run the whole forward in eager. Scaling by
`torch.where(norm > bound, bound / torch.fmax(norm, torch.as_tensor(bound)), 1.0)` is head's
factor, computed as head computes it, past the bound, exactly 1 within it or at a NaN norm, and
no division by 0 on the side not taken where the norm is 0 (weights all 0).
The edit texts and what gets none, then the proof loop: verified on a clipped norm, a negative
value tested, a NaN one and a bound of 0 too, and bit-equal to head where the factor is 1.
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

CLIP = """\
import torch
from torch import nn


class Clip(nn.Module):
    def __init__(self, bound=2.0):
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.bound = bound

    def forward(self, x):
        h = self.proj(x) + 0.5
        norm = h.norm()
        if norm > self.bound:
            h = h * (self.bound / norm)
        return h
"""
LINE = 14
assert CLIP.splitlines()[LINE - 1].strip().startswith("if norm > ")
CONFIG = one_model("clip", "pkg.clip:Clip", "[{name: x, shape: [batch, 4]}]", "{batch: [1, 6]}",
                   extra="    kwargs: {bound: BOUND}\n")


def _target(path: str = "pkg/clip.py") -> dict:
    return break_target("clip", path, LINE, "GB0170", "Data-dependent branching")


def _edits(text: str, path: str = "m.py") -> list:
    return offered(_target(path), text, "scale by `")


@pytest.mark.parametrize("new, want", [
    ("        if norm > self.bound:\n            h = h * (self.bound / norm)",
     "        h = h * torch.where(norm > self.bound, self.bound / torch.fmax(norm, torch.as_tensor(self.bound)), "
     "1.0)"),
    ("        if self.bound < norm:\n            h = h * (self.bound / norm)",
     "        h = h * torch.where(self.bound < norm, self.bound / torch.fmax(norm, torch.as_tensor(self.bound)), "
     "1.0)"),
    # in place where head scales in place (FrEIA's `weight.data *= ...`)
    ("        if norm >= self.bound:\n            h *= self.bound / norm",
     "        h *= torch.where(norm >= self.bound, self.bound / torch.fmax(norm, torch.as_tensor(self.bound)), 1.0)"),
    # a divisor: head's where the test holds, 1 where not; it divides by the bound only
    ("        if norm > self.bound:\n            h /= norm / self.bound",
     "        h /= torch.where(norm > self.bound, norm / self.bound, 1.0)"),
])
def test_the_scale_is_clamped_to_one(new, want):
    text = CLIP.replace("        if norm > self.bound:\n            h = h * (self.bound / norm)", new)
    (c,) = _edits(text)
    assert (c.start_line, c.end_line, c.safe, c.rank) == (LINE, LINE + 1, False, 0)
    assert c.lines == (want,)
    assert "(head's test decides, as it did)" in c.title
    compile(apply_candidate(text, c), "m.py", "exec")


@pytest.mark.parametrize("body", [
    "            h *= norm / self.bound",            # the inverse ratio: grows the values
    "            h = h * self.bound / norm",         # not the ratio as a factor of its own
    "            h += self.bound / norm",            # not a scale
    "            h = h * (self.bound / norm)\n            h = h + 1",   # more than the scale
])
def test_no_edit_where_the_block_is_not_the_clipped_scale(body):
    text = CLIP.replace("            h = h * (self.bound / norm)", body)
    assert text != CLIP
    assert _edits(text) == []


@pytest.mark.torch
@pytest.mark.parametrize("bound", [0.99, 0.007, 0.8, 2.0])
@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
def test_the_edit_is_bit_equal_to_head(bound, scale):
    # `b / b` is not exactly 1 in torch (a reciprocal, then a product: 0.99 / 0.99 in float32
    # is 0.99999994), so a factor held at the bound from below drifts the values by an ulp a
    # call where head leaves them; the factor is 1.0 there, and head's own expression past it
    import torch

    (c,) = _edits(CLIP)
    spaces: list[dict] = [{}, {}]
    exec(compile(CLIP, "head.py", "exec"), spaces[0])
    exec(compile(apply_candidate(CLIP, c), "patched.py", "exec"), spaces[1])
    torch.manual_seed(0)
    x = torch.randn(5, 4) * scale
    head, patched = (sp["Clip"](bound=bound) for sp in spaces)
    patched.load_state_dict(head.state_dict())
    with torch.no_grad():
        assert torch.equal(head(x), patched(x))
        for sp in (head, patched):
            sp.proj.weight.zero_()
            sp.proj.bias.zero_()
        assert torch.equal(head(x), patched(x))


def test_no_edit_where_the_value_tested_is_a_number():
    # `torch.clamp` takes a tensor: a number held at a tensor bound is another edit
    text = CLIP.replace("        if norm > self.bound:\n            h = h * (self.bound / norm)",
                        "        if 2.0 > norm:\n            h = h * (norm / 2.0)")
    assert text != CLIP
    assert _edits(text) == []


@pytest.mark.torch
@pytest.mark.parametrize("norm, bound, accepted", [("h.norm()", "2.0", True), ("-h.norm()", "2.0", False),
                                                   # 0 / 0, as FrEIA's power method gives on weights
                                                   # all 0 (under no_grad there: no gradient through it)
                                                   ("(h - h).detach().norm() / (h - h).detach().norm()", "2.0",
                                                    False),
                                                   # never past a bound of 0: the side not taken is 0 / 0
                                                   ("-h.norm()", "0.0", False),
                                                   # a norm of 0 (weights all 0), past a negative bound
                                                   ("(h - h).norm()", "-1.0", True)])
def test_the_loop_verifies_it(tmp_path, norm, bound, accepted):
    # the output grows with the batch: one shape case within the bound, the other past it. A
    # value tested that is never past the bound, or NaN, gets the factor 1, as head does; but
    # then the scale was never compared where it applies, and the edit is not verified on this
    # model (as with a guard its inputs cannot exercise)
    text = CLIP.replace("h = self.proj(x)", "h = self.proj(x) * x.shape[0] ** 2").replace("norm = h.norm()",
                                                                                         f"norm = {norm}")
    root = write_repo(tmp_path / "repo", {"pkg/clip.py": text}, CONFIG.replace("BOUND", bound))
    (c,) = _edits(text, path="pkg/clip.py")
    verdict = prove(root, "clip", [item("clip", c, text, _target())], tmp_path / "work")["clip"]
    assert verdict["accepted"] is accepted, verdict
    assert verdict["evidence"].startswith("GB0170 gone"), verdict
    if not accepted:
        assert verdict.get("unexercised") and verdict["reason"].startswith(
            f"no shape case or guard input enters the block at line {LINE + 1}"), verdict
    else:
        assert f"the block at line {LINE + 1} entered by head on" in verdict["evidence"], verdict
