"""The fix recipes on source text: `fix_candidates` finds a finding's statement, each recipe's
edit keeps the indentation and compiles, `apply_candidate` keeps the file's line endings, and
what no recipe can do is no candidate with its reason (never an exception)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.findings import Finding
from pt2bot.rules import Candidate, apply_candidate, fix_candidates, fix_candidates_explained
from pt2bot.rules.branch_fixes import COMPILED_BLOCK, EAGER_BLOCK
from pt2bot.static import check_paths


def findings_in(tmp_path: Path, text: str, code: str, name: str = "m.py") -> tuple[str, list[Finding]]:
    """The real check's findings of rule `code` in a one-file tree holding `text`."""
    src = textwrap.dedent(text)
    (tmp_path / name).write_text(src)
    found = check_paths(str(tmp_path), [name], StaticConfig(select=("ALL",)), jobs=1)
    return src, [f for f in found if f.rule == code]


def fixed(src: str, cand: Candidate) -> str:
    out = apply_candidate(src, cand)
    compile(out, "m.py", "exec")   # every candidate leaves valid Python
    return out


def only(tmp_path, text, code):
    src, fs = findings_in(tmp_path, text, code)
    assert len(fs) == 1, fs
    return src, fs[0], fix_candidates(fs[0], src)


# --- the interface -------------------------------------------------------------------------

def _cand(start, end, lines):
    return Candidate(code="PTC105", path="m.py", start_line=start, end_line=end, lines=tuple(lines),
                     title="t", safe=True)


def test_apply_keeps_line_endings_and_final_newline():
    assert apply_candidate("a\r\nb\r\nc\r\n", _cand(2, 2, ["x", "y"])) == "a\r\nx\r\ny\r\nc\r\n"
    assert apply_candidate("a\nb\nc", _cand(3, 3, ["x", "y"])) == "a\nb\nx\ny"
    assert apply_candidate("a\nb\nc\n", _cand(1, 2, [])) == "c\n"
    assert apply_candidate("a\nb\nc", _cand(3, 3, [])) == "a\nb"


@pytest.mark.parametrize("start,end", [(0, 1), (2, 4), (3, 2)])
def test_apply_outside_the_file_is_a_value_error(start, end):
    with pytest.raises(ValueError, match="not inside the file"):
        apply_candidate("a\nb\nc\n", _cand(start, end, ["x"]))


def test_apply_refuses_a_line_break_inside_a_line():
    with pytest.raises(ValueError, match="line break"):
        apply_candidate("a\nb\n", _cand(1, 1, ["x\ny"]))


def test_no_candidate_has_a_reason_and_never_raises(tmp_path):
    src, (f,) = findings_in(tmp_path, """\
        import torch

        @torch.compile
        def f(x):
            print(x)
            return x + 1
        """, "PTC105")
    assert fix_candidates_explained(f, "def (:\n")[1].startswith("the file does not parse")
    assert fix_candidates_explained(f.with_(rule="PTC999"), src) == ([], "unknown rule PTC999")
    cands, why = fix_candidates_explained(f.with_(rule="PTC109"), src)
    assert cands == [] and "has no fix recipe" in why
    # a finding whose line is not where the source says (a stale position): no edit, a reason
    cands, why = fix_candidates_explained(f.with_(line=1, col=0), src)
    assert cands == [] and "no edit" in why
    cands, why = fix_candidates_explained(f, src, ast.parse(src))
    assert why is None and [c.rank for c in cands] == sorted(c.rank for c in cands)


def test_a_recipe_that_raises_is_no_candidate(tmp_path, monkeypatch):
    from pt2bot.rules.print_call import PrintCall

    src, (f,) = findings_in(tmp_path, "import torch\n@torch.compile\ndef f(x):\n    print(x)\n", "PTC105")

    def boom(cls, finding, source, tree):
        raise IndexError("odd code")
    monkeypatch.setattr(PrintCall, "fixes", classmethod(boom))
    assert fix_candidates_explained(f, src) == ([], "the PTC105 recipe failed on this code: IndexError: odd code")


# --- PTC105 print ----------------------------------------------------------------------------

PRINT = """\
    import torch
    import torch.nn as nn

    class M(nn.Module):
        def forward(self, x):
            y = x + 1
            print("activations",
                  y.shape)  # shape
            return y * 2
    """


def test_print_guard_keeps_indentation_and_the_continuation(tmp_path):
    src, f, (guard, remove) = only(tmp_path, PRINT, "PTC105")
    assert (guard.safe, guard.rank, remove.safe, remove.rank) == (True, 0, False, 1)
    assert (guard.start_line, guard.end_line) == (7, 8)
    assert guard.lines == ("        if not torch.compiler.is_compiling():",
                           '            print("activations",',
                           "                  y.shape)  # shape")
    out = fixed(src, guard)
    assert out.splitlines()[9] == "        return y * 2"
    assert "print" not in fixed(src, remove)


def test_print_alone_in_its_block_is_replaced_by_pass(tmp_path):
    src, f, cands = only(tmp_path, """\
        import torch

        @torch.compile
        def f(x):
            if x.dim() == 2:
                print(x)
            return x
        """, "PTC105")
    remove = [c for c in cands if not c.safe][0]
    assert remove.lines == ("        pass",)
    fixed(src, remove)


def test_print_tab_indented_and_multiline_string_untouched(tmp_path):
    src = "import torch\n\n@torch.compile\ndef f(x):\n\tprint('''a\n  b''', x)\n\treturn x\n"
    (tmp_path / "m.py").write_text(src)
    (f,) = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(), jobs=1) if f.rule == "PTC105"]
    guard = fix_candidates(f, src)[0]
    assert guard.lines == ("\tif not torch.compiler.is_compiling():", "\t\tprint('''a", "  b''', x)")
    ns: dict = {}
    exec(compile(fixed(src, guard).replace("@torch.compile\n", ""), "m.py", "exec"), ns)


@pytest.mark.parametrize("text", [
    # no name for torch at the top: the guard would need an import elsewhere
    "from torch import compile\n\n@compile\ndef f(x):\n    print(x)\n    return x\n",
    # `torch` is a local of the function: the guard would not mean torch's
    "import torch\n\n@torch.compile\ndef f(x, torch=None):\n    print(x)\n    return x\n",
    # nor `T`, where the file knows torch as `T`
    "import torch as T\n\n@T.compile\ndef f(x, T=None):\n    print(x)\n    return x\n",
])
def test_print_guard_needs_the_module_torch(tmp_path, text):
    src, fs = findings_in(tmp_path, text, "PTC105")
    assert fs and not [c for c in fix_candidates(fs[0], src) if c.safe]


def test_print_guard_writes_the_file_s_name_for_torch(tmp_path):
    src, fs = findings_in(tmp_path, "import torch as T\n\n@T.compile\ndef f(x):\n    print(x)\n    return x\n",
                          "PTC105")
    [guard] = [c for c in fix_candidates(fs[0], src) if c.safe]
    assert guard.lines == ("    if not T.compiler.is_compiling():", "        print(x)")


@pytest.mark.parametrize("text", [
    "import torch\n\n@torch.compile\ndef f(x):\n    y = x; print(x)\n    return y\n",
    "import torch\n\n@torch.compile\ndef f(x):\n    if x.dim(): print(x)\n    return x\n",
    "import torch\n\n@torch.compile\ndef f(x):\n    y = print(x)\n    return x\n",
])
def test_print_sharing_its_line_or_used_as_a_value_gets_no_candidate(tmp_path, text):
    src, fs = findings_in(tmp_path, text, "PTC105")
    assert fs and fix_candidates_explained(fs[0], src)[0] == []


# --- PTC305 dynamic=False: the suggestion keeps the line's indentation -------------------------

DYNAMIC = """\
    import torch

    def build(model, big):
        if big:
            model = torch.compile(model, dynamic=False, backend="eager")
        fast = torch.compile(
            model,
            dynamic=False,
        )
        return torch.compile(model,
                             dynamic=False, mode="max-autotune"), fast
    """


def _replace_line(src: str, line: int, text: str) -> str:
    lines = src.splitlines(keepends=True)
    lines[line - 1] = text + "\n"
    return "".join(lines)


