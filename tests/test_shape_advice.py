"""Dynamic-shape specs: the bounds a user declares in pt2bot.yml, and the shape advice the
smoke run derives and verifies per model (real torch, eager backend, tiny models in
tests/fixtures/models/shape_advice.py)."""
from __future__ import annotations

from typing import Any

import pytest

from test_worker import line_of, spec

pytestmark = pytest.mark.torch

GPT_INPUTS = [{"shape": ["batch", "seq"], "dtype": "int64", "high": 32}]


def run_model(entry: str, *, phases: Any = ("export",), **kw: Any) -> dict:
    from pt2bot.smoke.worker import measure
    return measure(spec(entry.rsplit(":", 1)[1], entry, phases=phases, **kw))


# --------------------------------------------------------------------------- declared bounds

def test_context_length_exports_once_its_bound_is_declared() -> None:
    """An LLM that checks its context length (`assert t <= self.block_size`) fails export
    with the default Dim (up to 2^20) and exports once pt2bot.yml declares `seq: {max: 64}`."""
    kw = dict(inputs=GPT_INPUTS, shapes={"batch": [2, 3], "seq": [8, 32]},
              dynamic=("batch", "seq"))
    unbounded = run_model("models.shape_advice:TinyGPT", **kw)["export"]
    assert unbounded["ok"] is False and unbounded["kind"] == "constraint_violation"
    assert (unbounded["path"], unbounded["line"]) == (
        "models/shape_advice.py", line_of("shape_advice.py", "block-size"))
    bounded = run_model("models.shape_advice:TinyGPT",
                        bounds={"seq": {"min": None, "max": 64, "multiple_of": None}}, **kw)
    ex = bounded["export"]
    assert ex["ok"] is True and ex["static_dims"] == []
    # the matrix marks seq with the bound (mark_dynamic max=64) and compiles once
    matrix = run_model("models.shape_advice:TinyGPT", phases=("matrix",),
                       bounds={"seq": {"min": None, "max": 64, "multiple_of": None}}, **kw)
    assert [c["compiled"] for c in matrix["recompiles"]["cases"]] == [True, False, False, False]
    assert "error" not in matrix["recompiles"]["cases"][0] and matrix["specialized"] == []
    assert [c["match"] for c in ex["cases"]] == [True] * 4


def test_declared_divisibility_exports_as_a_multiple_of_a_dim() -> None:
    """`multiple_of: 2` becomes `2*Dim`: a model that needs an even length exports."""
    kw = dict(inputs=[{"shape": ["batch", "seq", 4]}], shapes={"batch": [2], "seq": [8, 16]},
              dynamic=("seq",))
    assert run_model("models.shape_advice:PairPool", **kw)["export"]["ok"] is False
    ex = run_model("models.shape_advice:PairPool",
                   bounds={"seq": {"min": None, "max": None, "multiple_of": 2}}, **kw)["export"]
    assert ex["ok"] is True and [c["match"] for c in ex["cases"]] == [True, True]


# --------------------------------------------------------------------------- the advice

def test_the_advice_phase_runs_by_default_and_can_be_switched_off() -> None:
    from pt2bot.configfile import parse_config
    from pt2bot.smoke.runner import default_phases

    assert "advice" in default_phases(parse_config("version: 1\n", "pt2bot.yml"))
    off = parse_config("version: 1\nrun: {shape_advice: false, latency: false}\n", "pt2bot.yml")
    assert default_phases(off) == ["breaks", "matrix", "export"]


_ADVICE: dict[str, dict] = {}


def advised(entry: str, **kw: Any) -> dict:
    """The RUN of the matrix and advice phases, once per model and test process."""
    key = entry + repr(sorted(kw.items()))
    if key not in _ADVICE:
        _ADVICE[key] = run_model(entry, phases=("matrix", "advice"), **kw)
    run = _ADVICE[key]
    assert run["status"] == "ok" and run["phase_errors"] == [], run["phase_errors"]
    return run


def gpt() -> dict:
    return advised("models.shape_advice:TinyGPT", inputs=GPT_INPUTS,
                   shapes={"batch": [2, 3], "seq": [8, 16, 32]}, dynamic=())


def test_context_length_advice_is_a_bounded_dim_that_exports_and_compiles_once() -> None:
    a = gpt()["shape_advice"]
    assert a["export"]["ok"] is True
    assert a["export"]["dynamic_shapes"] == {"idx": {
        "0": {"name": "batch", "min": None, "max": None, "multiple_of": None},
        "1": {"name": "seq", "min": None, "max": 64, "multiple_of": None}}}
    assert a["export"]["suggested"] == ["seq = Dim('seq', max=64)"]
    assert [c["match"] for c in a["export"]["cases"]] == [True] * 6
    c = a["compile"]
    assert c["method"] == "mark_dynamic"
    # automatic dynamic: static first, then a recompile per dim that changes
    assert (c["compiles_before"], c["compiles_after"]) == (3, 1)
    assert gpt()["recompiles"]["compiles"] == 3    # "before" is the matrix phase's own count


def test_advised_code_is_paste_ready_python_and_config() -> None:
    """The Python exports the model as advised; the YAML lines are a valid `dynamic:`."""
    import torch

    from pt2bot.configfile import parse_config
    from pymodule import load_module

    code = gpt()["shape_advice"]["code"]
    mod = load_module(f"{__import__('test_worker').MODELS}/shape_advice.py", "advice_code")
    model = mod.TinyGPT().eval()
    idx = torch.randint(0, 32, (3, 24))
    scope = {"torch": torch, "model": model, "args": (), "kwargs": {"idx": idx}}
    exec(code["python"], scope)   # noqa: S102 - the advice's own output, on our fixture
    ep = scope["ep"]
    out = ep.module()(idx=idx)
    assert torch.allclose(out, model(idx))
    text = ("version: 1\nmodels:\n  - name: gpt\n    entry: m:TinyGPT\n"
            "    inputs: [{shape: [batch, seq], dtype: int64}]\n"
            "    shapes: {batch: [2, 3], seq: [8, 16, 32]}\n"
            + "\n".join("    " + line for line in code["yaml"].splitlines()) + "\n")
    (m,) = parse_config(text, "pt2bot.yml").models
    assert m.dynamic == ("batch", "seq") and m.bounds["seq"].max == 64
    assert code["compile"].splitlines() == ["torch._dynamo.mark_dynamic(idx, 0)",
                                            "torch._dynamo.mark_dynamic(idx, 1, min=2, max=64)  # min: "
                                            "mark_dynamic refuses a max without one; 2 is the least size "
                                            "it keeps symbolic",
                                            "compiled = torch.compile(model)"]


