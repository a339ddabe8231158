"""The proof loop of a review: fixes that pt2bot re-ran before it suggests them.

For each new graph break, new recompile and export regression that the report locates on a
line the PR added (the targets), the static findings on that line offer candidate edits
(their rule's recipe: `rules.fix_candidates`). Each candidate is proven on every model that
has the target (one that reaches past the lines of one hunk of the diff, which no suggestion
can replace, after all the others, and said as text where it passes), in ONE proof worker per model for
all its candidates (pt2bot/smoke/verify.py: head's model and each patched version side by
side, eager backend), under a per-review time budget (`fixes.budget_s` in pt2bot.yml; by
default as long as head's smoke run of those models took, `proof_budget`),
candidates tried most likely first. Where several findings in one statement each offer an
edit of the whole statement that rewrites only their own part, or edits of statements next
to each other, their changes together are one more candidate, tried before them
(`compose_siblings`). A candidate accepted on every
model it was tried on is a verified fix; of verified fixes that replace some of the same
lines, only the first is posted, and of those on different lines that remove some of the same
problems, only the one that removes more (`_alternatives`). Everything that
goes wrong (no candidate, an edit that does not apply, a patched model that crashes, hangs
or does not import, the budget running out) is a "no verified fix" with its reason, never a
failed review. Where torch's own hint for a break is a dynamo setting, that setting is proven
the same way after the edits (SETTINGS, `gather_settings`): the source unchanged, the model
run again with it set; a verified one is text, report.json's `fixes.settings`.

The result is report.json's `fixes` (docs/formats.md); pt2bot/report/review.py turns each
verified fix into a suggestion block on its finding's comment. A sharded review proves in
its shards (`prove_shard`, each for its own models) and decides at the merge
(`merge_proofs`): the same `decide` either way.
"""
from __future__ import annotations

import ast
import contextlib
import dataclasses
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Callable, Collection, Iterator, Mapping, Sequence

from pt2bot import git
from pt2bot.changes import ChangeSet, diff_position, in_one_hunk
from pt2bot.compare import break_fingerprint
from pt2bot.config import DEFAULT_FIX_BUDGET_S, Config, ModelConfig
from pt2bot.findings import DIFF_ADDED, Finding
from pt2bot.reach import Coverage
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.results import ResultsFile
from pt2bot.rules import (RULES, Candidate, apply_candidate, fix_candidates_explained,
                          has_recipe, without_torch)
from pt2bot.rules.edits import enclosing_function, parameter_names, source_lines, statement_at
from pt2bot.rules.wrap import fit_candidate, repo_line_length
from pt2bot.smoke.forkserver import SERVERS, fork_supported, preload_for
from pt2bot.smoke.runner import build_jobs
from pt2bot.smoke.supervise import run_worker

VERIFY_ARGV = ("-m", "pt2bot.smoke.verify")
MIN_LEFT_S = 5.0            # a proof worker is not started with less budget than this
MAX_SOURCE_BYTES = 2 << 20  # a file larger than this gets no candidate
MAX_CANDIDATES = 20         # per review: the most likely ones

# torch's own hint for four kinds of break is a setting, not an edit: `.item()` (GB0124), a
# data-dependent operator (GB0033), a dynamic-shape operator (GB0036) and `torch.autograd.grad`
# in compiled code (GB9186, a gradient penalty's: torchgan's WGAN-GP) are traced once `torch._dynamo.config.<setting> =
# True`. That often only moves the break to where the value is used (a size, a branch) or
# makes dynamo raise (benchmarks/results/capture_settings.md), so the setting is proven like
# an edit: the target's model run again with it set, its source unchanged. It is tried after
# every edit for the target and is never a suggestion block (it is set where the model is
# compiled, not on the PR's line): a verified one is a line of text in the comment,
# report.json's `fixes.settings`.
SETTINGS = {"GB0124": "capture_scalar_outputs", "GB0036": "capture_dynamic_output_shape_ops",
            "GB9186": "trace_autograd_ops",
            # torch's hint for a data-dependent operator names the same setting as for `.item()`
            # (a held-out user read it, untried, under both of a PR's GB0033 breaks; with it
            # both broke as before): tried, it is said with the proof's answer instead
            "GB0033": "capture_scalar_outputs"}
SETTING_RANK = 1_000_000    # after every edit's rank


@dataclass(frozen=True)
class ProofSetting:
    """What the proof needs from the review besides the report."""
    config: Config
    changeset: ChangeSet | None
    root: str                           # the repository
    head_sha: str | None                # None: head is the working tree at `root`
    head_results: ResultsFile
    device: str | None = None
    log: Callable[[str], None] = lambda s: None


# --------------------------------------------------------------------------- targets

def find_targets(report: Report, changeset: ChangeSet | None) -> list[dict[str, Any]]:
    """The new breaks, new recompiles and export regressions on lines the PR added."""
    if changeset is None:
        return []

    def added(path: Any, line: Any) -> bool:
        return isinstance(path, str) and isinstance(line, int) and \
            diff_position(changeset, path, line) == DIFF_ADDED

    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()

    def add(t: dict[str, Any]) -> None:
        key = (t["kind"], t["model"], t["path"], t["line"], t.get("gb_type"))
        if key not in seen:
            seen.add(key)
            out.append(t)

    for m in report.models:
        if m.status != "ok":
            continue
        for b in m.new_breaks:
            # (a break only the shape matrix hit: the proof's break pass compiles one case with
            # static sizes and would never see it, so any edit would read as removing it)
            if added(b.get("path"), b.get("line")) and not b.get("matrix_only"):
                add({"kind": "break", "model": m.name, "path": b["path"], "line": b["line"],
                     "gb": b.get("gb"), "gb_type": b.get("gb_type"),
                     "fingerprint": b.get("fingerprint")})
        for _row, r in m.delta.new_recompile_reasons():
            if r.get("kind") != "size_one" and added(r.get("path"), r.get("line")):
                add({"kind": "recompile", "model": m.name, "path": r["path"],
                     "line": r["line"], "gb": None, "gb_type": None})
        head_export = (m.head or {}).get("export") or {}
        if m.delta.export == "broken" and added(head_export.get("path"), head_export.get("line")):
            add({"kind": "export", "model": m.name, "path": head_export["path"],
                 "line": head_export["line"], "gb": head_export.get("gb"),
                 "gb_type": head_export.get("kind")})
    return out


def target_key(t: Mapping[str, Any]) -> str:
    return f"{t['kind']}:{t['path']}:{t['line']}:{t.get('gb_type') or ''}"


def _findings_at(findings: Sequence[Finding], path: str, line: int) -> list[Finding]:
    return [f for f in findings if f.path == path and f.line <= line <= (f.end_line or f.line)]


def _tree(trees: dict[str, ast.Module | None], path: str, source: str) -> ast.Module | None:
    """`source` (the text of `path`) parsed once per review; None when it does not parse."""
    if path not in trees:
        try:
            trees[path] = ast.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            trees[path] = None
    return trees[path]


def _findings_in_statement(findings: Sequence[Finding], path: str, line: int, source: str,
                           trees: dict[str, ast.Module | None]) -> list[Finding]:
    """The findings below `line` inside a part of a simple statement that starts on `line`:
    dynamo puts a break in a multi-line expression on that expression's first line, a rule
    on the line of the part it flags (`x = (a if t.any()\n     else b)`: the break on the
    first line, PTC201 on the test's; in a list of such ternaries, each one's break on its
    own first line, inside the statement). A compound statement (`if`, `for`, ...) holds its
    body: not matched."""
    tree = _tree(trees, path, source)
    if tree is None:
        return []
    st, _body = statement_at(tree, line, 1 << 30)   # any column of the line
    if st is None or any(isinstance(getattr(st, name, None), list)
                         for name in ("body", "orelse", "handlers")):
        return []
    end = st.end_lineno or st.lineno
    # the parts that start on the line (the statement itself when it does) and span more
    spans = [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset or 0))
             for n in ast.walk(st) if isinstance(n, (ast.stmt, ast.expr))
             and n.lineno == line and (n.end_lineno or n.lineno) > line]
    return [f for f in findings if f.path == path and line < f.line <= end
            and any(a <= (f.line, f.col) <= b for a, b in spans)]


# --------------------------------------------------------------------------- candidates

@dataclass
class Proposal:
    """One candidate edit with everything the proof and the report need about it."""
    cid: str
    cand: Candidate
    original: str
    patched: str
    findings: list[str]                         # fingerprints of the findings it fixes
    targets: list[int]                          # indexes into the targets
    results: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    # target index -> the fingerprints of the findings on its line that offer this edit
    by_target: dict[int, list[str]] = dataclasses.field(default_factory=dict)
    # the edit reaches past the lines of one hunk of the diff, which a suggestion cannot
    # replace: proven after every edit inside one, and said as text when it passes
    outside: bool = False
    # the findings inside a block the edit leaves to eager code (`if not
    # torch.compiler.is_compiling() and <test>:`): compiled code no longer runs them, so a
    # verified edit fixes them too (`_eager_block_findings`)
    covers: list[str] = dataclasses.field(default_factory=list)

    @property
    def key(self) -> tuple[Any, ...]:
        """The edit itself: two findings (or two shards) offering it propose one candidate."""
        return candidate_key(self.cand)

    def overlaps(self, other: "Proposal") -> bool:
        a, b = self.cand, other.cand
        return a.path == b.path and a.start_line <= b.end_line and b.start_line <= a.end_line


def candidate_key(c: Candidate) -> tuple[Any, ...]:
    return (c.path, c.start_line, c.end_line, c.lines, c.setting)


