"""`draft_export` only where the review's report needs it (pipeline.needs_location).

When torch's export error names no line, the worker can ask `draft_export` where the failure
is; that re-traces the model, often the costliest step of a model's run. A review locates
head's failure only when it is new, when it changed, or when a head finding with an export
claim sits in a file the model ran (the location could confirm it); never on base.
"""
from __future__ import annotations

import json
import sys

import pytest

from gitrepo import GitRepo
from pt2bot.cli import main
from pt2bot.pipeline import export_claim_paths, needs_location
from pt2bot.results import ModelRun


def _run(ok: bool | None, kind: str | None = None, message: str | None = None,
         path: str | None = None, coverage: dict | None = None, status: str = "ok") -> ModelRun:
    return ModelRun.from_json({
        "name": "m", "status": status, "coverage": coverage,
        "export": {"ok": ok, "kind": kind, "message": message, "path": path, "line": None,
                   "source": None, "static_dims": [], "cases": []}})


FAIL = dict(ok=False, kind="constraint_violation", message="Constraints violated (batch)!")


def test_a_new_or_changed_unlocated_failure_is_located():
    head = _run(**FAIL)
    assert needs_location(head, _run(ok=True), set())                  # base exported
    assert needs_location(head, None, set())                           # no such model on base
    assert needs_location(head, _run(ok=None), set())                  # base did not export
    assert needs_location(head, _run(**{**FAIL, "kind": "data_dependent"}), set())
    assert needs_location(head, _run(**{**FAIL, "message": "other"}), set())


def test_the_same_failure_on_both_sides_is_located_only_for_a_finding_it_could_confirm():
    head = _run(**FAIL, coverage={"pkg/m.py": "1-9"})
    base = _run(**FAIL)
    assert not needs_location(head, base, set())
    assert not needs_location(head, base, {"pkg/other.py"})
    assert needs_location(head, base, {"pkg/m.py"})
    assert needs_location(head, base, None)                            # findings not known


def test_nothing_to_locate():
    assert not needs_location(_run(ok=True), _run(ok=True), None)
    assert not needs_location(_run(**FAIL, path="pkg/m.py"), _run(ok=True), None)  # located
    assert not needs_location(_run(ok=None), _run(ok=True), None)
    assert not needs_location(_run(**FAIL, status="error"), _run(ok=True), None)


def test_export_claim_paths_are_the_files_of_findings_with_an_export_claim():
    from pt2bot.findings import Finding
    from pt2bot.reach import EVIDENCE_FOR, EXPORT, rule_claims

    claims = rule_claims()
    export_rule = next(r for r, c in claims.items() if EXPORT in EVIDENCE_FOR.get(c or "", ()))
    break_rule = next(r for r, c in claims.items() if c == "break")
    found = [Finding(rule=export_rule, path="a.py", line=1, col=0, severity="error", message="m"),
             Finding(rule=break_rule, path="b.py", line=1, col=0, severity="error", message="m")]
    assert export_claim_paths(found) == {"a.py"}


# ----------------------------------------------------------------- a real review

CONFIG = """\
version: 1
static: {paths: [other/]}
models:
  - name: steady
    entry: pkg.steady:Steady
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [4, 8]}
    dynamic: [batch]
  - name: broken
    entry: pkg.broken:Broken
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [4, 8]}
    dynamic: [batch]
run: {backend: eager, latency: false, timeout_s: 300, threads: 1}
"""

SPECIALISES = """\
import torch
from torch import nn


class {name}(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return h.reshape(4, -1){comment}
"""
CLEAN = """\
import torch
from torch import nn


class Broken(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return h.relu()
"""


