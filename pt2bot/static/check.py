"""`pt2bot check`: the static rules over a tree of Python files. Never imports torch.

Stages: discover files -> analyse the files that may hold roots (a text scan picks them:
pt2bot/static/scan.py; parse once; in worker processes for large trees; cached per file:
pt2bot/static/files.py, pt2bot/static/cache.py) -> resolve compiled code
across files, reading the other files it names (pt2bot/analysis/graph.py) -> findings (suppressions, config severities) ->
optional diff filter -> render. Given explicit files (pre-commit), the rest of the repository
is read as context (base classes, helpers, callers) and only the given files are reported.
"""
from __future__ import annotations

import argparse
import gc
import os
import sys
from dataclasses import replace
from typing import TYPE_CHECKING, Iterable, Sequence

from pt2bot.config import CONDITIONAL, FAIL_ON, StaticConfig
from pt2bot import gb as gb_registry
from pt2bot.errors import UserError
from pt2bot.findings import Finding, sort_key
from pt2bot.rules import BY_CODE, Rule, select_rules
from pt2bot.rules.base import NEWEST_TORCH
from pt2bot.analysis.model import FileSummary, call_guards, call_pos
from pt2bot.configfile import find_git_root
from pt2bot.static.cache import Cache, resolve_cache_dir
from pt2bot.static.discover import discover_files, is_excluded, rel_path, warn
from pt2bot.static.files import Later, Stats, run_analysis
from pt2bot.analysis.graph import CrossFile, DisabledCall, Reach, find_compiled
from pt2bot.analysis.sizeargs import resolve_pending
from pt2bot.rules.compiler_disable import CompilerDisable

if TYPE_CHECKING:
    from pt2bot.changes import ChangeSet

# --------------------------------------------------------------------------------------------
# the whole check

