"""A number `.item()` gave, read by the test of the `if` right after it and nowhere after that
`if` (`peak = x.max().item()`, then `if peak > 1.0: x = x / peak`: a new user's intensity
scaling, and PTC203's own example). Keeping the number a tensor alone is no edit there (the `if`
would branch on a tensor), so the recipe edits both statements: the value kept a tensor,
detached as the number was, and the `if` as the edits of a test on a tensor make it. The proof
then decides between them on the user's model: `torch.where` computes the arm head skipped,
and where that arm divides by zero its gradient is NaN; `torch.cond` runs only the arm taken."""
from __future__ import annotations

import pytest

from proofs import break_target, item, offered, one_model, prove, write_repo
from test_fixes import fixed

MODEL = '''\
import torch
from torch import nn


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        peak = h.abs().max().item()
        if peak > 1.0:  # scale down to at most 1
            h = h / peak
        return h * 2
'''
LINE = 12
TARGET = break_target("scaler", "pkg/model.py", LINE, "GB0124",
                      "Unsupported Tensor.item() call with capture_scalar_outputs=False")


def test_the_item_and_the_if_that_reads_it_are_one_edit():
    # (not the block run always in compiled code, nor in eager only: compiled code would decide
    # otherwise than eager code, where xitorch's conjugate gradients keep their best iterate)
    where, cond = offered(TARGET, MODEL, "keep `peak` a tensor")
    kept = "        peak = h.abs().max().detach()"
    assert (where.start_line, where.end_line, where.lines) == (
        LINE, LINE + 2, (kept, "        safe_peak = torch.where(peak > 1.0, peak, torch.ones_like(peak))",
                         "        h = torch.where(peak > 1.0, h / safe_peak, h)"))
    assert cond.lines == (kept, "        h = torch.cond(peak > 1.0, lambda: h / peak, lambda: h.clone(), ())")
    assert where.title == ("keep `peak` a tensor, detached (`.item()` carried no gradient), and select with "
                           "`torch.where` instead of branching; 1 stands in for `peak` where the test fails, "
                           "so that the division computed there and not selected is defined")
    assert not any(c.safe for c in (where, cond)) and where.rank < cond.rank
    for c in (where, cond):
        fixed(MODEL, c)


@pytest.mark.parametrize("after", [
    "        return h * peak\n",                      # the number is read after the `if`
    "        return h * 2 if peak else h\n",
])
def test_no_joint_edit_where_the_number_is_read_after_the_if(after):
    text = MODEL.replace("        return h * 2\n", after)
    assert offered(TARGET, text, "keep `peak` a tensor") == []


def test_an_early_return_on_the_number_is_one_return_with_it(tmp_path):
    # PTC203's own example: the `if` and the `return` after it become one `torch.where`
    from test_fixes import findings_in
    from pt2bot.rules import fix_candidates
    src, fs = findings_in(tmp_path, "import torch\n\n@torch.compile\ndef f(x):\n    n = x.sum().item()\n"
                                    "    if n > 0:\n        return x * 2\n    return x\n", "PTC101")
    first = [c for f in fs for c in fix_candidates(f, src)][0]
    assert (first.start_line, first.end_line, first.lines) == (
        5, 8, ("    n = x.sum().detach()", "    return torch.where(n > 0, x * 2, x)"))
    fixed(src, first)


def test_no_joint_edit_where_the_if_is_not_next():
    text = MODEL.replace("        if peak > 1.0:", "        h = h + 1\n        if peak > 1.0:")
    assert offered(TARGET, text, "keep `peak` a tensor") == []


@pytest.mark.torch
def test_the_proof_shows_where_keeps_the_gradients_finite_and_so_does_cond(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/model.py": MODEL},
                      one_model("scaler", "pkg.model:Scaler", "[{name: x, shape: [batch, 8]}]",
                                "{batch: [2, 3]}"))
    where, cond = offered(TARGET, MODEL, "keep `peak` a tensor")
    v = prove(root, "scaler", [item("where", where, MODEL, TARGET), item("cond", cond, MODEL, TARGET)],
              tmp_path / "work")
    # weights all 0 make `peak` 0: the arm head skipped would be 0/0, its NaN in the gradients,
    # but for the 1 that stands in for `peak` where the test fails (without it, the proof
    # refused the selection: "on the model's weights all 0, the parameters' gradients differ
    # from head's (NaN where head's are finite)")
    assert v["where"]["accepted"] is True, v["where"]
    assert "on weights all 0, gradients too" in v["where"]["evidence"]
    assert "accepted" not in v["cond"]     # (the selection fixed the target first)
    v = prove(root, "scaler", [item("cond", cond, MODEL, TARGET)], tmp_path / "work-cond")
    assert v["cond"]["accepted"] is True, v["cond"]
    assert v["cond"]["evidence"].startswith("GB0124 gone, 1 graph instead of 2, outputs equal on 2 shape "
                                            "cases, gradients equal on 2 shape cases")
    assert "on weights all 0, gradients too" in v["cond"]["evidence"]


BEST = MODEL.replace("""        peak = h.abs().max().item()
        if peak > 1.0:  # scale down to at most 1
            h = h / peak
""", """        best, best_h = 1e9, h
        peak = h.abs().max().item()
        if peak < best:
            best = peak
            best_h = h
        h = best_h
""")


def test_no_joint_edit_that_lets_compiled_code_decide_otherwise():
    # xitorch's conjugate gradients keep their best iterate: with the block run always in
    # compiled code they would keep the last one, which converging shape cases cannot tell apart
    assert "best_h = h" in BEST
    # (selecting each assignment on the test keeps the best one: that joint edit is offered,
    # and the proof decides it)
    titles = [c.title for c in offered(dict(TARGET, line=LINE + 1), BEST, "keep `peak` a tensor")]
    assert titles and all("select each assignment of the block" in t for t in titles), titles


def test_no_joint_edit_where_a_loop_reads_the_number_before_it_is_read_again():
    # `peak` read at the top of the next iteration: that read needs the number it was
    text = MODEL.replace("""        h = self.lin(x)
        peak = h.abs().max().item()
        if peak > 1.0:  # scale down to at most 1
            h = h / peak
""", """        h = self.lin(x)
        peak = 0.0
        for _ in range(2):
            h = h + peak
            peak = h.abs().max().item()
            if peak > 1.0:
                h = h / peak
""")
    assert offered(dict(TARGET, line=LINE + 3), text, "keep `peak` a tensor") == []
