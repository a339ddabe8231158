"""PTC307 (a size passed where Python needs its value) against dynamo: compile counts over
three sizes of a dynamic dim, torch.compile(backend="eager", dynamic=True), for the f-string
of a check helper's message (timm's `_assert`). Measured on torch 2.13.0+cpu and 2.14.1."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _assert(cond, msg=""):
    if not cond:
        raise AssertionError(msg)


def _compiles(fn) -> int:
    from torch._dynamo.testing import CompileCounter

    torch._dynamo.reset()
    cnt = CompileCounter()
    compiled = torch.compile(fn, backend=cnt, dynamic=True)
    for n in (8, 10, 12):
        compiled(torch.ones(n, 4))
    return cnt.frame_count


def test_fstring_message_with_text_specialises_the_size():
    # the f-string with text formats the size on every call: one compile per size
    def fmt(x):
        n = x.shape[0]
        _assert(n % 2 == 0, f"size ({n}) must be even")
        return x + 1

    def plain(x):
        n = x.shape[0]
        _assert(n % 2 == 0, "size must be even")
        return x + 1

    assert (_compiles(fmt), _compiles(plain)) == (3, 1)

    # a lone f"{n}" stays lazy: no specialisation
    def lone(x):
        n = x.shape[0]
        _assert(n % 2 == 0, f"{n}")
        return x + 1

    assert _compiles(lone) == 1


def test_pinned_check_and_error_block_are_not_flagged(tmp_path):
    # `_assert(H == 224, f"...")` admits one size (every other raises), so the message costs no
    # compile a working call makes; a message built in a block that ends in raise neither
    (tmp_path / "m.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\n"
        "def _assert(cond, msg=''):\n    if not cond:\n        raise AssertionError(msg)\n\n\n"
        "class M(nn.Module):\n"
        "    def forward(self, x):\n"
        "        B, C, H, W = x.shape\n"
        "        _assert(H == 224, f'Input height ({H}) does not match 224')\n"
        "        if W > 512:\n"
        "            msg = f'Input width ({W}) too large'\n"
        "            raise ValueError(msg)\n"
        "        _assert(H % 16 == 0, f'Input height ({H}) not divisible by 16')\n"
        "        return x\n")
    findings = check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("PTC307",)), jobs=1)
    assert [(f.line, f.rule) for f in findings] == [(17, "PTC307")]
