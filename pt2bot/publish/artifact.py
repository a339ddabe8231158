"""A report directory read as untrusted data.

Under the fork-safe pattern the directory is a downloaded artifact that a pull request from
a fork could have written entirely. So nothing in it is trusted: files must be regular files
(no symlinks to `/proc/self/environ`), JSON sizes are capped, every field is type-checked,
lists are capped, and every piece of text is made inert before it is posted (Markdown with
`clean_text`, plain text with `plain_text`: pt2bot/report/escape.py owns both). The
bot's hidden markers are never taken from the artifact: they are stripped (defused) and
re-added by the publisher from validated fingerprints. A value the artifact holds never
reaches the job's log unescaped either (error messages quote it with `escape.quote`).
"""
from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pt2bot.errors import UserError
from pt2bot.report.check import MAX_ANNOTATIONS
from pt2bot.report.escape import clean_text, has_controls, log_line, plain_text, quote
from pt2bot.report.markdown import marker

MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_MD_BYTES = 4 * 1024 * 1024
MAX_COMMENTS = 1000          # inline comment candidates kept from review.json
# MAX_ANNOTATIONS (check-run annotations kept) is the renderer's own cap, imported from
# pt2bot/report/check.py: an artifact written by hand gets no more requests out of the
# publisher (one per 50 annotations) than one `pt2bot review` wrote.
MAX_PATH = 500
MAX_TITLE = 255              # GitHub's limit for annotation titles; check titles are short too
MAX_ANNOTATION_MESSAGE = 64 * 1024 - 1
MAX_INT_DIGITS = 20          # a longer integer literal is not a line number (Python refuses
                             # > 4,300 digits with a ValueError that names no place)

CONCLUSIONS = ("success", "failure", "neutral")
LEVELS = ("failure", "warning", "notice")
SIDES = ("LEFT", "RIGHT")

SUMMARY_MARKER = marker("summary")
_SHA = re.compile(r"^[0-9a-f]{7,64}$")
_FINGERPRINT = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


class ArtifactError(UserError):
    """The report directory is missing, malformed or oversized; says which file and field.

    The message is printed to the privileged job's log (cli.py's error boundary, the
    publisher's warnings), so it is made a safe log line here, whatever it quotes.
    """

    def __init__(self, message: str) -> None:
        super().__init__(log_line(message))


class _HugeInt:
    """An integer literal too long to be a number we use; fails every type check."""

    def __init__(self, digits: int) -> None:
        self.digits = digits

    def __repr__(self) -> str:
        return f"<an integer of {self.digits:,} digits>"


@dataclass(frozen=True)
class InlineComment:
    path: str
    line: int
    side: str
    start_line: int | None
    body: str                 # sanitized; carries no marker (the publisher adds it)
    fingerprint: str


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: str                # failure | warning | notice
    title: str
    message: str


@dataclass(frozen=True)
class CheckOutput:
    conclusion: str
    title: str
    summary: str
    text: str | None
    annotations: tuple[Annotation, ...]
    dropped_annotations: int = 0


@dataclass(frozen=True)
class ReportArtifact:
    directory: Path
    head: str | None                       # as claimed by the artifact (untrusted)
    conclusion: str
    summary: str                           # sanitized summary.md (no marker)
    review_body: str                       # sanitized review.json body
    comments: tuple[InlineComment, ...]
    check: CheckOutput
    finding_fingerprints: frozenset[str]   # every finding still present (for stale comments)
    warnings: tuple[str, ...] = ()
    # report.json's `partial` (one shard of a matrix, pt2bot/shard/merge.py): its shard "I/N", or
    # "?" when the object is malformed. Not None = not publishable (publish_dir refuses).
    partial: str | None = None


def cap_text(text: str, limit: int, pointer: str) -> str:
    """At most `limit` characters; a cut ends with `pointer` (where the full report is)."""
    if len(text) <= limit:
        return text
    note = f"\n\n… truncated ({len(text):,} characters in all). {pointer}"
    return text[: max(0, limit - len(note))] + note


