"""Shared pytest fixtures. Test modules import the repo builder with `from gitrepo import GitRepo`."""
from __future__ import annotations

import os
import sys

import pytest

# pytest's default import mode puts this directory on sys.path already; adding it here keeps
# `from gitrepo import GitRepo` working under `--import-mode=importlib` too.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from gitrepo import GitRepo  # noqa: E402


@pytest.fixture
def git_repo(tmp_path) -> GitRepo:
    """An empty git repo (branch `main`, fixed identity) in a temp dir; see tests/gitrepo.py."""
    return GitRepo.init(tmp_path / "repo")


@pytest.fixture(autouse=True)
def _check_cache_in_a_temp_dir(monkeypatch, tmp_path_factory):
    """`pt2bot check`'s default cache lives in the user's cache directory (pt2bot/static/cache.py
    `user_cache_dir`); the tests' checks keep theirs in one temp directory per test process
    instead of adding a directory per temp repository to the real one."""
    import pt2bot.static.cache as cache

    base = str(tmp_path_factory.getbasetemp() / "user-cache" / "pt2bot")
    monkeypatch.setattr(cache, "user_cache_dir", lambda env=None: base, raising=False)
