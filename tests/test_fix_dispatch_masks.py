"""Recipes written for the real-code benchmark's sites without a candidate
(pt2bot/rules/branch_fixes.py, check_fixes.py, dynamic_output_shape.py): a dispatch on a
tensor's value over distinct constants (torchvision's ColorJitter), the Python part of an
`and` test kept as an `if` around the `torch.where` (`if signed and torch.rand(()) <= 0.5:
magnitude *= -1`), a check that raises after computing its message (monai's swin_unetr), and a
masked selection whose values only feed reductions later in its block (torchvision's
equalize: `nonzero_hist = hist[hist != 0]` ... `nonzero_hist[:-1].sum()`). The edit texts and
the code each recipe leaves alone, then the proof loop on real torch: the recipes' candidates
verified, and wrong variants refused (the Python test folded into the `where`, which draws a
random number where head drew none; the dispatch's Python part folded in; a masked mean over
every element; the slice of the selection dropped)."""
from __future__ import annotations

import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates
from test_fixes import findings_in, fixed

DISPATCH = "select each case of the dispatch on `fn_id` with `torch.where` (distinct constants: one case applies at most)"
PY_PART = "; the Python part of the test stays an `if`"


def cands_at(tmp_path, text: str, code: str, line: int):
    src, fs = findings_in(tmp_path, text, code)
    found = [f for f in fs if f.line == line]
    assert found, [(f.rule, f.line) for f in fs]
    return src, [c for f in found for c in fix_candidates(f, src)]


# --------------------------------------------------------------------------- dispatch

JITTER = """\
import torch
import torch.nn.functional as F


@torch.compile
def jitter(x: torch.Tensor, b, c):
    img = x + 0
    fn_idx = torch.randperm(3)
    for fn_id in fn_idx:
        if fn_id == 0 and b is not None:
            img = F.relu(img) * b
        elif fn_id == 1 and c is not None:
            img = img + c
        elif fn_id == 2:
            img *= 2
    return img
"""
assert JITTER.count("img *= 2") == 1


def test_a_dispatch_over_distinct_constants_selects_each_case_in_order(tmp_path):
    src, cands = cands_at(tmp_path, JITTER, "PTC201", 10)
    (c,) = [c for c in cands if c.title == DISPATCH]
    assert (c.start_line, c.end_line, c.rank) == (10, 15, 1)
    assert c.lines == (
        "        if b is not None:",
        "            img = torch.where(fn_id == 0, F.relu(img) * b, img)",
        "        if c is not None:",
        "            img = torch.where(fn_id == 1, img + c, img)",
        "        img = torch.where(fn_id == 2, img * 2, img)",
    )
    fixed(src, c)


@pytest.mark.parametrize("old,new", [
    ("fn_id == 1 and c", "fn_id == 0 and c"),                 # a constant twice: two cases may apply
    ("        elif fn_id == 2:\n            img *= 2\n",
     "        elif fn_id == 2:\n            img *= 2\n        else:\n            img = img - 1\n"),   # an else
    ("img + c", "img + torch.rand_like(img)"),                 # a value that draws: it would run always
    ("img + c", "img.add_(c)"),                                # a value that writes in place
    ("fn_id == 1 and c is not None", "fn_id == 1 and img is not None"),   # a test reads the name rebound
    ("elif fn_id == 2", "elif fn_idx[0] == 2"),                # another tested value
    ("img *= 2", "out = img * 2"),                             # another name
    ("def jitter(x: torch.Tensor, b, c):\n    img = x + 0", "def jitter(img: torch.Tensor, b, c):"),   # `img *= 2` writes into the caller's tensor
])
def test_what_is_no_dispatch_gets_none(tmp_path, old, new):
    assert old in JITTER
    src, fs = findings_in(tmp_path, JITTER.replace(old, new), "PTC201")
    assert all(c.title != DISPATCH for f in fs for c in fix_candidates(f, src))


