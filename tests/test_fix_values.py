"""The proof compares what the replaced statements leave behind, not only the outputs
(pt2bot/smoke/values.py): torchdiffeq's stage time was "verified" kept from either arm of its
`if`, because the benchmark's ODEs never read it. Here the model stores such a value for its
caller (a logged statistic) and returns outputs that never read it: keeping either arm gives
equal outputs on every shape case, and only the value after the `if` shows the edit wrong."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import fix_candidates
from pt2bot.smoke.patch import Edit
from pt2bot.smoke.values import compare, probe_site
from pt2bot.static import check_paths

KEEP_IF = "drop the branch and run the `if` arm where the test is false too"
KEEP_ELSE = "drop the branch and run the `else` arm where the test is true too"

# batch 2 runs the `else` arm, batch 3 the `if` arm
LOGGED = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.seen = []

    def forward(self, x):
        s = x.sum() * 0 + (x.shape[0] - 2)
        if s > 0:
            t = x.mean()
        else:
            t = x.mean() * 2
        self.seen.append(t)
        return self.lin(x)
"""
IF_LINE = 13
END_LINE = 16


def test_the_probe_goes_after_the_whole_if_and_watches_what_it_binds():
    edit = Edit.in_text("bpkg/net.py", IF_LINE, END_LINE, 1, LOGGED)
    patched = LOGGED.replace("        if s > 0:\n            t = x.mean()\n        else:\n"
                             "            t = x.mean() * 2\n", "        t = x.mean()\n")
    site = probe_site(LOGGED, patched, edit)
    assert site is not None and site.line == END_LINE and site.names == ("t",)
    probe = '        __import__("pt2bot.smoke.values").smoke.values.take(locals())'
    assert site.head_text.splitlines()[END_LINE] == probe
    assert site.cand_text.splitlines()[IF_LINE] == probe
    assert site.cand_text.splitlines()[IF_LINE - 1] == "        t = x.mean()"


def test_an_edit_inside_a_block_is_watched_inside_it():
    text = LOGGED.replace("            t = x.mean() * 2\n", "            t = x.mean() * 2\n            u = t\n")
    edit = Edit.in_text("bpkg/net.py", 16, 16, 1, text)
    site = probe_site(text, text.replace("t = x.mean() * 2", "t = x.mean() + x.mean()"), edit)
    assert site is not None and site.line == 16 and site.names == ("t",)
    assert site.head_text.splitlines()[16].startswith("            __import__")


def test_statements_that_bind_nothing_have_nothing_to_compare():
    text = LOGGED.replace("        self.seen.append(t)\n", "        if t.isnan().any():\n"
                          "            raise ValueError('nan')\n")
    edit = Edit.in_text("bpkg/net.py", 17, 18, 0, text)
    assert probe_site(text, text.replace("        if t.isnan().any():\n            raise ValueError('nan')\n", ""),
                      edit) is None


torch = pytest.importorskip("torch")


def test_values_compare_a_number_kept_as_a_tensor_as_the_same_value():
    shape = [{"batch": 2}]
    same = compare([[{"n": 3, "f": 0.5}]], [[{"n": torch.tensor(3), "f": torch.tensor(0.5)}]],
                   shape, ("n", "f"), None)
    assert same[0]["match"] is True and same[0]["compared"] == 2
    other = compare([[{"n": 3}]], [[{"n": torch.tensor(4)}]], shape, ("n",), None)
    assert other[0]["match"] is False and other[0]["message"].startswith("`n`:")
    # a temporary one side binds and the code after never reads
    unbound = compare([[{"n": 3}]], [[{}]], shape, ("n",), None)
    assert unbound[0]["match"] is True and unbound[0]["compared"] == 0
    fewer = compare([[{"n": 3}, {"n": 4}]], [[{"n": 3}]], shape, ("n",), None)
    assert fewer[0]["message"] == "the candidate passes the edited statements 1 times, head 2"


