"""What a module keeps past a call is compared too (pt2bot/smoke/verify.py `kept_state`): its
buffers and the Python scalars it holds. lie-transformer-pytorch keeps `fill_frac_ema`, a
float it updates from `avg_fill = (...).item()` for logging; keeping the tensor there (the
`.item()` dropped) leaves every output equal and turns the attribute into a tensor, which a
caller that logs or serialises it sees. That edit was verified before; it is refused now, and a
candidate's tensor no longer leaks into the next candidate's runs.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, one_model, prove, write_repo

FILL = """\
import torch
from torch import nn


class Fill(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.fill_ema = 0.5

    def forward(self, x):
        h = self.lin(x)
        avg = (h > 0).float().mean().item()
        self.fill_ema += 0.1 * (avg - self.fill_ema)
        return h * 2
"""
LINE = 13
CONFIG = one_model("fill", "pkg.fill:Fill", "[{name: x, shape: [batch, 8]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_a_fix_that_turns_a_kept_float_into_a_tensor_is_refused(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/fill.py": FILL}, CONFIG)
    kept = Candidate(code="PTC101", path="pkg/fill.py", start_line=LINE, end_line=LINE,
                     lines=("        avg = (h > 0).float().mean()",), title="keep the tensor", safe=False)
    target = {"kind": "break", "model": "fill", "path": "pkg/fill.py", "line": LINE, "gb": "GB0124",
              "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}
    verdict = prove(root, "fill", [item("kept", kept, FILL, target)], tmp_path / "work")["kept"]
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith(
        "after shape case batch=2, what the model keeps differs from head's, though the outputs are "
        "equal: `fill_ema` is a tensor where head's is a Python float ("), verdict


@pytest.mark.torch
def test_every_call_starts_from_the_scalars_and_buffers_as_built():
    import torch

    from pt2bot.smoke.inputs import remember_state, restore_state
    from pt2bot.smoke.verify import compare_state, kept_state, scalar_attributes

    class Ema(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ema, self.mode = 0.5, "sum"
            self.register_buffer("count", torch.zeros(()))

        def forward(self, x):
            self.ema = 0.9 * self.ema + 0.1 * float(x.mean())
            self.count += 1
            return x

    m = Ema()
    remember_state(m)
    kept = scalar_attributes(m)
    assert sorted(k for _, k in kept) == ["ema", "mode"]
    m(torch.ones(2))
    after = kept_state(m, kept)
    assert after["ema"] == pytest.approx(0.55) and after["count"].item() == 1 and after["mode"] == "sum"
    # a candidate that made the float a tensor and set a flag of its own leaves neither behind
    m.ema, m._warned = torch.tensor(after["ema"]), True
    restore_state(m)
    assert m.ema == 0.5 and type(m.ema) is float and m.count.item() == 0 and not hasattr(m, "_warned")
    m(torch.ones(2))
    assert compare_state(after, kept_state(m, kept), None)["match"]
    assert compare_state(after, {**after, "ema": torch.tensor(after["ema"])}, None)["message"].startswith(
        "`ema` is a tensor where head's is a Python float")


def test_a_cache_as_built_is_put_back_whole():
    """pyro's Planar flow keeps its last input and output in `_cached_x_y` (torch.distributions'
    cache, `None, None` as built) and that call's log-determinant in `_cached_logDetJ` (None as
    built). Only the None was put back: the next call on the same input tensor hit the cache of
    (x, y) and read the log-determinant None, and the model was a head error in the benchmark."""
    import torch

    from pt2bot.smoke.inputs import remember_state, restore_state

    class Cached(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self._cached_x_y, self._cached_logdet = (None, None), None

        def forward(self, x):
            if self._cached_x_y[0] is x:
                return x * 2 + self._cached_logdet
            self._cached_x_y, self._cached_logdet = (x, x * 2), x.sum()
            return x * 2 + self._cached_logdet

    m = Cached()
    remember_state(m)
    x = torch.ones(2)
    first = m(x)
    restore_state(m)
    assert m._cached_x_y == (None, None) and m._cached_logdet is None
    assert torch.equal(m(x), first)


@pytest.mark.torch
def test_the_attributes_compared_are_the_ones_a_call_leaves_behind(tmp_path):
    """A float a call creates (`if not hasattr(self, "ema"): self.ema = 0.5`) is not on the
    modules as built, so every call starts without it; whether the candidate's labels held it
    depended on what the last run before the candidate had left (lie-transformer's
    `fill_frac_ema` read as "gone" for one of its candidates). The labels are taken once, after
    one of head's calls, for head and every candidate."""
    import torch

    from pt2bot.smoke.inputs import CaseInputs, remember_state, restore_state
    from pt2bot.smoke.location import RepoPaths
    from pt2bot.smoke.verify import head_states

    class Ema(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)

        def forward(self, x):
            if not hasattr(self, "ema"):
                self.ema = 0.5
            self.ema = 0.9 * self.ema + 0.1 * float(x.mean())
            return self.lin(x)

    m = Ema()
    remember_state(m)
    case = CaseInputs(shape={"batch": 2}, args=(torch.ones(2, 8),), kwargs={})
    m(*case.args)
    restore_state(m)
    assert not hasattr(m, "ema")
    kept, states = head_states(m, [case], RepoPaths(str(tmp_path)))
    assert (id(m), "ema") in kept
    assert states[0]["ema"] == pytest.approx(0.55)


