"""The recipes for module state stored in compiled code (PTC110: a cache the function fills and
reads itself, an attribute converted under a test) and for a list of Python ints made through a
tensor (PTC102: `torch.arange(<ints>).tolist()`), from the shapes of the real-code benchmark's
findings (timm's attention-bias and pinv caches, kornia's PROSAC schedule and excluded labels,
monai's Dice loss axes).

Static: what each recipe writes, and the code it refuses. Real torch (eager backend, one
thread): the candidate stops the recompile (or the break) and computes what head computes,
compiled and eager; the variants the recipes refuse are shown wrong; and the proof loop (a real
proof worker) verifies the `list(range(...))` rewrite and rejects an off-by-one variant of it."""
from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths


def findings(tmp_path: Path, text: str, code: str):
    src = textwrap.dedent(text)
    (tmp_path / "m.py").write_text(src)
    return src, [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
                 if f.rule == code]


def only(tmp_path: Path, text: str, code: str):
    src, fs = findings(tmp_path, text, code)
    assert len(fs) == 1, fs
    return src, fs[0], fix_candidates(fs[0], src)


# --- PTC102 `torch.arange(<ints>).tolist()` -> `list(range(<ints>))` --------------------------

AXES = """\
import torch


class Loss(torch.nn.Module):
    def forward(self, input, target):
        {line}
        return (input - target).abs().sum(dim=reduce_axis)


g = torch.compile(Loss())
"""


@pytest.mark.parametrize("line, want", [
    # monai's Dice loss: the spatial axes of the input
    ("reduce_axis: list[int] = torch.arange(2, len(input.shape)).tolist()",
     "reduce_axis: list[int] = list(range(2, len(input.shape)))"),
    ("reduce_axis = torch.arange(input.ndim - 1, 0, -1, dtype=torch.long).tolist()",
     "reduce_axis = list(range(input.ndim - 1, 0, -1))"),
    ("reduce_axis = torch.arange(1, input.dim(), device=input.device).tolist()",
     "reduce_axis = list(range(1, input.dim()))"),
])
def test_arange_of_ints_becomes_a_range(tmp_path, line, want):
    src, f, (c,) = only(tmp_path, AXES.format(line=line), "PTC102")
    assert c.lines == ("        " + want,) and (c.start_line, c.end_line) == (6, 6) and not c.safe
    assert "list(range(" in c.title


@pytest.mark.parametrize("line", [
    "reduce_axis = torch.arange(0.5, len(input.shape)).tolist()",                    # a float bound
    "reduce_axis = torch.arange(2, len(input.shape), dtype=torch.float32).tolist()",  # float elements
    "reduce_axis = torch.arange(2, target.sum()).tolist()",                         # a tensor bound
    "reduce_axis = torch.arange(2, len(input.shape)).flip(0).tolist()",             # not the arange itself
    "reduce_axis = torch.arange(end=len(input.shape)).tolist()",                    # keywords: not the plain form
])
def test_arange_not_of_ints_gets_no_range(tmp_path, line):
    src, fs = findings(tmp_path, AXES.format(line=line), "PTC102")
    assert fs and all(not any("range" in c.title for c in fix_candidates(f, src)) for f in fs)


def test_a_local_bound_counts_only_when_set_once_from_a_size(tmp_path):
    body = "        n = len(input.shape)\n        {extra}reduce_axis = torch.arange(2, n).tolist()"
    src, f, (c,) = only(tmp_path, AXES.replace("        {line}", body.format(extra="")), "PTC102")
    assert c.lines == ("        reduce_axis = list(range(2, n))",)
    rebound = body.format(extra="n = n / 2\n        ")
    src, fs = findings(tmp_path, AXES.replace("        {line}", rebound), "PTC102")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)
    shadowed = "        range = reversed\n" + body.format(extra="")
    src, fs = findings(tmp_path, AXES.replace("        {line}", shadowed), "PTC102")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --- PTC110 a cache the function fills and reads itself ---------------------------------------

BIAS = """\
import torch
import torch.nn as nn


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention_biases = nn.Parameter(torch.randn(2, 5))
        self.register_buffer("idxs", torch.tensor([[0, 1, 2], [4, 3, 2]]), persistent=False)
        self.attention_bias_cache = {{}}

    def train(self, mode=True):
        super().train(mode)
        if mode and self.attention_bias_cache:
            self.attention_bias_cache = {{}}
        return self

    def get_attention_biases(self, device):
        if self.training:
            return self.attention_biases[:, self.idxs]
        device_key = str(device)
        if device_key not in self.attention_bias_cache:
            self.attention_bias_cache[device_key] = self.attention_biases[:, self.idxs]
        {read}

    def forward(self, x):
        return x + self.get_attention_biases(x.device)
{extra}

g = torch.compile(Attn())
"""
BIAS_READ = "return self.attention_bias_cache[device_key]"