def test_a_min_only_the_compile_snippet_has_is_said_why() -> None:
    """Export takes a `Dim` with a max and no min; `mark_dynamic` refuses that, so the compile
    snippet has a min of 2 the `Dim` beside it lacks. Said where it appears: two ranges for one
    dim, unexplained, read as a mistake (whisper's `Dim('seq', max=16)` beside
    `mark_dynamic(tokens, 1, min=2, max=16)`)."""
    from pt2bot.smoke.advice import advice_code

    code = advice_code({"tokens": {"0": {"name": "batch", "min": None, "max": None},
                                   "1": {"name": "seq", "min": None, "max": 16}}}, "mark_dynamic")
    assert "seq = Dim('seq', max=16)" in code["python"].splitlines()
    assert code["compile"].splitlines() == [
        "torch._dynamo.mark_dynamic(tokens, 0)",
        "torch._dynamo.mark_dynamic(tokens, 1, min=2, max=16)  # min: mark_dynamic refuses a max "
        "without one; 2 is the least size it keeps symbolic",
        "compiled = torch.compile(model)"]


def test_divisibility_is_advised_as_a_multiple_and_compiled_with_dynamic_true() -> None:
    a = advised("models.shape_advice:PairPool", inputs=[{"shape": ["batch", "seq", 4]}],
                shapes={"batch": [2, 3], "seq": [8, 16]}, dynamic=())["shape_advice"]
    assert a["export"]["ok"] is True
    assert a["export"]["dynamic_shapes"]["x"]["1"] == {
        "name": "seq", "min": 2, "max": None, "multiple_of": 2}
    # mark_dynamic cannot say "even": dynamic=True is the setting that compiles once
    assert a["compile"]["method"] == "dynamic=True"
    assert (a["compile"]["compiles_before"], a["compile"]["compiles_after"]) == (3, 1)
    assert "seq = 2 * _seq" in a["code"]["python"]
    assert "  seq: {min: 2, multiple_of: 2}" in a["code"]["yaml"].splitlines()


def test_a_multiple_torch_suggests_that_the_model_does_not_need_is_said_to_be_torchs() -> None:
    """DETR's DC5 advice was "width: multiple of 16", `width = 16 * _width` as the code to
    paste: torch's fix for guards a `Dim` cannot prove, which every width from 17 meets.
    Exported with `Dim.AUTO`, the program takes widths from 17 with no multiple."""
    from pt2bot.report.shape_advice import dim_line

    a = advised("models.shape_advice:StridedAttention", inputs=[{"shape": ["batch", 3, 32, "width"]}],
                shapes={"batch": [2], "width": [64, 96]}, dynamic=())["shape_advice"]
    assert a["export"]["ok"] is True
    assert a["export"]["suggested"][-1] == "width = 16*_width"
    entry = a["export"]["dynamic_shapes"]["x"]["3"]
    assert entry["multiple_of"] == 16 and entry["auto"] == {
        "took": [17, 63], "min": 17, "refused": True, "cases": 2}, entry
    assert "width = Dim.AUTO  # not 16*_width: exported with AUTO, the program needs no multiple " \
        "(it ran width = 17 and 63)" in a["code"]["python"]
    assert "dynamic_shapes = {'x': {3: width}}" in a["code"]["python"]
    assert "  width: {min: 16, multiple_of: 16}  # the multiple is for pt2bot's own export, which takes a Dim; the " \
        "model needs none (Dim.AUTO)" in a["code"]["yaml"].splitlines()
    assert "width a multiple of 16 is torch's suggested fix for guards a `Dim` cannot prove, not what the " \
        "model needs: with `Dim.AUTO` for width the program exports with no multiple, runs width = 17 and " \
        "63 (no multiples of 16) and 2 of the matrix's cases equal to eager, and refuses 16" in a["notes"]
    assert "not the model's need: `Dim.AUTO` exports it with none (ran 17, 63)" in dim_line("x", "3", entry)
    # the snippet is what it says: exported as written, widths 17 and 50 run equal to eager
    import torch
    from torch.export import Dim

    from models.shape_advice import StridedAttention
    torch.manual_seed(0)
    m = StridedAttention().eval()
    ep = torch.export.export(m, (torch.randn(2, 3, 32, 64),), dynamic_shapes={"x": {3: Dim.AUTO}})
    for w in (17, 50):
        x = torch.randn(2, 3, 32, w)
        torch.testing.assert_close(ep.module()(x), m(x))


def test_a_pinned_dim_is_static_with_the_line_that_pins_it() -> None:
    a = advised("models.shape_advice:FourRows", inputs=[{"shape": ["batch", "seq"]}],
                shapes={"batch": [4], "seq": [8, 16, 32]}, dynamic=("batch",))["shape_advice"]
    batch = a["export"]["dynamic_shapes"]["x"]["0"]
    assert batch["static"] is True and batch["value"] == 4
    assert (batch["path"], batch["line"]) == ("models/shape_advice.py",
                                              line_of("shape_advice.py", "four-rows"))
    assert batch["reason"] == "the code specialises batch to 4"
    assert a["export"]["dynamic_shapes"]["x"]["1"]["name"] == "seq"
    assert a["export"]["ok"] is True and a["compile"]["compiles_after"] == 1


def test_a_model_whose_dims_are_all_pinned_is_a_stated_result() -> None:
    a = advised("models.shape_advice:OnlyFour", inputs=[{"shape": ["batch", "seq"]}],
                shapes={"batch": [4, 5], "seq": [8, 9]}, dynamic=())["shape_advice"]
    line = line_of("shape_advice.py", "only-four")
    dims = a["export"]["dynamic_shapes"]["x"]
    assert [(d["static"], d["line"]) for d in dims.values()] == [(True, line), (True, line)]
    assert "no dim can be dynamic: the code pins every one of them" in a["notes"]
    assert a["compile"]["method"] is None and a["compile"]["compiles_after"] is None


def test_a_pinned_dim_every_new_size_compiles_again_says_the_recompile_limit() -> None:
    """A CRF tagger's loop over the padded length: "cannot be dynamic" was true, and what it
    means for training was not said: each new longest length compiles again, and past the
    recompile limit the frame runs eagerly."""
    from pt2bot.report.shape_advice import dim_line

    a = advised("models.shape_advice:StepLoop", inputs=[{"shape": ["batch", "seq"]}],
                shapes={"batch": [2], "seq": [4, 5, 6]}, dynamic=())["shape_advice"]
    seq = a["export"]["dynamic_shapes"]["x"]["1"]
    assert seq["static"] is True and seq["per_size"] == {"sizes": 3, "recompiled": 2, "limit": 8}, seq
    assert (seq["path"], seq["line"]) == ("models/shape_advice.py", line_of("shape_advice.py", "step-loop"))
    assert dim_line("x", "1", seq).endswith(
        "; each new size compiles again (2 recompiles on it over the matrix's 3 sizes): past 8 sizes "
        "(`recompile_limit`) dynamo runs this code eagerly, so pad inputs to a few fixed sizes")
    from pt2bot.testing import format_shape_advice
    assert ("each new size compiles again (2 recompiles over 3 sizes): past 8 sizes dynamo runs this "
            "code eagerly") in format_shape_advice(a)
    # two sizes say nothing of the third: automatic dynamic recompiles once, then holds
    a = advised("models.shape_advice:StepLoop", inputs=[{"shape": ["batch", "seq"]}],
                shapes={"batch": [2], "seq": [4, 5]}, dynamic=())["shape_advice"]
    assert a["export"]["dynamic_shapes"]["x"]["1"]["static"] is True
    assert "per_size" not in a["export"]["dynamic_shapes"]["x"]["1"]
    # one size of a pinned dim says nothing of the next
    a = advised("models.shape_advice:FourRows", inputs=[{"shape": ["batch", "seq"]}],
                shapes={"batch": [4], "seq": [8, 16]}, dynamic=("batch",))["shape_advice"]
    assert "per_size" not in a["export"]["dynamic_shapes"]["x"]["0"]