def test_ptc305_suggestion_keeps_indentation_and_compiles(tmp_path):
    src, fs = findings_in(tmp_path, DYNAMIC, "PTC305")
    assert [f.line for f in fs] == [5, 8, 11]
    with_suggestion = [f for f in fs if f.suggestion is not None]
    assert [f.suggestion for f in with_suggestion] == [
        '        model = torch.compile(model, backend="eager")',
        '                         mode="max-autotune"), fast']
    for f in with_suggestion:   # what one click on the suggestion block commits
        out = _replace_line(src, f.line, f.suggestion)
        compile(out, "m.py", "exec")
        assert "dynamic" not in out.splitlines()[f.line - 1]
    # the candidates: the same edits, safe, and the keyword alone on its line is deleted
    cands = [fix_candidates(f, src) for f in fs]
    assert [(c.lines, c.safe) for (c,) in cands] == [
        (('        model = torch.compile(model, backend="eager")',), True), ((), True),
        (('                         mode="max-autotune"), fast',), True)]
    out = src
    for (c,) in reversed(cands):
        out = fixed(out, c)
    assert "dynamic" not in out
    ns: dict = {}
    exec(compile(out, "m.py", "exec"), ns)


# --- PTC106 logging and warnings -------------------------------------------------------------

def test_logging_and_warnings_are_guarded(tmp_path):
    src, fs = findings_in(tmp_path, """\
        import logging
        import warnings
        import torch

        logger = logging.getLogger(__name__)

        @torch.compile
        def f(x, scale=None):
            logger.info("forward %s", x.shape)
            if scale is not None:
                warnings.warn(
                    "`scale` is deprecated", FutureWarning)
            return x + 1
        """, "PTC106")
    assert [f.line for f in fs] == [9, 11]
    (g1, r1), (g2, r2) = (fix_candidates(f, src) for f in fs)
    assert g1.lines == ("    if not torch.compiler.is_compiling():", '        logger.info("forward %s", x.shape)')
    assert g2.lines == ("        if not torch.compiler.is_compiling():", "            warnings.warn(",
                        '                "`scale` is deprecated", FutureWarning)')
    assert (g2.start_line, g2.end_line, g2.safe, r2.lines) == (11, 12, True, ("        pass",))
    fixed(fixed(src, g2), g1)


# --- PTC201 a branch on a tensor value -----------------------------------------------------

def test_nan_guard_where_then_cond(tmp_path):
    """Under a test for NaN only, `h = torch.nan_to_num(h)` is no branchless form: it also
    replaces the infs head keeps when no value is NaN (DiT's output, once suggested so and
    "verified" because an inf injected at the model's input reached the line as NaN)."""
    src, f, cands = only(tmp_path, """\
        import torch

        @torch.compile
        def f(h):
            h = h * 2
            if torch.isnan(h).any():
                h = torch.nan_to_num(h)
            return h
        """, "PTC201")
    assert [(c.rank, c.start_line, c.end_line, c.lines) for c in cands] == [
        (1, 6, 7, ("    h = torch.where(torch.isnan(h).any(), torch.nan_to_num(h), h)",)),
        (2, 6, 7, ("    h = torch.cond(torch.isnan(h).any(), lambda: torch.nan_to_num(h), lambda: h.clone(), ())",))]
    assert [c.guards for c in cands] == [("nan", "empty"), ("nan", "empty")]
    assert not any(c.safe for c in cands)
    for c in cands:
        fixed(src, c)


@pytest.mark.parametrize("test", ["not torch.isfinite(h).all()", "(~torch.isfinite(h)).any()",
                                  "torch.any(~h.isfinite())"])
def test_nan_to_num_under_a_test_for_any_non_finite_value_is_branchless(tmp_path, test):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(h):
            if {test}:
                h = torch.nan_to_num(h)
            return h
        """, "PTC201")
    assert (cands[0].rank, cands[0].lines) == (0, ("    h = torch.nan_to_num(h)",))
    assert {"nan", "inf"} <= set(cands[0].guards)


def test_no_selection_where_a_stand_in_for_the_divisor_cannot_be_given(tmp_path):
    """Both sides call `self.f(x)` (computed once, before the selection): the `if` side's
    division by `n.sum()` then gets no stand-in, and a plain selection would put x/0 into the
    gradient where it is 0, so no selection is offered (the arms alone and `torch.cond` are)."""
    src, f, cands = only(tmp_path, """\
        import torch

        class M(torch.nn.Module):
            @torch.compile
            def forward(self, x, n):
                if n.sum() > 0:
                    y = x + self.f(x) / n.sum()
                else:
                    y = x + self.f(x)
                return y
        """, "PTC201")
    assert 1 not in [c.rank for c in cands] and not any("torch.where" in "".join(c.lines) for c in cands)
    assert "torch.cond" in cands[-1].lines[-1]


@pytest.mark.parametrize("body,branchless", [
    ("x = x.clamp(max=1.0)", "x = x.clamp(max=1.0)"),
    ("x.clamp_(max=1.0)", "x.clamp_(max=1.0)"),
    ("x = x.masked_fill(x > 1, 1.0)", "x = x.masked_fill(x > 1, 1.0)"),
    ("x = torch.where(x > 1, 1.0, x)", "x = torch.where(x > 1, 1.0, x)"),
])
def test_noop_guards_of_clamp_and_fill_are_dropped(tmp_path, body, branchless):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x):
            if (x > 1).any():
                {body}
            return x
        """, "PTC201")
    assert cands[0].rank == 0 and cands[0].lines == ("    " + branchless,)


@pytest.mark.parametrize("test,body,want", [
    ("m.any()", ["x[m] = -1"], ("    x[m] = -1",)),
    ("torch.any(m)", ["x[m] = 0.5", "y[m] = fill"], ("    x[m] = 0.5", "    y[m] = fill")),
])
def test_writes_through_the_tested_mask_need_no_branch(tmp_path, test, body, want):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x, y, fill):
            m = x > 1
            if {test}:
                {chr(10).join(' ' * 16 + b for b in body).strip()}
            return x + y
        """, "PTC201")
    (c,) = cands
    assert c.lines == want and c.guards == ("empty",) and not c.safe
    fixed(src, c)


@pytest.mark.parametrize("store,said", [
    ('self.last_losses = {"pixel": pix.item(), "frequency": x.sum().item()}', "pix"),
    ("self.last_loss = pix.item()", "pix"),
    ('self.stats["pixel"] = [pix.item()]', "pix"),
])
def test_a_number_kept_only_for_a_log_says_the_edit_and_what_it_changes(tmp_path, store, said):
    """focal-frequency-loss's trial: `self.last_losses = {"pixel": pix.item(), ...}` for a
    training log got "the PTC101 recipe has no edit for this code". The tensor kept instead
    changes what a reader of the attribute gets, which the proof refuses; the reason now says
    that edit and what it changes."""
    from pt2bot.rules import fix_candidates_explained

    src, fs = findings_in(tmp_path, f"""\
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                pix = x.abs().mean()
                {store}
                return x * 2
        """, "PTC101")
    cands, reason = fix_candidates_explained(fs[0], src)
    assert cands == []
    target = store.split(" = ")[0]
    assert reason.startswith(f"no edit keeps what `{target}` holds: head stores a Python number read "
                             f"back from the tensor (the break); storing `{said}.detach()` instead keeps "
                             "the graph whole, but whoever reads"), reason
    assert "`json.dumps` does not" in reason


def test_a_number_used_besides_being_stored_gets_no_such_reason(tmp_path):
    from pt2bot.rules import fix_candidates_explained

    src, fs = findings_in(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                self.n = int(x.sum().item())
                return x[: self.n]
        """, "PTC101")
    assert "json.dumps" not in str(fix_candidates_explained(fs[0], src)[1])


