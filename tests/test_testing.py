"""pt2bot.testing on real torch (dynamo, eager backend, CPU): the records, where they are
located, the failure messages, and what the checks leave behind in the process."""
from __future__ import annotations

import importlib
import logging
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pt2bot import testing  # noqa: E402

pytestmark = pytest.mark.torch

MODEL = """\
import torch


def helper(y):
    return y.tolist()


class TwoBreaks(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        if y.sum().item() > 0:
            y = y * 2
        print("two breaks")
        return y + 1


class Nested(torch.nn.Module):
    def forward(self, x):
        z = x + 1
        helper(z)
        return z * 2


class LoopBreak(torch.nn.Module):
    def forward(self, x):
        for _ in range(3):
            x = x + 1
            print("in a loop")
        return x


class Block(torch.nn.Module):
    def forward(self, x):
        print("block")
        return x * 2


class Stages(torch.nn.Module):
    # Swin's shape: `forward` calls `features`, whose loop over the blocks holds the call that
    # breaks; `features` is the frame dynamo gives up on, not `forward`
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])

    def features(self, x):
        for blk in self.blocks:
            x = blk(x)
        return x

    def forward(self, x):
        x = self.features(x)
        return x + 1


class Encoding(torch.nn.Module):
    def forward(self, x):
        if not (x > 0).any():
            return x * 0
        return x.cumsum(0)


class Joiner(torch.nn.Sequential):
    # DETR's: a Sequential whose `forward` loops over the backbone's outputs and calls the
    # position encoding, whose `if` breaks; dynamo's message that says "in a loop" leaves this
    # frame out of its stack
    def __init__(self) -> None:
        super().__init__(torch.nn.Identity(), Encoding())

    def forward(self, x):
        xs = {"a": self[0](x)}
        pos = []
        for name, y in xs.items():
            pos.append(self[1](y))
        return pos


class Detector(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = Joiner()

    def forward(self, x):
        pos = self.backbone(x)
        return pos[-1] + 1


class Clean(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x):
        return torch.relu(self.fc(x))


def branchy(x):
    if x.shape[0] > 4:
        return x * 2
    return x - 1


def double(x):
    return x * 2


def unrolled(idx):
    out = idx
    for i in range(idx.shape[1]):
        out = out + i
    return out
"""
LINE = {text.strip(): n for n, text in enumerate(MODEL.splitlines(), 1)}