def _read(root: str, path: str) -> str | None:
    full = os.path.join(root, path)
    try:
        if os.path.islink(full) or os.path.getsize(full) > MAX_SOURCE_BYTES:
            return None
        with open(full, encoding="utf-8", newline="") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def gather(targets: list[dict[str, Any]], findings: Sequence[Finding], head_root: str,
           changeset: ChangeSet | None) -> tuple[list[Proposal], dict[int, str]]:
    """The candidates for the targets (unordered: `order` numbers them); and why a target
    has none."""
    proposals: dict[tuple[Any, ...], Proposal] = {}
    why: dict[int, str] = {}
    sources: dict[str, str | None] = {}
    trees: dict[str, ast.Module | None] = {}
    placed: dict[str, tuple[int, int]] = {}     # a finding's fingerprint -> its (line, col)
    siblings: list[Proposal] = []   # parts of a composed edit only (`_next_checks`, `_next_alike`)
    for i, t in enumerate(targets):
        at = _findings_at(findings, t["path"], t["line"])
        if at or any(f.path == t["path"] for f in findings) or _predicted(t):
            if t["path"] not in sources:
                sources[t["path"]] = _read(head_root, t["path"])
        source = sources.get(t["path"])
        if not at and source is not None:
            at = _findings_in_statement(findings, t["path"], t["line"], source, trees)
        directed = False    # recipes chosen by dynamo's break, not by a finding
        if not at and source is not None:
            at = break_findings(t, source, trees)
            directed = bool(at)
        if not at:
            why[i] = "no static finding on the line offers a fix"
            continue
        if source is None:
            why[i] = f"{t['path']} cannot be read as UTF-8 text"
            continue
        tree = _tree(trees, t["path"], source)    # parsed once per file, not per finding
        reasons = ["no static finding on the line; the recipes of "
                   f"{', '.join(dict.fromkeys(f.rule for f in at))} ("
                   + (f"dynamo's {t.get('gb')}" if t.get("gb") else f"torch.export's {t.get('gb_type')}")
                   + " there) have no edit for this code"
                   f"{without_torch(tree) if tree is not None else ''}"] if directed else []
        for f in at:
            placed.setdefault(f.fingerprint(), (f.line, f.col))
            cands, reason = fix_candidates_explained(f, source, tree)
            if reason and not directed:
                reasons.append(reason)
            for c in (v for c in cands for v in (c, *c.variants)):
                try:
                    patched = apply_candidate(source, c)
                except ValueError as e:
                    reasons.append(f"{c.title}: does not apply: {e}")
                    continue
                key = (c.path, c.start_line, c.end_line, c.lines)
                p = proposals.get(key)
                if p is None:
                    p = proposals[key] = Proposal(cid="", cand=c, original=source,
                                                  patched=patched, findings=[], targets=[],
                                                  outside=_outside(changeset, c))
                _offered(p, i, f.fingerprint())
        if not any(i in p.targets for p in proposals.values()):
            why[i] = "; ".join(dict.fromkeys(reasons)) or "no candidate"
        elif tree is not None:
            mine = [p for p in proposals.values() if i in p.targets]
            siblings += _next_checks(t, source, tree, trees, mine, placed) + \
                _next_alike(t, source, tree, trees, mine, placed)
    # a next check that is a target of its own is composed as that target's edit
    found = [p for p in proposals.values() if not p.outside] + \
        [q for q in siblings if (q.cand.path, q.cand.start_line, q.cand.end_line, q.cand.lines) not in proposals]
    for c in compose_siblings(found, placed):
        if changeset is None or in_one_hunk(changeset, c.cand.path, c.cand.start_line,
                                            c.cand.end_line):
            proposals.setdefault(c.key, c)
    # a new line longer than the repository's style allows is split as black splits it
    # before the proof, so that what is proven is what is posted (pt2bot/rules/wrap.py)
    # (after the block an eager-only header leaves is read from its one line)
    limit = repo_line_length(head_root)
    for p in proposals.values():
        tree = trees.get(p.cand.path)
        if tree is not None:
            p.covers = _eager_block_findings(p, tree, findings)
        fitted = fit_candidate(p.cand, p.original, limit)
        if fitted is not p.cand:
            p.cand, p.patched = fitted, apply_candidate(p.original, fitted)
    return list(proposals.values()), why


# the header an edit gives a block that compiled code then skips
_EAGER_HEADER = re.compile(r"^\s*if not \w+\.compiler\.is_compiling\(\) and ")   # torch by any alias


def _eager_block_findings(p: Proposal, tree: ast.Module, findings: Sequence[Finding]) -> list[str]:
    """The findings (by fingerprint) in the body of an `if` whose header `p` rewrites to run it
    in eager only, other than `p`'s own: a new user's `logger.warning` under `if
    ....max().item() > 0.5:` got a second comment asking for the guard the verified edit of the
    `if` line already gave it."""
    c = p.cand
    if c.start_line != c.end_line or len(c.lines) != 1 or not _EAGER_HEADER.match(c.lines[0]):
        return []
    st = next((n for n in ast.walk(tree) if isinstance(n, ast.If) and n.lineno == c.start_line), None)
    if st is None or not st.body:
        return []
    first, last = st.body[0].lineno, st.body[-1].end_lineno or st.body[-1].lineno
    return [f.fingerprint() for f in findings if f.path == c.path and first <= f.line <= last
            and f.fingerprint() not in p.findings]


def _outside(changeset: ChangeSet | None, c: Candidate) -> bool:
    """Whether edit `c` reaches past the lines of one hunk of the diff (an early return
    selected over the rest of the function, which the PR did not write): no suggestion block
    can replace those lines, but a proven edit is still worth saying (None: an audit, no diff)."""
    return changeset is not None and not in_one_hunk(changeset, c.path, c.start_line, c.end_line)


# checks in a row after a target's check that are taken along, at most
MAX_NEXT_CHECKS = 4


def _next_alike(t: Mapping[str, Any], source: str, tree: ast.Module, trees: dict[str, ast.Module | None],
                offered: Sequence[Proposal], placed: dict[str, tuple[int, int]]) -> list[Proposal]:
    """The same recipe's edit of the same break on the statements that follow the target's
    line, statement after statement in its block (mixup's PuzzleMix, `bh = idx.item() // n`
    then `bw = idx.item() % n`, in a loop): parts for `compose_siblings` only, as
    `_next_checks`. Dynamo broke at the first and ran the rest of the frame in eager, so the
    next ones are no target; fixed alone, the first's edit moves the break a line down, which
    the proof refuses (pt2bot/smoke/verify.py `_next_statement`)."""
    same = [p.cand for p in offered if not p.cand.setting and "invalid" not in p.cand.guards
            and p.cand.start_line == p.cand.end_line == t["line"]]
    if not same:
        return []
    titles = {c.title for c in same}
    return _following(t, source, tree, trees, t["line"], t["line"], placed,
                      lambda nxt: (nxt.end_lineno or nxt.lineno) == nxt.lineno,
                      lambda c, nxt: c.title in titles and c.start_line == c.end_line == nxt.lineno)


def _next_checks(t: Mapping[str, Any], source: str, tree: ast.Module, trees: dict[str, ast.Module | None],
                 offered: Sequence[Proposal], placed: dict[str, tuple[int, int]]) -> list[Proposal]:
    """The edits of the checks that follow a target's own check, statement after statement in
    its block (`assert data_range[0] <= t.min()` then `assert t.max() <= data_range[1]`, piq's
    input validation), each as dynamo's same break there would get it: parts for
    `compose_siblings` only, never proven alone. Head never ran past the first check compiled
    (the break there sent the function to eager), so the next ones are no target; fixed alone,
    the first check's edit uncovers the next one's break, and the suggestion a user applies
    breaks again on the line below. The composed edit carries the target; the proof runs it."""
    # a check's edits carry the guard of values it refuses ("invalid"): that marks them
    checks = [p for p in offered if "invalid" in p.cand.guards and not p.cand.setting]
    if not checks:
        return []
    last = max(checks, key=lambda p: p.cand.end_line).cand
    return _following(t, source, tree, trees, last.start_line, last.end_line, placed,
                      lambda nxt: isinstance(nxt, ast.Assert) or isinstance(nxt, ast.If) and not nxt.orelse
                      and len(nxt.body) == 1 and isinstance(nxt.body[0], ast.Raise),
                      lambda c, nxt: "invalid" in c.guards and c.start_line == nxt.lineno)


def _following(t: Mapping[str, Any], source: str, tree: ast.Module, trees: dict[str, ast.Module | None],
               start: int, end: int, placed: dict[str, tuple[int, int]],
               takes: Callable[[ast.stmt], bool], fits: Callable[[Candidate, ast.stmt], bool]) -> list[Proposal]:
    """For the statement on lines start..end: the statements after it in its block, one by one
    while `takes` each and one of its edits for dynamo's break `t` names there `fits` it (up to
    `MAX_NEXT_CHECKS`), each that edit as a part (`_next_checks`, `_next_alike`)."""
    lines = source_lines(source)
    raw = lines[start - 1] if 0 < start <= len(lines) else ""
    st, body = statement_at(tree, start, len(raw.encode()) - len(raw.lstrip().encode()))
    if st is None or st not in body or (st.end_lineno or st.lineno) != end:
        return []
    out: list[Proposal] = []
    k = body.index(st) + 1
    for nxt in body[k:k + MAX_NEXT_CHECKS]:
        if not takes(nxt):
            break
        found = None
        for f in break_findings({**t, "line": nxt.lineno}, source, trees):
            cands, _ = fix_candidates_explained(f, source, tree)
            for c in cands:
                if c.setting or not fits(c, nxt):
                    continue
                try:
                    patched = apply_candidate(source, c)
                except ValueError:
                    continue
                placed.setdefault(f.fingerprint(), (f.line, f.col))
                found = Proposal(cid="", cand=c, original=source, patched=patched,
                                 findings=[f.fingerprint()], targets=[])
                break
            if found is not None:
                break
        if found is None:
            break
        out.append(found)
    return out


