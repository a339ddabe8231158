"""The one error type for user-facing failures; the CLI maps it to exit code 2.

Anything that is the *user's* mistake (bad config, unknown ref, bad option) raises
`UserError` with a message that says where and what was expected. Failures of the code
being analysed are never errors here: they are findings/results.
"""
from __future__ import annotations

from dataclasses import dataclass


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


MAX_SHOWN = 100  # problems listed in a ConfigErrors message (all are kept in .errors)


@dataclass(frozen=True)
class Problem:
    """One located problem in a file; `order` keeps the order of discovery among equal lines."""
    line: int | None
    key: str | None
    message: str
    order: int = 0


class ConfigErrors(ConfigError):
    """Every problem found in one file; `str()` gives one located line per problem."""

    def __init__(self, file: str, problems: list[Problem]) -> None:
        first = problems[0]
        super().__init__(first.message, file=file, line=first.line, key=first.key)
        self.errors = [ConfigError(p.message, file=file, line=p.line, key=p.key) for p in problems]
        lines = [str(e) for e in self.errors[:MAX_SHOWN]]
        if len(self.errors) > MAX_SHOWN:  # a generated config gone wrong: keep the log readable
            lines.append(f"{file}: ... and {len(self.errors) - MAX_SHOWN} more problems")
        self.args = ("\n".join(lines),)

    def __str__(self) -> str:
        return self.args[0]
