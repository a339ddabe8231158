"""The patched function is what the user's code calls, wherever it calls it from
(pt2bot/smoke/patch.py `_holders`): a registry's value (transformers reaches its attention
functions through `ALL_ATTENTION_FUNCTIONS[...]`), an instance's attribute (`self.post =
clean`), a closure's cell (a module built around a function, as torchmetrics' metrics are
wrapped). Before, only the owner's attribute and the names other modules of the repository
imported it by were replaced, so a model reaching the function another way ran head's code:
a right fix was refused with "GB0170 still breaks", and a guard input never reached it.
"""
from __future__ import annotations

import pytest

from pt2bot.rules.base import Candidate
from proofs import item, prove, write_repo

OPS = """\
import torch


def clean(h):
    if torch.isnan(h).any():
        h = torch.nan_to_num(h)
    return h * 2
"""
LINE = 5
MODEL = """\
import torch
from torch import nn

from pkg import ops

REGISTRY = {"clean": ops.clean}


class ByRegistry(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return REGISTRY["clean"](self.lin(x))


class ByAttribute(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.post = ops.clean

    def forward(self, x):
        return self.post(self.lin(x))


def wrap(fn):
    class Wrapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(8, 8)

        def forward(self, x):
            return fn(self.lin(x))
    return Wrapped


ByClosure = wrap(ops.clean)
"""
CONFIG = """\
version: 1
models:
""" + "".join(f"""\
  - name: {name}
    entry: pkg.model:{cls}
    inputs: [{{name: x, shape: [batch, 8]}}]
    shapes: {{batch: [2, 3]}}
    export: false
    timeout_s: 60
""" for name, cls in (("registry", "ByRegistry"), ("attribute", "ByAttribute"), ("closure", "ByClosure"))) + """\
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""


@pytest.mark.torch
def test_the_patch_and_the_injector_reach_every_holder_and_leave_them_as_they_were(tmp_path, monkeypatch):
    import importlib
    import sys

    import torch

    from pt2bot.smoke.location import RepoPaths
    from pt2bot.smoke.patch import Edit, Injection, function_at, injecting, patched_function

    root = write_repo(tmp_path / "repo", {"pkg/ops.py": OPS, "pkg/model.py": MODEL}, CONFIG)
    monkeypatch.syspath_prepend(str(root))
    for name in ("pkg", "pkg.ops", "pkg.model"):
        sys.modules.pop(name, None)
    model = importlib.import_module("pkg.model")
    ops = sys.modules["pkg.ops"]
    head = ops.clean
    nets = [model.ByRegistry(), model.ByAttribute(), model.ByClosure()]
    x = torch.ones(2, 8)
    x[0, 0] = float("nan")
    patched = OPS.replace("        h = torch.nan_to_num(h)", "        h = torch.nan_to_num(h) + 1")
    paths = RepoPaths(str(root))
    edit = Edit.in_text("pkg/ops.py", LINE + 1, LINE + 1, 1, OPS)
    expected = [net.lin(x).nan_to_num() * 2 for net in nets]
    head_swap = function_at(paths, "pkg/ops.py", OPS, edit)
    with patched_function(paths, "pkg/ops.py", OPS, patched, edit) as swap, torch.no_grad():
        assert ops.clean is swap.patched and model.REGISTRY["clean"] is swap.patched
        for net, want in zip(nets, expected):
            assert torch.equal(net(x), (want / 2 + 1) * 2), type(net).__name__
        # head's own guard run, inside the candidate's patch, runs head's code everywhere: its
        # output is head's but where the NaN went in (zeroed), where the patched code's is 2 more
        with injecting(head_swap, Injection("nan", "one", 0)) as inj:
            for net in nets:
                out, plain = net(torch.ones(2, 8)), net.lin(torch.ones(2, 8)) * 2
                assert (out != plain).sum() == 1 and torch.isfinite(out).all(), type(net).__name__
        assert inj.hit and len(inj.returns) == 3
        assert model.REGISTRY["clean"] is swap.patched
    assert ops.clean is head and model.REGISTRY["clean"] is head and nets[1].post is head
    assert all(torch.equal(net(x), want) for net, want in zip(nets, expected))


@pytest.mark.torch
@pytest.mark.parametrize("model", ["registry", "attribute", "closure"])
def test_a_fix_of_a_function_reached_through_a_holder_is_proven(tmp_path, model):
    root = write_repo(tmp_path / "repo", {"pkg/ops.py": OPS, "pkg/model.py": MODEL}, CONFIG)
    kept = Candidate(code="PTC201", path="pkg/ops.py", start_line=LINE, end_line=LINE + 1,
                     lines=("    h = torch.nan_to_num(h)",),
                     title="the transform alone: a no-op on ordinary values", safe=False, guards=("nan",))
    # deleting the guard: equal wherever no NaN is, which no shape case has
    dropped = Candidate(code="PTC201", path="pkg/ops.py", start_line=LINE, end_line=LINE + 1, lines=(),
                        title="dropped", safe=False, guards=("nan",))
    target = {"kind": "break", "model": model, "path": "pkg/ops.py", "line": LINE, "gb": "GB0170",
              "gb_type": "Data-dependent branching"}
    verdicts = prove(root, model, [item("dropped", dropped, OPS, target), item("kept", kept, OPS, target)],
                     tmp_path / "work")
    assert verdicts["kept"]["accepted"] is True, verdicts["kept"]
    assert "NaN injected" in verdicts["kept"]["evidence"], verdicts["kept"]
    assert verdicts["dropped"]["accepted"] is False
    assert "NaN" in verdicts["dropped"]["reason"], verdicts["dropped"]