def _setting_of(t: Mapping[str, Any]) -> str:
    return SETTINGS.get(str(t.get("gb"))) or "" if t.get("kind") == "break" else ""


def gather_settings(targets: list[dict[str, Any]], findings: Sequence[Finding], head_root: str
                    ) -> list[Proposal]:
    """The settings torch's hint names for the break targets (see SETTINGS), each a candidate
    that leaves the target's line as it is; offered by the findings on the line, so that their
    comment carries it (else the break's own comment does)."""
    proposals: dict[tuple[Any, ...], Proposal] = {}
    sources: dict[str, str | None] = {}
    for i, t in enumerate(targets):
        if _setting_of(t):
            if t["path"] not in sources:
                sources[t["path"]] = _read(head_root, t["path"])
            source = sources[t["path"]]
            if source is not None:
                _propose_setting(proposals, i, t, source,
                                 _findings_at(findings, t["path"], t["line"]))
    return list(proposals.values())


def _propose_setting(proposals: dict[tuple[Any, ...], Proposal], i: int, t: Mapping[str, Any],
                     source: str, at: Sequence[Finding]) -> None:
    lines = source.splitlines()
    if not 1 <= t["line"] <= len(lines):
        return
    name = _setting_of(t)
    c = Candidate(code=next((f.rule for f in at), ""), path=t["path"], start_line=t["line"],
                  end_line=t["line"], lines=(lines[t["line"] - 1],), safe=False,
                  title=f"set `torch._dynamo.config.{name} = True` where the model is compiled",
                  rank=SETTING_RANK, setting=name)
    p = proposals.setdefault(candidate_key(c), Proposal(cid="", cand=c, original=source,
                                                         patched=source, findings=[], targets=[]))
    for f in at:
        _offered(p, i, f.fingerprint())
    if i not in p.targets:     # no finding on the line: the break's own comment carries it
        p.targets.append(i)
        p.by_target.setdefault(i, [])


# Most real break sites carry a static finding, but dynamo knows more than the rules: `if
# scaling == 1:` breaks with GB0170 when `scaling` is a tensor the rules cannot type. Such a
# target still gets the recipes of the rules that predict its GB code, applied where dynamo
# put the break, as if the rule had flagged each expression starting on that line; the recipes
# refuse code they do not fit, and the proof decides as for any candidate.
MAX_ANCHORS = 24   # the expressions of one line tried as a recipe's anchor


def _predicted(t: Mapping[str, Any]) -> list[Any]:
    """The rules with a fix recipe that predict break target `t`'s GB code (their `gb`, or
    one of the others their kind of code breaks with, `gb_also`), or export target `t`'s kind
    of failure (`export_kinds`)."""
    gb = t.get("gb")
    if t.get("kind") == "export" and t.get("gb_type"):
        return [r for r in RULES if t["gb_type"] in r.export_kinds and has_recipe(r)]
    if t.get("kind") != "break" or not gb:
        return []
    return [r for r in RULES if (r.gb == gb or gb in r.gb_also) and has_recipe(r)]


def _computed_names(tree: ast.Module, st: ast.stmt) -> set[str]:
    """The names the function around `st` binds, before it, to a value that calls something
    (not its parameters, not constants)."""
    fn = enclosing_function(tree, st)
    if fn is None:
        return set()
    params = set(parameter_names(fn))
    return {t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) and n.lineno < st.lineno
            and any(isinstance(c, ast.Call) for c in ast.walk(n.value))
            for t in n.targets if isinstance(t, ast.Name) and t.id not in params}


def break_findings(t: Mapping[str, Any], source: str,
                    trees: dict[str, ast.Module | None]) -> list[Finding]:
    """Stand-in findings for a break target without one: for each rule whose `gb` is the
    break's, one per expression that starts on the break's line (the statement's header for
    `if`/`while`/`for`); and for an export target, of each rule that names its kind of failure
    (`export_kinds`)."""
    path, line = str(t["path"]), t.get("line")
    rules = _predicted(t)
    if not rules or not isinstance(line, int):
        return []
    tree = _tree(trees, path, source)
    lines = source_lines(source)
    if tree is None or not 0 < line <= len(lines):
        return []
    # the statement that starts on the line: looked up at its first character (a position
    # past the end of a one-line statement would land on the block around it)
    raw = lines[line - 1]
    st, _body = statement_at(tree, line, len(raw.encode()) - len(raw.lstrip().encode()))
    if st is None:
        return []
    header = [getattr(st, k) for k in ("test", "iter") if isinstance(getattr(st, k, None), ast.AST)]
    roots = header if header else [st]
    # a bare name (or attribute) is an anchor only as the whole test (`if check:`: dynamo
    # broke on its truth value); inside a larger test it says nothing of where dynamo broke,
    # and an anchor on it would make a Python flag (`not allow_non_binary_target and ...`)
    # the tensor of the test, unless the function computed the name with a call (in a test
    # only: elsewhere a bare name is no part dynamo broke on; pytorch-crf's
    # `no_empty_seq_bf = self.batch_first and mask[:, 0].all()` under `if not no_empty_seq and
    # not no_empty_seq_bf:`): a value that may be a tensor, not a flag the caller passed
    computed = _computed_names(tree, st) if header else set()
    spots = sorted({(line, n.col_offset) for r in roots for n in ast.walk(r)
                    if isinstance(n, (ast.expr, ast.stmt)) and n.lineno == line
                    and (n is r or not isinstance(n, (ast.Name, ast.Attribute))
                         or (isinstance(n, ast.Name) and n.id in computed))})[:MAX_ANCHORS]
    if not spots and header and st.lineno == line:
        # `if (` with the test on the lines below: dynamo names the header's line, where no
        # part of the test starts; the test itself is the anchor, on its own line
        spots = [(r.lineno, r.col_offset) for r in header]
    if not spots and not header and st.lineno < line and raw.strip() and set(raw.strip()) <= set(")]},"):
        # a line that only closes brackets begun above (complextorch's `)` under a chained
        # `.view(...)`): dynamo names a line at the end of the call; the calls ending last by
        # that line are the anchors, where they start
        calls = [n for n in ast.walk(st) if isinstance(n, ast.Call) and (n.end_lineno or 0) <= line]
        last = max((n.end_lineno or 0 for n in calls), default=0)
        spots = sorted({(n.lineno, n.col_offset) for n in calls if n.end_lineno == last})[:MAX_ANCHORS]
    gb = str(t["gb"]) if t.get("gb") else None
    said = f"dynamo's {gb} here" if gb else f"torch.export's {t.get('gb_type')} here"
    return [Finding(rule=r.code, path=path, line=at, col=col, severity=r.severity,
                    message=said, source=lines[at - 1].strip(), gb=gb)
            for r in rules for at, col in spots]


# --------------------------------------------------------------------------- siblings
# Several findings in one statement (ColorJitter's list of four `f(img) if (p != 0).any()
# else img` lambdas) each offer an edit of the whole statement that rewrites only their own
# part: alone, each leaves its siblings breaking inside the replaced lines, so the proof
# rejects every one. Where the edits touch disjoint parts of the statement's text they are
# applied together as one more candidate, tried before its parts (a lower `rank`) and
# targeting all their targets; where they overlap (one rewrites a part the other also
# rewrites, e.g. nested conditions) they are not combined, and of the parts the proof
# verifies only the first is posted (`_summarise`).
#
# Statements next to each other in one block are combined the same way (torchdiffeq's two
# asserts on consecutive lines, each kept in eager and asserted asynchronously when compiling):
# alone, the second one's edit leaves the first break in place, which splits the graph
# differently, and the proof refuses it for the graph count; together they are one suggestion
# the author applies at once.

def _changed_region(old: str, new: str) -> tuple[int, int, str]:
    """(start, end, text): `new` is `old` with old[start:end] replaced by `text`, the
    shortest such region (common prefix and suffix left out)."""
    a = 0
    limit = min(len(old), len(new))
    while a < limit and old[a] == new[a]:
        a += 1
    b = 0
    while b < limit - a and old[len(old) - 1 - b] == new[len(new) - 1 - b]:
        b += 1
    return a, len(old) - b, new[a:len(new) - b]


def _combined(parts: list[Proposal], first: int, last: int, lines: list[str]
              ) -> list[tuple[int, int, str]] | None:
    """Each part's change to lines `first..last` as a region of their text, or None when
    two regions overlap or touch (then the edits cannot both apply as they are)."""
    old = "\n".join(lines[first - 1:last])
    regions = []
    for p in parts:
        c = p.cand
        new = "\n".join(lines[first - 1:c.start_line - 1] + list(c.lines) + lines[c.end_line:last])
        regions.append(_changed_region(old, new))
    regions.sort()
    if any(b >= a2 for (_a, b, _t), (a2, _b2, _t2) in zip(regions, regions[1:])):
        return None
    return regions


def compose_siblings(proposals: Sequence[Proposal], placed: Mapping[str, tuple[int, int]]
                     ) -> list[Proposal]:
    """One combined candidate per group of overlapping candidates of different findings
    whose edits change disjoint parts of the text: each finding's first candidate (by rank)
    that fits with those of the findings before it (in the file's order) is taken; two
    parts or more make the combined edit, kept when the patched file still parses."""
    out: list[Proposal] = []
    by_path: dict[str, list[Proposal]] = {}
    for p in proposals:
        if p.original:
            by_path.setdefault(p.cand.path, []).append(p)
    for path, ps in by_path.items():
        # groups of overlapping candidates: a new candidate joins every group it overlaps
        groups: list[list[Proposal]] = []
        lines = source_lines(ps[0].original)
        for p in sorted(ps, key=lambda p: (p.cand.start_line, p.cand.end_line)):
            touching = [g for g in groups
                        if any(p.overlaps(q) or _next_to(q, p, lines) for q in g)]
            merged = [p] + [q for g in touching for q in g]
            groups = [g for g in groups if g not in touching] + [merged]
        for group in groups:
            combo = _compose_group(group, placed)
            if combo is not None:
                out.append(combo)
    return out


