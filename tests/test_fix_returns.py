"""Recipes for early returns on a tensor value (pt2bot/rules/branch_fixes.py): a chain of
guarded returns becomes nested `torch.where` (names the statements between rebind are read
into fresh locals first), and a no-op early exit is taken in eager only
(`not torch.compiler.is_compiling() and ...`). The edit texts, then the proof loop on real
torch: the recipes' candidates verified, a wrong chain refused, and an eager-only `raise`
refused by the compiled run on the guard's input (pt2bot/smoke/verify.py `guard_checks`):
eager cannot tell it from head, compiled code skips the check."""
from __future__ import annotations

import textwrap
import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from pt2bot.smoke.patch import asks_compiling
from pt2bot.smoke.verify import A_CASE_WOULD
from proofs import break_target, offered
from test_fixes import findings_in, fixed

WHERE = "select the early returns' values with nested `torch.where`"
STANDS_IN = ("; 1 stands in for `{}` where the test holds, so that the division computed there and not "
             "selected is defined")


def chains(tmp_path, text: str):
    """{finding's line: its candidates} for the PTC201 findings of `text`."""
    src, fs = findings_in(tmp_path, text, "PTC201")
    return src, {f.line: fix_candidates(f, src) for f in fs}


def titled(cands, title: str = WHERE):
    return [c for c in cands if c.title == title]


# --------------------------------------------------------------------------- edit texts

# the functions, in the file the proof edits; the models call them through names imported
# from it (`MODELS`), as kornia's callers do: an injected guard input must reach them there
NET = """\
import torch


def posterize(input: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
    def _shift(input: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
        return torch.round(input * 255 / 2 ** shift) * 2 ** shift / 255

    def _one(input: torch.Tensor, bits: torch.Tensor) -> torch.Tensor:
        if bits == 0:
            return torch.zeros_like(input)
        if bits == 8:
            return input.clone()
        bits = 8 - bits
        return _shift(input, bits)

    return _one(input, bits)


def blend(input1: torch.Tensor, input2: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    if factor == 0.0:
        return input1
    if factor == 1.0:
        return input2
    # the blend
    diff = (input2 - input1) * factor
    res = input1 + diff
    if factor > 0.0 and factor < 1.0:
        return res
    return torch.clamp(res, 0, 1)


def scale(x: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    if s == 0:
        return x
    x = x * s + 1
    return x / s


def spread(image: torch.Tensor) -> torch.Tensor:
    out = torch.zeros_like(image)
    boundary = image.clone()
    for i in range(4):
        grown = torch.nn.functional.max_pool2d(boundary, 3, 1, 1)
        mask = (grown - boundary) > 0
        if not mask.any():
            break
        out = out + i * mask.to(out.dtype)
        boundary = torch.where(mask, grown, boundary)
    return out


def checked(x: torch.Tensor) -> torch.Tensor:
    if (x < 0).any():
        raise ValueError("negative input")
    return x.sqrt()
"""

MODELS = """\
import torch
from torch import nn

from pkg.net import blend, checked, posterize, scale, spread


class Post(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.register_buffer("bits", torch.tensor(4))

    def forward(self, x):
        return posterize(torch.sigmoid(self.lin(x)), self.bits)


class Blend(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = torch.sigmoid(self.lin(x))
        return blend(h, x.sigmoid(), h.mean() * 2) + scale(h, h.mean())


class Spread(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 3, padding=1)

    def forward(self, x):
        image = (self.conv(x) > 0.5).to(x.dtype)
        return spread(image) + checked(x.abs())
"""
# a compiled caller, for the findings in NET alone
ROOT = """

@torch.compile
def root(x):
    return posterize(x, x) + blend(x, x, x) + scale(x, x) + spread(x) + checked(x)
"""


def line_of(text: str, nth: int = 1) -> int:
    lines = NET.splitlines()
    return [i for i, ln in enumerate(lines, 1) if ln.strip() == text][nth - 1]


