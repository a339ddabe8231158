"""Sharded reviews and audits: the partial report directory, and `pt2bot merge DIR...`.

A sharded job (`pt2bot review --shard I/N`, `pt2bot audit --shard I/N`) selects models
exactly as an unsharded one does (same config, same diff), splits the selection with
`pt2bot.smoke.shard.split_names` (balanced by `--costs` wall times, else round-robin) and
runs its share only. It writes a *partial* report directory: the usual files, rendered for
its own models and marked `"partial": {"shard": "I/N", "config_digest", "selection_digest",
...}` in report.json, plus `partial.json`, the inputs of the stages after the runs (the
config's text, the selection, the split, the diff, and, from shard 1 only, the static
findings: static checks run once). `base.json`/`head.json` hold its models' results.

`merge_report_dirs` rebuilds from those inputs what the unsharded run writes, by calling
the same stages (compare.build_report and report.render_all for a review,
audit.run.audit_results for an audit): the merge is not a second implementation of the
report, so it cannot drift from it. It refuses (exit 2) shards of different runs and
duplicated shards, never depends on the order of its inputs, turns the models of a shard
that did not report into `status: "error"` results, and copies every other file of the
partial directories (logs, compile reports) into the merged one.

Nothing here imports torch: the merge job needs no smoke run.
"""
from __future__ import annotations

import argparse
import filecmp
import hashlib
import json
import os
import shutil
import stat
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from pt2bot.audit.history_write import DEFAULT_KEEP_RUNS
from pt2bot.changes import ChangeSet, FileChange, Hunk, is_commentable
from pt2bot.config import Config, parse_config
from pt2bot.errors import UserError
from pt2bot.findings import Finding
from pt2bot.jsonio import write_json
from pt2bot.reach import mark_reached
from pt2bot.results import ModelRun, ResultsFile, RunError
from pt2bot.select import Selection
from pt2bot.smoke.shard import (load_costs, load_results, merge_result_files, parse_shard,
                                split_names)

PARTIAL_SCHEMA = "pt2bot.partial/1"
PARTIAL_FILE = "partial.json"
# What the merge writes itself, so never copied from a partial directory.
RENDERED = frozenset({"report.json", "summary.md", "review.json", "check.json",
                      "results.sarif", "base.json", "head.json", PARTIAL_FILE,
                      "audit.md", "report.html"})
RENDERED_DIRS = frozenset({"charts"})          # the audit's charts are drawn again
MAX_PARTIAL_BYTES = 64 * 1024 * 1024

Log = Callable[[str], None]


# --------------------------------------------------------------------------- the split

