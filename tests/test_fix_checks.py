"""The recipe for a check on a tensor's values that raises (pt2bot/rules/check_fixes.py) and
the "invalid" guard that proves it (pt2bot/smoke/patch.py, pt2bot/smoke/verify.py).

The edits are taken from `fix_candidates` on findings the real checker reports, in the forms
kornia and torchvision write: `if (gamma < 0.0).any(): raise ValueError(...)`,
`if not torch.all(...): raise`, a `.item()` range check with `and not torch.isclose(...)`,
`KORNIA_CHECK(any(factor >= 0), msg)`, an `elif` chain; and the code that gets no edit.
Then the proof on a tiny real-torch model whose module-level check function another module
imports by name (as kornia's are): the recipe's edit is verified, head and the patched code
both raise ValueError on a negative gamma; `torch._assert_async` alone (RuntimeError in
eager) is refused; a check no injected value can make raise is refused.
"""
from __future__ import annotations

import dataclasses

import sys
import textwrap
import time
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.rules.check_fixes import message_of
from pt2bot.smoke.patch import Edit
from pt2bot.smoke.verify import judge
from pt2bot.static import check_paths
from proofs import item, one_model, prove

MODEL = """\
import torch
from torch import nn

from pkg.checks import {name}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))
        return {name}(h, torch.nn.functional.softplus(h.mean(1)))
"""


def findings(tmp_path: Path, body: str, name: str = "check"):
    """The findings on pkg/checks.py (`body`, dedented) as compiled code of a module."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "__init__.py").write_text("")
    src = textwrap.dedent(body)
    (root / "pkg" / "checks.py").write_text(src)
    (root / "pkg" / "model.py").write_text(MODEL.format(name=name))
    found = check_paths(str(root), ["pkg/checks.py", "pkg/model.py"], StaticConfig(select=("ALL",)), jobs=1)
    return src, [f for f in found if f.path == "pkg/checks.py"]


def edits(tmp_path: Path, body: str, name: str = "check") -> dict[int, list[list[str]]]:
    """line -> the lines of each check candidate the findings there offer."""
    src, fs = findings(tmp_path, body, name)
    out: dict[int, list[list[str]]] = {}
    for f in fs:
        for c in fix_candidates(f, src):
            if c.guards == ("invalid",):
                assert c.safe is False
                got = out.setdefault(f.line, [])
                if list(c.lines) not in got:
                    got.append(list(c.lines))
    return out


# --------------------------------------------------------------------------- the edits

# the forms kornia writes, with the message each assertion gets
FORMS = {
    "raise": ("""\
        import torch


        def check(x, gamma):
            if (gamma < 0.0).any():
                raise ValueError(f"Gamma must be non-negative. Got {gamma}")
            return x * gamma[:, None]
        """, "Gamma must be non-negative."),
    "not-all": ("""\
        import torch


        def check(x, gamma):
            if not torch.all((gamma < 0.5) * (gamma > -0.5)):
                raise AssertionError(f"gamma is between -0.5 and 0.5. Got {gamma}.")
            return x * gamma[:, None]
        """, "gamma is between -0.5 and 0.5."),
    "item": ("""\
        import torch


        def check(x, gamma):
            min_ = gamma.min()
            if min_.item() < 0.0 and not torch.isclose(min_, torch.as_tensor(0.0, dtype=min_.dtype)):
                raise ValueError(f"Values must be >= 0. Found {min_.item()}.")
            return x * gamma[:, None]
        """, "Values must be >= 0."),
    "assert": ("""\
        import torch


        def check(x, gamma):
            assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"
            return x * gamma[:, None]
        """, "Gamma must be non-negative."),
    "assert-not": ("""\
        import torch


        def check(x, gamma):
            assert not (gamma < 0.0).any(), "{} must be non-negative.".format("gamma")
            return x * gamma[:, None]
        """, "... must be non-negative."),
    "call": ("""\
        import torch


        def KORNIA_CHECK(condition, msg=None):
            if not condition:
                raise Exception(msg)


        def check(x, gamma):
            gamma = gamma.to(x.dtype)
            KORNIA_CHECK(any(gamma >= 0), "Gamma must be positive.")
            return x * gamma[:, None]
        """, "Gamma must be positive."),
}


def test_a_raise_on_any_becomes_an_assertion_in_compiled_code(tmp_path):
    assert edits(tmp_path, FORMS["raise"][0]) == {5: [[
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not((gamma < 0.0).any()), 'Gamma must be non-negative.')",
        "    elif (gamma < 0.0).any():",
        '        raise ValueError(f"Gamma must be non-negative. Got {gamma}")']]}


def test_an_assert_with_a_formatted_message_is_asserted_with_a_constant_one(tmp_path):
    """dynamo traces `assert <tensor>, "constant"` but breaks on a formatted message: compiled
    code gets the constant message, eager code keeps the `assert` as it was."""
    assert edits(tmp_path, FORMS["assert"][0]) == {5: [[
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async((gamma >= 0.0).all(), 'Gamma must be non-negative.')",
        "    else:",
        '        assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"']]}
    assert edits(tmp_path, FORMS["assert-not"][0]) == {5: [[
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not((gamma < 0.0).any()), '... must be non-negative.')",
        "    else:",
        '        assert not (gamma < 0.0).any(), "{} must be non-negative.".format("gamma")']]}


def _stand_in_edits(src: str, line: int, part: str) -> list[tuple[str, ...]]:
    """The check candidates of a finding where no rule flagged the line (pt2bot/fixes.py
    `break_findings`): all it knows is that `part`, where it starts, is a tensor."""
    from pt2bot.findings import Finding

    raw = src.splitlines()[line - 1]
    f = Finding(rule="PTC201", path="pkg/checks.py", line=line, col=raw.index(part), severity="warning",
                message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    return [c.lines for c in fix_candidates(f, src) if c.guards == ("invalid",)]


GRID = """\
import torch


def check(t, grid):
    assert grid[0] == t[0] TEST grid[-1] == t[-1]
    return t
"""


def test_an_assert_of_and_is_asserted_with_one_part_known_a_tensor():
    """torchdiffeq's `assert time_grid[0] == t[0] and time_grid[-1] == t[-1]`: no message, but
    `and` takes the first part's truth value, so dynamo breaks there. One part known a tensor
    is enough, and the later part may index: where an earlier part is false head raises
    anyway."""
    src = GRID.replace("TEST", "and")
    assert _stand_in_edits(src, 5, "grid[0]") == [(
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async((grid[0] == t[0]) & (grid[-1] == t[-1]), "
        "'AssertionError: grid[0] == t[0] and grid[-1] == t[-1]')",
        "    else:",
        "        assert grid[0] == t[0] and grid[-1] == t[-1]")]
    # in an `or` the later part would run where head passed without it: no edit
    assert _stand_in_edits(GRID.replace("TEST", "or"), 5, "grid[0]") == []


def test_an_assert_of_a_bitwise_and_keeps_it_as_written():
    """torchdiffeq's interpolation check: `&` of two comparisons is already the tensor."""
    src = GRID.replace("grid[0] == t[0] TEST grid[-1] == t[-1]",
                       "(grid[0] <= t) & (t <= grid[-1]), 'fails `t0 <= t <= t1`: {}'.format(t)")
    assert _stand_in_edits(src, 5, "(grid[0]") == [(
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async((grid[0] <= t) & (t <= grid[-1]), 'fails `t0 <= t <= t1`')",
        "    else:",
        "        assert (grid[0] <= t) & (t <= grid[-1]), 'fails `t0 <= t <= t1`: {}'.format(t)")]


