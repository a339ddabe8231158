"""Each fix recipe on real torch: the candidate removes the break under dynamo (eager backend,
graphs and breaks counted) and gives the same eager outputs as the original, also on the special
values the original guards against. And the wrong rewrites the recipes must never offer (one
that deletes a NaN guard, one that changes a masked mean's denominator) are shown wrong here."""
from __future__ import annotations

import dataclasses

import sys
import textwrap
import types
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.rules.branch_fixes import KEEP_ARM
from pt2bot.static import check_paths

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def candidates(tmp_path: Path, text: str, code: str):
    src = textwrap.dedent(text)
    (tmp_path / "m.py").write_text(src)
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
          if f.rule == code]
    assert len(fs) == 1, fs
    return src, fix_candidates(fs[0], src)


_LOADED = iter(range(1 << 30))


def load(src: str, name: str = "f"):
    """`name` of `src` run as a fresh module (registered: dynamo looks a module's globals up)."""
    mod = types.ModuleType(f"pt2bot_fix_test_{next(_LOADED)}")
    sys.modules[mod.__name__] = mod
    exec(compile(src, f"<{mod.__name__}>", "exec"), mod.__dict__)
    return getattr(mod, name)


def compiled_run(fn, *args, fullgraph=False):
    """(graphs, breaks, output) of `fn(*args)` compiled with a counting eager backend
    (`fullgraph=True` raises on any break)."""
    from torch._dynamo.utils import counters

    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    counters.clear()
    out = torch.compile(fn, backend=backend, fullgraph=fullgraph)(*args)
    # a data-dependent branch is counted under "unimplemented", a print under "graph_break"
    breaks = sum(counters["graph_break"].values()) + sum(counters["unimplemented"].values())
    return len(graphs), breaks, out


def assert_fixes(src: str, cand, name: str, *inputs, quiet=None):
    """The original breaks, the patched one does not, and eager outputs are equal on `inputs`."""
    before = load(src, name)
    after = load(apply_candidate(src, cand), name)
    g0, b0, _ = compiled_run(before, *inputs[0])
    g1, b1, _ = compiled_run(after, *inputs[0])
    assert (b0 >= 1 or g0 >= 2) and b1 == 0 and g1 == 1, (g0, b0, g1, b1)
    compiled_run(after, *inputs[0], fullgraph=True)
    for args in inputs:
        a, b = before(*args), after(*args)
        torch.testing.assert_close(b, a, equal_nan=True)


def test_print_guard_removes_the_break_and_keeps_eager_output(tmp_path, capsys):
    src, (guard, remove) = candidates(tmp_path, """\
        import torch

        def f(x):
            y = x + 1
            print("activations",
                  y.shape)
            return y * 2

        g = torch.compile(f)
        """, "PTC105")
    x = torch.randn(3, 4)
    assert_fixes(src, guard, "f", (x,))
    capsys.readouterr()
    load(src)(x)
    before = capsys.readouterr().out
    load(apply_candidate(src, guard))(x)
    assert capsys.readouterr().out == before == "activations torch.Size([3, 4])\n"
    # removing it fixes the break too, but eager no longer prints: not safe
    assert_fixes(src, remove, "f", (x,))
    assert not remove.safe


def test_warning_guard_removes_the_break_and_eager_still_warns(tmp_path):
    src, (guard, remove) = candidates(tmp_path, """\
        import warnings
        import torch

        def f(x):
            warnings.warn("`scale` is deprecated", FutureWarning)
            return x * 2

        g = torch.compile(f)
        """, "PTC106")
    x = torch.randn(3)
    assert guard.safe and not remove.safe
    assert_fixes(src, guard, "f", (x,))
    with pytest.warns(FutureWarning, match="deprecated"):
        load(apply_candidate(src, guard))(x)


NAN_GUARD = """\
    import torch

    def f(h):
        h = h * 2
        if torch.isnan(h).any():
            h = torch.nan_to_num(h)
        return h + 1

    g = torch.compile(f)
    """

