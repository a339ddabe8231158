"""The partial report directory of one shard of a matrix: its format, writing and reading.

A sharded job (`pt2bot review --shard I/N`, `pt2bot audit --shard I/N`) selects models
exactly as an unsharded one does (same config, same diff), splits the selection with
`pt2bot.shard.split_names` (balanced by `--costs` wall times, else round-robin) and
runs its share only (`plan_shard`, `shard_selection`). It writes a *partial* report
directory: the usual files, rendered for its own models and marked `"partial": {"shard":
"I/N", "config_digest", "selection_digest", ...}` in report.json (`mark_partial`), plus
`partial.json` (`write_partial_inputs`): the inputs of the stages after the runs (the
config's text, the selection, the split, the diff and, from shard 1 only, the static
findings: static checks run once; the proof of fixes on its own models, pt2bot/fixes.py
`prove_shard`/`prove_audit_shard`). `base.json`/`head.json` hold its models' results.
`pt2bot merge` (pt2bot/shard/merge.py) reads them back (`read_partial`: the JSON becomes
typed data there, once) and joins them.

Nothing here imports torch.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, fields
from typing import Any, Callable, Iterable, Mapping, NoReturn, Sequence

from pt2bot.changes import STATUSES, ChangeSet, FileChange, Hunk
from pt2bot.config import Config
from pt2bot.errors import UserError
from pt2bot.fixes import SETTINGS
from pt2bot.findings import (DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE, DIFF_OUTSIDE, SEVERITIES,
                             SMOKE_STATUSES, Finding)
from pt2bot.jsonio import read_json, write_json
from pt2bot.reportdata import Report
from pt2bot.report.escape import quote
from pt2bot.results import ResultsFile, load_results_file
from pt2bot.select import Selection
from pt2bot.shard import load_costs, parse_shard, split_names

# /2: `fixes`, the shard's proof of suggested fixes (a /1 file, of a pt2bot before it, is
# refused: its review's merge would have lost the suggestions without a word)
PARTIAL_SCHEMA = "pt2bot.partial/2"
PARTIAL_FILE = "partial.json"
MAX_PARTIAL_BYTES = 64 * 1024 * 1024
# The config's text, as the shard read it: no more than pt2bot.yml's own cap
# (pt2bot/configfile/yamlread.py MAX_BYTES).
MAX_CONFIG_CHARS = 256 << 10


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
    """Split `names` (the selection) for shard `spec` ("I/N"); costs from a results file.

    N is at most the number of names, or `pt2bot.shard.MAX_SHARDS` (a usage error, exit 2):
    the split makes one list per shard."""
    names = list(names)
    index, count = parse_shard(spec, models=len(set(names)))
    costs = load_costs(costs_path) if costs_path else None
    shards = split_names(names, count, costs)
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
         "similarity": fc.similarity, "context_pairs": [list(p) for p in fc.context_pairs],
         **({} if fc.code_spans is None else {"code_spans": [list(p) for p in fc.code_spans]}),
         **({"branch_of": [list(p) for p in fc.branch_of]} if fc.branch_of else {}),
         **({"functions": [list(p) for p in fc.functions]} if fc.functions else {}),
         **({"changed_cols": [[line, [list(s) for s in spans]] for line, spans in fc.changed_cols]}
            if fc.changed_cols else {})}
        for fc in cs.files.values()]}


def changeset_from_json(data: Any, where: str) -> ChangeSet:
    """The diff as `changeset_to_json` wrote it, every value checked (errors name the key)."""
    if not isinstance(data, dict):
        _bad(where, "changes", "an object", data)
    base = _str(_key(data, "base", where, "changes"), where, "changes.base")
    head = _str(data.get("head"), where, "changes.head", none=True)
    files = _key(data, "files", where, "changes")
    if not isinstance(files, list):
        _bad(where, "changes.files", "a list", files)
    out: dict[str, FileChange] = {}
    for k, f in enumerate(files):
        at = f"changes.files[{k}]"
        if not isinstance(f, dict):
            _bad(where, at, "an object", f)
        for name in ("path", "status", "added_lines", "context_lines", "deleted_lines",
                     "hunks", "binary", "context_pairs"):
            _key(f, name, where, at)
        lines = {name: frozenset(_ints(f[name], where, f"{at}.{name}", lo=1))
                 for name in ("added_lines", "context_lines", "deleted_lines")}
        fc = FileChange(
            path=_str(f["path"], where, f"{at}.path"),
            old_path=_str(f.get("old_path"), where, f"{at}.old_path", none=True),
            status=_choice(f["status"], STATUSES, where, f"{at}.status"),
            **lines,
            hunks=tuple(Hunk(*h) for h in _tuples(f["hunks"], 4, where, f"{at}.hunks")),
            binary=_bool(f["binary"], where, f"{at}.binary"),
            old_mode=_str(f.get("old_mode"), where, f"{at}.old_mode", none=True),
            new_mode=_str(f.get("new_mode"), where, f"{at}.new_mode", none=True),
            similarity=_int(f.get("similarity"), where, f"{at}.similarity", none=True),
            context_pairs=tuple(_tuples(f["context_pairs"], 2, where, f"{at}.context_pairs",
                                        lo=1)),
            code_spans=None if f.get("code_spans") is None else tuple(
                _tuples(f["code_spans"], 2, where, f"{at}.code_spans", lo=1)),
            branch_of=tuple(_tuples(f.get("branch_of", []), 2, where, f"{at}.branch_of", lo=1)),
            functions=tuple(_functions(f.get("functions", []), where, f"{at}.functions")),
            changed_cols=tuple(_changed_cols(f.get("changed_cols", []), where, f"{at}.changed_cols")))
        out[fc.path] = fc
    return ChangeSet(base=base, head=head, files=out)


def write_partial_inputs(out_dir: str, *, mode: str, plan: ShardPlan, config: Config,
                         selection: Selection, base_sha: str | None, head_sha: str,
                         results: Sequence[ResultsFile | None],
                         head_findings: Sequence[Finding], base_findings: Sequence[Finding],
                         changeset: ChangeSet | None, timings: Mapping[str, float],
                         fixes: Mapping[str, Any] | None = None) -> str:
    """partial.json: what the merge needs to rebuild the unsharded report (`fixes`: the
    shard's proof of fixes, pt2bot/fixes.py `prove_shard`/`prove_audit_shard`; None with
    the proof off)."""
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
        "fixes": None if fixes is None else dict(fixes),
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
# A shard's directory is written by a job that ran the pull request's code, so everything in
# it is checked here, once, before the merge uses it: each malformed value is a usage error
# (exit 2) that names the file and the key, says what was expected and quotes what was found
# (capped, and safe to print in a job's log).

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
    selection: Selection = Selection()
    changeset: ChangeSet | None = None
    timings: Mapping[str, float] | None = None
    fixes: Mapping[str, Any] | None = None     # the shard's proof of fixes, checked

    @property
    def label(self) -> str:
        return f"{self.directory} (shard {self.index}/{self.count})"


def is_partial_dir(path: str) -> bool:
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, PARTIAL_FILE))


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_MAX_INT = 2 ** 31 - 1        # line numbers and counts: beyond any file, printable


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
    _choice(data.get("mode"), ("review", "audit"), where, "mode")
    selection = _selection(_key(data, "selection", where), where)
    if data.get("selection_digest") != selection_digest(selection):
        _bad(where, "selection_digest", f"the digest of its selection, "
             f"{selection_digest(selection)}", data.get("selection_digest"))
    # N is bounded by the selection (pt2bot.shard.max_shards): the merge lists the shards
    # that did not report, one by one.
    index, count = parse_shard(_str(data.get("shard"), where, "shard"),
                               models=len(selection.selected), what=f"merge: {where}: shard")
    for key in ("config_digest", "head"):
        _str(data.get(key), where, key)
    if not _SHA.fullmatch(data["head"]):
        _bad(where, "head", "a commit's hex sha", data["head"])
    base = data.get("base")
    if base is not None and not (isinstance(base, str) and _SHA.fullmatch(base)):
        _bad(where, "base", "a commit's hex sha or null", base)
    for key in ("torch", "device", "backend"):
        _str(data.get(key), where, key, none=True)
    config = _key(data, "config", where)
    if not isinstance(config, dict):
        _bad(where, "config", "an object", config)
    text = _str(config.get("text"), where, "config.text")
    if len(text) > MAX_CONFIG_CHARS:
        _bad(where, "config.text", f"at most {MAX_CONFIG_CHARS:,} characters (pt2bot.yml's cap)",
             found=f"{len(text):,}")
    name = _str(config.get("path"), where, "config.path", none=True)
    if name is not None and (os.path.basename(name) != name or name in ("", ".", "..")):
        _bad(where, "config.path", "a file name", name)
    assignment = _key(data, "assignment", where)
    if not isinstance(assignment, dict):
        _bad(where, "assignment", "an object", assignment)
    for model, k in assignment.items():
        _int(k, where, f"assignment[{quote(model, 40)}]", lo=1, hi=count)
    if set(assignment) != set(selection.selected):
        odd = sorted(set(assignment) ^ set(selection.selected))
        _bad(where, "assignment", "a shard for each model of selection.selected, and no other",
             found=f"{len(odd)} model(s) in only one of them, {quote(odd[0], 40)} first")
    models = _strs(_key(data, "models", where), where, "models")
    if set(models) != {m for m, k in assignment.items() if k == index}:
        _bad(where, "models", f"the models the assignment gives shard {index}", models)
    _bool(data.get("static"), where, "static")
    findings = data.get("findings")
    if index == 1 and not isinstance(findings, dict):
        raise UserError(f"merge: {where}: findings: shard 1 carries the static findings")
    if findings is not None and not isinstance(findings, dict):
        _bad(where, "findings", "an object or null", findings)
    typed = {"head": (), "base": ()} if index != 1 else {
        side: _findings(findings.get(side), where, f"findings.{side}") for side in ("head", "base")}
    changes = data.get("changes")
    changeset = None if changes is None else changeset_from_json(changes, where)
    timings = _timings(data.get("timings"), where)
    mine = set(models)
    fixes = _key(data, "fixes", where)
    if fixes is not None:
        fixes = _fix_proof(fixes, where, mine)
    sides: dict[str, ResultsFile | None] = {}
    for side in ("head", "base"):
        f = os.path.join(directory, f"{side}.json")
        if os.path.islink(f):
            raise UserError(f"merge: {f}: a symbolic link, not a results file")
        sides[side] = load_results_file(f, what="merge") if os.path.isfile(f) else None
        # A shard reports its own models only (a model of another shard, or of none, would
        # be merged as if it had been selected and run here).
        strays = [r.name for r in (sides[side].models if sides[side] else ())
                  if r.name not in mine]
        if strays:
            raise UserError(f"merge: {f}: models: {quote(strays[0], 40)} is not one of this "
                            f"shard's models ({PARTIAL_FILE} `models`)")
    return Partial(directory=directory, data=data, index=index, count=count,
                   head=sides["head"], base=sides["base"], head_findings=typed["head"],
                   base_findings=typed["base"], selection=selection, changeset=changeset,
                   timings=timings, fixes=fixes)


def _selection(sel: Any, where: str) -> Selection:
    if not isinstance(sel, dict):
        _bad(where, "selection", "an object", sel)
    selected = _strs(_key(sel, "selected", where, "selection"), where, "selection.selected")
    if len(set(selected)) != len(selected):
        _bad(where, "selection.selected", "each model once", selected)
    skipped = _str_map(_key(sel, "skipped", where, "selection"), where, "selection.skipped")
    reasons = sel.get("reasons")
    reasons = {} if reasons is None else _str_map(reasons, where, "selection.reasons")
    return Selection(selected=tuple(selected), skipped=skipped, reasons=reasons)


def _timings(value: Any, where: str) -> dict[str, float]:
    """Seconds per stage; a null (a NaN the shard could not write) is left out."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        _bad(where, "timings", "an object", value)
    out = {}
    for k, v in value.items():
        if v is None:
            continue
        out[k] = _seconds(v, where, f"timings[{quote(k, 40)}]")
    return out


