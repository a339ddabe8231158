"""A parameter annotated with an alias of a tensor annotation is a tensor
(pt2bot/analysis/infer.py `annotation_kind`, `FunctionContext._alias`): jaxtyping code names
its shapes once, `Reset = jt.Bool[torch.Tensor, "*b t"]`, and annotates with the alias,
`reset: at.Reset`, from another module (google-deepmind/recurrentgemma: every parameter of its
torch code is annotated so, and the static rules read none of them as a tensor; `if
reset.any():` had no finding). The alias is read in its own file, and in another file of the
tree through the cross-file facts (`Ext`, pt2bot/analysis/graph.py `CrossFile._alias`)."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

TYPING = '''\
from typing import Any, Mapping

import jaxtyping as jt
import torch

Activations = jt.Float[torch.Tensor, "*b t d"]
Reset = jt.Bool[torch.Tensor, "*b t"]
Params = Mapping[str, Any]
Caches = list[torch.Tensor]
'''

LAYER = '''\
import torch
from torch import nn

from pkg import array_typing as at
from pkg.array_typing import Reset


class Layer(nn.Module):
    def forward(self, x: at.Activations, reset: RESET, params: at.Params, caches: at.Caches):
        if reset.any():
            x = x * 0
        if params["scale"] > 1:
            x = x * 2
        if caches[0].sum() > 0:
            x = x + 1
        return x
'''


def _findings(tmp_path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    out = check_paths(str(tmp_path), sorted({"pkg/__init__.py", *files}), StaticConfig(select=("ALL",)), jobs=1)
    return sorted((f.path, f.line, f.rule) for f in out if f.rule == "PTC201")


@pytest.mark.parametrize("reset", ["at.Reset", "Reset"])
def test_an_alias_from_another_module_of_the_tree_is_a_tensor(tmp_path, reset):
    got = _findings(tmp_path, {"pkg/array_typing.py": TYPING, "pkg/layer.py": LAYER.replace("RESET", reset)})
    # the mapping and the list of tensors are no tensor
    assert got == [("pkg/layer.py", 10, "PTC201")], got


def test_an_alias_the_tree_does_not_bind_to_a_tensor_is_not(tmp_path):
    typing = TYPING.replace('Reset = jt.Bool[torch.Tensor, "*b t"]', "Reset = Mapping[str, bool]")
    got = _findings(tmp_path, {"pkg/array_typing.py": typing, "pkg/layer.py": LAYER.replace("RESET", "at.Reset")})
    assert got == [], got
    # nor a module outside the tree
    got = _findings(tmp_path, {"pkg/layer.py": LAYER.replace("RESET", "at.Reset").replace(
        "from pkg import array_typing as at", "from elsewhere import array_typing as at")})
    assert got == [], got


def test_an_alias_of_the_same_file_is_a_tensor(tmp_path):
    text = TYPING + "\n\n" + LAYER.replace("RESET", "Reset").replace(
        "from pkg import array_typing as at\nfrom pkg.array_typing import Reset\n", "").replace("at.", "")
    got = _findings(tmp_path, {"pkg/layer.py": text})
    lines = text.splitlines()
    assert [(lines[line - 1].strip(), rule) for _, line, rule in got] == [("if reset.any():", "PTC201")], got