ORDINARY = torch.randn(4, 3)
WITH_NAN = torch.tensor([[1.0, float("nan"), float("inf")], [0.0, -2.0, 3.0]])
INF_ONLY = torch.tensor([[1.0, float("inf")], [0.0, -2.0]])


def test_nan_guard_candidates_remove_the_break_and_agree_on_nan(tmp_path):
    src, cands = candidates(tmp_path, NAN_GUARD, "PTC201")
    assert [c.rank for c in cands] == [1, 2]
    # the where and cond forms equal the original on every special value, an inf the `isnan`
    # test lets through included
    for c in cands:
        assert_fixes(src, c, "f", (ORDINARY,), (WITH_NAN,))
        assert_fixes(src, c, "f", (ORDINARY,), (INF_ONLY,))
    # the branchless form, no candidate, replaces that inf
    dropped = src.replace("    if torch.isnan(h).any():\n        h = torch.nan_to_num(h)",
                          "    h = torch.nan_to_num(h)")
    assert dropped != src
    assert not torch.equal(load(src)(INF_ONLY), load(dropped)(INF_ONLY))


CAPPED = """\
    import torch

    def f(x, y, max_ratio=4.0):
        pix = (x - y).abs().mean()
        freq = ((x - y) ** 2).mean()
        if freq > max_ratio * pix:
            freq = freq * (max_ratio * pix / freq).detach()
        return pix + freq

    g = torch.compile(f)
    """


def test_a_where_whose_if_side_divides_by_what_the_test_reads_keeps_finite_gradients(tmp_path):
    """A loss term capped against another (a focal-frequency loss held below a multiple of
    the pixel loss): `torch.where` computes the cap's `r * pix / freq` where the test fails too,
    at freq == pix == 0 when an estimate equals its target, and 0 * NaN made every gradient NaN
    where head's were finite. 1 stands in for `freq` there: equal values and gradients on
    both sides of the test and at 0."""
    src, cands = candidates(tmp_path, CAPPED, "PTC201")
    where = next(c for c in cands if c.rank == 1)
    assert where.lines == (
        "    safe_freq = torch.where(freq > max_ratio * pix, freq, torch.ones_like(freq))",
        "    freq = torch.where(freq > max_ratio * pix, freq * (max_ratio * pix / safe_freq).detach(), freq)")
    assert "1 stands in for `freq` where the test fails" in where.title
    before, after = load(src), load(apply_candidate(src, where))
    y = torch.randn(2, 3)
    # capped (a large error), not capped (a small one), and the estimate equal to its target
    for x in (y + 10.0, y + 0.01, y.clone()):
        grads = []
        for fn in (before, after):
            xs = x.clone().requires_grad_(True)
            out = fn(xs, y)
            out.backward()
            grads.append((out.detach(), xs.grad))
        for a, b in zip(*grads):
            torch.testing.assert_close(b, a)
        assert torch.isfinite(grads[1][1]).all()
    # the plain selection gives NaN gradients where the estimate equals the target
    plain = src.replace("    if freq > max_ratio * pix:\n        freq = freq * (max_ratio * pix / freq).detach()",
                        "    freq = torch.where(freq > max_ratio * pix, freq * (max_ratio * pix / freq).detach(), freq)")
    assert plain != src
    xs = y.clone().requires_grad_(True)
    load(plain)(xs, y).backward()
    assert torch.isnan(xs.grad).all()
    assert_fixes(src, where, "f", (y + 10.0, y))


MEAN_OF_VALID = """\
    import torch

    def f(loss, valid):
        loss = (loss * valid).sum()
        if valid.sum() > 0:
            loss = loss / valid.sum()
        return loss

    g = torch.compile(f)
    """


