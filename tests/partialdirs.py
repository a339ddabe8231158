"""Partial report directories as `pt2bot review|audit --shard I/N` writes them, without torch
or git: written by the shard code itself (`write_partial_inputs`), for the merge's tests."""
from __future__ import annotations

import json
from pathlib import Path

from pt2bot.changes import ChangeSet, FileChange, Hunk
from pt2bot.configfile import parse_config
from pt2bot.findings import Finding
from pt2bot.results import ModelRun, ResultsFile
from pt2bot.select import Selection
from pt2bot.shard.partial import plan_shard, write_partial_inputs

CONFIG = """\
version: 1
models:
  - name: alpha
    entry: pkg.alpha:Alpha
    inputs: [{name: x, shape: [2, 8]}]
  - name: beta
    entry: pkg.beta:Beta
    inputs: [{name: x, shape: [2, 8]}]
"""
HEAD, BASE = "a" * 40, "b" * 40


def write_shards(root: Path, *, mode: str = "review", count: int = 2) -> list[Path]:
    """Honest partial directories of a 2-model run over `count` shards (shard 1 holds a
    finding and the diff), as `pt2bot review|audit --shard I/N` writes them."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pt2bot.yml").write_text(CONFIG)
    config = parse_config(CONFIG, str(root / "pt2bot.yml"))
    selection = Selection(selected=("alpha", "beta"), skipped={},
                          reasons={"alpha": "changed", "beta": "changed"})
    finding = Finding(rule="PTC201", path="pkg/m.py", line=3, col=4, severity="warning",
                      message="a finding", source="x.item()", function="M.forward",
                      diff="added", hints=("a hint",))
    changes = ChangeSet(base=BASE, head=None, files={"pkg/m.py": FileChange(
        path="pkg/m.py", old_path="pkg/m.py", status="modified", added_lines=frozenset({3}),
        context_lines=frozenset({1, 2}), hunks=(Hunk(1, 2, 1, 3),),
        context_pairs=((1, 1), (2, 2)))})
    dirs = []
    for i in range(1, count + 1):
        plan = plan_shard(selection.selected, f"{i}/{count}")
        d = root / f"pt2bot-shard-{i}"
        d.mkdir()
        results = ResultsFile(commit=HEAD, torch="2.13.0", device="cpu", backend="eager",
                              config_digest=config.digest, shard=plan.spec,
                              models=tuple(ModelRun.empty(n) for n in plan.mine))
        if results.models:
            for side in ("head", "base"):
                (d / f"{side}.json").write_text(json.dumps(results.to_json()))
        write_partial_inputs(str(d), mode=mode, plan=plan, config=config, selection=selection,
                             base_sha=None if mode == "audit" else BASE, head_sha=HEAD,
                             results=(results, results), head_findings=[finding],
                             base_findings=[], changeset=None if mode == "audit" else changes,
                             timings={"static": 1.0, "smoke": 2.0, "total": 3.5},
                             # the shard's proof of fixes, with nothing to prove (no break)
                             fixes={"budget_s": 300.0, "spent_s": 0.0, "targets": [],
                                    "candidates": []})
        dirs.append(d)
    return dirs