@pytest.mark.parametrize("test,body,branchless", [
    ("(h > 1).any()", "h = h.clamp(max=1)", True),
    ("(h >= 1).any()", "h = torch.clamp(h, max=1)", True),
    ("(1 < h).any()", "h.clamp_(max=1)", True),
    ("(h < -10).any()", "h = h.clamp_min(-10)", True),
    ("(h > 1).any() or (h < 0).any()", "h = h.clamp(0, 1)", True),
    ("((h < 0) | (h > 1)).any()", "h = h.clip(0, 1)", True),
    ("(h.abs() > 5).any()", "h = h.clamp(-5, 5)", True),
    # the largest (smallest) value is NaN wherever one value is: the test fails, head clamps
    # nothing, and the clamp without its branch would clamp every other value past the bound
    ("h.amax() >= 1", "h = torch.clamp(h, max=1)", False),
    ("1 < h.max()", "h = h.clamp(max=1)", False),
    ("h.max() > 1 or h.min() < 0", "h = h.clamp(0, 1)", False),
    ("h.abs().max() > 5", "h = h.clamp(-5, 5)", False),
    # a test that is not about the clamp's bounds: dropping the branch clamps finite values
    # past them that head keeps (a guard input had to reach the line as such a value)
    ("torch.isinf(h).any()", "h = h.clamp(-1e4, 1e4)", False),
    ("torch.isnan(h).any()", "h = h.clamp(0, 1)", False),
    ("(h > 1).any()", "h = h.clamp(0, 1)", False),         # the lower bound untested
    ("(h > 2).any()", "h = h.clamp(max=1)", False),        # another bound
    ("(h < 1).any()", "h = h.clamp(max=1)", False),        # the wrong side
    ("(h.abs() > 5).any()", "h = h.clamp(-4, 5)", False),  # not symmetric
    ("(h > 0.5).any()", "h = h.clamp(max=1.0)", True),     # a threshold inside the bound
    ("(h > 1.5).any()", "h = h.clamp(max=1.0)", False),    # one past it
    ("m.all()", "h = h.masked_fill(m, 0)", False),         # some entries set, the test false
    ("m.any() or h.isnan().any()", "h = h.masked_fill(m, 0)", True),
])
def test_a_clamp_is_branchless_only_under_a_test_of_its_bounds(tmp_path, test, body, branchless):
    """Dropping the branch is exact only where the clamp changes nothing when the test fails:
    the test must hold wherever a value is past a bound (for a fill, wherever an entry of its
    mask is set). Else `torch.where` on the test comes first, exact by construction."""
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(h):
            m = h > 0
            if {test}:
                {body}
            return h
        """, "PTC201")
    assert (cands[0].rank == 0) is branchless, [(c.rank, c.lines) for c in cands]
    if branchless:
        assert cands[0].title.startswith("drop the branch")
    else:
        assert "torch.where" in cands[0].lines[-1], cands[0].lines
    for c in cands:
        fixed(src, c)


@pytest.mark.parametrize("test,body", [
    ("m.any()", "x[~m] = -1"),        # another mask than the tested one
    ("m.any()", "x[m] = x[0]"),       # a value that is read (and may not fit an empty selection)
    ("m.all()", "x[m] = -1"),         # not `any`
    ("(x > 1).any()", "x[m] = -1"),   # the test is not the mask written through
])
def test_writes_not_through_the_tested_mask_keep_the_branch(tmp_path, test, body):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x):
            m = x > 1
            if {test}:
                {body}
            return x
        """, "PTC201")
    assert not any(c.title.startswith("drop the branch") for c in cands)


@pytest.mark.parametrize("body", [
    "x = torch.nan_to_num(x)",     # the test is not about NaN
    "x = (x * 2).clamp(max=1.0)",  # not a transform of x itself
    "y = x.clamp(max=1.0)",        # another name: not a no-op when skipped
])
def test_what_is_not_a_noop_guard_gets_no_branchless_form(tmp_path, body):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x):
            y = x
            if (x > 1).any():
                {body}
            return x + y
        """, "PTC201")
    assert all(c.rank > 0 for c in cands)
    for c in cands:
        fixed(src, c)


def test_if_return_then_return_becomes_one_return(tmp_path):
    src, f, cands = only(tmp_path, """\
        import torch

        class M(torch.nn.Module):
            def forward(self, img):
                if torch.rand(1) < self.p:
                    return img.flip(-1)
                return img

        m = torch.compile(M())
        """, "PTC201")
    assert [(c.start_line, c.end_line, c.lines) for c in cands] == [
        (5, 7, ("        return torch.where(torch.rand(1) < self.p, img.flip(-1), img)",)),
        (5, 7, ("        return torch.cond(torch.rand(1) < self.p, lambda: img.flip(-1), lambda: img.clone(), ())",))]
    assert fixed(src, cands[0]).splitlines()[5:] == ["", "m = torch.compile(M())"]


def test_if_else_assignments_and_a_ternary(tmp_path):
    src, fs = findings_in(tmp_path, """\
        import torch

        @torch.compile
        def f(x):
            if x.sum() > 0:
                y = x * 2
            else:
                y = (x
                     - 1)
            z = x + 1 if x.mean() > 0 else x - 1
            return y + z
        """, "PTC201")
    c1, c2 = (fix_candidates(f, src) for f in fs)
    # the `torch.where` edit (the two that keep one arm alone come before it)
    c1 = [c for c in c1 if c.title == "select with `torch.where` instead of branching"]
    assert [c.lines for c in c1][0] == ("    y = torch.where(x.sum() > 0, x * 2, x", "             - 1)")
    assert (c1[0].start_line, c1[0].end_line) == (5, 9)
    assert [c.lines for c in c2] == [("    z = torch.where(x.mean() > 0, x + 1, x - 1)",)]
    out = fixed(fixed(src, c2[0]), c1[0])
    assert "if" not in out.replace("@torch.compile", "")


def test_no_where_for_a_ternary_with_none_on_one_side_and_a_reason(tmp_path):
    # rtdl's `mask if mask.any() else None`: `torch.where(cond, mask, None)` raised in the
    # proof, a candidate no run could accept; no edit, and the reason says what one graph needs
    src, [f] = findings_in(tmp_path, """\
        import torch

        @torch.compile
        def f(x):
            mask = x > 0
            kept = mask if mask.any() else None
            return x, kept
        """, "PTC201")
    cands, why = fix_candidates_explained(f, src)
    assert cands == []
    assert why.startswith("one side of the conditional expression at line 6 is `None`, which no tensor "
                          "operation selects"), why


@pytest.mark.parametrize("text", [
    # elif, and/or, a while, a name not bound before the `if`
    "    if x.sum() > 0:\n        y = 1\n    elif x.mean() > 0:\n        y = 2\n    else:\n        y = 3\n",
    "    while x.sum() > 0:\n        x = x - 1\n",
    "    if x.sum() > 0:\n        w = x - 1\n",
])
def test_branches_without_a_recipe(tmp_path, text):
    """Only the last resorts, where there is an `if` block: run it always in compiled code, or in
    eager only where it changes nothing the function reads after it, which the proof refuses
    wherever the block's work changes the result (recipes 5 and 6, tests/test_fix_returns.py)."""
    src = "import torch\n\n@torch.compile\ndef f(x):\n" + text + "    return x\n"
    (tmp_path / "m.py").write_text(src)
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(), jobs=1) if f.rule == "PTC201"]
    titles = [c.title for f in fs for c in fix_candidates(f, src)]
    # (in eager only only where the block changes nothing read after it: `w`, not `x`)
    assert fs and titles == ([COMPILED_BLOCK] + ([EAGER_BLOCK] if "w = " in text else [])
                             if text.startswith("    if x.sum() > 0:\n") and "el" not in text else [])


def test_several_assignments_are_each_selected_on_the_test_computed_first(tmp_path):
    # (pt2bot/rules/branch_fixes.py `_assignments_fixes`: the second statement reads what the
    # first wrote, which the selection keeps where the test holds, and `x` where it does not)
    src = ("import torch\n\n@torch.compile\ndef f(x):\n    if x.sum() > 0:\n        x = x - 1\n"
           "        x = x * 2\n    return x\n")
    (tmp_path / "m.py").write_text(src)
    fs = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(), jobs=1) if f.rule == "PTC201"]
    cands = [c for f in fs for c in fix_candidates(f, src)]
    assert [c.title for c in cands][1:] == [COMPILED_BLOCK]
    assert cands[0].lines == ("    taken = x.sum() > 0", "    x = torch.where(taken, x - 1, x)",
                              "    x = torch.where(taken, x * 2, x)")


def test_a_returned_tuple_keeps_its_brackets(tmp_path):
    src, f, cands = only(tmp_path, """\
        import torch

        @torch.compile
        def f(x):
            if x.sum() > 0:
                return x, x + 1
            return x - 1, x
        """, "PTC201")
    # `torch.where` selects one tensor: a pair of outputs is selected value by value (a new
    # user's SAM decoder got only `torch.cond`, which failed inside torch), and `torch.cond`
    # keeps its brackets
    assert [c.lines for c in cands] == [
        ("    return torch.where(x.sum() > 0, x, x - 1), torch.where(x.sum() > 0, x + 1, x)",),
        ("    return torch.cond(x.sum() > 0, lambda: (x, x + 1), lambda: (x - 1, x), ())",)]


# --- PTC304 a boolean-mask selection followed by a reduction --------------------------------

