"""`torch.backends.cuda.sdp_kernel(...)` in compiled code (pt2bot/rules/sdp_kernel.py, PTC117):
held-out batch 37's mixture-of-attention broke at `with torch.backends.cuda.sdp_kernel(
**config._asdict()):` (GB0142), a line copied across many attention modules, and no recipe had
an edit. The recipe's text, the calls it leaves alone, then the proof on real torch."""
from __future__ import annotations

import dataclasses

import pytest

from pt2bot.rules import apply_candidate
from proofs import break_target, item, offered, one_model, prove, write_repo

ATTEND = """\
from collections import namedtuple

import torch
import torch.nn.functional as F
from torch import nn

Config = namedtuple("EfficientAttentionConfig", ["enable_flash", "enable_math", "enable_mem_efficient"])


class Attend(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)
        self.cpu_config = Config(True, True, True)

    def forward(self, x):
        q = self.proj(x).unsqueeze(1)
        config = self.cpu_config
        with torch.backends.cuda.sdp_kernel(**config._asdict()):
            out = F.scaled_dot_product_attention(q, q, q)
        return out.squeeze(1)
"""
WITH = 19
assert ATTEND.splitlines()[WITH - 1].strip() == "with torch.backends.cuda.sdp_kernel(**config._asdict()):"
TITLE = "use `torch.nn.attention.sdpa_kernel`"


def _target(path: str = "pkg/attend.py", gb: str = "GB0142") -> dict:
    return break_target("attend", path, WITH, gb, "Unsupported context manager")


def test_the_call_becomes_sdpa_kernel_with_the_backends_it_enables():
    (c,) = offered(_target("m.py"), ATTEND, TITLE)
    assert c.lines == ("        with torch.nn.attention.sdpa_kernel([b for k, b in ("
                       "(\"enable_flash\", torch.nn.attention.SDPBackend.FLASH_ATTENTION), "
                       "(\"enable_math\", torch.nn.attention.SDPBackend.MATH), "
                       "(\"enable_mem_efficient\", torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION), "
                       "(\"enable_cudnn\", torch.nn.attention.SDPBackend.CUDNN_ATTENTION)) "
                       "if {**config._asdict()}.get(k, True)]):",)
    compile(apply_candidate(ATTEND, c), "m.py", "exec")
    # literal flags: the backends they leave on (one not given is on, as in sdp_kernel)
    flags = ATTEND.replace("sdp_kernel(**config._asdict())", "sdp_kernel(enable_flash=False, enable_mem_efficient=False)")
    (c,) = offered(_target("m.py", "GB0208"), flags, TITLE)
    assert c.lines == ("        with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.MATH, "
                       "torch.nn.attention.SDPBackend.CUDNN_ATTENTION]):",)


@pytest.mark.parametrize("call", ["sdp_kernel(enable_flash=use_flash)", "sdp_kernel(False, False, False, False)",
                                  "sdp_kernel(enable_flash=True, **config._asdict())"])
def test_flags_it_cannot_read_or_that_enable_nothing_get_no_edit(call):
    text = ATTEND.replace("sdp_kernel(**config._asdict())", call)
    assert offered(_target("m.py", "GB0208"), text, TITLE) == []


CONFIG = one_model("attend", "pkg.attend:Attend", "[{name: x, shape: [batch, 5, 8]}]", "{batch: [2, 3]}")


@pytest.mark.torch
def test_the_loop_verifies_it(tmp_path):
    root = write_repo(tmp_path / "repo", {"pkg/attend.py": ATTEND}, CONFIG)
    (c,) = [dataclasses.replace(c, path="pkg/attend.py") for c in offered(_target("m.py"), ATTEND, TITLE)]
    verdict = prove(root, "attend", [item("c", c, ATTEND, _target())], tmp_path / "work")["c"]
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].startswith("GB0142 gone"), verdict["evidence"]