# --------------------------------------------------------------------------- the Python part

SIGNED = """\
import torch


@torch.compile
def sign(x: torch.Tensor, signed: bool, mag):
    magnitude = x.mean()
    if signed and torch.rand(()) <= 0.5:
        magnitude *= -1
    m2 = float(mag)
    if signed and torch.rand(()) <= 0.5:
        m2 *= -1
    if not torch.isfinite(magnitude).all() and mag is not None:
        magnitude = torch.nan_to_num(magnitude)
    if torch.rand(()) <= 0.5 and mag is not None:
        magnitude = magnitude + 1
    if signed and x.sum() > 0:
        x *= -1
    return x * magnitude + m2
"""


def test_the_python_part_of_an_and_stays_an_if_around_the_where(tmp_path):
    src, cands = cands_at(tmp_path, SIGNED, "PTC201", 7)
    assert [(c.title, c.lines) for c in cands] == [
        ("select with `torch.where` instead of branching" + PY_PART,
         ("    if signed:", "        magnitude = torch.where(torch.rand(()) <= 0.5, magnitude * -1, magnitude)")),
        ("branch inside the graph with `torch.cond`" + PY_PART,
         ("    if signed:",
          "        magnitude = torch.cond(torch.rand(()) <= 0.5, lambda: magnitude * -1, lambda: magnitude.clone(), ())")),
    ]
    for c in cands:
        fixed(src, c)
    # a Python part after a test without a draw: the no-op guard dropped under it
    src, cands = cands_at(tmp_path, SIGNED, "PTC201", 12)
    assert cands[0].lines == ("    if mag is not None:", "        magnitude = torch.nan_to_num(magnitude)")
    assert set(cands[0].guards) == {"nan", "inf"}


@pytest.mark.parametrize("line", [
    10,   # `m2 = float(...)`: a Python number, which the code after needs as one
    14,   # the draw came first: under `if mag is not None:` it would be drawn fewer times
    16,   # `x` is a parameter: `x *= -1` writes into the caller's tensor, a rebinding would not
])
def test_an_and_test_without_an_output_preserving_edit_gets_none(tmp_path, line):
    src, cands = cands_at(tmp_path, SIGNED, "PTC201", line)
    assert [c for c in cands if PY_PART in c.title] == []


# --------------------------------------------------------------------------- a check's message

def test_a_check_that_computes_its_message_first_is_kept_in_compiled_code(tmp_path):
    src, cands = cands_at(tmp_path, """\
        import torch


        @torch.compile
        def check(x: torch.Tensor):
            bad = x < 0
            if bad.any():
                n = bad.sum()
                raise ValueError(f"negative values: {n}")
            return x * 2
        """, "PTC201", 7)
    (c,) = cands
    assert c.lines == (
        "    if torch.compiler.is_compiling():",
        "        torch._assert_async(torch.logical_not(bad.any()), 'negative values')",
        "    elif bad.any():",
        "        n = bad.sum()",
        '        raise ValueError(f"negative values: {n}")',
    )
    assert c.guards == ("invalid",)


# --------------------------------------------------------------------------- masked values

EQUALIZE = """\
import torch


@torch.compile
def scale(img_chan: torch.Tensor, x: torch.Tensor, t: torch.Tensor):
    hist = torch.histc(img_chan, bins=256, min=0, max=255)
    nonzero_hist = hist[hist != 0]
    step = torch.div(nonzero_hist[:-1].sum(), 255, rounding_mode="floor")
    valid = t != -1
    vals = x[valid]
    # the mean and the sum
    loss = vals.float().mean() + vals.sum()
    return step, loss
"""