@pytest.fixture
def userpkg(tmp_path, monkeypatch):
    """A real package of model code on sys.path, under a name unique to the test."""
    name = "upkg_" + tmp_path.name.replace("-", "_").lower()
    src = tmp_path / "proj"
    (src / name).mkdir(parents=True)
    (src / "pyproject.toml").write_text("[project]\nname = 'proj'\n")
    (src / name / "__init__.py").write_text("")
    (src / name / "model.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(src))
    mod = importlib.import_module(f"{name}.model")
    yield mod
    for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
        del sys.modules[key]


def test_two_breaks_located_in_the_users_package(userpkg):
    got = testing.graph_breaks(userpkg.TwoBreaks(), torch.randn(2, 4))
    pkg = userpkg.__name__.split(".")[0]
    assert [(b.gb, b.path, b.line, b.function) for b in got] == [
        ("GB0124", f"{pkg}/model.py", LINE["if y.sum().item() > 0:"], "forward"),
        ("GB0059", f"{pkg}/model.py", LINE['print("two breaks")'], "forward"),
    ]
    item, printed = got
    assert "item()" in item.gb_type and item.hints and item.count == 1
    assert item.url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert item.source == "if y.sum().item() > 0:"
    assert printed.gb_type == "Failed to trace builtin operator"
    assert set(item.to_dict()) >= {"gb", "gb_type", "path", "line", "function", "hints",
                                   "count", "reason"}


def test_same_records_as_the_smoke_run(userpkg, tmp_path):
    from pt2bot.smoke.worker import measure

    root = Path(userpkg.__file__).parents[1]
    spec = {"repo_root": str(root), "phases": ["breaks"], "device": "cpu",
            "run": {"backend": "eager"},
            "model": {"name": "m", "entry": f"{userpkg.__name__}:TwoBreaks",
                      "inputs": [{"shape": [2, 4]}]}}
    run = measure(spec)
    assert run["status"] == "ok", run
    got = testing.graph_breaks(userpkg.TwoBreaks(), torch.randn(2, 4))
    assert [b.to_dict() for b in got] == run["graph_breaks"]


def test_nested_break_is_one_record_at_the_innermost_frame(userpkg):
    [b] = testing.graph_breaks(userpkg.Nested(), torch.randn(3))
    assert b.line == LINE["return y.tolist()"] and b.function == "helper"
    # the whole user stack, outermost first: forward's call line, then the helper
    assert [f["line"] for f in b.user_stack] == [LINE["helper(z)"], LINE["return y.tolist()"]]


def test_break_in_a_loop_is_found(userpkg):
    # explain() reports nothing here: dynamo skips the whole frame (GB7000)
    got = testing.graph_breaks(userpkg.LoopBreak(), torch.randn(3))
    assert [(b.gb, b.line, b.in_loop) for b in got] == [
        ("GB0059", LINE['print("in a loop")'], True)]
    assert "inside a loop" in testing.format_breaks(got)
    # the loop's own frame: the frame dynamo gives up on is the one holding the loop
    assert got[0].loop_frame == {"path": got[0].path, "line": LINE["for _ in range(3):"], "function": "forward"}


def test_the_frame_given_up_on_is_the_one_whose_line_is_in_a_loop(userpkg):
    [b] = testing.graph_breaks(userpkg.Stages(), torch.randn(3))
    assert (b.line, b.function, b.in_loop) == (LINE['print("block")'], "forward", True)
    assert [f["line"] for f in b.user_stack] == [LINE["x = self.features(x)"], LINE["x = blk(x)"],
                                                LINE['print("block")']]
    # not the outermost frame: its line, `x = self.features(x)`, is in no loop
    assert b.loop_frame == {"path": b.path, "line": LINE["for blk in self.blocks:"], "function": "features"}


def test_the_looping_frame_is_found_where_dynamos_loop_message_leaves_it_out(userpkg):
    """DETR: "inside a loop of `forward` (`models/detr.py:61`): that whole frame runs eagerly"
    named `DETR.forward`'s call of the backbone, which is compiled; dynamo skips `Joiner.forward`,
    whose loop calls the encoding. Its message that says "in a loop" held `DETR.forward` and the
    encoding only; the fuller view of the same break holds the loop's frame."""
    [b] = testing.graph_breaks(userpkg.Detector(), torch.randn(3))
    assert (b.line, b.in_loop) == (LINE["if not (x > 0).any():"], True)
    assert b.loop_frame == {"path": b.path, "line": LINE["for name, y in xs.items():"], "function": "forward"}


def test_assert_no_graph_breaks_message_lists_each_break_as_pt2bot_comments_it(userpkg):
    testing.assert_no_graph_breaks(userpkg.Clean(), torch.randn(2, 4))
    with pytest.raises(AssertionError) as exc:
        testing.assert_no_graph_breaks(userpkg.TwoBreaks(), torch.randn(2, 4))
    text = str(exc.value)
    pkg = userpkg.__name__.split(".")[0]
    assert text.splitlines()[0] == ("2 graph breaks in TwoBreaks.forward "
                                    "(dynamo, eager backend; pt2bot.testing):")
    assert (f"  {pkg}/model.py:{LINE['if y.sum().item() > 0:']} in forward: GB0124 "
            "Unsupported Tensor.item() call") in text
    print_line = LINE['print("two breaks")']
    assert f"  {pkg}/model.py:{print_line} in forward: GB0059 " in text
    assert "hint: " in text and "gb/gb0059.html" in text


def test_dynamo_is_reset_and_logging_left_as_it_was(userpkg):
    from torch._dynamo.utils import counters

    def loggers() -> dict[str, tuple]:
        return {n: (lg.level, tuple(lg.handlers), lg.propagate)
                for n, lg in logging.root.manager.loggerDict.items()
                if n.startswith("torch") and isinstance(lg, logging.Logger)}

    torch.compile(userpkg.double, backend="eager")(torch.randn(2))   # someone else's code
    before = loggers()
    first = testing.graph_breaks(userpkg.LoopBreak(), torch.randn(3))
    # without a reset in between, the skipped frame would stay skipped: nothing found
    again = testing.graph_breaks(userpkg.LoopBreak(), torch.randn(3))
    assert first == again and len(first) == 1
    assert not counters["graph_break"] and not counters["unimplemented"]
    from torch._dynamo.utils import get_compilation_metrics
    assert list(get_compilation_metrics()) == []
    after = loggers()
    assert {n: v for n, v in after.items() if n in before} == before


def test_user_code_explicit_and_installed_packages(userpkg, tmp_path, monkeypatch):
    proj = Path(userpkg.__file__).parents[1]
    pkg = userpkg.__name__.split(".")[0]
    got = testing.graph_breaks(userpkg.Nested(), torch.randn(3), user_code=str(proj / pkg))
    assert got[0].path == "model.py"
    # code outside every user_code directory is not located in it
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    [b] = testing.graph_breaks(userpkg.Nested(), torch.randn(3), user_code=str(elsewhere))
    assert b.path is None and b.location == "(outside your code)"

    # a package installed into a site-packages directory is still the user's (by default:
    # the package that defines the model), located relative to site-packages
    site = tmp_path / "venv" / "lib" / "site-packages"
    (site / "instpkg_t").mkdir(parents=True)
    (site / "instpkg_t" / "__init__.py").write_text("")
    (site / "instpkg_t" / "m.py").write_text(textwrap.dedent(MODEL))
    monkeypatch.syspath_prepend(str(site))
    try:
        mod = importlib.import_module("instpkg_t.m")
        [b] = testing.graph_breaks(mod.Nested(), torch.randn(3))
        assert (b.path, b.line) == ("instpkg_t/m.py", LINE["return y.tolist()"])
    finally:
        for key in [k for k in sys.modules if k.startswith("instpkg_t")]:
            del sys.modules[key]


def test_project_root_from_markers_or_the_outermost_package(tmp_path):
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    for d in ("a/b", "a/b/c"):
        (tmp_path / d / "__init__.py").write_text("")
    assert testing.project_root(str(tmp_path / "a/b/c/x.py")) in (
        str((tmp_path / "a").resolve()), )    # no marker above tmp_path in a clean tmp dir
    (tmp_path / "a" / "b" / "setup.cfg").write_text("")
    assert testing.project_root(str(tmp_path / "a/b/c/x.py")) == str((tmp_path / "a/b").resolve())


def test_recompiles_with_guard_reasons(userpkg):
    calls = [(torch.randn(2, 3),), (torch.randn(3, 3),), (torch.randn(8, 3),),
             (torch.randn(1, 3),)]
    found = testing.recompiles(userpkg.branchy, calls)
    assert [(r.call, r.expected) for r in found] == [(1, True), (2, False), (3, True)]
    auto, guard, one = found
    assert auto.reasons[0].kind == "automatic_dynamic" and auto.shapes == {"x": (3, 3)}
    pkg = userpkg.__name__.split(".")[0]
    g = guard.reasons[0]
    assert (g.kind, g.path, g.line, g.source, g.dim) == (
        "guard", f"{pkg}/model.py", LINE["if x.shape[0] > 4:"], "if x.shape[0] > 4:",
        "x.shape[0]")
    assert "x.size()[0]" in g.guard
    assert one.size_one

    with pytest.raises(AssertionError) as exc:
        testing.assert_no_recompiles(userpkg.branchy, [c[0] for c in calls])
    text = str(exc.value)
    assert text.splitlines()[0].startswith("1 recompile of branchy over 4 calls")
    assert f"at {pkg}/model.py:{LINE['if x.shape[0] > 4:']}" in text and "call 2 (x: [8, 3])" in text
    testing.assert_no_recompiles(userpkg.double, [torch.randn(n, 3) for n in (2, 3, 8, 5)])
    # dynamic=False: every new shape is a static recompile, and nothing is "expected"
    with pytest.raises(AssertionError, match="3 recompiles of double"):
        testing.assert_no_recompiles(userpkg.double, [torch.randn(n, 3) for n in (2, 3, 8, 5)],
                                     dynamic=False)


def test_a_size_mismatch_names_the_line_that_specialised_the_dim(userpkg):
    # The loop over range(idx.shape[1]) specialises the dim automatic dynamic made dynamic:
    # the next width fails a static size guard, which names no line of its own. The line is
    # the one the review names for it (the structured trace's specialisation, user stack).
    calls = [torch.randn(2, n) for n in (8, 12, 16)]
    pkg = userpkg.__name__.split(".")[0]
    where = f"{pkg}/model.py:{LINE['for i in range(idx.shape[1]):']}"
    found = testing.recompiles(userpkg.unrolled, calls)
    assert [(r.call, r.expected) for r in found] == [(1, True), (2, False)]
    [auto], [bad] = found[0].reasons, found[1].reasons
    assert (auto.kind, auto.path) == ("automatic_dynamic", None)   # nothing specialised it yet
    assert (bad.kind, bad.dim, f"{bad.path}:{bad.line}", bad.source) == (
        "size_mismatch", "idx.shape[1]", where, "for i in range(idx.shape[1]):")
    with pytest.raises(AssertionError) as exc:
        testing.assert_no_recompiles(userpkg.unrolled, calls)
    line = next(ln for ln in str(exc.value).splitlines() if "guard failed" in ln)
    assert line.strip() == (f"guard failed: tensor 'idx' size mismatch at index 1. expected 12, "
                            f"actual 16; specialised to a constant at {where}  "
                            "(for i in range(idx.shape[1]):)")