CLOCK = """\
import time

import torch
from torch import nn


class Clocked(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.last_call = 0.0

    def forward(self, x):
        h = self.lin(x)
        if h.sum() > 0:
            h = h * 2
        self.last_call = time.perf_counter()
        return h + 1
"""
CLOCK_IF = 15
CLOCK_CONFIG = CONFIG.replace("name: fill", "name: clocked").replace("pkg.fill:Fill", "pkg.clocked:Clocked")


@pytest.mark.torch
def test_what_differs_between_heads_own_runs_is_not_held_against_a_candidate(tmp_path):
    """A module that keeps the time of its last call: head's own two runs differ there, so a
    candidate's run differing too says nothing of the edit (it was refused for "`last_call`
    max abs error ...")."""
    assert CLOCK.splitlines()[CLOCK_IF - 1].strip() == "if h.sum() > 0:"
    root = write_repo(tmp_path / "repo", {"pkg/clocked.py": CLOCK}, CLOCK_CONFIG)
    where = Candidate(code="PTC201", path="pkg/clocked.py", start_line=CLOCK_IF, end_line=CLOCK_IF + 1,
                      lines=("        h = torch.where(h.sum() > 0, h * 2, h)",), title="select", safe=False)
    target = {"kind": "break", "model": "clocked", "path": "pkg/clocked.py", "line": CLOCK_IF,
              "gb": "GB0170", "gb_type": "Data-dependent branching"}
    verdict = prove(root, "clocked", [item("where", where, CLOCK, target)], tmp_path / "work")["where"]
    assert verdict["accepted"] is True, verdict


STATS = """\
import torch
from torch import nn


class Routed(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.last_stats = None

    def forward(self, x):
        p = self.lin(x).sigmoid().detach()
        total = p.numel()
        hits = (p > 0.5).sum().item()
        self.last_stats = {"mean": p.mean().item(), "pct": hits / total if total > 0 else 0.0}
        return x * 2
"""
STATS_LINE = 14