@dataclass(frozen=True)
class ShardPlan:
    """Which of the selected models each shard of a matrix runs."""

    index: int                             # 1-based
    count: int
    shards: tuple[tuple[str, ...], ...]    # names per shard, shard 1 first
    balanced: bool = False                 # by --costs wall times (else round-robin)

    @property
    def spec(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def mine(self) -> tuple[str, ...]:
        return self.shards[self.index - 1]

    @property
    def runs_static(self) -> bool:
        """Static checks run once, in shard 1 (the merge takes them from there)."""
        return self.index == 1

    def assignment(self) -> dict[str, int]:
        return {n: k + 1 for k, names in enumerate(self.shards) for n in names}


def plan_shard(names: Iterable[str], spec: str, costs_path: str | None = None) -> ShardPlan:
    """Split `names` (the selection) for shard `spec` ("I/N"); costs from a results file."""
    index, count = parse_shard(spec)
    costs = load_costs(costs_path) if costs_path else None
    shards = split_names(list(names), count, costs)
    return ShardPlan(index=index, count=count, shards=tuple(tuple(s) for s in shards),
                     balanced=bool(costs))


def selection_digest(selection: Selection) -> str:
    """What every shard must agree on: which models run and which are skipped (and why)."""
    blob = json.dumps({"selected": sorted(selection.selected),
                       "skipped": dict(sorted(selection.skipped.items()))},
                      sort_keys=True).encode()
    return "sha256:" + hashlib.sha256(blob).hexdigest()[:16]


def shard_selection(selection: Selection, plan: ShardPlan) -> Selection:
    """The selection as one shard reports it: the other shards' models are skipped there."""
    mine = set(plan.mine)
    elsewhere = {n: f"run by shard {k}/{plan.count}" for n, k in plan.assignment().items()
                 if n not in mine}
    return Selection(selected=tuple(n for n in selection.selected if n in mine),
                     skipped={**selection.skipped, **elsewhere},
                     reasons={n: r for n, r in selection.reasons.items() if n in mine})


def mark_partial(report: dict[str, Any], plan: ShardPlan, config: Config,
                 selection: Selection) -> dict[str, Any]:
    """report.json of a shard: the `partial` object, and a title that says to merge first."""
    info = {"shard": plan.spec, "config_digest": config.digest,
            "selection_digest": selection_digest(selection),
            "models": list(plan.mine), "static": plan.runs_static, "empty": not plan.mine,
            "balanced": "costs" if plan.balanced else "round-robin"}
    if not plan.mine:
        info["note"] = (f"shard {plan.spec} has no models: {len(selection.selected)} selected "
                        f"over {plan.count} shards")
    report["partial"] = info
    report["summary_title"] = (f"partial report (shard {plan.spec}, "
                               f"{len(plan.mine)} model(s)): merge first. "
                               f"{report.get('summary_title') or ''}").strip()
    return report


# --------------------------------------------------------------------------- partial.json

def changeset_to_json(cs: ChangeSet) -> dict[str, Any]:
    return {"base": cs.base, "head": cs.head, "files": [
        {"path": fc.path, "old_path": fc.old_path, "status": fc.status,
         "added_lines": sorted(fc.added_lines), "context_lines": sorted(fc.context_lines),
         "deleted_lines": sorted(fc.deleted_lines),
         "hunks": [[h.old_start, h.old_count, h.new_start, h.new_count] for h in fc.hunks],
         "binary": fc.binary, "old_mode": fc.old_mode, "new_mode": fc.new_mode,
         "similarity": fc.similarity, "context_pairs": [list(p) for p in fc.context_pairs]}
        for fc in cs.files.values()]}


def changeset_from_json(data: Mapping[str, Any], where: str) -> ChangeSet:
    try:
        files = {}
        for f in data["files"]:
            fc = FileChange(
                path=str(f["path"]), old_path=f.get("old_path"), status=str(f["status"]),
                added_lines=frozenset(map(int, f["added_lines"])),
                context_lines=frozenset(map(int, f["context_lines"])),
                deleted_lines=frozenset(map(int, f["deleted_lines"])),
                hunks=tuple(Hunk(*map(int, h)) for h in f["hunks"]),
                binary=bool(f["binary"]), old_mode=f.get("old_mode"),
                new_mode=f.get("new_mode"), similarity=f.get("similarity"),
                context_pairs=tuple((int(o), int(n)) for o, n in f["context_pairs"]))
            files[fc.path] = fc
        return ChangeSet(base=str(data["base"]), head=data.get("head"), files=files)
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"merge: {where}: changes: malformed ({type(e).__name__}: {e})") from None


def write_partial_inputs(out_dir: str, *, mode: str, plan: ShardPlan, config: Config,
                         selection: Selection, base_sha: str | None, head_sha: str,
                         results: Sequence[ResultsFile | None],
                         head_findings: Sequence[Finding], base_findings: Sequence[Finding],
                         changeset: ChangeSet | None, timings: Mapping[str, float]) -> str:
    """partial.json: what the merge needs to rebuild the unsharded report."""
    text = _config_text(config)
    env = next((r for r in results if r is not None and r.models), None)
    data = {
        "schema": PARTIAL_SCHEMA, "mode": mode, "shard": plan.spec,
        "config_digest": config.digest, "selection_digest": selection_digest(selection),
        "base": base_sha, "head": head_sha,
        "torch": env.torch if env else None, "device": env.device if env else None,
        "backend": env.backend if env else None,
        "config": {"path": os.path.basename(config.path or "pt2bot.yml"), "text": text},
        "selection": {"selected": list(selection.selected),
                      "skipped": dict(selection.skipped), "reasons": dict(selection.reasons)},
        "assignment": plan.assignment(), "models": list(plan.mine),
        "static": plan.runs_static,
        "findings": ({"head": [f.to_dict() for f in head_findings],
                      "base": [f.to_dict() for f in base_findings]}
                     if plan.runs_static else None),
        "changes": changeset_to_json(changeset) if changeset is not None else None,
        "timings": dict(timings),
    }
    path = os.path.join(out_dir, PARTIAL_FILE)
    write_json(path, data)
    return path