_TARGET_KINDS = ("break", "recompile", "export")
_SETTINGS = tuple(SETTINGS.values())


def _seconds(value: Any, where: str, key: str) -> float:
    # (a float NaN or infinity fails the comparison; an int of any size is compared exactly)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 10 ** 12:
        _bad(where, key, "seconds (a number from 0)", value)
    return float(value)


def _fix_proof(value: Any, where: str, mine: set[str]) -> dict[str, Any]:
    """A shard's proof of fixes as pt2bot/fixes.py `prove_shard` wrote it: the
    targets of its models, the candidates it tried (each with its verdicts on this shard's
    models only, and the targets, by index, that it was offered for)."""
    if not isinstance(value, dict):
        _bad(where, "fixes", "an object or null", value)
    for key in ("budget_s", "spent_s"):
        _seconds(_key(value, key, where, "fixes"), where, f"fixes.{key}")
    targets = _key(value, "targets", where, "fixes")
    if not isinstance(targets, list):
        _bad(where, "fixes.targets", "a list", targets)
    for k, t in enumerate(targets):
        at = f"fixes.targets[{k}]"
        if not isinstance(t, dict):
            _bad(where, at, "an object", t)
        _choice(_key(t, "kind", where, at), _TARGET_KINDS, where, f"{at}.kind")
        if _str(_key(t, "model", where, at), where, f"{at}.model") not in mine:
            _bad(where, f"{at}.model", "one of this shard's models", t["model"])
        _str(_key(t, "path", where, at), where, f"{at}.path")
        _int(_key(t, "line", where, at), where, f"{at}.line", lo=1)
        for name in ("gb", "gb_type", "fingerprint", "reason"):
            _str(t.get(name), where, f"{at}.{name}", none=True)
    candidates = _key(value, "candidates", where, "fixes")
    if not isinstance(candidates, list):
        _bad(where, "fixes.candidates", "a list", candidates)
    for k, c in enumerate(candidates):
        at = f"fixes.candidates[{k}]"
        if not isinstance(c, dict):
            _bad(where, at, "an object", c)
        for name in ("rule", "title", "path"):
            _str(_key(c, name, where, at), where, f"{at}.{name}")
        start = _int(_key(c, "start_line", where, at), where, f"{at}.start_line", lo=1)
        _int(_key(c, "end_line", where, at), where, f"{at}.end_line", lo=start)
        _strs(_key(c, "lines", where, at), where, f"{at}.lines")
        _bool(_key(c, "safe", where, at), where, f"{at}.safe")
        _strs(_key(c, "guards", where, at), where, f"{at}.guards")
        _int(_key(c, "rank", where, at), where, f"{at}.rank", lo=-_MAX_INT)
        if "setting" in c:      # a dynamo setting's proof (pt2bot/fixes.py SETTINGS)
            _choice(c["setting"], _SETTINGS, where, f"{at}.setting")
        offered = _key(c, "by_target", where, at)
        if not isinstance(offered, list):
            _bad(where, f"{at}.by_target", "a list of [target index, fingerprints]", offered)
        for j, item in enumerate(offered):
            if not isinstance(item, list) or len(item) != 2:
                _bad(where, f"{at}.by_target[{j}]", "[target index, fingerprints]", item)
            _int(item[0], where, f"{at}.by_target[{j}][0]", hi=len(targets) - 1)
            _strs(item[1], where, f"{at}.by_target[{j}][1]")
        results = _key(c, "results", where, at)
        if not isinstance(results, dict):
            _bad(where, f"{at}.results", "an object of verdicts by model", results)
        for model, r in results.items():
            rat = f"{at}.results[{quote(model, 40)}]"
            if model not in mine:
                _bad(where, rat, "a verdict on one of this shard's models", found="another's")
            if not isinstance(r, dict):
                _bad(where, rat, "a verdict (an object)", r)
            if "accepted" in r:     # (a candidate skipped has no verdict of its own)
                _bool(r["accepted"], where, f"{rat}.accepted")
            if "unexercised" in r:
                _bool(r["unexercised"], where, f"{rat}.unexercised")
            for name in ("reason", "evidence", "skipped"):
                _str(r.get(name), where, f"{rat}.{name}", none=True)
    return value