def test_a_dim_that_cannot_be_one_range_names_the_branch() -> None:
    a = advised("models.size_branch:SizeBranch", shapes={"batch": [2, 4, 8, 16]},
                dynamic=())["shape_advice"]
    batch = a["export"]["dynamic_shapes"]["x"]["0"]
    assert batch["max"] == 4 and batch["not_one_range"]["sizes"] == [8, 16]
    assert (batch["not_one_range"]["path"], batch["not_one_range"]["line"]) == (
        "models/size_branch.py", line_of("size_branch.py", "size-branch"))


def test_a_dim_the_exported_program_guards_to_the_example_is_static() -> None:
    """Export accepts height and width as multiples of 8, yet the program it gives guards both
    to the example's values (a Python float made from the size): a new user's DINO got "the
    advised `dynamic_shapes` exports" and a spec the program refused on 6 of 8 cases. Such a
    dim is pinned and the model exported again: batch stays dynamic, and every case at the
    static sizes runs."""
    advice = advised("models.shape_advice:PosResize", inputs=[{"shape": ["batch", 3, "height", "width"]}],
                     shapes={"batch": [2, 4], "height": [16, 32], "width": [16, 32]},
                     dynamic=())["shape_advice"]
    a = advice["export"]
    assert a["ok"] is True, a
    spec = a["dynamic_shapes"]["x"]
    assert spec["0"] == {"name": "batch", "min": None, "max": None, "multiple_of": None}
    # (the example is the first case whose sizes differ: height 16, width 32)
    for ax, d, size in (("2", "height", 16), ("3", "width", 32)):
        assert spec[ax]["static"] is True and spec[ax]["value"] == size, spec
        assert spec[ax]["reason"].startswith("the exported program guards `(0.1 + torch.sym_float("), spec
        assert spec[ax]["reason"].endswith(f"which holds only for {d} = {size}"), spec
        # placed where the export added that guard (it read "unlocated" beside the code)
        assert (spec[ax]["path"], spec[ax]["line"]) == (
            "models/shape_advice.py", line_of("shape_advice.py", "pos-resize")), spec
    ran = [c for c in a["cases"] if (c["shape"]["height"], c["shape"]["width"]) == (16, 32)]
    assert len(ran) == 2 and all(c["match"] for c in ran), a["cases"]
    assert not any("holds" in n for n in advice["notes"]), advice["notes"]


def test_a_declared_dim_no_argument_carries_is_said_so() -> None:
    """An input factory's list of crops (DINO's multi-crop wrapper): `batch` is declared
    dynamic and varies, but no axis found carries it (the cases hold no dims), so nothing is
    marked; the note said "no dim varies in the shape matrix and none is declared dynamic"."""
    import torch

    from pt2bot.smoke.advice import derive_export
    from pt2bot.smoke.inputs import CaseInputs

    cases = [CaseInputs({"batch": b}, ([torch.zeros(b, 3), torch.zeros(b, 3)],), {}, {}, ("x",))
             for b in (2, 4)]
    res = derive_export(None, cases, [], {"dynamic": ["batch"]}, None, None)
    assert res["notes"] == [
        "batch varies in the shape matrix or is declared dynamic, but no tensor argument of "
        "forward, nor one inside a list, tuple or dict argument, has it on an axis pt2bot can "
        "mark (one whose size equals it in every case): nothing was made dynamic"]


def test_a_matrix_with_one_size_per_dim_is_a_stated_result() -> None:
    a = advised("models.clean:Clean", shapes={"batch": [2]}, dynamic=())["shape_advice"]
    assert a["export"]["dynamic_shapes"] == {} and a["export"]["ok"] is None
    assert a["notes"][0].startswith("no dim varies in the shape matrix")
    assert a["compile"] == {**a["compile"], "method": None, "compiles_after": None}


def test_recompile_limit_hit_is_stated() -> None:
    run = advised("models.size_branch:SizeBranch", shapes={"batch": [2, 4, 8, 16, 1, 3]},
                  dynamic=(), run={"recompile_limit": 1})
    a = run["shape_advice"]
    assert run["recompiles"]["eager_fallback"] is True
    assert any("hit the recompile limit (1)" in n for n in a["notes"])


def test_draft_export_that_crashes_or_hangs_is_stated(monkeypatch) -> None:
    """draft_export (the locator, for a pin the failing export did not log) raising, or running
    past its time, leaves a note and the pinned dim located from the matrix's own
    specialisation; the run does not fail."""
    import time

    import torch

    from pt2bot.smoke import advice

    def crash(*a: Any, **k: Any) -> Any:
        raise RuntimeError("draft_export broke")

    def hang(*a: Any, **k: Any) -> Any:
        time.sleep(30)

    kw = dict(inputs=[{"shape": ["batch", "seq"]}], shapes={"batch": [4, 8], "seq": [16, 32]},
              dynamic=("batch",))
    monkeypatch.setattr(torch.export, "draft_export", crash)
    # where the failing export logged the pin itself, draft_export is not asked at all
    a = run_model("models.shape_advice:FourRows", phases=("matrix", "advice"), **kw)
    assert not any("draft_export" in n for n in a["shape_advice"]["notes"])
    batch = a["shape_advice"]["export"]["dynamic_shapes"]["x"]["0"]
    assert batch["static"] is True and batch["line"] == line_of("shape_advice.py", "four-rows")
    # a pin the export did not log is asked of draft_export
    monkeypatch.setattr(advice, "_logged_pins", lambda events, paths: {})
    a = run_model("models.shape_advice:FourRows", phases=("matrix", "advice"), **kw)
    note = "draft_export failed: pinned dims are located from the matrix only"
    assert note in a["shape_advice"]["notes"]
    batch = a["shape_advice"]["export"]["dynamic_shapes"]["x"]["0"]
    assert batch["static"] is True and batch["line"] == line_of("shape_advice.py", "four-rows")
    monkeypatch.setattr(torch.export, "draft_export", hang)
    monkeypatch.setattr(advice, "DRAFT_TIMEOUT_S", 0.5)
    t0 = time.perf_counter()
    a = run_model("models.shape_advice:FourRows", phases=("matrix", "advice"), **kw)
    assert time.perf_counter() - t0 < 20
    assert any(n.startswith("draft_export ran past") for n in a["shape_advice"]["notes"])
    assert a["phase_errors"] == []


# --------------------------------------------------------------------------- the review