@pytest.mark.torch
def test_review_locates_heads_new_failure_and_not_one_base_shares(tmp_path, monkeypatch):
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pt2bot.yml", CONFIG)
    repo.write("other/__init__.py", "")
    repo.write("pkg/__init__.py", "")
    repo.write("pkg/steady.py", SPECIALISES.format(name="Steady", comment=""))
    repo.write("pkg/broken.py", CLEAN)
    repo.commit("base")
    repo.branch("pr")
    repo.write("pkg/steady.py", SPECIALISES.format(name="Steady", comment="  # touched"))
    repo.write("pkg/broken.py", SPECIALISES.format(name="Broken", comment=""))
    repo.commit("pr")
    monkeypatch.chdir(repo.path)
    out = tmp_path / "out"
    assert main(["review", "--base", "main", "--out", str(out), "--device", "cpu"]) == 1
    head = {m["name"]: m["export"] for m in json.loads((out / "head.json").read_text())["models"]}
    base = {m["name"]: m["export"] for m in json.loads((out / "base.json").read_text())["models"]}
    # torch's constraint error names no line: draft_export finds it, for the new failure only
    assert (head["broken"]["ok"], head["broken"]["kind"]) == (False, "constraint_violation")
    assert (head["broken"]["path"], head["broken"]["line"]) == ("pkg/broken.py", 12)
    assert (head["steady"]["ok"], head["steady"]["kind"]) == (False, "constraint_violation")
    assert head["steady"]["message"] == base["steady"]["message"]
    assert head["steady"]["path"] is None and base["steady"]["path"] is None
    assert base["broken"]["ok"] is True


LIBRARY = """import torch


def energy(numbers, x):
    if torch.max(numbers) >= 100:
        raise ValueError("unknown element")
    return (x * numbers[..., None]).sum(-1)
"""
CALLS_LIBRARY = """import torch
import extlib_locate


class M(torch.nn.Module):
    def forward(self, numbers, x):
        e = extlib_locate.energy(numbers, x)
        return e.sum(-1)
"""


@pytest.mark.torch
def test_a_failure_inside_a_library_is_located_at_the_users_call_without_draft_export(
        tmp_path, monkeypatch):
    """tad-dftd3's data-dependent check failed export inside the library, torch's message named
    only its own `non_strict_utils.py`, and draft_export failed too: the report had no line.
    Non-strict export ran the user's line that called the library, so the traceback has it:
    located for free, and draft_export is not run."""
    import torch

    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "extlib_locate.py").write_text(LIBRARY)
    (tmp_path / "repo" / "pkg_locate").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_locate" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_locate" / "m.py").write_text(CALLS_LIBRARY)
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    calls = []

    def draft_export(*a, **k):
        calls.append(1)
        raise RuntimeError("draft_export broke")

    monkeypatch.setattr(torch.export, "draft_export", draft_export)
    s = spec("m", "pkg_locate.m:M", phases=("export",), shapes={"batch": [2, 3]},
             inputs=[{"name": "numbers", "shape": ["batch", 5], "dtype": "int64", "low": 1,
                      "high": 9}, {"name": "x", "shape": ["batch", 5, 3]}])
    s["repo_root"] = str(tmp_path / "repo")
    e = measure(s)["export"]
    assert (e["ok"], e["kind"]) == (False, "data_dependent")
    assert (e["path"], e["line"], e["source"]) == (
        "pkg_locate/m.py", 7, "e = extlib_locate.energy(numbers, x)")
    assert calls == []


@pytest.mark.torch
def test_a_constraint_violation_is_located_where_export_pinned_the_dim_without_draft_export(
        tmp_path, monkeypatch):
    """torch's "Constraints violated (batch)!" names no line, and draft_export found it by
    tracing the model again: 43 of a 49 s export phase on mamba-minimal's unrolled scan. The
    failing export already logged where it pinned the dim (its `symbolic_shape_specialization`
    event): that place is the failure's, and draft_export is not run."""
    import torch

    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_pin").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_pin" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_pin" / "broken.py").write_text(SPECIALISES.format(name="Broken", comment=""))
    calls = []

    def draft_export(*a, **k):
        calls.append(1)
        raise RuntimeError("draft_export broke")

    monkeypatch.setattr(torch.export, "draft_export", draft_export)
    s = spec("broken", "pkg_pin.broken:Broken", phases=("export",), shapes={"batch": [4, 8]},
             dynamic=("batch",), inputs=[{"name": "x", "shape": ["batch", 8]}])
    s["repo_root"] = str(tmp_path / "repo")
    e = measure(s)["export"]
    assert (e["ok"], e["kind"]) == (False, "constraint_violation")
    assert (e["path"], e["line"], e["source"]) == ("pkg_pin/broken.py", 12, "return h.reshape(4, -1)")
    assert calls == []