def test_a_chain_reads_a_rebound_name_into_fresh_locals_first(tmp_path):
    src, by_line = chains(tmp_path, NET + ROOT)
    first, second = line_of("if bits == 0:"), line_of("if bits == 8:")
    [full] = titled(by_line[first])
    assert (full.start_line, full.end_line, full.rank, full.guards) == (first, first + 5, 1, ("zero",))
    # both tests read `bits`, which `bits = 8 - bits` rebinds: computed before it; the
    # returned values read only `input`: left where they are
    assert full.lines == (
        "        cond1 = bits == 0",
        "        cond2 = bits == 8",
        "        bits = 8 - bits",
        "        return torch.where(cond1, torch.zeros_like(input),",
        "                           torch.where(cond2, input.clone(),",
        "                                       _shift(input, bits)))")
    # the second test's finding offers the same edit first (one proposal for both targets),
    # then the chain from its own `if` on (a hunk may hold that one only)
    later = titled(by_line[second])
    assert later[0] == full
    assert (later[1].start_line, later[1].rank) == (second, 2)
    assert later[1].lines[0] == "        cond1 = bits == 8"
    assert "if bits" not in fixed(src, full)


def test_a_chain_with_statements_between_and_and(tmp_path):
    src, by_line = chains(tmp_path, NET + ROOT)
    first = line_of("if factor == 0.0:")
    [full] = titled(by_line[first])
    assert titled(by_line[line_of("if factor == 1.0:")])[0] == full
    assert titled(by_line[line_of("if factor > 0.0 and factor < 1.0:")]) == [full]
    # nothing between rebinds what a test or a value reads: no local; `and` is `&`; the
    # comment between stays
    assert (full.start_line, full.end_line) == (first, first + 9)
    assert full.lines == (
        "    # the blend",
        "    diff = (input2 - input1) * factor",
        "    res = input1 + diff",
        "    return torch.where(factor == 0.0, input1,",
        "                       torch.where(factor == 1.0, input2,",
        "                                   torch.where((factor > 0.0) & (factor < 1.0), res,",
        "                                               torch.clamp(res, 0, 1))))")
    fixed(src, full)


def test_fresh_names_shadow_nothing_and_a_short_chain_stays_on_one_line(tmp_path):
    _src, by_line = chains(tmp_path, """\
        import torch

        value1 = 3

        @torch.compile
        def f(x: torch.Tensor, s: torch.Tensor):
            if s.sum() == 0:
                return x
            x = x * s + value1
            return x / s
        """)
    # (`x / s` computed where `s` sums to 0: 1 stands in for `s` there)
    [c] = titled(by_line[7], WHERE + STANDS_IN.format("s"))
    assert c.lines == ("    value1_ = x", "    safe_s = torch.where(s.sum() == 0, torch.ones_like(s), s)",
                       "    x = x * safe_s + value1", "    return torch.where(s.sum() == 0, value1_, x / safe_s)")


@pytest.mark.parametrize("text", [
    # a tuple, None, a value not known to be a tensor, a Python number
    "    if x.sum() > 0:\n        return x, x\n    y = x + 1\n    return y, x\n",
    "    if x.sum() > 0:\n        return None\n    y = x + 1\n    return y\n",
    "    if x.sum() > 0:\n        return self_cache\n    y = x + 1\n    return y\n",
    "    if x.sum() > 0:\n        return 0.0\n    y = x + 1\n    return y\n",
    # a statement between that is not a local assignment, an in-place method
    "    if x.sum() > 0:\n        return x\n    print(x)\n    return x + 1\n",
    "    if x.sum() > 0:\n        return x\n    y = x.add_(1)\n    return y\n",
    # a test that is not a tensor comparison (`is`, a bare name), an `else`
    "    if x.sum() > 0:\n        return x\n    if flag:\n        return x - 1\n    return x + 1\n",
    "    if x.sum() > 0:\n        return x\n    elif x.sum() < -1:\n        return x - 1\n    return x + 1\n",
])
def test_what_is_not_a_chain_of_tensors_gets_no_chain(tmp_path, text):
    src = ("import torch\n\nself_cache = [1]\n\n@torch.compile\ndef f(x: torch.Tensor, flag=True):\n"
           + text)
    _src, by_line = chains(tmp_path, src)
    assert by_line and not [c for cs in by_line.values() for c in titled(cs)], by_line


def test_a_test_over_several_lines_read_into_a_local_keeps_its_brackets(tmp_path):
    src, by_line = chains(tmp_path, """\
        import torch

        @torch.compile
        def f(x: torch.Tensor, s: torch.Tensor):
            if (s.sum()
                    == 0):
                return x
            s = s + 1
            return x / s
        """)
    [c] = titled(by_line[5])
    assert c.lines[:2] == ("    cond1 = (s.sum()", "            == 0)")
    fixed(src, c)


