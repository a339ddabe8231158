"""The proof of one candidate (pt2bot/smoke/verify.py `prove_candidate`), in this process, on
a module written to a temporary package.

Lines: only the function that holds the edit is swapped for its patched text, so a break in
another function of the same file keeps head's line number in the patched run even when the
edit changes the number of lines; it is the same break, not a new one.

Backend: a candidate the eager-backend proof accepts is also run once under the configured
backend (`backend_check`): a backend that generates code may compute the rewritten form
differently from eager.

The mismatching backend here is a real dynamo backend registered for the test: it returns
each graph's outputs shifted whenever the graph calls `torch.where`, as a code generator with
a wrong `where` kernel would. Head's code has no `where` and matches; the rewrite has one, so
its outputs differ under that backend although they equal head's in eager.
"""
from __future__ import annotations

import sys

import pytest

from pt2bot.rules import Candidate, apply_candidate
from pt2bot.smoke.inputs import CaseInputs
from pt2bot.smoke.location import RepoPaths
from pt2bot.smoke.patch import Edit
from pt2bot.smoke.trace import TraceCollector
from pt2bot.smoke.inputs import remember_state, start_call
from pt2bot.smoke.verify import A_CASE_WOULD, backend_check, judge, measure_state, prove_candidate

torch = pytest.importorskip("torch")

SKEW = "pt2bot_test_where_skew"

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h + 1
"""
BRANCH = 12   # the `if` on a tensor value (GB0170)


def _where_skew(gm, example_inputs):
    if not any(n.op == "call_function" and n.target is torch.where for n in gm.graph.nodes):
        return gm.forward

    def run(*args):
        out = gm.forward(*args)
        return tuple(o + 0.5 if isinstance(o, torch.Tensor) else o for o in out) \
            if isinstance(out, (tuple, list)) else out + 0.5
    return run


@pytest.fixture(scope="module", autouse=True)
def skew_backend():
    from torch._dynamo.backends.registry import _COMPILER_FNS, register_backend

    register_backend(_where_skew, name=SKEW)
    yield
    _COMPILER_FNS.pop(SKEW, None)


def _load(tmp_path, monkeypatch, text: str):
    pkg = tmp_path / "bpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "net.py").write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m == "bpkg" or m.startswith("bpkg.")]:
        monkeypatch.delitem(sys.modules, name)   # each test imports its own copy
    import bpkg.net
    return bpkg.net.Net(), RepoPaths(str(tmp_path))


class Proof:
    """Head measured once (break pass, eager backend, one shape case) and any number of
    candidate edits of `bpkg/net.py` proven against it, in this process."""

    def __init__(self, tmp_path, monkeypatch, text: str, phases=("breaks",)):
        self.text = text
        self.phases = list(phases)
        self.model, self.paths = _load(tmp_path, monkeypatch, text)
        torch.manual_seed(0)
        # the shape matrix needs a second case
        self.cases = [CaseInputs(shape={"batch": b}, args=(torch.randn(b, 4),), kwargs={})
                      for b in ((2, 3) if "matrix" in self.phases else (2,))]
        self.case = self.cases[0]
        self.head_outs = []
        remember_state(self.model)   # as the proof worker does once the model is built
        for case in self.cases:
            with torch.no_grad():
                start_call(self.model)
                self.head_outs.append(self.model(*case.args))
        self.head_out = self.head_outs[0]
        self.head = measure_state(self.model, self.cases, self.head_outs, {}, {}, self.paths,
                                  self.phases)

    def prove(self, start: int, end: int, line: str | tuple[str, ...], guards=(),
              backend: str = "eager", safe: bool = False, gb: str = "GB0170",
              at: int | None = None, limit: float | None = None, guard_cache: dict | None = None) -> dict:
        lines = (line,) if isinstance(line, str) else tuple(line)
        cand = Candidate(code="PTC201", path="bpkg/net.py", start_line=start, end_line=end,
                         lines=lines, title="t", safe=safe)
        target = {"kind": "break", "path": "bpkg/net.py", "line": at or start, "gb": gb,
                  "gb_type": "Data-dependent branching" if gb == "GB0170" else ""}
        return prove_candidate(
            {"path": cand.path, "start_line": start, "end_line": end, "lines": list(lines),
             "original": self.text, "patched": apply_candidate(self.text, cand),
             "guards": list(guards), "safe": safe, "targets": [target]},
            self.model, self.cases, self.head_outs, self.head, {}, {"backend": backend},
            self.paths, self.phases, limit, {} if guard_cache is None else guard_cache)


LATER = NET.replace("if h.sum() > 0:\n            h = h * 2\n        return h + 1\n",
                    "if torch.isnan(h).any():\n            h = torch.nan_to_num(h)\n"
                    "        return later(h)\n") + """

def later(h):
    print("h", h.shape)
    return h + 1
"""


def test_a_break_past_the_swapped_function_keeps_its_line(tmp_path, monkeypatch):
    """The edit turns two lines into one; `later`'s print break stays at line 18 in the
    patched run (only `Net.forward` is recompiled), and must not count as a new break."""
    proof = Proof(tmp_path, monkeypatch, LATER)
    assert sorted(b["line"] for b in proof.head["breaks"]) == [12, 18]
    verdict = proof.prove(12, 13, "        h = torch.nan_to_num(h)", guards=["nan"])
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0170 gone")


SKIPPED = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])

    def forward(self, x):
        for lin in self.layers:
            x = lin(x)
            if torch.isinf(x).any():
                x = x.clamp(-1e4, 1e4)
        print("x", x.shape)
        return x + 1
"""