def test_read_through_cache_is_skipped_while_compiling(tmp_path):
    src, f, (c,) = only(tmp_path, BIAS.format(read=BIAS_READ, extra=""), "PTC110")
    assert f.line == 23 and (c.start_line, c.end_line) == (22, 24) and c.safe
    assert c.lines == ("        if torch.compiler.is_compiling():",
                       "            return self.attention_biases[:, self.idxs]",
                       "        if device_key not in self.attention_bias_cache:",
                       "            self.attention_bias_cache[device_key] = self.attention_biases[:, self.idxs]",
                       "        return self.attention_bias_cache[device_key]")


def test_read_through_cache_without_torch_bound_computes_the_value(tmp_path):
    text = BIAS.format(read="bias = self.attention_bias_cache[device_key]\n        return bias * 2", extra="")
    src, f, (c,) = only(tmp_path, text, "PTC110")
    # not a return: the cache goes, the statement reads the value (eager changes: not safe)
    assert (c.start_line, c.end_line) == (22, 24) and not c.safe
    assert c.lines == ("        bias = self.attention_biases[:, self.idxs]",)


@pytest.mark.parametrize("read, extra", [
    # another method reads what the cache holds
    (BIAS_READ, "\n    def cached(self):\n        return list(self.attention_bias_cache.values())\n"),
    # the cache is read again after the statement that reads it
    ("b = self.attention_bias_cache[device_key]\n        return b + len(self.attention_bias_cache)", ""),
    # the next statement reads another key
    ("return self.attention_bias_cache['cpu']", ""),
])
def test_read_through_cache_others_read_stays_text(tmp_path, read, extra):
    src, fs = findings(tmp_path, BIAS.format(read=read, extra=extra), "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


PINV = """\
import torch
import torch.nn as nn


class Resample(nn.Module):
    def __init__(self):
        super().__init__()
        self._pinv_cache_map = {{}}

    def _apply(self, fn, recurse=True):
        self._pinv_cache_map.clear()
        return super()._apply(fn)

    def _get_or_create_pinv_matrix(self, n, device):
        cache_key = (n, device)
        pinv_matrix = self._pinv_cache_map.get(cache_key)
        if pinv_matrix is not None:
            return pinv_matrix
        pinv_matrix = torch.linalg.pinv(torch.eye(n, device=device) * 2 + 1)
        {store}
        return pinv_matrix

    def forward(self, x):
        return x @ self._get_or_create_pinv_matrix(x.shape[-1], x.device)


g = torch.compile(Resample())
"""


def test_stored_local_is_stored_in_eager_only(tmp_path):
    src, f, (c,) = only(tmp_path, PINV.format(store="self._pinv_cache_map[cache_key] = pinv_matrix"), "PTC110")
    assert (c.start_line, c.end_line) == (20, 20) and c.safe
    assert c.lines == ("        if not torch.compiler.is_compiling():",
                       "            self._pinv_cache_map[cache_key] = pinv_matrix")


@pytest.mark.parametrize("store", [
    # the value stored is not the local the function goes on with
    "self._pinv_cache_map[cache_key] = pinv_matrix.clone()",
    # read back after the store: skipping it in compiled code would miss the key
    "self._pinv_cache_map[cache_key] = pinv_matrix\n        pinv_matrix = self._pinv_cache_map[cache_key]",
])
def test_stored_local_refused(tmp_path, store):
    src, fs = findings(tmp_path, PINV.format(store=store), "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


def test_a_store_on_every_call_is_no_cache(tmp_path):
    # no lookup that returns early: the dict grows on every call, the recipe does not apply
    text = PINV.format(store="self._pinv_cache_map[cache_key] = pinv_matrix").replace(
        "        if pinv_matrix is not None:\n            return pinv_matrix\n", "")
    src, fs = findings(tmp_path, text, "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


SLOT = """\
import torch
import torch.nn as nn


def growth(n, m):
    return [i * m for i in range(1, n + 1)]


class Sampler(nn.Module):
    def __init__(self):
        super().__init__()
        self._ends = None

    def reset(self):
        self._ends = None

    def schedule(self, n, m, device):
        key = (n, m, device)
        if self._ends is None or self._ends[0] != key:
            self._ends = (key, torch.tensor(growth(n, m), device=device))
        {read}

    def forward(self, x):
        return x * self.schedule(x.shape[-1], 2, x.device)


g = torch.compile(Sampler())
"""


def test_one_entry_cache_returns_the_stored_element_while_compiling(tmp_path):
    src, f, (c,) = only(tmp_path, SLOT.format(read="return self._ends[1]"), "PTC110")
    # not safe: a one-entry cache's test may mean more than "missing" (it is proven instead)
    assert (c.start_line, c.end_line) == (19, 21) and not c.safe
    assert c.lines[:2] == ("        if torch.compiler.is_compiling():",
                           "            return torch.tensor(growth(n, m), device=device)")
    assert c.lines[2:] == tuple(src.splitlines()[18:21])


@pytest.mark.parametrize("read", [
    "return self._ends[5]",               # no such element of the stored tuple
    "return self._ends[1] * 2",           # not the read itself
    "out = self._ends[1]\n        return out + self._ends[1]",
])
def test_one_entry_cache_refused(tmp_path, read):
    src, fs = findings(tmp_path, SLOT.format(read=read), "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


CONVERT = """\
import torch
import torch.nn as nn


class Mix(nn.Module):
    def __init__(self):
        super().__init__()
        self.excluded = torch.tensor([1, 2])

    def forward(self, mask, n: int):
        if n > 0:
            if self.excluded.dtype != mask.dtype:
                self.excluded = {value}
            out = []
            for d in range(2):
                out.append((mask[d].view(1, -1) != self.excluded.view(-1, 1)).all(dim=0))
            return torch.stack(out)
        return mask
{extra}

g = torch.compile(Mix())
"""


def test_converted_under_a_test_becomes_a_local(tmp_path):
    src, f, (c,) = only(tmp_path, CONVERT.format(value="self.excluded.to(mask.dtype)", extra=""), "PTC110")
    assert (c.start_line, c.end_line) == (11, 17) and not c.safe
    assert c.lines == ("        excluded = self.excluded",
                       "        if n > 0:",
                       "            if excluded.dtype != mask.dtype:",
                       "                excluded = excluded.to(mask.dtype)",
                       "            out = []",
                       "            for d in range(2):",
                       "                out.append((mask[d].view(1, -1) != excluded.view(-1, 1)).all(dim=0))",
                       "            return torch.stack(out)")


@pytest.mark.parametrize("value, extra", [
    # accumulates across calls: the state is the point
    ("(self.excluded * 2).to(mask.dtype)", ""),
    # another method reads it
    ("self.excluded.to(mask.dtype)", "\n    def extra_repr(self):\n        return str(self.excluded)\n"),
])
def test_converted_under_a_test_refused(tmp_path, value, extra):
    src, fs = findings(tmp_path, CONVERT.format(value=value, extra=extra), "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)


# --- real torch (the helpers of tests/test_fixes_torch.py, imported where torch is there) ------

def state_pair(src, cand, name):
    """Head's module and the candidate's (eval mode), with the same weights."""
    from test_fixes_torch import load

    before = load(src, name)().eval()
    after = load(apply_candidate(src, cand), name)().eval()
    after.load_state_dict(before.state_dict())
    return before, after


@pytest.mark.torch
@pytest.mark.parametrize("text, name, make", [
    (BIAS.format(read=BIAS_READ, extra=""), "Attn", lambda torch: (torch.randn(2, 3),)),
    (PINV.format(store="self._pinv_cache_map[cache_key] = pinv_matrix"), "Resample",
     lambda torch: (torch.randn(3, 4),)),
    (SLOT.format(read="return self._ends[1]"), "Sampler", lambda torch: (torch.randn(2, 5),)),
    (CONVERT.format(value="self.excluded.to(mask.dtype)", extra=""), "Mix",
     lambda torch: (torch.randint(0, 3, (2, 5)).double(), 1)),
], ids=["read-through", "stored-local", "one-entry", "converted"])
def test_state_candidates_stop_the_recompile_and_compute_the_same(tmp_path, text, name, make):
    torch = pytest.importorskip("torch")
    from test_fixes_torch import compiled_run, compiles

    src, f, (c,) = only(tmp_path, text, "PTC110")
    calls = [make(torch) for _ in range(4)]
    # compiled from a fresh module: head fills the module's state on the first call, and the
    # next call fails the guard on it; the candidate compiles once
    before, after = state_pair(src, c, name)
    assert compiles(before, calls) == 2
    assert compiles(after, calls) == 1
    before, after = state_pair(src, c, name)
    for args in calls:
        _, _, got = compiled_run(after, *args)
        torch.testing.assert_close(got, before(*args))          # compiled: head's eager values
        torch.testing.assert_close(after(*args), before(*args))  # eager: the same values


@pytest.mark.torch
def test_skipping_a_cache_another_method_reads_is_wrong(tmp_path):
    """The refused shape: when another method reads what the cache holds, the compiled call
    that skips the store leaves it empty and the result changes (why `_reset_only` refuses)."""
    torch = pytest.importorskip("torch")
    from test_fixes_torch import compiled_run, load

    extra = ("\n    def total(self):\n        return sum(v.sum() for v in self.attention_bias_cache.values())\n")
    text = BIAS.format(read=BIAS_READ, extra=extra).replace(
        "return x + self.get_attention_biases(x.device)",
        "return x + self.get_attention_biases(x.device) + self.total()")
    src, fs = findings(tmp_path, text, "PTC110")
    assert fs and all(fix_candidates(f, src) == [] for f in fs)
    wrong = src.replace("        if device_key not in self.attention_bias_cache:\n",
                        "        if torch.compiler.is_compiling():\n"
                        "            return self.attention_biases[:, self.idxs]\n"
                        "        if device_key not in self.attention_bias_cache:\n")
    head = load(src, "Attn")().eval()
    bad = load(wrong, "Attn")().eval()
    bad.load_state_dict(head.state_dict())
    x = torch.randn(2, 3)
    assert not torch.allclose(compiled_run(bad, x)[2], compiled_run(head, x)[2])


@pytest.mark.torch
def test_range_for_arange_removes_the_break(tmp_path):
    torch = pytest.importorskip("torch")
    from test_fixes_torch import assert_fixes

    src, f, (c,) = only(tmp_path, """\
        import torch


        def f(input, target):
            reduce_axis: list[int] = torch.arange(2, len(input.shape)).tolist()
            return (input - target).abs().sum(dim=reduce_axis)


        g = torch.compile(f)
        """, "PTC102")
    # the break goes, one graph (fullgraph too), and the same sums on 4-d, 3-d and 2-d inputs
    assert_fixes(src, c, "f", *[(torch.randn(*s), torch.randn(*s)) for s in [(2, 3, 4, 5), (1, 2, 7), (3, 1)]])


# --- the proof loop on the `list(range(...))` rewrite -----------------------------------------

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x).view(x.shape[0], 2, 2, 2)
        axes = torch.arange(2, len(h.shape)).tolist()
        return h.sum(dim=axes) + 1
"""
AXES_LINE = 12



@pytest.mark.torch
def test_the_loop_verifies_the_range_and_rejects_an_off_by_one(tmp_path):
    pytest.importorskip("torch")
    from pt2bot.configfile.schema import build_config
    from pt2bot.fixes import ProofSetting, Proposal, prove_on_model
    from pt2bot.results import ResultsFile
    from pt2bot.rules.base import Candidate
    from test_fix_proof_recipes import CONFIG   # x: (batch, 8), batch 2 and 4, eager backend

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    found = [f for f in check_paths(str(root), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC102"]
    (right,) = fix_candidates(found[0], NET)
    assert right.lines == ("        axes = list(range(2, len(h.shape)))",)
    # the same rewrite one axis off: no break either, but another sum
    wrong = Candidate(code="PTC102", path="pkg/net.py", start_line=AXES_LINE, end_line=AXES_LINE,
                      lines=("        axes = list(range(1, len(h.shape)))",), title="off by one", safe=False)
    target = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": AXES_LINE, "gb": "GB0033",
              "gb_type": "Data dependent operator"}
    items = [(Proposal(cid=cid, cand=c, original=NET, patched=apply_candidate(NET, c), findings=[], targets=[]),
              [target]) for cid, c in (("wrong", wrong), ("right", right))]
    config = build_config(CONFIG, str(root / "pt2bot.yml"))
    setting = ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                           head_results=ResultsFile.empty(), device="cpu")
    verdicts = prove_on_model(setting, config.model("net"), None, items, str(root),
                              time.monotonic() + 240, str(tmp_path / "work"))
    assert verdicts["wrong"]["accepted"] is False
    assert verdicts["wrong"]["reason"].startswith("outputs differ from head's"), verdicts["wrong"]
    assert verdicts["right"]["accepted"] is True, verdicts["right"]
    assert verdicts["right"]["evidence"].startswith("GB0033 gone"), verdicts["right"]