@pytest.mark.torch
def test_an_arm_kept_whose_value_the_outputs_never_read_is_refused(tmp_path, monkeypatch):
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, LOGGED, phases=("breaks", "matrix"))
    found = [f for f in check_paths(str(tmp_path), ["bpkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC201"]
    assert len(found) == 1, found
    cands = {c.title: c for c in fix_candidates(found[0], LOGGED) if c.title in (KEEP_IF, KEEP_ELSE)}
    assert set(cands) == {KEEP_IF, KEEP_ELSE}
    for title, shape in ((KEEP_IF, "batch=2"), (KEEP_ELSE, "batch=3")):
        c = cands[title]
        verdict = proof.prove(c.start_line, c.end_line, c.lines, guards=c.guards)
        assert verdict["accepted"] is False, verdict
        assert verdict["reason"].startswith(f"after line {END_LINE}, `t`: "), verdict
        assert verdict["reason"].endswith(f"on shape case {shape}, though the outputs are equal"), verdict


@pytest.mark.torch
def test_an_edit_that_keeps_the_values_says_so(tmp_path, monkeypatch):
    """`x.mean() * 2` written as `x.mean() + x.mean()`: the same `t`, compared after it."""
    from tests.test_fix_proof_inprocess import Proof

    text = LOGGED.replace("        if s > 0:\n            t = x.mean()\n        else:\n", "        if True:\n"
                          "            t = x.mean()\n        if s <= 0:\n")
    proof = Proof(tmp_path, monkeypatch, text, phases=("breaks", "matrix"))
    verdict = proof.prove(IF_LINE + 2, IF_LINE + 3, "        t = torch.where(s <= 0, x.mean() * 2, t)",
                          at=IF_LINE + 2)
    assert verdict["accepted"] is True, verdict
    assert f"`t` equal after line {IF_LINE + 3}" in verdict["evidence"], verdict


STORED = LOGGED.replace("            t = x.mean()\n", "            self.last = x.mean()\n            t = x\n") \
               .replace("            t = x.mean() * 2\n", "            self.last = x.mean() * 2\n            t = x\n") \
               .replace("        self.seen.append(t)\n", "        self.seen.append(t.shape)\n")


def test_an_attribute_the_statements_set_is_watched_too():
    lines = STORED.splitlines(keepends=True)
    patched = "".join(lines[:IF_LINE - 1] + ["        self.last = x.mean()\n", "        t = x\n"]
                      + lines[END_LINE + 2:])
    edit = Edit.in_text("bpkg/net.py", IF_LINE, END_LINE + 2, 2, STORED)
    site = probe_site(STORED, patched, edit)
    assert site is not None and site.names == ("self.last", "t")


@pytest.mark.torch
def test_an_arm_kept_whose_stored_state_differs_is_refused(tmp_path, monkeypatch):
    """The arms differ only in what they store on the module (a statistic the caller logs)."""
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, STORED, phases=("breaks", "matrix"))
    verdict = proof.prove(IF_LINE, END_LINE + 2, ("        self.last = x.mean()", "        t = x"))
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith(f"after line {END_LINE + 2}, `self.last`: "), verdict


def test_a_local_nothing_reads_after_the_statements_is_not_compared():
    """A loop run on past its `break` (pt2bot/rules/branch_fixes.py `_frozen_loop_fixes`) ends
    with another loop variable and other temporaries than head's; only what the code after the
    loop reads, and what the loop writes into, is left behind."""
    text = LOGGED.replace("        if s > 0:\n            t = x.mean()\n        else:\n            t = x.mean() * 2\n",
                          "        t = x.mean()\n        for i in range(3):\n            prev = t\n"
                          "            t = t * 0.5\n            x[0] = t\n")
    loop = text.splitlines().index("        for i in range(3):") + 1
    edit = Edit.in_text("bpkg/net.py", loop, loop + 3, 4, text)
    site = probe_site(text, text.replace("t * 0.5", "t / 2"), edit)
    assert site is not None and site.names == ("t", "x"), site


def test_an_attribute_the_candidate_stops_setting_is_not_compared():
    """Module state made a local (the module-state rule's edit) changes the attribute on purpose."""
    text = STORED.replace("        return self.lin(x)\n", "        return self.lin(x) + self.last\n")
    lines = text.splitlines(keepends=True)
    patched = "".join(lines[:IF_LINE - 1] + ["        last = x.mean()\n", "        t = x\n"]
                      + lines[END_LINE + 2:]).replace("+ self.last\n", "+ last\n")
    edit = Edit.in_text("bpkg/net.py", IF_LINE, END_LINE + 2, 2, text)
    site = probe_site(text, patched, edit)
    assert site is not None and site.names == ("t",)


# batch 2 runs the `else` arm, batch 3 the `if` arm, whose `.detach()` lets no gradient reach
# the input (a block of a larger model: the layers before it are not trained through it)
DETACHED = LOGGED.replace("            t = x.mean()\n", "            t = self.lin(x.detach())\n") \
                 .replace("            t = x.mean() * 2\n", "            t = self.lin(x)\n") \
                 .replace("        self.seen.append(t)\n        return self.lin(x)\n", "        return t\n")


@pytest.mark.torch
def test_gradients_are_compared_on_every_shape_case(tmp_path, monkeypatch):
    """Keeping the `else` arm computes the same forward everywhere, and the same gradients on
    batch 2 (where head ran that arm); on batch 3 head's `.detach()` gave the input no
    gradient. Compared on the first shape case only, the edit was verified."""
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, DETACHED, phases=("breaks", "matrix"))
    verdict = proof.prove(IF_LINE, END_LINE, "        t = self.lin(x)")
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith("the inputs' gradients differ from head's on shape case batch=3 "
                                        "(their sums differ by"), verdict


# Liger-Kernel's SAPO loss as the PR wrote it: two masked writes into an empty buffer
SAPO = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        coef = self.lin(x)
        loss = torch.empty_like(coef)
        mask = coef > 0
        loss[mask] = torch.sigmoid(coef[mask] * 2)
        loss[~mask] = torch.sigmoid(coef[~mask] * 3)
        return loss.sum()
"""
FIRST_WRITE = 14


@pytest.mark.torch
def test_uninitialised_memory_is_the_same_in_both_runs(tmp_path, monkeypatch):
    """After the first write, head's buffer holds uninitialised memory where the mask is off,
    and so does the candidate's: a different allocation in each run, so different garbage.
    Both runs fill it alike (NaN), and the values compare equal."""
    from tests.test_fix_proof_inprocess import Proof

    proof = Proof(tmp_path, monkeypatch, SAPO, phases=("breaks", "matrix"))
    verdict = proof.prove(FIRST_WRITE, FIRST_WRITE,
                          "        loss = torch.where(mask, torch.sigmoid(coef * 2), loss)", gb="GB0036")
    assert verdict["accepted"] is True, verdict
    assert f"`loss` equal after line {FIRST_WRITE}" in verdict["evidence"], verdict