def _next_to(a: Proposal, b: Proposal, lines: Sequence[str]) -> bool:
    """`b`'s edit starts after `a`'s ends with only blank or comment lines between, at the
    same indentation: two statements next to each other in one block."""
    x, y = a.cand, b.cand
    if x.path != y.path or not x.end_line < y.start_line <= len(lines):
        return False
    between = lines[x.end_line:y.start_line - 1]
    if any(t.strip() and not t.strip().startswith("#") for t in between):
        return False
    first, second = lines[x.start_line - 1], lines[y.start_line - 1]
    return len(first) - len(first.lstrip()) == len(second) - len(second.lstrip())


def _compose_group(group: list[Proposal], placed: Mapping[str, tuple[int, int]]
                   ) -> Proposal | None:
    first = min(p.cand.start_line for p in group)
    last = max(p.cand.end_line for p in group)
    source = group[0].original
    lines = source_lines(source)
    offers: dict[str, list[Proposal]] = {}          # finding -> its candidates, by rank
    for p in sorted(group, key=lambda p: (p.cand.rank, *p.key)):
        for fp in p.findings:
            offers.setdefault(fp, []).append(p)
    if len(offers) < 2:
        return None
    parts: list[Proposal] = []
    for fp in sorted(offers, key=lambda fp: (placed.get(fp, (0, 0)), fp)):
        if any(fp in q.findings for q in parts):
            continue                                # an edit taken for another finding
        for p in offers[fp]:
            if _combined(parts + [p], first, last, lines) is not None:
                parts.append(p)
                break
    if len(parts) < 2:
        return None
    regions = _combined(parts, first, last, lines)
    assert regions is not None
    text = "\n".join(lines[first - 1:last])
    for a, b, t in reversed(regions):
        text = text[:a] + t + text[b:]
    titles = list(dict.fromkeys(p.cand.title for p in parts))
    one = all(p.overlaps(q) for p in parts for q in parts)
    where = "in this statement" if one else f"on lines {first}-{last}"
    title = (f"{titles[0]}, all {len(parts)} {where} together" if len(titles) == 1
             else "; ".join(titles) + ", together")
    cand = dataclasses.replace(
        parts[0].cand, start_line=first, end_line=last, lines=tuple(text.split("\n")),
        title=title, safe=all(p.cand.safe for p in parts),
        guards=tuple(dict.fromkeys(g for p in parts for g in p.cand.guards)),
        rank=min(p.cand.rank for p in parts) - 1)
    try:
        patched = apply_candidate(source, cand)
        ast.parse(patched)
    except (ValueError, SyntaxError, RecursionError):
        return None
    combo = Proposal(cid="", cand=cand, original=source, patched=patched, findings=[],
                     targets=[])
    for fp in sorted({fp for p in parts for fp in p.findings},
                     key=lambda fp: (placed.get(fp, (0, 0)), fp)):
        for p in parts:
            for i in sorted(p.by_target):
                if fp in p.by_target[i]:
                    _offered(combo, i, fp)
    combo.targets.sort()
    return combo


def _offered(p: Proposal, target: int, fingerprint: str) -> None:
    """Record that the finding `fingerprint` on target `target`'s line offers `p`."""
    if fingerprint not in p.findings:
        p.findings.append(fingerprint)
    if target not in p.targets:
        p.targets.append(target)
    mine = p.by_target.setdefault(target, [])
    if fingerprint not in mine:
        mine.append(fingerprint)


def order(proposals: Sequence[Proposal]) -> list[Proposal]:
    """The candidates in the order they are tried, numbered `c0`, `c1`, ...: the edits safe
    by construction first, then most likely first (`rank`), then by place in the file. A
    safe edit (a `print` guarded) is as good as verified and the cheapest to prove (no
    gradients); tried after a costly one, a model whose proof is slow lost it to the budget.
    The order depends on the candidates only, never on which targets brought them in, so
    every shard of a matrix tries the candidates of its models in the order the unsharded
    review tries them. An edit that reaches past one hunk of the diff comes after every edit
    inside one: it can be said, never suggested, so it gets what budget they leave. Past
    MAX_CANDIDATES they are not tried."""
    ordered = sorted(proposals, key=lambda p: (p.outside, not p.cand.safe, p.cand.rank, *p.key))
    for k, p in enumerate(ordered):
        p.cid = f"c{k}"
        if k >= MAX_CANDIDATES:
            p.results = {"*": {"accepted": False, "reason": "not tried: over the "
                               f"{MAX_CANDIDATES}-candidate limit of a review"}}
    return ordered


# --------------------------------------------------------------------------- the proof

def _phases(model: ModelConfig, delta: ModelDelta | None) -> list[str]:
    phases = ["breaks"]
    if len(model.shape_cases()) > 1:
        phases.append("matrix")
    head_export = ((delta.head if delta is not None else None) or {}).get("export") or {}
    if model.export and head_export.get("ok") is not None:
        phases.append("export")
    return phases