BASE_SRC = '''import torch


class M(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x * 2
        return x
'''
# the pull request adds a branch that pins the batch, above the same failure
HEAD_SRC = BASE_SRC.replace("        if x.sum() > 0:",
                            "        if x.shape[0] == 4:\n            x = x + 1\n"
                            "        if x.sum() > 0:")


# the pull request's data-dependent branch comes first, on another line
MOVED_SRC = BASE_SRC.replace("        if x.sum() > 0:",
                             "        if x.mean() > 1:\n            x = x - 1\n"
                             "        if x.sum() > 0:")


def _side(tmp_path, side: str, src: str, dynamic: tuple[str, ...] = ("batch",)) -> Any:
    """The model's RUN on one side; each side's package has its own name (one process
    imports both), and its path is written as the same `pkg/m.py`, as in a pull request."""
    import json

    from pt2bot.results import ModelRun
    from pt2bot.smoke.worker import measure

    root = tmp_path / side
    (root / f"pkg_{side}").mkdir(parents=True)
    (root / f"pkg_{side}" / "__init__.py").write_text("")
    (root / f"pkg_{side}" / "m.py").write_text(src)
    s = spec("m", f"pkg_{side}.m:M", inputs=[{"shape": ["batch", 8]}],
             shapes={"batch": [4, 8]}, dynamic=dynamic,
             phases=("matrix", "export", "advice"))
    s["repo_root"] = str(root)
    run = measure(s)
    assert run["status"] == "ok" and run["phase_errors"] == [], run
    return ModelRun.from_json(json.loads(json.dumps(run).replace(f"pkg_{side}/m.py", "pkg/m.py")))


def test_export_failing_on_both_sides_names_the_new_cause(tmp_path) -> None:
    """Base fails export at its data-dependent branch. Head A adds a branch that pins the
    batch above it (export still stops at the data-dependent error: the pin is in
    draft_export's report); head B fails at a new data-dependent line. The review names the
    new cause of each, instead of "same"."""
    import cmarkgfm

    from pt2bot.compare import compare_model
    from pt2bot.config import Config
    from pt2bot.report.summary import render_summary
    from pt2bot.reportdata import Report
    from pt2bot.verdict import WARNING, judge

    base = _side(tmp_path, "base", BASE_SRC)
    pin, moved = _side(tmp_path, "head", HEAD_SRC), _side(tmp_path, "moved", MOVED_SRC)
    assert base.export.ok is False and pin.export.ok is False and moved.export.ok is False

    def compare(head: Any, shift: int = 2) -> Any:
        # (both pull requests add two lines above base's `if`: the diff's line map)
        return compare_model("m", base, head, renames={},
                             line_map=lambda p, n: n + shift if n is not None else None,
                             threshold_pct=10)

    m = compare(pin)
    assert m.delta.export == "same"
    (c,) = m.delta.new_export_causes
    assert (c["kind"], c["dim"], c["value"], c["path"], c["line"]) == (
        "static_dim", "batch", 4, "pkg/m.py", 6)
    assert m.shape_advice["changed"] is True and m.change == "changed"
    (c,) = compare(moved).delta.new_export_causes
    assert (c["kind"], c["export_kind"], c["line"], c["base"]["line"]) == (
        "export_failure", "data_dependent", 6, 6)
    assert c["source"] == "if x.mean() > 1:" and c["base"]["source"] == "if x.sum() > 0:"
    # the same failure on both sides is no new cause
    same = compare(base, shift=0)
    assert same.delta.new_export_causes == () and same.shape_advice["changed"] is False
    # nor is it where the pull request rewrote the failing line and torch fails there as it
    # did (a new user's `return -self.flow.log_prob(z)` made `score = ...`: "fails for a new
    # reason (data_dependent; on base: data_dependent)"): the same kind, line and message
    import dataclasses
    rewritten = dataclasses.replace(base, export=dataclasses.replace(
        base.export, source="if bool(x.sum() > 0):"))
    assert compare_model("m", base, rewritten, renames={}, line_map=lambda p, n: None,
                         threshold_pct=10).delta.new_export_causes == ()
    # nor where one side's failure was never located: the same kind and message is all there
    # is to compare (DINO's PR that touched no model code: "fails for a new reason ...; on
    # base, on \"\"")
    unlocated = dataclasses.replace(base, export=dataclasses.replace(
        base.export, path=None, line=None, source=None))
    assert compare_model("m", unlocated, moved, renames={}, line_map=lambda p, n: n,
                         threshold_pct=10).delta.new_export_causes == ()

    reasons = judge(findings=[], models=[m, compare(moved).with_(name="m2")],
                    head_results=None, base_results=None, config=Config())
    new = [r for r in reasons if r["code"] == "export_new_cause"]
    assert [r["level"] for r in new] == [WARNING, WARNING]
    assert new[0]["message"] == ("batch can no longer be dynamic at pkg/m.py:6 "
                                 "(the code specialises batch to 4)")
    # (of one kind and message on both sides, the lines' text says what changed: base's
    # numbers are not head's)
    assert new[1]["message"] == (
        'torch.export fails for a new reason at pkg/m.py:6 (data_dependent, the same error now '
        'on "if x.mean() > 1:"; on base at pkg/m.py:6, on "if x.sum() > 0:")')
    # and of one kind with another message, the two messages (a new user's PR: an `if` now
    # fails first where base failed in a library call)
    from pt2bot.verdict import _new_cause
    assert _new_cause({"export_kind": "data_dependent", "message": "E: Could not guard on "
                       "data-dependent expression Eq(u3, 1)\nmore", "source": "if m.any():",
                       "base": {"export_kind": "data_dependent", "path": "pkg/m.py", "line": 25,
                                "message": "E: Could not extract specialized integer from "
                                           "data-dependent expression u0"}}) == (
        "data_dependent: E: Could not guard on data-dependent expression Eq(u3, 1); on base: "
        "data_dependent at pkg/m.py:25: E: Could not extract specialized integer from "
        "data-dependent expression u0")
    from cmarkgfm.cmark import Options
    html = cmarkgfm.github_flavored_markdown_to_html(render_summary(
        Report(models=(m, compare(moved).with_(name="m2")))), options=Options.CMARK_OPT_UNSAFE)
    assert "<code>batch</code> can no longer be dynamic at <code>pkg/m.py:6</code>" in html
    assert "Shape advice (changed by this pull request)" in html
    assert "⚠️ new cause" in html


# A helper that breaks is compiled as a frame of its own, once per dtype it is called with:
# recompiles that no dynamic dim removes (tad-dftd3's, by the dozen, on dtypes and requires_grad).
HELPER_SRC = """import torch


def scaled(t):
    torch._dynamo.graph_break()
    return t * 2


class M(torch.nn.Module):
    def forward(self, x):
        return scaled(x) + scaled(x.long())
"""
SIZES_SRC = """import torch


class M(torch.nn.Module):
    def forward(self, x):
        return torch.cumsum(x, 0) * 2
"""