def test_a_break_in_code_head_never_compiled_is_uncovered_not_new(tmp_path, monkeypatch):
    """A break in a loop makes dynamo skip the whole frame, so head records nothing for the
    print after the loop. Once the fix lets the loop compile, the print breaks: that break
    was there all along, in code head ran uncompiled. The fix is verified, and says so."""
    proof = Proof(tmp_path, monkeypatch, SKIPPED)
    assert [b["line"] for b in proof.head["breaks"]] == [13]
    assert proof.head["eager_frames"] and proof.head["eager_frames"][0]["function"] == "forward"
    verdict = proof.prove(
        13, 14, "            x = torch.where(torch.isinf(x).any(), x.clamp(-1e4, 1e4), x)")
    assert verdict["accepted"] is True, verdict
    assert "uncovers GB0059 at bpkg/net.py:14 (code head ran uncompiled" in verdict["evidence"]


CLAMPED = NET.replace("if h.sum() > 0:\n            h = h * 2",
                      "if torch.isinf(h).any():\n            h = h.clamp(-10.0, 10.0)")


def test_a_dropped_branch_that_clamps_finite_values_is_refused(tmp_path, monkeypatch):
    """Equal on ordinary inputs and with inf injected (both clamp then); with 1e6 in `x` the
    head leaves the finite values alone and the candidate clamps them."""
    proof = Proof(tmp_path, monkeypatch, CLAMPED)
    drop = "        h = h.clamp(-10.0, 10.0)"
    alone = proof.prove(BRANCH, BRANCH + 1, drop, guards=["inf"])
    assert alone["accepted"] is True, alone           # what the inf guard alone could see
    verdict = proof.prove(BRANCH, BRANCH + 1, drop, guards=["inf", "large"])
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith(
        "differs from head on an input with large finite values (1e6) in `x`")


EXIT = NET.replace("        if h.sum() > 0:\n            h = h * 2\n",
                   "        for _ in range(2):\n            if (h.abs() > 100).any():\n"
                   "                break\n            h = h * 2\n")
EAGER_EXIT = "            if not torch.compiler.is_compiling() and (h.abs() > 100).any():"


def test_an_eager_only_exit_no_shape_case_takes_is_refused_before_any_compile(tmp_path, monkeypatch):
    """Nothing in the shape cases reaches 100: no compiled run could compare running on with
    breaking out on the model's own inputs, whatever the guard inputs do (1e6 takes the exit),
    so the proof stops after head's eager runs told it, before the break pass."""
    proof = Proof(tmp_path, monkeypatch, EXIT)
    for guards in (["zero"], ["large"]):
        verdict = proof.prove(BRANCH + 1, BRANCH + 1, EAGER_EXIT, guards=guards)
        assert verdict["reason"] == (f"no shape case takes the early exit at line {BRANCH + 2}, so "
                                     "compiled code not taking it was never compared with head on "
                                     "the model's own inputs" + A_CASE_WOULD), verdict
        assert "graph_count" not in verdict   # no compile ran


def test_an_eager_only_exit_no_guard_input_takes_is_refused_where_the_shape_cases_take_it():
    """The shape cases take the exit, but zeros injected do not: the compiled guard run
    compared code that took no exit on either side, which says nothing about the edit."""
    edit = Edit.in_text("bpkg/net.py", BRANCH + 1, BRANCH + 1, 1, EXIT)
    cand = {"exit": BRANCH + 2, "reached": [{"batch": 2}],
            "outputs": [{"shape": {"batch": 2}, "match": True}],
            "accuracy": [{"shape": {"batch": 2}, "match": True}],
            "guards": [{"kind": "zero", "hit": True, "match": True, "reached": False, "compiled": True}]}
    assert judge({}, cand, [], edit)["reason"] == (
        "no guard input takes the early exit, so what compiled code does instead was never run")


def _early_return(test: str, work: str) -> str:
    """NET with its branch moved into a function of its own: `if <test>: return h`, else
    `return <work>`."""
    return NET.replace("""        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h + 1
""", f"""        return skip(self.lin(x)) + 1


def skip(h):
    if {test}:
        return h
    return {work}
""")


RETURN = 15   # `if <test>:` in `skip`; its `return h` is the next line
# flipping the columns changes nothing on a constant row (all +1 injected), and changes the
# model's own values
MIRRORED = _early_return("(h > 0).all()", "h.flip(-1)")
# a clamp at 100 changes nothing on the model's own values, which take the exit
CAPPED = _early_return("(h.abs() < 100).all()", "h.clamp(-100, 100)")


def _eager_only_return(text: str) -> str:
    line = text.splitlines()[RETURN - 1]
    assert line.startswith("    if ") and text.splitlines()[RETURN] == "        return h"
    return _eager_only(line)


def test_an_eager_only_exit_only_an_injected_input_takes_is_refused(tmp_path, monkeypatch):
    """All +1 injected (an empty mask's guard input) takes the exit, and there compiled code,
    which runs on and flips a constant row, equals head. None of the model's own values take
    it: no compiled run compared not taking the exit with taking it on values that mean
    anything, where the flip is anything but a no-op."""
    proof = Proof(tmp_path, monkeypatch, MIRRORED, phases=("breaks", "matrix"))
    with torch.no_grad():
        assert not any(bool((proof.model.lin(c.args[0]) > 0).all()) for c in proof.cases)
    verdict = proof.prove(RETURN, RETURN, _eager_only_return(MIRRORED), guards=["empty"])
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"] == (f"no shape case takes the early exit at line {RETURN + 1}, so "
                                 "compiled code not taking it was never compared with head on "
                                 "the model's own inputs" + A_CASE_WOULD), verdict