def test_a_divisor_computed_from_what_the_test_reads_gets_its_stand_in(tmp_path):
    """A mean over the valid entries, `if valid.sum() > 0: loss = loss / valid.sum()`: with
    no entry valid, the plain selection divides by 0 and its gradient is NaN; the stand-in
    keeps head's."""
    src, cands = candidates(tmp_path, MEAN_OF_VALID, "PTC201")
    where = next(c for c in cands if c.rank == 1)
    assert where.lines == (
        "    safe_operand = torch.where(valid.sum() > 0, valid.sum(), torch.ones_like(valid.sum()))",
        "    loss = torch.where(valid.sum() > 0, loss / safe_operand, loss)")
    before, after = load(src), load(apply_candidate(src, where))
    for valid in (torch.tensor([1.0, 0.0, 1.0]), torch.zeros(3)):
        grads = []
        for fn in (before, after):
            x = torch.tensor([0.5, 2.0, -1.0], requires_grad=True)
            out = fn(x, valid)
            out.backward()
            grads.append((out.detach(), x.grad))
        for a, b in zip(*grads):
            torch.testing.assert_close(b, a)


def test_a_guard_deleting_rewrite_is_never_offered(tmp_path):
    """Deleting the `if` and its body also removes the break and equals the original on
    ordinary values: only the guard's own input tells it apart. No candidate is that edit, and
    every candidate equals the original on it."""
    src, cands = candidates(tmp_path, """\
        import torch

        def f(h):
            if torch.isnan(h).any():
                h = torch.zeros_like(h)
            return h + 1

        g = torch.compile(f)
        """, "PTC201")
    lines = src.splitlines()
    deleted = "\n".join(lines[:3] + lines[5:]) + "\n"
    assert all(c.lines != () for c in cands)
    torch.testing.assert_close(load(deleted)(ORDINARY), load(src)(ORDINARY))
    assert not torch.equal(load(deleted)(WITH_NAN).nan_to_num(), load(src)(WITH_NAN).nan_to_num())
    assert [c.rank for c in cands] == [1, 2]
    for c in cands:
        assert "nan" in c.guards
        assert_fixes(src, c, "f", (ORDINARY,), (WITH_NAN,))


@pytest.mark.parametrize("body", [
    "    if x.sum() > 0:\n        return x * 2\n    return x\n",
    "    y = x + 1 if x.mean() > 0 else x - 1\n    return y\n",
    "    y = x\n    if (x < 0).any():\n        y = x.abs()\n    else:\n        y = x * 3\n    return y\n",
])
def test_where_and_cond_for_one_statement_a_side(tmp_path, body):
    src, cands = candidates(tmp_path, "import torch\n\ndef f(x):\n" + body + "\ng = torch.compile(f)\n",
                            "PTC201")
    # not the `if`/`else` with one arm kept alone: right only where the arms agree, which is
    # for the proof to show on the model's inputs (they do not agree here)
    kept = {KEEP_ARM.format(kept="if", where="false"), KEEP_ARM.format(kept="else", where="true")}
    cands = [c for c in cands if c.title not in kept]
    assert cands
    for c in cands:
        for x in (torch.randn(5), torch.randn(5).abs(), -torch.randn(5).abs() - 1):
            assert_fixes(src, c, "f", (x,))


@pytest.mark.parametrize("expr", [
    "x[mask].mean()", "x[x > 0].sum()", "x[x > 0].float().mean()", "x[mask].max()", "x[mask].prod()",
    "y / x[mask].mean()",
])
def test_masked_reduction_same_result_without_the_break(tmp_path, expr):
    src, (c,) = candidates(tmp_path, f"""\
        import torch

        def f(x, y):
            mask = x > 0
            return {expr}

        g = torch.compile(f)
        """, "PTC304")
    x = torch.tensor([[1.5, -2.0, 0.5], [3.0, -1.0, -0.25]])
    y = torch.tensor(2.0)
    assert_fixes(src, c, "f", (x, y), (torch.randn(7), y))
    if "max" not in expr:   # an empty mask: NaN / 0 / 1 as before (max of nothing raises)
        assert "empty" in c.guards
        assert_fixes(src, c, "f", (-x.abs(), y))


