"""Two PTC201 recipes (pt2bot/rules/branch_fixes.py): an `and` / `or` whose Python flags
(`self.training`, a `bool` parameter, `x is not None`) come after the tensor test gets them
tested first (`_python_first_fixes`, llm-foundry's MPT fix), and an `if`/`else` that writes
one element on each side gets that element written once, through `torch.where` (`_place`,
fish-speech's codebook fix). Then real proofs on tiny models: each is verified where it is
right, and refused where it is not (the flag does not decide the test in eval mode; the
selection is inverted)."""
from __future__ import annotations

import time

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths

FIRST = "test `self.training` first"
WHERE = "select with `torch.where` instead of branching"

MODULE = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, mask, use_cache: bool = False, scale=None):
        BODY
        return self.lin(x)
"""


def _candidates(tmp_path, body: str) -> tuple[str, list]:
    src = MODULE.replace("BODY", body)
    (tmp_path / "m.py").write_text(src)
    found = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC201"]
    assert found, src
    out = []
    for f in found:
        for c in fix_candidates(f, src):
            compile(apply_candidate(src, c), "m.py", "exec")
            out.append(c)
    return src, out


def test_the_flag_after_the_tensor_test_moves_first_keeping_the_lines(tmp_path):
    body = ("if (mask is not None and\n"
            "                mask[:, 0].sum() != mask.shape[0] and\n"
            "                self.training):\n"
            "            raise NotImplementedError('no left padding in training')")
    _src, cands = _candidates(tmp_path, body)
    (c,) = [c for c in cands if c.title.startswith("test ")]
    # `mask is not None` is a flag too, already ahead of the tensor test: it keeps its place
    assert (c.start_line, c.end_line) == (11, 13)
    assert c.lines == ("        if (mask is not None and",
                       "                self.training and",
                       "                mask[:, 0].sum() != mask.shape[0]):")
    assert c.title.startswith(FIRST) and "where it is false" in c.title and "still breaks" in c.title
    # no guard values to inject: the test's truth does not change (nanoGPT's trial: `.any()`
    # read as an empty-mask guard refused a right edit, "an empty mask cannot be reached")
    assert c.guards == ()


def test_an_or_moves_a_bool_parameter_first(tmp_path):
    _src, cands = _candidates(tmp_path, "if x.sum() > 0 or use_cache:\n            x = x + 1")
    (c,) = [c for c in cands if c.title.startswith("test ")]
    assert c.lines == ("        if use_cache or x.sum() > 0:",)
    assert c.title.startswith("test `use_cache` first: where it is true")


def test_a_part_of_its_own_and_or_keeps_its_brackets_in_its_new_place(tmp_path):
    _src, cands = _candidates(tmp_path, "if (x.sum() > 0 or x.mean() < 1) and not self.training:\n"
                                        "            x = x + 1")
    (c,) = [c for c in cands if c.title.startswith("test ")]
    assert c.lines == ("        if not self.training and (x.sum() > 0 or x.mean() < 1):",)


@pytest.mark.parametrize("test, want", [
    # pytorch-metric-learning's divisor reducer: the float16 retry is for half precision only
    ("torch.isnan(x).any() and x.dtype == torch.float16", "x.dtype == torch.float16 and torch.isnan(x).any()"),
    ("x.sum() > 0 and x.dtype in (torch.half, torch.bfloat16)", "x.dtype in (torch.half, torch.bfloat16) and x.sum() > 0"),
    ("x.sum() > 0 and x.ndim == 3", "x.ndim == 3 and x.sum() > 0"),
    ("x.sum() > 0 and not x.is_floating_point()", "not x.is_floating_point() and x.sum() > 0"),
])
def test_a_test_of_a_tensor_s_metadata_moves_first(tmp_path, test, want):
    _src, cands = _candidates(tmp_path, f"if {test}:\n            x = x + 1")
    (c,) = [c for c in cands if c.title.startswith("test ")]
    assert c.lines == (f"        if {want}:",)
    assert "where it is false, the tensor test is not evaluated" in c.title


@pytest.mark.parametrize("body", [
    # already first: nothing to move
    "if self.training and x.sum() > 0:\n            x = x + 1",
    # an attribute of something but `self` may raise where an earlier part guarded it
    "if x.sum() > 0 and scale.weight is None:\n            x = x + 1",
    # a parameter with no bool annotation or default may be a tensor
    "if x.sum() > 0 and scale:\n            x = x + 1",
    # an in-place method: evaluating the parts in another order changes what they do
    "if x.sum().add_(1) > 0 and self.training:\n            x = x + 1",
    # a part that tests what `scale` is guards the read of its dtype
    "if torch.is_tensor(scale) and scale.sum() > 0 and scale.dtype == torch.half:\n            x = x + 1",
    # a comparison of the dtype with something not known to be one (a tensor may be)
    "if x.sum() > 0 and x.dtype == scale:\n            x = x + 1",
])
def test_no_reorder(tmp_path, body):
    _src, cands = _candidates(tmp_path, body)
    assert not [c for c in cands if c.title.startswith("test ")]


def test_one_element_written_on_each_side_is_written_once_through_where(tmp_path):
    body = ("codes = torch.stack([x.argmax(-1), x.argmin(-1)], dim=0)\n"
            "        if codes[0, 0] == 2:\n"
            "            codes[1] = 1\n"
            "        else:\n"
            "            codes[1] = codes[0] - 30 + 2")
    _src, cands = _candidates(tmp_path, body)
    where = [c.lines for c in cands if c.title == WHERE]
    assert where == [("        codes[1] = torch.where(codes[0, 0] == 2, 1, codes[0] - 30 + 2)",)]


@pytest.mark.parametrize("body", [
    # no `else`: the element would be written where head wrote nothing
    "codes = x.argmax(-1)\n        if codes[0] == 2:\n            codes[1] = 1",
    # an index computed by a call: reading the place again may pick another element
    "codes = x.argmax(-1)\n        if codes[0] == 2:\n            codes[x.argmin()] = 1\n"
    "        else:\n            codes[x.argmin()] = 0",
    # two different elements
    "codes = x.argmax(-1)\n        if codes[0] == 2:\n            codes[1] = 1\n"
    "        else:\n            codes[2] = 1",
])
def test_no_element_selection(tmp_path, body):
    _src, cands = _candidates(tmp_path, body)
    assert not [c for c in cands if c.title == WHERE]


# --------------------------------------------------------------------------- the proof

NET = """\
import torch
from torch import nn