def test_the_same_template_with_tensors_is_a_chain(tmp_path):
    text = "    if x.sum() > 0:\n        return x\n    y = x + 1\n    return y\n"
    _src, by_line = chains(tmp_path, "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n" + text)
    [c] = titled(by_line[5])
    assert c.lines == ("    y = x + 1", "    return torch.where(x.sum() > 0, x, y)")


STEP = """\
    import torch

    @torch.no_grad()
    def step_size(last_step, error_ratio, ifactor, dfactor):
        if error_ratio == 0:
            return last_step * ifactor
        if error_ratio < 1:
            dfactor = torch.ones((), dtype=last_step.dtype, device=last_step.device)
        error_ratio = error_ratio.type_as(last_step)
        factor = torch.min(ifactor, torch.max(0.9 / error_ratio ** 0.2, dfactor))
        return last_step * factor
    """


def step_chains(src: str) -> list:
    """The chains offered for dynamo's break on `if error_ratio == 0:` (line 5)."""
    return titled(offered(break_target("m", "m.py", 5, "GB0170", "Data-dependent branching"), src))


def test_a_conditional_assignment_between_is_selected_and_a_device_read_makes_a_tensor(tmp_path):
    """torchdiffeq's step size: a parameter whose `.device` the function reads is a tensor (the
    early return's value is one), and `if error_ratio < 1: dfactor = ...` between the returns is
    a selection of its own, ahead of the code after it. No rule knows `error_ratio` for a tensor:
    dynamo's break on the test is the finding (pt2bot/fixes.py `break_findings`)."""
    src = textwrap.dedent(STEP)
    [c] = step_chains(src)
    assert (c.start_line, c.end_line, c.guards) == (5, 11, ("zero",))
    assert c.lines == (
        "    cond1 = error_ratio == 0",
        "    dfactor = torch.where(error_ratio < 1, torch.ones((), dtype=last_step.dtype, device=last_step.device), "
        "dfactor)",
        "    error_ratio = error_ratio.type_as(last_step)",
        "    factor = torch.min(ifactor, torch.max(0.9 / error_ratio ** 0.2, dfactor))",
        "    return torch.where(cond1, last_step * ifactor, last_step * factor)")
    fixed(src, c)


@pytest.mark.parametrize("old, new", [
    ("dtype=last_step.dtype, device=last_step.device", "dtype=torch.float32"),   # no tensor known
    ("            dfactor = torch", "            ratio = torch"),                  # a name unbound before
    ("        if error_ratio < 1:", "        if flag:"),                             # not a tensor test
])
def test_conditional_assignments_that_are_not_selections(tmp_path, old, new):
    text = STEP.replace(old, new).replace("ifactor, dfactor):", "ifactor, dfactor, flag=True):")
    assert text != STEP
    assert step_chains(textwrap.dedent(text)) == []


def test_an_early_exit_is_taken_in_eager_only(tmp_path):
    src, by_line = chains(tmp_path, """\
        import torch

        @torch.compile
        def f(image: torch.Tensor, target: torch.Tensor, n: int):
            out = torch.zeros_like(image)
            for i in range(n):
                mask = image > i
                if not mask.any():
                    break
                if mask.sum() == 1 or mask.all(): continue
                out = out + mask
            if (target != -100).all():
                return target, None
            return out, target
        """)
    exits = {line: titled(cs, cs[-1].title) for line, cs in by_line.items()}
    (brk,), (cont,), (ret,) = exits[8], exits[10], exits[12]
    assert brk.lines == ("        if not torch.compiler.is_compiling() and not mask.any():",)
    assert (brk.start_line, brk.end_line, brk.rank, brk.guards) == (8, 8, 3, ("empty",))
    assert brk.title == "take the early `break` in eager only: compiled code runs on"
    # `or` keeps its meaning inside the `and`; the body on the `if`'s line is kept
    assert cont.lines == ("        if not torch.compiler.is_compiling() and (mask.sum() == 1 or "
                          "mask.all()): continue",)
    assert cont.guards == ("zero",)
    # `.all()`: zeros are the input that takes it (`target != -100` holds everywhere)
    assert ret.lines == ("    if not torch.compiler.is_compiling() and (target != -100).all():",)
    assert ret.guards == ("zero",)
    for c in (brk, cont, ret):
        fixed(src, c)


