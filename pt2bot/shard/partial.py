"""The partial report directory of one shard of a matrix: its format, writing and reading.

A sharded job (`pt2bot review --shard I/N`, `pt2bot audit --shard I/N`) selects models
exactly as an unsharded one does (same config, same diff), splits the selection with
`pt2bot.shard.split_names` (balanced by `--costs` wall times, else round-robin) and
runs its share only (`plan_shard`, `shard_selection`). It writes a *partial* report
directory: the usual files, rendered for its own models and marked `"partial": {"shard":
"I/N", "config_digest", "selection_digest", ...}` in report.json (`mark_partial`), plus
`partial.json` (`write_partial_inputs`): the inputs of the stages after the runs (the
config's text, the selection, the split, the diff and, from shard 1 only, the static
findings: static checks run once). `base.json`/`head.json` hold its models' results.
`pt2bot merge` (pt2bot/shard/merge.py) reads them back (`read_partial`: the JSON becomes
typed data there, once) and joins them.

Nothing here imports torch.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from pt2bot.changes import ChangeSet, FileChange, Hunk
from pt2bot.config import Config
from pt2bot.errors import UserError
from pt2bot.findings import Finding
from pt2bot.jsonio import read_json, write_json
from pt2bot.reportdata import Report
from pt2bot.results import ResultsFile, load_results_file
from pt2bot.select import Selection
from pt2bot.shard import load_costs, parse_shard, split_names

PARTIAL_SCHEMA = "pt2bot.partial/1"
PARTIAL_FILE = "partial.json"
MAX_PARTIAL_BYTES = 64 * 1024 * 1024


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


def mark_partial(report: Report, plan: ShardPlan, config: Config, selection: Selection) -> Report:
    """The report of a shard: the `partial` object, and a title that says to merge first."""
    info = {"shard": plan.spec, "config_digest": config.digest,
            "selection_digest": selection_digest(selection),
            "models": list(plan.mine), "static": plan.runs_static, "empty": not plan.mine,
            "balanced": "costs" if plan.balanced else "round-robin"}
    if not plan.mine:
        info["note"] = (f"shard {plan.spec} has no models: {len(selection.selected)} selected "
                        f"over {plan.count} shards")
    return report.with_(partial=info, summary_title=(
        f"partial report (shard {plan.spec}, {len(plan.mine)} model(s)): merge first. "
        f"{report.summary_title or ''}").strip())


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
    """One shard's directory as read: partial.json (`data`, checked) and its typed parts."""

    directory: str
    data: dict[str, Any]
    index: int
    count: int
    head: ResultsFile | None
    base: ResultsFile | None
    # shard 1's static findings, as it wrote them (the other shards carry none)
    head_findings: tuple[Finding, ...] = ()
    base_findings: tuple[Finding, ...] = ()

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
    findings = {"head": (), "base": ()} if index != 1 else {
        side: _findings(data["findings"].get(side), f"{where}: findings.{side}")
        for side in ("head", "base")}
    sides: dict[str, ResultsFile | None] = {}
    for side in ("head", "base"):
        f = os.path.join(directory, f"{side}.json")
        sides[side] = load_results_file(f, what="merge") if os.path.isfile(f) else None
    return Partial(directory=directory, data=data, index=index, count=count,
                   head=sides["head"], base=sides["base"], head_findings=findings["head"],
                   base_findings=findings["base"])


def _findings(items: Any, where: str) -> tuple[Finding, ...]:
    """Findings as `write_partial_inputs` wrote them (`Finding.to_dict`), typed again."""
    if items is None:
        return ()
    if not isinstance(items, list) or not all(isinstance(f, dict) for f in items):
        raise UserError(f"merge: {where}: expected a list of findings")
    try:
        return tuple(Finding.from_dict(f) for f in items)
    except (TypeError, ValueError) as e:
        raise UserError(f"merge: {where}: malformed ({type(e).__name__}: {e})") from None


def _read_json(path: str) -> Any:
    return read_json(path, what="merge", max_bytes=MAX_PARTIAL_BYTES)


__all__ = ["MAX_PARTIAL_BYTES", "PARTIAL_FILE", "PARTIAL_SCHEMA", "Partial", "ShardPlan",
           "changeset_from_json", "changeset_to_json", "is_partial_dir", "mark_partial",
           "plan_shard", "read_partial", "selection_digest", "shard_selection",
           "write_partial_inputs"]