def test_a_denominator_changing_mean_is_never_offered(tmp_path):
    """`torch.where(mask, x, 0).mean()` removes the break too, but divides by every element:
    the recipe divides by the mask's count and equals the original."""
    src, (c,) = candidates(tmp_path, """\
        import torch

        def f(x):
            return x[x > 0].mean()

        g = torch.compile(f)
        """, "PTC304")
    wrong = src.replace("x[x > 0].mean()", "torch.where(x > 0, x, 0).mean()")
    x = torch.tensor([1.0, -1.0, 3.0, -4.0])
    assert load(wrong)(x).item() == 1.0 and load(src)(x).item() == 2.0
    assert ".mean()" not in "\n".join(c.lines)
    assert_fixes(src, c, "f", (x,), (torch.randn(9),), (-x.abs(),))


@pytest.mark.parametrize("code,body", [
    ("PTC101", "    scale = x.abs().max().item()\n    return x / scale\n"),
    ("PTC101", "    return x * x.mean().item() + 1\n"),
    ("PTC104", "    return x - float(x.mean())\n"),
    ("PTC104", "    m = float(x.mean() + 1)\n    return x / m\n"),
    ("PTC104", "    return x * int(x.sum())\n"),
    ("PTC104", "    n = int(x.argmax())\n    return x * n\n"),
    ("PTC101", "    return x - int(x.sum().item())\n"),
    ("PTC102", "    w = x.sum(0).tolist()\n    return x * w[0] + w[-1]\n"),
    ("PTC101", "    return x.clamp(max=x.mean().item())\n"),
    ("PTC101", "    m = x.mean().item()\n    return torch.where(x > 0, x, m)\n"),
    ("PTC101", "    x = x + 1\n    x /= x.sum().item()\n    return x\n"),
])
def test_keep_the_tensor_removes_the_break(tmp_path, code, body):
    src, (c,) = candidates(tmp_path, "import torch\n\ndef f(x):\n" + body + "\ng = torch.compile(f)\n", code)
    assert_fixes(src, c, "f", (torch.randn(4, 3),), (torch.randn(2, 5).double(),))


def compiles(fn, calls) -> int:
    """How many graphs dynamo compiles (eager backend) over `calls` (argument tuples): 1 when
    no call recompiles."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    torch._dynamo.reset()
    compiled = torch.compile(fn, backend=backend)
    for args in calls:
        compiled(*args)
    return len(graphs)


def test_numpy_candidate_exports_and_keeps_outputs(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import numpy as np
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                y = torch.from_numpy(np.sqrt(x.numpy()) * 2)
                return y + 1

        g = torch.compile(M())
        """, "PTC103")
    before, after = load(src, "M")(), load(apply_candidate(src, c), "M")()
    x = torch.rand(3, 4)
    # the claim is torch.export's (non-strict, its default): the array fails it, the torch form exports
    with pytest.raises(RuntimeError, match="numpy"):
        torch.export.export(before, (x,))
    ep = torch.export.export(after, (x,))
    for args in [(x,), (torch.rand(5, 2),)]:
        torch.testing.assert_close(after(*args), before(*args))
    torch.testing.assert_close(ep.module()(x), before(x))
    g, b, _ = compiled_run(after, x, fullgraph=True)
    assert (g, b) == (1, 0)