def test_an_exit_after_a_verbose_print_is_taken_in_eager_only_with_it(tmp_path):
    """torch-kmeans' convergence test: `if self.verbose: print(...)` then `break`; the header
    is the edit, and eager prints and leaves as before."""
    src, by_line = chains(tmp_path, """\
        import torch

        VERBOSE = False

        @torch.compile
        def f(x: torch.Tensor):
            for i in range(20):
                old = x
                x = (x + 2.0 / x) / 2
                if ((x - old).abs() < 1e-6).all():
                    if VERBOSE:
                        print(f"converged at iteration {i + 1}: {x}")
                    break
            return x
        """)
    (brk,) = [c for c in by_line[10] if "eager only" in c.title]
    assert brk.lines == ("        if not torch.compiler.is_compiling() and ((x - old).abs() < 1e-6).all():",)
    assert brk.title == "take the early `break` in eager only: compiled code runs on"
    fixed(src, brk)


@pytest.mark.parametrize("text", [
    "        if not mask.any():\n            break\n        else:\n            out = out + 1\n",
    "        if not mask.any():\n            out = out - 1\n            break\n",
    "        if not mask.any():\n            print(out)\n            out = out - 1\n            break\n",
    "        if not mask.any():\n            if verbose:\n                seen.append(i)\n            break\n",
    "        if not torch.compiler.is_compiling() and not mask.any():\n            break\n",
    # a random draw: the exit is the point, not work skipped
    "        if torch.rand(1) < 0.5:\n            break\n",
])
def test_exits_that_are_not_alone_or_already_eager_only(tmp_path, text):
    src = ("import torch\n\n@torch.compile\ndef f(image: torch.Tensor):\n    out = image\n"
           "    for i in range(3):\n        mask = image > i\n" + text + "    return out\n")
    _src, by_line = chains(tmp_path, src)
    assert by_line or "is_compiling" in text   # PTC201 does flag the others
    assert not [c for cs in by_line.values() for c in cs if "eager only" in c.title]


@pytest.mark.parametrize("text", [
    # the test may be the only way out of a `while`: compiled code would never leave it
    "    while True:\n        out = out * 0.5\n        if (out.abs() < 1e-3).all():\n"
    "            break\n",
    # `n` would be unbound in compiled code
    "    for i in range(3):\n        if (n := out.sum()) == 0:\n            break\n"
    "        out = out - n\n",
])
def test_no_eager_only_exit_out_of_a_while_or_binding_a_name(tmp_path, text):
    src = ("import torch\n\n@torch.compile\ndef f(image: torch.Tensor):\n    out = image\n"
           + text + "    return out\n")
    from pt2bot.fixes import break_findings
    from pt2bot.rules import fix_candidates

    line = next(i for i, ln in enumerate(src.splitlines(), 1) if ln.strip().startswith("if "))
    stand_ins = break_findings({"kind": "break", "path": "m.py", "line": line, "gb": "GB0170"},
                               src, {})
    assert stand_ins                       # where dynamo breaks, PTC201's recipes are tried
    assert not [c for f in stand_ins for c in fix_candidates(f, src) if "eager only" in c.title]


from pt2bot.rules.branch_fixes import EAGER_BLOCK as BLOCK  # noqa: E402
GAE = """\
    import torch

    @torch.compile
    def f(gamma: torch.Tensor, values: torch.Tensor):
        g = gamma.cumprod(-1)
        first = (g < 1e-7).all(0)
        if first.any():
            i = torch.where(first)[0][0].item()
            g = g[..., :i]
        return (g * values[..., :g.shape[-1]]).sum(-1)
    """


RECORDED = GAE.replace("gamma: torch.Tensor, values: torch.Tensor", "gamma: torch.Tensor, values: torch.Tensor, stats: dict") \
    .replace("g = g[..., :i]", "stats['truncated_at'] = i").replace("values[..., :g.shape[-1]]", "values")


