"""The proof loop on one model of a repository written to a temporary directory: what the
tests of fix recipes share (pt2bot/fixes.py `prove_on_model`, the review's own path)."""
from __future__ import annotations

import time
from pathlib import Path

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, _prove_targets, break_findings, decide, prove_on_model
from pt2bot.reportdata import ModelDelta, Report
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate, fix_candidates


def one_model(name: str, entry: str, inputs: str, shapes: str, extra: str = "") -> str:
    """The pt2bot.yml these tests share: one model (`inputs` and `shapes` as YAML flow text,
    `extra` more of its keys, each line indented as a key of it), no export, eager backend, no
    latency, a fixes budget that no tiny model reaches."""
    return (f"version: 1\nmodels:\n  - name: {name}\n    entry: {entry}\n{extra}    inputs: {inputs}\n"
            f"    shapes: {shapes}\n    export: false\n    timeout_s: 60\n"
            "run: {backend: eager, latency: false, timeout_s: 120}\nfixes: {budget_s: 240}\n")


def break_target(model: str, path: str, line: int, gb: str, gb_type: str) -> dict:
    """A new graph break on a PR's line, as the review's targets say it."""
    return {"kind": "break", "model": model, "path": path, "line": line, "gb": gb, "gb_type": gb_type}


def offered(target: dict, text: str, title: str = "") -> list[Candidate]:
    """The candidates the recipes offer for dynamo's break `target` in `text` (whose title
    holds `title`), one an edit: each finding on the line offers it, as the review keys them."""
    found = [c for f in break_findings(target, text, {}) for c in fix_candidates(f, text) if title in c.title]
    return list({(c.start_line, c.lines): c for c in found}.values())


def write_repo(root: Path, files: dict[str, str], config: str) -> Path:
    """`files` (paths under `root`, `pkg/__init__.py` added) and `pt2bot.yml`."""
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / "pt2bot.yml").write_text(config)
    return root


def item(cid: str, cand: Candidate, original: str, target: dict) -> tuple[Proposal, list[dict]]:
    """One candidate of the file whose text is `original`, aimed at `target`."""
    return (Proposal(cid=cid, cand=cand, original=original, patched=apply_candidate(original, cand),
                     findings=[], targets=[]), [target])


def _setting(root: Path) -> ProofSetting:
    config = build_config((root / "pt2bot.yml").read_text(), str(root / "pt2bot.yml"))
    return ProofSetting(config=config, changeset=None, root=str(root), head_sha=None,
                        head_results=ResultsFile.empty(), device="cpu")


def prove(root: Path, model: str, items: list, work: Path, budget_s: float = 240,
          delta: ModelDelta | None = None) -> dict:
    """The verdicts of the proof loop for `items` on `model` of the repository at `root`
    (`delta`: the review's entry of the model, whose head run says which phases to run)."""
    setting = _setting(root)
    return prove_on_model(setting, setting.config.model(model), delta, items, str(root),
                          time.monotonic() + budget_s, str(work))


def decided(root: Path, targets: list[dict], findings: list, report: Report) -> Report:
    """`report` with the `fixes` a review decides for `targets` of the repository at `root`:
    the candidates the findings offer, proven on the targets' models, then `decide`."""
    setting = _setting(root)
    models = {t["model"] for t in targets}
    proposals, why, _budget = _prove_targets(setting, targets, findings, models, {}, time.monotonic())
    return decide(report, targets, proposals, why, setting.config, 0.0)