def test_a_selection_that_only_feeds_reductions_becomes_masked_reductions(tmp_path):
    src, cands = cands_at(tmp_path, EQUALIZE, "PTC304", 7)
    (c,) = cands
    assert (c.start_line, c.end_line, c.guards) == (7, 8, ("empty",))
    assert c.lines == (
        "    mask = hist != 0",
        "    kept = mask & (mask.flatten().cumsum(0).view_as(mask) <= mask.sum() - 1)",
        '    step = torch.div(torch.where(kept, hist, 0).sum(), 255, rounding_mode="floor")',
    )
    fixed(src, c)
    src, cands = cands_at(tmp_path, EQUALIZE, "PTC304", 10)
    (c,) = cands
    assert (c.start_line, c.end_line) == (10, 12)
    # `valid = t != -1` is t's shape, maybe x's leading dimensions only: given x's dimensions,
    # the mean divided by the number of values it selects
    rows = "valid.reshape(valid.shape + (1,) * (x.dim() - valid.dim()))"
    assert c.lines == (
        "    # the mean and the sum",
        f"    loss = (torch.where({rows}, x.float(), 0).sum() / {rows}.expand_as(x).sum()) + "
        f"torch.where({rows}, x, 0).sum()",
    )
    assert ".mean()" not in "".join(c.lines)   # never the mean over every element


@pytest.mark.parametrize("old,new", [
    ("loss = vals.float().mean() + vals.sum()", "loss = torch.dot(vals, vals)"),       # not a reduction
    ("loss = vals.float().mean() + vals.sum()", "loss = vals.sum(0)"),                 # over one dimension
    ("loss = vals.float().mean() + vals.sum()", "loss = vals[::2].sum()"),             # a slice with a step
    ("    # the mean and the sum\n", "    x.add_(1)\n"),                              # the values change between
    ("    # the mean and the sum\n", "    valid = t > 0\n"),                          # the mask is rebound between
    ("loss = vals.float().mean() + vals.sum()", "loss = sum(v.sum() for v in [vals])"),   # another scope
    ("    return step, loss\n", "    vals = vals + 1\n    return step, loss\n"),        # rebound after
])
def test_a_selection_with_other_uses_gets_no_masked_reductions(tmp_path, old, new):
    assert old in EQUALIZE
    src, fs = findings_in(tmp_path, EQUALIZE.replace(old, new), "PTC304")
    assert [c for f in fs if f.line == 10 for c in fix_candidates(f, src)] == []


def test_a_selection_read_in_an_earlier_pass_of_its_loop_gets_none(tmp_path):
    src, fs = findings_in(tmp_path, """\
        import torch


        @torch.compile
        def f(x: torch.Tensor, t: torch.Tensor):
            vals = x
            out = []
            for k in range(3):
                out.append(vals.sum())
                vals = x[t > k]
                out.append(vals.sum())
            return out
        """, "PTC304")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --------------------------------------------------------------------------- repeat_interleave

INTERLEAVE = """\
import torch


@torch.compile
def ids(x: torch.Tensor, seqs):
    patch_counts = [s.shape[0] for s in seqs]
    image_ids = torch.repeat_interleave(
        torch.arange(len(seqs)),
        torch.tensor(patch_counts, device=x.device)
    )
    return x + image_ids
"""


def test_repeats_made_of_python_numbers_give_the_output_size(tmp_path):
    src, cands = cands_at(tmp_path, INTERLEAVE, "PTC304", 7)
    (c,) = cands
    assert (c.start_line, c.end_line) == (7, 10)
    assert c.lines[2] == "        torch.tensor(patch_counts, device=x.device), output_size=sum(patch_counts)"
    fixed(src, c)


@pytest.mark.parametrize("old,new", [
    ("device=x.device)\n", "device=x.device), output_size=n\n"),              # given already
    ("torch.tensor(patch_counts, device=x.device)", "x.long()"),               # repeats of a tensor's values
    ("torch.tensor(patch_counts, device=x.device)",
     "torch.tensor([s.shape[0] for s in seqs])"),                              # not a name: it would run twice
])
def test_repeats_not_made_of_a_named_list_get_no_output_size(tmp_path, old, new):
    assert old in INTERLEAVE
    src, fs = findings_in(tmp_path, INTERLEAVE.replace(old, new), "PTC304")
    assert [c for f in fs for c in fix_candidates(f, src)] == []