# How each field of a Finding is checked, by its annotation (a new field of another type
# fails at import, here, rather than let its values through unchecked).
_CHECKS: dict[str, Callable[[Any, str, str], Any]] = {
    "str": lambda v, w, k: _str(v, w, k),
    "str | None": lambda v, w, k: _str(v, w, k, none=True),
    "int": lambda v, w, k: _int(v, w, k),
    "int | None": lambda v, w, k: _int(v, w, k, none=True),
    "bool": lambda v, w, k: _bool(v, w, k),
    "tuple[str, ...]": lambda v, w, k: _strs(v, w, k),
    "tuple[str, ...] | None": lambda v, w, k: None if v is None else _strs(v, w, k),
    "SmokeCheck | None": lambda v, w, k: None if v is None else _smoke(v, w, k),
}
_FINDING_FIELDS = {f.name: _CHECKS[str(f.type)] for f in fields(Finding)}
_DIFFS = (DIFF_ADDED, DIFF_CONTEXT, DIFF_FILE, DIFF_OUTSIDE)


def _findings(items: Any, where: str, key: str) -> tuple[Finding, ...]:
    """Findings as `write_partial_inputs` wrote them (`Finding.to_dict`), typed again."""
    if items is None:
        return ()
    if not isinstance(items, list):
        _bad(where, key, "a list of findings", items)
    out = []
    for k, f in enumerate(items):
        at = f"{key}[{k}]"
        if not isinstance(f, dict):
            _bad(where, at, "a finding (an object)", f)
        for name in ("rule", "path", "line", "col", "severity", "message"):
            _key(f, name, where, at)
        for name, value in f.items():
            check = _FINDING_FIELDS.get(name)
            if check is not None:
                check(value, where, f"{at}.{name}")
        _choice(f["severity"], SEVERITIES, where, f"{at}.severity")
        if f.get("diff") is not None:
            _choice(f["diff"], _DIFFS, where, f"{at}.diff")
        out.append(Finding.from_dict(f))
    return tuple(out)


