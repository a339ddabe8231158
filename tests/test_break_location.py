"""A break's line must lie inside the function dynamo names for its frame. dynamo can misnumber
a resume function's lines: on e3nn 0.6.0's `SimpleNetwork.forward` (torch 2.13) the
`int(batch.max())` of line 103, after a break in a helper, was reported at line 110, `self,`
in another class's `__init__`. Such a break keeps its file but loses its line, so no comment
goes on a line it is not on and no fix is tried there (pt2bot/smoke/breaks.py)."""
from __future__ import annotations

import textwrap

from pt2bot.smoke.breaks import collect_breaks
from pt2bot.smoke.location import RepoPaths
from pt2bot.smoke.trace import TraceCollector, TraceEvent

NET = textwrap.dedent("""\
    import torch


    class SimpleNetwork(torch.nn.Module):
        def forward(self, data):
            batch, x = self.preprocess(data)
            del data
            # the rest
            y = x * 2
            return y + int(batch.max()) + 1


    class Other(torch.nn.Module):
        def __init__(
            self,
            a,
        ):
            super().__init__()
            self.a = [i for i in range(a)]
    """)


def _repo(tmp_path) -> RepoPaths:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "net.py").write_text(NET)
    return RepoPaths(str(tmp_path))


def test_a_line_is_inside_the_function_dynamo_names_or_it_is_not(tmp_path):
    paths = _repo(tmp_path)
    net = str(tmp_path / "pkg" / "net.py")
    assert paths.in_function(net, 10, "forward") is True
    # a resume function: inside the `forward` that holds the line it resumes after
    assert paths.in_function(net, 10, "torch_dynamo_resume_in_forward_at_6") is True
    assert paths.in_function(net, 10,
                             "torch_dynamo_resume_in_torch_dynamo_resume_in_forward_at_6_at_9") is True
    assert paths.in_function(net, 15, "torch_dynamo_resume_in_forward_at_6") is False
    assert paths.in_function(net, 15, "forward") is False
    assert paths.in_function(net, 10, "torch_dynamo_resume_in_forward_at_15") is False
    # a line that holds no code: pytorch-ood's CAC loss, reported on a comment
    assert paths.in_function(net, 7, "forward") is True
    assert paths.in_function(net, 8, "forward") is False
    assert paths.in_function(net, 8, "torch_dynamo_resume_in_forward_at_6") is False
    assert paths.in_function(net, 9, "torch_dynamo_resume_in_forward_at_6") is True
    # what cannot be told
    assert paths.in_function(net, 19, "<listcomp>") is None
    assert paths.in_function(net, 10, None) is None
    (tmp_path / "pkg" / "bad.py").write_text("def f(:\n")
    assert paths.in_function(str(tmp_path / "pkg" / "bad.py"), 1, "f") is None


def _payload(root: str, line: int, func: str) -> str:
    return (f"Graph break in user code at {root}/pkg/net.py:{line}\n"
            "Graph Break Reason: Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
            "  Explanation: Dynamo does not support tracing `Tensor.item()` with "
            "config.capture_scalar_outputs=False.\n\n"
            " For more details about this graph break, please visit: "
            "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html\n\n"
            "User code traceback:\n"
            f'  File "{root}/pkg/net.py", line {line}, in {func}\n'
            "    self,\n")


def test_a_break_dynamo_puts_outside_its_function_keeps_its_file_not_its_line(tmp_path):
    paths = _repo(tmp_path)
    events = TraceCollector()
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {},
                                    _payload(str(tmp_path), 15, "torch_dynamo_resume_in_forward_at_6"), None))
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {},
                                    _payload(str(tmp_path), 10, "torch_dynamo_resume_in_forward_at_6"), None))
    wrong, right = sorted(collect_breaks(events, paths), key=lambda b: b["line"] or 0)
    assert (wrong["path"], wrong["line"], wrong["reported_line"], wrong["source"]) == ("pkg/net.py", None, 15, "")
    assert (right["path"], right["line"], right["gb"]) == ("pkg/net.py", 10, "GB0124")
    assert "reported_line" not in right


def test_the_summary_says_where_dynamo_put_it_and_why_no_comment_is_there():
    from pt2bot.report.summary import break_block

    text = break_block({"gb": "GB0124", "gb_type": "Unsupported Tensor.item() call", "path": "pkg/net.py",
                        "line": None, "reported_line": 110, "function": "forward", "source": ""})
    first, second = text.split("\n")[:2]
    assert "`pkg/net.py` in `forward`" in first
    assert second.strip() == ("dynamo put it at line 110, which holds none of that function's code: the line is not "
                              "known, so no comment is posted on one")