def test_shape_advice_is_offered_for_recompiles_only_where_it_removes_them(tmp_path) -> None:
    """A model that recompiles gets the shape advice when making its dims dynamic compiles it
    less often, and a stated "no shape advice", with the guard that does fail, where it does
    not: advice measured not to help is not posted as help."""
    import cmarkgfm

    from pt2bot.compare import compare_model
    from pt2bot.report.summary import render_summary
    from pt2bot.reportdata import Report

    import html as html_text

    from cmarkgfm.cmark import Options

    def summary(side: str, src: str, dynamic: tuple[str, ...]) -> tuple[Any, str]:
        run = _side(tmp_path, side, src, dynamic)
        m = compare_model("m", run, run, renames={}, line_map=lambda p, n: n, threshold_pct=10)
        return run, html_text.unescape(cmarkgfm.github_flavored_markdown_to_html(
            render_summary(Report(models=(m,))), options=Options.CMARK_OPT_UNSAFE))

    run, html = summary("dtypes", HELPER_SRC, ("batch",))
    c = run.shape_advice.to_json()["compile"]
    n = run.recompiles.count
    assert n == 3 and c["compiles_after"] >= c["compiles_before"]
    assert "Shape advice" not in html and "mark_dynamic(" not in html
    # (the configured dims are the advised ones: "against N as configured" compared the config
    # with itself, S4's user read)
    assert c["reused"] is True
    assert (f"No shape advice: dynamic dims do not remove this model's {n} recompiles. The "
            f"dims are dynamic as configured already (<code>mark_dynamic</code>): the matrix compiles "
            f"{c['compiles_after']} times; the "
            "guard that fails most often: <code>tensor 't' dtype mismatch. expected Float, "
            "actual Long</code> (failed once in the shape matrix) in <code>scaled</code> (<code>pkg/m.py</code>, resumed after line "
            "5).") in html, html
    # a guard of a frame in an installed package says so: a new user read flowtorch's
    # recompiles on its tensor type as their own shapes'
    from pt2bot.report.summary import _frame_of
    assert _frame_of({"frame": {"function": "_inverse", "path": None, "line": 47,
                                "library": "flowtorch/bijectors/autoregressive.py"}}) == (
        " in `_inverse` (`flowtorch/bijectors/autoregressive.py`, an installed package)")

    run, html = summary("sizes", SIZES_SRC, ())
    c = run.shape_advice.to_json()["compile"]
    assert run.recompiles.count == 1 and (c["compiles_before"], c["compiles_after"]) == (2, 1)
    assert "Shape advice (the model recompiles)" in html and "No shape advice" not in html


def test_the_audit_shows_every_models_advice(tmp_path) -> None:
    """The audit's Markdown has a shape-advice block per model with advice, its code and
    dims rendered through the escapes (a hostile dim name stays inert)."""
    import copy

    from pt2bot.audit.history import History
    from test_audit import night, run_night

    advice = copy.deepcopy(gpt()["shape_advice"])
    hostile = copy.deepcopy(advice)
    hostile["export"]["dynamic_shapes"]["idx"]["0"]["name"] = "<script>@maintainers"
    results = night(1)
    results["models"][0]["shape_advice"] = advice
    results["models"][1]["shape_advice"] = hostile
    with History(str(tmp_path / "h.db")) as h:
        _report, out = run_night(h, tmp_path, 1, results)
    md = (out / "audit.md").read_text()
    section = md.split("### Shape advice", 1)[1]
    assert section.count("<details>") == 2
    assert "<summary>tiny\\_gpt</summary>" in section and "<summary>tiny\\_mlp</summary>" in section
    assert "`idx.shape[1]` (`seq`): dynamic, ≤ 64" in section
    assert "compiles over the matrix: 3 → 1 with `mark_dynamic`" in section
    import cmarkgfm
    from cmarkgfm.cmark import Options
    html = cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)
    assert "<script" not in html and "&lt;script&gt;" in html and "@maintainers" not in md
    # report.html, where a cut audit.md sends the reader, has it too, escaped
    page = (out / "report.html").read_text()
    advice_html = page.split("<h2>Shape advice</h2>", 1)[1]
    assert "compiles over the matrix: 3 → 1" in advice_html
    assert "<script" not in page and "&lt;script&gt;" in advice_html


def test_configured_settings_that_are_the_advice_are_not_compiled_again() -> None:
    """`dynamic: {seq: {max: 64}}` and batch: the matrix phase compiled with the advised
    settings, so its count is the after too (nothing compiled again)."""
    run = advised("models.shape_advice:TinyGPT", inputs=GPT_INPUTS,
                  shapes={"batch": [2, 3], "seq": [8, 16, 32]}, dynamic=("batch", "seq"),
                  bounds={"seq": {"min": None, "max": 64, "multiple_of": None}})
    c = run["shape_advice"]["compile"]
    assert c["reused"] is True and c["tried"] == {}
    assert (c["method"], c["compiles_before"], c["compiles_after"]) == ("mark_dynamic", 1, 1)
    assert gpt()["shape_advice"]["compile"]["reused"] is False


def test_export_disabled_in_the_config_derives_nothing() -> None:
    run = run_model("models.shape_advice:TinyGPT", phases=("advice",), inputs=GPT_INPUTS,
                    shapes={"batch": [2, 3], "seq": [8]}, dynamic=(), export=False)
    a = run["shape_advice"]
    assert a["export"]["dynamic_shapes"] == {} and a["export"]["ok"] is None
    assert any("`export: false`" in n for n in a["notes"])
    # without the matrix phase, the advice compiled the matrix itself for "before"
    assert a["compile"]["compiles_before"] == 2 and a["compile"]["method"] is None


def test_an_export_stopped_by_the_pull_request_is_no_new_advice() -> None:
    """llama2.c (recorded): base's advice bounded `seq` by the position table (`max=16`,
    exported); a PR's check on the hidden states stops head's export before the dims, and the
    summary showed "Shape advice (changed by this pull request)" with `seq` "dynamic, any size"
    and a pt2bot.yml snippet. With no recompile to answer, it says why there is nothing new."""
    from pt2bot.reportdata import ModelDelta
    from pt2bot.report.summary import shape_advice_blocks

    any_size = {"min": None, "max": None, "multiple_of": None}
    head = {"export": {"ok": False, "kind": "data_dependent", "path": "model.py", "line": 260,
                       "dynamic_shapes": {"tokens": {"0": {"name": "batch", **any_size},
                                                     "1": {"name": "seq", **any_size}}}},
            "compile": {"method": "mark_dynamic", "compiles_before": 2, "compiles_after": 2}}
    base = {"export": {"ok": True, "suggested": ["seq = Dim('seq', max=16)"],
                       "dynamic_shapes": {"tokens": {"0": {"name": "batch", **any_size},
                                                     "1": {"name": "seq", **dict(any_size, max=16)}}}},
            "compile": {"method": "mark_dynamic", "compiles_before": 1, "compiles_after": 1}}
    m = ModelDelta(name="transformer", head={"recompiles": {"count": 0}},
                   shape_advice={"head": head, "base": base, "changed": True})
    [line] = shape_advice_blocks(m)
    assert line == ("ℹ️ Shape advice not derived again: head's export stops first at `model.py:260`, "
                    "before it reaches the dims; base's exported: `seq = Dim('seq', max=16)`.")
    # torch's suggested Dims of dims the advice pinned are not what base exported with
    # (complextorch's range and doppler, a mean guarding on their product)
    pinned = {"export": {"ok": True, "suggested": ["range = Dim('range', min=4)", "doppler = Dim('doppler', min=4)"],
                         "dynamic_shapes": {"z": {"0": {"name": "batch", **any_size},
                                                  "2": {"static": True, "value": 16},
                                                  "3": {"static": True, "value": 12}}}}}
    m2 = ModelDelta(name="radar", head={"recompiles": {"count": 0}},
                    shape_advice={"head": head, "base": pinned, "changed": True})
    [line] = shape_advice_blocks(m2)
    assert line.endswith("base's exported, with 2 dims the code pins static: `z dim 2 = 16`, `z dim 3 = 12`."), line
    # a model that recompiles still gets the advice, which answers that (minGPT's 21 → 9)
    m = ModelDelta(name="transformer", head={"recompiles": {"count": 3}},
                   shape_advice={"head": {**head, "compile": {"method": "dynamic=True", "compiles_before": 21,
                                                              "compiles_after": 9}},
                                 "base": base, "changed": True})
    assert "Shape advice (changed by this pull request)" in shape_advice_blocks(m)[0]


