"""pt2bot.yml from a file to `Config`: find it, read it (bounded), check it, build it.

The one place that loads the configuration. The dataclasses are pt2bot/config.py (pure, no
YAML); this package imports them, never the other way round. Modules: yamlread.py (bounded YAML with line numbers, generic),
checks.py (generic checkers), schema.py (pt2bot's sections).
"""
from __future__ import annotations

import os

from pt2bot.config import DEFAULT_CONFIG_NAMES, Config
from pt2bot.errors import ConfigError, ConfigErrors, Problem

__all__ = ["ConfigErrors", "MAX_BYTES", "Problem", "find_config", "find_git_root", "load_config", "parse_config",
           "refuse_symlink_out"]


def __getattr__(name: str):
    if name == "MAX_BYTES":      # lazily: yamlread imports PyYAML
        from pt2bot.configfile.yamlread import MAX_BYTES

        return MAX_BYTES
    raise AttributeError(name)


def find_config(start: str = ".") -> str | None:
    """The first of `DEFAULT_CONFIG_NAMES` that exists in `start`, or None."""
    for name in DEFAULT_CONFIG_NAMES:
        p = os.path.join(start, name)
        if os.path.isfile(p):
            return p
    return None


def find_git_root(path: str) -> str | None:
    """The working tree root above `path` (a `.git` directory, or a file in worktrees), no subprocess."""
    p = os.path.abspath(path)
    while True:
        if os.path.exists(os.path.join(p, ".git")):
            return p
        parent = os.path.dirname(p)
        if parent == p:
            return None
        p = parent


def _within(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip(os.sep) + os.sep)


def refuse_symlink_out(path: str, root: str) -> None:
    """A config file in the repository around `root` (the git root above it, else `root`) that
    a symlink takes out of it is not read: the branch chose that file, not the user, and the
    loader quotes what it reads in its messages (another file's lines would reach the log). A
    file named outside the repository (`--config ~/pt2bot.yml`) is the user's own choice."""
    start = os.path.abspath(root)
    repo = find_git_root(start) or start
    if _within(os.path.abspath(path), repo) and \
            not _within(os.path.realpath(path), os.path.realpath(repo)):
        raise ConfigError(f"a symlink out of the repository root {repo}: not read", file=path)


def load_config(path: str | None, *, required: bool = False, root: str = ".") -> Config:
    """Read and validate pt2bot.yml. `path=None` looks for the default names in `root`."""
    if path is None:
        path = find_config(root)
        if path is None:
            if required:
                raise ConfigError(f"no pt2bot.yml in {os.path.abspath(root)}; "
                                  "pass --config FILE")
            return Config()
    refuse_symlink_out(path, root)
    from pt2bot.configfile.yamlread import read_text

    return parse_config(read_text(path, label="pt2bot.yml"), path)


def parse_config(text: str, path: str = "pt2bot.yml") -> Config:
    """Validate pt2bot.yml text; raise `ConfigErrors` (a `ConfigError`) listing every problem."""
    # the schema (and PyYAML under it) only when there is a file: `pt2bot check` without one,
    # pre-commit's usual case, starts ~30 ms sooner
    from pt2bot.configfile.schema import build_config

    return build_config(text, path)