def test_a_break_in_an_installed_package_says_where_in_it(tmp_path):
    # torch 2.13's payload for a guard on a captured `.item()` inside a package's function, as a
    # frame dynamo started in the package has it: no frame of the repository on its stack
    import os

    from pt2bot.smoke.graph_breaks import parse_break
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "fixtures", "models", "graph_break_nested_guard.txt"),
                encoding="utf-8").read()
    lib = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "linformer"
    lib.mkdir(parents=True)
    (lib / "linformer.py").write_text("import torch\n\ndef g(x, s):\n    if s <= 0.0:\n")
    payload = text.replace("/repo/pkg/m.py", str(lib / "linformer.py"))
    repo = tmp_path / "repo"
    repo.mkdir()
    events = TraceCollector()
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {}, payload, None))
    (b,) = collect_breaks(events, RepoPaths(str(repo)))
    assert (b["path"], b["line"], b["library"]) == (None, None, "linformer/linformer.py:4")
    assert b["gb_type"] == "Could not guard on data-dependent expression"
    assert parse_break(payload).header_line == 4

    from pt2bot.report.summary import break_block
    from pt2bot.smoke.verify import _new_break
    assert break_block(b).split("\n")[0] == (
        "- **graph break** Could not guard on data-dependent expression at "
        "`linformer/linformer.py:4` of an installed package")
    assert _new_break(b) == ("Could not guard on data-dependent expression (the guard `zuf0 <= 0.0` from "
                             "`if s <= 0.0:`) outside the repository, in linformer/linformer.py:4 of an "
                             "installed package")
    # the same break seen again from another place in a library: one site, placed in neither
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {},
                                    payload.replace("linformer.py:4", "linformer.py:9"), None))
    (b,) = collect_breaks(events, RepoPaths(str(repo)))
    assert "library" not in b and b["count"] == 2


def test_a_guard_inside_a_package_reached_from_the_repository_says_whose_code_it_quotes(tmp_path):
    # flowtorch's autoregressive inverse, reached from the user's `self.flow.log_prob(z)`: the
    # break is the user's line, but the code its explanation quotes is the package's. A new
    # user read "(the integer `u0` from `x_new[..., idx] = x_temp[..., idx]`) at
    # densityscore/model.py:25", a line that holds no such code.
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "fixtures", "models", "graph_break_nested_guard.txt"),
                encoding="utf-8").read()
    lib = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "linformer"
    lib.mkdir(parents=True)
    (lib / "linformer.py").write_text("import torch\n\ndef g(x, s):\n    if s <= 0.0:\n")
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "m.py").write_text(
        "import torch\nfrom linformer.linformer import g\n\n\n\ndef h(x, *args):\n    x = x + 1\n"
        "    return g(x, *args)\n\ndef f(x):\n    y = h(x, *[s])\n    return y\n")
    inner = 'File "/repo/pkg/m.py", line 4, in g'
    payload = (text.replace("Graph break in user code at /repo/pkg/m.py:4",
                            f"Graph break in user code at {lib / 'linformer.py'}:4")
               .replace(inner, f'File "{lib / "linformer.py"}", line 4, in g')
               .replace("/repo/pkg/m.py", str(repo / "pkg" / "m.py")))
    events = TraceCollector()
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {}, payload, None))
    (b,) = collect_breaks(events, RepoPaths(str(repo)))
    assert (b["path"], b["line"], b["function"]) == ("pkg/m.py", 8, "h")
    assert b["explanation"] == ("the guard `zuf0 <= 0.0` from `if s <= 0.0:` in "
                                "linformer/linformer.py:4")
    # the repository's own guard says no place: its line is the break's
    (own,) = collect_breaks(_events(text.replace("/repo/pkg/m.py", str(repo / "pkg" / "m.py"))),
                            RepoPaths(str(repo)))
    assert own["explanation"] == "the guard `zuf0 <= 0.0` from `if s <= 0.0:`"


def _events(payload: str) -> TraceCollector:
    events = TraceCollector()
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {}, payload, None))
    return events