def test_hardcoded_size_candidate_exports_a_dynamic_batch(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                return x.view(8, -1) * 2

        g = torch.compile(M())
        """, "PTC302")
    before, after = load(src, "M")(), load(apply_candidate(src, c), "M")()
    x = torch.rand(8, 3, 4)
    batch = {"x": {0: torch.export.Dim("batch", min=2, max=64)}}
    with pytest.raises(Exception, match="batch|[Cc]onstraint|specializ"):
        torch.export.export(before, (x,), dynamic_shapes=batch)
    ep = torch.export.export(after, (x,), dynamic_shapes=batch)
    torch.testing.assert_close(after(x), before(x))
    torch.testing.assert_close(ep.module()(torch.rand(5, 3, 4)).shape, torch.Size([5, 12]))
    # compiled with the batch dynamic: the literal pins it (an error), the size read from the
    # input gives one graph for every batch
    calls = [(torch.rand(8, 3, 4),), (torch.rand(5, 3, 4),), (torch.rand(6, 3, 4),)]
    torch._dynamo.mark_dynamic(calls[0][0], 0)
    with pytest.raises(Exception, match="[Cc]onstraint"):
        compiles(before, calls[:1])
    assert compiles(after, calls) == 1


def test_state_local_candidate_stops_the_recompile(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import torch
        import torch.nn as nn


        class M(nn.Module):
            def __init__(self):
                super().__init__()
                self.freqs = torch.linspace(0.5, 1.5, 4)

            def forward(self, x):
                self.freqs = self.freqs.to(x.dtype)
                return x * self.freqs + self.freqs.sum()

        g = torch.compile(M())
        """, "PTC110")
    mod = load(src, "M")
    before, after = mod(), load(apply_candidate(src, c), "M")()
    calls = [(torch.rand(2, 4, dtype=torch.float64),) for _ in range(4)]
    # the stored float64 tensor fails the guard on the next call: a second compile
    assert compiles(before, calls) == 2
    assert compiles(after, calls) == 1
    for args in calls + [(torch.rand(3, 4),)]:
        torch.testing.assert_close(after(*args), before(*args))


def test_an_integer_draw_kept_as_a_tensor_draws_the_same(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import torch

        def f(x):
            k = int(torch.randint(3, (1,)).item())
            return x * (k + 1)

        g = torch.compile(f)
        """, "PTC101")
    assert c.lines == ("    k = torch.randint(3, (1,))",)
    before, after = load(src), load(apply_candidate(src, c))
    g0, b0, _ = compiled_run(before, torch.randn(4, 3))
    g1, b1, _ = compiled_run(after, torch.randn(4, 3))
    assert b0 >= 1 and (g1, b1) == (1, 0)
    for seed in range(4):   # the same draw from the same generator state
        x = torch.randn(2, 5)
        torch.manual_seed(seed)
        a = before(x)
        torch.manual_seed(seed)
        torch.testing.assert_close(after(x), a)


def test_a_size_from_python_numbers_removes_the_break(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import torch
        import torch.nn.functional as F

        def f(x):
            parts = [x[:, :3], x[:, 3:]]
            lengths = torch.tensor([p.shape[1] for p in parts], dtype=torch.long)
            max_len = int(lengths.amax().item())
            return F.pad(x, (0, max_len))

        g = torch.compile(f)
        """, "PTC101")
    assert c.lines == ("    max_len = max(p.shape[1] for p in parts)",)
    assert_fixes(src, c, "f", (torch.randn(2, 8),), (torch.randn(3, 5),), (torch.randn(1, 2),))


MASKED_WRITES = """\
import torch

def same_shape(x):
    y = x.clone()
    mask = x > 0
    y[mask] = x.flip(0)[mask]
    return y

def leading(e, labels, w):
    e = e.clone()
    e[labels == 0] += w
    return e

g = torch.compile(same_shape)
"""


def test_a_masked_write_through_where_removes_the_break(tmp_path):
    (tmp_path / "m.py").write_text(MASKED_WRITES)
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
          if f.rule == "PTC304"]
    (same,) = [f for f in fs if f.line == 6]
    # `mask = x > 0` has the shape of x, which `y` was cloned from: the plain form only
    (simple,) = fix_candidates(same, MASKED_WRITES)
    assert "reshape" not in simple.lines[0]
    x = torch.randn(4, 3)
    assert_fixes(MASKED_WRITES, simple, "same_shape", (x,), (torch.randn(2, 7),), (-x.abs(),))


