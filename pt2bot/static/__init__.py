"""`pt2bot check`'s driver: which files to read and in what order, over the analysis engine.

- `discover`: the .py files under the given paths, minus skipped directories and excludes
  (regular files inside the root only: no symlink out of it, no FIFO or device);
- `scan`: a text scan that picks the files that may define an `nn.Module` or call compile;
- `files`: the per-file stage (parse, skeleton, walks; worker processes for large trees);
- `cache`: the per-file records in the user's cache directory (never in the checkout), keyed
  by content and the analysis code;
- `check`: compiled code across files -> findings (suppressions, severities, conditions, the
  user's torch) and `cli_check`.

The engine itself (kinds, walks, the call graph) is `pt2bot.analysis`; the rules are
`pt2bot.rules`. Nothing here imports torch.
"""
from __future__ import annotations

from pt2bot.static.check import check_paths, cli_check, exit_code, open_cache, resolve_torch
from pt2bot.static.discover import discover_files

__all__ = ["check_paths", "cli_check", "discover_files", "exit_code", "open_cache", "resolve_torch"]