WINDOW = '''\
import torch
from torch import nn


class Window(nn.Module):
    def forward(self, x, pos):
        b, t = pos.shape
        assert x.shape[0] == b and x.shape[1] == t
        w = min(8, x.shape[1])
        keys = x[:, -w:]
        return keys.sum(1) + pos.float().sum(1, keepdim=True)
'''


@pytest.mark.torch
def test_a_window_clamped_by_a_number_is_located_at_its_slice(tmp_path, monkeypatch):
    """recurrentgemma's local attention slices its last `w = min(window, seq)` keys: the
    violated guards clamp `seq` by the window (`16*s == 16*Min(8, s)`), and the failure was
    placed at the `assert` on the inputs' shapes above it, whose guards (`Eq(s15, s77)`) hold."""
    import torch

    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_window").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_window" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_window" / "m.py").write_text(WINDOW)
    calls = []

    def draft_export(*a, **k):
        calls.append(1)
        raise RuntimeError("draft_export broke")

    monkeypatch.setattr(torch.export, "draft_export", draft_export)
    s = spec("window", "pkg_window.m:Window", phases=("export",), shapes={"batch": [2], "seq": [8, 12]},
             dynamic=("batch", "seq"), inputs=[{"name": "x", "shape": ["batch", "seq", 4]},
                                              {"name": "pos", "shape": ["batch", "seq"], "dtype": "int64"}])
    s["repo_root"] = str(tmp_path / "repo")
    e = measure(s)["export"]
    assert (e["ok"], e["kind"]) == (False, "constraint_violation")
    assert (e["path"], e["line"], e["source"]) == ("pkg_window/m.py", 10, "keys = x[:, -w:]")
    assert calls == []


WINDOWS = '''\
import torch
from torch import nn


def window_reverse(windows, ws, H, W):
    B = int(windows.shape[0] / (H * W / ws / ws))
    x = windows.view(B, H // ws, W // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


class Windows(nn.Module):
    def forward(self, x):
        B, H, W, C = x.shape
        w = x.view(B, H // 4, 4, W // 4, 4, C).permute(0, 1, 3, 2, 4, 5).reshape(-1, 4, 4, C)
        return window_reverse(w * 2, 4, H, W)
'''


@pytest.mark.torch
def test_a_size_truncated_by_int_of_a_division_is_located_at_the_int_and_said(tmp_path):
    """Swin's `window_reverse`: `B = int(windows.shape[0] / (H * W / ws / ws))`. torch's error
    names the `view` below, and the review said batch could not be dynamic; the guard the export
    added is `TruncToInt(FloatTrueDiv(...))` at the `int(...)`, and `//` exports."""
    from pt2bot.smoke.export import TRUNCATED_DIVISION
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    for name, text in (("trunc", WINDOWS), ("floor", WINDOWS.replace(
            "int(windows.shape[0] / (H * W / ws / ws))", "windows.shape[0] // ((H // ws) * (W // ws))"))):
        (tmp_path / "repo" / "pkg_win").mkdir(parents=True, exist_ok=True)
        (tmp_path / "repo" / "pkg_win" / "__init__.py").write_text("")
        (tmp_path / "repo" / "pkg_win" / f"{name}.py").write_text(text)
        s = spec(name, f"pkg_win.{name}:Windows", phases=("export",), shapes={"batch": [2, 3]},
                 dynamic=("batch",), inputs=[{"name": "x", "shape": ["batch", 8, 8, 3]}])
        s["repo_root"] = str(tmp_path / "repo")
        e = measure(s)["export"]
        if name == "trunc":
            assert (e["ok"], e["kind"]) == (False, "constraint_violation"), e
            assert (e["path"], e["line"]) == ("pkg_win/trunc.py", 6), e
            assert e["source"].startswith("B = int(windows.shape[0] /") and e["hint"] == TRUNCATED_DIVISION
        else:
            assert e["ok"] is True and "hint" not in e, e