def test_a_mask_over_leading_dimensions_needs_the_reshaped_form(tmp_path):
    """`e[labels == 0] += w` with labels (B, N) and e (B, N, D): the plain `torch.where` form does
    not broadcast the mask that way (eager raises: the proof refuses it), the reshaped one
    equals the original and has no break."""
    (tmp_path / "m.py").write_text(MASKED_WRITES.replace("g = torch.compile(same_shape)", "g = torch.compile(leading)"))
    src = (tmp_path / "m.py").read_text()
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
          if f.rule == "PTC304"]
    (lead,) = [f for f in fs if f.line == 11]
    (reshaped,) = fix_candidates(lead, src)     # the plain form is no longer offered
    simple = dataclasses.replace(reshaped, lines=("    e.copy_(torch.where(labels == 0, e + w, e))",))
    labels = torch.tensor([[0, 1, 0], [2, 0, 0]])
    args = (torch.randn(2, 3, 4), labels, torch.randn(4))
    with pytest.raises(RuntimeError):
        load(apply_candidate(src, simple), "leading")(*args)
    assert_fixes(src, reshaped, "leading", args, (torch.randn(2, 3, 4), torch.ones(2, 3, dtype=torch.long),
                                                  torch.randn(4)))


HUNGARIAN = """\
import torch

def step(C, r, minval):
    C = C.clone()
    row_uncovered = r > 0
    C[~row_uncovered] += minval
    return C

g = torch.compile(step)
"""


def test_a_row_mask_of_a_square_matrix_gets_the_rows_not_the_columns(tmp_path):
    """fast-bss-eval's Hungarian step, `state.C[~state.row_uncovered] += minval`: the plain
    `torch.where(~row_uncovered, C + minval, C)` broadcasts the (n,) mask over the columns of
    the (n, n) matrix, a shape it accepts, and adds to the wrong entries. It was posted as
    verified (the assignments the matrix led to were equal on the proof's cases) and an
    independent re-run found 148 of 480 results different. Only the rows form is offered."""
    (tmp_path / "m.py").write_text(HUNGARIAN)
    (f,) = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
            if f.rule == "PTC304"]
    (c,) = fix_candidates(f, HUNGARIAN)
    assert c.lines == ("    C.copy_(torch.where((~row_uncovered).reshape((~row_uncovered).shape + (1,) * "
                       "(C.dim() - (~row_uncovered).dim())), C + minval, C))",)
    C, rows = torch.randn(3, 3), torch.tensor([1.0, -1.0, 1.0])
    plain = dataclasses.replace(c, lines=("    C.copy_(torch.where(~row_uncovered, C + minval, C))",))
    assert not torch.equal(load(apply_candidate(HUNGARIAN, plain), "step")(C, rows, 0.5),
                           load(HUNGARIAN, "step")(C, rows, 0.5))
    assert_fixes(HUNGARIAN, c, "step", (C, rows, 0.5), (torch.randn(4, 4), -torch.ones(4), 1.0),
                 (torch.randn(2, 5), torch.tensor([1.0, -1.0]), -2.0))


def test_writes_through_the_tested_mask_without_the_branch(tmp_path):
    src, (c,) = candidates(tmp_path, """\
        import torch

        def f(x):
            x = x.clone()
            fill_mask = x > 1
            if fill_mask.any():
                x[fill_mask] = -1
            return x

        g = torch.compile(f)
        """, "PTC201")
    assert c.lines == ("    x[fill_mask] = -1",)
    x = torch.randn(4, 3)
    assert_fixes(src, c, "f", (x * 3,), (x.clamp(max=0.5),), (torch.randn(2, 7),))


SOFT_STEP = """\
import torch

def soft_unit_step(x):
    y = torch.zeros_like(x)
    m = x > 0.0
    y[m] = (-1 / x[m]).exp()
    return y

def step_grad(x):
    dx = torch.zeros_like(x)
    m = x > 0.0
    xm = x[m]
    dx[m] = (-1 / xm).exp() / xm.pow(2)
    return dx

g = torch.compile(soft_unit_step)
h = torch.compile(step_grad)
"""


