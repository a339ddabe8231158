"""The PTC201 recipe that drops an `if`/`else` and keeps one arm (pt2bot/rules/branch_fixes.py
`_keep_arm_fixes`): peft's `if scaling == 1:` (the `else` arm, `* scaling`, is exact at 1) and
FastTD3's running variance (Chan's update gives the batch's variance when the count before is
0). Then its proof (pt2bot/smoke/verify.py `_dropped_arm`), in this process on tiny models: the
edit is shown right only by a shape case on which head ran the arm the edit drops; on the other
cases the kept arm is what head ran."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import fix_candidates
from pt2bot.smoke.verify import A_CASE_WOULD
from pt2bot.static import check_paths
from tests.test_fixes import findings_in, fixed

KEEP_IF = "drop the branch and run the `if` arm where the test is false too"
KEEP_ELSE = "drop the branch and run the `else` arm where the test is true too"

BRANCH = """\
import torch
from torch import nn


class Net(nn.Module):
    def forward(self, x, result):
        s = x.sum()
        if s > 0:
            # the sum was positive
            result = result + x

            result = (result
                      * 2)
        else:
            result = result + x * 2
        return result
"""


def _keep_arm(tmp_path, text: str) -> tuple[str, list]:
    src, found = findings_in(tmp_path, text, "PTC201")
    assert len(found) == 1, found
    cands = [c for c in fix_candidates(found[0], src) if c.title in (KEEP_IF, KEEP_ELSE)]
    for c in cands:
        fixed(src, c)
    return src, cands


def test_each_arm_is_offered_alone_one_level_up(tmp_path):
    src, cands = _keep_arm(tmp_path, BRANCH)
    assert [c.title for c in cands] == [KEEP_IF, KEEP_ELSE]
    keep_if, keep_else = cands
    assert (keep_if.start_line, keep_if.end_line) == (8, 15)
    assert keep_if.lines == ("        # the sum was positive",
                             "        result = result + x",
                             "",
                             "        result = (result",
                             "                  * 2)")
    assert (keep_else.start_line, keep_else.end_line) == (8, 15)
    assert keep_else.lines == ("        result = result + x * 2",)
    # before `torch.where` (rank 1): the smaller edit, tried first
    assert keep_if.rank == keep_else.rank == 0
    assert not keep_if.safe


def test_an_elif_chain_gets_no_arm_kept(tmp_path):
    _src, plain = _keep_arm(tmp_path, BRANCH)
    assert len(plain) == 2
    _src, chain = _keep_arm(tmp_path, BRANCH.replace("        else:\n", "        elif x.numel() > 3:\n"
                                                     "            result = result - x\n        else:\n"))
    assert chain == []


def test_an_arm_that_returns_gets_no_arm_kept(tmp_path):
    _src, plain = _keep_arm(tmp_path, BRANCH)
    assert len(plain) == 2
    _src, leaves = _keep_arm(tmp_path, BRANCH.replace("            result = result + x * 2\n",
                                                      "            return result + x * 2\n"))
    assert leaves == []


def test_a_name_one_arm_binds_and_the_code_after_reads_needs_the_other_arm_to_bind_it(tmp_path):
    """Keeping the `if` arm would leave `y` unbound (or stale) where head ran the `else` arm."""
    one_sided = BRANCH.replace("            result = result + x\n\n",
                                "            result = result + x\n            y = x\n\n")
    _src, unread = _keep_arm(tmp_path, one_sided)
    assert [c.title for c in unread] == [KEEP_IF, KEEP_ELSE]   # `y` read nowhere after
    _src, read = _keep_arm(tmp_path, one_sided.replace("        return result\n", "        return result + y\n"))
    assert read == []
    _src, both = _keep_arm(tmp_path, one_sided.replace("        return result\n", "        return result + y\n")
                           .replace("            result = result + x * 2\n",
                                    "            result = result + x * 2\n            y = x\n"))
    assert [c.title for c in both] == [KEEP_IF, KEEP_ELSE]


STAGE = """\
import enum

import torch


class Perturb(enum.Enum):
    NONE = 0
    PREV = 1


class Stage(torch.nn.Module):
    def forward(self, t0, t1, dt, alpha_i, k):
        if alpha_i.sum() == 1.:
            ti = t1
            perturb = Perturb.PREV
        else:
            ti = t0 + alpha_i * dt
            perturb = Perturb.NONE
        return ti, perturb, k