class Pad(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        mask = (x > -100).long()
        if (mask is not None and
                (mask[:, 0] != 1).any() and
                TEST):
            raise NotImplementedError("no left padding in training")
        return self.lin(x)


class Codes(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        codes = torch.stack([h.argmax(-1), h.argmin(-1)], dim=0)
        if codes[0, 0] == codes[0, 0]:
            codes[1] = 1
        else:
            codes[1] = codes[0] - 30 + 2
        return h + codes.sum()
"""

CONFIG = """\
version: 1
models:
  - name: pad
    entry: pkg.net:Pad
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 60
  - name: codes
    entry: pkg.net:Codes
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 60
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _prove(tmp_path, src: str, model: str, line: int, pick, tag: str = "", at: int | None = None) -> dict:
    """Each candidate `pick` returns for the PTC201 finding on `line`, proven against head
    `src` on `model` for dynamo's break at line `at` (`line` where None): {cid: verdict}."""
    from pt2bot.configfile.schema import build_config
    from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
    from pt2bot.results import ResultsFile

    root = tmp_path / f"repo-{model}{tag}"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(src)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    (finding,) = [f for f in found if f.rule == "PTC201" and f.line == line]
    cands = pick(fix_candidates(finding, src))
    target = {"kind": "break", "model": model, "path": "pkg/net.py", "line": at or line, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    items = [(Proposal(cid=cid, cand=c, original=src, patched=apply_candidate(src, c), findings=[],
                       targets=[]), [target]) for cid, c in cands.items()]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    return prove_on_model(setting, config.model(model), None, items, str(root), time.monotonic() + 240,
                          str(tmp_path / f"work-{model}{tag}"))


@pytest.mark.torch
def test_the_flag_first_is_verified_in_eval_and_refused_where_the_flag_does_not_decide(tmp_path):
    """The proof runs the model in eval mode: `self.training` first keeps the mask's sum from
    being evaluated, so the break is gone; `not self.training` first is true there, the sum is
    evaluated as before, and the break stays: refused, not posted."""
    pytest.importorskip("torch")
    # dynamo puts the break of a multi-line `if` on its first line
    first = _prove(tmp_path, NET.replace("TEST", "self.training"), "pad", 13,
                   lambda cs: {"first": next(c for c in cs if c.title.startswith(FIRST))}, at=12)
    assert first["first"]["accepted"] is True, first
    assert first["first"]["evidence"].startswith("GB0170 gone"), first
    kept = _prove(tmp_path, NET.replace("TEST", "not self.training"), "pad", 13,
                  lambda cs: {"kept": next(c for c in cs if c.title.startswith("test `not self.training` first"))},
                  tag="-not", at=12)
    assert kept["kept"]["accepted"] is False, kept
    assert "GB0170" in kept["kept"]["reason"], kept


@pytest.mark.torch
def test_the_element_selection_is_verified_and_the_inverted_one_refused(tmp_path):
    pytest.importorskip("torch")

    def pick(cs):
        where = next(c for c in cs if c.title == WHERE)
        assert where.lines == ("        codes[1] = torch.where(codes[0, 0] == codes[0, 0], 1, codes[0] - 30 + 2)",)
        wrong = where.__class__(**{**where.__dict__, "lines": (where.lines[0].replace(" == ", " != "),)})
        return {"wrong": wrong, "where": where}

    verdicts = _prove(tmp_path, NET, "codes", 27, pick)
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("outputs differ from head's"), verdicts["wrong"]
    assert verdicts["where"]["accepted"] is True, verdicts["where"]
    assert verdicts["where"]["evidence"].startswith("GB0170 gone"), verdicts["where"]


@pytest.mark.torch
def test_a_dtype_test_first_is_verified_on_float32_and_refused_on_half(tmp_path):
    """The model is float32: `mask.dtype == torch.float32` first is true there, the tensor
    test is still evaluated and the break stays (refused); `mask.dtype == torch.float16` first
    is false, the tensor test is never evaluated (verified)."""
    pytest.importorskip("torch")
    src = NET.replace("mask = (x > -100).long()", "mask = (x > -100).float()")
    half = _prove(tmp_path, src.replace("TEST", "mask.dtype == torch.float16"), "pad", 13,
                  lambda cs: {"half": next(c for c in cs if c.title.startswith("test `mask.dtype == torch.float16`"))},
                  at=12)
    assert half["half"]["accepted"] is True, half
    assert half["half"]["evidence"].startswith("GB0170 gone"), half
    single = _prove(tmp_path, src.replace("TEST", "mask.dtype == torch.float32"), "pad", 13,
                    lambda cs: {"single": next(c for c in cs if c.title.startswith("test `mask.dtype"))},
                    tag="-f32", at=12)
    assert single["single"]["accepted"] is False, single
    assert "GB0170" in single["single"]["reason"], single