@pytest.mark.torch
def test_the_shape_advice_says_where_and_why_the_truncated_division_pins_the_dim(tmp_path):
    from pt2bot.smoke.export import TRUNCATED_DIVISION
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_adv").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_adv" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_adv" / "w.py").write_text(WINDOWS)
    s = spec("w", "pkg_adv.w:Windows", phases=("export", "advice"), shapes={"batch": [2, 3]},
             dynamic=("batch",), inputs=[{"name": "x", "shape": ["batch", 8, 8, 3]}])
    s["repo_root"] = str(tmp_path / "repo")
    advice = measure(s)["shape_advice"]
    [axis] = [a for dims in advice["export"]["dynamic_shapes"].values() for a in dims.values()
              if isinstance(a, dict) and a.get("static")]
    assert (axis["path"], axis["line"]) == ("pkg_adv/w.py", 6), advice
    assert axis["reason"] == f"the code specialises batch to 2: {TRUNCATED_DIVISION}"


BACKBONE = '''\
import torch
from torch import nn


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward_features(self, x, masks=None):
        h = self.lin(x)
        return h if masks is None else h * masks

    def forward(self, *args, is_training=False, **kwargs):
        return self.forward_features(*args, **kwargs)
'''


@pytest.mark.torch
def test_a_forward_that_takes_star_args_gets_its_input_positionally_and_exports(tmp_path):
    """dinov2's backbone, `forward(self, *args, is_training=False, **kwargs)`: pt2bot gave the
    image by keyword, into `**kwargs`, and torch.export refused the dims keyed `x` ("its
    top-level keys must be the arg names ['kwargs']"): "export fails (error)" on every model, and
    a real export regression of a PR read "same". The first input goes into `*args`, as callers
    pass it; an input that still reaches `**kwargs` makes export not measured, said so."""
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_star").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_star" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_star" / "m.py").write_text(BACKBONE)
    s = spec("m", "pkg_star.m:Backbone", phases=("breaks", "matrix", "export"), shapes={"batch": [2, 3]},
             inputs=[{"name": "x", "shape": ["batch", 4]}])
    s["repo_root"] = str(tmp_path / "repo")
    r = measure(s)
    assert r["status"] == "ok" and r["export"]["ok"] is True, r["export"]
    assert [c["match"] for c in r["export"]["cases"]] == [True, True]
    s["model"]["inputs"] = [{"name": "x", "shape": ["batch", 4]},
                            {"name": "masks", "shape": ["batch", 4], "dtype": "bool"}]
    r = measure(s)
    assert r["status"] == "ok" and r["export"]["ok"] is None
    assert r["export"]["message"].startswith("not measured: forward takes `masks` through `**kwargs`")


@pytest.mark.torch
def test_a_factorys_dict_into_a_star_args_forward_exports_too(tmp_path):
    """The dinov2 trial built its images with an `inputs_entry` factory returning `{"x": ...}`:
    the same keyword call into `**kwargs`, the same refused export."""
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_starf").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_starf" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_starf" / "m.py").write_text(
        BACKBONE + "\n\ndef images(batch):\n    import torch\n    return {'x': torch.randn(batch, 4)}\n")
    s = spec("m", "pkg_starf.m:Backbone", phases=("breaks", "matrix", "export"), shapes={"batch": [2, 3]},
             inputs=None, inputs_entry="pkg_starf.m:images")
    s["model"].pop("inputs", None)
    s["repo_root"] = str(tmp_path / "repo")
    r = measure(s)
    assert r["status"] == "ok" and r["export"]["ok"] is True, r["export"]
    assert [c["match"] for c in r["export"]["cases"]] == [True, True]