@pytest.mark.parametrize("expr,want", [
    ("x[x > 0].sum()", "torch.where(x > 0, x, 0).sum()"),
    ("x[mask].mean()", "torch.where(mask, x, 0).sum() / mask.sum()"),
    ("x[x > 0].float().mean()", "torch.where(x > 0, x.float(), 0).sum() / (x > 0).sum()"),
    ("(x + 1)[mask].double().max()", 'torch.where(mask, (x + 1).double(), float("-inf")).max()'),
    ("x[mask].amin()", 'torch.where(mask, x, float("inf")).amin()'),
    ("x[mask].prod()", "torch.where(mask, x, 1).prod()"),
    ("y / x[mask].mean()", "y / (torch.where(mask, x, 0).sum() / mask.sum())"),
])
def test_masked_reduction_recipe(tmp_path, expr, want):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x, y):
            mask = x > 0
            return {expr}
        """, "PTC304")
    (c,) = cands
    assert c.lines == ("    return " + want,) and c.guards == ("empty",) and not c.safe
    fixed(src, c)
    # the denominator-changing rewrite is never produced
    assert ".mean()" not in "".join(c.lines)


@pytest.mark.parametrize("expr", [
    "x[x > 0].sum(0)",                         # a reduction over one dimension
    "x[:, mask].sum()",                        # a mask over one dimension
    "x[torch.rand(x.shape) > 0.5].mean()",     # the mask would be drawn twice
    "x[mask].cumsum(0)",                       # not a reduction
    "torch.masked_select(x, mask).sum()",
])
def test_masked_selections_without_a_recipe(tmp_path, expr):
    src, fs = findings_in(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x, y):
            mask = x > 0
            return {expr}
        """, "PTC304")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --- PTC101 / PTC102 / PTC104 keep the tensor ------------------------------------------------

@pytest.mark.parametrize("code,body,want", [
    ("PTC101", "    scale = x.abs().max().item()\n    return x / scale\n", "    scale = x.abs().max()"),
    ("PTC101", "    return x * x.mean().item() + 1\n", "    return x * x.mean() + 1"),
    ("PTC101", "    s = float(x.sum().item())\n    y = -s\n    return x + y * 2\n", "    s = x.sum()"),
    ("PTC104", "    return x - float(x.mean())\n", "    return x - x.mean()"),
    ("PTC104", "    m = float(x.mean() + 1)\n    return x / m\n", "    m = x.mean() + 1"),
    ("PTC104", "    return x / float(x.mean() + 1)\n", "    return x / (x.mean() + 1)"),
    ("PTC102", "    v = x.sum().tolist()\n    return x * v\n", "    v = x.sum()"),
    # an element of the list with a constant index is the tensor's 0-d element
    ("PTC102", "    w = x.sum(0).tolist()\n    return x * w[0] + w[-1]\n", "    w = x.sum(0)"),
    # int() truncates toward zero, as .long() does; an integer draw or index is kept as it is
    ("PTC104", "    return x * int(x.sum())\n", "    return x * x.sum().long()"),
    ("PTC104", "    n = int(x.sum() + 1)\n    return x / n\n", "    n = (x.sum() + 1).long()"),
    ("PTC104", "    n = int(x.argmax())\n    return x * n\n", "    n = x.argmax()"),
    ("PTC101", "    k = int(torch.randint(3, (1,)).item())\n    return x * (k + 1)\n",
     "    k = torch.randint(3, (1,))"),
    ("PTC101", "    return x - int(x.mean().item())\n", "    return x - x.mean().long()"),
    # a torch call that takes the tensor as well as the number; an augmented assignment
    ("PTC101", "    return x.clamp(max=x.mean().item())\n", "    return x.clamp(max=x.mean())"),
    ("PTC101", "    m = x.mean().item()\n    return torch.where(x > 0, x, m)\n", "    m = x.mean()"),
    ("PTC101", "    m = x.mean().item()\n    x *= m\n    return x\n", "    m = x.mean()"),
    ("PTC101", "    x /= x.sum().item()\n    return x\n", "    x /= x.sum()"),
])
def test_keep_the_tensor(tmp_path, code, body, want):
    src, f, cands = only(tmp_path, "import torch\n\n@torch.compile\ndef f(x):\n" + body, code)
    (c,) = cands
    assert c.lines == (want,) and not c.safe and c.start_line == c.end_line == 5
    fixed(src, c)


@pytest.mark.parametrize("code,body", [
    ("PTC101", "    n = x.sum().item()\n    return x[:n]\n"),                  # an index
    ("PTC101", "    n = x.sum().item()\n    return x.new_zeros(int(n))\n"),    # a size
    # a condition, and the number read after it too (a condition alone, the `if` right after,
    # is one edit with it: tests/test_fix_item_branch.py)
    ("PTC101", "    n = x.sum().item()\n    if n > 0:\n        return x\n    return x * n\n"),
    ("PTC101", "    n = x.sum().item()\n    print(f'{n}')\n    return x * n\n"),  # a message too
    ("PTC101", "    return range(x.sum().item() + 1)\n"),
    ("PTC104", "    return x.new_zeros(int(x.sum()))\n"),                      # an int as a size
    ("PTC102", "    w = x.sum(0).tolist()\n    return x * w[int(x[0, 0])]\n"),   # an element by a computed index
    ("PTC102", "    w = x.sum(0).tolist()\n    return x.new_zeros(w[0])\n"),      # an element as a size
    ("PTC102", "    w = x.sum(0).tolist()\n    return x * len(w)\n"),             # the list itself
    # one clamp bound a number, the other a tensor: dynamo reads the tensor back (a break)
    ("PTC101", "    return torch.clamp(x, 0, x.mean().item())\n"),
    ("PTC101", "    n = 0\n    n += x.sum().item()\n    return x.new_zeros(int(n))\n"),  # n is then a size
    ("PTC104", "    return x * int(np.ones(3).sum())\n"),                      # numpy: no .long()
    ("PTC101", "    n = x.sum().item()\n    return x\n"),                      # never read
])
def test_a_python_number_that_is_needed_is_kept(tmp_path, code, body):
    src, fs = findings_in(tmp_path, "import numpy as np\nimport torch\n\n@torch.compile\ndef f(x):\n" + body, code)
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --- PTC103 numpy on a tensor: the torch equivalent -----------------------------------------

@pytest.mark.parametrize("line,want", [
    ("y = torch.from_numpy(x.numpy() * 2)", "y = x * 2"),
    ("y = torch.as_tensor(np.sqrt(x.detach().numpy()))", "y = torch.sqrt(x.detach())"),
    ("y = torch.tensor(np.mean(x.numpy()))", "y = (torch.mean(x)).clone()"),
    ("y = x.numpy().mean()", "y = x.mean()"),
    ("y = x.cpu().numpy().cumsum(0)", "y = x.cpu().cumsum(0)"),
    ("y = np.clip(x.numpy(), 0, 1)[0]", "y = torch.clip(x, 0, 1)[0]"),
    ("y = g(size=x.long().numpy().tolist())", "y = g(size=x.long().tolist())"),
])
def test_numpy_becomes_torch(tmp_path, line, want):
    src, f, cands = only(tmp_path, f"""\
        import numpy as np
        import torch


        def g(size):
            return size


        @torch.compile
        def f(x):
            {line}
            return y
        """, "PTC103")
    (c,) = cands
    assert c.lines == ("    " + want,) and not c.safe and c.start_line == c.end_line == 11
    fixed(src, c)


def test_numpy_uses_the_files_own_names_and_keeps_continuations(tmp_path):
    src, f, (c,) = only(tmp_path, """\
        import numpy
        import torch as T


        @T.compile
        def f(x):
            y = numpy.exp(x
                          .numpy())  # keep me
            return y
        """, "PTC103")
    # the `.numpy()` on its own line goes with its line break; the comment stays
    assert c.lines == ("    y = T.exp(x)  # keep me",) and (c.start_line, c.end_line) == (7, 8)
    fixed(src, c)


@pytest.mark.parametrize("line", [
    "y = x.numpy().astype(int)",                       # no torch namesake here
    "y = torch.from_numpy(np.linalg.inv(x.numpy()))",  # numpy's linalg
    "y = np.std(x.numpy())",                           # numpy divides by n, torch by n - 1
    "y = x.numpy().max(0)",                            # a tensor's returns values and indices
    "y = x.numpy().dtype",                             # numpy's dtype is not torch's
    "y = np.asarray(x.numpy(), dtype=np.float32)",
    "y = x.numpy()\n            y = y.astype(np.float32)",     # the array is read as one later
    "y = x.numpy()\n            y = np.exp(y)",
])
def test_numpy_without_a_torch_equivalent(tmp_path, line):
    src, fs = findings_in(tmp_path, f"""\
        import numpy as np
        import torch


        @torch.compile
        def f(x):
            {line}
            return y
        """, "PTC103")
    assert fs and fix_candidates_explained(fs[0], src)[1] == "the PTC103 recipe has no edit for this code"


def test_numpy_function_needs_torch_bound_in_the_file(tmp_path):
    # no module-level name for torch (only `from torch import ...`): no import is added
    src, fs = findings_in(tmp_path, """\
        import numpy as np
        from torch import compile


        @compile
        def f(x):
            return np.sqrt(x.numpy())
        """, "PTC103")
    assert fs and fix_candidates(fs[0], src) == []


# --- PTC302 a hard-coded size: the size read from the tensor --------------------------------