def _config_text(config: Config) -> str:
    if not config.path:
        raise UserError("--shard needs a config file (the merge rebuilds the report from it)")
    with open(config.path, encoding="utf-8") as fh:
        return fh.read()


# --------------------------------------------------------------------------- reading shards

@dataclass(frozen=True)
class Partial:
    directory: str
    data: dict[str, Any]
    index: int
    count: int
    head: ResultsFile | None
    base: ResultsFile | None

    @property
    def label(self) -> str:
        return f"{self.directory} (shard {self.index}/{self.count})"


def is_partial_dir(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, PARTIAL_FILE))


def read_partial(directory: str) -> Partial:
    """One partial report directory, checked field by field (errors name it: exit 2)."""
    path = os.path.join(directory, PARTIAL_FILE)
    if not os.path.isdir(directory):
        raise UserError(f"merge: {directory}: not a directory")
    if not os.path.isfile(path) or os.path.islink(path):
        raise UserError(f"merge: {directory}: not a partial report directory (no {PARTIAL_FILE}:"
                        f" written by `pt2bot review --shard I/N` or `pt2bot audit --shard I/N`)")
    data = _read_json(path)
    if not isinstance(data, dict) or data.get("schema") != PARTIAL_SCHEMA:
        raise UserError(f"merge: {path}: schema: expected {PARTIAL_SCHEMA!r}")
    where = path
    if data.get("mode") not in ("review", "audit"):
        raise UserError(f"merge: {where}: mode: expected review or audit")
    try:
        index, count = parse_shard(str(data.get("shard")))
    except UserError as e:
        raise UserError(f"merge: {where}: shard: {e}") from None
    for key, kind in (("config", dict), ("selection", dict), ("assignment", dict),
                      ("models", list), ("head", str)):
        if not isinstance(data.get(key), kind):
            raise UserError(f"merge: {where}: {key}: expected a {kind.__name__}")
    if not isinstance(data["config"].get("text"), str):
        raise UserError(f"merge: {where}: config.text: expected a string")
    sel = data["selection"]
    if not (isinstance(sel.get("selected"), list) and isinstance(sel.get("skipped"), dict)):
        raise UserError(f"merge: {where}: selection: expected selected (list), skipped (object)")
    for name, k in data["assignment"].items():
        if not isinstance(k, int) or not 1 <= k <= count:
            raise UserError(f"merge: {where}: assignment.{name}: expected a shard in 1..{count}")
    if index == 1 and not isinstance(data.get("findings"), dict):
        raise UserError(f"merge: {where}: findings: shard 1 carries the static findings")
    sides: dict[str, ResultsFile | None] = {}
    for side in ("head", "base"):
        f = os.path.join(directory, f"{side}.json")
        sides[side] = None
        if os.path.isfile(f):
            raw = load_results(f)
            if not isinstance(raw, dict) or not isinstance(raw.get("models"), list):
                raise UserError(f"merge: {f}: not a results file")
            sides[side] = ResultsFile.from_json(raw)
    return Partial(directory=directory, data=data, index=index, count=count,
                   head=sides["head"], base=sides["base"])


def _read_json(path: str) -> Any:
    try:
        if os.path.getsize(path) > MAX_PARTIAL_BYTES:
            raise UserError(f"merge: {path}: over {MAX_PARTIAL_BYTES:,} bytes")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as e:
        raise UserError(f"merge: {path}: cannot read: {e.strerror}") from None
    except ValueError as e:
        raise UserError(f"merge: {path}: not valid JSON: {e}") from None


# Keys every shard of one run shares; None (an empty shard ran no model) matches anything.
_SAME = ("mode", "config_digest", "selection_digest", "head", "base")
_SAME_IF_KNOWN = ("torch", "device", "backend")