def read_untrusted(path: Path, limit: int) -> str:
    """A regular file (never a symlink or device), at most `limit` bytes, as UTF-8 text."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise ArtifactError(f"{path}: missing from the report directory") from None
    except OSError as e:
        raise ArtifactError(f"{path}: cannot be read safely ({e.strerror}); "
                            "symlinks are not accepted") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ArtifactError(f"{path}: not a regular file")
        if st.st_size > limit:
            raise ArtifactError(f"{path}: {st.st_size:,} bytes, over the {limit:,}-byte limit")
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            data = fh.read(limit + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > limit:
        raise ArtifactError(f"{path}: over the {limit:,}-byte limit")
    return data.decode("utf-8", errors="replace")


def _load_json(path: Path, schema: str) -> dict[str, Any]:
    text = read_untrusted(path, MAX_JSON_BYTES)
    try:
        data = json.loads(text, parse_int=_parse_int)
    except json.JSONDecodeError as e:
        raise ArtifactError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    except RecursionError:
        raise ArtifactError(f"{path}:{_deepest(text)}: invalid JSON: nested deeper than the "
                            "parser allows") from None
    except ValueError as e:    # anything else json refuses (it names no place)
        raise ArtifactError(f"{path}: invalid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ArtifactError(f"{path}: expected a JSON object, got {type(data).__name__}")
    if data.get("schema") != schema:
        raise ArtifactError(f"{path}: schema: expected {schema!r}, got {quote(data.get('schema'))}")
    return data


def _parse_int(literal: str) -> int | _HugeInt:
    return int(literal) if len(literal) <= MAX_INT_DIGITS else _HugeInt(len(literal))


def _deepest(text: str, limit: int = 500) -> str:
    """`line:col` where bracket nesting (outside strings) first exceeds `limit`."""
    depth = 0
    for m in re.finditer(r'"(?:[^"\\]|\\.)*"|[\[{]|[\]}]', text):
        tok = m.group(0)
        if tok in ("[", "{"):
            depth += 1
            if depth > limit:
                line = text.count("\n", 0, m.start()) + 1
                return f"{line}:{m.start() - text.rfind(chr(10), 0, m.start())}"
        elif tok in ("]", "}"):
            depth -= 1
    return "1:1"


class _Fields:
    """Typed access to one JSON object with located error messages."""

    def __init__(self, obj: Any, where: str) -> None:
        if not isinstance(obj, dict):
            raise ArtifactError(f"{where}: expected an object")
        self.obj, self.where = obj, where

    def str(self, key: str, *, limit: int, optional: bool = False) -> str | None:
        v = self.obj.get(key)
        if v is None and optional:
            return None
        if not isinstance(v, str):
            raise ArtifactError(f"{self.where}.{key}: expected a string")
        if len(v) > limit:
            raise ArtifactError(f"{self.where}.{key}: {len(v):,} characters, over {limit:,}")
        return v

    def int(self, key: str, *, optional: bool = False) -> int | None:
        v = self.obj.get(key)
        if v is None and optional:
            return None
        if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= 10_000_000:
            raise ArtifactError(f"{self.where}.{key}: expected a positive line number, got "
                                f"{quote(v, 40)}")
        return v

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        v = self.obj.get(key, default)
        if v not in choices:
            raise ArtifactError(f"{self.where}.{key}: expected one of {', '.join(choices)}")
        return v


def check_path(path: str, where: str) -> str:
    if (not path or len(path) > MAX_PATH or path.startswith("/") or "\\" in path
            or has_controls(path, allow_whitespace=False)
            or any(p in ("", ".", "..") for p in path.split("/"))):
        raise ArtifactError(f"{where}: not a repository-relative path: {quote(path)}")
    return path


def _comment(obj: Any, where: str) -> InlineComment:
    f = _Fields(obj, where)
    path = check_path(f.str("path", limit=MAX_PATH) or "", f"{where}.path")
    fp = f.str("fingerprint", limit=64) or ""
    if not _FINGERPRINT.match(fp):
        raise ArtifactError(f"{where}.fingerprint: expected [A-Za-z0-9_.:-]{{1,64}}")
    line = f.int("line")
    start = f.int("start_line", optional=True)
    if start is not None and line is not None and start >= line:
        start = None   # a one-line range is a plain comment
    return InlineComment(path=path, line=line or 1, side=f.choice("side", SIDES, "RIGHT"),
                         start_line=start, fingerprint=fp,
                         body=clean_text(f.str("body", limit=65536) or ""))


def _annotation(obj: Any, where: str) -> Annotation:
    f = _Fields(obj, where)
    start = f.int("start_line") or 1
    end = f.int("end_line", optional=True) or start
    return Annotation(path=check_path(f.str("path", limit=MAX_PATH) or "", f"{where}.path"),
                      start_line=start, end_line=max(start, end),
                      level=f.choice("annotation_level", LEVELS),
                      # Annotations are plain text on GitHub, not Markdown.
                      title=plain_text(f.str("title", limit=10_000, optional=True) or "")[:MAX_TITLE],
                      message=plain_text(f.str("message", limit=MAX_ANNOTATION_MESSAGE) or "")
                      or "(no message)")


def _items(data: dict[str, Any], key: str, where: str, parse, cap: int,
           warnings: list[str]) -> tuple[list[Any], int]:
    """Parse a capped list; a malformed item is dropped with a warning, not fatal."""
    raw = data.get(key) or []
    if not isinstance(raw, list):
        raise ArtifactError(f"{where}.{key}: expected a list")
    out: list[Any] = []
    for i, item in enumerate(raw[:cap]):
        try:
            out.append(parse(item, f"{where}.{key}[{i}]"))
        except ArtifactError as e:
            warnings.append(f"skipped: {e}")
    return out, max(0, len(raw) - cap)


def load_report_dir(directory: str | os.PathLike[str]) -> ReportArtifact:
    """Validate and sanitize a report directory (report.json, summary.md, review.json,
    check.json). Raises `ArtifactError` (exit 2) for a missing or malformed file."""
    d = Path(directory)
    if not d.is_dir():
        raise ArtifactError(f"{d}: not a directory (expected the output of `pt2bot review`)")
    warnings: list[str] = []

    report = _load_json(d / "report.json", "pt2bot.report/1")
    head = report.get("head")
    if head is not None and not (isinstance(head, str) and _SHA.match(head)):
        raise ArtifactError(f"{d / 'report.json'}: head: expected a commit SHA")
    conclusion = _Fields(report, "report.json").choice("conclusion", CONCLUSIONS)
    partial = _partial(report.get("partial"))
    findings = report.get("findings") or []
    if not isinstance(findings, list):
        raise ArtifactError("report.json.findings: expected a list")
    # A finding the smoke run refuted (`smoke.status: not_observed`) stays in report.json,
    # demoted, but no comment is posted for it: an earlier run's comment on it is stale.
    fps = frozenset(f["fingerprint"] for f in findings[:100_000]
                    if isinstance(f, dict) and isinstance(f.get("fingerprint"), str)
                    and _FINGERPRINT.match(f["fingerprint"]) and not _refuted(f))

    summary = clean_text(read_untrusted(d / "summary.md", MAX_MD_BYTES))

    review = _load_json(d / "review.json", "pt2bot.review/1")
    rf = _Fields(review, "review.json")
    review_body = clean_text(rf.str("body", limit=MAX_MD_BYTES, optional=True) or "")
    comments, extra = _items(review, "comments", "review.json", _comment, MAX_COMMENTS, warnings)
    if extra:
        warnings.append(f"review.json: {extra} comments over the {MAX_COMMENTS} cap ignored")

    check = _load_json(d / "check.json", "pt2bot.check/1")
    cf = _Fields(check, "check.json")
    anns, dropped = _items(check, "annotations", "check.json", _annotation, MAX_ANNOTATIONS,
                           warnings)
    text = cf.str("text", limit=MAX_MD_BYTES, optional=True)
    check_out = CheckOutput(
        conclusion=cf.choice("conclusion", CONCLUSIONS),
        title=plain_text(cf.str("title", limit=10_000) or "").replace("\n", " ")[:MAX_TITLE]
        or "pt2bot",
        summary=clean_text(cf.str("summary", limit=MAX_MD_BYTES) or ""),
        text=clean_text(text) if text else None,
        annotations=tuple(anns), dropped_annotations=dropped)
    if check_out.conclusion != conclusion:
        warnings.append(f"check.json conclusion {quote(check_out.conclusion)} differs from "
                        f"report.json {quote(conclusion)}; using check.json")
    return ReportArtifact(directory=d, head=head, conclusion=conclusion, summary=summary,
                          review_body=review_body, comments=tuple(comments), check=check_out,
                          finding_fingerprints=fps, warnings=tuple(warnings), partial=partial)


_SHARD = re.compile(r"^[0-9]{1,4}/[0-9]{1,4}$")


def _refuted(finding: dict[str, Any]) -> bool:
    smoke = finding.get("smoke")
    return isinstance(smoke, dict) and smoke.get("status") == "not_observed"


def _partial(value: Any) -> str | None:
    """The shard of a partial report; any value but null marks the directory partial."""
    if value is None:
        return None
    shard = value.get("shard") if isinstance(value, dict) else None
    return shard if isinstance(shard, str) and _SHARD.match(shard) else "?"