def test_dims_of_an_export_that_stops_before_them_are_not_advised_as_verified() -> None:
    """minGPT's head (recorded): export stops at a data-dependent branch the pull request adds,
    before the position table that bounds `seq`; "dynamic, any size" is what export was asked
    for, and the paste-ready code says it does not export, while the compile advice stands."""
    import cmarkgfm
    from cmarkgfm.cmark import Options

    from pt2bot.report.shape_advice import advice_markdown
    dim = {"min": None, "max": None, "multiple_of": None}
    advice = {
        "export": {"ok": False, "kind": "data_dependent", "path": "mingpt/model.py", "line": 265,
                   "dynamic_shapes": {"idx": {"0": {"name": "batch", **dim},
                                              "1": {"name": "seq", **dim}}}},
        "compile": {"method": "dynamic=True", "compiles_before": 21, "compiles_after": 9},
        "code": {"python": "from torch.export import Dim\n\nbatch = Dim('batch')\nseq = Dim('seq')\n"
                           "dynamic_shapes = {'idx': {0: batch, 1: seq}}\nep = torch.export.export("
                           "model, args, kwargs, dynamic_shapes=dynamic_shapes)",
                 "compile": "compiled = torch.compile(model, dynamic=True)"}}
    html = cmarkgfm.github_flavored_markdown_to_html(advice_markdown(advice),
                                                     options=Options.CMARK_OPT_UNSAFE)
    items = [li.split("</li>")[0] for li in html.split("<li>")[1:]]
    assert items[0] == ("the dims export was asked for; not verified, export stops first at "
                        "<code>mingpt/model.py:265</code>:")
    assert items[1] == "<code>idx.shape[0]</code> (<code>batch</code>): dynamic, any size"
    assert "compiles over the matrix: 21 → 9 with <code>dynamic=True</code>" in html
    code = html.split('<pre lang="python"><code>')[1]
    assert code.startswith("# not verified: export with these dims fails (data_dependent at "
                           "mingpt/model.py:265)\nfrom torch.export import Dim")
    # an export that passed is advice as before: no such line
    advice["export"]["ok"] = True
    md = advice_markdown(advice)
    assert "not verified" not in md and "the advised `dynamic_shapes` exports" in md
    # the yaml to paste, unless it is what pt2bot.yml says already (held-out batch 33's trial:
    # `dynamic: {batch: null, depth: null}` advised over `dynamic: [batch, depth]`)
    advice["code"]["yaml"] = "dynamic:\n  batch: null\n  seq: null"
    assert "pt2bot.yml:" in advice_markdown(advice)
    advice["compile"]["reused"] = True
    md = advice_markdown(advice)
    assert "pt2bot.yml:" not in md and "already declares these dims" in md
    # and where the advice is a compile setting the yaml cannot hold (ESM-2's `dynamic=True`
    # beside `dynamic: {batch: null, seq: null}` under `dynamic: [batch, seq]`)
    del advice["compile"]["reused"]
    advice["compile"]["yaml_as_configured"] = True
    md = advice_markdown(advice)
    assert "pt2bot.yml:" not in md and "already declares these dims" in md
    # not where a declared dim cannot be dynamic: the yaml that says so is shown instead
    advice["code"]["yaml"] = "dynamic:\n  batch: null\n  # tokens.shape[1]: cannot be dynamic (the code pins it)"
    md = advice_markdown(advice)
    assert "pt2bot.yml:" in md and "already declares these dims" not in md


def test_the_advised_yaml_is_compared_with_the_configured_dims() -> None:
    from pt2bot.smoke.advice import advice_code, configured_spec

    dim = {"min": None, "max": None, "multiple_of": None}
    spec = {"tokens": {"0": {"name": "batch", **dim}, "1": {"name": "seq", **dim}}}
    same = advice_code(configured_spec(spec, {"dynamic": ["batch", "seq"]}), None)["yaml"]
    assert same == advice_code(spec, "dynamic=True")["yaml"] == "dynamic:\n  batch: null\n  seq: null"
    # a dim the config leaves static, or a bound it does not have, is advice
    assert advice_code(configured_spec(spec, {"dynamic": ["batch"]}), None)["yaml"] != \
        advice_code(spec, None)["yaml"]
    bounded = {"tokens": {"0": {"name": "batch", **dim}, "1": {"name": "seq", **dim, "max": 128}}}
    assert advice_code(configured_spec(bounded, {"dynamic": ["batch", "seq"]}), None)["yaml"] != \
        advice_code(bounded, None)["yaml"]
    assert advice_code(configured_spec(bounded, {"dynamic": ["batch", "seq"],
                                                 "bounds": {"seq": {"max": 128}}}), None)["yaml"] == \
        advice_code(bounded, None)["yaml"]


def test_the_look_behind_an_export_error_has_a_shorter_limit(monkeypatch) -> None:
    """After an export error that is no pinned dim, draft_export only looks for pins behind it:
    a new user's tiny TabTransformer spent 60 s there on each side of each review (69 s to
    finish) for no pin. Its own limit is shorter than the one for locating a pin."""
    from pt2bot.smoke import advice

    calls: list[float] = []

    def timed(model, args, kwargs, spec, paths, notes, lost, limit_s=None):
        calls.append(advice.DRAFT_TIMEOUT_S if limit_s is None else limit_s)
        return []

    monkeypatch.setattr(advice, "_draft", timed)
    advice._hidden_pins(None, (), {}, {}, None, [])
    assert calls == [advice.HIDDEN_TIMEOUT_S] and advice.HIDDEN_TIMEOUT_S < advice.DRAFT_TIMEOUT_S


