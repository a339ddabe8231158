"""A recompile because a static size changed is told from one because some other guard failed
(pt2bot/smoke/matrix.py `parse_recompile_reason`), also where the tensor is held by an argument:
torchdiffeq's solver keeps the state as `self.y0`, and on the matrix's second batch size dynamo
says "tensor 'self.y0' size mismatch at index 0. expected 2, actual 3". Read as another guard, a
fix's first recompile of a frame on a new size was held against it as a new kind of recompile.
"""
from __future__ import annotations

import pytest

from pt2bot.smoke.inputs import CaseInputs
from pt2bot.smoke.location import RepoPaths
from pt2bot.smoke.matrix import parse_recompile_reason, specialised_at

CASE = CaseInputs(shape={"batch": 3}, args=(), kwargs={})
CASE.dims = {"x": {0: "batch"}}


@pytest.mark.parametrize("text, kind, dim", [
    ("0/1: tensor 'x' size mismatch at index 0. expected 2, actual 3", "size_mismatch", "batch"),
    ("0/1: tensor 'L['x']' size mismatch at index 0. expected 2, actual 3", "size_mismatch", "batch"),
    ("0/1: tensor 'self.y0' size mismatch at index 0. expected 2, actual 3", "size_mismatch", None),
    ("0/1: tensor 'L['self'].y0' size mismatch at index 0. expected 2, actual 3", "size_mismatch", None),
    ("0/1: tensor 'self.y0' size mismatch at index 0. expected 1, actual 3", "size_one", None),
    ("0/1: L['self'].step == 4", "guard", None),
    # tensors that are no argument: a library helper's `args[1]`, a resumed frame's stack (seen
    # on tad-dftd3: read as other guards, torch's own size-1 compiles were counted as the PR's)
    ("0/1: tensor 'args[1]' size mismatch at index 0. expected 1, actual 3", "size_one", None),
    ("0/1: tensor '___stack0[0][0]' size mismatch at index 0. expected 1, actual 3", "size_one", None),
    ("0/1: tensor '___stack0[0]' size mismatch at index 1. expected 6, actual 10", "size_mismatch", None),
    ("0/1: tensor 'x' dtype mismatch. expected Long, actual Float", "guard", None),
    # a layout that follows sizes that changed (SAM's mask decoder, a slice handed across the
    # PR's break): automatic dynamic's, once, as a size's; not tied to an input dim
    ("3/1: tensor 'iou_token_out' stride mismatch at index 0. expected 256, actual 352",
     "size_mismatch", None),
])
def test_a_size_mismatch_is_one_whoever_holds_the_tensor(tmp_path, text, kind, dim):
    [rec] = parse_recompile_reason(text, CASE, [], RepoPaths(str(tmp_path)))
    assert (rec["kind"], rec["dim"]) == (kind, dim)


def test_a_tensor_an_argument_holds_is_no_input_dim_specialised():
    sites = [{"arg": "self", "ax": 0, "value": 2, "path": "pkg/m.py"}]
    assert specialised_at("tensor 'self.y0' size mismatch at index 0. expected 2, actual 3", sites) is None
    assert specialised_at("tensor 'self' size mismatch at index 0. expected 2, actual 3", sites) == sites[0]
    assert specialised_at("tensor 'args[0]' size mismatch at index 0. expected 2, actual 3",
                          [{**sites[0], "arg": "args"}]) is None