def test_a_block_of_work_runs_in_eager_only_from_its_test_and_from_inside(tmp_path):
    """A record kept aside where a geometric series falls below 1e-7: the `if` on a tensor
    (PTC201) and the `.item()` inside the block (PTC101) both get the same edit of the `if`'s
    line. torchrl's own block truncates the series (`g = g[..., :i]`, `g` read after it): it
    computes the result, and gets none."""
    src, by_line = chains(tmp_path, RECORDED)
    [c] = titled(by_line[7], BLOCK)
    assert c.lines == ("    if not torch.compiler.is_compiling() and first.any():",)
    assert (c.start_line, c.end_line, c.rank, c.guards, c.safe) == (7, 7, 4, ("empty",), False)
    fixed(src, c)
    _src, item = findings_in(tmp_path, RECORDED, "PTC101")
    [inside] = [d for f in item for d in fix_candidates(f, src) if d.title == BLOCK]
    assert (inside.start_line, inside.lines) == (c.start_line, c.lines)
    _src, by_line = chains(tmp_path, GAE)
    assert by_line and not titled(by_line[7], BLOCK)


@pytest.mark.parametrize("block", [
    # an `else`: compiled code would run neither side
    "    if first.any():\n        g = g * 2\n    else:\n        g = g * 3\n",
    # a block that leaves the function: not work to skip
    "    if first.any():\n        g = g * 2\n        return g\n",
    "    if first.any():\n        raise ValueError('bad')\n",
    # `h` is bound only in the block and read after it: unbound in compiled code
    "    if first.any():\n        h = g * 2\n    g = h\n",
    # a value read after the block, changed in it: the block computes the result (the
    # cross-batch memory's wrapped indices, `p_c[p_c <= e - s] += ref_size`)
    "    if first.any():\n        g = g * 2\n",
    "    if first.any():\n        g[g < 1e-7] += 1.0\n",
    "    if first.any():\n        g.clamp_(min=1e-7)\n",
    # a random draw decides: that is what the code means to do
    "    if torch.rand(1) < 0.5:\n        g = g * 2\n",
    # the block on the `if`'s own line: no line event tells whether it ran
    "    if first.any(): g = g * 2\n",
])
def test_blocks_that_are_not_work_compiled_code_can_skip(tmp_path, block):
    src = ("import torch\n\n@torch.compile\ndef f(gamma: torch.Tensor):\n    g = gamma.cumprod(-1)\n"
           "    first = (g < 1e-7).all(0)\n" + block + "    return g\n")
    _src, by_line = chains(tmp_path, src)
    assert by_line
    assert not [c for cs in by_line.values() for c in cs if c.title == BLOCK]


def test_a_name_bound_in_the_block_but_not_read_after_it_is_fine(tmp_path):
    src = ("import torch\n\n@torch.compile\ndef f(gamma: torch.Tensor, seen: list):\n    g = gamma.cumprod(-1)\n"
           "    first = (g < 1e-7).all(0)\n    if first.any():\n        i = int(first.sum())\n"
           "        seen.append(i)\n    return g\n")
    _src, by_line = chains(tmp_path, src)
    assert titled(by_line[7], BLOCK)


from pt2bot.rules.branch_fixes import COMPILED_BLOCK  # noqa: E402
PADDED = """\
    import torch

    @torch.compile
    def f(x: torch.Tensor, mask: torch.Tensor, padded: torch.Tensor):
        if padded.item():
            x = x.masked_fill(mask, 0.0)
            n = (~mask).sum(-1, keepdim=True)
        return x.sum(-1)
    """


def test_a_block_runs_always_in_compiled_code_from_a_finding_in_its_test(tmp_path):
    """aimnet's padding mask: `.item()` (PTC101) in the test of an `if` whose block does
    nothing where the input is not padded. Compiled code may run the block always, or never:
    the proof tells which (running it first: that keeps head's work)."""
    src, item = findings_in(tmp_path, PADDED, "PTC101")
    cands = [c for f in item for c in fix_candidates(f, src)]
    always, never = titled(cands, COMPILED_BLOCK), titled(cands, BLOCK)
    assert [c.lines for c in always] == [("    if torch.compiler.is_compiling() or padded.item():",)]
    # (never: the block changes `x`, which the return reads)
    assert never == []
    assert (always[0].start_line, always[0].end_line, always[0].rank, always[0].safe) == (5, 5, 4, False)
    fixed(src, always[0])