def test_no_shape_advice_says_when_every_recompile_is_in_a_frame_a_break_splits_off() -> None:
    """torch-nl's pair potential, `dynamic: [atoms]` declared: "dynamic dims do not remove this
    model's 1 recompile", with the guard quoted with torch's source comment and a cut path after
    it. Its one recompile was a size change in the frame resumed after the library's break,
    which no declared dim reaches."""
    from pt2bot.report.summary import _not_sizes_line

    frame = {"function": "torch_dynamo_resume_in_forward_at_33", "path": "mlpot/model.py", "line": 33}
    size = {"guard": "tensor '___stack0' size mismatch at index 0. expected 8, actual 16",
            "kind": "size_mismatch", "compile_id": "2/1", "frame": frame,
            "resumed_after": {"path": "mlpot/model.py", "line": 33}}
    line = _not_sizes_line({"count": 1, "cases": [{"reasons": [size]}]}, 3, 3, "mark_dynamic")
    assert line.endswith("They are in frames a graph break splits off, whose inputs are what the "
                         "code computed before the break, so no declared dim reaches them while the "
                         "break is there; with it fixed the dims reach those frames, and only sizes "
                         "the code itself pins still recompile."), line
    value = {**size, "kind": "guard", "guard": "n == 8" + " " * 50 + "# e_atom = torch.zeros(n)  # mp/h32repo/mlpot/model.…"}
    line = _not_sizes_line({"count": 1, "cases": [{"reasons": [value]}]}, 3, 3, "mark_dynamic")
    assert "against 3 as configured" in line
    # the configured dims are the advised ones: nothing compared (S4's "25 times, against 25")
    reused = _not_sizes_line({"count": 1, "cases": [{"reasons": [value]}]}, 3, 3, "mark_dynamic", reused=True)
    assert "The dims are dynamic as configured already (`mark_dynamic`): the matrix compiles 3 times; " \
           "the guard that fails most often" in reused and "as configured;" not in reused
    assert "the guard that fails most often: `n == 8` (failed once" in line and "with it fixed" not in line


def test_compile_settings_that_compile_more_than_the_configured_are_not_advised() -> None:
    """DETR's NestedTensor model compiles once as configured; the advice read "compiles over
    the matrix: 1 → 2 with `dynamic=True`" and gave that code to paste: advice that adds a
    compile."""
    from pt2bot.report.shape_advice import advice_markdown
    from pt2bot.smoke.advice import advice_code

    dims = {"x": {"0": {"name": "batch", "min": None, "max": None, "multiple_of": None}}}
    advice = {"export": {"ok": True, "dynamic_shapes": dims},
              "compile": {"method": "dynamic=True", "compiles_before": 1, "compiles_after": 2, "worse": True},
              "code": advice_code(dims, None), "notes": []}
    md = advice_markdown(advice)
    assert "compiles over the matrix: 1 as configured, 2 with `dynamic=True`: not advised for compiling" in md
    assert "torch.compile(" not in md and advice["code"]["compile"] == ""


def test_a_dim_base_pins_stays_pinned_where_heads_export_stops_before_it() -> None:
    """Held-out batch 38's PR 2: head's export stops at the PR's new branch, before the line
    that pins `size`, so head's advice listed `size` as "dynamic, any size" and its YAML offered
    `size: null`, beside base's "the code specialises size to 16", and the pasted block failed
    there. Base's finding is kept for such a dim, at its line in head's file (the PR added five
    lines above it); the YAML leaves it out, the Python too."""
    from pt2bot.compare import compare_shape_advice
    from pt2bot.report.shape_advice import advice_markdown, with_base_pins
    from pt2bot.results import ModelRun

    pin = {"static": True, "value": 16, "reason": "the code specialises size to 16",
           "path": "regnet/model.py", "line": 43, "source": "grid = make(moving.shape[2:])"}
    base = {"export": {"ok": True, "dynamic_shapes": {"moving": {"0": {"name": "batch"}, "2": pin}}}}
    head = {"export": {"ok": False, "kind": "data_dependent", "path": "regnet/model.py", "line": 37,
                       "dynamic_shapes": {"moving": {"0": {"name": "batch"}, "2": {"name": "size"}}}},
            "code": {"python": "dynamic_shapes = {'moving': {0: batch, 2: size}}",
                     "yaml": "dynamic:\n  batch: null\n  size: null"}}

    def run(advice: dict) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "shape_advice": advice})
    sa = compare_shape_advice(run(base), run(head), {}, lambda path, line: line + 5)
    assert list(sa) == ["head", "base", "changed", "base_pins"]
    assert sa["base_pins"] == [{"input": "moving", "axis": "2", "entry": {**pin, "line": 48}}]
    got = with_base_pins(sa["head"], sa["base_pins"])
    text = advice_markdown(got)
    assert "`moving.shape[2]`: **cannot be dynamic**, the code specialises size to 16 at " \
           "`regnet/model.py:48`" in text and "(base's export, which head's stops before)" in text
    assert got["code"]["yaml"] == ("dynamic:\n  batch: null\n  # moving.shape[2]: cannot be dynamic "
                                   "(the code specialises size to 16, on base)")
    assert "dynamic_shapes =" not in text
    # none where head's export got through, or where base pinned nothing head frees
    assert "base_pins" not in compare_shape_advice(
        run(base), run({**head, "export": {**head["export"], "ok": True}}), {}, lambda path, line: line)
    assert "base_pins" not in compare_shape_advice(
        run({"export": {"ok": True, "dynamic_shapes": {"moving": {"2": {"name": "size"}}}}}), run(head), {},
        lambda path, line: line)
    assert with_base_pins(head, None) is head


def test_a_guard_torch_suggests_no_fix_for_gets_the_least_bound_that_holds_it() -> None:
    """Held-out batch 39's age CNN halves its image and pools it to one value: export guards
    `(size // 2) != 1` and torch suggests nothing. The advice printed `Dim('size')`, "any
    size", and that block failed; the least bound past which the guard holds is tried, and
    the export with it is the proof."""
    from pt2bot.smoke.advice import derived_fixes

    a = advised("models.shape_advice:HalvedPool",
                inputs=[{"name": "images", "shape": ["batch", 3, "size", "size"]}],
                shapes={"batch": [2, 3], "size": [16, 24]}, dynamic=("batch", "size"))["shape_advice"]
    ex = a["export"]
    assert ex["ok"] is True, ex
    assert ex["dynamic_shapes"]["images"]["2"] == {"name": "size", "min": 4, "max": None, "multiple_of": None}
    assert ex["suggested"] == [] and [c["match"] for c in ex["cases"]] == [True] * 4
    assert any("torch suggested no fix for `(L['images'].size()[2] // 2) != 1`" in n
               and "size = Dim('size', min=4)" in n for n in a["notes"]), a["notes"]
    assert "size = Dim('size', min=4)" in a["code"]["python"]
    # what the example inputs need (MAE's user pasted it with a batch of one, and export failed)
    assert "# args, kwargs: example inputs with every dynamic dim at least 2" in a["code"]["python"]
    # a guard past the sizes checked, or of two sizes, gives no bound
    assert derived_fixes("Not all values of s = L['x'].size()[1] in the specified range satisfy the "
                         "generated guard L['x'].size()[1] <= 5000.") == []
    assert derived_fixes("Not all values of s = L['x'].size()[1] in the specified range satisfy the "
                         "generated guard L['x'].size()[1] != L['y'].size()[1].") == []