@pytest.mark.torch
def test_the_matrix_own_retry_is_no_recompile_of_the_model():
    """A dim marked dynamic that the code specialises makes the matrix run the case again with
    the dim marked weakly; the frame already compiled with the strict mark then fails dynamo's
    "_dynamo_weak_dynamic_indices should be absent" guard. That recompile is pt2bot's doing, not
    the model's: on the old code it was one more "new recompile" on the first shape case."""
    import os

    from pt2bot.smoke.worker import measure
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    model = {"name": "trim", "entry": "models.trim_padding:TrimPadding", "kwargs": {},
             "inputs": [{"name": "x", "shape": ["batch", 8], "dtype": "float32"}],
             "inputs_entry": None, "shapes": {"batch": [2, 4]}, "cases": None,
             "dynamic": ["batch"], "export": False, "tolerance": {}}
    run = {"backend": "eager", "recompile_limit": 8, "warmup": 1, "repeats": 3, "threads": 1}
    got = measure({"repo_root": root, "model": model, "run": run, "device": "cpu",
                   "phases": ["matrix"], "log_path": None})
    assert got["status"] == "ok", got.get("error")
    # the specialisation is reported, and the case ran again
    assert [s["line"] for s in got["specialized"]] == [11]
    first, second = got["recompiles"]["cases"]
    assert first["compiled"] and first["recompiles"] == 0 and first["reasons"] == []
    # the resumed frame's recompile for the new batch is the model's (it follows the break)
    assert second["recompiles"] == 1 and got["recompiles"]["count"] == 1
    assert "size mismatch" in second["reasons"][0]["guard"]


def test_a_guard_with_its_user_stack_keeps_its_line(tmp_path):
    """torch 2.13 writes the guard's user stack after its location, on lines of its own: the
    whole text was one guard with no line, so a Python counter's recompiles on `self.atoms_seen
    += n_real` were on no line, and PTC110 there said "the run saw no recompile there"."""
    (tmp_path / "molprop").mkdir()
    (tmp_path / "molprop" / "model.py").write_text("x = 1\n" * 40)
    full = str(tmp_path / "molprop" / "model.py")
    text = ("1/1: ___stack0 == 6                                           # self.atoms_seen += n_real  "
            f"# {full[-27:]}:29 in torch_dynamo_resume_in_forward_at_28\nUser stack trace:\n"
            f'  File "{full}", line 29, in torch_dynamo_resume_in_forward_at_28\n'
            "    self.atoms_seen += n_real")
    [rec] = parse_recompile_reason(text, CASE, [full], RepoPaths(str(tmp_path)))
    assert (rec["guard"], rec["path"], rec["line"], rec["source"]) == (
        "___stack0 == 6", "molprop/model.py", 29, "self.atoms_seen += n_real")


def test_a_value_or_a_length_passed_across_a_break_is_the_breaks():
    """In a frame resumed after a break, a number or a list the break passed as an argument is
    guarded by value or by length (kornia's `len(___stack1) == 2`, the per-image list of its
    sharpness after the PR's `if`): without the break there is no such argument. Not an
    expression of the user's code, nor a length of a tensor the user holds."""
    from pt2bot.compare import _follows
    from pt2bot.results import RecompileReason

    def resumed(guard: str) -> RecompileReason:
        return RecompileReason.from_json({"guard": guard, "kind": "guard",
                                          "resumed_after": {"path": "m.py", "line": 5}})

    assert _follows(resumed("len(___stack1) == 2"))
    assert _follows(resumed("T == 16"))
    assert not _follows(resumed("len(self.layers) == 2"))
    assert not _follows(resumed("(h.size()[1] // 16) != 1"))
    assert not _follows(RecompileReason.from_json({"guard": "len(___stack1) == 2", "kind": "guard"}))
    # on a line that writes the value into the module's state, the state's write recompiles
    # with or without the break (egnn's `self.atoms_seen += n_real`, a counter)
    counted = RecompileReason.from_json({"guard": "___stack0 == 6", "kind": "guard", "source": "self.atoms_seen += n_real",
                                         "resumed_after": {"path": "m.py", "line": 28}})
    assert not _follows(counted)
    assert not _follows(counted.with_(source="self.atoms_seen = self.atoms_seen + n_real"))
    assert _follows(counted.with_(source="h = h * n_real"))
    # a plain write of the value, which reads no state back, is the break's (S4's step-size
    # range kept for a log: its frame compiled again once, the value then a symbol)
    assert _follows(counted.with_(source="self.dt_range = (dt.min().item(), dt.max().item())"))