def _read_progress(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        with contextlib.suppress(ValueError):
            rec = json.loads(line)
            if isinstance(rec, dict):
                out.append(rec)
    return out


def prove_on_model(setting: ProofSetting, model: ModelConfig, delta: ModelDelta | None,
                   items: list[tuple[Proposal, list[dict[str, Any]]]], head_root: str,
                   deadline: float, work: str, budget_s: float | None = None
                   ) -> dict[str, dict[str, Any]]:
    """Run one proof worker for all of `items` (a proposal and its targets on this model),
    again for the ones left when a candidate crashed or hung it; verdicts by proposal id.
    `budget_s`: the review's budget that `deadline` ends, for the reasons that name it."""
    config = setting.config
    if budget_s is None:
        budget_s = config.fixes.budget_s or DEFAULT_FIX_BUDGET_S
    verdicts: dict[str, dict[str, Any]] = {}
    todo = list(items)
    attempt = 0
    phases = _phases(model, delta)
    per_candidate = float(model.timeout_s or config.run.timeout_s)
    while todo:
        left = deadline - time.monotonic()
        if left < MIN_LEFT_S:
            for p, _ in todo:
                verdicts[p.cid] = {"accepted": False, "reason": "the review's fix budget ran "
                                   f"out before it was tried ({budget_s:g} s{MORE_BUDGET})"}
            break
        attempt += 1
        run_dir = os.path.join(work, f"{model.name}-{attempt}")
        os.makedirs(run_dir, exist_ok=True)
        [job] = build_jobs(config, [model], repo_root=head_root, out_dir=run_dir,
                           work_dir=run_dir, device=setting.device or "cpu", phases=phases,
                           environ=os.environ, side="head")
        progress = os.path.join(run_dir, "progress.jsonl")
        spec = {k: v for k, v in job.spec.items() if k not in ("trace_path", "trace_rel")}
        spec.update(progress_path=progress, candidate_timeout_s=min(per_candidate, left),
                    candidates=[{
                        "id": p.cid, "path": p.cand.path, "start_line": p.cand.start_line,
                        "end_line": p.cand.end_line, "lines": list(p.cand.lines),
                        "original": p.original, "patched": p.patched,
                        "guards": list(p.cand.guards), "safe": p.cand.safe, "targets": ts,
                        "setting": p.cand.setting,
                        "target_keys": [target_key(t) for t in ts]} for p, ts in todo])
        job = dataclasses.replace(job, spec=spec, timeout_s=left)
        # where what is left of the budget is the tighter limit, a run stopped by it did not
        # hang: it was not given the time (a model whose compile costs minutes)
        budget = budget_s if left <= per_candidate else None
        # forked from the server the smoke run used (same environment: it is still warm, so
        # the proof pays no `import torch`), or spawned where fork is unsafe
        server = (SERVERS.acquire(sys.executable, job.env, preload_for(config.run.backend),
                                  run_dir) if fork_supported() else None)
        try:
            run = run_worker(job, worker_argv=VERIFY_ARGV, server=server)
        finally:
            if server is not None:
                SERVERS.release(server)
        records = {str(r.get("id")): r for r in _read_progress(progress)}
        head = records.get("head")
        if head is None or not head.get("ok"):
            reason = (head or {}).get("reason") or _worker_end(run, "head's model", budget)
            for p, _ in todo:
                verdicts[p.cid] = {"accepted": False, "reason": reason}
            break
        rest = []
        blamed = False
        for p, ts in todo:
            rec = records.get(p.cid)
            if rec is not None:
                verdicts[p.cid] = {k: rec[k] for k in ("accepted", "reason", "evidence", "unexercised",
                                                       "said", "skipped", "graph_count", "cases",
                                                       "guards", "s", "also", "caveats") if k in rec}
                if budget is not None and str(rec.get("reason") or "").startswith(_HANGS):
                    verdicts[p.cid]["reason"] = _out_of_budget(budget, "the patched model")
            elif not blamed:
                # the candidate the worker was on when it stopped; the rest get a new worker
                blamed = True
                verdicts[p.cid] = {"accepted": False, "reason": _worker_end(
                    run, "the patched model", budget)}
            else:
                rest.append((p, ts))
        todo = rest
    return verdicts


_HANGS = "the patched model gave no result within"   # the worker's own time limit


# what a user can do where the budget ran out (openai/guided-diffusion's tiny UNets needed 742 s
# at load 3 to 8, against the default 300)
MORE_BUDGET = "; a larger `fixes: {budget_s: ...}` in pt2bot.yml gives the proof more time"


def _out_of_budget(budget_s: float, what: str) -> str:
    return f"the review's fix budget ran out while {what} was being proven ({budget_s:g} s{MORE_BUDGET})"


def _worker_end(run: Any, what: str, budget_s: float | None = None) -> str:
    """Why the worker ended without a verdict on `what`; `budget_s` where the review's fix
    budget, not the model's own time limit, was the limit it ran into."""
    err = run.error
    if run.status == "timeout" and budget_s is not None:
        return _out_of_budget(budget_s, what)
    if run.status == "timeout":
        return f"{what} hangs: the proof worker gave no result in time and was stopped"
    if err is not None and err.kind == "crash":
        return f"{what} crashed the proof worker ({err.signal or 'killed'})"
    if err is not None and err.kind == "import":
        return f"{what} does not import in the proof worker"
    if err is not None and err.kind == "build":
        return f"{what} cannot be built in the proof worker"
    msg = (err.message or "").strip().splitlines()[0] if err is not None and err.message else ""
    return f"the proof worker stopped ({run.status}{': ' + msg if msg else ''})"


@contextlib.contextmanager
def _head_tree(setting: ProofSetting) -> Iterator[str]:
    """The head checkout the proof reads: the working tree, or a throw-away worktree of the
    head commit (the review's own is gone by then). Never written: the candidates are put in
    place in the proof worker's memory."""
    if setting.head_sha is None:
        yield setting.root
    else:
        with git.worktree(setting.root, setting.head_sha) as tree:
            yield tree


def _models_for(p: Proposal, targets: Sequence[Mapping[str, Any]], coverage: Coverage,
                ok: Collection[str]) -> set[str]:
    """The models a candidate is tried on: each with one of its targets, and each of `ok`
    (those that ran on head) whose coverage ran the lines it replaces. A setting only on the
    models with one of its targets: each shard of a matrix makes a setting's candidate from its
    own targets alone, and a model with no break there has nothing for it to remove."""
    models = {targets[i]["model"] for i in p.targets if targets[i].get("model") is not None}
    if p.cand.setting:
        return models
    return models | {n for n in coverage.reached_by(p.cand.path, p.cand.start_line,
                                                    p.cand.end_line) if n in ok}


def _ok(report: Report) -> set[str]:
    return {m.name for m in report.models if m.status == "ok"}


def _ran(results: ResultsFile) -> set[str]:
    """The models of an audit's results that ran (its `_ok`: an audit has no deltas)."""
    return {r.name for r in results.models if r.ok and isinstance(r.name, str)}


def assign(proposals: Sequence[Proposal], targets: Sequence[Mapping[str, Any]],
           coverage: Coverage, ok: Collection[str], config: Config
           ) -> dict[str, list[tuple[Proposal, list[dict[str, Any]]]]]:
    """Per model (in the config's order), the candidates to try there, in the order to try
    them, each with its targets on that model."""
    per_model: dict[str, list[tuple[Proposal, list[dict[str, Any]]]]] = {}
    for p in proposals:
        if "*" in p.results:
            continue
        mine = [targets[i] for i in p.targets]
        for name in sorted(_models_for(p, targets, coverage, ok)):
            per_model.setdefault(name, []).append(
                (p, [dict(t) for t in mine if t.get("model") == name]))
    return {m.name: per_model[m.name] for m in config.models if m.name in per_model}


def _prove(setting: ProofSetting, per_model: Mapping[str, list[tuple[Proposal, list[dict]]]],
           deltas: Mapping[str, ModelDelta], head_root: str, deadline: float,
           budget_s: float) -> None:
    """One proof worker per model, in order, until the deadline (`budget_s` after the
    proof began): verdicts into `results`."""
    spent: dict[str, tuple[float, int]] = {}    # model -> (seconds, candidates given)
    with tempfile.TemporaryDirectory(prefix="pt2bot-fixes-") as work:
        for name, items in per_model.items():
            t0 = time.monotonic()
            verdicts = prove_on_model(setting, setting.config.model(name), deltas.get(name),
                                      items, head_root, deadline, work, budget_s)
            if time.monotonic() - t0 >= MIN_LEFT_S:
                spent[name] = (time.monotonic() - t0, len(items))
            for p, _ in items:
                p.results[name] = verdicts.get(p.cid) or {"accepted": False,
                                                          "reason": "no verdict"}
        # every model's first proof before any second one: a retry must not spend the budget
        # another model's first candidates need
        for name, items in per_model.items():
            _prove_after(setting, name, items, deltas.get(name), head_root, deadline, work,
                         budget_s)
    _say_spent(per_model, spent)


def _say_spent(per_model: Mapping[str, list[tuple[Proposal, list[dict]]]],
               spent: Mapping[str, tuple[float, int]]) -> None:
    """A verdict that the budget ran out says where it went, model by model: a new user's
    setting was "not verified: the review's fix budget ran out" with no trace of the 300 s,
    where torch's hint alone took 11 s."""
    if not spent:
        return
    went = "; the budget went to " + ", ".join(
        f"`{m}` ({s:.0f} s, {n} candidate{'s' if n != 1 else ''})" for m, (s, n) in spent.items())
    for name, items in per_model.items():
        for p, _ in items:
            r = p.results.get(name)
            if r and not r.get("accepted") and str(r.get("reason") or "").startswith(
                    "the review's fix budget ran out") and went not in str(r["reason"]):
                r["reason"] = str(r["reason"]) + went


# --------------------------------------------------------------------------- after the others
# Each candidate is proven against head, which still holds the PR's other new problems, and
# some of what a candidate is refused for comes from them: a `.item()` break above a kept
# check splits the frames the check compiles in and passes a guarded value across, so the
# check's edit "adds a recompile" that is gone once the `.item()` fix is in. Where a model has
# verified candidates and candidates refused for what compiles (`_COMPILES`), the refused ones
# are proven once more on a copy of head with the verified edits written in: accepted there, a
# candidate is verified "measured with the suggestion at path:line applied first", and is posted
# only where that one is; refused again, its reason says so. One more worker per model, only then.

_COPY_LIMIT = 256 * 1024 * 1024   # the bytes of a working tree copied for it (a data dir: none)


def _copy_tree(root: str, dest: str) -> bool:
    """The files git sees in `root` (tracked, and untracked but not ignored) copied to `dest`;
    False, with nothing to use, where they are more than `_COPY_LIMIT` bytes or cannot be
    read. The tree is the PR's: a file whose real path leaves `root` (through a linked
    directory or a link itself) is not read."""
    real_root = os.path.realpath(root)
    try:
        try:
            out = git.run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").stdout
            rels = [git.decode(r) for r in out.split(b"\0") if r and not r.endswith(b"/")]
        except git.GitError:   # not a git work tree: every file but git's and Python's caches
            rels = []
            for d, dirs, files in os.walk(root):
                dirs[:] = [x for x in dirs if x not in (".git", "__pycache__")]
                rels += [os.path.relpath(os.path.join(d, f), root) for f in files]
        total = 0
        for rel in rels:
            src = os.path.join(root, rel)
            real = os.path.realpath(src)
            if os.path.islink(src) or not real.startswith(real_root + os.sep) or not os.path.isfile(real):
                continue
            total += os.path.getsize(real)
            if total > _COPY_LIMIT:
                return False
            target = os.path.join(dest, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(real, target)
    except OSError:
        return False
    return True


def _shift(applied: Sequence[Proposal], path: str, line: int) -> int:
    """`line` of head's `path` in the copy with the `applied` edits written in."""
    return line + sum(len(a.cand.lines) - (a.cand.end_line - a.cand.start_line + 1)
                      for a in applied if a.cand.path == path and a.cand.end_line < line)


def _prove_after(setting: ProofSetting, name: str, items: list[tuple[Proposal, list[dict]]],
                 delta: ModelDelta | None, head_root: str, deadline: float, work: str,
                 budget_s: float) -> None:
    done = [p for p, _ in items if p.results[name].get("accepted")]
    applied: list[Proposal] = []
    for p in done:
        if not any(p.overlaps(a) for a in applied):
            applied.append(p)
    again = [(p, ts) for p, ts in items if not p.results[name].get("accepted")
             and not p.cand.setting and not p.results[name].get("skipped")
             and _COMPILES.match(p.results[name].get("reason") or "")
             and not any(p.overlaps(a) for a in applied)]
    if not applied or not again or deadline - time.monotonic() < MIN_LEFT_S:
        return
    # a fresh directory: the first worker ran the PR's code and knew `work`
    tree = os.path.join(tempfile.mkdtemp(prefix=f"{name}-after-", dir=work), "tree")
    if not _copy_tree(head_root, tree):
        return
    for path in sorted({a.cand.path for a in applied}):
        text = _read(tree, path)
        if text is None:
            return
        # bottom-up, so that each edit's lines are still head's when it is applied
        for a in sorted((a for a in applied if a.cand.path == path), key=lambda a: -a.cand.start_line):
            text = apply_candidate(text, a.cand)
        with open(os.path.join(tree, path), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
    moved: list[tuple[Proposal, list[dict[str, Any]]]] = []
    for p, ts in again:
        d = _shift(applied, p.cand.path, p.cand.start_line) - p.cand.start_line
        cand = dataclasses.replace(p.cand, start_line=p.cand.start_line + d, end_line=p.cand.end_line + d)
        original = _read(tree, p.cand.path)
        if original is None:
            continue
        q = dataclasses.replace(p, cand=cand, original=original, patched=apply_candidate(original, cand),
                                results={})
        moved.append((q, [{**t, "line": _shift(applied, str(t.get("path")), t["line"])}
                          if isinstance(t.get("line"), int) else dict(t) for t in ts]))
    verdicts = prove_on_model(setting, setting.config.model(name), delta, moved, tree, deadline,
                              os.path.dirname(tree), budget_s)
    many = len(applied) > 1
    where = ", ".join(f"{a.cand.path}:{a.cand.start_line}" for a in applied)
    for p, _ in again:
        v = verdicts.get(p.cid)
        if v is None:
            continue
        if v.get("accepted"):
            # its figures are against head with those edits in (its lines and counts too)
            p.results[name] = {**v, "evidence": f"{v.get('evidence')}, measured with the suggestion"
                               f"{'s' if many else ''} at {where} applied first (apply "
                               f"{'them' if many else 'it'} too)",
                               "after": [[a.cand.path, a.cand.start_line, a.cand.end_line] for a in applied]}
        else:
            first = p.results[name]
            p.results[name] = {**first, "retried": True, "reason": (
                f"{first.get('reason')}; refused again with the suggestion{'s' if many else ''} at {where} "
                f"applied first: {v.get('reason')}")}


def prove_fixes(report: Report, setting: ProofSetting) -> Report:
    """The report with its `fixes` (and `counts.fixes_verified`); unchanged when the config
    turns the proof off or nothing is targeted."""
    if not setting.config.fixes.verify:
        return report
    t0 = time.monotonic()
    targets = find_targets(report, setting.changeset)
    if not targets:
        return report
    proposals, why, budget = _prove_targets(setting, targets, report.findings, _ok(report),
                                            {m.name: m for m in report.models}, t0)
    return decide(report, targets, proposals, why, setting.config,
                  round(time.monotonic() - t0, 3), setting.log, budget)


def _prove_targets(setting: ProofSetting, targets: list[dict[str, Any]],
                   findings: Sequence[Finding], ok: Collection[str],
                   deltas: Mapping[str, ModelDelta], t0: float
                   ) -> tuple[list[Proposal], dict[int, str], float]:
    """The candidates for `targets`, in order, each with its verdicts (by the budget from
    `t0`); why a target has none; and the budget. A review's and an audit's proof."""
    config = setting.config
    coverage = Coverage.from_results(setting.head_results)
    with _head_tree(setting) as head_root:
        proposals, why = gather(targets, findings, head_root, setting.changeset)
        proposals = order(proposals + gather_settings(targets, findings, head_root))
        per_model = assign(proposals, targets, coverage, ok, config)
        budget = proof_budget(config, setting.head_results, per_model)
        setting.log(f"fixes: {sum(1 for p in proposals if '*' not in p.results)} candidate(s) "
                    f"for {len(targets)} target(s) on {len(per_model)} model(s), budget "
                    f"{budget:g} s")
        _prove(setting, per_model, deltas, head_root, t0 + budget, budget)
    return proposals, why, budget


def proof_budget(config: Config, head_results: ResultsFile, models: Collection[str]) -> float:
    """The proof's time budget, s: `fixes.budget_s` where pt2bot.yml sets it; else as long as
    head's smoke run of the `models` it proves on took (their workers' wall time), and never
    less than DEFAULT_FIX_BUDGET_S. A proof repeats at most about that run's work for each
    model (its break pass, shape matrix and export, and one compile with the configured
    backend): a model whose inductor compile costs minutes gets the minutes, a review of
    small models keeps the floor."""
    if config.fixes.budget_s is not None:
        return float(config.fixes.budget_s)
    runs = head_results.by_name()
    smoke = sum(float(runs[n].duration_s or 0.0) for n in models if n in runs)
    return max(DEFAULT_FIX_BUDGET_S, round(smoke, 1))


def decide(report: Report, targets: list[dict[str, Any]], proposals: list[Proposal],
           why: dict[int, str], config: Config, spent: float,
           log: Callable[[str], None] = lambda s: None, budget_s: float | None = None) -> Report:
    """The verdicts of the proof, wherever the workers ran (here, or in the shards of a
    matrix: `merge_proofs`), as report.json's `fixes` and `counts.fixes_verified`."""
    fixes = _summarise(targets, proposals, why, config, spent, budget_s)
    counts = {**report.counts, "fixes_verified": sum(1 for c in fixes["candidates"]
                                                     if c["verified"])}
    log(f"fixes: {counts['fixes_verified']} verified in {fixes['spent_s']:g} s")
    return report.with_(fixes=fixes, counts=counts)


# --------------------------------------------------------------------------- shards
# A shard of a matrix (`pt2bot review --shard I/N`) has head's checkout and its own models'
# results, not the others': it proves the candidates its models need and writes what it
# found into partial.json (`fixes`, below); `pt2bot merge` joins the shards' verdicts and
# decides with the same `decide` as above. The unsharded review tries a candidate on the
# models with one of its targets AND on every model that ran its lines; a shard cannot know
# the other shards' targets, so it also tries, on its models that ran their lines, the
# candidates of every finding that spans an added line (the merge keeps only those some
# shard's target asks for).

def _reach_points(findings: Sequence[Finding], changeset: ChangeSet) -> list[dict[str, Any]]:
    """One line per finding that spans a line the PR added: the first such line."""
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for f in findings:
        for line in range(f.line, (f.end_line or f.line) + 1):
            if diff_position(changeset, f.path, line) == DIFF_ADDED:
                out.setdefault((f.path, line), {"kind": "reach", "model": None,
                                                "path": f.path, "line": line})
                break
    return list(out.values())


def _runs_added_line(coverage: Coverage, changeset: ChangeSet) -> bool:
    for fc in changeset.files.values():
        for line in fc.added_lines:
            if coverage.reached_by(fc.path, line):
                return True
    return False


def prove_shard(report: Report, setting: ProofSetting, findings: Sequence[Finding] | None,
                scan: Callable[[str], Sequence[Finding]]) -> dict[str, Any] | None:
    """A review shard's proof for its own models, as partial.json's `fixes` (None: the
    config turns the proof off). `findings`: head's static findings (shard 1 has them);
    None: `scan` finds them in head's checkout, only when a model of the shard ran a line
    the PR added (the only case with something to prove); the budget starts after it."""
    if not setting.config.fixes.verify:
        return None
    changeset = setting.changeset
    coverage = Coverage.from_results(setting.head_results)
    busy = changeset is not None and (bool(find_targets(report, changeset))
                                      or _runs_added_line(coverage, changeset))
    return _prove_in_shard(
        setting, busy, findings, scan, lambda found: find_targets(report, changeset),
        lambda found: _reach_points(found, changeset) if changeset is not None else [],
        _ok(report), {m.name: m for m in report.models})


def _prove_in_shard(setting: ProofSetting, busy: bool, findings: Sequence[Finding] | None,
                    scan: Callable[[str], Sequence[Finding]],
                    targets_of: Callable[[Sequence[Finding]], list[dict[str, Any]]],
                    points_of: Callable[[Sequence[Finding]], list[dict[str, Any]]],
                    ok: Collection[str], deltas: Mapping[str, ModelDelta]) -> dict[str, Any]:
    """The proof of one shard (a review's or an audit's): its targets (`targets_of` the
    findings), the candidates for them and for `points_of` them (lines whose candidates
    another shard's target may need), tried on the shard's models; nothing unless `busy`."""
    config = setting.config
    t0 = time.monotonic()
    coverage = Coverage.from_results(setting.head_results)
    targets: list[dict[str, Any]] = []
    proposals: list[Proposal] = []
    why: dict[int, str] = {}
    budget = proof_budget(config, setting.head_results, ())
    if busy:
        with _head_tree(setting) as head_root:
            if findings is None:
                findings = list(scan(head_root))
            start = time.monotonic()
            targets = targets_of(findings)
            everything = targets + points_of(findings)
            found, why = gather(everything, findings, head_root, setting.changeset)
            found += gather_settings(targets, findings, head_root)
            proposals = order([p for p in found
                               if _models_for(p, everything, coverage, ok)])
            per_model = assign(proposals, everything, coverage, ok, config)
            budget = proof_budget(config, setting.head_results, per_model)
            setting.log(f"fixes: {len(per_model)} model(s) of this shard to try candidates on"
                        f" ({len(targets)} target(s) here), budget {budget:g} s")
            _prove(setting, per_model, deltas, head_root, start + budget, budget)
    return {
        "budget_s": budget, "spent_s": round(time.monotonic() - t0, 3),
        "targets": [{**{k: t.get(k) for k in TARGET_KEYS}, "reason": why.get(i)}
                    for i, t in enumerate(targets)],
        "candidates": [{
            "rule": p.cand.code, "title": p.cand.title, "path": p.cand.path,
            "start_line": p.cand.start_line, "end_line": p.cand.end_line,
            "lines": list(p.cand.lines), "safe": p.cand.safe, "guards": list(p.cand.guards),
            "rank": p.cand.rank, **({"setting": p.cand.setting} if p.cand.setting else {}),
            "by_target": [[i, list(fps)] for i, fps in sorted(p.by_target.items())
                          if i < len(targets)],
            "results": {m: {k: r[k] for k in VERDICT_KEYS if k in r}
                        for m, r in p.results.items() if m != "*"}}
            for p in proposals]}


# --------------------------------------------------------------------------- the audit
# The nightly audit has no diff: the whole tree is "the PR". Its targets are the graph breaks
# of its models on a line a static finding flags; the proof is the review's, as are the
# budget and `fixes.verify`. Nothing is posted: the verified fixes go into the audit's
# report.json and audit.md.

def audit_targets(results: ResultsFile, findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """Each graph break of a model that ran on a line a static finding flags (the break's
    place in the model order, then in the run)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for run in results.models:
        if not run.ok or not isinstance(run.name, str):
            continue
        for b in run.breaks():
            if b.matrix_only or not (isinstance(b.path, str) and isinstance(b.line, int)
                                     and _findings_at(findings, b.path, b.line)):
                continue
            t = {"kind": "break", "model": run.name, "path": b.path, "line": b.line,
                 "gb": b.gb, "gb_type": b.gb_type, "fingerprint": break_fingerprint(b)}
            if _target_id(t) not in seen:
                seen.add(_target_id(t))
                out.append(t)
    return out


def prove_audit(results: ResultsFile, findings: Sequence[Finding],
                setting: ProofSetting) -> dict[str, Any] | None:
    """The audit's `fixes` (report.json's shape, docs/formats.md), None when the config turns
    the proof off or no break lies on a finding's line. `setting.head_results` is `results`
    and its `changeset` None."""
    config = setting.config
    if not config.fixes.verify:
        return None
    t0 = time.monotonic()
    targets = audit_targets(results, findings)
    if not targets:
        return None
    proposals, why, budget = _prove_targets(setting, targets, findings, _ran(results), {}, t0)
    fixes = _summarise(targets, proposals, why, config, round(time.monotonic() - t0, 3), budget)
    setting.log(f"fixes: {sum(1 for c in fixes['candidates'] if c['verified'])} verified in "
                f"{fixes['spent_s']:g} s")
    return fixes


def prove_audit_shard(results: ResultsFile, findings: Sequence[Finding] | None,
                      scan: Callable[[str], Sequence[Finding]],
                      setting: ProofSetting) -> dict[str, Any] | None:
    """An audit shard's proof for its own models (partial.json's `fixes`, as a review
    shard's), only when one of them has a graph break; `findings`/`scan` as `prove_shard`.
    Unlike a review shard it tries no candidate for another shard's targets: every finding
    of the tree would be a candidate there, every night (so a model that ran a fix's lines
    in another shard without breaking there is "not tried" in the merged audit)."""
    if not setting.config.fixes.verify:
        return None
    busy = any(r.breaks() for r in results.models if r.ok)
    return _prove_in_shard(setting, busy, findings, scan,
                           lambda found: audit_targets(results, found), lambda found: [],
                           _ran(results), {})


def merge_audit_proofs(results: ResultsFile, findings: Sequence[Finding],
                       proofs: Sequence[Mapping[str, Any]], config: Config
                       ) -> dict[str, Any] | None:
    """A sharded audit's `fixes` from its shards' proofs, as `prove_audit` gives it."""
    if not config.fixes.verify:
        return None
    targets = audit_targets(results, findings)
    if not targets:
        return None
    proposals, why, spent = _join(targets, proofs, config, results, _ran(results))
    return _summarise(targets, proposals, why, config, spent, _shards_budget(proofs))


TARGET_KEYS = ("kind", "model", "path", "line", "gb", "gb_type", "fingerprint")
VERDICT_KEYS = ("accepted", "reason", "evidence", "skipped", "after", "retried", "unexercised", "said",
                "also", "caveats")


def _target_id(t: Mapping[str, Any]) -> tuple[Any, ...]:
    return (t.get("kind"), t.get("model"), t.get("path"), t.get("line"), t.get("gb_type"))


def merge_proofs(report: Report, proofs: Sequence[Mapping[str, Any]], config: Config,
                 changeset: ChangeSet | None, head_results: ResultsFile) -> Report:
    """The merged review's `fixes` from its shards' (`prove_shard`, checked by
    shard/partial.py), decided as an unsharded review decides (`_join`)."""
    if not config.fixes.verify:
        return report
    targets = find_targets(report, changeset)
    if not targets:
        return report
    proposals, why, spent = _join(targets, proofs, config, head_results, _ok(report), changeset)
    return decide(report, targets, proposals, why, config, spent, budget_s=_shards_budget(proofs))


def _shards_budget(proofs: Sequence[Mapping[str, Any]]) -> float | None:
    """The largest of the shards' budgets (each shard's is for its own models), as the
    slowest shard's seconds stand for the merged proof's."""
    return max((float(p["budget_s"]) for p in proofs if p.get("budget_s") is not None), default=None)


def _join(targets: list[dict[str, Any]], proofs: Sequence[Mapping[str, Any]], config: Config,
          head_results: ResultsFile, ok: Collection[str], changeset: ChangeSet | None = None
          ) -> tuple[list[Proposal], dict[int, str], float]:
    """The candidates the shards offered for the merged `targets`, each with the verdicts
    of every model it is tried on in an unsharded run (a model whose shard has no verdict
    for it: not tried); why a target has none; and the slowest shard's seconds (each shard
    has the budget for its models)."""
    index = {_target_id(t): g for g, t in enumerate(targets)}
    why: dict[int, str] = {}
    found: dict[tuple[Any, ...], Proposal] = {}
    verdicts: dict[tuple[Any, ...], dict[str, dict[str, Any]]] = {}
    for proof in proofs:
        local = {i: index.get(_target_id(t)) for i, t in enumerate(proof["targets"])}
        for i, t in enumerate(proof["targets"]):
            if local[i] is not None and t.get("reason"):
                why[local[i]] = t["reason"]
        for c in proof["candidates"]:
            cand = Candidate(code=c["rule"], path=c["path"], start_line=c["start_line"],
                             end_line=c["end_line"], lines=tuple(c["lines"]), title=c["title"],
                             safe=c["safe"], guards=tuple(c["guards"]), rank=c["rank"],
                             setting=str(c.get("setting") or ""))
            key = candidate_key(cand)
            verdicts.setdefault(key, {}).update(c["results"])
            for i, fps in c["by_target"]:
                if local.get(i) is None:
                    continue
                p = found.setdefault(key, Proposal(cid="", cand=cand, original="", patched="",
                                                   findings=[], targets=[],
                                                   outside=_outside(changeset, cand)))
                p.by_target[local[i]] = list(fps)
    for p in found.values():       # findings and targets in the targets' order, as `gather`
        for g in sorted(p.by_target):
            for fp in p.by_target[g]:
                _offered(p, g, fp)
            if g not in p.targets:      # a setting for a break no finding flags
                p.targets.append(g)
    proposals = order(list(found.values()))
    per_model = assign(proposals, targets, Coverage.from_results(head_results), ok, config)
    for name, items in per_model.items():
        for p, _ in items:
            p.results[name] = verdicts.get(p.key, {}).get(name) or {
                "accepted": False, "reason": "not tried by the shard that ran this model"}
    spent = round(max([float(p.get("spent_s") or 0.0) for p in proofs], default=0.0), 3)
    return proposals, why, spent


# what a candidate can be refused for because of what compiles around it (the PR's other new
# breaks change the frames, graphs and guards it is compared in)
_COMPILES = re.compile(r"a new graph break|a new recompile|the patched model hits the recompile limit"
                       r"|\d+ graphs? instead of|export fails")


def _note_interactions(cands: list[dict[str, Any]], retried: Collection[str] = ()) -> None:
    """Each candidate is proven against head, which still holds the PR's other new problems.
    One refused for what compiles (a new break or recompile, more graphs, an export failure)
    on a model where another candidate was verified may be refused only because of the
    problem that other one fixes (a `.item()` break upstream splits the frames a kept
    check compiles in): its reason says so, as a possibility and not a verdict, so that the
    author knows to apply the verified ones and let the review run again. Not where it was
    proven again with them in (`_prove_after`, `retried`) and refused."""
    for c in cands:
        if c["verified"] or c["id"] in retried or not c["reason"] or not _COMPILES.match(c["reason"]):
            continue
        # a verified suggestion that replaces some of the same lines is this one's alternative,
        # not something to apply first: once it is in, this edit no longer applies
        others = [o for o in cands if o["verified"] and set(o["models"]) & set(c["models"])
                  and (o["path"] != c["path"] or o["end_line"] < c["start_line"] or c["end_line"] < o["start_line"])]
        if not others:
            continue
        where = ", ".join(f"{o['path']}:{o['start_line']}" + (f"-{o['end_line']}" if o["end_line"] > o["start_line"]
                                                              else "") for o in others[:3])
        many = len(others) > 1
        c["reason"] += (f"; it was proven against head, which still has what the verified suggestion"
                        f"{'s' if many else ''} at {where} fix{'' if many else 'es'}: it may pass once "
                        f"{'they are' if many else 'that is'} applied")


def _summarise(targets: list[dict[str, Any]], proposals: list[Proposal], why: dict[int, str],
               config: Config, spent: float, budget_s: float | None = None) -> dict[str, Any]:
    """report.json's `fixes`: verified, posted once per overlap, reasons for the rest;
    `budget_s` the proof's (`proof_budget`; None: the configured one, or the floor)."""
    chosen: list[Proposal] = []
    out_c = []
    settings = [p for p in proposals if p.cand.setting]
    proposals = [p for p in proposals if not p.cand.setting]
    verdicts = [_verdict(p) for p in proposals]
    for p, (verified, *_) in zip(proposals, verdicts):
        if verified and not p.outside and not any(p.overlaps(c) for c in chosen):
            chosen.append(p)
    alternative = _alternatives(chosen, targets)
    kept = {id(p) for p in chosen}
    for p, (verified, reason, models, evidence) in zip(proposals, verdicts):
        passed = verified    # its own proof held; whether it is posted is decided beside others
        beyond = f"the edit (lines {p.cand.start_line}-{p.cand.end_line}) reaches past the lines of one hunk " \
            "of the diff, which a suggestion cannot replace"
        if p.outside:
            # proven like any edit, and said as text for the author to apply; never a
            # suggestion, and no fix of its targets in the counts
            verified, reason = False, (f"verified, but {beyond}: the inline comment gives the lines to "
                                       "apply by hand" if verified else f"{reason}; {beyond}")
        elif verified and id(p) not in kept:
            verified, reason = False, "overlaps a verified fix tried before it"
        elif verified and id(p) in alternative:
            verified, reason = False, alternative[id(p)]
        if not verified and not (p.outside and passed):
            evidence = ""   # (what a passed edit beyond the hunk proved is said with it)
        caveats = _caveats(p) if evidence else []
        out_c.append({
            "id": p.cid, "rule": p.cand.code, "title": p.cand.title, "path": p.cand.path,
            "start_line": p.cand.start_line, "end_line": p.cand.end_line,
            "lines": list(p.cand.lines), "safe": p.cand.safe, "guards": list(p.cand.guards),
            "findings": list(p.findings) + (p.covers if verified else []),
            "targets": list(p.targets) + (_riders(p, targets) if verified else []),
            "verified": verified, "passed": passed, **({"outside_diff": True} if p.outside else {}),
            "models": models, "evidence": evidence, "reason": reason,
            **({"caveats": caveats} if caveats else {})})
    # a candidate verified with others applied first stands only where those are posted too
    posted = {(c["path"], c["start_line"], c["end_line"]) for c in out_c if c["verified"]}
    for p, c in zip(proposals, out_c):
        needs = {tuple(x) for r in p.results.values() for x in r.get("after") or ()}
        if c["verified"] and not needs <= posted:
            c.pop("caveats", None)
            c.update(verified=False, evidence="", reason=(
                "verified only with the suggestion at " + ", ".join(f"{x[0]}:{x[1]}" for x in sorted(needs - posted))
                + " applied first, which is not verified itself"))
    _note_interactions(out_c, {p.cid for p in proposals if any(r.get("retried") for r in p.results.values())})
    out_s = []
    for p in settings:
        verified, reason, models, evidence = _verdict(p)
        out_s.append({"id": p.cid, "setting": p.cand.setting, "path": p.cand.path,
                      "line": p.cand.start_line, "findings": list(p.findings),
                      "targets": list(p.targets), "verified": verified, "models": models,
                      "evidence": evidence, "reason": reason,
                      **({"caveats": _caveats(p)} if verified and _caveats(p) else {})})
    out_t = []
    for i, t in enumerate(targets):
        fixed_by = next((c["id"] for c in out_c if c["verified"] and i in c["targets"]), None)
        beyond_by = None if fixed_by is not None else next(
            (c for c in out_c if c.get("outside_diff") and c["passed"] and i in c["targets"]), None)
        reason = None
        if beyond_by is not None:
            reason = beyond_by["reason"]
        elif fixed_by is None:
            reason = why.get(i) or next((c["reason"] for c in out_c if i in c["targets"]),
                                        None) or "no candidate"
        out_t.append({**{k: t.get(k) for k in ("kind", "model", "path", "line", "gb",
                                                "gb_type", "fingerprint")},
                      "fixed_by": fixed_by, "reason": reason,
                      **({"verified_outside": beyond_by["id"]} if beyond_by is not None else {}),
                      "setting": next((s["id"] for s in out_s if s["verified"] and i in s["targets"]),
                                      None)})
    if budget_s is None:
        budget_s = config.fixes.budget_s or DEFAULT_FIX_BUDGET_S
    return {"budget_s": budget_s, "spent_s": spent, "targets": out_t,
            "candidates": out_c, "settings": out_s}


def _alternatives(chosen: list[Proposal], targets: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    """Verified fixes on different lines that remove some of the same problems (a guard of the
    warning in an `if` block, and the `if` itself rewritten to skip the block): each was proven
    alone against head, not with the other applied, and two green buttons for one problem
    invite applying both. The one that removes more is posted (the first tried on a tie); each
    other one that shares a problem with a posted one is not, with its reason: id() -> reason."""
    fixed = {id(p): set(p.targets) | set(_riders(p, targets)) for p in chosen}
    posted: list[Proposal] = []
    out: dict[int, str] = {}
    for p in sorted(chosen, key=lambda p: -len(fixed[id(p)])):    # (a stable sort: ties keep order)
        q = next((q for q in posted if fixed[id(q)] & fixed[id(p)]), None)
        if q is None:
            posted.append(p)
            continue
        shared, more = fixed[id(p)] & fixed[id(q)], fixed[id(q)] - fixed[id(p)]
        where = f"{q.cand.path}:{q.cand.start_line}" + (f"-{q.cand.end_line}" if q.cand.end_line > q.cand.start_line
                                                        else "")
        if shared == fixed[id(p)]:
            out[id(p)] = (f"an alternative to the verified suggestion at {where}, which removes "
                          + (f"the same ({_named(targets, shared)}) and {_named(targets, more)} too" if more
                             else f"the same ({_named(targets, shared)})") + ": only that one is posted")
        else:
            out[id(p)] = (f"it also removes {_named(targets, shared)}, which the verified suggestion at "
                          f"{where} removes, and the two were not proven together: only that one is posted; "
                          "apply it and let the review run again")
    return out


def _named(targets: Sequence[Mapping[str, Any]], which: Collection[int]) -> str:
    """The problems `which` (target indexes) as a reader finds them: GB id or kind, and line."""
    names = []
    for i in sorted(which):
        t = targets[i] if 0 <= i < len(targets) else {}
        what = t.get("gb") or {"export": "the export failure", "recompile": "the recompile"}.get(
            str(t.get("kind")), "a break")
        names.append(f"{what} at line {t.get('line')}")
    return ", ".join(names)


def _riders(p: Proposal, targets: Sequence[Mapping[str, Any]]) -> list[int]:
    """The break and export targets on a verified candidate's replaced lines that it was not
    aimed at and that the proof saw gone on their own model (the verdict's `also`): one
    suggestion fixes them too (an `if` whose block held a second break; the export failure of
    the `if` whose break it fixes), and their comments point at it."""
    out = []
    for i, t in enumerate(targets):
        line = t.get("line")
        if i in p.targets or t.get("kind") not in ("break", "export") or t.get("path") != p.cand.path or \
                not isinstance(line, int) or not p.cand.start_line <= line <= p.cand.end_line:
            continue
        r = p.results.get(str(t.get("model")))
        if r and r.get("accepted") and any(
                a.get("path") == t.get("path") and a.get("line") == line
                and (a.get("kind") or "break") == t.get("kind")
                and (a.get("gb") == t.get("gb") if a.get("gb") and t.get("gb") else a.get("gb_type") == t.get("gb_type"))
                for a in r.get("also") or ()):
            out.append(i)
    return out


def _caveats(p: Proposal) -> list[str]:
    """What the edit does unlike head on the models that accepted it (pt2bot/smoke/verify.py
    `caveats`), each said once: the inline comment says these before the proof."""
    out: list[str] = []
    for m in sorted(p.results):
        r = p.results[m]
        if m != "*" and r.get("accepted"):
            out += [str(c) for c in r.get("caveats") or () if str(c) not in out]
    return out


_CASES = re.compile(r"\b(\d+) shape cases?\b")


def _summed(members: Sequence[tuple[str, str]]) -> str:
    """One evidence text for models whose texts differ only in their counts of shape cases:
    the first's, with each count the sum of theirs."""
    counts = [[int(n) for n in _CASES.findall(text)] for _, text in members]
    sums = iter([sum(c[i] for c in counts) for i in range(len(counts[0]))])

    def total(_m: re.Match[str]) -> str:
        n = next(sums)
        return f"{n} shape case{'s' if n != 1 else ''}"
    return _CASES.sub(total, members[0][1])


def _verdict(p: Proposal) -> tuple[bool, str | None, list[str], str]:
    """(verified, why not, the models it was tried on, what was proven): accepted on every
    model it was tried on, none skipping it; or accepted on some, and on the others refused
    only because their inputs cannot exercise a guard of the edited function (`unexercised`:
    everything else held there), which the accepting models exercised in the same function."""
    tried = {m: r for m, r in p.results.items() if m != "*" and not r.get("skipped")}
    accepted = [m for m, r in tried.items() if r.get("accepted")]
    verified = bool(accepted) and all(r.get("accepted") or r.get("unexercised") for r in tried.values()) and \
        not any(r.get("skipped") for r in p.results.values())
    reason = None
    if not verified:
        failed = [(m, r) for m, r in p.results.items() if not r.get("accepted")]
        # one reason refused on several models is said once, with them all (MAE's user read
        # the same refusal three times in each of six items)
        by_reason: dict[str, list[str]] = {}
        for m, r in failed:
            by_reason.setdefault(f"{r.get('reason') or r.get('skipped') or 'not tried'}", []).append(m)
        reason = "; ".join(
            text + (" (on " + ", ".join(f"`{m}`" for m in ms if m != "*") + ")" if any(m != "*" for m in ms) else "")
            for text, ms in list(by_reason.items())[:3]) or "not tried"
    models = sorted(tried)

    def said(m: str) -> str:
        r = tried[m]
        if r.get("accepted"):
            return str(r.get("evidence"))
        shown = ", ".join(f"`{a}`" for a in sorted(accepted))
        return (f"{r.get('evidence')}; its inputs cannot exercise the guard "
                f"({r.get('said') or r.get('reason')}), {shown} did")
    # models with the same evidence said once, together, their shape cases added up (MAE's
    # user read three near-identical sentences, one per model, that differed only in how many
    # shape cases each had: 1,500 characters beside a one-line suggestion)
    same: dict[str, list[tuple[str, str]]] = {}
    for m in models:
        text = said(m)
        same.setdefault(_CASES.sub("N shape cases", text), []).append((m, text))
    evidence = ("verified on " + "; on ".join(", ".join(f"`{m}`" for m, _ in ms) + f": {_summed(ms)}"
                                              for ms in same.values()) if verified else "")
    return verified, reason, models, evidence


__all__ = ["ProofSetting", "Proposal", "TARGET_KEYS", "VERDICT_KEYS", "assign", "audit_targets",
           "break_findings", "compose_siblings", "decide", "gather_settings", "merge_audit_proofs", "prove_audit_shard",
           "find_targets", "gather", "merge_proofs", "order", "prove_audit", "prove_fixes",
           "prove_on_model", "prove_shard", "target_key"]
