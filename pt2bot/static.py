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

from pt2bot.config import CONDITIONAL, FAIL_ON, StaticConfig
from pt2bot import gb as gb_registry
from pt2bot.errors import UserError
from pt2bot.findings import Finding, sort_key
from pt2bot.rules import BY_CODE, Rule, select_rules
from pt2bot.rules._base import NEWEST_TORCH
from pt2bot.rules._infer import Rules
from pt2bot.rules._model import FileSummary
from pt2bot.rules._walk import LiveModule, skeleton_module
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


def open_file(root: str, rel: str, codes: tuple[str, ...], *, lazy: bool = True
              ) -> tuple[FileSummary, LiveModule | None, list[str]]:
    """Parse one file and build its skeleton; problems become a located `error`, never an exception."""
    summary = FileSummary(path=rel, module="")
    try:
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
    except OSError as e:
        summary.error = (1, 0, f"cannot read file: {e.strerror}")
        return summary, None, []
    if _SKIP_FILE.search(data):
        summary.skip_file = True
        return summary, None, []
    lines = data.decode("utf-8", "replace").splitlines()
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
        return summary, None, lines
    try:
        summary, live = skeleton_module(rel, tree, lines, _build_rules(codes),
                                        scan_module_code=b"compile" in data or b"export(" in data
                                        or b"torch.export" in data)
        if not lazy:
            live.walk(list(live.nodes))
    except RecursionError:
        return FileSummary(path=rel, module="", error=(1, 0, "cannot analyse: code too deeply nested")), None, lines
    return summary, live, lines


def analyse_file(root: str, rel: str, codes: tuple[str, ...]) -> FileSummary:
    """One file on its own, every function walked (no call graph needed to see all candidates)."""
    summary, _, lines = open_file(root, rel, codes, lazy=False)
    _add_line_info(summary, lines, summary.candidates)
    summary.lines = []
    return summary


def _add_line_info(summary: FileSummary, lines: list[str], candidates: Iterable) -> None:
    info = summary.line_info
    wanted = [c.line for c in candidates]
    if summary.error:
        wanted.append(summary.error[0])
    wanted += [f.disabled_at[0] for f in summary.functions.values() if f.disabled_at]
    for line in wanted:
        if line not in info:
            info[line] = _line_info(lines, line)


def _line_info(lines: list[str], line: int) -> tuple[str, tuple[str, ...] | None]:
    """(stripped source, noqa codes) for a line; codes () means a bare `# noqa`."""
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    m = _NOQA.search(src) if "noqa" in src.lower() else None
    codes: tuple[str, ...] | None = None
    if m:
        codes = tuple(c.upper() for c in re.split(r"[\s,]+", m.group("codes") or "") if c)
    return src.strip(), codes


class _Local:
    """The files of one process: their skeletons, and their ASTs until the end of the check."""

    def __init__(self, root: str, codes: tuple[str, ...]) -> None:
        self.root, self.codes = root, codes
        self.files: dict[str, tuple[FileSummary, LiveModule | None, list[str]]] = {}

    def analyse(self, rels: Sequence[str]) -> list[FileSummary]:
        out = []
        for rel in rels:
            summary, live, lines = open_file(self.root, rel, self.codes)
            _add_line_info(summary, lines, summary.candidates)
            self.files[rel] = (summary, live, lines)
            out.append(summary)
        return out

    def walk(self, requests: dict[str, list[str]]) -> dict[str, tuple[dict, list, dict]]:
        """Walk functions; returns per file (calls per function, new candidates, their line info)."""
        out = {}
        for rel, quals in requests.items():
            summary, live, lines = self.files[rel]
            if live is None:
                continue
            before = len(summary.candidates)
            live.walk(quals)
            new = summary.candidates[before:]
            _add_line_info(summary, lines, new)
            out[rel] = ({q: summary.functions[q].calls for q in quals if q in summary.functions}, new,
                        {c.line: summary.line_info[c.line] for c in new})
        return out


def _serve(conn, root: str, codes: tuple[str, ...]) -> None:
    """A worker process: owns a share of the files for the whole check (ASTs stay here)."""
    gc.disable()
    local = _Local(root, codes)
    while True:
        msg = conn.recv()
        if msg[0] == "analyse":
            conn.send([replace(s, lines=[]) for s in local.analyse(msg[1])])
        elif msg[0] == "walk":
            conn.send(local.walk(msg[1]))
        else:
            conn.close()
            return


