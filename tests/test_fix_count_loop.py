"""A count per value over a loop on its distinct values (pt2bot/rules/dynamic_output_shape.py
`_count_loop_fixes`, offered for PTC304): seesawloss keeps running class counts with `for unique
in target.unique(): self.accumulate[unique] += (target == unique.item()).sum()`, a loop over a
number of values the data decides (GB0036 on `unique`, then GB0033 on the `.item()`); a new
user's model copied it. One `index_add_` of ones at the values adds up the same counts. The
recipe's text and the code it leaves alone, then the proof loop on real torch: verified where
the counts are one per class (the loop's `.item()` break gone with it), refused where they are a
row per class (the loop adds the count to a whole row; `index_add_` refuses a source of one
dimension there).
"""
from __future__ import annotations

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

COUNTER = """\
import torch
from torch import nn


class Counter(nn.Module):
    def __init__(self, classes=4, width=1):
        super().__init__()
        self.head = nn.Linear(4, classes)
        shape = (classes,) if width == 1 else (classes, width)
        self.register_buffer("counts", torch.zeros(shape))

    def forward(self, x, y):
        logits = self.head(x)
        for c in y.unique():
            self.counts[c] += (y == c.item()).sum()
        prior = (self.counts.sum(-1) if self.counts.dim() > 1 else self.counts) + 1.0
        return logits + torch.log(prior / prior.sum())
"""
LINE = 14
assert COUNTER.splitlines()[LINE - 1].strip() == "for c in y.unique():"
FIXED = ("        y_flat = y.reshape(-1)",
         "        self.counts.index_add_(0, torch.where(y_flat < 0, y_flat + len(self.counts), y_flat), "
         "torch.ones_like(y_flat, dtype=self.counts.dtype))")
CONFIG = one_model("counter", "pkg.counter:Counter",
                   "[{name: x, shape: [batch, 4]}, {name: y, shape: [batch], dtype: int64, low: LOW, high: 4}]",
                   "{batch: [3, 5]}", extra="    kwargs: {width: WIDTH}\n")


def _target(line: int = LINE, path: str = "pkg/counter.py") -> dict:
    return break_target("counter", path, line, "GB0036", "Dynamic shape operator")


def _edits(text: str, path: str = "m.py") -> list:
    return offered(_target(LINE, path), text, "`index_add_`")


def test_the_loop_becomes_one_index_add():
    (c,) = _edits(COUNTER)
    assert (c.start_line, c.end_line, c.lines, c.safe, c.guards) == (LINE, LINE + 1, FIXED, False, ())
    assert c.title == ("count every value of `y` into `self.counts` at once with `index_add_`, not in a loop "
                       "over its distinct values (a negative value counted from the end, as indexing does)")
    compile(apply_candidate(COUNTER, c), "m.py", "exec")
    # the other spellings of the same count
    for body in ("self.counts[c] += torch.sum(y == c)", "self.counts[c] += (c == y).sum().item()"):
        (c,) = _edits(COUNTER.replace("self.counts[c] += (y == c.item()).sum()", body).replace(
            "for c in y.unique():", "for c in torch.unique(y, sorted=False):"))
        assert c.lines == FIXED


@pytest.mark.parametrize("old, new", [
    ("self.counts[c] += (y == c.item()).sum()", "self.counts[c] += (y == c).float().mean()"),  # not a count
    ("self.counts[c] += (y == c.item()).sum()", "self.counts[c] = (y == c).sum()"),            # not added
    ("self.counts[c] += (y == c.item()).sum()", "self.counts[c] += (x == c).sum()"),           # another tensor
    ("for c in y.unique():", "for c in y.unique(return_counts=True)[0]:"),
    ("self.counts[c] += (y == c.item()).sum()",
     "self.counts[c] += (y == c).sum()\n            print(c)"),                                 # more in the loop
    ("        prior = (", "        last = c\n        prior = ("),                           # the name read after
])
def test_no_edit_where_the_loop_is_not_a_count(old, new):
    assert _edits(COUNTER.replace(old, new)) == []


@pytest.mark.torch
@pytest.mark.parametrize("width, low, accepted", [(1, 0, True), (1, -2, True), (3, 0, False)])
def test_the_loop_verifies_it_only_where_the_counts_are_one_per_class(tmp_path, width, low, accepted):
    """Labels from -2 up: indexing counts -1 and -2 from the end, and so does the edit (an
    `index_add_` of the labels as they are raised there, which the independent re-run of
    seesawloss found)."""
    config = CONFIG.replace("WIDTH", str(width)).replace("LOW", str(low))
    root = write_repo(tmp_path / "repo", {"pkg/counter.py": COUNTER}, config)
    (c,) = _edits(COUNTER, path="pkg/counter.py")
    verdict = prove(root, "counter", [item("count", c, COUNTER, _target())], tmp_path / "work")["count"]
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        # the `.item()` break in the loop's body goes with it
        assert verdict["evidence"].startswith("GB0036 gone"), verdict
        assert "also gone: GB0033" in verdict["evidence"], verdict
    else:
        assert verdict["reason"].startswith("the patched model raises: forward(batch=3) raised RuntimeError"), verdict
