"""Every command that reads a results file reads it through `pt2bot.results.load_results_file`.

`pt2bot check --results`, `pt2bot review --baseline`, `--costs` and `pt2bot merge` (of
results files and of a shard's head.json) each used to read the file with their own cap and
their own checks. Lowering the one cap must now reach every one of them, and a file that is
too big, not JSON or not results must be refused by each with the same located message:
"<option>: <path>: <what is wrong>" (exit 2). No torch: every refusal comes before a run.
"""
from __future__ import annotations

import json
import shutil

import pytest

from pt2bot import results
from pt2bot.cli import main
from pt2bot.errors import UserError

CONFIG = """\
version: 1
static: {paths: [pkg/]}
models:
  - name: m
    entry: pkg.m:M
    inputs: [{name: x, shape: [2, 8]}]
"""

GOOD = {"schema": "pt2bot.results/1", "models": [{"name": "m", "status": "ok"}]}
CAP = 4096


@pytest.fixture
def repo(git_repo, monkeypatch):
    git_repo.write("pt2bot.yml", CONFIG)
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/m.py", "import torch\n\n\nclass M(torch.nn.Module):\n"
                               "    def forward(self, x):\n        return x + 1\n")
    git_repo.commit("base")
    monkeypatch.chdir(git_repo.path)
    # The one cap, lowered: a reader with a cap of its own would not see this.
    monkeypatch.setattr(results, "RESULTS_CAP_BYTES", CAP)
    return git_repo


def _partial_dir(tmp_path, head: str) -> str:
    """A shard's partial report directory whose head.json is `head`'s content."""
    d = tmp_path / "shard1"
    d.mkdir()
    from pt2bot.select import Selection
    from pt2bot.shard.partial import PARTIAL_SCHEMA, selection_digest

    (d / "partial.json").write_text(json.dumps({
        "schema": PARTIAL_SCHEMA, "mode": "review", "shard": "1/1", "fixes": None,
        "config_digest": "sha256:x", "base": None,
        "selection_digest": selection_digest(Selection(selected=("m",))),
        "head": "a" * 40, "config": {"path": "pt2bot.yml", "text": CONFIG},
        "selection": {"selected": ["m"], "skipped": {}}, "assignment": {"m": 1},
        "models": ["m"], "static": True, "findings": {"head": [], "base": []}}))
    shutil.copy(head, d / "head.json")
    return str(d)


# (the option named in the message, the command line with FILE for the results file)
READERS = [
    ("--results", ["check", "--results", "FILE", "pkg"]),
    ("--baseline", ["review", "--base", "main", "--baseline", "FILE", "--out", "OUT"]),
    ("--costs", ["review", "--base", "main", "--shard", "1/2", "--costs", "FILE",
                 "--out", "OUT"]),
    ("merge", ["merge", "FILE", "--out", "OUT/merged.json"]),
    ("merge", ["merge", "DIR", "--out", "OUT"]),          # a shard's head.json
]

BAD = [
    (b"x" * (CAP + 1), f"{CAP + 1:,} bytes is over the {CAP:,}-byte cap"),
    (b"{oops", "not valid JSON"),
    (json.dumps({"schema": "pt2bot.report/1", "models": []}).encode(),
     "not a pt2bot results file (schema pt2bot.results/1)"),
    (json.dumps({"schema": "pt2bot.results/1", "models": {}}).encode(),
     "not a pt2bot results file (schema pt2bot.results/1)"),
]


@pytest.mark.parametrize("content, problem", BAD, ids=["too-big", "not-json", "report",
                                                       "models-not-a-list"])
@pytest.mark.parametrize("what, argv", READERS,
                         ids=["check", "review-baseline", "review-costs", "merge-files",
                              "merge-dirs"])
def test_every_reader_refuses_alike(repo, tmp_path, capsys, what, argv, content, problem):
    bad = tmp_path / "bad.json"
    bad.write_bytes(content)
    out = tmp_path / "out"
    path = str(bad)
    if "DIR" in argv:
        d = _partial_dir(tmp_path, path)
        path = f"{d}/head.json"
    args = [str(out) if a == "OUT" else f"{out}/merged.json" if a == "OUT/merged.json"
            else str(bad) if a == "FILE" else d if a == "DIR" else a for a in argv]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"pt2bot: error: {what}: {path}: {problem}" in err, err


def test_a_good_file_within_the_cap_is_read(repo, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(GOOD))
    assert results.load_results_file(str(good), what="x").models[0].name == "m"
    good.write_text(json.dumps(GOOD) + " " * CAP)
    with pytest.raises(UserError, match="x: .*good.json: .* over the 4,096-byte cap"):
        results.load_results_file(str(good), what="x")
