"""A dynamo setting proven like an edit: torch's own hint for `.item()` (GB0124) and for a
dynamic-shape operator (GB0036) is a setting, `capture_scalar_outputs` /
`capture_dynamic_output_shape_ops`. The proof runs the target's model again with it set, its
source unchanged: accepted only where the break is gone with no other one and compiled outputs
equal head's eager ones; posted as a line of text, never as a suggestion block."""
from __future__ import annotations

import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import SETTINGS, ProofSetting, gather, gather_settings, order, prove_on_model
from pt2bot.report.review import ProvenFixes, setting_text
from pt2bot.results import ResultsFile

MODELS = """\
import torch
from torch import nn


class Picked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        kept = h[h > 0]
        return h.sum() + kept.std()


class Branched(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        top = h.max().item()
        if top > 0:
            return h * 2
        return h - top      # (read after the `if`: no edit keeps `top` a tensor, the setting is tried)
"""
PICK, ITEM, IF = 12, 23, 24

CONFIG = """\
version: 1
models:
  - name: picked
    entry: pkg.m:Picked
    inputs: [{name: x, shape: [batch, 4]}]
    shapes: {batch: [2, 3]}
    export: false
  - name: branched
    entry: pkg.m:Branched
    inputs: [{name: x, shape: [batch, 4]}]
    shapes: {batch: [2, 3]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _repo(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(MODELS)
    (root / "pt2bot.yml").write_text(CONFIG)
    return root


def _target(model: str, line: int, gb: str) -> dict:
    return {"kind": "break", "model": model, "path": "pkg/m.py", "line": line, "gb": gb,
            "gb_type": "x", "fingerprint": f"fp-{line}"}


def test_the_setting_torch_names_is_a_candidate_after_every_edit(tmp_path):
    root = _repo(tmp_path)
    targets = [_target("branched", ITEM, "GB0124"), _target("picked", PICK, "GB0036"),
               _target("branched", IF, "GB0170")]
    edits, _ = gather(targets, [], str(root), None)
    assert not any(p.cand.setting for p in edits)     # a recipe's gather gives edits only
    proposals = order(edits + gather_settings(targets, [], str(root)))
    settings = [p for p in proposals if p.cand.setting]
    # (in the order of their place in the file, as edits of the same rank)
    assert [(p.cand.setting, p.targets, p.cand.start_line) for p in settings] == [
        ("capture_dynamic_output_shape_ops", [1], PICK), ("capture_scalar_outputs", [0], ITEM)]
    for p in settings:
        # the target's own line, unchanged: there is nothing to suggest on it
        assert p.patched == p.original == MODELS
        assert p.cand.lines == (MODELS.splitlines()[p.cand.start_line - 1],)
        assert p.cand.title == f"set `torch._dynamo.config.{p.cand.setting} = True` where the model is compiled"
    # tried last: every edit first
    assert all(not p.cand.setting for p in proposals[:len(proposals) - len(settings)])
    assert set(SETTINGS) == {"GB0124", "GB0036", "GB9186", "GB0033"}
    # torch's hint for a data-dependent operator (GB0033) names `capture_scalar_outputs` too
    assert [p.cand.setting for p in gather_settings([_target("branched", ITEM, "GB0033")], [], str(root))] == [
        "capture_scalar_outputs"]
    assert not any(2 in p.targets for p in settings)    # a data-dependent branch has none


@pytest.mark.torch
def test_the_proof_accepts_a_setting_only_where_the_break_does_not_move(tmp_path):
    root = _repo(tmp_path)
    targets = [_target("branched", ITEM, "GB0124"), _target("picked", PICK, "GB0036")]
    by = {p.cand.setting: p for p in order(gather_settings(targets, [], str(root)))}
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    deadline = time.monotonic() + 240

    pick = by["capture_dynamic_output_shape_ops"]
    got = prove_on_model(setting, config.model("picked"), None, [(pick, [targets[1]])], str(root),
                         deadline, str(tmp_path / "w1"))[pick.cid]
    assert got["accepted"] is True, got
    # (a setting changes compiled code only, its backward too: compiled gradients are compared)
    assert got["evidence"] == ("GB0036 gone, 1 graph instead of 2, compiled outputs equal head's "
                               "eager ones on 2 shape cases, compiled gradients equal on 2 shape "
                               "cases, compiled equal on inputs all 0, all 1 and with one NaN and on "
                               "weights all 0, gradients too"), got

    item = by["capture_scalar_outputs"]
    got = prove_on_model(setting, config.model("branched"), None, [(item, [targets[0]])], str(root),
                         deadline, str(tmp_path / "w2"))[item.cid]
    # the captured number decides the `if` below: the break moves there
    assert got["accepted"] is False, got
    assert got["reason"] == f"a new graph break: GB0170 at pkg/m.py:{IF}", got


def test_a_verified_setting_is_text_and_never_a_suggestion_block():
    row = {"id": "c3", "setting": "capture_scalar_outputs", "path": "pkg/m.py", "line": ITEM,
           "findings": ["fpf"], "targets": [0], "verified": True, "models": ["m"],
           "evidence": "verified on `m`: GB0124 gone"}
    fixes = ProvenFixes({"targets": [{"fingerprint": "fp-23"}], "candidates": [], "settings": [row]})
    assert fixes.verified_for(["fpf"]) is None        # no suggestion comes of it
    assert fixes.setting_for(["fp-23"]) is row and fixes.setting_for(["fpf"]) is row
    text = setting_text(row)
    assert "```suggestion" not in text
    assert text.startswith("⚙️ **Verified setting**, not a change to this line: "
                           "`torch._dynamo.config.capture_scalar_outputs = True`")
    assert "GB0124 gone" in text


def test_a_shards_setting_survives_partial_json_and_the_merge(tmp_path):
    # a sharded review posts what an unsharded one does: the setting's verdicts travel in
    # partial.json's `fixes` and the merge decides on them as the review does
    from pt2bot.errors import UserError
    from pt2bot.fixes import _join, _summarise
    from pt2bot.shard.partial import _fix_proof

    target = _target("picked", PICK, "GB0036")
    cand = {"rule": "", "title": "set `torch._dynamo.config.capture_dynamic_output_shape_ops = True` "
                                 "where the model is compiled",
            "path": "pkg/m.py", "start_line": PICK, "end_line": PICK,
            "lines": [MODELS.splitlines()[PICK - 1]], "safe": False, "guards": [], "rank": 1_000_000,
            "setting": "capture_dynamic_output_shape_ops", "by_target": [[0, []]],
            "results": {"picked": {"accepted": True, "evidence": "with ..., GB0036 gone"}}}
    proof = {"budget_s": 300.0, "spent_s": 3.0,
             "targets": [{**target, "reason": None}], "candidates": [cand]}
    assert _fix_proof(proof, "partial.json", {"picked"}) is proof
    with pytest.raises(UserError, match="setting"):
        _fix_proof({**proof, "candidates": [{**cand, "setting": "suppress_errors"}]},
                   "partial.json", {"picked"})
    config = build_config(CONFIG, str(tmp_path / "pt2bot.yml"))
    proposals, why, _ = _join([target], [proof], config, ResultsFile.empty(), {"picked"})
    fixes = _summarise([target], order(proposals), why, config, 3.0)
    assert fixes["candidates"] == []
    [row] = fixes["settings"]
    assert (row["setting"], row["verified"], row["targets"], row["models"]) == (
        "capture_dynamic_output_shape_ops", True, [0], ["picked"])
    assert fixes["targets"][0]["setting"] == row["id"] and fixes["targets"][0]["fixed_by"] is None


def test_torchs_hint_gives_way_to_the_proof_of_its_setting():
    # torch's hint for GB0124/GB0036 is the setting itself: once proven, either way, the
    # comment says the proof's answer instead of the unproven hint
    row = {"id": "c1", "setting": "capture_scalar_outputs", "findings": [], "targets": [0],
           "verified": False, "reason": "a new graph break: GB0170 at pkg/m.py:24"}
    targets = [{"fingerprint": "fp-23"}, {"fingerprint": "fp-40"}]
    fixes = ProvenFixes({"targets": targets, "candidates": [], "settings": [row]})
    assert not fixes.hints_stand(["fp-23"]) and fixes.hints_stand(["fp-40"])
    assert fixes.setting_for(["fp-23"]) is None and fixes.failed_for(["fp-23"]) is row
    proven = ProvenFixes({"targets": targets, "candidates": [],
                          "settings": [{**row, "verified": True, "reason": None}]})
    assert not proven.hints_stand(["fp-23"])


@pytest.mark.torch
def test_pt2bot_testing_proves_the_setting_too(tmp_path):
    # the same proof in the user's own tests: Picked's `h[h > 0]` has no edit, the setting holds;
    # Branched's `.item()` setting moves the break to the `if` and is returned as rejected
    import torch
    from pymodule import load_module

    from pt2bot.testing import verified_fixes

    (tmp_path / "pyproject.toml").write_text("")
    path = tmp_path / "setmod.py"
    path.write_text(MODELS)
    mod = load_module(path, prefix="fixsetting")
    x = torch.randn(2, 4)
    [picked] = [f for f in verified_fixes(mod.Picked().eval(), x, user_code=str(tmp_path),
                                          include_rejected=True) if f.setting]
    assert (picked.setting, picked.start_line, picked.verified, picked.lines, picked.diff) == (
        "capture_dynamic_output_shape_ops", PICK, True, (), "")
    assert picked.evidence.startswith("GB0036 gone, 1 graph instead of 2, compiled outputs equal")
    branched = verified_fixes(mod.Branched().eval(), x, user_code=str(tmp_path), include_rejected=True)
    [item] = [f for f in branched if f.setting]
    assert (item.setting, item.verified, item.reason) == (
        "capture_scalar_outputs", False, f"a new graph break: GB0170 at setmod.py:{IF}")
    assert not any(f.setting for f in verified_fixes(mod.Branched().eval(), x, user_code=str(tmp_path)))
    assert path.read_text() == MODELS


def test_a_setting_does_not_count_a_break_in_a_skipped_frame_as_uncovered():
    # an edit may uncover a break in code head ran uncompiled (its frame skipped after a break
    # in a loop); under a setting that break is where the captured value is used: refused
    from pt2bot.smoke.patch import Edit
    from pt2bot.smoke.verify import judge

    head = {"graph_count": 1, "phase_errors": {}, "eager_frames": [
                {"function": "decode", "path": "pkg/m.py", "line": 20, "end": 30}],
            "breaks": [{"gb": "GB0124", "path": "pkg/m.py", "line": 22, "function": "decode"}]}
    moved = {"graph_count": 1, "phase_errors": {}, "outputs": [{"shape": {}, "match": True}],
             "compiled": [{"shape": {}, "match": True}],
             "breaks": [{"gb": "GB7000", "path": "pkg/m.py", "line": 26, "function": "decode"}]}
    target = {"kind": "break", "path": "pkg/m.py", "line": 22, "gb": "GB0124"}
    edit = Edit(path="pkg/m.py", start_line=22, end_line=22, new_lines=1)
    as_edit = judge(head, moved, [target], edit)
    as_setting = judge(head, {**moved, "setting": "capture_scalar_outputs"}, [target], edit)
    assert as_edit["accepted"] and "uncovers GB7000 at pkg/m.py:26" in as_edit["evidence"], as_edit
    assert as_setting == {"accepted": False, "evidence": "",
                          "reason": "a new graph break: GB7000 at pkg/m.py:26"}


def test_a_setting_whose_compile_raised_says_it_raised_not_that_outputs_differ():
    # a new user's norse model: under the setting, the compile raised on the dynamic batch (as
    # head's own compiled code did there); "the model's outputs differ" named no output
    from pt2bot.smoke.patch import Edit
    from pt2bot.smoke.verify import judge

    head = {"graph_count": 2, "phase_errors": {},
            "breaks": [{"gb": "GB0124", "path": "pkg/m.py", "line": 22, "function": "forward"}]}
    raised = ("forward(batch=4) raised TorchRuntimeError: RuntimeError when making fake tensor call\n"
              "  Explanation: ...")
    cand = {"graph_count": 1, "phase_errors": {}, "setting": "capture_scalar_outputs", "breaks": [],
            "outputs": [{"shape": {"batch": 4}, "match": True}],
            "compiled": [{"shape": {"batch": 4}, "match": False, "message": raised}]}
    target = {"kind": "break", "path": "pkg/m.py", "line": 22, "gb": "GB0124"}
    verdict = judge(head, cand, [target], Edit(path="pkg/m.py", start_line=22, end_line=22, new_lines=1))
    assert verdict["reason"] == ("compiled with `capture_scalar_outputs = True`, the model raised on shape "
                                 f"case batch=4: {raised}")
    differs = {**cand, "compiled": [{"shape": {"batch": 4}, "match": False, "max_abs_err": 0.5}]}
    assert judge(head, differs, [target], Edit(path="pkg/m.py", start_line=22, end_line=22, new_lines=1)
                 )["reason"] == ("compiled with `capture_scalar_outputs = True`, the model's outputs differ "
                                 "from head's eager ones on shape case batch=4 (max abs error 0.5)")


TWO_SITES = """\
import torch
from torch import nn