@pytest.mark.torch
def test_the_shape_advice_of_a_star_args_forward_is_derived_and_exported_as_torch_keys_it(tmp_path):
    """The shape advice of dinov2's backbone was "not derived": its spec names each input's
    dims, and torch keys a `*args` forward's inputs as one tuple under `args`. It is derived
    with the inputs named, then exported on the model itself keyed under `args`, and its code
    is the spec a user passes there (a dict keyed `x` is refused by torch)."""
    import torch

    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / "pkg_stara").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_stara" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_stara" / "m.py").write_text(BACKBONE)
    s = spec("m", "pkg_stara.m:Backbone", phases=("breaks", "matrix", "export", "advice"),
             shapes={"batch": [2, 3]}, inputs=[{"name": "x", "shape": ["batch", 4]}])
    s["repo_root"] = str(tmp_path / "repo")
    r = measure(s)
    advice = r["shape_advice"]
    assert advice["export"]["ok"] is True, advice
    assert advice["export"]["dynamic_shapes"] == {"x": {"0": {"name": "batch", "min": None, "max": None,
                                                               "multiple_of": None}}}
    assert [c["match"] for c in advice["export"]["cases"]] == [True, True]
    code = advice["code"]["python"]
    assert "dynamic_shapes = {'args': ({0: batch},)}" in code, code
    # the code runs as it says on the model: its spec is the one torch takes
    sys.path.insert(0, str(tmp_path / "repo"))
    try:
        import pkg_stara.m as mod

        scope = {"torch": torch, "model": mod.Backbone(), "args": (torch.randn(3, 4),), "kwargs": None}
        exec(code, scope)
        assert scope["ep"].module()(torch.randn(5, 4)).shape == (5, 4)
    finally:
        sys.path.remove(str(tmp_path / "repo"))
        sys.modules.pop("pkg_stara.m", None)
        sys.modules.pop("pkg_stara", None)
    # an input that reaches `**kwargs` can be keyed by no name: not derived, said so
    s["model"]["inputs"] = [{"name": "x", "shape": ["batch", 4]},
                            {"name": "masks", "shape": ["batch", 4], "dtype": "bool"}]
    r = measure(s)
    assert r["shape_advice"]["export"]["ok"] is None
    assert any("`masks` through `**kwargs`" in n for n in r["shape_advice"]["notes"])


DRAWS = '''\
import numpy as np
import torch
from torch import nn


class Mix(nn.Module):
    def forward(self, x):
        lam = DRAW
        idx = torch.randperm(x.shape[0])
        return lam * x + (1 - lam) * x[idx]
'''


@pytest.mark.torch
@pytest.mark.parametrize("pkg, draw, frozen", [
    ("pkg_draws_np", "float(np.random.beta(1.0, 1.0))", True),   # numpy's draw: a constant in the program
    ("pkg_draws_torch", "torch.rand(()) * 0.5", False),          # torch's draw: an op of the program
    ("pkg_draws_none", "0.5", False),                            # no draw of its own (randperm is an op)
])
def test_an_export_whose_draws_were_fixed_is_said_so(tmp_path, pkg, draw, frozen):
    """A new user's CutMix drew its mixing ratio with numpy: the exported program kept the
    export's draw, and every compared call, seeded alike, equalled eager ("export ✓ same") for
    a program that mixes every batch alike. Under another seed the program and eager differ."""
    from pt2bot.results import ModelRun
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    (tmp_path / "repo" / pkg).mkdir(parents=True)
    (tmp_path / "repo" / pkg / "__init__.py").write_text("")
    (tmp_path / "repo" / pkg / "m.py").write_text(DRAWS.replace("DRAW", draw))
    s = spec("mix", f"{pkg}.m:Mix", phases=("export",), shapes={"batch": [4, 6]},
             dynamic=("batch",), inputs=[{"name": "x", "shape": ["batch", 3]}])
    s["repo_root"] = str(tmp_path / "repo")
    e = measure(s)["export"]
    assert e["ok"] is True and all(c["match"] for c in e["cases"]), e
    assert bool(e.get("frozen")) is frozen, e
    if frozen:
        assert e["frozen"].startswith("its random draws are fixed: under another seed than the one it was "
                                      "exported under, the exported program's outputs differ from eager's "
                                      "on shape case batch=4"), e
        from pt2bot.report.summary import _export_cell
        assert _export_cell({"export": e}) == "⚠️ exports, its random draws fixed"
        assert ModelRun.from_json({"name": "mix", "status": "ok", "export": e}).export.frozen == e["frozen"]