"""


@pytest.mark.parametrize("same, kept", [
    ("Perturb.NONE", [KEEP_IF, KEEP_ELSE]),     # one constant: the arms may agree
    ("Perturb.PREV", []),                        # torchdiffeq's runge-kutta stage
    ("2", []), ("-1", []), ("None", []), ("(1, 2)", []),
])
def test_arms_that_set_a_name_to_different_constants_never_compute_the_same(tmp_path, same, kept):
    """torchdiffeq's stage times: `ti` is the same at `alpha_i == 1` (t1 is t0 + dt), but
    `perturb` is not, and a model whose dynamics never read it showed equal outputs for either
    arm kept alone: each was "verified", one on each of two models."""
    src = STAGE.replace("            perturb = Perturb.PREV\n", f"            perturb = {same}\n")
    _src, cands = _keep_arm(tmp_path, src)
    assert [c.title for c in cands] == kept


def test_a_test_with_an_effect_of_its_own_gets_no_arm_kept(tmp_path):
    """Dropping the test would drop its call too (a method of the model's may count steps)."""
    _src, plain = _keep_arm(tmp_path, BRANCH.replace("        if s > 0:", "        if torch.sum(x) > 0:"))
    assert len(plain) == 2
    _src, drawn = _keep_arm(tmp_path, BRANCH.replace("        if s > 0:", "        if torch.rand(()) > s:"))
    assert drawn == []
    _src, in_place = _keep_arm(tmp_path, BRANCH.replace("        if s > 0:", "        if s.add_(1) > 0:"))
    assert in_place == []
    _src, called = _keep_arm(tmp_path, BRANCH.replace("        if s > 0:", "        if torch.sum(self.update(s)) > 0:"))
    assert called == []


# --------------------------------------------------------------------------- the proof

torch = pytest.importorskip("torch")

# peft's LoRA forward with the adapter's scaling a tensor (as prepare_model_for_compiled_hotswap
# makes it); here it depends on the batch, so that the shape cases differ: 1 for a batch of 2, 2
# for a batch of 3
PEFT = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Linear(4, 4)
        self.lora_A = nn.Linear(4, 2, bias=False)
        self.lora_B = nn.Linear(2, 4, bias=False)
        self.register_buffer("scaling", torch.tensor(2.0))

    def forward(self, x):
        result = self.base(x)
        scaling = torch.pow(self.scaling, x.shape[0] - 2)
        if scaling == 1:
            result = result + self.lora_B(self.lora_A(x))
        else:
            result = result + self.lora_B(self.lora_A(x)) * scaling
        return result
"""
SCALING = 16   # the `if`; its arms start on the next line and three lines down

# FastTD3's variance update, on statistics that hold no observation before a batch of 2 and 3
# before a batch of 3 (not updated here, so that every call is the same)
NORMALIZER = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("seen", torch.tensor(3.0))
        self.register_buffer("_mean", torch.full((1, 4), 0.5))
        self.register_buffer("_var", torch.full((1, 4), 2.0))

    def forward(self, x):
        count = torch.mul(self.seen, x.shape[0] - 2)
        batch_size = x.shape[0]
        new_count = count + batch_size
        batch_mean = torch.mean(x, dim=0, keepdim=True)
        mean = self._mean + (batch_size / new_count) * (batch_mean - self._mean)
        # Update variance using Chan's parallel algorithm
        if count > 0:
            batch_var = torch.mean((x - batch_mean) ** 2, dim=0, keepdim=True)
            delta2 = batch_mean - mean
            m_a = self._var * count
            m_b = batch_var * batch_size
            M2 = m_a + m_b + (delta2**2) * (count * batch_size / new_count)
            var = M2 / new_count
        else:
            # For first batch, just use batch variance
            var = torch.mean((x - mean) ** 2, dim=0, keepdim=True)
        return self.lin((x - mean) / torch.sqrt(var + 1e-2))
"""
COUNT = 20


def _proof(tmp_path, monkeypatch, text: str, phases):
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, text, phases=phases)
    found = [f for f in check_paths(str(tmp_path), ["bpkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC201"]
    assert len(found) == 1, found
    cands = {c.title: c for c in fix_candidates(found[0], text) if c.title in (KEEP_IF, KEEP_ELSE)}
    assert set(cands) == {KEEP_IF, KEEP_ELSE}

    def prove(title: str) -> dict:
        c = cands[title]
        return proof.prove(c.start_line, c.end_line, c.lines, guards=c.guards)
    return prove


@pytest.mark.torch
def test_keeping_the_else_arm_is_verified_where_a_shape_case_ran_the_if_arm(tmp_path, monkeypatch):
    """Batch 2 has scaling 1: head runs the `if` arm there, and the `else` arm's `* scaling`
    equals it. Keeping the `if` arm differs on batch 3 (scaling 2)."""
    prove = _proof(tmp_path, monkeypatch, PEFT, ("breaks", "matrix"))
    keep_else = prove(KEEP_ELSE)
    assert keep_else["accepted"] is True, keep_else
    assert "equal where head ran the dropped `if` arm: 1 of 2 shape cases" in keep_else["evidence"], keep_else
    keep_if = prove(KEEP_IF)
    assert keep_if["accepted"] is False
    assert keep_if["reason"].startswith("outputs differ from head's on shape case batch=3"), keep_if


@pytest.mark.torch
def test_an_arm_kept_where_no_shape_case_runs_the_other_is_refused(tmp_path, monkeypatch):
    """One shape case, batch 2, scaling 1: head runs the `if` arm only, so keeping it compares
    head with itself; keeping the `else` arm is compared with the `if` arm, and equals it."""
    prove = _proof(tmp_path, monkeypatch, PEFT, ("breaks",))
    keep_if = prove(KEEP_IF)
    assert keep_if["accepted"] is False
    assert keep_if["reason"] == (f"no shape case runs the `else` arm at line {SCALING + 3} that the "
                                 "edit drops, so keeping the `if` arm was never compared with head "
                                 "where they differ" + A_CASE_WOULD), keep_if
    keep_else = prove(KEEP_ELSE)
    assert keep_else["accepted"] is True, keep_else
    assert "equal where head ran the dropped `if` arm: 1 of 1 shape case" in keep_else["evidence"]


@pytest.mark.torch
def test_chans_update_kept_alone_is_verified_where_the_count_before_is_zero(tmp_path, monkeypatch):
    prove = _proof(tmp_path, monkeypatch, NORMALIZER, ("breaks", "matrix"))
    keep_if = prove(KEEP_IF)
    assert keep_if["accepted"] is True, keep_if
    assert "GB0170 gone" in keep_if["evidence"]
    assert "equal where head ran the dropped `else` arm: 1 of 2 shape cases" in keep_if["evidence"], keep_if
    keep_else = prove(KEEP_ELSE)
    assert keep_else["accepted"] is False
    assert keep_else["reason"].startswith("outputs differ from head's on shape case batch=3"), keep_else


@pytest.mark.torch
def test_an_arm_kept_by_an_edit_from_the_comment_above_is_still_one(tmp_path, monkeypatch):
    """The maintainers' own edit of peft's branch starts on the comment above the `if` and
    keeps the `else` arm: it is the same edit, and needs a shape case that runs the `if` arm
    as much. With one shape case where scaling is 2 there is none."""
    from tests.test_fix_proof_inprocess import Proof

    text = PEFT.replace("x.shape[0] - 2)", "x.shape[0] - 1)").replace(
        "        if scaling == 1:\n", "        # scaling of 1 is a no-op: skip the math\n        if scaling == 1:\n")
    proof = Proof(tmp_path, monkeypatch, text, phases=("breaks",))
    lines = text.splitlines()
    start = lines.index("        # scaling of 1 is a no-op: skip the math") + 1
    verdict = proof.prove(start, start + 4, ("        result = result + self.lora_B(self.lora_A(x)) * scaling",),
                          at=start + 1)
    assert verdict["accepted"] is False
    assert verdict["reason"] == (f"no shape case runs the `if` arm at line {start + 2} that the edit "
                                 "drops, so keeping the `else` arm was never compared with head where "
                                 "they differ" + A_CASE_WOULD), verdict


# DETR's position encoding with a pull request's fast path for a batch with no padding; its
# input is a `NestedTensor`, the images and their padding mask as plain attributes
NESTED = """\
import torch
from torch import nn


class NestedTensor:
    def __init__(self, tensors, mask):
        self.tensors = tensors
        self.mask = mask


class Encoding(nn.Module):
    def forward(self, tensor_list):
        x = tensor_list.tensors
        mask = tensor_list.mask.bool()   # (`.bool()`: what tells the rules it is a tensor)
        not_mask = ~mask
        if not mask.any():
            y_embed = torch.arange(1, x.shape[1] + 1, dtype=torch.float32).view(1, -1).expand(x.shape[0], -1)
        else:
            y_embed = not_mask.cumsum(1, dtype=torch.float32)
        return x * y_embed


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pos = Encoding()

    def forward(self, x):
        return self.pos(NestedTensor(x, torch.zeros(x.shape, dtype=torch.bool)))
"""


@pytest.mark.torch
def test_the_guard_input_goes_into_an_objects_tensor_attributes(tmp_path, monkeypatch):
    """DETR's revert of a fast path, keeping the `else` arm's cumsums, was refused: "the
    guard's case (an empty mask) cannot be reached: no tensor argument of
    PositionEmbeddingSine.forward can hold an empty mask", its mask being an attribute of the
    `NestedTensor` it takes. Set there, the cumsums equal the fast path's range."""
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, NESTED, phases=("breaks",))
    [found] = [f for f in check_paths(str(tmp_path), ["bpkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
               if f.rule == "PTC201"]
    [keep_else] = [c for c in fix_candidates(found, NESTED) if c.title == KEEP_ELSE]
    got = proof.prove(keep_else.start_line, keep_else.end_line, keep_else.lines, guards=keep_else.guards)
    assert got["accepted"] is True, got
    assert "equal with an empty mask injected" in got["evidence"], got["evidence"]
