"""Publishing a finished report directory: the privileged end of the pipeline.

- `artifact`: read and validate a report directory as *untrusted* input (it may come from a
  fork's artifact): structure, types, sizes and counts checked; all text re-defused.
- `target`: where to publish, from the GitHub Actions environment and event payload.
- `fallback`: what to do without write access: workflow-command annotations + job summary.

The PyGithub calls themselves live in `pt2bot.publish.github` (`publish_dir`, `cli_publish`).
"""
from __future__ import annotations