class TwoItems(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        top = h.abs().max().item()
        h = h / (top + 1.0)
        low = h.min().item()
        return h - low


class TwoBranches(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        top = h.max().item()
        if top > 0:
            h = h * 2
        low = h.min().item()
        if low < 0:
            h = h - low
        return h
"""
# CONFIG's two models, as `items` and `branches`
TWO_CONFIG = (CONFIG.replace("name: picked", "name: items").replace("Picked", "TwoItems")
              .replace("name: branched", "name: branches").replace("Branched", "TwoBranches"))


@pytest.mark.torch
def test_a_setting_is_measured_once_per_model_and_judged_per_site(tmp_path):
    """A setting runs head's own code, so its facts are the same at each site it is offered
    for: one model's worker measures it once and judges every site on them (e2cnn's model ran
    the same setting six times). Each site's verdict is the one its own worker gives: both
    `.item()`s of `items` verified, both of `branches` refused by the `if` each captured
    number decides (there the break pass stops the first run, and the second site is refused
    on the same facts)."""
    import json

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(TWO_SITES)
    (root / "pt2bot.yml").write_text(TWO_CONFIG)
    config = build_config(TWO_CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    deadline = time.monotonic() + 240
    for name, lines, accepted in (("items", (12, 14), True), ("branches", (12, 15), False)):
        targets = [_target(name, line, "GB0124") for line in lines]
        props = order(gather_settings(targets, [], str(root)))
        assert len(props) == 2
        items = [(p, [targets[p.targets[0]]]) for p in props]
        together = prove_on_model(setting, config.model(name), None, items, str(root), deadline,
                                  str(tmp_path / f"{name}-together"))
        with open(tmp_path / f"{name}-together" / f"{name}-1" / "progress.jsonl") as fh:
            records = {r["id"]: r for r in map(json.loads, fh)}
        assert [bool(records[p.cid].get("reused")) for p in props] == [False, True]
        assert [together[p.cid]["accepted"] for p in props] == [accepted, accepted], together
        # the site judged on the first site's facts, proven alone in a worker of its own
        item = items[1]
        alone = prove_on_model(setting, config.model(name), None, [item], str(root), deadline,
                               str(tmp_path / f"{name}-alone"))[item[0].cid]
        keys = ("accepted", "reason", "evidence", "graph_count")
        assert {k: together[item[0].cid].get(k) for k in keys} == {k: alone.get(k) for k in keys}


PENALTY = """\
import torch
from torch import nn


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 1)

    def forward(self, x):
        x = x.detach().requires_grad_(True)
        score = self.lin(torch.tanh(x)).sum()
        grads = torch.autograd.grad(score, x, create_graph=True)[0]
        return ((grads.norm(2, dim=1) - 1) ** 2).mean()