def test_an_eager_only_exit_the_shape_cases_take_is_verified_by_their_compiled_runs(
        tmp_path, monkeypatch):
    """Head returns early on both shape cases; the matrix's compiled runs, where
    `is_compiling()` is true, run on into the clamp and still equal head's eager outputs."""
    proof = Proof(tmp_path, monkeypatch, CAPPED, phases=("breaks", "matrix"))
    verdict = proof.prove(RETURN, RETURN, _eager_only_return(CAPPED), guards=["zero"])
    assert verdict["accepted"] is True, verdict
    assert ("compiled code runs on past the early exit and still equals head's eager outputs on "
            "the 2 shape cases and inputs with zeros, where head takes it") in verdict["evidence"], \
        verdict["evidence"]


def test_an_eager_only_exit_is_refused_without_the_shape_matrix(tmp_path, monkeypatch):
    """One shape case, so no shape matrix: the shape case takes the exit, but nothing ran it
    compiled (the compiled guard run on zeros alone is an injected input)."""
    proof = Proof(tmp_path, monkeypatch, CAPPED)
    verdict = proof.prove(RETURN, RETURN, _eager_only_return(CAPPED), guards=["zero"])
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"] == (f"1 shape case takes the early exit at line {RETURN + 1}, but "
                                 "the shape matrix did not run, so compiled code not taking it "
                                 "was never compared with head on the model's own inputs"), verdict
    assert "graph_count" not in verdict   # known before any compile: none ran


def test_lines_past_the_swapped_function_do_not_move():
    edit = Edit.in_text("p.py", 12, 13, 1, LATER)
    assert edit.scope_end == 14
    assert [edit.map_line(n) for n in (11, 12, 13, 14, 18)] == [11, None, None, 13, 18]
    assert Edit("p.py", 12, 13, 1).map_line(18) == 17      # no scope: the rest of the file


WHERE = "        h = torch.where(h.sum() > 0, h * 2, h)"


@pytest.fixture()
def net(tmp_path, monkeypatch):
    return Proof(tmp_path, monkeypatch, NET)


def _prove(proof: Proof, backend: str, safe: bool = False) -> dict:
    return proof.prove(BRANCH, BRANCH + 1, WHERE, backend=backend, safe=safe)


def test_a_rewrite_that_differs_under_the_configured_backend_is_rejected(net):
    assert _prove(net, "eager")["accepted"] is True
    verdict = _prove(net, SKEW)
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith(
        f"outputs differ from head's eager outputs under {SKEW} (")


def test_a_candidate_safe_by_construction_is_not_compiled_again(net):
    """Safe means eager-identical by construction (a print kept in eager only): the graph's
    operations are head's, so the backend has nothing new to compute differently."""
    verdict = _prove(net, SKEW, safe=True)
    assert verdict["accepted"] is True
    assert "under" not in verdict["evidence"]


def test_an_accepted_rewrite_says_it_was_compared_under_inductor(net):
    verdict = _prove(net, "inductor")
    assert verdict["accepted"] is True, verdict
    assert "outputs equal on 1 shape case" in verdict["evidence"]
    assert verdict["evidence"].endswith(", equal under inductor on 1 case")


def test_backend_check_skips_the_backends_that_run_eagers_kernels(net):
    model, paths, case, out = net.model, net.paths, net.case, net.head_out
    assert backend_check(model, case, out, paths, {"backend": "aot_eager"}, None) is None
    row = backend_check(model, case, out, paths, {"backend": "no_such_backend"}, None)
    assert row["match"] is False and "no_such_backend" in row["message"]


HEAD = {"graph_count": 2, "phase_errors": {},
        "breaks": [{"gb": "GB0170", "gb_type": "Data-dependent branching", "path": "p.py",
                    "line": 12}]}
CAND = {"graph_count": 1, "phase_errors": {}, "breaks": [],
        "outputs": [{"shape": {"batch": 2}, "match": True}]}
TARGET = {"kind": "break", "path": "p.py", "line": 12, "gb": "GB0170"}
EDIT = Edit(path="p.py", start_line=12, end_line=13, new_lines=1)


@pytest.mark.parametrize("row, verdict", [
    ({"backend": "inductor", "match": True}, (True, "equal under inductor on 1 case")),
    ({"backend": "inductor", "match": False, "max_abs_err": 0.5, "head_match": True},
     (False, "outputs differ from head's eager outputs under inductor (max abs error 0.5)")),
    ({"backend": "inductor", "match": False, "max_abs_err": 0.5, "head_match": False},
     (True, "not compared under inductor: head's own outputs differ there")),
])
def test_judge_reads_the_backend_row(row, verdict):
    got = judge(HEAD, {**CAND, "backend": row}, [TARGET], EDIT)
    accepted, text = verdict
    assert got["accepted"] is accepted
    assert text in (got["evidence"] if accepted else got["reason"])


CHECK = NET.replace("if h.sum() > 0:\n            h = h * 2",
                    "if (h < -100).any():\n            raise ValueError('h below -100')")
KEPT = ("        if torch.compiler.is_compiling():",
        "            torch._assert_async(~(h < -100).any(), 'h below -100')",
        "        elif (h < -100).any():",
        "            raise ValueError('h below -100')")


def _compiles(proof, guards) -> tuple[dict, int]:
    """The verdict on keeping CHECK's check in compiled code, and how many frames dynamo
    started to compile while proving it (its structured trace's `dynamo_start` events)."""
    with TraceCollector() as trace:
        verdict = proof.prove(BRANCH, BRANCH + 1, KEPT, guards=guards)
    return verdict, sum(1 for _ in trace.of_kind("dynamo_start"))