@pytest.mark.parametrize("body,want", [
    ("    return x.view(8, -1)\n", "    return x.view(x.shape[0], -1)"),
    ("    return x.reshape((4, -1))\n", "    return x.reshape((x.shape[0], -1))"),
    ("    return torch.reshape(x, (4, -1))\n", "    return torch.reshape(x, (x.shape[0], -1))"),
    ("    return x.view(8, x.shape[1], -1)\n", "    return x.view(x.shape[0], x.shape[1], -1)"),
    ("    b, n, d = x.shape\n    return x.reshape(2, n, d)\n", "    return x.reshape(b, n, d)"),
    ("    return x.view(2, x.size(1), x.size(2))\n", "    return x.view(x.shape[0], x.size(1), x.size(2))"),
])
def test_hardcoded_size_read_from_the_input(tmp_path, body, want):
    src, f, cands = only(tmp_path, "import torch\n\n@torch.compile\ndef f(x):\n" + body, "PTC302")
    (c,) = cands
    assert c.lines == (want,) and not c.safe and c.start_line == c.end_line == f.line
    fixed(src, c)


@pytest.mark.parametrize("body", [
    "    return x.view(8, -1, x.shape[-1])\n",        # 8 may be a product of dims
    "    return x.view(8, x.shape[2], -1)\n",         # dims out of order
    "    b, n, d = x.shape\n    x = x.t()\n    return x.reshape(2, n, d)\n",   # x rebound after the unpacking
])
def test_hardcoded_size_whose_dim_is_unknown(tmp_path, body):
    src, fs = findings_in(tmp_path, "import torch\n\n@torch.compile\ndef f(x):\n" + body, "PTC302")
    assert all(fix_candidates(f, src) == [] for f in fs)
    assert fs or "x.t()" in body   # the rebinding one: the rule may not flag a rebound input


# --- PTC110 module state stored in forward: a local -----------------------------------------

STATE = """\
    import torch
    import torch.nn as nn


    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.freqs = torch.ones(4)

        def forward(self, x):
            y = x + 1
            self.freqs = self.freqs.to(
                x.dtype)
            z = y * self.freqs
            if z.dim() > 1:
                z = z + self.freqs.sum()
            return z * 2
    {extra}
    """


def test_state_becomes_a_local_up_to_its_last_read(tmp_path):
    src, f, (c,) = only(tmp_path, STATE.format(extra=""), "PTC110")
    assert (c.start_line, c.end_line) == (12, 16) and not c.safe
    assert c.lines == ("        freqs = self.freqs.to(",
                       "            x.dtype)",
                       "        z = y * freqs",
                       "        if z.dim() > 1:",
                       "            z = z + freqs.sum()")
    out = fixed(src, c)
    assert out.splitlines()[16] == "        return z * 2"


