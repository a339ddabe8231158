"""`pt2bot check a.py b.py`: the rest of the repository is context; the per-file cache.

Pre-commit passes only the changed files. The analysis must still see the package's base
classes, helpers and callers in the other files (the config's `static.paths`, else the git
root), report only on the given files, and not pay for the whole tree again on every commit
(the cache in `.pt2bot-cache/`, pt2bot/static_cache.py).
"""
from __future__ import annotations

import json
import os
import stat
import sys
import textwrap

import pytest

from pt2bot.cli import main
from tests.gitrepo import GitRepo

BASE = """\
    import torch.nn as nn

    class Base(nn.Module):
        def scale(self, x):
            return x * 2
    """
SUB = """\
    from pkg.base import Base

    class Sub(Base):
        def forward(self, x):
            n = x.sum().item()
            return self.scale(x) + n
    """
HELPERS = """\
    def shrink(t):
        return t.tolist()
    """
CALLER = """\
    import torch.nn as nn
    from pkg.helpers import shrink

    class Net(nn.Module):
        def forward(self, x):
            return shrink(x)
    """


def make_repo(tmp_path, files: dict[str, str]) -> GitRepo:
    repo = GitRepo.init(tmp_path / "repo")
    for rel, text in files.items():
        repo.write(rel, textwrap.dedent(text))
    repo.commit("base")
    return repo


def check(cwd, args, capsys, env=None) -> tuple[int, list[dict]]:
    old = os.getcwd()
    saved = {k: os.environ.get(k) for k in (env or {})}
    os.environ.update(env or {})
    os.chdir(cwd)
    try:
        rc = main(["check", "--format", "json", *args])
    finally:
        os.chdir(old)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    out = capsys.readouterr().out
    return rc, json.loads(out)["findings"]


def rules_at(findings) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["rule"]) for f in findings}


def test_base_class_in_another_file_is_seen(tmp_path, capsys):
    """Fails on the old code: given only pkg/sub.py, `Sub` did not look like an nn.Module."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE, "pkg/sub.py": SUB})
    rc, fs = check(repo.path, ["--no-cache", "pkg/sub.py"], capsys)
    assert rules_at(fs) == {("pkg/sub.py", 5, "PTC101")}
    assert rc == 1


def test_callers_in_other_files_and_only_given_files_reported(tmp_path, capsys):
    """A helper is compiled code because a model elsewhere calls it; that model's own findings
    (pkg/model.py has one) are not reported when only the helper's file is given."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/helpers.py": HELPERS, "pkg/caller.py": CALLER,
                                "pkg/model.py": SUB.replace("pkg.base", "pkg.base2"),
                                "pkg/base2.py": BASE})
    rc, fs = check(repo.path, ["--no-cache", "pkg/helpers.py"], capsys)
    assert rules_at(fs) == {("pkg/helpers.py", 2, "PTC102")}
    # two given files: both reported, nothing else
    rc, fs = check(repo.path, ["--no-cache", "pkg/helpers.py", "pkg/model.py"], capsys)
    assert rules_at(fs) == {("pkg/helpers.py", 2, "PTC102"), ("pkg/model.py", 5, "PTC101")}


def test_static_paths_bound_the_context(tmp_path, capsys):
    """With `static.paths` in the config, the context is those paths, not the whole git root."""
    repo = make_repo(tmp_path, {"src/pkg/__init__.py": "", "src/pkg/sub.py": SUB.replace("pkg.base", "src.pkg.base"),
                                "src/pkg/base.py": BASE, "pt2bot.yml": "version: 1\nstatic:\n  paths: [src/]\n",
                                # outside static.paths: not read (a syntax error here would be PTC000)
                                "scripts/broken.py": "def (:\n"})
    rc, fs = check(repo.path, ["--no-cache", "src/pkg/sub.py"], capsys)
    assert rules_at(fs) == {("src/pkg/sub.py", 5, "PTC101")}


def test_subdirectory_as_cwd_reports_paths_as_before(tmp_path, capsys):
    """Run from a subdirectory without a config: paths stay relative to the cwd, and the
    context is what lies under it (nothing above can be named relative to it)."""
    repo = make_repo(tmp_path, {"pkg/__init__.py": "", "pkg/base.py": BASE.replace("Base", "B0"),
                                "pkg/inner/base.py": BASE, "pkg/inner/sub.py": SUB.replace("pkg.base", "base")})
    rc, fs = check(repo.path / "pkg" / "inner", ["--no-cache", "sub.py"], capsys)
    assert rules_at(fs) == {("sub.py", 5, "PTC101")}


def test_outside_git_no_context(tmp_path, capsys):
    """Not in a git repository and no config: only the given files (never the whole parent dir)."""
    d = tmp_path / "plain"
    (d / "pkg").mkdir(parents=True)
    (d / "pkg" / "base.py").write_text(textwrap.dedent(BASE))
    (d / "pkg" / "sub.py").write_text(textwrap.dedent(SUB))
    if any((p / ".git").exists() for p in [tmp_path, *tmp_path.parents]):
        pytest.skip("the temp dir is inside a git repository")
    rc, fs = check(d, ["--no-cache", "pkg/sub.py"], capsys)
    assert fs == [] and rc == 0