def check_shards(parts: Sequence[Partial]) -> list[Partial]:
    """The shards in index order, after refusing duplicates and shards of another run."""
    if not parts:
        raise UserError("merge: no partial report directories given")
    counts = {p.count for p in parts}
    if len(counts) > 1:
        raise UserError("merge: the shards disagree on N: " + ", ".join(
            p.label for p in sorted(parts, key=lambda p: (p.count, p.index, p.directory))))
    seen: dict[int, Partial] = {}
    for p in sorted(parts, key=lambda p: (p.index, p.directory)):
        if p.index in seen:
            raise UserError(f"merge: shard {p.index}/{p.count} is given twice: "
                            f"{seen[p.index].directory} and {p.directory}")
        seen[p.index] = p
    ordered = [seen[i] for i in sorted(seen)]
    first = ordered[0]
    for p in ordered[1:]:
        for key in _SAME + _SAME_IF_KNOWN:
            a, b = first.data.get(key), p.data.get(key)
            if key in _SAME_IF_KNOWN and (a is None or b is None):
                continue
            if a != b:
                raise UserError(f"merge: {p.label}: {key} {b!r} differs from {first.label}'s "
                                f"{a!r}; shards must come from one run (config, selection, "
                                f"commit, torch, device)")
        if p.data["assignment"] != first.data["assignment"]:
            raise UserError(f"merge: {p.label} split the models differently from {first.label}"
                            " (a different --costs file?): every shard must read the same one")
    for key in _SAME_IF_KNOWN:     # an empty shard's None must not hide a mismatch of others
        values = sorted({str(p.data[key]) for p in ordered if p.data.get(key) is not None})
        if len(values) > 1:
            raise UserError(f"merge: the shards ran with different {key}: {', '.join(values)}")
    return ordered


# --------------------------------------------------------------------------- merging

@dataclass(frozen=True)
class Merged:
    """The joined inputs of the stages after the runs."""

    mode: str
    count: int
    config: Config
    selection: Selection
    head: ResultsFile
    base: ResultsFile
    head_findings: list[Finding]
    base_findings: list[Finding]
    changeset: ChangeSet | None
    base_sha: str | None
    head_sha: str
    missing: dict[str, int]                # model -> the shard that did not report it
    missing_shards: tuple[int, ...]
    timings: dict[str, float]


def join_shards(parts: Sequence[Partial]) -> Merged:
    ordered = check_shards(parts)
    first = ordered[0]
    d = first.data
    count = first.count
    config = parse_config(d["config"]["text"], d["config"].get("path") or "pt2bot.yml")
    if config.digest != d["config_digest"]:
        raise UserError(f"merge: {first.label}: the config text does not match its digest "
                        f"{d['config_digest']}")
    sel = d["selection"]
    selection = Selection(selected=tuple(map(str, sel["selected"])),
                          skipped={str(k): str(v) for k, v in sel["skipped"].items()},
                          reasons={str(k): str(v) for k, v in (sel.get("reasons") or {}).items()})
    present = {p.index for p in ordered}
    missing_shards = tuple(i for i in range(1, count + 1) if i not in present)
    missing = {n: k for n, k in sorted(d["assignment"].items()) if k in missing_shards}

    def side(which: str) -> ResultsFile:
        have = [(p, getattr(p, which)) for p in ordered]
        have = [(p, r) for p, r in have if r is not None and r.models]
        if not have:
            return ResultsFile.empty()
        return merge_result_files([r for _, r in have],
                                  labels=[f"{p.directory}/{which}.json" for p, _ in have])

    head, base = side("head"), side("base")
    if missing:
        head = _with_missing(head, missing, count, d)
    shard = "1/1" if not missing_shards else ",".join(f"{i}/{count}" for i in sorted(present))
    if head.models:
        head = head.with_(shard=shard)
    if base.models:
        base = base.with_(shard=shard)
    if first.index == 1:
        fd = d["findings"]
        # Shard 1 marked which of *its* models reached each line: all models' runs decide.
        head_findings = mark_reached([Finding.from_dict(f).with_(reached_by=None)
                                      for f in fd.get("head") or []], head)
        base_findings = [Finding.from_dict(f) for f in fd.get("base") or []]
    else:
        head_findings, base_findings = [], []
    changes = d.get("changes")
    changeset = changeset_from_json(changes, first.label) if isinstance(changes, dict) else None
    stages: dict[str, float] = {}
    total = 0.0
    for p in ordered:
        for k, v in (p.data.get("timings") or {}).items():
            if isinstance(v, (int, float)):
                stages[k] = max(stages.get(k, 0.0), float(v))   # the matrix's wall time
        total += float((p.data.get("timings") or {}).get("total") or 0.0)
    stages["shards_total"] = round(total, 3)                     # what the matrix cost
    return Merged(mode=d["mode"], count=count, config=config, selection=selection,
                  head=head, base=base, head_findings=head_findings,
                  base_findings=base_findings, changeset=changeset,
                  base_sha=d.get("base"), head_sha=d["head"], missing=missing,
                  missing_shards=missing_shards, timings=stages)


def missing_reason(shard: int, count: int) -> str:
    return f"shard {shard}/{count} did not report"