@pytest.mark.parametrize("block, want", [
    ("    if (x > 0).any() and x.mean() > 1:\n        x = x * 2\n",
     "    if torch.compiler.is_compiling() or ((x > 0).any() and x.mean() > 1):"),
    ("    if (x > 0).any() or x.mean() > 1:\n        x = x * 2\n",
     "    if torch.compiler.is_compiling() or (x > 0).any() or x.mean() > 1:"),
])
def test_a_block_run_always_keeps_the_tests_meaning(tmp_path, block, want):
    src = "import torch\n\n@torch.compile\ndef f(x: torch.Tensor):\n" + block + "    return x\n"
    _src, by_line = chains(tmp_path, src)
    assert [c.lines for c in titled(by_line[5], COMPILED_BLOCK)] == [(want,)]


@pytest.mark.parametrize("block", [
    "    if (x > 0).any():\n        x = x * 2\n    else:\n        x = x * 3\n",
    "    if (x > 0).any():\n        x = x * 2\n        return x\n",
    "    if (x > 0).any():\n        raise ValueError('bad')\n",
    "    if (x > 0).any(): x = x * 2\n",
    # a random draw in the block: running it where head does not moves every later draw
    "    if (x > 0).any():\n        x = x + torch.randn_like(x)\n",
    # recipe 1's shapes: branchless in eager too
    "    if (x > 0).any():\n        x = x.clamp(max=0)\n",
    # a guard against NaN: its block is the point, not work that changes nothing
    "    if torch.isnan(x).any():\n        x = torch.zeros_like(x)\n",
    # state of the module, which every later call reads
    "    if (x > 0).any():\n        self.steps += 1\n",
    "    if (x > 0).any():\n        self.seen[0] = x.sum()\n",
])
def test_blocks_compiled_code_does_not_run_always(tmp_path, block):
    src = "import torch\n\n@torch.compile\ndef f(self, x: torch.Tensor):\n" + block + "    return x\n"
    _src, by_line = chains(tmp_path, src)
    assert by_line
    assert not [c for cs in by_line.values() for c in cs if c.title == COMPILED_BLOCK]


CACHED = """\
    import torch
    from torch import nn

    class Rot(nn.Module):
        def forward(self, t: torch.Tensor, offset: int = 0):
            n = t.shape[0]
            if (offset + n) <= self.cached_len.item():
                return self.cached[offset:(offset + n)].detach()
            freqs = t[:, None] * self.inv
            if offset == 0:
                self.cached[:n] = freqs.detach()
            return freqs
    """


def test_a_cache_read_is_an_early_exit_taken_in_eager_only(tmp_path):
    """rotary-embedding-torch's cached frequencies: a `.item()` of the cached length in the
    test of an early return of a slice of the cache. Compiled code computes the values as on a
    miss; the proof compares that with head where head reads the cache."""
    src, item = findings_in(tmp_path, CACHED, "PTC101")
    cands = [c for f in item for c in fix_candidates(f, src)]
    [c] = [c for c in cands if c.title == "take the early `return` in eager only: compiled code runs on"]
    assert c.lines == ("        if not torch.compiler.is_compiling() and (offset + n) <= self.cached_len.item():",)
    # zeros in `t` would not decide the test, only part the cache from its key
    assert c.guards == ()
    fixed(src, c)


@pytest.mark.parametrize("value", [
    "self.cached[offset:(offset + n)] * 2",     # computes
    "self.table(n)",                            # a call of its own
    "self.cached[t.argmax()]",                  # an index computed by a call
    "other.cached[:n]",                         # not what the module holds
])
def test_returns_that_are_not_a_cache_read(tmp_path, value):
    src = CACHED.replace("self.cached[offset:(offset + n)].detach()", value)
    src, item = findings_in(tmp_path, src, "PTC101")
    assert item
    assert not [c for f in item for c in fix_candidates(f, src) if "eager only" in c.title]


def test_an_exit_that_returns_what_it_computes_is_not_a_skip(tmp_path):
    _src, by_line = chains(tmp_path, """\
        import torch

        @torch.compile
        def f(x: torch.Tensor):
            if x.sum() > 0:
                return x.flip(-1)
            return x
        """)
    assert by_line[5] and not [c for c in by_line[5] if "eager only" in c.title]


def test_an_edit_asks_compiling_directly_or_through_an_imported_name():
    assert asks_compiling(["    if not torch.compiler.is_compiling() and m.any():"], "")
    assert asks_compiling(["    if torch._dynamo.is_compiling(): pass"], "")
    patched = "from torch.compiler import is_compiling as compiling\n"
    assert asks_compiling(["    if not compiling() and m.any():"], patched)
    assert not asks_compiling(["    if not compiling() and m.any():"], "import torch\n")
    assert not asks_compiling(["    y = torch.where(m, a, b)"], patched)


