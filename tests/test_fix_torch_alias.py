"""A file that imports torch under another name (`import torch as th`, as openai's
guided-diffusion does): the recipes write `torch.`, which such a file does not bind, so every
edit was refused with "the file does not import torch". The edits now write the file's own
name (pt2bot/rules/edits.py `with_torch_as`), only where `torch` is code, not in a string, and
the proof recognises `th.where` as it does `torch.where` (an early return selected still needs
an input that takes it).
"""
from __future__ import annotations

import pytest

from pt2bot.fixes import break_findings
from pt2bot.rules import fix_candidates_explained
from proofs import break_target, item, one_model, prove, write_repo

GATE = """\
import torch as th
from torch import nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        h = self.proj(x)
        if h.abs().max() > 1e9:
            return th.zeros_like(h)
        return h * 2
"""
IF = 12
CHECK = """\
import torch as th


def out(h):
    if th.isnan(h).any():
        raise RuntimeError("NaN: see torch.isnan in the docs")
    return h
"""


def _candidates(src: str, line: int, path: str = "pkg/gate.py") -> list:
    target = break_target("gate", path, line, "GB0170", "Data-dependent branching")
    found = {}
    for f in break_findings(target, src, {}):
        cands, why = fix_candidates_explained(f, src)
        assert why is None, why
        found.update({c.lines: c for c in cands})
    return list(found.values())


def test_the_edits_write_the_file_s_name_for_torch():
    lines = {c.lines for c in _candidates(GATE, IF)}
    assert ("        return th.where(h.abs().max() > 1e9, th.zeros_like(h), h * 2)",) in lines
    [check] = _candidates(CHECK, 5, "pkg/check.py")
    assert check.lines == (
        "    if th.compiler.is_compiling():",
        "        th._assert_async(th.logical_not(th.isnan(h).any()), 'NaN: see torch.isnan in the docs')",
        "    elif th.isnan(h).any():",
        '        raise RuntimeError("NaN: see torch.isnan in the docs")')


@pytest.mark.torch
@pytest.mark.parametrize("imports", ["import torch as th", "import torch\nth = torch"])
def test_an_early_return_selected_with_the_alias_still_needs_an_input_that_takes_it(tmp_path, imports):
    # no shape case takes the early return (the logits never near 1e9): the selection is not
    # shown right on this model, whichever name the file gives torch (`th = torch`, a second
    # line, keeps the line numbers and binds `torch`, so the edits write `torch.`)
    src = GATE.replace("import torch as th", imports)
    line = IF + imports.count("\n")
    [where] = [c for c in _candidates(src, line) if ".where(" in c.lines[0]]
    root = write_repo(tmp_path / "repo", {"pkg/gate.py": src},
                      one_model("gate", "pkg.gate:Gate", "[{name: x, shape: [batch, 4]}]", "{batch: [1, 3]}"))
    target = break_target("gate", "pkg/gate.py", line, "GB0170", "Data-dependent branching")
    verdict = prove(root, "gate", [item("c0", where, src, target)], tmp_path / "work")["c0"]
    assert verdict["accepted"] is False, verdict
    assert f"no shape case or guard input takes the early return at line {line + 1}" in verdict["reason"], verdict