@pytest.mark.torch
def test_a_fix_that_puts_a_tensor_into_a_kept_record_is_refused(tmp_path):
    """knlp's router block keeps its statistics for logging in a dict (`self.last_router_probs =
    {"ra_token_pct": ra_tokens / total_tokens, ...}`): with `.item()` dropped the count is a
    tensor, and so is the percentage stored where head stored a float, though every output is
    equal. That edit was verified before; the dict is compared now, a copy of it after each call."""
    assert STATS.splitlines()[STATS_LINE - 1].strip() == "hits = (p > 0.5).sum().item()"
    config = CONFIG.replace("name: fill", "name: routed").replace("pkg.fill:Fill", "pkg.routed:Routed")
    root = write_repo(tmp_path / "repo", {"pkg/routed.py": STATS}, config)
    kept = Candidate(code="PTC101", path="pkg/routed.py", start_line=STATS_LINE, end_line=STATS_LINE,
                     lines=("        hits = (p > 0.5).sum()",), title="keep the tensor", safe=False)
    target = {"kind": "break", "model": "routed", "path": "pkg/routed.py", "line": STATS_LINE, "gb": "GB0124",
              "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}
    verdict = prove(root, "routed", [item("kept", kept, STATS, target)], tmp_path / "work")["kept"]
    assert verdict["accepted"] is False, verdict
    assert verdict["reason"].startswith(
        "after shape case batch=2, what the model keeps differs from head's, though the outputs are "
        "equal: `last_stats` is a tensor where head's is a Python float ("), verdict


def test_a_record_is_a_small_container_of_scalars_and_tensors_copied():
    import torch

    from pt2bot.smoke.verify import RECORD_LEAVES, record

    stats = {"mean": 0.5, "hist": torch.ones(2), "names": ["a", ("b", None)]}
    got = record(stats)
    assert got == {**stats, "hist": got["hist"]} and torch.equal(got["hist"], stats["hist"])
    stats["hist"] += 1   # the module writing into its record after the copy changes no copy
    assert got["hist"].tolist() == [1.0, 1.0]
    assert record([0.0] * RECORD_LEAVES) is not None and record([0.0] * (RECORD_LEAVES + 1)) is None
    assert [record(v) for v in ({"m": torch.nn.Linear(1, 1)}, [[[[1]]]], [], torch.ones(1), 0.5)] == [None] * 5


PARETO = """\
import torch
from torch import nn


def fit(x):
    bs = x.double().sort().values
    b = (bs * bs).mean().item()
    return 1.0 / (1.0 + b), b


class Fit(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        return h, torch.tensor(fit(h.detach().flatten()))
"""
PARETO_LINE = 7


@pytest.mark.torch
def test_a_fix_that_changes_an_output_s_dtype_is_refused(tmp_path):
    """pyro's `fit_generalized_pareto` reads `b = (bs * weights).sum().item()` from a float64
    tensor and returns Python floats; with `.item()` dropped `b` is a float64 0-d tensor, and a
    result built from the pair, `torch.tensor((k, sigma))`, is float64 where head's was float32,
    its values equal within the tolerance. The outputs' dtypes were not compared: an
    independent re-run found the verified edit changing the model's output."""
    assert PARETO.splitlines()[PARETO_LINE - 1].strip() == "b = (bs * bs).mean().item()"
    config = CONFIG.replace("name: fill", "name: fit").replace("pkg.fill:Fill", "pkg.fit:Fit")
    root = write_repo(tmp_path / "repo", {"pkg/fit.py": PARETO}, config)
    kept = Candidate(code="PTC101", path="pkg/fit.py", start_line=PARETO_LINE, end_line=PARETO_LINE,
                     lines=("    b = (bs * bs).mean()",), title="keep the tensor", safe=False)
    target = {"kind": "break", "model": "fit", "path": "pkg/fit.py", "line": PARETO_LINE, "gb": "GB0124",
              "gb_type": "Unsupported Tensor.item() call with capture_scalar_outputs=False"}
    verdict = prove(root, "fit", [item("kept", kept, PARETO, target)], tmp_path / "work")["kept"]
    assert verdict["accepted"] is False, verdict
    assert "output is float64 where head's is float32" in verdict["reason"], verdict