# --------------------------------------------------------------------------- the proof loop

CONFIG = """\
version: 1
models:
  - name: post
    entry: pkg.model:Post
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
    timeout_s: 60
  - name: blend
    entry: pkg.model:Blend
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
    export: false
    timeout_s: 60
  - name: spread
    entry: pkg.model:Spread
    inputs: [{name: x, shape: [batch, 1, 6, 6]}]
    shapes: {batch: [2, 3]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def target(model: str, line: int) -> dict:
    return {"kind": "break", "model": model, "path": "pkg/net.py", "line": line, "gb": "GB0170",
            "gb_type": "Data-dependent branching"}


@pytest.fixture(scope="module")
def proof(tmp_path_factory):
    """The repository, its findings, and `run(model, [(proposal, targets)])` -> verdicts."""
    from pt2bot.config import StaticConfig
    from pt2bot.static import check_paths

    root = tmp_path_factory.mktemp("returns") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pkg" / "model.py").write_text(MODELS)
    (root / "pt2bot.yml").write_text(CONFIG)
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    found = [f for f in check_paths(str(root), ["pkg/net.py", "pkg/model.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC201"]
    work = tmp_path_factory.mktemp("work")

    def run(model: str, items: list) -> dict:
        return prove_on_model(setting, config.model(model), None, items, str(root),
                              time.monotonic() + 240, str(work / model))

    def recipe(line: int, title: str) -> Candidate:
        [f] = [f for f in found if f.line == line]
        return next(c for c in fix_candidates(f, NET) if c.title.startswith(title))

    return run, recipe


def proposal(cid: str, cand: Candidate) -> Proposal:
    return Proposal(cid=cid, cand=cand, original=NET, patched=apply_candidate(NET, cand),
                    findings=[], targets=[])


def by_hand(start: int, end: int, lines: list[str], guards: tuple[str, ...]) -> Candidate:
    return Candidate(code="PTC201", path="pkg/net.py", start_line=start, end_line=end,
                     lines=tuple(lines), title="by hand", safe=False, guards=guards)


@pytest.mark.torch
def test_the_posterize_chain_is_verified_and_a_chain_that_reads_a_rebound_name_is_not(proof):
    run, recipe = proof
    first, second = line_of("if bits == 0:"), line_of("if bits == 8:")
    right = recipe(first, "select the early returns")
    # the tests read `bits` after `bits = 8 - bits`: equal on bits=4, not on bits=0
    wrong = by_hand(first, first + 5, [
        "        bits = 8 - bits",
        "        return torch.where(bits == 0, torch.zeros_like(input), "
        "torch.where(bits == 8, input.clone(), _shift(input, bits)))"], ("zero",))
    targets = [target("post", first), target("post", second)]
    verdicts = run("post", [(proposal("wrong", wrong), targets), (proposal("right", right), targets)])
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("differs from head on an input with zeros in `bits`"), verdicts["wrong"]
    assert verdicts["right"]["accepted"] is True, verdicts["right"]
    assert verdicts["right"]["evidence"] == ("GB0170 gone, 1 graph instead of 4, outputs equal on "
                                             "1 shape case, gradients equal on shape case batch=2, the early return at "
                                             "line 10 taken by head on inputs with zeros, equal with zeros injected "
                                             "into `bits`, `input` (one at a time), equal on inputs all 0, all 1 and with one NaN and on weights all 0, gradients too")


@pytest.mark.torch
def test_the_blend_chain_and_an_arm_read_before_its_name_is_rebound(proof):
    run, recipe = proof
    chain = recipe(line_of("if factor == 0.0:"), "select the early returns")
    ts = [target("blend", line_of(t)) for t in ("if factor == 0.0:", "if factor == 1.0:",
                                                  "if factor > 0.0 and factor < 1.0:")]
    s0 = line_of("if s == 0:")
    kept = recipe(s0, "select the early returns")
    assert kept.lines == ("    value1 = x", "    safe_s = torch.where(s == 0, torch.ones_like(s), s)",
                          "    x = x * safe_s + 1", "    return torch.where(s == 0, value1, x / safe_s)")
    # `x = x * s + 1` rebinds the returned `x`: at s == 0 this returns ones, not x
    lost = by_hand(s0, s0 + 3, ["    x = x * s + 1", "    return torch.where(s == 0, x, x / s)"],
                   ("zero",))
    verdicts = run("blend", [(proposal("chain", chain), ts), (proposal("lost", lost), [target("blend", s0)]),
                             (proposal("kept", kept), [target("blend", s0)])])
    assert verdicts["chain"]["accepted"] is True, verdicts["chain"]
    assert verdicts["chain"]["evidence"].startswith("GB0170 gone")
    assert verdicts["lost"]["accepted"] is False
    assert verdicts["lost"]["reason"].startswith("differs from head on an input with zeros in `s`")
    # x / s would be inf where s == 0: torch.where does not let it through in the forward
    # pass, but in backward the division it did not select would get 0 / 0, NaN gradients
    # where head's early return had finite ones (the injected zero showed it, and the chain was
    # refused); 1 stands in for `s` there, and the gradients are head's
    assert verdicts["kept"]["accepted"] is True, verdicts["kept"]
    assert verdicts["kept"]["evidence"].endswith(f"the early return at line {s0 + 1} taken by head on inputs with "
                                                 "zeros, equal with zeros injected into `s`, `x` (one at a time), equal on inputs all 0, "
                                                 "all 1 and with one NaN and on weights all 0, gradients too"), verdicts["kept"]


@pytest.mark.torch
def test_an_eager_only_exit_is_proven_compiled_and_an_eager_only_raise_is_refused(proof):
    run, recipe = proof
    brk = line_of("if not mask.any():")
    exit_ = recipe(brk, "take the early `break` in eager only")
    check = line_of("if (x < 0).any():")
    # eager raises as head does; compiled code skips the check, which no shape case enters
    # (the model's own inputs are valid): nothing could show that skipping it is right
    skip = by_hand(check, check, ["    if not torch.compiler.is_compiling() and (x < 0).any():"],
                   ("empty",))
    verdicts = run("spread", [(proposal("exit", exit_), [target("spread", brk)]),
                              (proposal("skip", skip), [target("spread", check)])])
    assert verdicts["skip"]["accepted"] is False, verdicts["skip"]
    assert verdicts["skip"]["reason"] == (
        f"no shape case enters the block at line {check + 1}, so compiled code skipping it was "
        "never compared with head on the model's own inputs" + A_CASE_WOULD)
    # the loop's later iterations change nothing once the mask is empty: equal compiled too,
    # on the model's own images (head breaks out of the loop on both shape cases) as well as
    # on the injected empty mask
    assert verdicts["exit"]["accepted"] is True, verdicts["exit"]
    assert verdicts["exit"]["evidence"] == (
        # the conv's output is thresholded, so no weight gets a gradient: the input's is compared
        "GB0170 gone, 4 graphs instead of 5, outputs equal on 2 shape cases, compiled gradients equal on 2 "
        "shape cases, compiled code runs "
        "on past the early exit and still equals head's eager outputs on the 2 shape cases and "
        "inputs with an empty mask, where head takes it, but compiled code runs the loop to its end "
        "where head's eager run breaks out of it: more work a call, the loop's length and not its exit "
        "deciding it, and a value that overflows in the iterations head skips reaches the outputs, "
        "equal with an empty mask injected into `image`, eager and compiled")
    assert verdicts["exit"]["caveats"][0].startswith("compiled code runs the loop to its end")


def test_a_block_under_a_python_test_gets_no_eager_only_edit(tmp_path):
    """segmentation-models-pytorch's focal loss: under `if self.ignore_index is not None:` the
    block always runs; dropping the ignored labels is the loss's meaning, not optional work,
    and on inputs without an ignored label it would look like a no-op. The masked selection
    inside gets no eager-only edit of that `if`."""
    src, fs = findings_in(tmp_path, """\
        import torch

        class Focal(torch.nn.Module):
            def __init__(self, ignore_index=None):
                super().__init__()
                self.ignore_index = ignore_index

            def forward(self, y_pred: torch.Tensor, y_true: torch.Tensor):
                if self.ignore_index is not None:
                    not_ignored = y_true != self.ignore_index
                    y_pred = y_pred[not_ignored]
                    y_true = y_true[not_ignored]
                return (y_pred - y_true).abs().sum()

        loss = torch.compile(Focal(-100))
        """, "PTC304")
    assert fs
    assert not [c for f in fs for c in fix_candidates(f, src) if c.title == BLOCK]