# ---- the checks: each returns the value, or raises the located error

def _shown(value: Any) -> str:
    """What was found, in an error message: quoted and capped (a list or object by its size)."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"an object of {len(value)} key(s)"
    return quote(value, 40)


def _bad(where: str, key: str, expected: str, value: Any = None, *,
         found: str | None = None) -> NoReturn:
    """The located error: `where` (the file), `key`, what was expected, and what was found
    (`value` quoted, or `found` when it needs words)."""
    raise UserError(f"merge: {where}: {key}: expected {expected}, got "
                    f"{found if found is not None else _shown(value)}")


def _key(data: Mapping[str, Any], name: str, where: str, at: str = "") -> Any:
    """data[name], which must be there (`at`: the key of `data` itself, for the message)."""
    if name not in data:
        raise UserError(f"merge: {where}: {at + '.' if at else ''}{name}: missing")
    return data[name]


def _str(value: Any, where: str, key: str, *, none: bool = False) -> Any:
    if not (isinstance(value, str) or (none and value is None)):
        _bad(where, key, "a string or null" if none else "a string", value)
    return value


def _int(value: Any, where: str, key: str, *, none: bool = False, lo: int = 0,
         hi: int = _MAX_INT) -> Any:
    if none and value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        _bad(where, key, f"an integer from {lo} to {hi}", value)
    return value


def _bool(value: Any, where: str, key: str) -> bool:
    if not isinstance(value, bool):
        _bad(where, key, "true or false", value)
    return value


def _smoke(value: Any, where: str, key: str) -> Any:
    """A finding's `smoke` verdict as `SmokeCheck.to_dict` writes it."""
    if not isinstance(value, dict):
        _bad(where, key, "an object (the smoke run's verdict)", value)
    _choice(_key(value, "status", where, key), SMOKE_STATUSES, where, f"{key}.status")
    _strs(value.get("models", []), where, f"{key}.models")
    _str(value.get("evidence", ""), where, f"{key}.evidence")
    if value.get("severity") is not None:
        _choice(value["severity"], SEVERITIES, where, f"{key}.severity")
    return value


