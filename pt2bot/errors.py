"""The one error type for user-facing failures; the CLI maps it to exit code 2.

Anything that is the *user's* mistake (bad config, unknown ref, bad option) raises
`UserError` with a message that says where and what was expected. Failures of the code
being analysed are never errors here: they are findings/results.
"""
from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix; printed without a traceback, exit code 2."""

    exit_code = 2


class ConfigError(UserError):
    """A located problem in pt2bot.yml: `file:line: key.path: message`."""

    def __init__(self, message: str, *, file: str | None = None, line: int | None = None,
                 key: str | None = None) -> None:
        self.file = file
        self.line = line
        self.key = key
        self.detail = message
        where = ""
        if file:
            where = f"{file}:{line}: " if line else f"{file}: "
        keypart = f"{key}: " if key else ""
        super().__init__(f"{where}{keypart}{message}")