def _with_missing(head: ResultsFile, missing: Mapping[str, int], count: int,
                  d: Mapping[str, Any]) -> ResultsFile:
    """Head results plus an error RUN for each model of a shard that did not report."""
    runs = []
    for name, k in missing.items():
        why = missing_reason(k, count)
        runs.append(ModelRun.empty(name, "error", error=RunError(
            kind="crash", message=f"{why} (its job crashed, timed out or was cancelled): "
                                  "no result for this model")).with_(reason=why))
    if not head.models:
        head = ResultsFile(commit=d.get("head"), torch=d.get("torch"), device=d.get("device"),
                           backend=d.get("backend"), config_digest=d.get("config_digest"))
    return head.with_(models=tuple(sorted((*head.models, *runs), key=lambda r: str(r.name))))


def review_report(m: Merged) -> dict[str, Any]:
    """report.json of the merged review: the same stage the unsharded review calls."""
    from pt2bot.compare import build_report
    from pt2bot.verdict import NEUTRAL, conclude, judge, summary_title

    report = build_report(
        base_results=m.base, head_results=m.head, base_findings=m.base_findings,
        head_findings=m.head_findings, changeset=m.changeset, config=m.config,
        selection=m.selection, base_sha=m.base_sha, head_sha=m.head_sha)
    if not m.missing_shards:
        return report
    # A shard that did not report says nothing about the pull request: its models are
    # errors of the run (neutral), not failures on head.
    for entry in report["models"]:
        k = m.missing.get(entry["name"])
        if k is None:
            continue
        why = missing_reason(k, m.count)
        entry.update(status="error", reason=why, change="unknown", problems=[{
            "kind": "shard_missing", "level": NEUTRAL,
            "message": f"{why}: no result for this model"}])
    reasons = judge(findings=report["findings"], models=report["models"],
                    head_results=m.head, base_results=m.base, config=m.config)
    if 1 in m.missing_shards:
        reasons.append({"code": "shard_missing", "level": NEUTRAL, "model": None,
                        "message": f"{missing_reason(1, m.count)}: the static checks did not "
                                   "run", "count": 1})
    report["reasons"] = reasons
    report["conclusion"] = conclude(reasons)
    title = summary_title(report["conclusion"], reasons, report["models"], report["findings"])
    gone = ", ".join(f"{i}/{m.count}" for i in m.missing_shards)
    report["summary_title"] = f"{title}; shard {gone} did not report"
    return report


def copy_extras(parts: Sequence[Partial], out_dir: str, log: Log) -> int:
    """Every other file of the partial directories (logs, compile reports), shard 1 first.

    Regular files only (a symlink could point anywhere on the merge runner); a path two
    shards both wrote with different content keeps the lower shard's, with a warning.
    """
    copied = 0
    for p in sorted(parts, key=lambda p: p.index):
        root = os.path.abspath(p.directory)
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            rel_dir = os.path.relpath(dirpath, root)
            if rel_dir == ".":
                dirnames[:] = [n for n in dirnames if n not in RENDERED_DIRS]
            dirnames.sort()
            for name in sorted(filenames):
                if rel_dir == "." and (name in RENDERED or name.startswith("baseline-")):
                    continue
                src = os.path.join(dirpath, name)
                st = os.lstat(src)
                if not stat.S_ISREG(st.st_mode):
                    log(f"merge: {src}: not a regular file, not copied")
                    continue
                dst = os.path.normpath(os.path.join(out_dir, rel_dir, name))
                if os.path.exists(dst):
                    if not filecmp.cmp(src, dst, shallow=False):
                        log(f"merge: {os.path.join(rel_dir, name)} differs between shards; "
                            f"kept the lower shard's")
                    continue
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
                copied += 1
    return copied


@dataclass(frozen=True)
class MergeOptions:
    dirs: tuple[str, ...]
    out_dir: str
    history: str | None = None
    publish: bool = False
    keep_runs: int | None = DEFAULT_KEEP_RUNS
    keep_days: int | None = None