def test_an_assert_dynamo_traces_gets_no_finding_and_no_edit(tmp_path):
    body = FORMS["assert"][0].replace('f"Gamma must be non-negative. Got {gamma}"', '"Gamma must be non-negative."')
    assert findings(tmp_path, body)[1] == [] and edits(tmp_path, body) == {}


def test_a_side_that_binds_looser_than_the_comparison_keeps_its_brackets(tmp_path):
    """`ast` spans leave brackets out: without them `x > (a if c else b)` would assert
    `(x > a) if c else b`, and `x == (y > 0)` a chained comparison."""
    got = edits(tmp_path, """\
        import torch


        def check(x, lo, hi):
            if (x.sum() > (lo if lo is not None else hi)).any():
                raise ValueError("too large")
            if x.sum() == (hi > 0):
                raise ValueError("odd")
            return x
        """)
    assert got[5][0][1] == ("        torch._assert_async(torch.logical_not((x.sum() > "
                            "(lo if lo is not None else hi)).any()), 'too large')")
    assert got[7][0][1] == ("        torch._assert_async(torch.logical_not(x.sum() == (hi > 0)), "
                            "'odd')")


def test_a_raise_under_not_asserts_the_test_itself(tmp_path):
    got = edits(tmp_path, FORMS["not-all"][0])
    assert got[5][0][1] == ("        torch._assert_async(torch.all((gamma < 0.5) * (gamma > -0.5)), "
                            "'gamma is between -0.5 and 0.5.')")