def test_the_compiled_guard_runs_share_one_compile(tmp_path, monkeypatch):
    """An edit that asks `is_compiling()` is run compiled on every guard input: "invalid" puts
    five values into `x` (-1, 0, 1e3, 1e6, NaN), "large" one (1e6). The compiled model is
    compiled once for all of them, so the five cost no more compiles than the one."""
    proof = Proof(tmp_path, monkeypatch, CHECK)
    one, n_one = _compiles(proof, ["large"])
    five, n_five = _compiles(proof, ["invalid"])
    assert one["accepted"] is True and five["accepted"] is True, (one, five)
    assert "eager and compiled" in five["evidence"]
    assert n_five == n_one


def test_a_candidate_the_break_pass_refuses_stops_before_the_guard_inputs(tmp_path, monkeypatch):
    """`if h.sum() >= 0.0 and h.sum() > 0:` gives head's outputs and still branches on a tensor:
    the break pass refuses it, so its guard inputs (zeros and an empty mask, for the `> 0` it
    replaces) never run: they could only refuse it again."""
    proof = Proof(tmp_path, monkeypatch, NET)
    verdict = proof.prove(BRANCH, BRANCH, "        if h.sum() >= 0.0 and h.sum() > 0:")
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith("GB0170 still breaks the graph at bpkg/net.py:12"), verdict
    assert verdict["guards"] == [] and verdict["cases"] == 1
    kept = proof.prove(BRANCH, BRANCH + 1, "        h = torch.where(h.sum() > 0, h * 2, h)")
    assert kept["accepted"] is True and "zero" in kept["guards"], kept


def _state(model, paths, phases, proceed=None) -> tuple[dict, int]:
    """measure_state on two batch sizes of NET, and the frames dynamo started to compile."""
    torch.manual_seed(0)
    cases = [CaseInputs(shape={"batch": b}, args=(torch.randn(b, 4),), kwargs={})
             for b in (2, 3)]
    with torch.no_grad():
        outs = [model(*c.args) for c in cases]
    with TraceCollector() as trace:
        got = measure_state(model, cases, outs, {}, {"backend": "eager"}, paths, phases,
                            **({"proceed": proceed} if proceed else {}))
    return got, sum(1 for _ in trace.of_kind("dynamo_start"))


def test_the_break_pass_is_the_matrixs_first_compile_with_the_same_facts(tmp_path, monkeypatch):
    """With the eager backend and no dim marked dynamic the break pass and the matrix's first
    case compile alike: the proof compiles that case once for both, and reads the same facts
    as the two passes apart give (the break pass alone, then the matrix alone)."""
    model, paths = _load(tmp_path, monkeypatch, NET)
    both, n_both = _state(model, paths, ["breaks", "matrix"])
    breaks, n_breaks = _state(model, paths, ["breaks"])
    matrix, n_matrix = _state(model, paths, ["matrix"])
    assert both == {**breaks, **matrix, "phase_errors": {}}
    assert both["breaks"] and both["breaks"][0]["gb"] == "GB0170"
    assert both["recompiles"]["cases"][1]["shape"] == {"batch": 3}
    assert n_both == n_matrix < n_breaks + n_matrix


def test_the_matrix_stops_after_the_first_case_when_the_break_pass_refuses(tmp_path, monkeypatch):
    """`proceed` false after the break facts: no other shape case is compiled, and no
    recompile figure is reported (the judge's break facts refuse first)."""
    model, paths = _load(tmp_path, monkeypatch, NET)
    seen = []
    stopped, n_stopped = _state(model, paths, ["breaks", "matrix"],
                                lambda state: seen.append(state) or False)
    full, n_full = _state(model, paths, ["breaks", "matrix"])
    assert seen and seen[0]["breaks"] == full["breaks"]
    assert "recompiles" not in stopped and stopped["breaks"] == full["breaks"]
    assert n_stopped < n_full


ABOVE = NET.replace("if h.sum() > 0:\n            h = h * 2",
                    "if (h > 100).any():\n            raise ValueError('h above 100')")
EAGER_ONLY = ("        if not torch.compiler.is_compiling() and (h > 100).any():",
           "            raise ValueError('h above 100')")


def test_a_check_deleted_under_compile_is_refused_on_a_later_guard_input(tmp_path, monkeypatch):
    """Head raises only on the larger values (1e3, 1e6 in `x`), which come after -1 and 0: the
    compiled runs on those reuse the compile the first inputs made, and still show that the
    patched code no longer raises under compile."""
    proof = Proof(tmp_path, monkeypatch, ABOVE)
    with torch.no_grad():   # the first guard inputs (-1, then 0) do not reach the raise
        assert not any((proof.model.lin(torch.full((2, 4), v)) > 100).any() for v in (-1.0, 0.0))
        assert (proof.model.lin(torch.full((2, 4), 1e3)) > 100).any()
    with TraceCollector() as trace:
        verdict = proof.prove(BRANCH, BRANCH + 1, EAGER_ONLY, guards=["invalid"])
    assert verdict["accepted"] is False
    assert "compiled, where `is_compiling()` is true" in verdict["reason"], verdict
    kept = ("        if torch.compiler.is_compiling():",
            "            torch._assert_async(~(h > 100).any(), 'h above 100')",
            "        elif (h > 100).any():",
            "            raise ValueError('h above 100')")
    with TraceCollector() as kept_trace:
        right = proof.prove(BRANCH, BRANCH + 1, kept, guards=["invalid"])
    assert right["accepted"] is True, right
    starts = [sum(1 for _ in t.of_kind("dynamo_start")) for t in (trace, kept_trace)]
    # one compile for all the guard inputs, on each side; the refused one compiles head's own
    # code once more, on the inputs where the patched code differs (is the difference head's?)
    assert starts[0] == starts[1] + 1


