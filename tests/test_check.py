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
        "syntax.py": "def f(:\n    pass\n",
        "latin.py": b"x = '\xe9\xff'\n",
        "latin_declared.py": b"# -*- coding: latin-1 -*-\nx = '\xe9'\n",
        "nul.py": b"x = 1\x00\n",
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
    assert syn.line == 1 and syn.severity == "error" and "cannot parse" in syn.message


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
