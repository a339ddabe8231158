"""`pt2bot check --diff` / `--fix`: only the fixes that are safe by construction, printed as a
patch that applies or written in place (atomically, keeping line endings and the file mode,
never through a symlink or outside the checked root), both saying that they were not run."""
from __future__ import annotations

import os
import stat

import pytest

from pt2bot.cli import main
from gitrepo import GitRepo

SRC = (
    "import torch\n"
    "import warnings\n"
    "\n"
    "@torch.compile\n"
    "def f(x):\n"
    "    print('x', x.shape)\n"
    "    if x.sum() > 0:\n"          # PTC201: its candidates are not safe: never applied unrun
    "        return x * 2\n"
    "    warnings.warn('old', FutureWarning)\n"
    "    return x\n"
)
FIXED = SRC.replace("    print('x', x.shape)\n",
                    "    if not torch.compiler.is_compiling():\n        print('x', x.shape)\n").replace(
    "    warnings.warn('old', FutureWarning)\n",
    "    if not torch.compiler.is_compiling():\n        warnings.warn('old', FutureWarning)\n")


def run(capsys, monkeypatch, cwd, *argv):
    monkeypatch.chdir(cwd)
    rc = main(["check", "--no-cache", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_diff_prints_an_applicable_patch_and_changes_nothing(tmp_path, capsys, monkeypatch):
    repo = GitRepo.init(tmp_path / "r")
    repo.write("pkg/m.py", SRC)
    repo.commit("base")
    rc, out, err = run(capsys, monkeypatch, repo.path, "pkg/m.py", "--diff")
    assert rc == 1
    assert (repo.path / "pkg/m.py").read_text() == SRC
    assert out.startswith("--- a/pkg/m.py\n+++ b/pkg/m.py\n")
    assert "x.sum() > 0" not in "".join(ln for ln in out.splitlines() if ln[:1] in "+-")
    assert "would apply 2 safe fixes in 1 file(s)" in err and "were not run" in err
    (repo.path / "fix.patch").write_text(out)
    repo.git("apply", "fix.patch")
    assert (repo.path / "pkg/m.py").read_text() == FIXED


def test_fix_writes_in_place_and_reports_what_is_left(tmp_path, capsys, monkeypatch):
    crlf = SRC.replace("\n", "\r\n")
    p = tmp_path / "m.py"
    p.write_bytes(crlf.encode())
    os.chmod(p, 0o754)
    rc, out, err = run(capsys, monkeypatch, tmp_path, "m.py", "--fix")
    assert p.read_bytes() == FIXED.replace("\n", "\r\n").encode()
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o754
    assert "applied 2 safe fixes in 1 file(s)" in err and "were not run" in err
    assert "PTC201" in out and "PTC105" not in out and "PTC106" not in out and rc == 1
    # nothing safe is left: a second --fix changes nothing
    rc, out, err = run(capsys, monkeypatch, tmp_path, "m.py", "--diff")
    assert rc == 0 and out == "" and "would apply 0 safe fixes" in err


def test_fix_never_writes_through_a_symlink(tmp_path, capsys, monkeypatch):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "o.py").write_text(SRC)
    (root / "real.py").write_text(SRC)
    os.symlink(outside / "o.py", root / "out_link.py")    # out of the root: not even read
    os.symlink(root / "real.py", root / "alias.py")       # inside: read, never written through
    rc, out, err = run(capsys, monkeypatch, root, ".", "--fix")
    assert (outside / "o.py").read_text() == SRC
    assert os.path.islink(root / "alias.py") and os.path.islink(root / "out_link.py")
    assert (root / "real.py").read_text() == FIXED
    assert "alias.py: reached through a symlink" in err


def test_diff_and_fix_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        main(["check", "--diff", "--fix"])
    assert "not allowed with" in capsys.readouterr().err


def test_a_file_with_terminal_controls_is_not_fixed(tmp_path, capsys, monkeypatch):
    (tmp_path / "m.py").write_text(SRC.replace("'old'", "'\x1b[2Jold'"))
    rc, out, err = run(capsys, monkeypatch, tmp_path, "m.py", "--diff")
    assert out == "" and "control characters; not fixed" in err and "\x1b" not in err


def test_a_warning_under_a_tensor_test_is_given_in_eager_only_once(tmp_path, capsys, monkeypatch):
    """PTC201's safe edit of an `if` whose block only warns (the test and the warning in
    eager only) and PTC106's guard of the warning inside it: the header's edit decides the
    block too, so the warning is not guarded a second time."""
    src = (
        "import torch\n"
        "import warnings\n"
        "\n"
        "@torch.compile\n"
        "def f(x):\n"
        "    if (x < 0).any():\n"
        "        warnings.warn('negative input')\n"
        "    return x.relu()\n"
    )
    p = tmp_path / "m.py"
    p.write_text(src)
    rc, out, err = run(capsys, monkeypatch, tmp_path, "m.py", "--fix")
    assert p.read_text() == src.replace("    if (x < 0).any():\n",
                                        "    if not torch.compiler.is_compiling() and (x < 0).any():\n")
    assert "applied 1 safe fix in 1 file(s)" in err