class _Processes:
    """Worker processes, each owning a fixed share of the files; the call graph runs here."""

    def __init__(self, root: str, codes: tuple[str, ...], n: int) -> None:
        import multiprocessing as mp

        ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
        self.conns, self.procs, self.owner = [], [], {}
        self.summaries: dict[str, FileSummary] = {}
        for _ in range(n):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(child, root, codes), daemon=True)
            p.start()
            child.close()
            self.conns.append(parent)
            self.procs.append(p)

    def analyse(self, rels: Sequence[str], root: str) -> list[FileSummary]:
        # biggest files first, dealt round-robin: shares of similar total size
        sized = sorted(rels, key=lambda r: -_size(root, r))
        shares: list[list[str]] = [[] for _ in self.conns]
        for i, rel in enumerate(sized):
            shares[i % len(shares)].append(rel)
            self.owner[rel] = i % len(shares)
        for conn, share in zip(self.conns, shares):
            conn.send(("analyse", share))
        for conn in self.conns:
            for s in conn.recv():
                self.summaries[s.path] = s
        return [self.summaries[r] for r in rels]

    def walk(self, requests: dict[str, list[str]]) -> None:
        per: list[dict[str, list[str]]] = [{} for _ in self.conns]
        for rel, quals in requests.items():
            per[self.owner[rel]][rel] = quals
        busy = [i for i, r in enumerate(per) if r]
        for i in busy:
            self.conns[i].send(("walk", per[i]))
        for i in busy:
            for rel, (calls, cands, info) in self.conns[i].recv().items():
                s = self.summaries[rel]
                for q, c in calls.items():
                    s.functions[q].calls = c
                s.candidates.extend(cands)
                s.line_info.update(info)

    def close(self) -> None:
        for conn in self.conns:
            try:
                conn.send(("exit",))
                conn.close()
            except OSError:
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()


def _size(root: str, rel: str) -> int:
    try:
        return os.path.getsize(os.path.join(root, rel))
    except OSError:
        return 0


# --------------------------------------------------------------------------------------------
# the whole check

def check_paths(root: str, paths: Sequence[str], static_cfg: StaticConfig, *, jobs: int = 0,
                torch: str | None = None) -> list[Finding]:
    """All findings for `paths` under `root` (sorted). No torch import; `diff` is None.

    `torch` (else `static_cfg.torch`) is the release the claims must hold on; None keeps the
    claims of every release the rules know (`cli_check` passes `resolve_torch`'s answer).
    """
    root = os.path.abspath(root)
    if static_cfg.conditional not in CONDITIONAL:
        raise UserError(f"static.conditional: {static_cfg.conditional!r} is not one of {', '.join(CONDITIONAL)}")
    torch = torch or static_cfg.torch
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
        found = _check_files(root, files, codes, rules, static_cfg, jobs, torch)
        return sorted(apply_conditional(found, static_cfg.conditional), key=sort_key)
    finally:
        if was_enabled:
            gc.enable()


def _check_files(root: str, files: list[str], codes: tuple[str, ...], rules: list[type[Rule]],
                 cfg: StaticConfig, jobs: int, torch: str | None = None) -> list[Finding]:
    """Skeletons of every file, then walk only the functions the call graph reaches (lazily)."""
    n = jobs if jobs > 0 else (os.cpu_count() or 1)
    if n > 1 and len(files) >= 2 and (jobs > 0 or len(files) >= SMALL_TREE):
        procs = _Processes(root, codes, min(n, len(files)))
        try:
            summaries = procs.analyse(files, root)
            return build_findings(summaries, rules, cfg, walk=lambda level: procs.walk(_requests(level)),
                                  torch=torch)
        finally:
            procs.close()
    local = _Local(root, codes)
    summaries = local.analyse(files)
    return build_findings(summaries, rules, cfg, walk=lambda level: local.walk(_requests(level)), torch=torch)


def _requests(level) -> dict[str, list[str]]:
    req: dict[str, list[str]] = {}
    for s, info in level:
        req.setdefault(s.path, []).append(info.qualname)
    return req


def build_findings(summaries: list[FileSummary], rules: list[type[Rule]], cfg: StaticConfig,
                   walk=None, torch: str | None = None) -> list[Finding]:
    enabled = {r.code for r in rules}
    reach = find_compiled([s for s in summaries if not s.error and not s.skip_file], walk=walk)
    out: list[Finding] = []

    def emit(s: FileSummary, code: str, line: int, col: int, message: str, function: str = "",
             end_line: int | None = None, end_col: int | None = None, suggestion: str | None = None,
             gb: str | None = None, condition: str | None = None, callee: str | None = None) -> None:
        if code not in enabled or _file_ignores(s.path, code, cfg.per_file_ignores):
            return
        if not holds_on_torch(code, torch, callee):
            return
        src, noqa = s.line_info.get(line, ("", None))
        if noqa is not None and (not noqa or any(code.startswith(c) for c in noqa)):
            return
        rule = BY_CODE[code]
        gb = gb or rule.gb
        out.append(Finding(
            rule=code, path=s.path, line=line, col=col, severity=cfg.severity.get(code, rule.severity),
            message=torch_message(rule, message), end_line=end_line, end_col=end_col, source=src,
            function=function, gb=gb, gb_type=gb_registry.gb_type(gb), url=gb_registry.url(gb),
            hints=(f"Rule documentation: `pt2bot rules {code}`",), suggestion=suggestion, condition=condition))

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
                     c.end_line, c.end_col, c.suggestion, c.gb, getattr(c, "condition", None),
                     getattr(c, "callee", None))
    for s, info in reach.disabled:
        line, col = info.disabled_at or (info.line, 0)
        emit(s, CompilerDisable.code, line, col, CompilerDisable.decorator_message(info.qualname), info.qualname)
    return out


