"""`pt2bot check`: the static rules over a tree of Python files. Never imports torch.

Stages: discover files -> analyse each file (parse once, one walk; in worker processes for
large trees) -> resolve compiled code across files (pt2bot/rules/_graph.py) -> findings
(suppressions, config severities) -> optional diff filter -> render.
"""
from __future__ import annotations

import argparse
import ast
import fnmatch
import gc
import os
import re
import sys
from dataclasses import replace
from typing import Iterable, Sequence

from pt2bot.config import FAIL_ON, StaticConfig
from pt2bot.errors import UserError
from pt2bot.findings import Finding, sort_key
from pt2bot.rules import BY_CODE, Rule, select_rules
from pt2bot.rules._analysis import FileSummary, Rules, analyse_module
from pt2bot.rules._graph import find_compiled
from pt2bot.rules.compiler_disable import CompilerDisable

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "node_modules", "__pycache__",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", "build", "dist", ".eggs", "site-packages"})
SMALL_TREE = 150            # below this many files one process is faster than a pool
_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Za-z]+[0-9]+(?:[\s,]+[A-Za-z]+[0-9]+)*))?", re.IGNORECASE)
_SKIP_FILE = re.compile(rb"#\s*pt2bot:\s*skip-file\b")


# --------------------------------------------------------------------------------------------
# discovery

def discover_files(root: str, paths: Sequence[str], exclude: Sequence[str] = ()) -> list[str]:
    """Repo-relative (forward-slash) paths of the .py files under `paths`, minus `exclude` globs."""
    root = os.path.abspath(root)
    found: set[str] = set()
    for p in paths or (".",):
        full = p if os.path.isabs(p) else os.path.join(root, p)
        if any(ch in p for ch in "*?["):
            import glob
            matches = glob.glob(full, recursive=True)
        else:
            if not os.path.exists(full):
                raise UserError(f"{p}: no such file or directory")
            matches = [full]
        for m in matches:
            if os.path.isdir(m):
                for dirpath, dirnames, filenames in os.walk(m):
                    dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
                    for fn in filenames:
                        if fn.endswith(".py"):
                            found.add(_rel(root, os.path.join(dirpath, fn)))
            elif os.path.isfile(m):
                found.add(_rel(root, m))
    return sorted(f for f in found if not is_excluded(f, exclude))


