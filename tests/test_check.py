"""`pt2bot check` end to end: cross-file compiled code, suppressions, config, robustness, formats."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pt2bot.cli import main
from pt2bot.config import StaticConfig
from pt2bot.errors import UserError
from pt2bot.static import check_paths
from pt2bot.static.files import Stats

PY = sys.executable


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(textwrap.dedent(text))


def codes(findings) -> set[tuple[str, int, str]]:
    return {(f.path, f.line, f.rule) for f in findings}


TREE = {
    "pkg/__init__.py": "from .layers import Block\n",
    "pkg/base.py": """\
        from torch.nn import Module

        class Base(Module):
            pass
        """,
    "pkg/util.py": """\
        def helper(t):
            return t.sum().item()

        def unused(t):
            return t.sum().item()
        """,
    "pkg/layers.py": """\
        import torch as T
        from .base import Base
        from .util import helper

        class Inner:
            def run(self, x):
                print(x)

        class Block(Base):
            def __init__(self):
                super().__init__()
                self.proj = T.nn.Linear(4, 4)

            def forward(self, x):
                return self._step(self.proj(x))

            def _step(self, y):
                return y * helper(y)
        """,
    "pkg/model.py": """\
        import torch.nn as nn
        from pkg import Block

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)
        """,
    "scripts/train.py": """\
        from torch import compile as c
        import time

        def step(x):
            time.time()
            return x

        def not_compiled(x):
            time.time()
            return x

        fast = c(step)
        """,
}


def test_cross_file_compiled_code(tmp_path):
    write(tmp_path, TREE)
    got = codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1))
    assert got == {("pkg/util.py", 2, "PTC101"), ("scripts/train.py", 5, "PTC107")}
    # same answer with a process pool
    assert codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=2)) == got


def test_function_field_and_relative_paths(tmp_path):
    write(tmp_path, TREE)
    (f,) = [f for f in check_paths(str(tmp_path), ["pkg"], StaticConfig(), jobs=1)]
    assert f.function == "helper" and f.path == "pkg/util.py" and f.source == "return t.sum().item()"


NOQA = """\
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x):
            a = x.sum().item()  # noqa: PTC101
            b = x.sum().item()  # noqa: PTC1
            c = x.sum().item()  # noqa
            d = x.sum().item()  # noqa: E501
            e = x.sum().item()  # noqa: PTC201
            print(a)
            return x
    """


def test_noqa_forms(tmp_path):
    write(tmp_path, {"m.py": NOQA})
    got = codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1))
    assert got == {("m.py", 9, "PTC101"), ("m.py", 10, "PTC101"), ("m.py", 11, "PTC105")}


def test_skip_file_and_config_sections(tmp_path):
    write(tmp_path, {"a/m.py": NOQA, "b/m.py": "# pt2bot: skip-file\n" + textwrap.dedent(NOQA),
                     "c/m.py": NOQA})
    cfg = StaticConfig(exclude=("c/",), per_file_ignores={"a/*.py": ("PTC105",)},
                       severity={"PTC101": "warning"})
    fs = check_paths(str(tmp_path), [], cfg, jobs=1)
    assert codes(fs) == {("a/m.py", 9, "PTC101"), ("a/m.py", 10, "PTC101")}
    assert {f.severity for f in fs} == {"warning"}
    assert codes(check_paths(str(tmp_path), ["a"], StaticConfig(ignore=("PTC1",)), jobs=1)) == set()
    assert codes(check_paths(str(tmp_path), ["a"], StaticConfig(select=("PTC105",)), jobs=1)) == {
        ("a/m.py", 11, "PTC105")}
    with pytest.raises(UserError):
        check_paths(str(tmp_path), [], StaticConfig(severity={"PTC101": "fatal"}))
    with pytest.raises(UserError):
        check_paths(str(tmp_path), ["nope"], StaticConfig())


GOOD = """\
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x):
            return x.sum().item()
    """


def test_bad_input_never_crashes(tmp_path):
    big = "import torch.nn as nn\n\nclass Big(nn.Module):\n    def forward(self, x):\n" + \
        "        x = x + 1\n" * 50_000 + "        return x.item()\n"
    write(tmp_path, {
        "ok.py": GOOD,
        # (files that may define an nn.Module: a directory's other files are not parsed, below)
        "syntax.py": "import torch.nn as nn\nclass M(nn.Module):\n    def f(:\n        pass\n",
        "latin.py": b"import torch.nn as nn\nclass M(nn.Module):\n    x = '\xe9\xff'\n",
        "latin_declared.py": b"# -*- coding: latin-1 -*-\nimport torch.nn as nn\nclass M(nn.Module):\n    x = '\xe9'\n",
        "nul.py": b"import torch.nn as nn\nclass M(nn.Module):\n    x = 1\x00\n",
        "empty.py": "",
        "deep.py": "x = " + "(" * 300 + "1" + ")" * 300 + "\n",
        "big.py": big,
    })
    fs = check_paths(str(tmp_path), [], StaticConfig(), jobs=1)
    by_path = {(f.path, f.rule) for f in fs}
    assert ("ok.py", "PTC101") in by_path
    assert ("big.py", "PTC101") in by_path
    assert ("syntax.py", "PTC000") in by_path
    assert ("latin.py", "PTC000") in by_path
    assert ("nul.py", "PTC000") in by_path
    assert not any(p in ("empty.py", "latin_declared.py") for p, _ in by_path)
    (syn,) = [f for f in fs if f.path == "syntax.py"]
    assert syn.line == 3 and syn.severity == "error" and "cannot parse" in syn.message


def test_a_directory_check_parses_only_files_that_may_hold_compiled_code(tmp_path):
    """A broken file that no nn.Module, compile call or compiled caller can involve is not
    parsed in a directory check (pt2bot/static/scan.py); named on its own, it is (PTC000)."""
    write(tmp_path, {
        "ok.py": GOOD,
        "tokenizer.py": "class Tok(object):\n    def f(:\n        pass\n",
        "helpers.py": "def h(x:\n",
        # reached by name from compiled code: read when the graph asks, and reported
        "used.py": "def scale(x):\n    print(x)\n    return x\n",
        "net.py": "import torch.nn as nn\nfrom used import scale\n\nclass Net(nn.Module):\n"
                  "    def forward(self, x):\n        return scale(x)\n",
    })
    stats = Stats()
    fs = check_paths(str(tmp_path), [], StaticConfig(), jobs=1, stats=stats)
    assert {(f.path, f.rule) for f in fs} == {("ok.py", "PTC101"), ("used.py", "PTC105")}
    assert (stats.files, stats.parsed, stats.unread, stats.reopened) == (5, 3, 2, 0)
    fs = check_paths(str(tmp_path), ["tokenizer.py", "helpers.py"], StaticConfig(), jobs=1)
    assert {(f.path, f.rule, f.line) for f in fs} == {("tokenizer.py", "PTC000", 2), ("helpers.py", "PTC000", 1)}


def test_check_never_imports_torch(tmp_path):
    write(tmp_path, TREE)
    code = textwrap.dedent(f"""
        import sys
        from pt2bot.static import check_paths
        from pt2bot.config import StaticConfig
        from pt2bot.report.findings_text import render_findings
        from pt2bot.report.sarif import findings_to_sarif
        fs = check_paths({str(tmp_path)!r}, [], StaticConfig(), jobs=1)
        assert fs
        for fmt in ("text", "github", "json", "sarif"):
            render_findings(fs, fmt)
        assert "torch" not in sys.modules, "torch was imported"
        assert "github" not in sys.modules, "PyGithub was imported"
    """)
    subprocess.run([PY, "-c", code], check=True)


def run_cli(args, cwd, capsys):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        rc = main(["check", *args])
    finally:
        os.chdir(old)
    return rc, capsys.readouterr()


def test_cli_exit_codes_and_text(tmp_path, capsys):
    write(tmp_path, {"m.py": GOOD, "clean.py": "x = 1\n"})
    rc, out = run_cli(["m.py"], tmp_path, capsys)
    assert rc == 1
    lines = out.out.splitlines()
    assert lines[0].startswith("m.py:5:16: PTC101 ")
    assert lines[1].strip() == "return x.sum().item()"
    assert lines[2].index("^") - lines[1].index("return") == len("return ")
    assert run_cli(["clean.py"], tmp_path, capsys)[0] == 0
    assert run_cli(["m.py", "--ignore", "PTC101"], tmp_path, capsys)[0] == 0
    rc, out = run_cli(["m.py", "--select", "PTC9"], tmp_path, capsys)
    assert rc == 2 and "PTC9" in out.err
    (tmp_path / "pt2bot.yml").write_text("version: 1\nstatic:\n  fail_on: never\n")
    assert run_cli(["m.py"], tmp_path, capsys)[0] == 0
    (tmp_path / "pt2bot.yml").write_text("version: 1\nstatic:\n  fail_on: sometimes\n")
    rc, out = run_cli(["m.py"], tmp_path, capsys)
    assert rc == 2 and "pt2bot.yml" in out.err


def test_cli_json_format(tmp_path, capsys):
    write(tmp_path, {"m.py": GOOD})
    rc, out = run_cli(["--format", "json", "m.py"], tmp_path, capsys)
    data = json.loads(out.out)
    assert rc == 1 and data["schema"] == "pt2bot.findings/1"
    (f,) = data["findings"]
    assert f["rule"] == "PTC101" and f["gb"] == "GB0124" and f["fingerprint"] and f["function"] == "Net.forward"


def test_github_format_cannot_inject_commands(tmp_path, capsys):
    from pt2bot.findings import Finding
    from pt2bot.report.findings_text import render_github

    evil = Finding(rule="PTC101", path="a,b:c%.py", line=3, col=0, severity="error",
                   message="bad\n::error file=x.py,line=1::injected\r%0A")
    out = render_github([evil])
    assert len(out.splitlines()) == 1 and "\r" not in out  # commands are parsed per line only
    assert out.startswith("::error file=a%2Cb%3Ac%25.py,line=3,col=1,title=PTC101::")
    assert "bad%0A::error file=x.py,line=1::injected%0D%250A" in out


def test_base_filter_reports_only_added_lines(git_repo, capsys):
    git_repo.write("m.py", textwrap.dedent(GOOD))
    git_repo.commit("base")
    git_repo.branch("pr")
    git_repo.write("m.py", textwrap.dedent(GOOD) + textwrap.dedent("""\

        class Two(nn.Module):
            def forward(self, x):
                return x.sum().tolist()
        """))
    git_repo.commit("pr")
    rc, out = run_cli(["--base", "main", "--format", "json"], git_repo.path, capsys)
    fs = json.loads(out.out)["findings"]
    assert rc == 1 and [(f["rule"], f["diff"]) for f in fs] == [("PTC102", "added")]
    rc, out = run_cli(["--base", "main", "--filter", "nofilter", "--format", "json"], git_repo.path, capsys)
    assert {f["rule"] for f in json.loads(out.out)["findings"]} == {"PTC101", "PTC102"}


def test_roots_from_export_and_decorators(tmp_path):
    write(tmp_path, {"m.py": """\
        import torch
        from torch.export import export as ex

        class Plain:  # not an nn.Module: compiled only because it is exported below
            def forward(self, x):
                return x.sum().item()

        class Unused:
            def forward(self, x):
                return x.sum().item()

        @torch.compile(fullgraph=False)
        def step(x):
            return x.tolist()

        ep = ex(Plain(), (torch.zeros(2),))
        """})
    got = codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1))
    assert got == {("m.py", 6, "PTC101"), ("m.py", 14, "PTC102")}


def test_mechanical_suggestion_for_dynamic_false(tmp_path):
    write(tmp_path, {"m.py": """\
        import torch
        f = torch.compile(lambda x: x, dynamic=False, backend="eager")
        g = torch.compile(lambda x: x, dynamic=False)
        """})
    fs = check_paths(str(tmp_path), [], StaticConfig(), jobs=1)
    assert [f.suggestion for f in fs] == ['f = torch.compile(lambda x: x, backend="eager")',
                                          "g = torch.compile(lambda x: x)"]


# ---------------------------------------------------------------------------------------------
# conditions: a finding on a path the default call does not take says so

CONDITIONS = """\
    import random
    import warnings
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self, use_tiling=False, use_bias=True, layerdrop=0.1, proj=None):
            super().__init__()
            self.use_tiling = use_tiling
            self.use_bias = use_bias
            self.layerdrop = layerdrop
            self.proj = proj
            self.cos = None
            self.gradient_checkpointing = False

        def forward(self, x, mask=None, scale=None, bias=None, **kwargs):
            if self.training and self.layerdrop > 0.0:
                print("drop")                                         # 19
            if self.training and random.random() < self.layerdrop:   # 20
                return x
            if self.use_tiling:
                print("tiles")                                        # 23
            if self.use_bias:
                print("bias")                                         # 25: default on
            if x.dtype == torch.float16 and not torch.isfinite(x).all():   # 26
                x = x.clamp(-1, 1)
            if mask is not None:
                x = x * mask.sum().item()                             # 29
            if "old" in kwargs:
                warnings.warn("`old` is deprecated")
                print("old")                                          # 32
            if x.shape[1] != 8:
                raise ValueError(f"bad {x.sum().item()}")             # 34
            try:
                y = x + 1
            except RuntimeError:
                print("oops")                                         # 38
            if self.cos is None:
                self.cos = x.cos()
            print("after cache")                                      # 41: default path
            if bias is None:
                print("no bias")                                      # 43: default path
            bias = torch.zeros(1)
            if bias is not None:
                print("bias now")                                     # 46: reassigned above
            if self.gradient_checkpointing:
                print("ckpt")                                         # 48
            z = x.sum().item() if not self.training else 0            # 49: default path
            w = 0 if not self.training else x.sum().item()            # 50
            if scale is None:
                return y
            return y * scale.sum().item()                             # 53


    m = torch.compile(Net())
    """

EXPECTED_CONDITIONS = {
    19: "self.training and self.layerdrop > 0.0",
    20: "self.training",
    23: "self.use_tiling",
    25: None,
    26: "x.dtype == torch.float16",
    29: "mask is not None",
    32: "'old' in kwargs",
    34: "x.shape[1] != 8",
    38: "except RuntimeError",
    41: None,
    43: None,
    46: None,
    48: "self.gradient_checkpointing",
    49: None,
    50: "self.training",
    53: "scale is not None",
}


def test_conditions_name_the_guard_of_non_default_paths(tmp_path):
    write(tmp_path, {"m.py": CONDITIONS})
    # the rules this fixture is about (others, e.g. state mutated in forward at line 40, may add theirs)
    about = ("PTC101", "PTC105", "PTC107", "PTC201", "PTC304")
    fs = [f for f in check_paths(str(tmp_path), [], StaticConfig(conditional="keep"), jobs=1) if f.rule in about]
    got = {f.line: f.condition for f in fs}
    assert got == EXPECTED_CONDITIONS
    # keep: severities as the rules say; the default demotes each conditional finding one level
    kept = {f.line: f.severity for f in fs}
    demoted = {f.line: f.severity for f in check_paths(str(tmp_path), [], StaticConfig(), jobs=1) if f.rule in about}
    for line, cond in EXPECTED_CONDITIONS.items():
        want = {"error": "warning", "warning": "info"}[kept[line]] if cond else kept[line]
        assert demoted[line] == want, (line, kept[line], demoted[line])
    hidden = [f for f in check_paths(str(tmp_path), [], StaticConfig(conditional="hide"), jobs=1) if f.rule in about]
    assert {f.line for f in hidden} == {line for line, c in EXPECTED_CONDITIONS.items() if c is None}


LEAK = """\
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, idx=None):
            out = []
            if idx is None:
                out = x.sum(0)
                return out * 2
            for i in idx:
                out.append(x[i])
            if out:                       # a list here: the tensor branch returned
                x = x + 1
            for o in out:
                x = x + o
            return x

    class Joined(nn.Module):
        def forward(self, x: torch.Tensor, flag: bool = False):
            if flag:
                n = len(x.shape)
            else:
                n = x.sum()
            if n > 1:                     # a tensor when flag is False: this one does break
                x = x + 1
            return x

    m = torch.compile(Net())
    j = torch.compile(Joined())
    """


def test_kinds_of_a_branch_that_returns_do_not_leak(tmp_path):
    """`out` is a tensor only in the branch that returns; after it, a list."""
    write(tmp_path, {"m.py": LEAK})
    fs = check_paths(str(tmp_path), [], StaticConfig(select=("ALL",)), jobs=1)
    assert [(f.rule, f.function) for f in fs] == [("PTC201", "Joined.forward")]


def test_info_never_fails_the_check(tmp_path, capsys):
    write(tmp_path, {"m.py": """\
        import torch.nn as nn

        class Net(nn.Module):
            def forward(self, x):
                if self.training:
                    print(x)
                return x
        """})
    (tmp_path / "pt2bot.yml").write_text("version: 1\nstatic:\n  fail_on: warning\n"
                                         "  severity: {PTC105: warning}\n")
    rc, out = run_cli(["m.py"], tmp_path, capsys)
    assert rc == 0, out.out
    assert "PTC105 [info]" in out.out and "(on the path where `self.training`)" in out.out
    assert out.out.rstrip().endswith("0 error(s), 0 warning(s), 1 info (under a condition; never failing).")
    (tmp_path / "pt2bot.yml").write_text("version: 1\nstatic:\n  fail_on: warning\n  conditional: keep\n"
                                         "  severity: {PTC105: warning}\n")
    rc, out = run_cli(["m.py"], tmp_path, capsys)
    assert rc == 1 and "PTC105 [warning]" in out.out
    (tmp_path / "pt2bot.yml").write_text("version: 1\nstatic:\n  conditional: hide\n")
    rc, out = run_cli(["m.py"], tmp_path, capsys)
    assert rc == 0 and out.out == "No findings in 1 file.\n"


def test_every_format_carries_condition_and_reached_by():
    from pt2bot.findings import Finding
    from pt2bot.report.findings_text import render_findings

    base = Finding(rule="PTC101", path="m.py", line=3, col=4, severity="info", message="`.item()` breaks",
                   source="n = x.item()")
    cond = base.with_(condition="self.training and self.p > 0.0", reached_by=("tiny_gpt", "mlp"))
    unreached = base.with_(line=4, severity="warning", reached_by=())
    plain = base.with_(line=5, severity="error")
    fs = [cond, unreached, plain]

    text = render_findings(fs, "text").splitlines()
    assert text[0] == "m.py:3:5: PTC101 [info] `.item()` breaks (on the path where `self.training and self.p > 0.0`)"
    assert "    reached by `tiny_gpt`, `mlp`" in text and "    not reached by any configured model" in text
    assert text[-1] == "Found 3 finding(s): 1 error(s), 1 warning(s), 1 info (under a condition; never failing)."

    gh = render_findings(fs, "github").splitlines()
    assert gh[0].startswith("::notice file=m.py,line=3,")
    assert gh[0].endswith("::`.item()` breaks (on the path where `self.training and self.p > 0.0`); reached by `tiny_gpt`, `mlp`")
    assert gh[1].startswith("::warning ") and gh[1].endswith("; not reached by any configured model")
    assert gh[2].startswith("::error ") and gh[2].endswith("::`.item()` breaks")

    js = json.loads(render_findings(fs, "json", torch={"version": "2.14", "source": "assumed"}))
    assert js["torch"] == {"version": "2.14", "source": "assumed"}
    a, b, c = js["findings"]
    assert a["condition"] == "self.training and self.p > 0.0" and a["reached_by"] == ["tiny_gpt", "mlp"]
    assert "condition" not in b and b["reached_by"] == []
    assert "condition" not in c and "reached_by" not in c       # absent = not known

    sarif = json.loads(render_findings(fs, "sarif", tool_version="0"))["runs"][0]["results"]
    assert [r["level"] for r in sarif] == ["note", "warning", "error"]
    assert sarif[0]["properties"] == {"condition": "self.training and self.p > 0.0", "reachedBy": ["tiny_gpt", "mlp"]}
    assert "When `self.training and self.p > 0.0`." in sarif[0]["message"]["text"]
    assert sarif[1]["properties"] == {"reachedBy": []} and "properties" not in sarif[2]


# ---------------------------------------------------------------------------------------------
# the user's torch: claims that do not hold on it are dropped

RANDOM = """\
    import random
    import time
    import torch
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x):
            t0 = time.perf_counter()
            return x * random.random() * random.gauss(0, 1) + x.sum().item()

    m = torch.compile(Net())
    """


def _rules_at(out: str) -> list[str]:
    return sorted(f"{f['rule']}:{f['message'].split('`')[1]}" for f in json.loads(out)["findings"])


def test_claims_follow_the_configured_torch(tmp_path, capsys):
    write(tmp_path, {"m.py": RANDOM})
    (tmp_path / "pt2bot.yml").write_text('version: 1\nstatic:\n  torch: "2.13"\n')
    rc, out = run_cli(["--format", "json", "m.py"], tmp_path, capsys)
    data = json.loads(out.out)
    assert data["torch"] == {"version": "2.13", "source": "config"} and out.err == ""
    assert _rules_at(out.out) == ["PTC101:.item()", "PTC107:random.gauss()", "PTC107:random.random()",
                                  "PTC107:time.perf_counter()"]
    (tmp_path / "pt2bot.yml").write_text('version: 1\nstatic:\n  torch: "2.14.1"\n')
    rc, out = run_cli(["--format", "json", "m.py"], tmp_path, capsys)
    # random.random() is traced from torch 2.14 on; random.gauss and the clock still break
    assert _rules_at(out.out) == ["PTC101:.item()", "PTC107:random.gauss()", "PTC107:time.perf_counter()"]
    item = next(f for f in json.loads(out.out)["findings"] if f["rule"] == "PTC101")
    assert "under `fullgraph=True` torch captures it as an unbacked symbol" in item["message"]


def test_installed_torch_is_read_without_importing_it(tmp_path):
    """Without static.torch: the torch beside pt2bot (metadata only); without one, the newest
    release the rules know, said once on stderr."""
    from importlib import metadata

    from pt2bot.rules.base import NEWEST_TORCH

    write(tmp_path, {"m.py": RANDOM})
    repo = str(Path(__file__).resolve().parents[1])
    site = tmp_path / "site"            # a Python path with pt2bot and PyYAML but no torch
    site.mkdir()
    import yaml
    (site / "yaml").symlink_to(Path(yaml.__file__).parent)
    code = textwrap.dedent(f"""\
        import sys
        strip = {bool(True)!r}
        if sys.argv[1] == "bare":
            sys.path = [p for p in sys.path if "site-packages" not in p] + [{repo!r}, {str(site)!r}]
        from pt2bot.cli import main
        rc = main(["check", "--format", "json", "m.py"])
        assert "torch" not in sys.modules
        sys.exit(rc)
        """)
    bare = subprocess.run([PY, "-c", code, "bare"], cwd=tmp_path, capture_output=True, text=True)
    assert bare.returncode == 1, bare.stderr
    assert json.loads(bare.stdout)["torch"] == {"version": NEWEST_TORCH, "source": "assumed"}
    assert bare.stderr.count(f"assuming torch {NEWEST_TORCH}") == 1
    try:
        installed = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return
    here = subprocess.run([PY, "-c", code, "here"], cwd=tmp_path, capture_output=True, text=True)
    assert json.loads(here.stdout)["torch"] == {"version": installed, "source": "installed"}
    assert here.stderr == ""


def test_conditions_reach_through_guarded_names_and_helpers(tmp_path):
    """A name that holds a tensor only on a non-default path (transformers' layerdrop
    `skip_the_layer`), and a module-level helper called only under guards (wav2vec2's
    `_compute_mask_indices`), carry those guards; a helper also called unguarded does not."""
    write(tmp_path, {"m.py": """\
        import numpy as np
        import torch
        import torch.nn as nn


        def _mask(shape):
            return np.random.rand(1).item()          # 7


        def _both(x):
            return x.sum().item()                    # 11


        class Enc(nn.Module):
            def __init__(self, mask_prob=0.0):
                super().__init__()
                self.mask_prob = mask_prob
                self.layerdrop = 0.1
                self.layers = nn.ModuleList([nn.Linear(4, 4)])

            def forward(self, x):
                if self.mask_prob > 0 and self.training:
                    x = x * _mask(x.shape)
                if self.training:
                    x = x + _both(x)
                x = x + _both(x)
                for layer in self.layers:
                    skip = False
                    if self.training and self.layerdrop > 0.0:
                        skip = torch.rand([]) < self.layerdrop
                    if not skip:                     # 31
                        x = layer(x)
                    drop = self.training and torch.rand([]) < 0.5
                    if drop:                         # 34
                        x = x * 0
                    keep = torch.rand([]) < 0.5
                    if keep:                         # 37: a tensor on every path
                        x = x + 1
                return x
        """})
    fs = check_paths(str(tmp_path), [], StaticConfig(select=("ALL",)), jobs=1)
    got = {(f.line, f.rule): f.condition for f in fs}
    # line 34 (`a and t` assigned): reported only when the inference types the `and` as a
    # tensor; if it is, only under the guard
    assert got.pop((34, "PTC201"), "self.training") == "self.training"
    assert got == {
        (7, "PTC101"): "self.mask_prob > 0 and self.training",
        (7, "PTC107"): "self.mask_prob > 0 and self.training",
        (11, "PTC101"): None,
        (31, "PTC201"): "self.training and self.layerdrop > 0.0",
        (37, "PTC201"): None,
    }


def test_analysis_leaves_no_reference_cycles(tmp_path):
    """check_paths runs with the cyclic GC off (ASTs are trees, freed by refcounting): a cycle
    through a walker or a summary would keep every file's AST alive to the end (transformers:
    1.1 GB and a 3 s collection at exit, measured before the fix; 0.18 GB after)."""
    import gc

    write(tmp_path, TREE)
    write(tmp_path, {"c.py": CONDITIONS, "leak.py": LEAK})
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        found = check_paths(str(tmp_path), [], StaticConfig(select=("ALL",)), jobs=1)
        gc.collect()
        # Only the analysis's own objects: torch tests run earlier in the same process can
        # leave cyclic garbage of theirs (FakeTensor, deques) that is collected here too. A
        # cycle through a walker or a summary always holds one of these.
        garbage = [type(o).__name__ for o in gc.garbage
                   if type(o).__module__.split(".")[0] in ("pt2bot", "ast")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert found and garbage == []


def test_torch_module_re_exported_by_the_tree_is_a_module_base(tmp_path):
    """kornia <= 0.8.2: `from kornia.core import Module, Tensor`, where kornia/core re-exports
    torch's. A class deriving from the re-export is an nn.Module: its forward is compiled code
    (before: no finding at all in such files)."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/core/__init__.py": "from torch import Tensor\nfrom torch.nn import Module\n",
        "pkg/m.py": """\
            from pkg.core import Module, Tensor

            class Net(Module):
                def forward(self, x: Tensor) -> Tensor:
                    return x * x.sum().item()
            """,
    })
    assert codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1)) == {("pkg/m.py", 5, "PTC101")}