def merge_report_dirs(opts: MergeOptions, log: Log = lambda s: None) -> dict[str, Any]:
    """Join partial report directories into the directory an unsharded run writes."""
    t0 = time.perf_counter()
    out = os.path.abspath(opts.out_dir)
    for d in opts.dirs:   # copying a directory into itself would never end
        inp = os.path.abspath(d)
        if os.path.commonpath([inp, out]) in (inp, out):
            raise UserError(f"merge: --out {opts.out_dir} and the input {d} contain one another")
    parts = [read_partial(d) for d in opts.dirs]
    merged = join_shards(parts)
    if merged.mode == "audit" and not opts.history:
        raise UserError("merge: these are shards of an audit: give --history FILE, where the "
                        "merged night is stored (once)")
    if merged.mode == "review" and opts.history:   # the action passes it in every merge
        log(f"--history {opts.history}: these are a review's shards, nothing is stored")
    for k in merged.missing_shards:
        log(f"shard {k}/{merged.count} did not report: "
            f"{sum(1 for v in merged.missing.values() if v == k)} model(s) reported as errors")
    os.makedirs(out, exist_ok=True)
    if merged.mode == "review":
        report = _write_review(merged, out, t0)
    else:
        report = _write_audit(merged, out, opts, log)
    copied = copy_extras(parts, out, log)
    log(f"merged {len(parts)} of {merged.count} shard(s) into {opts.out_dir} "
        f"({len(merged.head.models)} model(s), {copied} file(s) copied) in "
        f"{time.perf_counter() - t0:.2f} s")
    if opts.publish and merged.mode == "review":
        from pt2bot.publish.github import publish_dir
        publish_dir(out)
    return report


def _write_review(m: Merged, out: str, t0: float) -> dict[str, Any]:
    from pt2bot.report import render_all

    report = review_report(m)
    for side, results in (("base", m.base), ("head", m.head)):
        if results.models:
            write_json(os.path.join(out, f"{side}.json"), results.to_json())
    timings = dict(m.timings)
    timings["merge"] = round(time.perf_counter() - t0, 3)
    report["timings"] = timings
    cs = m.changeset
    render_all(report, out, commentable=(lambda path, line: is_commentable(cs, path, line))
               if cs is not None else None)
    return report


def _write_audit(m: Merged, out: str, opts: MergeOptions, log: Log) -> dict[str, Any]:
    from pt2bot.audit.history import History
    from pt2bot.audit.run import audit_results

    results = m.head.with_(commit=m.head.commit or m.head_sha)
    with History(opts.history) as history:     # the one write of this night
        report = audit_results(m.config, results, m.head_findings, history=history,
                               out_dir=out, keep_runs=opts.keep_runs,
                               keep_days=opts.keep_days)
    if opts.publish:
        from pt2bot.audit.report import render_audit_markdown, render_regression_comment
        from pt2bot.publish.issue import publish_audit
        url = publish_audit(report, body=render_audit_markdown(report),
                            comment=render_regression_comment(report))
        log(f"tracking issue: {url or 'nothing to do (clean, no open issue)'}")
    return report


# --------------------------------------------------------------------------- CLI

def cli_merge(args: argparse.Namespace) -> int:
    """`pt2bot merge`: result files (as before) or partial report directories, not both."""
    dirs = [p for p in args.inputs if os.path.isdir(p)]
    if not dirs:
        if args.history or args.publish:
            raise UserError("merge: --history and --publish are for report directories")
        from pt2bot.smoke import cli_merge as merge_files
        return merge_files(args)
    if len(dirs) != len(args.inputs):
        files = [p for p in args.inputs if p not in dirs]
        raise UserError(f"merge: give report directories or results files, not both "
                        f"({files[0]} is a file, {dirs[0]} a directory)")
    from pt2bot.audit.run import retention_from

    keep_runs, keep_days = retention_from(args, os.environ)

    def log(msg: str) -> None:
        print(f"pt2bot: {msg}", file=sys.stderr, flush=True)

    report = merge_report_dirs(MergeOptions(
        dirs=tuple(dirs), out_dir=args.out, history=args.history, publish=args.publish,
        keep_runs=keep_runs, keep_days=keep_days), log)
    print(f"{report['conclusion'].upper()}: {report.get('summary_title', '')}".rstrip(": "))
    return 1 if report["conclusion"] == "failure" else 0


__all__ = ["MergeOptions", "PARTIAL_FILE", "PARTIAL_SCHEMA", "Partial", "ShardPlan",
           "changeset_from_json", "changeset_to_json", "check_shards", "cli_merge",
           "is_partial_dir", "join_shards", "mark_partial", "merge_report_dirs", "plan_shard",
           "read_partial", "review_report", "selection_digest", "shard_selection",
           "write_partial_inputs"]