def _choice(value: Any, choices: Sequence[str], where: str, key: str) -> str:
    if not isinstance(value, str) or value not in choices:
        _bad(where, key, " or ".join(choices), value)
    return value


def _strs(value: Any, where: str, key: str) -> list[str]:
    if not isinstance(value, list):
        _bad(where, key, "a list of strings", value)
    for k, v in enumerate(value):
        _str(v, where, f"{key}[{k}]")
    return value


def _str_map(value: Any, where: str, key: str) -> dict[str, str]:
    if not isinstance(value, dict):
        _bad(where, key, "an object of strings", value)
    for k, v in value.items():
        _str(v, where, f"{key}[{quote(k, 40)}]")
    return dict(value)


def _ints(value: Any, where: str, key: str, *, lo: int = 0) -> list[int]:
    if not isinstance(value, list):
        _bad(where, key, "a list of integers", value)
    return [_int(v, where, f"{key}[{k}]", lo=lo) for k, v in enumerate(value)]


def _tuples(value: Any, size: int, where: str, key: str, *, lo: int = 0) -> list[tuple[int, ...]]:
    if not isinstance(value, list):
        _bad(where, key, f"a list of lists of {size} integers", value)
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, list) or len(item) != size:
            _bad(where, f"{key}[{k}]", f"a list of {size} integers", item)
        out.append(tuple(_ints(item, where, f"{key}[{k}]", lo=lo)))
    return out