# a block of work that changes nothing: trailing columns known to be zero are cut off before a
# sum (the shape cases enter it: the zeros are always there); and one that changes the result
BLOCKS = NET.replace("""        if h.sum() > 0:
            h = h * 2
        return h + 1
""", """        z = torch.cat([h, torch.zeros_like(h)], dim=-1)
        zero = (z == 0).all(0)
        if zero.any():
            k = torch.where(zero)[0][0].item()
            z = z[:, :k]
        if (h > 0).any():
            h = h * 2
        if (h.abs() > 1e5).any():
            h = h.clamp(-1e5, 1e5)
        if (h.abs() > 1e6).any():
            h = h / 2
        return h + z.sum(-1, keepdim=True)
""")
CUT, DOUBLE, CLAMP, HALVE = 14, 17, 19, 21


def _eager_only(line: str) -> str:
    return line.replace("if ", "if not torch.compiler.is_compiling() and ", 1)


@pytest.fixture()
def blocks(tmp_path, monkeypatch):
    return Proof(tmp_path, monkeypatch, BLOCKS, phases=("breaks", "matrix"))


def test_a_block_skipped_under_compile_that_changes_nothing_is_verified(blocks):
    """Eager runs the edited code exactly as head; only compiled runs skip the block. The shape
    cases enter it (head's eager run reaches its first line), so the matrix's compiled
    outputs, compared with eager ones, are the comparison with head."""
    line = BLOCKS.splitlines()[CUT - 1]
    assert line.strip() == "if zero.any():"
    verdict = blocks.prove(CUT, CUT, _eager_only(line), guards=["empty"])
    assert verdict["accepted"] is True, verdict
    assert ("compiled code skips the block and still equals head's eager outputs on the 2 shape "
            "cases") in verdict["evidence"], verdict["evidence"]


def test_a_block_whose_work_matters_is_refused_by_the_compiled_shape_cases(blocks):
    """`h * 2` under a test the shape cases pass: eager is head's own code, so only the
    compiled run of the matrix shows the difference."""
    line = BLOCKS.splitlines()[DOUBLE - 1]
    verdict = blocks.prove(DOUBLE, DOUBLE, _eager_only(line), guards=["empty"])
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith("compiled outputs differ from eager ones on shape case "
                                        "batch=2"), verdict


def test_a_block_no_shape_case_enters_is_refused(blocks):
    """Nothing in the shape cases reaches 1e5: no compiled run compared skipping the clamp
    with running it on the model's own inputs (an injected input alone would not do either:
    it may be one on which the work does nothing, zeros through an image augmentation). 1e6
    injected enters it, and there the clamp matters."""
    line = BLOCKS.splitlines()[CLAMP - 1]
    never = blocks.prove(CLAMP, CLAMP, _eager_only(line), guards=["zero"])
    assert never["accepted"] is False
    assert never["reason"] == (f"no shape case enters the block at line {CLAMP + 1}, so compiled "
                               "code skipping it was never compared with head on the model's own "
                               "inputs" + A_CASE_WOULD), never
    large = blocks.prove(CLAMP, CLAMP, _eager_only(line), guards=["large"])
    assert large["accepted"] is False
    assert large["reason"] == never["reason"], large


def _always(line: str) -> str:
    return line.replace("if ", "if torch.compiler.is_compiling() or ", 1)


def test_a_block_run_always_under_compile_that_changes_nothing_is_verified(blocks):
    """The clamp to 1e5 is the identity on the shape cases, which never enter it: compiled
    code runs it anyway, and the matrix's compiled outputs, compared with the eager ones
    (head's: eager still reads the test), show that it changes nothing there."""
    line = BLOCKS.splitlines()[CLAMP - 1]
    verdict = blocks.prove(CLAMP, CLAMP, _always(line))
    assert verdict["accepted"] is True, verdict
    assert ("compiled code runs the block and still equals head's eager outputs on the 2 shape "
            "cases, where head skips it") in verdict["evidence"], verdict["evidence"]


def test_a_block_run_always_whose_work_matters_is_refused(blocks):
    """Halving where no value reaches 1e6: eager never runs it, compiled code always does."""
    line = BLOCKS.splitlines()[HALVE - 1]
    verdict = blocks.prove(HALVE, HALVE, _always(line))
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith("compiled outputs differ from eager ones on shape case "
                                        "batch=2"), verdict


def test_a_block_run_always_that_every_shape_case_enters_is_refused(blocks):
    """Every shape case has a positive value, so head runs `h * 2` on each: compiled code
    running it always was never compared with head where head skips it."""
    line = BLOCKS.splitlines()[DOUBLE - 1]
    verdict = blocks.prove(DOUBLE, DOUBLE, _always(line))
    assert verdict["accepted"] is False
    assert verdict["reason"] == (f"no shape case skips the block at line {DOUBLE + 1}, so compiled "
                                 "code running it was never compared with head on the model's own "
                                 "inputs" + A_CASE_WOULD), verdict


CACHE = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.register_buffer("cached", torch.arange(8.0)[:, None] * torch.ones(4), persistent=False)
        self.register_buffer("cached_len", torch.tensor(8), persistent=False)

    def table(self, x):
        n = x.shape[0]
        if n <= self.cached_len.item():
            return self.cached[:n].detach()
        return torch.arange(float(n))[:, None] * torch.ones(4)

    def forward(self, x):
        return self.lin(x) + self.table(x)