# --------------------------------------------------------------------------------------------
# the emit stage: conditions and the user's torch

_DEMOTE = {"error": "warning", "warning": "info", "info": "info"}


def apply_conditional(findings: Iterable[Finding], mode: str) -> list[Finding]:
    """`static.conditional`: findings with a `condition` (a path the default call does not take,
    pt2bot/rules/_walk.py `Conditions`) keep their severity, drop one level, or are hidden."""
    if mode == "keep":
        return list(findings)
    if mode == "hide":
        return [f for f in findings if f.condition is None]
    return [f.with_(severity=_DEMOTE.get(f.severity, f.severity)) if f.condition is not None else f
            for f in findings]


def holds_on_torch(code: str, torch: str | None, callee: str | None = None) -> bool:
    """Whether rule `code`'s claim holds on torch release `torch` (None: keep every claim)."""
    rule = BY_CODE.get(code)
    return rule is None or rule.holds_on(torch, callee)


_FULLGRAPH_NOTE = ("; under `fullgraph=True` torch captures it as an unbacked symbol instead (a Python branch"
                   " on the value still fails)")


def torch_message(rule: type[Rule], message: str) -> str:
    """What the message must add to stay true on every torch and compile mode."""
    if rule.fullgraph_captures and "fullgraph=True" not in message:
        return message + _FULLGRAPH_NOTE
    return message


def resolve_torch(cfg: StaticConfig) -> tuple[str, str]:
    """(release, source): `static.torch` ("config"), else the torch installed beside pt2bot, read
    from its metadata without importing it ("installed"), else the newest release the rules know
    ("assumed": a bare pre-commit environment)."""
    if cfg.torch:
        return cfg.torch, "config"
    from importlib import metadata

    try:
        return metadata.version("torch"), "installed"
    except metadata.PackageNotFoundError:
        return NEWEST_TORCH, "assumed"


def _file_ignores(path: str, code: str, per_file: dict[str, tuple[str, ...]]) -> bool:
    for pat, codes in per_file.items():
        if is_excluded(path, [pat]) and any(code.startswith(c.upper()) or c.upper() == "ALL" for c in codes):
            return True
    return False


def exit_code(findings: Sequence[Finding], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    levels = ("error",) if fail_on == "error" else ("error", "warning")   # info never fails
    return 1 if any(f.severity in levels for f in findings) else 0


# --------------------------------------------------------------------------------------------
# CLI

def _outside(path: str, root: str) -> bool:
    return os.path.relpath(path, root).replace(os.sep, "/").startswith("../")


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (value or "").split(",") if x.strip())


def cli_check(args: argparse.Namespace) -> int:
    from pt2bot.configfile import load_config  # the loader (YAML) only for the CLI

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
    torch, torch_source = resolve_torch(cfg)
    if torch_source == "assumed":
        sys.stderr.write(f"pt2bot: no torch installed and no static.torch configured; assuming torch "
                         f"{torch}, the newest release the rules know\n")
    findings = check_paths(root, paths, cfg, jobs=getattr(args, "jobs", 0) or 0, torch=torch)
    base = getattr(args, "base", None)
    if base:
        from pt2bot import changes

        base_sha = changes.resolve_base(root, base)
        changeset = changes.diff_changes(root, base_sha)
        findings = changes.annotate_findings(findings, changeset)
        filt = getattr(args, "filter", None) or cfg.filter
        findings = [f for f in findings if changes.keep_finding(f, filt)]
    if getattr(args, "results", None):   # `--results FILE`: which models reached each line
        from pt2bot.reach import load_results_file, mark_reached

        findings = mark_reached(findings, load_results_file(args.results))
    from pt2bot.report.findings_text import render_findings

    sys.stdout.write(render_findings(findings, getattr(args, "format", "text") or "text", root=root,
                                     torch={"version": torch, "source": torch_source}))
    sys.stdout.flush()
    return exit_code(findings, cfg.fail_on)