"""
GRAD = 13


@pytest.mark.torch
def test_torchs_setting_for_autograd_grad_is_proven_like_the_others(tmp_path):
    """A gradient penalty (torchgan's WGAN-GP) calls `torch.autograd.grad` in the compiled
    forward: GB9186, whose hint is `trace_autograd_ops = True`. The setting is offered and
    proven as the other two are: here the break is gone and compiled outputs equal eager
    (`grad: true`: the forward differentiates inside itself)."""
    config_text = CONFIG.replace("pkg.m:Picked", "pkg.m:Critic\n    grad: true").split(
        "  - name: branched")[0] + "run: {backend: eager, latency: false, timeout_s: 120}\n" \
        "fixes: {budget_s: 240}\n"
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(PENALTY)
    (root / "pt2bot.yml").write_text(config_text)
    target = _target("picked", GRAD, "GB9186")
    (prop,) = gather_settings([target], [], str(root))
    assert prop.cand.setting == SETTINGS["GB9186"] == "trace_autograd_ops"
    config = build_config(config_text, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    got = prove_on_model(setting, config.model("picked"), None, [(prop, [target])], str(root),
                         time.monotonic() + 240, str(tmp_path / "w"))[prop.cid]
    assert got["accepted"] is True, got
    # (`requires_grad_` on the input still breaks, before the penalty, with or without it)
    assert got["evidence"] == ("GB9186 gone, 2 graphs instead of 3, compiled outputs equal "
                               "head's eager ones on 2 shape cases, compiled gradients equal on 2 "
                               "shape cases, compiled equal on inputs all 0, all 1 and with one NaN and "
                               "on weights all 0, gradients too"), got


RECALL = """\
import torch
from torch import nn


def recall(pred, target):
    num_tp = torch.zeros(4).scatter_add(0, target, (pred == target).float())
    num_labels = torch.bincount(target, minlength=4).float()
    mask = num_labels != 0
    return (num_tp[mask] / num_labels).sum()


class Clf(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x, target):
        logits = self.lin(x)
        return logits.sum() + recall(logits.argmax(-1), target)
"""
RECALL_CONFIG = """\
version: 1
models:
  - name: clf
    entry: pkg.m:Clf
    inputs: [{name: x, shape: [batch, 8]}, {name: target, shape: [batch], dtype: int64, low: 0, high: 4}]
    shapes: {batch: [64, 96]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


def _prove_one(tmp_path, source: str, config_text: str, model: str, line: int) -> dict:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "m.py").write_text(source)
    (root / "pt2bot.yml").write_text(config_text)
    target = {"kind": "break", "model": model, "path": "pkg/m.py", "line": line, "gb": "GB0036",
              "gb_type": "Dynamic shape operator", "fingerprint": f"fp-{line}"}
    (prop,) = gather_settings([target], [], str(root))
    assert prop.cand.setting == "capture_dynamic_output_shape_ops"
    config = build_config(config_text, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    return prove_on_model(setting, config.model(model), None, [(prop, [target])], str(root),
                          time.monotonic() + 240, str(tmp_path / "w"))[prop.cid]


@pytest.mark.torch
def test_a_setting_whose_compiled_code_raises_where_head_broadcasts_is_refused(tmp_path):
    """torcheval's weighted recall: `num_tp[mask] / num_labels` broadcasts in eager where the
    mask keeps one class. With capture_dynamic_output_shape_ops the kept count is an unbacked
    size, which compiled code asserts equal to 4: a runtime assertion fails where head
    returns. The shape cases' random labels hold every class, so they never show it; the
    constant inputs' labels all 0, run compiled with the setting, do."""
    got = _prove_one(tmp_path, RECALL, RECALL_CONFIG, "clf", 9)
    assert got["accepted"] is False, got
    assert got["reason"].startswith(
        "compiled, on the model's inputs all 0 (rows all alike), the outputs differ from head's "
        "(head returned, patched raised"), got
    assert "Runtime assertion failed for expression" in got["reason"], got


ONE_HOT = """\
import torch
from torch import nn


def pick(q):
    chosen = q[nn.functional.one_hot(q.abs().argmax(-1), 4) > 0.5]
    return chosen.reshape(q.shape[0], 1)


class Pick(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 4)

    def forward(self, x):
        return pick(self.lin(x))
"""


@pytest.mark.torch
def test_a_setting_whose_compiled_code_assumes_a_size_says_so(tmp_path):
    """pytorch3d's quaternion from a one-hot selection reshaped to the batch: compiled code
    asserts `Eq(u0, 2)` of the selection's size, which eager code needs too (its reshape
    raises otherwise). No input of the proof tells that case from torcheval's, where eager
    broadcasts a selection of one: the evidence says what compiled code assumes."""
    got = _prove_one(tmp_path, ONE_HOT, RECALL_CONFIG.replace("pkg.m:Clf", "pkg.m:Pick").replace(
        "inputs: [{name: x, shape: [batch, 8]}, {name: target, shape: [batch], dtype: int64, low: 0, "
        "high: 4}]", "inputs: [{name: x, shape: [batch, 8]}]").replace("{batch: [64, 96]}", "{batch: [2, 3]}"),
        "clf", 6)
    assert got["accepted"] is True, got
    assert got["evidence"].endswith(
        "but compiled code asserts `Eq(u0, 2)`, `u0 >= 2` of a data-dependent size: an input whose "
        "data make that size another number raises there, as head's eager code does unless it "
        "broadcasts a selection of one element"), got


@pytest.mark.parametrize("expr,assumed", [
    ("Eq(u0, 4)", True), ("u1 >= 4", True), ("Eq(4, u2)", True), ("u0 >= 2", True),
    ("u0 >= 0", False), ("u0 >= 1", False), ("u0 <= 4", False), ("Eq(s0, 4)", False),
    ("u0 + u1 >= 4", False)])
def test_what_counts_as_an_assumed_size(expr, assumed):
    from pt2bot.smoke.verify import _assumes_size
    assert _assumes_size(expr) is assumed