def test_names_re_exported_by_a_star_import_resolve(tmp_path):
    """kornia's `geometry/transform/__init__.py` is `from .imgwarp import *`: a call of
    `kornia.geometry.transform.warp_affine` reaches imgwarp's function (before: the edge was
    missing, and so were the helper's findings)."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/ops/__init__.py": "from .imgwarp import *\nfrom .other import *\n",
        "pkg/ops/other.py": "def unrelated(t):\n    return t\n",
        "pkg/ops/imgwarp.py": "def warp(t):\n    return t * t.sum().item()\n",
        "pkg/m.py": """\
            import torch.nn as nn
            from pkg.ops import warp

            class Net(nn.Module):
                def forward(self, x):
                    return warp(x)
            """,
    })
    assert codes(check_paths(str(tmp_path), [], StaticConfig(), jobs=1)) == {("pkg/ops/imgwarp.py", 2, "PTC101")}


def test_the_installed_torch_is_read_from_its_dist_info(tmp_path, monkeypatch):
    """`resolve_torch` reads the first torch dist-info on sys.path (without importlib.metadata),
    and falls back to importlib.metadata where there is none."""
    from pt2bot.static import resolve_torch

    site = tmp_path / "site"
    (site / "torch-9.9.1+cpu.dist-info").mkdir(parents=True)
    (site / "torch-9.9.1+cpu.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.1+cpu\n\nVersion: not this\n")
    (site / "torchvision-0.1.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(site)])
    assert resolve_torch(StaticConfig()) == ("9.9.1+cpu", "installed")
    assert resolve_torch(StaticConfig(torch="2.13")) == ("2.13", "config")
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing")])
    assert resolve_torch(StaticConfig())[1] == "assumed"


# --------------------------------------------------------------------------- new vs pre-existing

MOVED_BASE = """\
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x):
            n = x.sum().item()
            return x * n
    """
# The same line, re-indented under a new `if`: changed in the diff, not new to the code.
MOVED_HEAD = """\
    import torch.nn as nn

    class Net(nn.Module):
        def forward(self, x, scale=True):
            if scale:
                n = x.sum().item()
                return x * n
            return x
    """


def _moved_pr(git_repo, extra: str = "") -> None:
    git_repo.write("pt2bot.yml", "version: 1\n")
    git_repo.write("m.py", textwrap.dedent(MOVED_BASE))
    git_repo.commit("base")
    git_repo.branch("pr")
    git_repo.write("m.py", textwrap.dedent(MOVED_HEAD) + textwrap.dedent(extra))
    git_repo.commit("pr")


def test_base_calls_a_reindented_line_pre_existing_as_the_review_does(git_repo, capsys,
                                                                       tmp_path):
    _moved_pr(git_repo)
    rc, out = run_cli(["--base", "main", "--format", "json"], git_repo.path, capsys)
    fs = json.loads(out.out)["findings"]
    assert [(f["rule"], f["diff"], f["new"]) for f in fs] == [("PTC101", "added", False)]
    assert rc == 0      # a finding already on the base never fails the check, as in the review
    # The review's answer on the same PR (static only): the same findings, the same `new`.
    old = os.getcwd()
    os.chdir(git_repo.path)
    try:
        assert main(["review", "--base", "main", "--no-smoke", "--out", str(tmp_path / "o")]) == 0
    finally:
        os.chdir(old)
    capsys.readouterr()
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert [(f["rule"], f["line"], f["new"]) for f in report["findings"]] == \
        [(f["rule"], f["line"], f["new"]) for f in fs]
    rc, out = run_cli(["--base", "main"], git_repo.path, capsys)
    assert rc == 0 and "(pre-existing)" in out.out.splitlines()[0]


def test_base_still_fails_on_a_new_line_beside_a_moved_one(git_repo, capsys):
    _moved_pr(git_repo, """

        class Two(nn.Module):
            def forward(self, x):
                return x.sum().tolist()
        """)
    rc, out = run_cli(["--base", "main", "--format", "json"], git_repo.path, capsys)
    fs = json.loads(out.out)["findings"]
    assert [(f["rule"], f["new"]) for f in fs] == [("PTC101", False), ("PTC102", True)]
    assert rc == 1
    rc, out = run_cli(["--base", "main", "--format", "github"], git_repo.path, capsys)
    first, second = out.out.splitlines()
    assert first.startswith("::notice ") and "(pre-existing)" in first
    assert second.startswith("::error ") and "pre-existing" not in second


# --------------------------------------------------------------------------- a clean check

def test_a_clean_check_says_so_in_one_line_in_the_text_format_only(tmp_path, capsys):
    write(tmp_path, {"clean.py": "x = 1\n", "m.py": GOOD.replace(".item()", "")})
    rc, out = run_cli(["clean.py", "m.py"], tmp_path, capsys)
    assert (rc, out.out) == (0, "No findings in 2 files.\n")
    rc, out = run_cli(["clean.py"], tmp_path, capsys)
    assert out.out == "No findings in 1 file.\n"
    rc, out = run_cli([], tmp_path, capsys)     # the whole tree (tmp_path is no git repo)
    assert out.out == "No findings in 2 files.\n"
    assert run_cli(["--format", "github", "m.py"], tmp_path, capsys)[1].out == ""
    assert json.loads(run_cli(["--format", "json", "m.py"], tmp_path, capsys)[1].out)[
        "findings"] == []


def test_a_clean_diff_says_what_the_filter_left_out(git_repo, capsys):
    git_repo.write("m.py", textwrap.dedent(GOOD))
    git_repo.commit("base")
    git_repo.branch("pr")
    git_repo.write("other.py", "y = 2\n")
    git_repo.commit("pr")
    rc, out = run_cli(["--base", "main"], git_repo.path, capsys)
    assert (rc, out.out) == (
        0, "No findings in 2 files (1 more outside the diff filter `added`).\n")