def test_a_guard_torch_wrote_with_no_line_is_placed_where_it_was_added(tmp_path):
    """A size of a tensor passed by keyword into `**kwargs` and marked dynamic: torch loses
    its source and writes the failed guard as `kwargs['x'].size()[3] ==
    kwargs['x'].size()[2]  # (unknown var s16, please file a bug)`, with no line. DINOv2's
    `if npatch == N and w == h:` was then placed at `forward`, 140 lines from its `if`. The
    trace says where the compile added the guard; dynamo's own log is the truth held to."""
    import logging
    import textwrap

    torch = pytest.importorskip("torch")
    from pt2bot.smoke.matrix import measure_matrix
    from pt2bot.smoke.trace import reset_dynamo
    from tests.pymodule import load_module

    (tmp_path / "vit.py").write_text(textwrap.dedent("""\
        import torch


        class ViT(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.pos = torch.nn.Parameter(torch.randn(1, 256, 4))

            def interpolate(self, t, w, h):
                if t.shape[1] == self.pos.shape[1] and w == h:
                    return self.pos
                grid = self.pos.reshape(1, 16, 16, 4).permute(0, 3, 1, 2)
                return torch.nn.functional.interpolate(grid, size=(w, h)).flatten(2).transpose(1, 2)

            def features(self, x):
                w, h = x.shape[2], x.shape[3]
                t = x.flatten(2).transpose(1, 2)[:, :, :1].expand(-1, -1, 4)
                return t + self.interpolate(t, w, h)

            def forward(self, *args, **kwargs):
                return self.features(*args, **kwargs)
        """))
    model = load_module(tmp_path / "vit.py").ViT()
    cases = [CaseInputs(shape={"height": 16, "width": w}, args=(),
                        kwargs={"x": torch.randn(2, 3, 16, w)}) for w in (16, 20)]
    for c in cases:
        c.dims = {"x": {2: "height", 3: "width"}}
    with torch.no_grad():
        outs = [model(**c.kwargs) for c in cases]

    logged: list[str] = []

    class _Log(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            logged.append(record.getMessage())

    torch._logging.set_logs(recompiles=True)
    handler = _Log()
    logging.getLogger("torch._dynamo").addHandler(handler)
    try:
        got = measure_matrix(model, cases, outs, {"dynamic": ["height", "width"]},
                             {"backend": "eager"}, RepoPaths(str(tmp_path)))
    finally:
        logging.getLogger("torch._dynamo").removeHandler(handler)
        torch._logging.set_logs()
        reset_dynamo()
    # torch itself names no line for it: that is the case this placing is for
    assert any("unknown var" in m for m in logged), logged
    [reason] = got["recompiles"]["cases"][1]["reasons"]
    assert reason["guard"] == "kwargs['x'].size()[3] == kwargs['x'].size()[2]"
    assert (reason["path"], reason["line"], reason["source"]) == (
        "vit.py", 10, "if t.shape[1] == self.pos.shape[1] and w == h:")


def test_a_guard_on_a_floats_value_is_said_to_recompile_on_every_value():
    """dasp-pytorch's peak normaliser: `math.log10(peak.item() + 1e-12)` passes the float across
    the `.item()`'s break, and the frame after it guards its value. The review said "2 new
    recompiles over the shape matrix"; in a loop of same-shape batches every call recompiles,
    until the recompile limit (8). A float made from a size recompiles on new shapes only."""
    import cmarkgfm

    from pt2bot.compare import compare_model
    from pt2bot.config import Config
    from pt2bot.report.review import render_review
    from pt2bot.report.summary import render_summary
    from pt2bot.reportdata import Report
    from pt2bot.results import ModelRun
    from pt2bot.verdict import judge

    def reason(guard, line):
        return {"guard": guard, "dim": None, "kind": "guard", "path": "mixnet/model.py", "line": line,
                "source": {48: "self.last = math.log10(peak.item() + 1e-12)",
                           50: "y = F.interpolate(y, scale_factor=s)"}[line],
                "frame": {"function": "forward", "path": "mixnet/model.py", "line": 29}, "compile_id": "0/1"}

    def run(*cases):
        return ModelRun.from_json({"name": "eq", "status": "ok", "graph_breaks": [], "recompiles": {
            "count": sum(len(c) for c in cases), "size_one": 0, "cases": [
                {"shape": {"batch": b}, "compiled": True, "recompiles": len(c), "reasons": c}
                for b, c in zip((2, 4), cases)]}})
    head = run([reason("___stack2 == 0.7655948996543884", 48)],
               [reason("(((torch.sym_float(x.size()[0] // 2)) / 4.0)) == 1.0", 50)])
    m = compare_model("eq", run([], []), head, renames={}, line_map=lambda p, n: n, threshold_pct=10)
    [r] = [r for r in judge(findings=[], models=[m], head_results=None, base_results=None, config=Config())
           if r["code"] == "new_recompiles"]
    assert r["message"] == ("2 new recompile(s) over the shape matrix (allowed: 0); 1 on a float's value, "
                            "which recompiles on an input that gives another value, not only on a new shape")
    report = Report(head="h" * 40, base="b" * 40, models=(m,), reasons=(r,))
    summary = render_summary(report)
    assert summary.count("a float's value: a new value the data give compiles the frame again") == 1, summary
    review = render_review(report, lambda path, line: True)
    [c48] = [c for c in review["comments"] if c["line"] == 48]
    html = cmarkgfm.github_flavored_markdown_to_html(c48["body"])
    assert "💡 The guard holds a float's value: a new value the data give compiles the frame again, once where " \
        "dynamo can then trace the number as a symbol" in html
    [c50] = [c for c in review["comments"] if c["line"] == 50]
    assert "a float's value" not in c50["body"] and "sym_float" in c50["body"]


def test_a_case_that_raises_compiled_says_where_in_the_repository(tmp_path):
    """A compiled case that raised kept its message only; the run's line said "every case
    raised AssertionError: not simple sympy type <class 'NoneType'>: None" and named neither
    the line nor the file (a new user's dynamic `samples` into their own `unfold`)."""
    import textwrap

    torch = pytest.importorskip("torch")
    from pt2bot.smoke.matrix import measure_matrix
    from pt2bot.smoke.trace import reset_dynamo
    from tests.pymodule import load_module

    (tmp_path / "frames.py").write_text(textwrap.dedent("""\
        import torch


        class Frames(torch.nn.Module):
            def forward(self, x):
                if torch.compiler.is_compiling():
                    x = x.view(-1, 7)
                return x * 2
        """))
    model = load_module(tmp_path / "frames.py").Frames()
    cases = [CaseInputs(shape={"batch": b}, args=(torch.randn(b, 3),), kwargs={}) for b in (2, 3)]
    for c in cases:
        c.dims = {"x": {0: "batch"}}
    outs = [model(*c.args) for c in cases]
    try:
        got = measure_matrix(model, cases, outs, {}, {"backend": "eager"}, RepoPaths(str(tmp_path)))
    finally:
        reset_dynamo()
    [first, _] = got["recompiles"]["cases"]
    assert "is invalid for input of size" in first["error"], first["error"]
    assert first["error_at"] == {"path": "frames.py", "line": 7}


def test_a_specialised_size_no_configured_dim_names_is_said_by_torchs_name(tmp_path):
    """dasp-pytorch: "x was marked dynamic but the code specialised it to 2", `x` being the
    library's argument, not the user's input `audio`."""
    from pt2bot.smoke.matrix import specializations_from_exception

    exc = RuntimeError("Constraints violated (L['x'].size()[0])! - Not all values of L['x'].size()[0] "
                       "in the specified range are valid because L['x'].size()[0] was inferred to be "
                       "a constant (2).")
    case = CaseInputs(shape={"batch": 2}, args=(), kwargs={})
    case.dims = {"audio": {0: "batch"}}
    [s] = specializations_from_exception(exc, case, RepoPaths(str(tmp_path)))
    assert s["dim"] is None and s["input"] == "x.size()[0]"
    assert s["reason"] == ("`x.size()[0]` (torch's name, in the code that specialised it) was marked dynamic "
                           "but the code specialised it to 2")
    case.dims = {"x": {0: "batch"}}
    [s] = specializations_from_exception(exc, case, RepoPaths(str(tmp_path)))
    assert s["reason"] == "batch was marked dynamic but the code specialised it to 2"