def test_torchs_note_on_or_and_goes_only_where_the_line_joins_with_them(tmp_path):
    """torch adds "Note: Python `or`/`and` between tensor expressions ..." to every branch on an
    `any()`/`all()`: a new user's `if unseen.any():` got it in pt2bot's comment, a line with
    neither word. Real dynamo on a tiny function, through the break pass."""
    import torch

    from pt2bot.testing import graph_breaks

    (tmp_path / "pyproject.toml").write_text("")
    src = tmp_path / "orand.py"
    src.write_text(textwrap.dedent("""\
        def one(x):
            if x.any():
                x = x + 1
            return x


        def two(x, y):
            if x.any() or y.any():
                x = x + 1
            return x


        def three(x, t):
            if t is None or (t == 0).all():
                return x
            return x / t
        """))
    import importlib.util

    spec = importlib.util.spec_from_file_location("orand_hints", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    note = "Note: Python `or`/`and` between tensor expressions"
    (b,) = graph_breaks(mod.one, torch.zeros(3), user_code=str(tmp_path))
    assert b.gb == "GB0170" and b.source.strip() == "if x.any():"
    assert b.hints and not [h for h in b.hints if h.startswith(note)], b.hints
    got = graph_breaks(mod.two, torch.zeros(3), torch.zeros(3), user_code=str(tmp_path))
    assert any(h.startswith(note) for b in got for h in b.hints), [b.hints for b in got]
    # nor where the `or` joins an `is None` test (gemma's sampler): `|` would compute the tensor
    # side on None, and the `if` would still branch on a tensor
    (b,) = graph_breaks(mod.three, torch.ones(3), torch.ones(3), user_code=str(tmp_path))
    assert b.gb == "GB0170" and not [h for h in b.hints if h.startswith(note)], b.hints
    assert any(h.startswith("Use `torch.cond`") for h in b.hints), b.hints


def test_torchs_advice_to_apply_a_transform_always_goes_only_where_the_block_is_one(tmp_path):
    """torch's hint "For the common pattern `if tensor_cond: x = transform(x)` ..., consider
    making the code branchless by always applying the transform" went onto a check that raises
    (llama2.c's `if not torch.isfinite(h).all(): raise RuntimeError(...)`), where there is no
    transform to apply always. Real dynamo, through the break pass."""
    import importlib.util

    import torch

    from pt2bot.testing import graph_breaks

    (tmp_path / "pyproject.toml").write_text("")
    src = tmp_path / "checks.py"
    src.write_text(textwrap.dedent("""\
        import torch


        def check(h):
            if not torch.isfinite(h).all():
                raise RuntimeError("non-finite hidden states")
            return h * 2


        def clamp(h):
            if torch.isnan(h).any():
                h = torch.nan_to_num(h)
            return h * 2
        """))
    spec = importlib.util.spec_from_file_location("transform_hints", src)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    note = "For the common pattern `if tensor_cond: x = transform(x)`"
    (b,) = graph_breaks(mod.check, torch.zeros(3), user_code=str(tmp_path))
    assert b.gb == "GB0170" and not [h for h in b.hints if h.startswith(note)], b.hints
    # nor torch's "use `torch.cond`", which cannot raise (recurrentgemma's NaN check had it
    # beside the `torch._assert_async` form that keeps the check)
    assert not [h for h in b.hints if h.startswith("Use `torch.cond`")], b.hints
    (b,) = graph_breaks(mod.clamp, torch.zeros(3), user_code=str(tmp_path))
    assert any(h.startswith(note) for h in b.hints), b.hints
    assert any(h.startswith("Use `torch.cond`") for h in b.hints), b.hints


def test_an_export_failure_in_a_package_says_where_in_it(tmp_path):
    """A new user's review said base's export failed 'on "return torch.sigmoid(self.tab(...))"',
    their line, where the library's `if` that line reached was what failed. Real export, with a
    package installed in a site-packages folder, and the warning that quotes base's place."""
    import sys

    import torch

    from pt2bot.smoke.export import locate_failure
    from pt2bot.verdict import _new_cause

    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "gatelib").mkdir(parents=True)
    (site / "gatelib" / "__init__.py").write_text(
        "def gate(x):\n    y = x * 2\n    if y.sum() > 0:\n        return y + 1\n    return y\n")
    repo = tmp_path / "repo"
    (repo / "gatepkg").mkdir(parents=True)
    (repo / "gatepkg" / "__init__.py").write_text("")
    (repo / "gatepkg" / "m.py").write_text(
        "import torch\nfrom gatelib import gate\n\n\nclass M(torch.nn.Module):\n"
        "    def forward(self, x):\n        h = x + 1\n        return gate(h)\n")
    sys.path[:0] = [str(site), str(repo)]
    try:
        from gatepkg.m import M
        x = torch.randn(4, 3)
        try:
            torch.export.export(M(), (x,), dynamic_shapes={"x": {0: torch.export.Dim("b")}})
        except Exception as e:   # noqa: BLE001 - the failure is what is read
            got = locate_failure(e, M(), (x,), {}, None, RepoPaths(str(repo)), locate=False)
        else:
            raise AssertionError("export did not fail")
    finally:
        sys.path.remove(str(site))
        sys.path.remove(str(repo))
        for name in ("gatepkg.m", "gatepkg", "gatelib"):
            sys.modules.pop(name, None)
    assert got == {"path": "gatepkg/m.py", "line": 8, "source": "return gate(h)",
                   "library": "gatelib/__init__.py:3"}, got
    cause = {"export_kind": "data_dependent", "message": "m", "source": "if unseen.any():",
             "base": {"export_kind": "data_dependent", "message": "m", "path": "gatepkg/m.py",
                      "line": 8, "source": "return gate(h)", "library": "gatelib/__init__.py:3"}}
    assert _new_cause(cause) == (
        'data_dependent, the same error now on "if unseen.any():"; on base at gatepkg/m.py:8 '
        '(reaching gatelib/__init__.py:3, in an installed package), on "return gate(h)"')


