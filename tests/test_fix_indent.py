"""A suggestion nests its lines by the file's own indentation step: recurrentgemma indents by 2
spaces, and PTC101's `torch.cond` edit there nested its line by 4 (pt2bot/rules/edits.py
`indent_unit`)."""
from __future__ import annotations

from pt2bot.findings import Finding
from pt2bot.rules import fix_candidates
from pt2bot.rules.edits import indent_unit

TWO = """\
import torch
from torch import nn


class Head(nn.Module):
  def __init__(self, c):
    super().__init__()
    self.c = c

  def forward(self, logits):
    c = self.c
    if c and logits.abs().max().item() > 0.5 * c:
      logits = nn.functional.tanh(logits / c) * c
    return logits
"""


def test_the_step_is_the_files():
    assert indent_unit("    ", TWO.splitlines()) == "  "
    assert indent_unit("    ", TWO.replace("  ", "    ").splitlines()) == "    "
    assert indent_unit("\t\t", TWO.splitlines()) == "\t"
    assert indent_unit("  ") == "    "      # no file to read: 4, as PEP 8 has it


def test_a_nested_suggestion_in_a_two_space_file_steps_by_two():
    f = Finding(rule="PTC101", path="m.py", line=12, col=TWO.splitlines()[11].index("logits.abs"),
                message="", severity="error")
    [cond] = [c for c in fix_candidates(f, TWO) if "torch.cond" in c.title]
    assert cond.lines == (
        "    if c:",
        "      logits = torch.cond(logits.abs().max() > 0.5 * c, lambda: nn.functional.tanh(logits / c) * c, "
        "lambda: logits.clone(), ())")