"""
READ = 14   # the `if` whose test reads the cached length (`.item()`, GB0124)


@pytest.mark.parametrize("cached, decorated, accepted", [
    ("torch.arange(8.0)", False, True), ("torch.zeros(8)", False, False),
    # behind a decorator of torch's (rotary-embedding-torch's `@autocast('cuda', enabled=False)`):
    # whether the exit is taken is still seen in the function's own file
    ("torch.arange(8.0)", True, True)])
def test_a_cache_read_in_eager_only_is_verified_where_the_cache_holds_what_a_miss_computes(
        tmp_path, monkeypatch, cached, decorated, accepted):
    """Every shape case reads the cache; compiled code, which never does, computes the table
    instead: the same values where the cache holds them, not where it holds something else."""
    text = CACHE.replace("torch.arange(8.0)[:, None]", f"{cached}[:, None]")
    read = READ
    if decorated:
        text = text.replace("    def table(", "    @torch.autocast('cpu', enabled=False)\n    def table(")
        read += 1
    proof = Proof(tmp_path, monkeypatch, text, phases=("breaks", "matrix"))
    line = text.splitlines()[read - 1].replace("if ", "if not torch.compiler.is_compiling() and ", 1)
    verdict = proof.prove(read, read, line, gb="GB0124")
    assert verdict["accepted"] is accepted, verdict
    if accepted:
        assert "compiled code runs on past the early exit and still equals head's eager outputs on " \
               "the 2 shape cases" in verdict["evidence"], verdict["evidence"]
    else:
        assert verdict["reason"].startswith("compiled outputs differ from eager ones"), verdict


def test_an_eager_only_exit_edited_on_a_later_line_of_its_test_is_still_one(tmp_path, monkeypatch):
    """The edit may put `not torch.compiler.is_compiling() and` on the second line of a test
    over two: it is still an exit compiled code never takes, and where no shape case takes it
    (an empty cache) nothing compared compiled code with head there."""
    text = CACHE.replace("torch.tensor(8)", "torch.tensor(0)").replace(
        "        if n <= self.cached_len.item():\n",
        "        if (n > 0 and\n                n <= self.cached_len.item()):\n")
    proof = Proof(tmp_path, monkeypatch, text, phases=("breaks", "matrix"))
    line = text.splitlines()[READ].replace("n <= ", "not torch.compiler.is_compiling() and n <= ", 1)
    verdict = proof.prove(READ + 1, READ + 1, line, gb="GB0124")
    assert verdict["accepted"] is False
    assert verdict["reason"] == (f"no shape case takes the early exit at line {READ + 2}, so compiled "
                                 "code not taking it was never compared with head on the model's own "
                                 "inputs" + A_CASE_WOULD), verdict


# a running normalizer (FastTD3's): every call updates the count and the mean, and the output
# is centred with the updated mean
RUNNING = NET.replace("""        self.lin = nn.Linear(4, 4)
""", """        self.lin = nn.Linear(4, 4)
        self.register_buffer("count", torch.zeros(()))
        self.register_buffer("mean", torch.zeros(4))
""").replace("""        if h.sum() > 0:
            h = h * 2
        return h + 1
""", """        n = self.count + h.shape[0]
        self.mean += (h.mean(0) - self.mean) * h.shape[0] / n
        self.count.copy_(n)
        if (h.abs() > 1e4).any():
            h = h.clamp(-1e4, 1e4)
        return h - self.mean
""")
GUARD = 17   # the `if` on a tensor value (GB0170)


@pytest.mark.parametrize("mean", ["torch.zeros(4)", "torch.zeros(1, 4)[0]"])   # a view too
def test_a_model_that_updates_its_buffers_on_every_call_is_compared_from_its_built_state(
        tmp_path, monkeypatch, mean):
    """The branch dropped is the same clamp on ordinary values; head's outputs were taken
    first, and the candidate runs after head's break pass and shape matrix have updated the
    running mean again and again. Every run starts from the buffers as built, so the
    candidate's outputs are compared with head's from the same state."""
    text = RUNNING.replace('"mean", torch.zeros(4)', f'"mean", {mean}')
    proof = Proof(tmp_path, monkeypatch, text, phases=("breaks", "matrix"))
    assert text.splitlines()[GUARD - 1].strip() == "if (h.abs() > 1e4).any():"
    verdict = proof.prove(GUARD, GUARD + 1, "        h = h.clamp(-1e4, 1e4)")
    assert verdict["accepted"] is True, verdict
    assert all(r["match"] for r in proof.head["accuracy"]), proof.head["accuracy"]


# (the layer's output shifted by -1: with the weights all 0 it is -1, not 0, where the square
# root the safe form computes and does not select would have an infinite derivative)
ROOT_OF = NET.replace("if h.sum() > 0:\n            h = h * 2", "if (h > 0).all():\n            h = h.sqrt()").replace(
    "h = self.lin(x)\n", "h = self.lin(x) - 1\n")


def test_a_rewrite_equal_forward_but_nan_in_backward_is_refused(tmp_path, monkeypatch):
    """`torch.where(c, h.sqrt(), h)` selects `h` where some `h < 0`, as head does in the forward
    pass; in backward the unselected `sqrt`'s NaN reaches the weights' gradients (0 times NaN).
    Training on that code would diverge, so it is no fix. Computing the square root on the
    selected values only (`h.clamp_min(0).sqrt()` under the same `where`) is."""
    proof = Proof(tmp_path, monkeypatch, ROOT_OF)
    nan = proof.prove(BRANCH, BRANCH + 1, "        h = torch.where((h > 0).all(), h.sqrt(), h)")
    assert nan["accepted"] is False
    assert nan["reason"] == ("the parameters' gradients differ from head's on shape case batch=2 "
                             "(NaN where head's are finite)"), nan
    safe = proof.prove(BRANCH, BRANCH + 1,
                       "        h = torch.where((h > 0).all(), h.clamp_min(0).sqrt(), h)")
    # (no input of this model has every `h` positive: the square root, written otherwise than
    # head's, was never compared where it is selected, so it is not verified here either)
    assert safe["accepted"] is False and safe.get("unexercised"), safe
    assert safe["reason"].startswith(f"no shape case or guard input enters the block at line {BRANCH + 1}")
    assert "gradients equal on shape case batch=2" in safe["evidence"]


SCALED = NET.replace("h = self.lin(x)\n        if h.sum() > 0:\n            h = h * 2\n        return h + 1\n",
                     "scale = x.abs().max().item()\n        return self.lin(x / scale)\n")
ITEM = 11   # `scale = x.abs().max().item()` (GB0124)


def test_a_kept_tensor_that_lets_a_gradient_reach_the_input_is_refused(tmp_path, monkeypatch):
    """`.item()` cut the gradient at the scale; the kept tensor lets one through to `x`. The
    weights never see it (their gradient depends on the scale's value only, which is the
    same), so only the inputs' gradients tell, and the detached form is what head computes."""
    proof = Proof(tmp_path, monkeypatch, SCALED)
    plain = proof.prove(ITEM, ITEM, "        scale = x.abs().max()", gb="GB0124")
    assert plain["accepted"] is False, plain
    assert plain["reason"].startswith("the inputs' gradients differ from head's on shape case batch=2"), plain
    detached = proof.prove(ITEM, ITEM, "        scale = x.abs().max().detach()", gb="GB0124")
    assert detached["accepted"] is True, detached
    assert "gradients equal on shape case batch=2" in detached["evidence"]