def test_an_item_range_check_keeps_the_tensor(tmp_path):
    """kornia's equalize: `.item()` (PTC101) and `torch.isclose` (PTC201) on one line offer one
    edit; the `.item()` in the message stays in the eager branch."""
    assert edits(tmp_path, FORMS["item"][0]) == {6: [[
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not((min_ < 0.0) & torch.logical_not(torch.isclose("
        "min_, torch.as_tensor(0.0, dtype=min_.dtype)))), 'Values must be >= 0.')",
        "    elif min_.item() < 0.0 and not torch.isclose(min_, torch.as_tensor(0.0, dtype=min_.dtype)):",
        '        raise ValueError(f"Values must be >= 0. Found {min_.item()}.")']]}


def test_a_check_call_of_any_is_asserted_in_compiled_code_and_called_in_eager(tmp_path):
    assert edits(tmp_path, FORMS["call"][0]) == {11: [[
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async((gamma >= 0).any(), 'Gamma must be positive.')",
        "    else:",
        '        KORNIA_CHECK(any(gamma >= 0), "Gamma must be positive.")']]}


def test_an_elif_chain_asserts_each_link_in_order(tmp_path):
    got = edits(tmp_path, """\
        import torch


        def check(x, std):
            if (std == 0).any():
                raise ValueError("std evaluated to zero, leading to division by zero.")
            elif torch.isnan(std).any():
                raise ValueError("std is NaN: {}".format(std))
            return x / std[:, None]
        """)
    want = [
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not((std == 0).any()), "
        "'std evaluated to zero, leading to division by zero.')",
        "        torch._assert_async(torch.logical_not(torch.isnan(std).any()), 'std is NaN')",
        "    elif (std == 0).any():",
        '        raise ValueError("std evaluated to zero, leading to division by zero.")',
        "    elif torch.isnan(std).any():",
        '        raise ValueError("std is NaN: {}".format(std))']
    assert got == {5: [want], 7: [want]}


def test_python_parts_before_the_tensor_test_stay_python_tests(tmp_path):
    """torchmetrics' `if not allow_non_binary_target and (target.max() > 1 or ...)`, and a size:
    a flag or a size has no tensor form (`torch.logical_not` of a Python bool fails, `~` of a
    size is -2), so compiled code tests it in Python first, as head does, and asserts the rest
    under it; where head's `and` stops at the flag, nothing after it is evaluated."""
    got = edits(tmp_path, """\
        import torch


        def check(x, target, allow_non_binary_target=False):
            if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
                raise ValueError("`target` must contain `binary` values")
            if x.size(0) > 0 and x.dim() == 2 and (x < 0).any():
                raise ValueError("negative")
            return x
        """)
    assert got[5] == [[
        "    if torch.compiler.is_compiling():",
        "        if not allow_non_binary_target:",
        "            torch._assert_async(torch.logical_not((target.max() > 1) | (target.min() < 0)), "
        "'`target` must contain `binary` values')",
        "    elif not allow_non_binary_target and (target.max() > 1 or target.min() < 0):",
        '        raise ValueError("`target` must contain `binary` values")']]
    assert got[7] == [[
        "    if torch.compiler.is_compiling():",
        "        if x.size(0) > 0 and x.dim() == 2:",
        "            torch._assert_async(torch.logical_not((x < 0).any()), 'negative')",
        "    elif x.size(0) > 0 and x.dim() == 2 and (x < 0).any():",
        '        raise ValueError("negative")']]


def test_a_name_dynamo_broke_on_is_asserted_as_it_is():
    """torchmetrics' `check = torch.any(...)` then `if check: raise`: with no finding, dynamo's
    break on the `if` is what says the name is a tensor."""
    src = """\
import torch


def check(target):
    check = torch.any((target != 0) & (target != 1))
    if check:
        raise RuntimeError(f"Detected the following values in `target`: {target}")
    return target
"""
    assert _stand_in_edits(src, 6, "check") == [(
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not(check), 'Detected the following values in `target`')",
        "    elif check:",
        '        raise RuntimeError(f"Detected the following values in `target`: {target}")')]


def test_dynamo_s_break_on_a_test_line_never_makes_a_flag_in_it_the_tensor():
    """The stand-in findings for a break with no static finding (pt2bot/fixes.py
    `break_findings`) anchor where the test's parts start, but not on a bare name inside it:
    an anchor on `allow_non_binary_target` made it the tensor of the test, and the edit
    `torch.logical_not(allow_non_binary_target)` raised a TypeError on the Python bool."""
    import ast

    from pt2bot.fixes import break_findings
    from pt2bot.rules import fix_candidates_explained

    src = """\
import torch


def check(target, allow_non_binary_target=False):
    if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
        raise ValueError("`target` must contain `binary` values")
    return target
"""
    found = break_findings({"kind": "break", "path": "pkg/checks.py", "line": 5, "gb": "GB0170"}, src, {})
    assert 11 not in [f.col for f in found] and found
    tree = ast.parse(src)
    texts = {line for f in found for c in fix_candidates_explained(f, src, tree)[0] for line in c.lines}
    assert "logical_not(allow_non_binary_target)" not in " ".join(texts)
    assert "        if not allow_non_binary_target:" in texts


def test_a_name_the_function_computed_is_an_anchor_inside_the_test():
    """pytorch-crf's mask check, `if not no_empty_seq and not no_empty_seq_bf: raise ...`, whose
    names the function computed (`no_empty_seq_bf = self.batch_first and mask[:, 0].all()`):
    such a name may be the tensor dynamo broke on, and the anchor on it gives the check kept
    in compiled code (verified on the batch-first models). Taken away with the flags' anchors,
    the site had no candidate."""
    import ast

    from pt2bot.fixes import break_findings
    from pt2bot.rules import fix_candidates_explained

    src = """\
import torch


def validate(mask, batch_first: bool):
    no_empty_seq = not batch_first and mask[0].all()
    no_empty_seq_bf = batch_first and mask[:, 0].all()
    if not no_empty_seq and not no_empty_seq_bf:
        raise ValueError("mask of the first timestep must all be on")
"""
    found = break_findings({"kind": "break", "path": "pkg/crf.py", "line": 7, "gb": "GB0170"}, src, {})
    assert {11, 32} <= {f.col for f in found}, found   # `no_empty_seq`, `no_empty_seq_bf`
    tree = ast.parse(src)
    texts = {line for f in found for c in fix_candidates_explained(f, src, tree)[0] for line in c.lines}
    assert "            torch._assert_async(no_empty_seq_bf, 'mask of the first timestep must all be on')" in texts


def test_a_chained_comparison_is_asserted_pair_by_pair():
    """torchsde's `assert t0 <= t <= t1, f"..."`: `(t0 <= t) & (t <= t1)`, a value that ends
    the message's sentence taking its full stop into the "..."."""
    src = """\
import torch


def linear_interp(t0, y0, t1, y1, t):
    assert t0 <= t <= t1, f"Incorrect time order for linear interpolation: t0={t0}, t={t}, t1={t1}."
    return y0
"""
    assert _stand_in_edits(src, 5, "t0") == [(
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async((t0 <= t) & (t <= t1), "
        "'Incorrect time order for linear interpolation: t0=..., t=..., t1=...')",
        "    else:",
        '        assert t0 <= t <= t1, f"Incorrect time order for linear interpolation: t0={t0}, t={t}, t1={t1}."')]


@pytest.mark.parametrize("body", [
    # a Python part after the tensor one: testing it first would change what head evaluates
    """\
    def check(x, gamma, strict):
        if (gamma < 0).any() and strict:
            raise ValueError("negative")
        return x
    """,
    # a Python part whose text is continued on the next line by the brackets around the test
    """\
    def check(x, gamma, strict, lenient):
        if (strict or
                lenient) and (gamma < 0).any():
            raise ValueError("negative")
        return x
    """,
    # an `else`: what runs there is not a check
    """\
    def check(x, gamma):
        if (gamma < 0).any():
            raise ValueError("negative")
        else:
            x = x + 1
        return x
    """,
    # not a raise
    """\
    def check(x, gamma):
        if (gamma < 0).any():
            gamma = gamma.abs()
        return x * gamma[:, None]
    """,
    # a chained comparison
    """\
    def check(x, gamma):
        if (0 < gamma.sum() < 1):
            raise ValueError("in (0, 1)")
        return x
    """,
    # a check with another argument (`raises=False` does not raise)
    """\
    def KORNIA_CHECK(condition, msg=None, raises=True):
        if not condition and raises:
            raise Exception(msg)


    def check(x, gamma):
        gamma = gamma.to(x.dtype)
        KORNIA_CHECK(any(gamma >= 0), "negative", raises=False)
        return x
    """,
    # the second argument is a value to compare with, not a message
    """\
    def assert_equal(a, b):
        if a != b:
            raise AssertionError(a)


    def check(x, gamma):
        gamma = gamma.to(x.dtype)
        assert_equal(any(gamma >= 0), True)
        return x
    """,
    # not a check by its name
    """\
    def validate(condition, msg=None):
        if not condition:
            raise Exception(msg)


    def check(x, gamma):
        gamma = gamma.to(x.dtype)
        validate(any(gamma >= 0), "negative")
        return x
    """,
])
def test_no_edit_where_the_test_or_the_statement_is_not_a_check(tmp_path, body):
    src, fs = findings(tmp_path, "import torch\n\n\n" + textwrap.dedent(body))
    assert fs, "the fixture must have a finding for the recipe to refuse"
    assert fs and [c for f in fs for c in fix_candidates(f, src) if "invalid" in c.guards] == []


def test_the_edit_writes_the_file_s_name_for_torch(tmp_path):
    src, fs = findings(tmp_path, """\
        import torch as T


        def check(x, gamma):
            if (gamma < 0.0).any():
                raise ValueError("negative")
            return x
        """)
    [c] = {c.lines: c for f in fs for c in fix_candidates(f, src) if "invalid" in c.guards}.values()
    assert c.lines[:2] == ("    if T.compiler.is_compiling():",
                           "        T._assert_async(T.logical_not((gamma < 0.0).any()), 'negative')")


def test_no_edit_without_a_name_for_torch(tmp_path):
    src, fs = findings(tmp_path, """\
        from torch import Tensor


        def check(x: Tensor, gamma: Tensor):
            if (gamma < 0.0).any():
                raise ValueError("negative")
            return x
        """)
    assert fs and [c for f in fs for c in fix_candidates(f, src) if "invalid" in c.guards] == []


@pytest.mark.parametrize("code, want", [
    ('f"Gamma must be non-negative. Got {gamma}"', "Gamma must be non-negative."),
    ('f"Bad value: {x}"', "Bad value"),
    ('"Contrast factor must be positive."', "Contrast factor must be positive."),
    ('"std is NaN: {}".format(std)', "std is NaN"),
    ('"out of range: %s" % (x,)', "out of range"),
    ('"negative " + str(x)', "negative ..."),
    ('f"non-finite activations in {self.__class__.__name__}"', "non-finite activations in ..."),
    ('"bad value: " + str(x)', "bad value"),
    ('f"x = {x}"', "x = ..."),
    ('f"{x} is negative"', "... is negative"),
    ('f"std evaluated to zero after conversion to {dtype}, leading to division by zero."',
     "std evaluated to zero after conversion to ..., leading to division by zero."),
    ('"%d values out of range (%.2f%%)" % (n, p)', "... values out of range (...%)"),
    # focal-frequency-loss's: the clause of values goes whole, not "but got Min: ... Max"
    ("'The values of spectrum weight matrix should be in the range [0, 1], ' 'but got Min: %.10f Max: %.10f' "
     "% (weight_matrix.min().item(), weight_matrix.max().item())",
     "The values of spectrum weight matrix should be in the range [0, 1]"),
    # (not inside a bracket: "[0, 1]" is not a clause)
    ('f"values must lie in [0, 1] and got {lo} to {hi}"', "values must lie in [0, 1] and got ... to ..."),
    ('f"{x}"', "ValueError: (x < 0).any()"),
    # an exception given as an `assert`'s message: its text (focal-loss-torch's, in the
    # compiled code's RuntimeError, read "AssertionError: torch.all(...)")
    ("ValueError('The predictions values should be between 0 and 1, \\\n    make sure to pass the values "
     "to sigmoid')", "The predictions values should be between 0 and 1, make sure to pass the values to sigmoid"),
    ('errors.BadInputError(f"negative: {x}")', "negative"),
    ('make_message("bad")', "ValueError: (x < 0).any()"),
    ('x', "ValueError: (x < 0).any()"),
    (None, "ValueError: (x < 0).any()"),
])
def test_the_assertion_message_is_the_literal_text(code, want):
    import ast

    node = ast.parse(code, mode="eval").body if code else None
    assert message_of(node, "ValueError: (x < 0).any()") == want


# --------------------------------------------------------------------------- the judge (pure)

EDIT = Edit(path="pkg/checks.py", start_line=5, end_line=6, new_lines=4)
OUTS = [{"shape": {"batch": 2}, "match": True}]


def test_the_judge_needs_head_to_raise_on_an_injected_value():
    rows = [{"kind": "invalid", "pattern": p, "argument": "gamma", "hit": True, "match": True,
             "raised": False} for p in ("negative", "zeros", "large", "nan")]
    got = judge({}, {"outputs": OUTS, "guards": rows}, [], EDIT)
    assert got["accepted"] is False
    # (the values that went in: no 1e6 here)
    assert got["reason"] == ("head never raised on values a check may refuse (-1, 0, 1e3, NaN) in "
                             "`gamma`: the check is not exercised")
    rows[0]["raised"] = True
    assert judge({}, {"outputs": OUTS, "guards": rows}, [], EDIT)["accepted"] is True
    # where the replaced text names the check's exception, head raising another one (an
    # embedding's IndexError on -1) is not the check being exercised
    rows[0]["raised_type"] = "IndexError"
    got = judge({}, {"outputs": OUTS, "guards": rows, "raises": ["ValueError"]}, [], EDIT)
    assert got["reason"] == ("head never raised ValueError on values a check may refuse (-1, 0, 1e3, "
                             "NaN) in `gamma`: the check is not exercised")
    rows[1].update(raised=True, raised_type="ValueError")
    assert judge({}, {"outputs": OUTS, "guards": rows, "raises": ["ValueError"]}, [], EDIT)["accepted"] is True


# --------------------------------------------------------------------------- the proof (real torch)

CHECKS = """\
import torch


def adjust(x, gamma):
    if (gamma < 0.0).any():
        raise ValueError(f"Gamma must be non-negative. Got {gamma}")
    return x * gamma[:, None]


def limit(x, gamma):
    if (gamma > 1e6).any():
        raise ValueError(f"Gamma must be below 1e6. Got {gamma}")
    return x * gamma[:, None]
"""
ADJUST, LIMIT = 5, 11
NET = """\
import torch
from torch import nn

from pkg.checks import adjust, limit


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))
        g = torch.nn.functional.softplus(h.mean(1))
        return limit(adjust(h, g), g)
"""
CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 4]}")


def _prove_net(root: Path, items: list, tmp_path: Path) -> dict:
    """The proof loop's verdicts for `items` on the model `net` of the repository at `root`."""
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    return prove_on_model(setting, config.model("net"), None, items, str(root),
                          time.monotonic() + 240, str(tmp_path / "work"))


def _target(line: int) -> dict:
    return {"kind": "break", "model": "net", "path": "pkg/checks.py", "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("checks") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "checks.py").write_text(CHECKS)
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    return root


def _recipe(root: Path, line: int) -> Candidate:
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [f] = [f for f in found if f.path == "pkg/checks.py" and f.line == line and f.rule == "PTC201"]
    [cand] = [c for c in fix_candidates(f, CHECKS) if c.guards == ("invalid",)]
    return cand


@pytest.mark.torch
def test_the_loop_verifies_the_recipe_and_refuses_the_wrong_forms(repo, tmp_path):
    right = _recipe(repo, ADJUST)
    alone = Candidate(code="PTC201", path="pkg/checks.py", start_line=ADJUST, end_line=ADJUST + 1,
                      lines=("    torch._assert_async(torch.logical_not((gamma < 0.0).any()), "
                             "'Gamma must be non-negative.')",),
                      title="alone", safe=False, guards=("invalid",))
    never = _recipe(repo, LIMIT)
    items = [(Proposal(cid=cid, cand=c, original=CHECKS, patched=apply_candidate(CHECKS, c),
                       findings=[], targets=[]), [_target(c.start_line)])
             for cid, c in (("alone", alone), ("right", right), ("never", never))]
    verdicts = _prove_net(repo, items, tmp_path)

    # `torch._assert_async` alone raises RuntimeError in eager where head raised ValueError
    assert verdicts["alone"]["accepted"] is False
    assert verdicts["alone"]["reason"].startswith(
        "differs from head on an input with values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one "
        "row of several) in `gamma`: "
        "head raised forward(batch=2) raised ValueError: Gamma must be non-negative."), verdicts["alone"]
    assert "patched raised forward(batch=2) raised RuntimeError" in verdicts["alone"]["reason"]

    good = verdicts["right"]
    assert good["accepted"] is True, good
    # eager runs head's own code: compiled code, forward and backward, is what was compared
    assert good["evidence"] == ("GB0170 gone, 3 graphs instead of 5, compiled outputs equal head's eager ones "
                                "on 2 shape cases, compiled gradients equal on 2 shape cases, equal with values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several; head raised on -1, and -1 in one row of several) injected into `gamma`, `x` (one at a time), eager and "
                                "compiled, but compiled code raises RuntimeError where head raises ValueError"
                                # the constant message, where head's formatted the refused values
                                ", saying `Gamma must be non-negative.` where head says `Gamma must be "
                                "non-negative. Got tensor([-1., -1.])` (on CUDA "
                                "a device-side assert, which ends the process's CUDA context)")
    assert good["guards"] == ["invalid"]
    # what it still does unlike head is said apart, to come first in the comment
    assert good["caveats"] == ["compiled code raises RuntimeError where head raises ValueError, saying "
                               "`Gamma must be non-negative.` where head says `Gamma must be non-negative. "
                               "Got tensor([-1., -1.])` (on CUDA "
                               "a device-side assert, which ends the process's CUDA context)"]

    # 1e6 is the largest value injected, and not above the bound: head never raises, the check
    # was never exercised
    assert verdicts["never"]["accepted"] is False
    assert verdicts["never"]["reason"] == (
        # (`gamma`, which the check reads, is tried first)
        "head never raised ValueError on values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of "
        "several) in `gamma`, `x`: the check is not exercised")


@pytest.mark.torch
def test_the_guard_rows_show_head_and_the_patch_raising_on_a_negative_gamma(repo):
    """guard_checks in this process: the recipe's edit of `adjust`, which the model calls by
    the name pkg/net.py imported it under."""
    import torch

    from pt2bot.smoke.inputs import CaseInputs
    from pt2bot.smoke.location import RepoPaths
    from pt2bot.smoke.patch import function_at, patched_function
    from pt2bot.smoke.verify import guard_checks

    cand = _recipe(repo, ADJUST)
    sys.path.insert(0, str(repo))
    try:
        import pkg.net

        paths = RepoPaths(str(repo))
        torch.manual_seed(0)
        model = pkg.net.Net()
        case = CaseInputs(shape={"batch": 2}, args=(torch.rand(2, 8),), kwargs={})
        edit = Edit(path="pkg/checks.py", start_line=cand.start_line, end_line=cand.end_line,
                    new_lines=len(cand.lines))
        head = function_at(paths, "pkg/checks.py", CHECKS, edit)
        with patched_function(paths, "pkg/checks.py", CHECKS, apply_candidate(CHECKS, cand), edit) as swap:
            rows = guard_checks(model, case, paths, ["invalid"], head, swap, None, {})
    finally:
        sys.path.remove(str(repo))
        for name in [n for n in sys.modules if n == "pkg" or n.startswith("pkg.")]:
            del sys.modules[name]
    by = {(r["argument"], r["pattern"]): r for r in rows}
    negative = by[("gamma", "negative")]
    assert negative["raised"] is True and negative["match"] is True
    assert by[("gamma", "zeros")]["raised"] is False      # zero is non-negative
    assert by[("x", "negative")]["raised"] is False       # the check is on gamma only
    assert all(r["hit"] and r["match"] for r in rows)


# --------------------------------------------------------------------------- compiled code

@pytest.mark.torch
@pytest.mark.parametrize("form", sorted(FORMS))
def test_compiled_code_keeps_the_check_and_eager_code_is_unchanged(tmp_path, form):
    """The recipe's edit in one graph (fullgraph=True, eager backend): equal to eager on a valid
    input, a RuntimeError with the message on a refused one, where eager still raises its own."""
    import torch

    from pymodule import load_module

    body, message = FORMS[form]
    src, fs = findings(tmp_path, body)
    # one edit, whichever finding on the line offers it (PTC101 and PTC201 for "item")
    [cand] = {c.lines: c for f in fs for c in fix_candidates(f, src) if c.guards == ("invalid",)}.values()
    path = tmp_path / f"patched_{form}.py"
    path.write_text(apply_candidate(src, cand))
    check = load_module(path).check
    x, good, bad = torch.rand(2, 3), torch.rand(2) * 0.4 + 0.05, -torch.ones(2)
    torch._dynamo.reset()
    compiled = torch.compile(check, backend="eager", fullgraph=True)
    assert torch.equal(compiled(x, good), check(x, good))
    with pytest.raises(RuntimeError, match=message.replace(".", r"\.")):
        compiled(x, bad)
    with pytest.raises(Exception) as eager:   # noqa: PT011 - the original's own exception
        check(x, bad)
    assert not isinstance(eager.value, RuntimeError)


@pytest.mark.torch
def test_skipping_the_check_under_compile_deletes_it_from_compiled_code(tmp_path):
    """The maintainers' first form, `if not torch.compiler.is_compiling() and ...: raise`: eager
    is unchanged (the eager proof cannot tell it from the recipe's), compiled code returns on a
    negative gamma. Only a run of the compiled patched code on the guard inputs refuses it."""
    import torch

    from pymodule import load_module

    path = tmp_path / "skipped.py"
    path.write_text(textwrap.dedent("""\
        import torch


        def check(x, gamma):
            if not torch.compiler.is_compiling() and (gamma < 0.0).any():
                raise ValueError(f"Gamma must be non-negative. Got {gamma}")
            return x * gamma[:, None]
        """))
    check = load_module(path).check
    x, bad = torch.rand(2, 3), -torch.ones(2)
    with pytest.raises(ValueError):
        check(x, bad)
    torch._dynamo.reset()
    assert torch.equal(torch.compile(check, backend="eager", fullgraph=True)(x, bad), x * bad[:, None])


def test_the_finding_on_a_check_says_to_assert_not_to_select(tmp_path):
    """A branch that raises has no value for `torch.where` to select: the message names what
    the check recipe writes. A branch that computes still gets the select."""
    _src, fs = findings(tmp_path, """\
        import torch


        def check(h, gamma):
            if (gamma < 0).any():
                raise ValueError("gamma must be non-negative")
            if (h > 1).any():
                h = h.clamp(max=1)
            return h * gamma
        """)
    by_line = {f.line: f.message for f in fs if f.rule == "PTC201"}
    assert "torch._assert_async" in by_line[5] and "torch.where" not in by_line[5], by_line
    assert "torch.where" in by_line[7], by_line


IDS_NET = """\
import torch
from torch import nn


class Lm(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(16, 8)

    def forward(self, idx):
        if (idx >= self.emb.num_embeddings).any():
            raise ValueError("token id out of range")
        return self.emb(idx).sum(1)
"""
IDS_CONFIG = one_model("lm", "pkg.lm:Lm", "[{name: idx, shape: [batch, 4], dtype: int64, low: 0, high: 16}]", "{batch: [2, 4]}")


def _prove_ids(tmp_path, net: str) -> dict:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "lm.py").write_text(net)
    (root / "pt2bot.yml").write_text(IDS_CONFIG)
    found = check_paths(str(root), ["pkg/lm.py"], StaticConfig(select=("ALL",)), jobs=1)
    [f] = [f for f in found if f.line == 11 and f.rule == "PTC201"]
    [cand] = [c for c in fix_candidates(f, net) if c.guards == ("invalid",)]
    config = build_config(IDS_CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    target = {"kind": "break", "model": "lm", "path": "pkg/lm.py", "line": 11, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    proposal = Proposal(cid="ids", cand=cand, original=net, patched=apply_candidate(net, cand),
                        findings=[], targets=[])
    return prove_on_model(setting, config.model("lm"), None, [(proposal, [target])], str(root),
                          time.monotonic() + 240, str(tmp_path / "work"))["ids"]


@pytest.mark.torch
def test_a_check_no_injected_id_reaches_is_not_exercised_by_the_embedding_raising(tmp_path):
    """-1 makes the embedding raise IndexError, 1e6 is within this check's bound: head raises,
    but never the check's ValueError, so the check was never exercised."""
    verdict = _prove_ids(tmp_path, IDS_NET.replace("self.emb.num_embeddings", "10 ** 7"))
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith("head never raised ValueError on values a check may refuse"), verdict


@pytest.mark.torch
def test_a_check_on_token_ids_is_exercised_with_integer_values(tmp_path):
    """The check that raises is on an int64 argument: the guard inputs (-1, 0, 1e3, 1e6; no NaN
    in an integer) go into it too, head raises on 1e3, and the assertion recipe is verified."""
    verdict = _prove_ids(tmp_path, IDS_NET)
    assert verdict["accepted"] is True, verdict
    assert "injected into `idx`, eager and compiled" in verdict["evidence"]


ASSERTS = """\
import torch


def adjust(x, gamma):
    assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"
    return x * gamma[:, None]


def limit(x, gamma):
    return x * gamma[:, None]
"""


def _checks_repo(tmp_path: Path, checks: str, net: str = NET, config: str = CONFIG) -> Path:
    """A repository with `checks` as pkg/checks.py, the model file `net` as pkg/net.py, and
    `config` as its pt2bot.yml."""
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "checks.py").write_text(checks)
    (root / "pkg" / "net.py").write_text(net)
    (root / "pt2bot.yml").write_text(config)
    return root


def _assert_repo(tmp_path: Path, checks: str) -> tuple[Path, Candidate]:
    """A repository whose model calls `checks`' functions, and the check recipe's candidate for
    its one PTC201 finding, on `adjust`'s assert."""
    root = _checks_repo(tmp_path, checks)
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [f] = [f for f in found if f.path == "pkg/checks.py" and f.rule == "PTC201"]
    assert f.line == ADJUST
    [cand] = [c for c in fix_candidates(f, checks) if c.guards == ("invalid",)]
    return root, cand


@pytest.mark.torch
def test_the_loop_verifies_the_assert_recipe(tmp_path):
    """An `assert` with a formatted message in the model's path: head raises AssertionError on
    a negative gamma, the patched code the same in eager, and one graph less compiled."""
    root, cand = _assert_repo(tmp_path, ASSERTS)
    # deleting the assert from compiled code also removes the break: the guard run refuses it
    skipped = Candidate(code="PTC201", path="pkg/checks.py", start_line=ADJUST, end_line=ADJUST,
                        lines=("    if not torch.compiler.is_compiling():",
                               '        assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"'),
                        title="skipped", safe=False, guards=("invalid",))
    items = [(Proposal(cid=cid, cand=c, original=ASSERTS, patched=apply_candidate(ASSERTS, c),
                       findings=[], targets=[]), [_target(ADJUST)])
             for cid, c in (("skipped", skipped), ("right", cand))]
    verdicts = _prove_net(root, items, tmp_path)
    assert verdicts["right"]["accepted"] is True, verdicts["right"]
    assert verdicts["right"]["evidence"] == (
        "GB0170 gone, 1 graph instead of 4, compiled outputs equal head's eager ones on 2 shape cases, "
        "compiled gradients equal on 2 shape cases, equal with values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several; head raised on -1, NaN, and -1 in one row of several) injected into `gamma`, `x` (one at a time), eager and compiled, but "
        "compiled code raises RuntimeError where head raises AssertionError, saying `Gamma must be "
        "non-negative.` where head says `Gamma must be non-negative. Got tensor([-1., -1.])` (on CUDA a "
        "device-side assert, which ends the process's CUDA context)")
    assert verdicts["skipped"]["accepted"] is False
    assert verdicts["skipped"]["reason"].startswith(
        "differs from head on an input with values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several) in `gamma`: compiled, "
        "where `is_compiling()` is true (head raised forward(batch=2) raised AssertionError: Gamma must be "
        "non-negative."), verdicts["skipped"]


@pytest.mark.torch
def test_the_loop_verifies_an_assert_of_and(tmp_path):
    """No message, but `and` takes `(gamma >= 0.0).all()`'s truth value: a break. Asserted as
    `... & ...` in compiled code, it raises where head does (a negative gamma, and 1e6 past the
    second part) and compiles to one graph less."""
    src = ASSERTS.replace('assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"',
                          "assert (gamma >= 0.0).all() and (gamma < 1e5).all()")
    root, cand = _assert_repo(tmp_path, src)
    assert cand.lines[1] == ("        torch._assert_async((gamma >= 0.0).all() & (gamma < 1e5).all(), "
                             "'AssertionError: (gamma >= 0.0).all() and (gamma < 1e5).all()')")
    items = [(Proposal(cid="and", cand=cand, original=src, patched=apply_candidate(src, cand),
                       findings=[], targets=[]), [_target(ADJUST)])]
    verdicts = _prove_net(root, items, tmp_path)
    assert verdicts["and"]["accepted"] is True, verdicts["and"]
    assert verdicts["and"]["evidence"].startswith("GB0170 gone"), verdicts["and"]


@pytest.mark.torch
def test_the_loop_verifies_a_check_under_a_python_flag(tmp_path):
    """`if not allow_negative and (gamma < 0.0).any(): raise`, the model calling with the flag
    off: compiled code tests the flag in Python and asserts under it; head and the patch raise
    ValueError alike in eager on a negative gamma, and the break is gone."""
    src = ASSERTS.replace('def adjust(x, gamma):\n    assert (gamma >= 0.0).all(), f"Gamma must be non-negative. Got {gamma}"',
                          'def adjust(x, gamma, allow_negative=False):\n'
                          '    if not allow_negative and (gamma < 0.0).any():\n'
                          '        raise ValueError(f"Gamma must be non-negative. Got {gamma}")')
    assert src != ASSERTS
    root, cand = _assert_repo(tmp_path, src)
    assert cand.lines[:3] == ("    if torch.compiler.is_compiling():",
                              "        if not allow_negative:",
                              "            torch._assert_async(torch.logical_not((gamma < 0.0).any()), "
                              "'Gamma must be non-negative.')")
    checks = (root / "pkg" / "checks.py").read_text()
    items = [(Proposal(cid="flag", cand=cand, original=checks, patched=apply_candidate(checks, cand),
                       findings=[], targets=[]), [_target(ADJUST)])]
    verdicts = _prove_net(root, items, tmp_path)
    assert verdicts["flag"]["accepted"] is True, verdicts["flag"]
    assert verdicts["flag"]["evidence"].startswith("GB0170 gone"), verdicts["flag"]
    assert "injected into `gamma`, `x` (one at a time), eager and compiled" in verdicts["flag"]["evidence"]


MASKS = """\
import torch


def validate(x, mask, batch_first=True):
    no_empty_seq = not batch_first and mask[0].all()
    no_empty_seq_bf = batch_first and mask[:, 0].all()
    if not no_empty_seq and not no_empty_seq_bf:
        raise ValueError('mask of the first timestep must all be on')
    return x * mask
"""
MASK_NET = """\
import torch
from torch import nn

from pkg.checks import validate


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return validate(h, h > -1e9)
"""


@pytest.mark.torch
def test_the_loop_exercises_a_check_of_a_mask_with_the_mask_all_off(tmp_path):
    """pytorch-crf's check that a mask's first step is on, on names bound by `and` of a flag
    and a tensor. No rule flags it; from dynamo's break on the `if`, the recipe tests the name
    that is a Python bool here in Python and asserts the other. A bool mask all off is what
    the check refuses: head raises ValueError on it, and so does the patch in eager."""
    from pt2bot.findings import Finding

    root = _checks_repo(tmp_path, MASKS, MASK_NET)
    raw = MASKS.splitlines()[6]
    f = Finding(rule="PTC201", path="pkg/checks.py", line=7, col=raw.index("no_empty_seq_bf"),
                severity="warning", message="dynamo's GB0170 here", source=raw.strip(), gb="GB0170")
    [cand] = [c for c in fix_candidates(f, MASKS) if c.guards == ("invalid",)]
    assert cand.lines[:3] == ("    if torch.compiler.is_compiling():",
                              "        if not no_empty_seq:",
                              "            torch._assert_async(no_empty_seq_bf, 'mask of the first timestep must all be on')")
    items = [(Proposal(cid="mask", cand=cand, original=MASKS, patched=apply_candidate(MASKS, cand),
                       findings=[], targets=[]), [_target(7)])]
    verdicts = _prove_net(root, items, tmp_path)
    assert verdicts["mask"]["accepted"] is True, verdicts["mask"]
    assert verdicts["mask"]["evidence"].startswith("GB0170 gone"), verdicts["mask"]
    assert "compiled code raises RuntimeError where head raises ValueError" in verdicts["mask"]["evidence"]


SCALES = """\
import torch


def scale(x, factor):
    f = torch.as_tensor(factor)
    if (f < 0).any():
        raise ValueError(f"negative factor {f}")
    return x * f
"""
SCALE_NETS = """\
import torch
from torch import nn

from pkg.checks import scale


class Given(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return scale(h, h.mean(1, keepdim=True).abs())


class Fixed(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return scale(self.lin(x), 0.5)
"""
SCALE_CONFIG = """\
version: 1
models:
  - name: given
    entry: pkg.net:Given
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 60
  - name: fixed
    entry: pkg.net:Fixed
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


@pytest.mark.torch
def test_a_guard_one_model_cannot_exercise_is_made_up_for_by_another(tmp_path):
    """`fixed` passes a Python number, so no injected value reaches the check: on its own it
    cannot be verified ("not exercised"), though its break is gone and its outputs equal.
    `given` passes a tensor, and head raises on a negative one where the patch does too. The
    review verifies the edit on both, saying which model exercised the check."""
    from pt2bot.fixes import _verdict

    root = _checks_repo(tmp_path, SCALES, SCALE_NETS, SCALE_CONFIG)
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [cand] = [c for f in found if f.path == "pkg/checks.py" and f.rule == "PTC201"
              for c in fix_candidates(f, SCALES) if c.guards == ("invalid",)]
    config = build_config(SCALE_CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    p = Proposal(cid="scale", cand=cand, original=SCALES, patched=apply_candidate(SCALES, cand),
                 findings=[], targets=[])
    for name in ("given", "fixed"):
        target = {"kind": "break", "model": name, "path": "pkg/checks.py", "line": 6, "gb": "GB0170",
                  "gb_type": "Data-dependent branching"}
        p.results[name] = prove_on_model(setting, config.model(name), None, [(p, [target])], str(root),
                                         time.monotonic() + 240, str(tmp_path / "work" / name))["scale"]
    fixed, given = p.results["fixed"], p.results["given"]
    assert given["accepted"] is True, given
    assert fixed["accepted"] is False and fixed["unexercised"] is True, fixed
    assert fixed["reason"] == ("head never raised ValueError on values a check may refuse (-1, 0, 1e3, 1e6, NaN; -1 and "
                               "0 in one row of several) in `x`: the check is not exercised")
    assert fixed["evidence"].startswith("GB0170 gone"), fixed
    verified, reason, models, evidence = _verdict(p)
    assert verified is True and reason is None and models == ["fixed", "given"]
    assert evidence.startswith("verified on `fixed`: GB0170 gone"), evidence
    assert ("its inputs cannot exercise the guard (head never raised ValueError on values a check may refuse "
            "(-1, 0, 1e3, 1e6, NaN; -1 and 0 in one row of several) in `x`: the check is not exercised), `given` did; "
            "on `given`: GB0170 gone"
            in evidence), evidence
    # without the model that exercises it, nothing shows the check kept
    del p.results["given"]
    assert _verdict(p)[0] is False


def test_an_early_return_before_more_statements_says_the_form_that_keeps_it(tmp_path):
    """torchnmf's silent batch: `if spec.amax() < self.silence: return ...` before the encoder,
    the loss and their return. No recipe writes the `torch.cond` over the rest of forward; the
    reason said only "the PTC201 recipe has no edit for this code", and the author was left to
    work out the form. Before one `return`, the recipe's own `torch.cond` is offered."""
    from pt2bot.config import StaticConfig
    from pt2bot.rules import fix_candidates_explained
    from pt2bot.static import check_paths

    src = """\
import torch
from torch import nn


class Skip(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        if x.amax() < 1e-4:
            return torch.zeros_like(x), x.new_zeros(())
        h = self.lin(x)
        loss = h.square().mean()
        return h, loss
"""
    root = tmp_path
    (root / "m.py").write_text(src)
    [f] = [f for f in check_paths(str(root), ["m.py"], StaticConfig(select=("ALL",)), jobs=1) if f.rule == "PTC201"]
    assert fix_candidates_explained(f, src) == (
        [], "no recipe rewrites an early return before 3 more statements: what keeps both paths in one "
            "graph is `torch.cond(x.amax() < 1e-4, early, rest, ())`, `early` returning what line 12 "
            "returns, `rest` lines 13-15; both must return tensors of the same shapes and dtypes, "
            "floating-point only where gradients flow (an integer result, labels from the outputs, goes "
            "after `torch.cond`), and change no state (in training a BatchNorm, whose statistics "
            "`torch.cond` refuses to update: there run `rest` always and select with `torch.where`, which "
            "updates them where head returned early, its gradients NaN where the side not selected has an "
            "infinite derivative: a log, a division); not verified: no proof runs it")
    one = src.replace("        h = self.lin(x)\n        loss = h.square().mean()\n        return h, loss\n",
                      "        return self.lin(x), x.new_zeros(())\n")
    cands, reason = fix_candidates_explained(f, one)
    assert reason is None and any("torch.cond" in "".join(c.lines) for c in cands)


def test_an_early_return_behind_a_python_test_keeps_that_test_as_an_if(tmp_path):
    """gemma's greedy sampler: `if temperatures is None or (temperatures == 0).all(): return`
    before the sampling. With the `is None` part inside, no form was given (a `|` would run
    `(None == 0).all()`); the Python part stays an `if` and the tensor part goes to
    `torch.cond`."""
    from pt2bot.config import StaticConfig
    from pt2bot.rules import fix_candidates_explained
    from pt2bot.static import check_paths

    src = """\
import torch
from torch import nn


class Sampler(nn.Module):
    def forward(self, logits, temperatures):
        if temperatures is None or (temperatures == 0).all():
            return torch.argmax(logits, dim=-1), logits
        logits = logits / temperatures.unsqueeze(1)
        probs = torch.softmax(logits, dim=-1)
        return torch.multinomial(probs, 1).squeeze(-1), logits
"""
    (tmp_path / "m.py").write_text(src)
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC201"]
    cands, reason = fix_candidates_explained(f, src)
    assert not cands and reason.startswith(
        "no recipe rewrites an early return before 3 more statements: `if temperatures is None:` "
        "stays as it is, returning what line 8 returns (a Python test: dynamo decides it as it "
        "traces), and after it what keeps both paths in one graph is "
        "`torch.cond((temperatures == 0).all(), early, rest, ())`, `early` returning what line 8 "
        "returns, `rest` lines 9-11;"), reason


def test_a_file_without_torch_says_why_it_gets_no_edit():
    """torchdiffeq's interp.py asserts on tensors and never imports torch: the recipe would
    need the import, an edit outside the hunk, and the reason says so."""
    from pt2bot.findings import Finding
    from pt2bot.rules import fix_candidates_explained

    src = """\
def evaluate(t0, t, t1):
    assert (t0 <= t) & (t <= t1), 'fails t0 <= t <= t1: {}, {}'.format(t0, t1)
    return (t - t0) / (t1 - t0)
"""
    f = Finding(rule="PTC201", path="pkg/interp.py", line=2, col=11, severity="warning",
                message="dynamo's GB0170 here", source=src.splitlines()[1].strip(), gb="GB0170")
    assert fix_candidates_explained(f, src) == (
        [], "the PTC201 recipe has no edit for this code (the file does not import torch, and an "
            "edit that needs it would add the import outside the hunk)")
    # the same code under `import torch` gets the edit
    moved = dataclasses.replace(f, line=5)
    cands, reason = fix_candidates_explained(moved, "import torch\n\n\n" + src)
    assert reason is None and cands


NORMALIZE = """\
import torch


def normalize(tensor, mean, std):
    mean = torch.as_tensor(mean, dtype=tensor.dtype)
    std = torch.as_tensor(std, dtype=tensor.dtype)
    if (std == 0).any():
        raise ValueError("std evaluated to zero, leading to division by zero.")
    return (tensor - mean.view(-1, 1)) / std.view(-1, 1)
"""
NORMALIZE_NET = """\
from torch import nn

from pkg.checks import normalize


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return normalize(self.lin(x).view(-1, 3, 8), [0.5, 0.4, 0.3], [0.2, 0.25, 0.3])
"""
NORMALIZE_CONFIG = one_model("net", "pkg.net:Net", "[{name: x, shape: [batch, 8]}]", "{batch: [3, 6]}")


@pytest.mark.torch
def test_a_check_on_a_list_of_numbers_made_a_tensor_is_exercised_through_its_elements(tmp_path):
    """torchvision's `normalize(tensor, mean, std)` takes `std` as a list of floats and checks
    the tensor it makes of them: a zero in the list is what the check refuses. The guard input
    sets one element of the list the check reads (`std`, tried before the tensor argument);
    before, only tensors were injected, the check was never exercised and the edit refused."""
    root = _checks_repo(tmp_path, NORMALIZE, NORMALIZE_NET, NORMALIZE_CONFIG)
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [cand] = [c for f in found if f.path == "pkg/checks.py" and f.line == 7 and f.rule == "PTC201"
              for c in fix_candidates(f, NORMALIZE) if c.guards == ("invalid",)]
    target = {"kind": "break", "model": "net", "path": "pkg/checks.py", "line": 7, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    verdict = prove(root, "net", [item("std", cand, NORMALIZE, target)], tmp_path / "work")["std"]
    assert verdict["accepted"] is True, verdict
    # head raised the check's own error on a guard input: only a zero in `std` makes it raise
    assert "equal with values a check may refuse (-1, 0, 1e3, 1e6, NaN; head raised on 0)" in verdict["evidence"], verdict
    assert "compiled code raises RuntimeError where head raises ValueError" in verdict["evidence"], verdict


BINARY = """\
import torch


def check_binary(preds, target, allow_non_binary_target=False):
    if not allow_non_binary_target and (target.max() > 1 or target.min() < 0):
        raise ValueError("`target` must contain `binary` values")
    return preds * target.float()
"""
BINARY_NET = """\
from torch import nn

from pkg.checks import check_binary


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return check_binary(h, h > 0)
"""


@pytest.mark.torch
def test_a_check_that_labels_are_0_or_1_is_exercised_through_a_bool_tensor_as_integers(tmp_path):
    """torchmetrics' retrieval metrics take their relevance labels as a bool tensor and check
    that they hold only 0 and 1, which every bool tensor does: injected as a bool (all off, all
    on), the check never raised and the edit was refused. As integers all -1 and all 1e6 (a
    dtype the check accepts), head raises its own error, and the patch does in eager."""
    root = _checks_repo(tmp_path, BINARY, BINARY_NET)
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [cand] = [c for f in found if f.path == "pkg/checks.py" and f.line == 5 and f.rule == "PTC201"
              for c in fix_candidates(f, BINARY) if c.guards == ("invalid",)]
    verdict = prove(root, "net", [item("binary", cand, BINARY, _target(5))], tmp_path / "work")["binary"]
    assert verdict["accepted"] is True, verdict
    assert "compiled code raises RuntimeError where head raises ValueError" in verdict["evidence"], verdict


UPPER = """\
import torch


def dist(z):
    y = z.imag
    if (y <= 0).any():
        raise ValueError("points must lie in the upper half plane")
    return (z.real / y).abs()
"""
UPPER_NET = """\
import torch
from torch import nn

from pkg.checks import dist


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return dist(torch.complex(h, h.abs() + 1))
"""


@pytest.mark.torch
def test_a_check_on_a_complex_argument_is_exercised_with_the_values_injected(tmp_path):
    """geoopt's Siegel distance checks eigenvalues computed from complex points. Only real
    floats were injected: the check on a complex argument "cannot be reached" and the edit was
    refused. -1 + 0j lies on no upper half plane, and head raises the check's own error."""
    root = _checks_repo(tmp_path, UPPER, UPPER_NET)
    found = check_paths(str(root), ["pkg/checks.py", "pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [cand] = [c for f in found if f.path == "pkg/checks.py" and f.line == 6 and f.rule == "PTC201"
              for c in fix_candidates(f, UPPER) if c.guards == ("invalid",)]
    verdict = prove(root, "net", [item("upper", cand, UPPER, _target(6))], tmp_path / "work")["upper"]
    assert verdict["accepted"] is True, verdict
    assert "compiled code raises RuntimeError where head raises ValueError" in verdict["evidence"], verdict


def test_a_file_that_imports_from_torch_is_said_to_lack_the_name():
    """hypll's `tensor_utils.py` has `from torch import equal`: "the file does not import
    torch" read as false to the user who sees that import."""
    from pt2bot.findings import Finding
    from pt2bot.rules import fix_candidates_explained

    src = "from torch import equal\n\n\ndef same(a, b):\n    if not equal(a, b):\n        raise ValueError\n"
    f = Finding(rule="PTC201", path="pkg/u.py", line=5, col=7, severity="warning",
                message="dynamo's GB0170 here", source=src.splitlines()[4].strip(), gb="GB0170")
    _cands, reason = fix_candidates_explained(f, src)
    assert reason.endswith("(the file imports from torch but does not bind the name `torch`, and an edit "
                           "that needs it would add the import outside the hunk)"), reason


def test_one_evidence_on_several_models_and_one_refusal_on_several_are_said_once():
    """MAE's user read three near-identical proofs, one per model, beside a one-line
    suggestion, and one refusal three times in each of six items."""
    from pt2bot.fixes import Proposal, _verdict
    from pt2bot.rules import Candidate

    cand = Candidate(code="PTC201", path="m.py", start_line=3, end_line=3, lines=("    x = 1",), title="t", safe=False)
    p = Proposal(cid="c", cand=cand, original="", patched="", findings=[], targets=[])
    same = "GB0170 gone, 1 graph instead of 2, outputs equal on 4 shape cases"
    p.results.update(a={"accepted": True, "evidence": same}, b={"accepted": True, "evidence": same},
                     c={"accepted": True, "evidence": "GB0170 gone, outputs equal on 6 shape cases"})
    verified, reason, models, evidence = _verdict(p)
    assert verified and models == ["a", "b", "c"]
    # (their shape cases added up: 4 on each)
    assert evidence == ("verified on `a`, `b`: GB0170 gone, 1 graph instead of 2, outputs equal on 8 shape cases; "
                        "on `c`: GB0170 gone, outputs equal on 6 shape cases")
    # texts that differ only in their shape cases are one, the cases added up
    p.results["c"] = {"accepted": True, "evidence": same.replace("4 shape cases", "1 shape case")}
    assert _verdict(p)[3] == ("verified on `a`, `b`, `c`: GB0170 gone, 1 graph instead of 2, outputs equal "
                              "on 9 shape cases")
    why = "`last` is a tensor where head's is a Python float"
    p.results.update(a={"accepted": False, "reason": why}, b={"accepted": False, "reason": why},
                     c={"accepted": False, "reason": "outputs differ"})
    assert _verdict(p)[1] == f"{why} (on `a`, `b`); outputs differ (on `c`)"