@pytest.mark.parametrize("name,line", [("soft_unit_step", 6), ("step_grad", 12)])
def test_a_masked_write_of_computed_values_through_where_removes_the_break(tmp_path, name, line):
    """e3nn's soft_unit_step and its derivative: the value over every element with `x`'s
    unselected elements set to 1.0 first (the one form offered where the value divides) gives
    head's values without GB0036, also where the unselected elements would make -1 / x
    infinite or NaN."""
    (tmp_path / "m.py").write_text(SOFT_STEP)
    (f,) = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
            if f.rule == "PTC304" and f.line == line]
    (inside,) = fix_candidates(f, SOFT_STEP)
    special = torch.tensor([-1.0, 0.0, 0.5, 2.0, float("nan"), float("inf"), -float("inf"), -0.0])
    assert_fixes(SOFT_STEP, inside, name, (torch.randn(4, 5),), (special,), (torch.zeros(3),), (-torch.ones(6),))


def test_the_discarded_values_make_nan_gradients_the_safe_input_does_not(tmp_path):
    """Why the value computed as it is over every element is not offered where it divides:
    `torch.where` discards -1 / 0 = -inf in the forward pass, but its gradient there is
    0 * inf = NaN; head's gradient (and the offered form's) is 0."""
    (tmp_path / "m.py").write_text(SOFT_STEP)
    (f,) = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
            if f.rule == "PTC304" and f.line == 6]
    (inside,) = fix_candidates(f, SOFT_STEP)
    plain = dataclasses.replace(inside, lines=("    y = torch.where(m, (-1 / x).exp(), y)",))

    def grad(src):
        x = torch.tensor([-1.0, 0.0, 0.5, 2.0], requires_grad=True)
        load(src, "soft_unit_step")(x).sum().backward()
        return x.grad

    head = grad(SOFT_STEP)
    assert head[:2].tolist() == [0.0, 0.0]
    assert torch.isnan(grad(apply_candidate(SOFT_STEP, plain))[1])
    torch.testing.assert_close(grad(apply_candidate(SOFT_STEP, inside)), head)


R2 = """\
import torch

def r2(rss, tss):
    cond = ~torch.isclose(tss, torch.zeros_like(tss), atol=1e-4)
    raw = torch.ones_like(rss)
    raw[cond] = 1 - (rss[cond] / tss[cond])
    return raw

g = torch.compile(r2)
"""


def test_a_division_through_a_mask_reads_1_where_the_mask_is_off(tmp_path):
    """torchmetrics' R2 score: a constant target column has `tss` 0, which the mask leaves out.
    Computed over every column as it is, `rss / tss` is inf there: `torch.where` drops it in
    the forward pass, and the gradients of `rss` and `tss` are NaN where head's are finite.
    With the unselected elements read as 1, both match head's."""
    (tmp_path / "m.py").write_text(R2)
    f = next(f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC304" and f.line == 6)   # (each masked read is a finding)
    (c,) = fix_candidates(f, R2)
    assert c.lines == ("    raw = torch.where(cond, 1 - (torch.where(cond, rss, 1) / torch.where(cond, tss, 1)), raw)",)
    plain = dataclasses.replace(c, lines=("    raw = torch.where(cond, 1 - (rss / tss), raw)",))

    def grads(src):
        rss = torch.tensor([0.5, 0.3, 0.2], requires_grad=True)
        tss = torch.tensor([2.0, 0.0, 1.0], requires_grad=True)
        load(src, "r2")(rss, tss).sum().backward()
        return rss.grad, tss.grad

    head = grads(R2)
    assert all(bool(torch.isfinite(g).all()) for g in head)
    assert torch.isnan(grads(apply_candidate(R2, plain))[0][1])
    for got, want in zip(grads(apply_candidate(R2, c)), head):
        torch.testing.assert_close(got, want)