# a write into the input that leaves its values as they are, refused on a leaf that requires grad
INPLACE = ROOT_OF.replace("h = self.lin(x)", "x.clamp_(-1e9, 1e9)\n        h = self.lin(x)")


def test_a_model_that_writes_into_its_input_has_its_parameters_gradients_compared(tmp_path, monkeypatch):
    """An input that requires grad cannot be written in place: such a model's inputs are left
    as they are, and its weights' gradients still tell a NaN in backward."""
    proof = Proof(tmp_path, monkeypatch, INPLACE)
    nan = proof.prove(BRANCH + 1, BRANCH + 2, "        h = torch.where((h > 0).all(), h.sqrt(), h)")
    assert nan["accepted"] is False
    assert nan["reason"] == ("the parameters' gradients differ from head's on shape case batch=2 "
                             "(NaN where head's are finite)"), nan


# a masked write through the file's own functions (Liger's `sapo_loss_fn`), one elementwise and
# one that normalises over what it is given; and a TorchScript type check (GB0007)
OWN = NET.replace("""class Net(nn.Module):""", """def gate(r, t):
    return torch.sigmoid(t * (r - 1.0)) / t


def share(v):
    return v / v.abs().sum()


class Net(nn.Module):""").replace("""        if h.sum() > 0:
            h = h * 2
        return h + 1
""", """        y = torch.zeros_like(h)
        m = h > 0
        y[m] = gate(h[m], 2.0)
        z = torch.zeros_like(h)
        z[m] = share(h[m])
        assert torch.jit.isinstance(h, torch.Tensor), "h must be a tensor"
        return y + z
""")
GATE, SHARE, JIT = 22, 24, 25


def test_a_masked_write_through_a_function_is_verified_only_where_it_is_elementwise(tmp_path, monkeypatch):
    """Nothing static tells `gate` (elementwise) from `share` (a share of the selected values'
    total): the proof does. Over every element, `share` divides by another total."""
    proof = Proof(tmp_path, monkeypatch, OWN)
    assert [ln.strip() for ln in OWN.splitlines()[GATE - 1:JIT]] == [
        "y[m] = gate(h[m], 2.0)", "z = torch.zeros_like(h)", "z[m] = share(h[m])",
        'assert torch.jit.isinstance(h, torch.Tensor), "h must be a tensor"']
    gate = proof.prove(GATE, GATE, "        y = torch.where(m, gate(h, 2.0), y)", guards=["empty"], gb="GB0036")
    assert gate["accepted"] is True, gate
    share = proof.prove(SHARE, SHARE, "        z = torch.where(m, share(h), z)", guards=["empty"], gb="GB0036")
    assert share["accepted"] is False
    assert share["reason"].startswith("outputs differ from head's on shape case batch=2"), share
    jit = proof.prove(JIT, JIT, '        assert isinstance(h, torch.Tensor), "h must be a tensor"', gb="GB0007")
    assert jit["accepted"] is True, jit
    assert jit["evidence"].startswith("GB0007 gone"), jit


# nanoGPT's trial: the `.item()` in the loop makes dynamo skip `forward` whole; once it is kept
# a tensor, `forward` compiles and the PR's other break, the `if` below the loop, shows (code
# head ran uncompiled). Its resume frame recompiles once when the batch first changes, as any
# frame does: that follows from the uncovered break, not from the fix.
HIDDEN = NET.replace("""        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h + 1
""", """        h = self.lin(x)
        for _ in range(2):
            s = h.abs().max().item()
            h = h / (s + 1)
        if h.sum() > 1e9:
            h = h * 0
        return h + 1
""")
LOOP_ITEM = 13


def test_a_recompile_of_the_frame_after_an_uncovered_break_is_not_held_against_the_fix(tmp_path, monkeypatch):
    proof = Proof(tmp_path, monkeypatch, HIDDEN, phases=("breaks", "matrix"))
    verdict = proof.prove(LOOP_ITEM, LOOP_ITEM, "            s = h.abs().max().detach()", gb="GB0124")
    assert verdict["accepted"] is True, verdict
    assert f"uncovers GB0170 at bpkg/net.py:{LOOP_ITEM + 2}" in verdict["evidence"], verdict
    assert f"`forward` from line {LOOP_ITEM + 2}, which head ran uncompiled" in verdict["evidence"], verdict