def _rel(root: str, path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith("../"):
        raise UserError(f"{path}: outside the checked root {root}")
    return rel


def is_excluded(rel: str, patterns: Iterable[str]) -> bool:
    for pat in patterns:
        pat = pat.rstrip("/")
        if fnmatch.fnmatch(rel, pat) or rel.startswith(pat + "/") or fnmatch.fnmatch(rel, pat + "/*"):
            return True
    return False


# --------------------------------------------------------------------------------------------
# per-file analysis (runs in worker processes)

_RULES_CACHE: dict[tuple[str, ...], tuple[Rules, list[Rule]]] = {}


def _build_rules(codes: tuple[str, ...]) -> Rules:
    cached = _RULES_CACHE.get(codes)
    if cached:
        return cached[0]
    instances = [BY_CODE[c]() for c in codes]
    handlers: dict[type, list] = {}
    for r in instances:
        for t in r.node_types:
            handlers.setdefault(t, []).append(r.check)
    rules = Rules(handlers, [r.finish for r in instances])
    _RULES_CACHE[codes] = (rules, instances)
    return rules


def analyse_file(root: str, rel: str, codes: tuple[str, ...]) -> FileSummary:
    """Parse and analyse one file; problems become a located `error`, never an exception."""
    summary = FileSummary(path=rel, module="")
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
    except OSError as e:
        summary.error = (1, 0, f"cannot read file: {e.strerror}")
        return summary
    if _SKIP_FILE.search(data):
        summary.skip_file = True
        return summary
    text = data.decode("utf-8", "replace")
    lines = text.splitlines()
    try:
        tree = ast.parse(data, filename=rel)
    except SyntaxError as e:
        msg = (e.msg or "invalid syntax").splitlines()[0]
        summary.error = (e.lineno or 1, max((e.offset or 1) - 1, 0), f"cannot parse: {msg}")
    except (ValueError, UnicodeDecodeError) as e:   # null bytes, undecodable bytes
        summary.error = (1, 0, f"cannot parse: {str(e).splitlines()[0]}")
    except (RecursionError, MemoryError):
        summary.error = (1, 0, "cannot parse: expression too deeply nested")
    if summary.error:
        line = summary.error[0]
        summary.line_info = {line: _line_info(lines, line)}
        return summary
    try:
        summary = analyse_module(rel, tree, lines, _build_rules(codes),
                                 scan_module_code=b"compile" in data or b"export" in data)
    except RecursionError:
        summary = FileSummary(path=rel, module="", error=(1, 0, "cannot analyse: code too deeply nested"))
        summary.line_info = {}
        return summary
    info = {}
    for c in summary.candidates:
        if c.line not in info:
            info[c.line] = _line_info(lines, c.line)
    for f in summary.functions.values():
        if f.disabled_at and f.disabled_at[0] not in info:
            info[f.disabled_at[0]] = _line_info(lines, f.disabled_at[0])
    summary.line_info = info
    summary.lines = []           # do not ship whole files back to the parent process
    return summary


def _line_info(lines: list[str], line: int) -> tuple[str, tuple[str, ...] | None]:
    """(stripped source, noqa codes) for a line; codes () means a bare `# noqa`."""
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    m = _NOQA.search(src) if "noqa" in src.lower() else None
    codes: tuple[str, ...] | None = None
    if m:
        codes = tuple(c.upper() for c in re.split(r"[\s,]+", m.group("codes") or "") if c)
    return src.strip(), codes


def _analyse_star(task: tuple[str, str, tuple[str, ...]]) -> FileSummary:
    return analyse_file(*task)


# --------------------------------------------------------------------------------------------
# the whole check

def check_paths(root: str, paths: Sequence[str], static_cfg: StaticConfig, *, jobs: int = 0) -> list[Finding]:
    """All findings for `paths` under `root` (sorted). No torch import; `diff` is None."""
    root = os.path.abspath(root)
    rules = select_rules(static_cfg.select, static_cfg.ignore)
    for code, sev in static_cfg.severity.items():
        if code not in BY_CODE:
            raise UserError(f"static.severity: unknown rule code {code!r}")
        if sev not in ("error", "warning"):
            raise UserError(f"static.severity.{code}: {sev!r} is not error|warning")
    files = discover_files(root, paths or static_cfg.paths or (".",), static_cfg.exclude)
    codes = tuple(r.code for r in rules if r.code != "PTC000")
    # ASTs and summaries are trees (no reference cycles), freed by refcounting; the cyclic GC
    # would only re-scan millions of live AST nodes again and again (measured: up to 2x).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        summaries = _analyse_all(root, files, codes, jobs)
        return sorted(build_findings(summaries, rules, static_cfg), key=sort_key)
    finally:
        if was_enabled:
            gc.enable()


def _analyse_all(root: str, files: list[str], codes: tuple[str, ...], jobs: int) -> list[FileSummary]:
    n = jobs if jobs > 0 else (os.cpu_count() or 1)
    if n <= 1 or (jobs <= 0 and len(files) < SMALL_TREE) or len(files) < 2:
        return [analyse_file(root, f, codes) for f in files]
    import multiprocessing as mp
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    ctx = mp.get_context(method)
    tasks = [(root, f, codes) for f in files]
    chunk = max(1, min(32, len(files) // (n * 8) or 1))
    with ctx.Pool(min(n, len(files)), initializer=gc.disable) as pool:
        return list(pool.imap(_analyse_star, tasks, chunksize=chunk))


def build_findings(summaries: list[FileSummary], rules: list[type[Rule]], cfg: StaticConfig) -> list[Finding]:
    enabled = {r.code for r in rules}
    reach = find_compiled([s for s in summaries if not s.error and not s.skip_file])
    out: list[Finding] = []

    def emit(s: FileSummary, code: str, line: int, col: int, message: str, function: str = "",
             end_line: int | None = None, end_col: int | None = None, suggestion: str | None = None,
             gb: str | None = None) -> None:
        if code not in enabled or _file_ignores(s.path, code, cfg.per_file_ignores):
            return
        src, noqa = s.line_info.get(line, ("", None))
        if noqa is not None and (not noqa or any(code.startswith(c) for c in noqa)):
            return
        rule = BY_CODE[code]
        gb = gb or rule.gb
        out.append(Finding(
            rule=code, path=s.path, line=line, col=col, severity=cfg.severity.get(code, rule.severity),
            message=message, end_line=end_line, end_col=end_col, source=src, function=function,
            gb=gb, gb_type=_gb_type(gb), url=_gb_url(gb),
            hints=(f"Rule documentation: `pt2bot rules {code}`",), suggestion=suggestion))

    for s in summaries:
        if s.skip_file:
            continue
        if s.error:
            line, col, msg = s.error
            emit(s, "PTC000", line, col, msg)
            continue
        for c in s.candidates:
            if c.scope == "any" or (s.path, c.function) in reach.compiled:
                emit(s, c.rule, c.line, c.col, c.message, "" if c.function == "<module>" else c.function,
                     c.end_line, c.end_col, c.suggestion, c.gb)
    for s, info in reach.disabled:
        line, col = info.disabled_at or (info.line, 0)
        emit(s, CompilerDisable.code, line, col, CompilerDisable.decorator_message(info.qualname), info.qualname)
    return out


def _gb_type(gb: str | None) -> str | None:
    from pt2bot.rules._base import GB_TYPES
    return GB_TYPES.get(gb) if gb else None


def _gb_url(gb: str | None) -> str | None:
    from pt2bot.rules._base import GB_URL
    return GB_URL.format(gb.lower()) if gb else None


def _file_ignores(path: str, code: str, per_file: dict[str, tuple[str, ...]]) -> bool:
    for pat, codes in per_file.items():
        if is_excluded(path, [pat]) and any(code.startswith(c.upper()) or c.upper() == "ALL" for c in codes):
            return True
    return False


def exit_code(findings: Sequence[Finding], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    levels = ("error",) if fail_on == "error" else ("error", "warning")
    return 1 if any(f.severity in levels for f in findings) else 0


# --------------------------------------------------------------------------------------------
# CLI

def _outside(path: str, root: str) -> bool:
    return os.path.relpath(path, root).replace(os.sep, "/").startswith("../")


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (value or "").split(",") if x.strip())


def cli_check(args: argparse.Namespace) -> int:
    from pt2bot.config import load_config

    config = load_config(getattr(args, "config", None))
    cfg = config.static
    root = config.root if config.path else os.getcwd()
    select = _split(getattr(args, "select", None)) or cfg.select
    ignore = cfg.ignore + _split(getattr(args, "ignore", None))
    cfg = replace(cfg, select=tuple(select), ignore=tuple(ignore))
    if cfg.fail_on not in FAIL_ON:
        raise UserError(f"static.fail_on: {cfg.fail_on!r} is not one of {', '.join(FAIL_ON)}")
    paths = list(getattr(args, "paths", None) or [])
    if paths:
        # command-line paths are relative to the current directory, as users expect
        paths = [os.path.abspath(p) for p in paths]
        if not config.path and any(_outside(p, root) for p in paths):
            # checking a tree elsewhere: its enclosing directory is the root of reported paths
            common = os.path.commonpath(paths)
            root = common if os.path.isdir(common) else os.path.dirname(common)
    findings = check_paths(root, paths, cfg, jobs=getattr(args, "jobs", 0) or 0)
    base = getattr(args, "base", None)
    if base:
        from pt2bot import changes

        base_sha = changes.resolve_base(root, base)
        changeset = changes.diff_changes(root, base_sha)
        findings = changes.annotate_findings(findings, changeset)
        filt = getattr(args, "filter", None) or cfg.filter
        findings = [f for f in findings if changes.keep_finding(f, filt)]
    from pt2bot.report.findings_text import render_findings

    sys.stdout.write(render_findings(findings, getattr(args, "format", "text") or "text", root=root))
    sys.stdout.flush()
    return exit_code(findings, cfg.fail_on)