def _functions(value: Any, where: str, key: str) -> list[tuple[int, int, str]]:
    """`FileChange.functions`: [first, last, name] each."""
    if not isinstance(value, list):
        _bad(where, key, "a list of [first, last, name]", value)
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 3:
            _bad(where, f"{key}[{k}]", "a list [first, last, name]", item)
        first, last = _ints(item[:2], where, f"{key}[{k}]", lo=1)
        out.append((first, last, _str(item[2], where, f"{key}[{k}][2]")))
    return out


def _changed_cols(value: Any, where: str, key: str) -> list[tuple[int, tuple[tuple[int, int], ...]]]:
    """`FileChange.changed_cols`: [line, [[first, end], ...]] each."""
    if not isinstance(value, list):
        _bad(where, key, "a list of [line, [[first, end], ...]]", value)
    out = []
    for k, item in enumerate(value):
        if not isinstance(item, list) or len(item) != 2:
            _bad(where, f"{key}[{k}]", "a list [line, [[first, end], ...]]", item)
        line, = _ints(item[:1], where, f"{key}[{k}]", lo=1)
        out.append((line, tuple(_tuples(item[1], 2, where, f"{key}[{k}][1]"))))
    return out


def _read_json(path: str) -> Any:
    return read_json(path, what="merge", max_bytes=MAX_PARTIAL_BYTES)


__all__ = ["MAX_PARTIAL_BYTES", "PARTIAL_FILE", "PARTIAL_SCHEMA", "Partial", "ShardPlan",
           "changeset_from_json", "changeset_to_json", "is_partial_dir", "mark_partial",
           "plan_shard", "read_partial", "selection_digest", "shard_selection",
           "write_partial_inputs"]