def test_a_break_inside_a_package_called_from_a_line_says_so(tmp_path):
    """torchhd's hypervectors: `.as_subclass(...)` in its embeddings breaks (GB0117), reached
    from the user's `self.keys(x)`. The break is placed on the user's line, where a comment can
    go, and says in which installed package's code it is: it read as the user's own code."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "net.py").write_text(NET)
    lib = tmp_path / "venv" / "lib" / "python3.11" / "site-packages" / "torchhd"
    lib.mkdir(parents=True)
    (lib / "embeddings.py").write_text("\n" * 410 + "        return super().forward(input).as_subclass(vsa_tensor)\n")
    payload = _payload(str(repo), 10, "forward") + (
        f'  File "{lib}/embeddings.py", line 411, in forward\n'
        "    return super().forward(input).as_subclass(vsa_tensor)\n")
    events = TraceCollector()
    events.events.append(TraceEvent("artifact", "dynamo_graph_break_reason", {}, payload, None))
    paths = RepoPaths(str(repo))
    (b,) = collect_breaks(events, paths)
    assert (b["path"], b["line"], b["inside"]) == ("pkg/net.py", 10, "torchhd/embeddings.py:411")
    assert "library" not in b

    from pt2bot.compare import _break_out
    from pt2bot.report.summary import break_block
    from pt2bot.results import GraphBreak
    out = _break_out(GraphBreak.from_json(b), {})
    assert out["inside"] == "torchhd/embeddings.py:411"
    assert break_block(out).split("\n")[0].endswith(
        "at `pkg/net.py:10` (inside `torchhd/embeddings.py:411`, an installed package) in `forward`")


def test_a_guard_path_torch_cut_inside_the_directories_above_the_repository(tmp_path):
    """torch truncates a guard's path from the left ("mp/tt/repo/torchtune/modules/kv_cache.py"
    for /tmp/tt/repo/...); a function dynamo only inlined (torchtune's KVCache.update, whose
    cached `self.size` recompiles) is no compiled frame's file to match it against, and the
    recompile was placed nowhere. Its tail under the repository is the file, where the whole
    path ends with what torch wrote; torch's own files never match a repository's."""
    from pt2bot.smoke.location import RepoPaths

    root = tmp_path / "repo"
    (root / "torchtune" / "modules").mkdir(parents=True)
    (root / "torchtune" / "modules" / "kv_cache.py").write_text("x = 1\n")
    (root / "modules").mkdir()
    (root / "modules" / "linear.py").write_text("x = 1\n")
    paths = RepoPaths(str(root))
    cut = str(root / "torchtune" / "modules" / "kv_cache.py")[3:]
    assert paths.resolve_suffix(cut, []) == "torchtune/modules/kv_cache.py"
    assert paths.resolve_suffix("ckages/torch/nn/modules/linear.py", []) is None
    assert paths.resolve_suffix("modules/linear.py", []) == "modules/linear.py"