@pytest.mark.parametrize("extra", [
    # another method reads the stored value
    "\n        def extra_repr(self):\n            return str(self.freqs)\n",
    # another method stores it by name
    "\n        def reset(self):\n            setattr(self, 'freqs', torch.ones(4))\n",
])
def test_state_other_methods_use_stays_text(tmp_path, extra):
    src, fs = findings_in(tmp_path, STATE.format(extra=extra), "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


@pytest.mark.parametrize("body", [
    # an accumulating value: the state across calls is the point
    "        self.ema = 0.9 * self.ema + 0.1 * x.mean()\n        return x - self.ema\n",
    # a counter
    "        self.calls += 1\n        return x * self.calls\n",
    # filled under a test (a cache): a local would be unbound on a hit
    "        if self.ema is None:\n            self.ema = x.mean().to(x.dtype)\n        return x - self.ema\n",
    # never read back in the function
    "        self.ema = self.ema.to(x.dtype)\n        return x\n",
    # the local's name is taken
    "        ema = x\n        self.ema = self.ema.to(x.dtype)\n        return ema - self.ema\n",
])
def test_state_without_a_local_recipe(tmp_path, body):
    src, fs = findings_in(tmp_path, "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
                          "    def __init__(self):\n        super().__init__()\n        self.ema = torch.zeros(())\n"
                          "        self.calls = 0\n\n    def forward(self, x):\n" + body, "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --- PTC101 / PTC104 a size read back from a tensor of Python numbers -----------------------

SIZES = """\
import torch

@torch.compile
def f(x, parts):
{body}
"""


@pytest.mark.parametrize("code,body,want", [
    ("PTC101", "    lengths = torch.tensor([p.shape[0] for p in parts], dtype=torch.long)\n"
               "    n = int(lengths.amax().item())\n    return x.new_zeros(n)",
     "    n = max(p.shape[0] for p in parts)"),
    ("PTC101", "    sizes = [p.shape[0] for p in parts]\n    t = torch.tensor(sizes, device=x.device)\n"
               "    n = int(t.max().item())\n    return x.new_zeros(n)",
     "    n = int(max(sizes))"),   # no integer dtype: the int() stays (the list may hold floats)
    ("PTC101", "    t = torch.tensor([len(p) for p in parts])\n    return x.new_zeros(t.sum().item())",
     "    return x.new_zeros(sum(len(p) for p in parts))"),
    ("PTC104", "    t = torch.tensor([p.shape[1] for p in parts])\n    return x.new_zeros(int(t.amin()))",
     "    return x.new_zeros(int(min(p.shape[1] for p in parts)))"),
])
def test_size_from_the_python_numbers(tmp_path, code, body, want):
    src, fs = findings_in(tmp_path, SIZES.format(body=body), code)
    (f,) = fs
    (c,) = fix_candidates(f, src)
    assert c.lines == (want,) and not c.safe and c.start_line == c.end_line == f.line
    fixed(src, c)


@pytest.mark.parametrize("body", [
    # the list changed between the tensor and the read
    "    sizes = [1, 2]\n    t = torch.tensor(sizes)\n    sizes.append(3)\n    return x.new_zeros(t.max().item())",
    # the tensor changed in place
    "    t = torch.tensor([p.shape[0] for p in parts])\n    t.add_(1)\n    return x.new_zeros(t.max().item())",
    # the tensor assigned twice
    "    t = torch.tensor([1, 2])\n    t = t * 2\n    return x.new_zeros(t.max().item())",
    # made from a tensor, not from Python numbers
    "    t = torch.tensor(x.shape) * x.sum()\n    return x.new_zeros(t.max().item())",
    # a reduction over one dimension
    "    t = torch.tensor([[1, 2]])\n    return x.new_zeros(t.max(0).values.item())",
    # `max` is not the builtin in the function
    "    max = torch.maximum\n    t = torch.tensor([1, 2])\n    return x.new_zeros(t.max().item())",
    # a float tensor: .item() is a float where max() of the numbers may be an int
    "    t = torch.tensor([1, 2], dtype=torch.float32)\n    return x.new_zeros(t.max().item())",
])
def test_size_from_a_tensor_that_may_differ_is_not_offered(tmp_path, body):
    src, fs = findings_in(tmp_path, SIZES.format(body=body), "PTC101")
    assert fs and all(not any("Python numbers" in c.title for c in fix_candidates(f, src)) for f in fs)


# --- PTC304 a masked write that reads through the mask --------------------------------------

@pytest.mark.parametrize("line,want", [
    # `mask = x > 0` has x's shape, and the values x[mask] fill y[mask] only where y's is too
    ("y[mask] = x[mask]", [("    y.copy_(torch.where(mask, x, y))",)]),
    # a mask of another tensor may cover only y's leading dimensions (rows): `torch.where` would
    # broadcast it against the trailing ones, so it gets y's number of dimensions first
    ("y[x > 0] += x", [("    y.copy_(torch.where((x > 0).reshape((x > 0).shape + (1,) * (y.dim() - (x > 0).dim())), "
                        "y + x, y))",)]),
    ("y[mask] /= x + 1", [("    y.copy_(torch.where(mask.reshape(mask.shape + (1,) * (y.dim() - mask.dim())), "
                           "y / (x + 1), y))",)]),
    # a mask with a call is read twice there: computed once, first
    ("y[x.sum(1) > 0] -= 1", [("    mask_ = x.sum(1) > 0",
                               "    y.copy_(torch.where(mask_.reshape(mask_.shape + (1,) * (y.dim() - mask_.dim())), "
                               "y - 1, y))")]),
    ("y[y > 0] -= 1", [("    y.copy_(torch.where(y > 0, y - 1, y))",)]),
    # the other operand only broadcasts against y (pytorch-metric-learning's `p_c[p_c <= e - s]
    # += ref_size`): y's shape still
    ("y[y <= x - 1] += 1", [("    y.copy_(torch.where(y <= x - 1, y + 1, y))",)]),
    # a test of a part of y has another shape
    ("y[y[:, 0] > 0] += 1", [("    y.copy_(torch.where((y[:, 0] > 0).reshape((y[:, 0] > 0).shape + (1,) * "
                              "(y.dim() - (y[:, 0] > 0).dim())), y + 1, y))",)]),
])
def test_masked_write_in_place_with_where(tmp_path, line, want):
    src, fs = findings_in(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x, y):
            mask = x > 0
            {line}
            return y
        """, "PTC304")
    (f,) = fs
    cands = fix_candidates(f, src)
    assert [c.lines for c in cands] == want and not any(c.safe for c in cands)
    for c in cands:
        fixed(src, c)


@pytest.mark.parametrize("line", [
    "y[mask] = x[mask > 0]",          # not the same mask
    "y[mask] = x[mask] * 2",          # the selection is not the whole value (the next recipe's)
    "y[:, mask] = x[:, mask]",        # a mask over one dimension
    "y.t()[mask] += 1",               # the written tensor is a call's result
])
def test_masked_writes_without_a_recipe(tmp_path, line):
    src, fs = findings_in(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x, y, g):
            mask = x > 0
            {line}
            return y
        """, "PTC304")
    assert fs and all(not any(c.title.startswith("write the masked values in place") for c in fix_candidates(f, src))
                      for f in fs)


# --- PTC304 a masked write of an elementwise function of masked reads --------------------------

def computed(tmp_path, body, line):
    """The candidates of the PTC304 finding on `line` of a compiled `f(x, z, y, s)` whose body
    is `body` (its first line is line 5), then `return y`."""
    body = textwrap.indent(textwrap.dedent(body).rstrip("\n") + "\n", "    ")
    src, fs = findings_in(tmp_path, f"import torch\n\n@torch.compile\ndef f(x, z, y, s):\n{body}    return y\n",
                          "PTC304")
    f = next(f for f in fs if f.line == line)
    return src, fix_candidates(f, src)


@pytest.mark.parametrize("body,line,want", [
    # e3nn's soft_unit_step: a local made by a factory just before is rebound; a mask `x > c`
    # also gets `x` with its unselected elements set to c + 1
    ("""\
     y = torch.zeros_like(x)
     m = x > 0.0
     y[m] = (-1 / x[m]).exp()
     """, 7, [("    y = torch.where(m, (-1 / torch.where(m, x, 1.0)).exp(), y)",)]),
    # an argument (another reference may see the write) is written in place; `<=` takes c - 1
    ("""\
     m = x <= -2
     y[m] = torch.log1p(x[m].abs()).clamp(max=s) * 2
     """, 6, [("    y.copy_(torch.where(m, torch.log1p(torch.where(m, x, -3).abs()).clamp(max=s) * 2, y))",)]),
    # where the value divides (or logs, roots...), only the form whose unselected elements are
    # set inside the domain first: computed as they are, they give NaN gradients
    # the same with an intermediate local (e3nn's backward): the local takes the safe input
    ("""\
     y = torch.zeros_like(x)
     m = x > 0.0
     xm = x[m]
     y[m] = (-1 / xm).exp() / xm.pow(2)
     """, 7, [("    xm = torch.where(m, x, 1.0)", "    y = torch.where(m, (-1 / xm).exp() / xm.pow(2), y)")]),
    # two tensors read through the mask, over two lines: no safe input (`z` is not the
    # comparison's tensor), continuation line kept; `y` read since it was made: in place
    ("""\
     y = torch.zeros_like(x)
     y = y + 1
     y[x != 0] = x[x != 0] * (
         z[x != 0] - 1)
     """, 7, [("    y.copy_(torch.where(x != 0, x * (", "        z - 1), y))")]),
    # a mask computed from `x` elementwise has its shape; for a call's result, 1 stands in
    ("""\
     m = x.abs() > 1e-6
     y[m] = 1 / x[m]
     """, 6, [("    y.copy_(torch.where(m, 1 / torch.where(m, x, 1), y))",)]),
    # kornia's differentiable_clipping: the comparison's other operand, a number, is read as is
    ("""\
     y[x > s] = -2 * (torch.exp(-x[x > s] + s) - 1.0) + s
     """, 5, [("    y.copy_(torch.where(x > s, -2 * (torch.exp(-x + s) - 1.0) + s, y))",)]),
    # a mask that is not a comparison of the read tensor with a number: 1 stands in
    ("""\
     m = x > z
     y[m] = torch.sqrt(x[m]) + s
     """, 6, [("    y.copy_(torch.where(m, torch.sqrt(torch.where(m, x, 1)) + s, y))",)]),
])
def test_masked_write_of_computed_values_with_where(tmp_path, body, line, want):
    src, cands = computed(tmp_path, body, line)
    assert [c.lines for c in cands] == want
    assert [c.rank for c in cands] == list(range(len(want))) and not any(c.safe for c in cands)
    assert all(set(c.guards) >= {"zero", "nan"} for c in cands)
    for c in cands:
        fixed(src, c)


@pytest.mark.parametrize("body,line", [
    ("m = x > 0\ny[m] = x[m] * z[x > 0]", 6),           # mixed masks
    ("m = x > 0\ny[m] = x[m].sum() * 2", 6),            # a reduction, not elementwise
    ("m = x > 0\ny[m] = torch.cumsum(x[m], 0)", 6),     # a scan
    ("m = x > 0\ny[m] = x[m] * x", 6),                  # `x` read without the mask: x's shape
    ("m = x > 0\ny[m] = x[m] + z[:, 0]", 6),            # a tensor of another shape
    ("m = x > 0\ny[m] = x[m] * y", 6),                  # the target read without the mask
    ("m = x[:, 0] > 0\ny[m] = x[m].exp()", 6),          # the mask has fewer dimensions than x
    ("m = x.sum(1) > 0\ny[m] = x[m].exp()", 6),
    ("m = x > 0\nxm = x[m]\ny[m] = xm.exp()\ns = xm", 6),   # the local is read again
    ("m = x > 0\nxm = x[m]\ns = 1\ny[m] = xm.exp()", 6),    # the store is not the next statement
    ("m = x > 0\ny[:, m] = x[:, m].exp()", 6),          # a mask over one dimension
    ("m = x > 0\ny[m] = x[m].exp() if s else x[m]", 6),
    ("m = x > 0\ny[m] = math.exp(x[m])", 6),            # not a torch function nor a tensor's method
    ("m = x > 0\ny[m] = x[m] * m", 6),                  # the mask read without itself
    # kornia's bessel kernels: `c` is computed from the selection (its shape, not the mask's)
    ("m = x > 0\nt = 3.75 / x[m]\nc = 0.4 + t * 0.01\ny[m] = x[m].exp() * c", 8),
])
def test_masked_writes_of_computed_values_without_a_recipe(tmp_path, body, line):
    src, cands = computed(tmp_path, body, line)
    assert not any("every element" in c.title for c in cands), [c.lines for c in cands]


def test_a_masked_write_of_computed_values_into_an_attribute(tmp_path):
    """`self.buf` is written in place and read through the mask; another attribute of `self`
    is an operand like any name."""
    src, fs = findings_in(tmp_path, """\
        import torch

        class M(torch.nn.Module):
            def forward(self, x):
                m = x > 0
                self.buf[m] = torch.sigmoid(x[m]) * self.scale - self.buf[m]
                return self.buf

        g = torch.compile(M())
        """, "PTC304")
    (f,) = fs   # `x[m]` (the rules cannot type `self.buf`)
    assert [c.lines for c in fix_candidates(f, src)] == [
        ("        self.buf.copy_(torch.where(m, torch.sigmoid(x) * self.scale - self.buf, self.buf))",)]


# --- which findings a target's line brings (pt2bot/fixes.py `gather`) ------------------------

def test_a_break_on_a_multiline_statements_first_line_gets_the_finding_below_it(tmp_path):
    """dynamo puts the break of a multi-line expression on the statement's first line; PTC201
    flags the test's line. The target still gets the finding's candidates; a compound
    statement's header does not take the findings of its body."""
    from pt2bot.fixes import gather

    src, fs = findings_in(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                y = (x + 1
                     if x.sum() > 0
                     else x - 1)
                if x.numel() > 3:
                    y = x * 2 if x.mean() > 0 else x
                return y
        """, "PTC201")
    assert sorted(f.line for f in fs) == [7, 10]

    def target(line):
        return {"kind": "break", "model": "m", "path": "m.py", "line": line, "gb_type": "GB0170"}

    proposals, why = gather([target(6), target(9)], fs, str(tmp_path), None)
    assert proposals and all(p.targets == [0] for p in proposals)
    assert why == {1: "no static finding on the line offers a fix"}


def test_a_break_without_a_finding_gets_the_recipes_of_the_rules_predicting_its_gb(tmp_path):
    """`scale` is untyped, so no rule can tell `scale == 1` is a tensor test; dynamo's GB0170
    on that line says it is. The target gets PTC201's recipes anchored where the break is; a
    GB no rule predicts (GB0092) still has no candidate."""
    from pt2bot.fixes import gather

    src, fs = findings_in(tmp_path, """\
        import torch


        def scaled(x, scale):
            if scale == 1:
                return x
            return x * scale
        """, "PTC201")
    assert fs == []

    def target(gb):
        return {"kind": "break", "model": "m", "path": "m.py", "line": 5, "gb": gb,
                "gb_type": "Data-dependent branching"}

    proposals, why = gather([target("GB0170")], fs, str(tmp_path), None)
    assert why == {}
    titles = [p.cand.title for p in proposals]
    assert "select with `torch.where` instead of branching" in titles
    where = next(p for p in proposals if "torch.where" in p.cand.title)
    assert where.cand.lines == ("    return torch.where(scale == 1, x, x * scale)",)
    assert (where.cand.start_line, where.cand.end_line) == (5, 7)
    # GB0033 is predicted too (PTC102's `.tolist()` of integers, PTC104's sizes and fill
    # values): of their recipes only the one for any break in an `if`'s test fits, the exit
    # taken in eager only; a GB no rule predicts has no candidate
    other, why = gather([target("GB0033")], fs, str(tmp_path), None)
    assert why == {}
    assert [p.cand.lines for p in other] == [
        ("    if not torch.compiler.is_compiling() and scale == 1:",)]
    _none, why = gather([target("GB0092")], fs, str(tmp_path), None)
    assert why == {0: "no static finding on the line offers a fix"}


def test_dropping_a_clamps_branch_is_compared_on_large_finite_values(tmp_path):
    """`if (h.abs() > 1e4).any(): h = h.clamp(-1e4, 1e4)` is exact without its branch; the
    candidate still asks the proof for large finite inputs, which enter the clamp. (Under
    `torch.isinf(h).any()` the branch is not dropped at all: the clamp would change finite
    values past 1e4 that head keeps.)"""
    src, fs = findings_in(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, h):
                if (h.abs() > 1e4).any():
                    h = h.clamp(-1e4, 1e4)
                return h
        """, "PTC201")
    (drop,) = [c for c in fix_candidates(fs[0], src) if c.title.startswith("drop the branch")]
    assert "large" in drop.guards


def test_where_computes_what_both_sides_share_once(tmp_path):
    """`torch.where` evaluates both sides: a call both sides make (a LoRA path with its
    dropout) is hoisted so that it runs once, as the branch ran it. A text that merely
    contains the call's text elsewhere (`ff(x)` holds `f(x)`) is not hoisted."""
    src, fs = findings_in(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, x, result, s: torch.Tensor):
                if s == 1:
                    result = result + self.b(self.a(x))
                else:
                    result = result + self.b(self.a(x)) * s
                if s > 2:
                    y = f(x) + ff(x)
                else:
                    y = f(x) * 2
                return result + y
        """, "PTC201")
    where = [c for f in fs for c in fix_candidates(f, src) if "torch.where" in c.title]
    first = next(c for c in where if c.start_line == 6)
    assert first.lines == ("        b_out = self.b(self.a(x))",
                           "        result = torch.where(s == 1, result + b_out, result + b_out * s)")
    second = next(c for c in where if c.start_line == 10)
    assert second.lines == ("        y = torch.where(s > 2, f(x) + ff(x), f(x) * 2)",)
    src, fs = findings_in(tmp_path, """\
        import torch


        class M(torch.nn.Module):
            def forward(self, xs, s: torch.Tensor):
                if s == 1:
                    y = torch.stack([g(v) + 1 for v in xs])
                else:
                    y = torch.stack([g(v) * s for v in xs])
                return y
        """, "PTC201")
    (comp,) = [c for f in fs for c in fix_candidates(f, src) if "torch.where" in c.title]
    assert len(comp.lines) == 1     # `g(v)` reads the comprehension's `v`: not hoisted


def test_stand_in_findings_for_a_one_line_statement_inside_a_block(tmp_path):
    """The break's line is looked up at its first character: a one-line statement in a
    loop's body, not the loop around it."""
    from pt2bot.fixes import break_findings

    src = textwrap.dedent("""\
        import torch


        def f(x, s):
            for _ in range(2):
                x = x if s == 1 else x * 2
            return x
        """)
    t = {"kind": "break", "path": "m.py", "line": 6, "gb": "GB0170"}
    got = break_findings(t, src, {})
    assert {f.rule for f in got} == {"PTC201"} and len(got) > 1
    assert any(c.lines == ("        x = torch.where(s == 1, x, x * 2)",)
               for f in got for c in fix_candidates(f, src))


def test_masked_write_through_the_files_own_function(tmp_path):
    """Liger's GRPO loss: `per_token_loss[m] = sapo_loss_fn(coef_1[m], t)` with a module-level
    function of the file. Nothing static shows it elementwise, so the edit is offered after
    the others, says so, and the proof decides; a function of another module (or a builtin)
    gets none."""
    src, fs = findings_in(tmp_path, """\
        import torch

        def gate(r, t):
            return torch.sigmoid(t * (r - 1.0)) * 4.0 / t

        @torch.compile
        def f(coef_1, adv, t):
            loss = torch.empty_like(coef_1)
            m = adv > 0
            loss[m] = gate(coef_1[m], t)
            loss[~m] = gate(
                coef_1[~m], -t
            )
            return loss
        """, "PTC304")
    by_line = {f.line: fix_candidates(f, src) for f in fs}
    (first,), (second,) = by_line[10], by_line[12]
    # `m` tests `adv`, whose shape may be coef_1's leading dimensions only (an advantage per
    # sequence): the mask is given coef_1's number of dimensions
    assert first.lines == ("    loss = torch.where(m.reshape(m.shape + (1,) * (loss.dim() - m.dim())), "
                           "gate(coef_1, t), loss)",)
    assert second.lines == ("    loss.copy_(torch.where((~m).reshape((~m).shape + (1,) * (loss.dim() - (~m).dim())), gate(",
                            "        coef_1, -t", "    ), loss))")
    for c in (first, second):
        assert c.rank == 2 and c.title.endswith("(assuming `gate` elementwise, which the proof checks)")
        fixed(src, c)
    for other in ("import math\n", "from helpers import gate\n"):
        text = src.replace("def gate(r, t):\n    return torch.sigmoid(t * (r - 1.0)) * 4.0 / t\n", "")
        text = text.replace("import torch\n", "import torch\n" + other, 1)
        (tmp_path / "sub").mkdir(exist_ok=True)
        s2, fs2 = findings_in(tmp_path / "sub", text, "PTC304")
        assert fs2 and not [c for f in fs2 for c in fix_candidates(f, s2)], other


@pytest.mark.parametrize("call,want", [
    ("torch.jit.isinstance(x, torch.Tensor)", "isinstance(x, torch.Tensor)"),
    ("torch.jit.isinstance(x, (int, float))", "isinstance(x, (int, float))"),
])
def test_torch_jit_isinstance_becomes_the_builtin(tmp_path, call, want):
    src, f, cands = only(tmp_path, f"""\
        import torch

        @torch.compile
        def f(x):
            assert {call}, "x must be a tensor"
            return x + 1
        """, "PTC111")
    [c] = cands
    assert c.lines == (f'    assert {want}, "x must be a tensor"',) and not c.safe
    fixed(src, c)


@pytest.mark.parametrize("text", [
    # a typing form: what torch.jit.isinstance refines and the builtin rejects
    "    if torch.jit.isinstance(x, List[str]):\n        x = []\n",
    "    if torch.jit.isinstance(x, Optional[torch.Tensor]):\n        x = x\n",
    # the file's own `isinstance`
    "    isinstance = print\n    if torch.jit.isinstance(x, torch.Tensor):\n        x = x\n",
    # fork / wait: two statements
    "    fut = torch.jit.fork(torch.relu, x)\n    x = torch.jit.wait(fut)\n",
])
def test_torch_jit_calls_without_an_edit(tmp_path, text):
    src = ("from typing import List, Optional\nimport torch\n\n@torch.compile\ndef f(x):\n"
           + text + "    return x\n")
    _src, fs = findings_in(tmp_path, src, "PTC111")
    assert fs and not [c for f in fs for c in fix_candidates(f, src)]


def test_numpy_unique_of_a_python_list_becomes_sorted_set(tmp_path):
    """makani's pressure levels: the distinct values of a list of strings through numpy, read
    back with `.tolist()` (PTC102's finding; numpy breaks, GB0087). `sorted(set(...))` is the
    same sorted list of distinct values, and dynamo folds it."""
    src, fs = findings_in(tmp_path, """\
        import numpy as np
        import torch

        class Net(torch.nn.Module):
            def forward(self, x):
                levels = np.unique([v[1:] for v in self.names]).tolist()
                other = np.unique(x.numpy()).tolist()
                return x * len(levels) + len(other)

        net = torch.compile(Net())
        """, "PTC102")
    by_line = {f.line: [c for c in fix_candidates(f, src) if "numpy" in c.title] for f in fs}
    [c] = by_line[6]
    assert c.lines == ("        levels = sorted(set([v[1:] for v in self.names]))",) and not c.safe
    fixed(src, c)
    assert not by_line.get(7)      # an array's values: not a Python list


@pytest.mark.parametrize("line,plain,detached", [
    ("    return x * t.abs().max().item()\n", "    return x * t.abs().max()\n",
     "    return x * t.abs().max().detach()\n"),
    ("    return x * float((t).sum() + (t).mean())\n", "    return x * ((t).sum() + (t).mean())\n",
     "    return x * ((t).sum() + (t).mean()).detach()\n"),
    # not bracketed by the recipe: its first and last characters are two brackets' ends
    ("    s = float((t).sum() + (t).mean())\n    return x * s\n", "    s = (t).sum() + (t).mean()\n",
     "    s = ((t).sum() + (t).mean()).detach()\n"),
])
def test_a_kept_tensor_has_a_detached_variant(tmp_path, line, plain, detached):
    """`.item()` and `float(t)` cut the gradient: the kept tensor's second form detaches the
    whole expression the number was (`(a) + (b)` bracketed as one, not `(b)` alone)."""
    src = "import torch\n\n@torch.compile\ndef f(x, t: torch.Tensor):\n" + line
    code = "PTC101" if ".item()" in line else "PTC104"
    _src, fs = findings_in(tmp_path, src, code)
    cands = [c for f in fs for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]
    [c] = cands
    assert c.lines[0] + "\n" == plain
    [d] = c.variants
    assert d.lines[0] + "\n" == detached and d.rank == 1 and not d.safe
    fixed(src, d)


@pytest.mark.parametrize("body,callees", [
    # tntorch's rounding: the error bound read with `.item()`, then handed to its SVD
    ("    delta = (eps * torch.norm(x))\n    delta = delta.item()\n    return tn.truncated_svd(x, delta=delta)\n",
     "`tn.truncated_svd`"),
    ("    d = x.sum().item()\n    y = helper(x, d)\n    return self.scale(y, d) * d\n", "`helper`, `self.scale`"),
])
def test_a_number_passed_on_is_kept_detached(tmp_path, body, callees):
    """A number only passed on to the project's own functions (and used in arithmetic) may
    stay a tensor, detached as `.item()` left it: whether the callee takes one only the proof
    can show, so the edit is not safe and names the callees."""
    src = "import torch\nimport tntorch as tn\n\n@torch.compile\ndef f(self, x, eps):\n" + body
    _src, fs = findings_in(tmp_path, src, "PTC101")
    [c] = [c for f in fs for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]
    line = next(l for l in body.splitlines() if ".item()" in l)
    assert c.lines == (line.replace(".item()", ".detach().reshape(())"),) and not c.safe and c.rank == 0
    assert c.title.endswith(f"0-d as the number was: `{line.split('=')[0].strip()}` is passed on to {callees}, "
                            "which the proof runs with the tensor"), c.title
    assert not c.variants
    fixed(src, c)


@pytest.mark.parametrize("body", [
    "    d = x.sum().item()\n    return torch.zeros(d)\n",              # a size to torch
    "    d = x.sum().item()\n    return np.full(3, d)\n",               # numpy
    "    d = x.sum().item()\n    return x.view(d, -1)\n",               # a method of a tensor
    "    d = x.sum().item()\n    return round(d)\n",                    # a builtin
    "    d = x.sum().item()\n    return helper(x)[d]\n",                # an index
    "    d = x.sum().item()\n    return helper(x, d) if d > 0 else x\n",  # a condition too
    "    d = int(x.sum().item())\n    return helper(x, d)\n",           # an int: likely a size
    "    d = x.sum().tolist()\n    return helper(x, d)\n",              # a list, not a tensor
    "    d = x.sum().item()\n    return helper(x, f'{d}')\n",           # a message
])
def test_a_number_passed_on_where_it_needs_one_is_kept(tmp_path, body):
    src = "import numpy as np\nimport torch\n\n@torch.compile\ndef f(x):\n" + body
    _src, fs = findings_in(tmp_path, src, "PTC101" if ".item()" in body else "PTC102")
    assert fs and not [c for f in fs for c in fix_candidates(f, src) if c.title.startswith("keep the tensor")]


def test_a_safe_edit_is_tried_before_the_others(tmp_path):
    """nystrom-attention with a NaN guard and a debug `print` added, reviewed as a new user
    would: the branch's edit came first, its proof (inductor compile included) ran past the
    300 s budget, and the `print`'s guard, safe by construction, was never tried although it
    came later in the file only. The safe edit goes first, whatever its place and rank."""
    from pt2bot.fixes import gather, order

    text = """\
        import torch


        class M(torch.nn.Module):
            def forward(self, x):
                if torch.isnan(x).any():
                    x = torch.nan_to_num(x)
                print("input", x.shape)
                return x
        """
    fs = [f for code in ("PTC201", "PTC105") for f in findings_in(tmp_path, text, code)[1]]
    assert sorted((f.line, f.rule) for f in fs) == [(6, "PTC201"), (8, "PTC105")]

    def target(line, gb):
        return {"kind": "break", "model": "m", "path": "m.py", "line": line, "gb": gb,
                "gb_type": "x"}

    proposals, _why = gather([target(6, "GB0170"), target(8, "GB0059")], fs, str(tmp_path),
                             None)
    tried = order(proposals)
    assert tried[0].cand.safe and tried[0].cand.start_line == 8
    assert [p.cand.safe for p in tried] == sorted((p.cand.safe for p in tried), reverse=True)
    assert [p.cid for p in tried] == [f"c{k}" for k in range(len(tried))]


@pytest.mark.parametrize("test,offered_drop", [
    ("not torch.isfinite(h).all()", True),     # some value NaN or inf: nan_to_num is a no-op else
    ("not h.isfinite().all()", True),
    ("not torch.isnan(h).any()", False),       # runs where no value is NaN: dropping it would not
    ("torch.isnan(h).any()", False),           # lets an inf through, which nan_to_num replaces
    ("torch.isinf(h).any()", False),           # lets a NaN through
    ("not (h > 10).any()", False),
])
def test_the_branch_dropped_under_not_only_for_the_finite_idiom(tmp_path, test, offered_drop):
    src = f"import torch\n\n@torch.compile\ndef f(h):\n    if {test}:\n        h = torch.nan_to_num(h)\n    return h\n"
    _src, fs = findings_in(tmp_path, src, "PTC201")
    titles = [c.title for f in fs for c in fix_candidates(f, src)]
    assert fs and ("drop the branch: the guarded statement leaves other values unchanged" in titles) == offered_drop


def test_int_of_an_item_gets_no_long_of_the_python_number():
    """torchkge's sampler, `randint(..., (int(mask1.sum().item()) - n,))`: the `int()` recipe
    made `mask1.sum().item().long()`, which raises AttributeError ('float' object has no
    attribute 'long'). The `.item()` recipe drops both; the `int()` one offers nothing there."""
    from proofs import break_target, offered

    src = textwrap.dedent("""\
        import torch
        from torch import nn


        class M(nn.Module):
            def forward(self, x, mask1):
                n = torch.randint(1, 9, (int(mask1.sum().item()) - 2,))
                return x[:1] + n.sum()
        """)
    got = [(c.code, c.lines) for c in offered(break_target("m", "m.py", 7, "GB0124", "item"), src)]
    assert got == [("PTC101", ("        n = torch.randint(1, 9, (mask1.sum().long() - 2,))",))]


def test_a_mask_defined_above_the_block_of_its_write_is_read(tmp_path):
    """nflows' spline: `outside_interval_mask = ~inside_interval_mask`, both above the `if
    tails == "linear":` whose block writes `outputs[outside_interval_mask] =
    inputs[outside_interval_mask]`; the mask tests `inputs`, so the plain form."""
    src, fs = findings_in(tmp_path, """\
        import torch

        @torch.compile
        def f(inputs, tails):
            inside_interval_mask = (inputs >= -1.0) & (inputs <= 1.0)
            outside_interval_mask = ~inside_interval_mask
            outputs = torch.zeros_like(inputs)
            if tails == "linear":
                outputs[outside_interval_mask] = inputs[outside_interval_mask]
            return outputs
        """, "PTC304")
    (c,) = [c for f in fs if f.line == 9 for c in fix_candidates(f, src)]
    assert c.lines == ("        outputs.copy_(torch.where(outside_interval_mask, inputs, outputs))",)
