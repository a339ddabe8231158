"""The size and fill-value recipes (pt2bot/rules/size_fixes.py) on real torch: each candidate
removes the break under dynamo (eager backend, graphs and breaks counted) and gives the same
eager outputs; and the wrong variants a recipe must not write are shown wrong."""
from __future__ import annotations

import textwrap

import pytest

from pt2bot.rules import apply_candidate
from tests.test_fix_sizes import MACE, SORT, stand_in_candidates
from tests.test_fixes_torch import assert_fixes, candidates, compiled_run, load

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SHAPES = ((torch.randn(2, 3, 4),), (torch.randn(5, 2, 3),), (torch.randn(1, 4, 1),))


def test_a_size_through_a_tensor_both_forms_remove_the_break():
    numel, inferred = stand_in_candidates(MACE, 8)
    for c in (numel, inferred):
        src = MACE + "\n\ndef f(x):\n    return Contraction()(x)\n"
        assert_fixes(src, c, "f", *SHAPES)


@pytest.mark.parametrize("made", ["n = int(torch.prod(torch.tensor(x.shape[1:])))",
                                  "n = int(torch.tensor([h, w]).prod())"])
def test_a_size_in_its_own_statement_removes_the_break(tmp_path, made):
    src, cands = candidates(tmp_path, f"""\
        import torch

        def f(x):
            b, h, w = x.shape
            {made}
            return x.view(-1, n) * 2

        g = torch.compile(f)
        """, "PTC104")
    (c,) = [c for c in cands if "from the sizes" in c.title]
    assert_fixes(src, c, "f", *SHAPES)


DENSE = """\
import torch


def dense(x, batch, size):
    fill = x.min() - 1
    out = x.new_full([size * 4, x.shape[1]], fill)
    out[batch * 4] = x
    return out
"""


def test_a_tensor_fill_value_filled_in_place_removes_the_break():
    (c,) = stand_in_candidates(DENSE, 6)
    for n in (2, 3):
        x, batch = torch.randn(n, 3), torch.arange(n)
        assert_fixes(DENSE, c, "dense", (x, batch, n))


def test_an_item_feeding_a_fill_kept_removes_the_break(tmp_path):
    src, cands = candidates(tmp_path, SORT.replace("@torch.compile\n", "") + "\ng = torch.compile(pool)\n",
                            "PTC101")
    (c,) = [c for c in cands if ".fill_()" in c.title]
    assert_fixes(src, c, "pool", (torch.randn(3, 2), [4, 2]), (torch.randn(5, 1), [2, 3]))


def test_the_wrong_variants_are_wrong():
    """What a recipe must not write, on real torch: the `.item()` dropped alone moves the break
    to `new_full` (GB0033 instead of GB0124); a fill value broadcast with `expand` instead of
    a fresh tensor gives a view whose rows share one memory location, so the later write
    `out[idx] = x` writes every row (no error: wrong values)."""
    item_alone = SORT.replace("@torch.compile\n", "").replace("x.min().item() - 1", "x.min() - 1")
    torch._dynamo.reset()
    from torch._dynamo.utils import counters
    counters.clear()
    torch.compile(load(item_alone, "pool"), backend="eager")(torch.randn(3, 2), [4, 2])
    assert any("Data dependent operator" in k for k in counters["graph_break"]), dict(counters["graph_break"])
    expanded = DENSE.replace("x.new_full([size * 4, x.shape[1]], fill)",
                             "fill.expand([size * 4, x.shape[1]])")
    x = torch.randn(2, 3)
    head = load(DENSE, "dense")(x, torch.arange(2), 2)
    assert not torch.equal(load(expanded, "dense")(x, torch.arange(2), 2), head)
    # and the right ones compile whole
    (c,) = stand_in_candidates(DENSE, 6)
    graphs, breaks, _ = compiled_run(load(apply_candidate(DENSE, c), "dense"), torch.randn(2, 3), torch.arange(2), 2)
    assert (graphs, breaks) == (1, 0)


def test_minus_one_differs_from_the_size_on_an_empty_dim():
    """Why `-1` is the second candidate: with another dim 0 it cannot be inferred."""
    numel, inferred = stand_in_candidates(MACE, 8)
    src = textwrap.dedent(MACE)
    x = torch.randn(0, 3, 4)
    assert load(apply_candidate(src, numel), "Contraction")()(x).shape == (0, 12)
    with pytest.raises(RuntimeError):
        load(apply_candidate(src, inferred), "Contraction")()(x)


@pytest.mark.parametrize("use", ["return x.masked_fill(x > 0, v)", "return torch.full((2, 3), v) + x.sum()",
                                 "y = x.clone()\n    y.fill_(v)\n    return y",
                                 "return x.index_fill(0, torch.tensor([0]), value=v)"])
def test_a_fill_value_that_takes_a_tensor_keeps_it_without_a_break(tmp_path, use):
    src, cands = candidates(tmp_path, f"""\
import torch

def f(x):
    v = x.min().item() - 1
    {use}

g = torch.compile(f)
""", "PTC101")
    (c,) = [c for c in cands if c.title.startswith("keep the tensor")]
    assert_fixes(src, c, "f", (torch.randn(2, 3),), (torch.randn(4, 3),))