def check_paths(root: str, paths: Sequence[str], static_cfg: StaticConfig, *, jobs: int = 0,
                torch: str | None = None, context: Sequence[str] = (), cache: Cache | None = None,
                stats: Stats | None = None) -> list[Finding]:
    """All findings for `paths` under `root` (sorted). No torch import; `diff` is None.

    `context`: more paths under `root` whose files are analysed for the call graph (base
    classes, helpers, callers) but never reported. `cache`: per-file summaries to reuse and
    update (pt2bot/static/cache.py). `stats`, if given, is filled in (files cached, parsed...).

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
    said: set[str] = set()      # a path both named and in the context is warned about once

    def note(message: str) -> None:
        if message not in said:
            said.add(message)
            warn(message)

    files = discover_files(root, paths or static_cfg.paths or (".",), static_cfg.exclude, note=note)
    # Files named one by one (pre-commit's) are always parsed: a syntax error there is PTC000.
    # Of a directory, only what may hold compiled code is (pt2bot/static/scan.py).
    full = (p if os.path.isabs(p) else os.path.join(root, p) for p in paths or ())
    named = set(files).intersection(rel_path(root, f) for f in full if os.path.isfile(f))
    report = None
    if context:
        report = set(files)
        files = sorted(report.union(discover_files(root, context, static_cfg.exclude, note=note)))
    codes = tuple(r.code for r in rules if r.code != "PTC000")
    # ASTs and summaries are trees (no reference cycles), freed by refcounting; the cyclic GC
    # would only re-scan millions of live AST nodes again and again (measured: up to 2x).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        found = _check_files(root, files, codes, rules, static_cfg, jobs, torch, cache=cache, stats=stats,
                             always=named)
        if stats is not None:
            stats.checked = len(report if report is not None else files)
        if report is not None:
            found = [f for f in found if f.path in report]
        return sorted(apply_conditional(found, static_cfg.conditional), key=sort_key)
    finally:
        if was_enabled:
            gc.enable()


def _check_files(root: str, files: list[str], codes: tuple[str, ...], rules: list[type[Rule]],
                 cfg: StaticConfig, jobs: int, torch: str | None = None, *, cache: Cache | None = None,
                 stats: Stats | None = None, always: Iterable[str] = ()) -> list[Finding]:
    """Summaries of the files that may hold roots (cached or analysed) and of `always`, then the
    graph walks what it reaches, reading the other files it names (pt2bot/static/files.py)."""
    found, got = run_analysis(root, files, codes, jobs=jobs, cache=cache, always=always,
                              then=lambda summaries, walk, later: build_findings(
                                  summaries, rules, cfg, walk=walk, torch=torch, later=later))
    if stats is not None:
        stats.__dict__.update(got.__dict__)
    return found


def build_findings(summaries: list[FileSummary], rules: list[type[Rule]], cfg: StaticConfig,
                   walk=None, torch: str | None = None, later: Later | None = None) -> list[Finding]:
    """`later`: the files not in `summaries` that the graph may read (pt2bot/static/files.py)."""
    enabled = {r.code for r in rules}
    live = [s for s in summaries if not s.error and not s.skip_file]
    reach = find_compiled(live, walk=walk, loader=later)
    live = [s for s, _ in reach.index.order]          # with the files the graph read
    inherited = inherit_call_conditions(reach)
    # pending candidates (a size through a parameter) that a compiled caller passes a size
    sized = resolve_pending(live, reach.compiled, reach.index, inherited)
    # candidates that hold only if facts of other files do (a helper's tensor, a submodule's buffer)
    cross = CrossFile(reach)
    if later is not None:
        summaries = summaries + later.loaded
    out: list[Finding] = []

    def emit(s: FileSummary, code: str, line: int, col: int, message: str, function: str = "",
             end_line: int | None = None, end_col: int | None = None, suggestion: str | None = None,
             gb: str | None = None, condition: str | None = None, callee: str | None = None,
             info: tuple[str, tuple[str, ...] | None] | None = None) -> None:
        if code not in enabled or _file_ignores(s.path, code, cfg.per_file_ignores):
            return
        if not holds_on_torch(code, torch, callee):
            return
        src, noqa = info or s.line_info.get(line, ("", None))
        if noqa is not None and (not noqa or any(code.startswith(c) for c in noqa)):
            return
        rule = BY_CODE[code]
        gb = gb or rule.gb
        out.append(Finding(
            rule=code, path=s.path, line=line, col=col, severity=cfg.severity.get(code, rule.severity),
            message=torch_message(rule, message, callee), end_line=end_line, end_col=end_col, source=src,
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
                if getattr(c, "ext", None) is not None and not cross.holds(s, c):
                    continue
                cond = getattr(c, "condition", None)
                message = c.message
                if getattr(c, "needs", None) is not None:
                    got = sized.get(id(c))
                    if got is None:
                        continue          # no compiled caller passes a size there
                    message += got[0]
                    if got[1] is not None:
                        cond = got[1] if cond is None else f"{got[1]} and {cond}"
                called = inherited.get((s.path, c.function))
                if called is not None:
                    cond = called if cond is None else f"{called} and {cond}"
                emit(s, c.rule, c.line, c.col, message, "" if c.function == "<module>" else c.function,
                     c.end_line, c.end_col, c.suggestion, c.gb, cond, getattr(c, "callee", None))
    if CompilerDisable.code in enabled:
        emit_disabled_calls(reach.disabled_calls, inherited, emit, later)
    return out


def emit_disabled_calls(calls: list[DisabledCall], inherited: dict[tuple[str, str], str], emit,
                        later: Later | None) -> None:
    """PTC403 at each call from compiled code of a disabled function, where dynamo reports the
    break; at the decorator of one whose every call is out of sight (passed by reference to a
    function of the tree, which calls it: the graph sees no call of a parameter)."""
    def info(path: str, line: int) -> tuple[str, tuple[str, ...] | None] | None:
        return later.line_info(path, line) if later is not None else None

    unlocated: dict[tuple[str, str], DisabledCall] = {}
    located: set[tuple[str, str]] = set()
    for d in calls:
        s, caller = d.caller, d.caller_info
        key = (d.callee.path, d.callee_info.qualname)
        at = call_pos(caller.calls, d.edge)
        if at is None:
            unlocated.setdefault(key, d)
            continue
        located.add(key)
        cond = call_guards(caller.calls).get(d.edge)
        called = inherited.get((s.path, caller.qualname))
        if called is not None:
            cond = called if cond is None else f"{called} and {cond}"
        emit(s, CompilerDisable.code, at[0], at[1],
             CompilerDisable.call_message(d.callee_info.qualname, d.callee.path, d.callee_info.disabled_at[0]),
             caller.qualname, gb=disabled_call_gb(d), condition=cond, info=info(s.path, at[0]))
    for key, d in unlocated.items():
        if key not in located:
            line, col = d.callee_info.disabled_at
            emit(d.callee, CompilerDisable.code, line, col, CompilerDisable.decorator_message(d.callee_info.qualname),
                 d.callee_info.qualname, gb=disabled_call_gb(d), info=info(d.callee.path, line))


def disabled_call_gb(d: DisabledCall) -> str:
    """The graph break dynamo reports at a call of a disabled function (measured on torch 2.13):
    GB0099 ("Skip inlining") where it inlines the call, that is a method bound through `self`
    (a submodule's `forward` too) or a function disabled with `recursive=False`; GB0098 ("Skip
    calling") for a function, a staticmethod, or a method called through its class."""
    callee = d.callee_info
    kind = d.caller_info.calls[d.edge][0]
    bound = kind in ("self", "selfattr") and callee.cls is not None and not callee.staticmethod
    return "GB0099" if bound or not callee.disabled_recursive else "GB0098"


# --------------------------------------------------------------------------------------------
# the emit stage: conditions and the user's torch

_DEMOTE = {"error": "warning", "warning": "info", "info": "info"}


def apply_conditional(findings: Iterable[Finding], mode: str) -> list[Finding]:
    """`static.conditional`: findings with a `condition` (a path the default call does not take,
    pt2bot/analysis/walk.py `Conditions`) keep their severity, drop one level, or are hidden."""
    if mode == "keep":
        return list(findings)
    if mode == "hide":
        return [f for f in findings if f.condition is None]
    return [f.with_(severity=_DEMOTE.get(f.severity, f.severity)) if f.condition is not None else f
            for f in findings]


def inherit_call_conditions(reach: Reach) -> dict[tuple[str, str], str]:
    """Functions and methods that compiled code calls only on non-default paths take those
    paths' guards as their findings' condition: wav2vec2's `_compute_mask_indices`, called
    `if mask_time_prob > 0 and self.training`; a loss method called `if self.training:`; a
    sampling step called only from a method that forward calls `if sample:`.

    The edges are those the call graph resolved (`Reach.edges`: from each function and class of
    `self` it entered, so a base class's `self.m(...)` runs the subclass's `m`), and
    `super().m(...)`, which the graph does not follow but which runs the base class's `m` on
    the caller's path. A function is on the default path when a chain of unguarded calls
    reaches it from a root (a module's forward, a function handed to torch.compile); every
    other compiled function is conditional: the guards of its calls from the default path,
    each joined after the condition of a conditional caller, alternatives joined by `or`."""
    idx = reach.index
    compiled = reach.compiled
    incoming: dict[str, list[tuple[str, str | None]]] = {}
    plain: dict[str, list[str]] = {}           # caller -> callees called without a guard
    guards_of: dict[str, dict[int, str]] = {}
    for caller, i, callee in reach.edges:
        if callee == caller:
            continue
        guards = guards_of.get(caller)
        if guards is None:
            guards = guards_of[caller] = call_guards(idx.functions[caller][1].calls)
        g = guards.get(i) if guards else None
        incoming.setdefault(callee, []).append((caller, g))
        if g is None:
            plain.setdefault(caller, []).append(callee)
    default = set(reach.roots)
    todo = list(default)
    while todo:
        for callee in plain.get(todo.pop(), ()):
            if callee not in default:
                default.add(callee)
                todo.append(callee)
    memo: dict[str, str | None] = {}
    out: dict[tuple[str, str], str] = {}
    for name in incoming:
        if name in default:
            continue
        entry = idx.functions.get(name)
        if entry is None or (entry[0].path, entry[1].qualname) not in compiled:
            continue
        text = _call_condition(name, frozenset(), incoming, default, memo)
        if text is not None:
            out[(entry[0].path, entry[1].qualname)] = text
    return out


_MAX_CONDITION = 160


def _call_condition(name: str, stack: frozenset[str], incoming: dict[str, list[tuple[str, str | None]]],
                    default: set[str], memo: dict[str, str | None]) -> str | None:
    """The condition of conditional function `name` (see `inherit_call_conditions`). A module
    function, not a closure: a recursive closure is a reference cycle (check_paths runs with
    the cyclic GC off)."""
    if name in memo:
        return memo[name]
    parts: list[str] = []
    for caller, g in incoming.get(name, ()):
        if caller in default:
            part = g
        elif caller in stack:
            continue               # a cycle: its way in is counted where it enters
        else:
            c = _call_condition(caller, stack | {name}, incoming, default, memo)
            part = None if c is None else c if g is None else _join_guards(c, g)
        if part is not None and part not in parts:
            parts.append(part)
    text = None if not parts else parts[0] if len(parts) == 1 else " or ".join(f"({p})" for p in parts)
    if text is not None and len(text) > _MAX_CONDITION:
        text = text[:_MAX_CONDITION - 1] + "…"
    memo[name] = text
    return text


def _join_guards(outer: str, inner: str) -> str:
    parts = [f"({p})" if " or " in p and not p.startswith("(") else p for p in (outer, inner)]
    return " and ".join(parts)


def holds_on_torch(code: str, torch: str | None, callee: str | None = None) -> bool:
    """Whether rule `code`'s claim holds on torch release `torch` (None: keep every claim)."""
    rule = BY_CODE.get(code)
    return rule is None or rule.holds_on(torch, callee)


_FULLGRAPH_NOTE = ("; under `fullgraph=True` torch captures it as an unbacked symbol instead (a Python branch"
                   " on the value still fails)")


def torch_message(rule: type[Rule], message: str, callee: str | None = None) -> str:
    """What the message must add to stay true on every torch and compile mode."""
    if rule.captured_by_fullgraph(callee) and "fullgraph=True" not in message:
        return message + _FULLGRAPH_NOTE
    return message


def open_cache(root: str, cfg: StaticConfig, *, enabled: bool = True) -> Cache | None:
    """The per-file cache of the repository around `root` for `cfg`'s rules (None: off or
    not writable). The review passes the same cache for base and head: entries are keyed by
    repo-relative path and content, so the files a PR did not touch are analysed once."""
    cache_dir, why = resolve_cache_dir(root, enabled=enabled)
    if cache_dir is None:
        if enabled:
            warn(f"no cache: {why}")
        return None
    return Cache(cache_dir, tuple(r.code for r in select_rules(cfg.select, cfg.ignore)), checkout=why == "default")


def resolve_torch(cfg: StaticConfig) -> tuple[str, str]:
    """(release, source): `static.torch` ("config"), else the torch installed beside pt2bot, read
    from its metadata without importing it ("installed"), else the newest release the rules know
    ("assumed": a bare pre-commit environment)."""
    if cfg.torch:
        return cfg.torch, "config"
    found = _dist_info_version("torch")
    if found:
        return found, "installed"
    from importlib import metadata

    try:
        return metadata.version("torch"), "installed"
    except metadata.PackageNotFoundError:
        return NEWEST_TORCH, "assumed"


def _dist_info_version(name: str) -> str | None:
    """The `Version:` of the first `NAME-*.dist-info` on sys.path, as importlib.metadata finds
    it, without importing importlib.metadata and the email package (50 ms of every pre-commit
    run). None: not there as a dist-info (an egg, a source build): ask importlib.metadata."""
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for n in sorted(names):
            if n.startswith(name + "-") and n.endswith(".dist-info"):
                try:
                    with open(os.path.join(entry or ".", n, "METADATA"), encoding="utf-8") as fh:
                        for line in fh:
                            if line.startswith("Version:"):
                                return line.partition(":")[2].strip() or None
                            if not line.strip():
                                break
                except OSError:
                    pass
                return None
    return None


def _file_ignores(path: str, code: str, per_file: dict[str, tuple[str, ...]]) -> bool:
    for pat, codes in per_file.items():
        if is_excluded(path, [pat]) and any(code.startswith(c.upper()) or c.upper() == "ALL" for c in codes):
            return True
    return False


def exit_code(findings: Sequence[Finding], fail_on: str) -> int:
    if fail_on == "never":
        return 0
    levels = ("error",) if fail_on == "error" else ("error", "warning")   # info never fails
    # nor does a claim the smoke run refuted (`--results`: pt2bot/reach.py demotes it to info)
    return 1 if any(f.severity in levels and not f.refuted for f in findings) else 0


# --------------------------------------------------------------------------------------------
# CLI

def _outside(path: str, root: str) -> bool:
    return os.path.relpath(path, root).replace(os.sep, "/").startswith("../")


def _split(value: str | None) -> tuple[str, ...]:
    return tuple(x.strip() for x in (value or "").split(",") if x.strip())


def context_paths(root: str, cfg: StaticConfig) -> tuple[str, ...]:
    """What explicit files are checked against: `static.paths`, else the tree under `root` when
    it is in a git repository (its root, or the part of it that paths relative to `root` can
    name), else nothing (a loose file must not make us read a whole home directory)."""
    if cfg.paths:
        return tuple(cfg.paths)
    return (".",) if find_git_root(root) else ()


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
    # Explicit files (pre-commit passes the changed ones): the rest of the repository is context.
    context = context_paths(root, cfg) if paths else ()
    cache = open_cache(root, cfg, enabled=not getattr(args, "no_cache", False))
    base = getattr(args, "base", None)
    if getattr(args, "diff", False) or getattr(args, "fix", False):
        from pt2bot.static.fix import plan_fixes, summary_line, unified_diff, write_fix

        fixes = plan_fixes(root, _findings(args, root, paths, cfg, torch, context, cache, Stats())[0], warn)
        if args.diff:
            sys.stdout.write("".join(unified_diff(f) for f in fixes))
            sys.stderr.write(summary_line(fixes, "would apply"))
            sys.stdout.flush()
            return 1 if fixes else 0
        written = []
        for f in fixes:
            try:
                write_fix(root, f)
                written.append(f)
            except OSError as e:
                warn(str(e))
        sys.stderr.write(summary_line(written, "applied"))
    stats = Stats()
    findings, hidden = _findings(args, root, paths, cfg, torch, context, cache, stats)
    from pt2bot.report.findings_text import render_findings

    fmt = getattr(args, "format", "text") or "text"
    fixes = None
    if fmt == "sarif":   # SARIF carries the safe fixes (not run: safe by construction)
        from pt2bot.static.fix import safe_fixes_by_finding

        fixes = safe_fixes_by_finding(root, findings, warn)
    sys.stdout.write(render_findings(findings, fmt, root=root,
                                     torch={"version": torch, "source": torch_source}, fixes=fixes))
    if fmt == "text" and not findings:
        # A clean run says so, as linters do (only in the text format: the others are data).
        from pt2bot.report.findings_text import clean_line

        sys.stdout.write(clean_line(stats.checked, hidden=hidden,
                                    filter_=getattr(args, "filter", None) or cfg.filter))
    sys.stdout.flush()
    # With --base, what the base already had never fails the check (the review's rule).
    return exit_code([f for f in findings if f.new] if base else findings, cfg.fail_on)


def _findings(args: argparse.Namespace, root: str, paths: list[str], cfg: StaticConfig, torch: str | None,
              context: Sequence[str], cache: Cache | None, stats: Stats) -> tuple[list[Finding], int]:
    """The check's findings as `cli_check` reports them (`--base`, `--filter`, `--results`
    applied) and how many the diff filter hid."""
    findings = check_paths(root, paths, cfg, jobs=getattr(args, "jobs", 0) or 0, torch=torch,
                           context=context, cache=cache, stats=stats)
    base = getattr(args, "base", None)
    hidden = 0
    if base:
        from pt2bot import changes

        base_sha = changes.resolve_base(root, base)
        changeset = changes.diff_changes(root, base_sha)
        findings = changes.annotate_findings(findings, changeset)
        filt = getattr(args, "filter", None) or cfg.filter
        kept = [f for f in findings if changes.keep_finding(f, filt)]
        hidden, findings = len(findings) - len(kept), kept
        findings = base_marked(root, findings, changeset, cfg, jobs=getattr(args, "jobs", 0) or 0,
                               torch=torch, cache=cache)
    if getattr(args, "results", None):   # `--results FILE`: which models reached each line,
        # and what dynamo did there: confirmed claims, and refuted ones demoted (reach.py)
        from pt2bot.reach import mark_reached
        from pt2bot.results import load_results_file

        findings = mark_reached(findings, load_results_file(args.results, what="--results"))
    return findings, hidden


def base_marked(root: str, findings: list[Finding], changeset: ChangeSet, cfg: StaticConfig, *,
                jobs: int, torch: str | None, cache: Cache | None) -> list[Finding]:
    """`findings` of head with `new` decided as `pt2bot review` decides it: the same files
    checked on the base (a worktree of the merge-base), matched by fingerprint
    (changes.mark_new). Only the files that have findings are checked there, against the same
    context as on head, so their findings are the ones a whole-tree check of the base gives."""
    from pt2bot import changes, git

    if not findings:
        return findings
    old_paths = set()
    for path in {f.path for f in findings}:
        fc = changeset.get(path)
        if fc is None:
            old_paths.add(path)               # untouched by the diff: the same file on base
        elif fc.status not in ("added", "deleted") and not fc.binary:
            old_paths.add(fc.old_path or path)
    base_findings: list[Finding] = []
    if old_paths:
        top = git.repo_root(root)
        with git.worktree(top, changeset.base) as tree:
            base_root = os.path.join(tree, os.path.relpath(os.path.abspath(root), top))
            named = [os.path.join(base_root, p) for p in sorted(old_paths)
                     if os.path.isfile(os.path.join(base_root, p))]
            if named:
                base_findings = check_paths(base_root, named, cfg, jobs=jobs, torch=torch,
                                            context=context_paths(base_root, cfg), cache=cache)
    return changes.mark_new(findings, base_findings, renames=changeset.renames())