# --------------------------------------------------------------------------- the proof loop

NET = """\
import torch
from torch import nn


class Aug(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        signed = h.shape[0] < 3
        scale = h.mean(0)
        if signed and torch.rand(()) <= 0.5:
            scale *= -1
        return h * scale + torch.rand(h.shape)


class Jitter(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        img = self.lin(x)
        b = 1.5
        c = None   # ColorJitter(contrast=None)
        fn_idx = torch.randperm(3)
        for fn_id in fn_idx:
            if fn_id == 0 and b is not None:
                img = img * b
            elif fn_id == 1 and c is not None:
                img = img + c
            elif fn_id == 2:
                img = img.sigmoid()
        return img


class Hist(nn.Module):
    def forward(self, x):
        h = x.relu()
        nonzero = h[h != 0]
        step = nonzero[:-1].sum() / 255
        return h * step + nonzero.mean()


class Ids(nn.Module):
    def forward(self, x):
        counts = [1, 2, x.shape[1]]
        ids = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts))
        return x * ids.float().mean()
"""
SIGN_LINE, DISPATCH_LINE, SELECT_LINE, IDS_LINE = 14, 30, 42, 50

CONFIG = """\
version: 1
models:
  - {name: aug, entry: "pkg.net:Aug", inputs: [{name: x, shape: [batch, 8]}], shapes: {batch: [2, 4]},
     export: false, timeout_s: 60}
  - {name: jitter, entry: "pkg.net:Jitter", inputs: [{name: x, shape: [batch, 8]}], shapes: {batch: [2, 4]},
     export: false, timeout_s: 60}
  - {name: hist, entry: "pkg.net:Hist", inputs: [{name: x, shape: [batch, 8]}], shapes: {batch: [2, 4]},
     export: false, timeout_s: 60}
  - {name: ids, entry: "pkg.net:Ids", inputs: [{name: x, shape: [batch, 8]}], shapes: {batch: [2, 4]},
     export: false, timeout_s: 60}
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""
# jitter: head's break in the loop makes dynamo skip its frame, so head has no recompile; the
# patched frame, compiled now, recompiles once for the second batch size (a static size guard
# fails, then the size is dynamic), which the judge must not count as a new recompile
GB = {"GB0170": "Data-dependent branching", "GB0036": "Dynamic shape operator"}


def _target(model: str, line: int, gb: str) -> dict:
    return {"kind": "break", "model": model, "path": "pkg/net.py", "line": line, "gb": gb, "gb_type": GB[gb]}


def _proposal(cid: str, cand: Candidate) -> Proposal:
    return Proposal(cid=cid, cand=cand, original=NET, patched=apply_candidate(NET, cand), findings=[], targets=[])


def _wrong(start: int, end: int, lines: list[str], guards: tuple[str, ...] = ()) -> Candidate:
    return Candidate(code="PTC201", path="pkg/net.py", start_line=start, end_line=end, lines=tuple(lines),
                     title="wrong", safe=False, guards=guards)


@pytest.mark.torch
def test_the_loop_verifies_the_recipes_and_refuses_the_wrong_variants(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    _src, fs = findings_in(root, NET, "PTC201", name="pkg/net.py")
    _src, masks = findings_in(root, NET, "PTC304", name="pkg/net.py")
    by_line = {f.line: f for f in fs + masks}
    sign = fix_candidates(by_line[SIGN_LINE], NET)[0]
    dispatch = next(c for c in fix_candidates(by_line[DISPATCH_LINE], NET) if c.title == DISPATCH)
    (select,) = fix_candidates(by_line[SELECT_LINE], NET)
    (sized,) = fix_candidates(by_line[IDS_LINE], NET)
    assert select.lines[-1] == "        return h * step + (torch.where(mask, h, 0).sum() / mask.sum())"
    runs = {
        "aug": [
            # the Python test folded into the where: a number drawn where head drew none (batch 4)
            ("sign-folded", _wrong(SIGN_LINE, SIGN_LINE + 1, [
                "        scale = torch.where((torch.rand(()) <= 0.5) & signed, scale * -1, scale)"]),
             SIGN_LINE, "GB0170"),
            ("sign", sign, SIGN_LINE, "GB0170"),
        ],
        "jitter": [
            # the Python part folded into the tensor test: `img + None` computed
            ("dispatch-folded", _wrong(DISPATCH_LINE, DISPATCH_LINE + 5, [
                "            img = torch.where(fn_id == 0, img * b, img)",
                "            img = torch.where((fn_id == 1) & (c is not None), img + c, img)",
                "            img = torch.where(fn_id == 2, img.sigmoid(), img)"]), DISPATCH_LINE, "GB0170"),
            ("dispatch", dispatch, DISPATCH_LINE, "GB0170"),
        ],
        "hist": [
            # a mean over every element: another denominator
            ("select-mean-all", _wrong(SELECT_LINE, SELECT_LINE + 2, [
                "        mask = h != 0",
                "        kept = mask & (mask.flatten().cumsum(0).view_as(mask) <= mask.sum() - 1)",
                "        step = torch.where(kept, h, 0).sum() / 255",
                "        return h * step + torch.where(mask, h, 0).mean()"], ("empty",)), SELECT_LINE, "GB0036"),
            # the slice dropped: every selected value summed, not all but the last
            ("select-no-slice", _wrong(SELECT_LINE, SELECT_LINE + 2, [
                "        mask = h != 0",
                "        step = torch.where(mask, h, 0).sum() / 255",
                "        return h * step + (torch.where(mask, h, 0).sum() / mask.sum())"], ("empty",)),
             SELECT_LINE, "GB0036"),
            ("select", select, SELECT_LINE, "GB0036"),
        ],
        "ids": [
            # another output size: torch refuses it
            ("ids-wrong-size", _wrong(IDS_LINE, IDS_LINE, [
                "        ids = torch.repeat_interleave(torch.arange(len(counts)), torch.tensor(counts), "
                "output_size=len(counts))"]), IDS_LINE, "GB0036"),
            ("ids", sized, IDS_LINE, "GB0036"),
        ],
    }
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = {}   # the wrong variants first: a verified candidate ends its target's proof
    for model, items in runs.items():
        verdicts.update(prove_on_model(
            setting, config.model(model), None,
            [(_proposal(cid, cand), [_target(model, line, gb)]) for cid, cand, line, gb in items],
            str(root), time.monotonic() + 240, str(tmp_path / model)))
    for cid in ("sign", "dispatch", "select", "ids"):
        assert verdicts[cid]["accepted"] is True, (cid, verdicts[cid])
    assert "equal with an empty mask" in verdicts["select"]["evidence"], verdicts["select"]
    assert "1 recompile on shape case batch=4 in `forward`, which head ran uncompiled" in verdicts["dispatch"]["evidence"], \
        verdicts["dispatch"]
    assert verdicts["sign-folded"]["accepted"] is False
    assert verdicts["sign-folded"]["reason"].startswith("outputs differ from head's on shape case batch=4"), \
        verdicts["sign-folded"]
    assert verdicts["dispatch-folded"]["accepted"] is False
    assert "raised TypeError" in verdicts["dispatch-folded"]["reason"], verdicts["dispatch-folded"]
    for cid in ("select-mean-all", "select-no-slice"):
        assert verdicts[cid]["accepted"] is False
        assert verdicts[cid]["reason"].startswith("outputs differ from head's"), (cid, verdicts[cid])
    assert verdicts["ids-wrong-size"]["accepted"] is False
    assert "raised RuntimeError" in verdicts["ids-wrong-size"]["reason"], verdicts["ids-wrong-size"]
