"""Static reach through `torch.autograd.Function.apply`: `Fn.apply(x)` from compiled code runs
`Fn.forward` (and, when an input requires grad, `Fn.setup_context` and `Fn.backward`) under
dynamo, so their breaks are findings; an `.apply` of anything else is not followed."""
from __future__ import annotations

from pathlib import Path

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

from tests.test_check import codes, write

FUNCS = """\
    import torch
    from torch.autograd import Function

    def _threshold(x):
        return x.sum().item()             # 5: reached through forward

    class Clip(Function):
        @classmethod
        def forward(cls, ctx, x, k=None):
            t = _threshold(x)
            return x.clamp(max=t)

        @classmethod
        def backward(cls, ctx, g):
            print(g)                      # 15: traced at forward time when x requires grad
            return g, None

    class Base(torch.autograd.Function):
        pass

    class Scale(Base):
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.n = inputs[0].sum().item()   # 28: setup_context is traced with forward

        @staticmethod
        def backward(ctx, g):
            return g * 2

    class Unused(Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum().item()         # 37: never applied from compiled code
    """

MODEL = """\
    import torch.nn as nn
    from .funcs import Clip, Scale

    def clip(x):
        return Clip.apply(x, 3)

    class Net(nn.Module):
        def forward(self, x):
            return Scale.apply(clip(x))
    """


def test_apply_of_an_autograd_function_reaches_forward_setup_context_and_backward(tmp_path: Path):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/funcs.py": FUNCS, "pkg/model.py": MODEL})
    got = codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1))
    assert got == {("pkg/funcs.py", 5, "PTC101"), ("pkg/funcs.py", 15, "PTC105"),
                   ("pkg/funcs.py", 28, "PTC101")}


OTHERS = """\
    import torch.nn as nn
    from somewhere import Frame

    class Table(Frame):
        @staticmethod
        def forward(x):
            return x.sum().item()         # 7: a class with a forward, not an autograd.Function

    class Plain:
        @staticmethod
        def forward(x):
            return x.sum().item()         # 12

    def _init(m):
        print(m)

    class Net(nn.Module):
        def forward(self, x, rows):
            y = Table.apply(x)
            z = Plain.apply(x)
            w = rows.apply(len)
            v = [x].apply(x)
            return x
    """


def test_apply_of_anything_else_is_not_followed(tmp_path: Path):
    write(tmp_path, {"m.py": OTHERS})
    assert codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1)) == set()


EARLY = """\
    import torch
    import torch.nn as nn
    from torch.autograd import Function

    class Fast(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            if torch.compiler.is_compiling() or g.is_sparse:
                return g * 2
            print(g)                      # 14: eager only, after the compiled path returned
            return g * 2

    class Net(nn.Module):
        def forward(self, x):
            if not torch.compiler.is_compiling():
                return x
            y = Fast.apply(x)
            return y + x.sum().item()     # 22: compiled
    """


def test_after_an_is_compiling_return_the_block_is_eager_only(tmp_path: Path):
    write(tmp_path, {"m.py": EARLY})
    assert codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1)) == {("m.py", 22, "PTC101")}