# mixup's PuzzleMix: the block index kept a tensor, the slice it bounds breaks in the same loop,
# so `forward` still runs in eager: right, and said not to compile yet
SLICED = NET.replace("""        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        return h + 1
""", """        h = self.lin(x)
        for _ in range(2):
            k = h.abs().argmax().item() % 3
            end = k + 1
            h = h + h[:, k:end]
        return h + 1
""")
SLICE_ITEM = 13
assert SLICED.splitlines()[SLICE_ITEM - 1].strip() == "k = h.abs().argmax().item() % 3"


def test_an_edit_whose_frame_stays_eager_says_so(tmp_path, monkeypatch):
    proof = Proof(tmp_path, monkeypatch, SLICED, phases=("breaks", "matrix"))
    verdict = proof.prove(SLICE_ITEM, SLICE_ITEM, "            k = h.abs().argmax() % 3", gb="GB0124")
    assert verdict["accepted"] is True, verdict
    assert "uncovers" in verdict["evidence"], verdict
    assert ("but dynamo still runs `forward`, which holds the edit, in eager: the break it uncovers is "
            "in the same frame, so no more of it compiles until that is fixed too") in verdict["evidence"], verdict


SETTLE = NET.replace("        if h.sum() > 0:\n            h = h * 2\n        return h + 1\n",
                     "        return settle(h) + 1\n") + """

def settle(h):
    s = float(h.abs().sum())
    while s > 1e6:
        s = s / 2
    if torch.isinf(h).any():
        h = torch.nan_to_num(h)
    return h
"""


def test_a_guard_input_head_never_finishes_on_is_blamed_on_head(tmp_path, monkeypatch):
    """inf injected into `settle`'s `h` makes head's own loop run forever (inf halved is inf):
    the candidate runs out of its time there, and the reason says it was head's run, not the
    patched model, that did not finish."""
    proof = Proof(tmp_path, monkeypatch, SETTLE)
    start = SETTLE.splitlines().index("    if torch.isinf(h).any():") + 1
    # (the limit leaves the steps before the guard inputs time to finish on a loaded machine:
    # they take under a second alone, and 3 s ran out before head's run began under load)
    verdict = proof.prove(start, start + 1, "    h = torch.nan_to_num(h)", guards=("inf",), limit=10,
                          at=start)
    assert verdict["accepted"] is False
    assert verdict["reason"].startswith("head's own run with inf injected did not finish in the "
                                        "candidate's time"), verdict


def test_a_guard_input_head_never_finished_on_is_not_run_again_for_the_next_candidate(tmp_path, monkeypatch):
    """The next candidate of the same function is refused for the same reason without waiting
    out its own time on head's endless run again (a solver that never ends on a zero radius
    cost four candidates a minute each)."""
    proof = Proof(tmp_path, monkeypatch, SETTLE)
    start = SETTLE.splitlines().index("    if torch.isinf(h).any():") + 1
    cache: dict = {}
    first = proof.prove(start, start + 1, "    h = torch.nan_to_num(h)", guards=("inf",), limit=10, at=start,
                        guard_cache=cache)
    assert first["reason"].startswith("head's own run with inf injected did not finish"), first
    second = proof.prove(start, start + 1, "    h = torch.nan_to_num(h, posinf=0.0)", guards=("inf",), limit=20,
                         at=start, guard_cache=cache)
    assert second["accepted"] is False
    assert second["reason"] == ("head's own run with inf injected did not finish in the candidate's time (no "
                                "result within 10 s, for an earlier candidate)"), second


NAN_GUARD = NET.replace("        if h.sum() > 0:\n            h = h * 2\n",
                        "        if torch.isnan(h).any():\n            h = torch.nan_to_num(h, nan=0.5)\n")


def test_a_selection_of_heads_expression_says_the_guard_input_that_entered_its_block(tmp_path, monkeypatch):
    """No shape case has a NaN, the injected one enters the block: held-out batch 39's user
    read "entered by no shape case ... which no input of the proof compared", then "equal
    ... with NaN injected", as a contradiction."""
    proof = Proof(tmp_path, monkeypatch, NAN_GUARD)
    got = proof.prove(BRANCH, BRANCH + 1,
                      "        h = torch.where(torch.isnan(h).any(), torch.nan_to_num(h, nan=0.5), h)",
                      guards=("nan",))
    assert got["accepted"] is True, got
    assert f"the block at line {BRANCH + 1} entered by no shape case, by head on inputs with NaN" in got["evidence"], \
        got["evidence"]
    assert "which no input of the proof compared" not in got["evidence"]


LOOP = NET.replace("        if h.sum() > 0:\n            h = h * 2\n        return h + 1\n",
                   "        for _ in range(4):\n            h = h.clamp(-100, 100)\n"
                   "            if (h.abs() < 100).all():\n                break\n        return h + 1\n")
LOOP_IF = 14


def test_an_eager_only_break_says_first_that_compiled_code_runs_the_loop_to_its_end(tmp_path, monkeypatch):
    """Held-out batch 40's adaptive computation time: the verified `break` in eager only ran
    every ponder step to its limit compiled, 11.7x head's time a call; the evidence said only
    that the outputs were equal."""
    assert LOOP.splitlines()[LOOP_IF - 1].strip() == "if (h.abs() < 100).all():"
    proof = Proof(tmp_path, monkeypatch, LOOP, phases=("breaks", "matrix"))
    line = "            if not torch.compiler.is_compiling() and (h.abs() < 100).all():"
    verdict = proof.prove(LOOP_IF, LOOP_IF, line, guards=["zero"])
    assert verdict["accepted"] is True, verdict
    assert verdict["caveats"][0].startswith("compiled code runs the loop to its end where head's eager run "
                                            "breaks out of it"), verdict