def test_a_guard_that_holds_on_every_size_but_floor_divides_it_gets_a_multiple() -> None:
    """flux's autoencoder, torch 2.13's words: every width from 4 meets both guards, but torch
    cannot prove it of `width // 2`, and refused `min=4` again with no fix; as a multiple of 2
    (`2*Dim('_width', min=2)`) it exports and its program equals eager on widths 16, 24, 30."""
    from pt2bot.smoke.advice import derived_fixes

    msg = ("Constraints violated (width)! For more information, run with TORCH_LOGS=\"+dynamic\".\n"
           "  - Not all values of width = L['x'].size()[3] in the specified range 4 <= width satisfy the "
           "generated guard (8 % (8*(L['x'].size()[3] // 2))) != 0.\n"
           "  - Not all values of width = L['x'].size()[3] in the specified range 4 <= width satisfy the "
           "generated guard (16 % (32*(L['x'].size()[3] // 2))) != 0.")
    assert derived_fixes(msg) == ["_width = Dim('_width', min=2)", "width = 2*_width"]
    # below 4 the first guard fails: the least bound first, the multiple in the next round
    assert derived_fixes(msg.replace("4 <= width", "2 <= width")) == ["width = Dim('width', min=4)"]
    # a guard that holds everywhere and divides nothing: torch's to prove, no fix of ours
    assert derived_fixes(msg.replace("// 2", "+ 2")) == []


def test_a_bound_base_needed_is_kept_where_heads_export_stops_before_it() -> None:
    """Held-out batch 39's PR 2: head's export stops at the PR's new branch, before the guard
    `(size // 2) != 1` that base's export needed `size >= 4` for; head's advice printed
    `Dim('size')`, any size, which fails on base too. Base's bound is kept, in the dims, the
    YAML and the Python."""
    from pt2bot.compare import compare_shape_advice
    from pt2bot.report.shape_advice import advice_markdown, with_base_pins
    from pt2bot.results import ModelRun
    from pt2bot.smoke.advice import advice_code

    batch = {"name": "batch", "min": None, "max": None, "multiple_of": None}
    size = {"name": "size", "min": None, "max": None, "multiple_of": None}
    base_dims = {"images": {"0": batch, "2": {**size, "min": 4}, "3": {**size, "min": 4}}}
    head_dims = {"images": {"0": batch, "2": size, "3": size}}
    base = {"export": {"ok": True, "dynamic_shapes": base_dims}}
    head = {"export": {"ok": False, "kind": "data_dependent", "path": "agenet/model.py", "line": 39,
                       "dynamic_shapes": head_dims}, "code": advice_code(head_dims, None)}

    def run(advice: dict) -> ModelRun:
        return ModelRun.from_json({"name": "m", "status": "ok", "shape_advice": advice})
    sa = compare_shape_advice(run(base), run(head), {}, lambda path, line: line)
    assert [(p["axis"], p["entry"]["min"]) for p in sa["base_pins"]] == [("2", 4), ("3", 4)]
    got = with_base_pins(sa["head"], sa["base_pins"])
    text = advice_markdown(got)
    assert "(`size`): dynamic, ≥ 4 (the bound base's export needed, which head's stops before)" in text, text
    assert "size = Dim('size', min=4)" in got["code"]["python"] and "batch = Dim('batch')" in got["code"]["python"]
    assert got["code"]["yaml"] == "dynamic:\n  batch: null\n  size: {min: 4}"
    # none where head's own advice has the bound
    bounded = {**head, "export": {**head["export"], "dynamic_shapes": base_dims}}
    assert "base_pins" not in compare_shape_advice(run(base), run(bounded), {}, lambda path, line: line)


def test_the_compile_advice_says_why_not_mark_dynamic_where_it_raised() -> None:
    """MAE's PRs: the advice tried `mark_dynamic` on head, saw it raise, and advised
    `dynamic=True` saying only "compiles over the matrix: 7 → 4 with `dynamic=True`"."""
    from pt2bot.report.shape_advice import compiles_text

    err = ("ConstraintViolationError: Constraints violated (L['imgs'].size()[0])! For more information\n"
           "  - You marked L['imgs'].size()[0] as dynamic but your code specialized it to be a constant (2)")
    c = {"method": "dynamic=True", "compiles_before": 7, "compiles_after": 4,
         "tried": {"mark_dynamic": {"compiles": None, "error": err}, "dynamic=True": {"compiles": 4, "error": None}}}
    assert compiles_text({"compile": c}) == (
        "compiles over the matrix: 7 → 4 with `dynamic=True` (`mark_dynamic` raises: ConstraintViolationError: "
        "Constraints violated (L\\['imgs'\\].size()\\[0\\])! For more information)")
    assert compiles_text({"compile": {**c, "tried": {}}}) == "compiles over the matrix: 7 → 4 with `dynamic=True`"


def test_a_dim_pinned_past_a_new_export_failure_says_it_may_be_that_failures() -> None:
    """S4's PR 2: a new `if` on the kernel (1715) made export fail, and the advice, tracing on
    past it, found seq pinned at an unchanged line (1720): the review told the user to make seq
    static, where the verified fix of the `if` let seq export dynamic."""
    from pt2bot.compare import new_export_causes
    from pt2bot.report.shape_advice import causes_markdown
    from pt2bot.results import ModelRun

    seq = {"name": "seq", "min": None, "max": None, "multiple_of": None}
    pin = {"static": True, "value": 16, "reason": "the code specialises seq to 16",
           "path": "models/s4/s4.py", "line": 1720, "source": "k0, k1 = rearrange(k, ...)"}
    base = ModelRun.from_json({"name": "m", "status": "ok", "export": {"ok": True},
                               "shape_advice": {"export": {"ok": True, "dynamic_shapes": {"x": {"1": seq}}}}})
    failed = {"ok": False, "kind": "data_dependent", "path": "models/s4/s4.py", "line": 1715}
    head = ModelRun.from_json({"name": "m", "status": "ok", "export": failed,
                               "shape_advice": {"export": {"ok": True, "dynamic_shapes": {"x": {"1": pin}}}}})
    (c,) = new_export_causes(base, head, {}, lambda path, line: line)
    assert c["past_failure"] == {"path": "models/s4/s4.py", "line": 1715}
    text = causes_markdown([c])
    assert "found past the new export failure at `models/s4/s4.py:1715`, which may be what pins it" in text
    # head's export fine: a pin of its own
    ok = ModelRun.from_json({**head.to_json(), "export": {"ok": True}})
    (c,) = new_export_causes(base, ok, {}, lambda path, line: line)
    assert "past_failure" not in c
