"""The latency gate's parts: the AST diff of changed statements, the pull request's blockers
(real git repositories), the decision per model, the compile signature's normalisation, and
the sequential method of the latency rounds. The end-to-end reviews are in
tests/test_latency_gate_review.py."""
from __future__ import annotations

import pytest

from gitrepo import GitRepo
from pt2bot import changes
from pt2bot.compare import latency_decided
from pt2bot.latency_gate import (UNCHANGED_NOTE, changed_spans, code_changes, decide,
                                 environment_blockers)
from pt2bot.results import CompileReport, LatencyRow, ModelRun, ResultsFile, Samples
from pt2bot.smoke.signature import normalise_graph, normalise_guards
from pt2bot.stats import compare_samples, decided

BASE = '''\
import torch
from torch import nn
from dataclasses import dataclass


@dataclass
class Cfg:
    width: int = 8


class M(nn.Module):
    """A model."""
    size: int = 8

    def __init__(self, n=8):
        super().__init__()
        self.lin = nn.Linear(n, n)

    def forward(self, x):
        # add zero
        x = x + 0
        return self.lin(x)

    def unused(self):
        return 1
'''


def _swap(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize("head", [
    _swap(BASE, ('"""A model."""', '"""A model,\n\n    documented."""'),
          ("# add zero", "# add nothing at all")),
    '"""Module docs."""\n' + _swap(BASE, ("        super().__init__()\n",
                                          "        super().__init__()\n        pass\n")),
    _swap(BASE, ("def forward(self, x):", "def forward(self, x: torch.Tensor) -> torch.Tensor:"),
          ("x = x + 0", "x: torch.Tensor = x + 0"), ("size: int = 8", "size: 'int' = 8"),
          ("width: int = 8", "width: float = 8"), ("def __init__(self, n=8):",
                                                   "def __init__(self, n: int = 8) -> None:")),
])
def test_docs_comments_and_annotations_change_no_statement(head):
    assert changed_spans(BASE, head) == ((), ())


def test_changed_statements_are_located_on_each_side():
    moved_down = _swap(BASE, ('"""A model."""', '"""A model.\n\n    Longer."""'),
                       ("x = x + 0", "x = x + 1"))
    assert changed_spans(BASE, moved_down) == (((21, 21),), ((23, 23),))
    # an unused method's body: the statement there, not the def
    assert changed_spans(BASE, _swap(BASE, ("return 1", "return 2"))) == (((25, 25),),
                                                                         ((25, 25),))
    # a default of the constructor: the def line runs at import
    assert changed_spans(BASE, _swap(BASE, ("n=8", "n=9"))) == (((15, 15),), ((15, 15),))
    # a dataclass field loses its annotation: no longer a field
    assert changed_spans(BASE, _swap(BASE, ("width: int = 8", "width = 8"))) == (
        ((8, 8),), ((8, 8),))
    # an added statement exists on head only
    added = _swap(BASE, ("        return self.lin(x)\n",
                         "        x = x.relu()\n        return self.lin(x)\n"))
    assert changed_spans(BASE, added) == ((), ((22, 22),))
    assert changed_spans(BASE, "def broken(:\n") is None


@pytest.fixture()
def two_trees(git_repo: GitRepo, tmp_path):
    git_repo.write("pkg/m.py", BASE)
    git_repo.write("README.md", "docs\n")
    git_repo.commit("base")

    def tree(**files: str) -> tuple[changes.ChangeSet, str]:
        for path, text in files.items():
            git_repo.write(path, text)
        return changes.diff_changes(str(git_repo.path), git_repo.head(), None), str(git_repo.path)

    return git_repo, tree


def test_code_changes_from_a_real_diff(two_trees, tmp_path):
    repo, tree = two_trees
    base_root = str(tmp_path / "base")
    repo.git("worktree", "add", "-q", base_root, "HEAD")
    cs, head_root = tree(**{"pkg/m.py": _swap(BASE, ("# add zero", "# more words"))})
    gate = code_changes(cs, base_root, head_root)
    assert not gate.runtime_changed and gate.blockers == ()
    cs, head_root = tree(**{"pkg/m.py": _swap(BASE, ("x = x + 0", "x = x + 1"))})
    gate = code_changes(cs, base_root, head_root)
    assert gate.runtime_changed and gate.new == {"pkg/m.py": ((21, 21),)}
    cs, head_root = tree(**{"pkg/m.py": BASE, "README.md": "more docs\n"})
    assert code_changes(cs, base_root, head_root).blockers == (
        "README.md changed (not Python code)",)
    cs, head_root = tree(**{"README.md": "docs\n", "setup.py": "install_requires = ['torch']\n"})
    assert code_changes(cs, base_root, head_root).blockers == (
        "setup.py changed (dependency pins)",)
    # a pull request's symlink is not followed out of the tree
    (repo.path / "setup.py").unlink()
    (repo.path / "pkg" / "m.py").unlink()
    (repo.path / "pkg" / "m.py").symlink_to("/etc/hostname")
    cs, head_root = tree()
    assert code_changes(cs, base_root, head_root).blockers == (
        "pkg/m.py could not be read",)


SIG = {"graphs": "sha256:aa", "guards": "sha256:bb", "compiles": 2, "graph_count": 2}


def _run(coverage: dict, sig: dict | None = SIG) -> ModelRun:
    return ModelRun(name="m", status="ok", coverage=coverage,
                    compile_report=CompileReport(trace="t", signature=sig))


def test_decide_needs_every_condition():
    from pt2bot.latency_gate import CodeChanges

    changed = CodeChanges(old={"pkg/m.py": ((21, 21),)}, new={"pkg/m.py": ((23, 23),)})
    cov = {"pkg/m.py": "1-20,22"}
    assert decide(_run(cov), _run(cov), changed).gate == "unchanged"
    assert decide(_run(cov), _run(cov), changed).note == UNCHANGED_NOTE
    assert decide(_run(cov), _run({"pkg/m.py": "23"}), changed).note == \
        "changed code ran on head (pkg/m.py:23)"
    assert decide(_run({"pkg/m.py": "21"}), _run(cov), changed).note == \
        "changed code ran on base (pkg/m.py:21)"
    other = {**SIG, "guards": "sha256:cc"}
    assert decide(_run(cov), _run(cov, other), changed).note == "compiled guards differ"
    assert decide(_run(cov), _run(cov, None), changed).gate == "measured"
    assert decide(_run(cov), _run(cov), CodeChanges(blockers=("x.txt changed",))).note == \
        "x.txt changed"
    assert decide(_run(cov), _run(cov), changed, ["base and head ran with different torch"]
                  ).gate == "measured"
    head = ResultsFile(torch="2.13", python="3.11", backend="eager")
    assert environment_blockers(head, head) == []
    assert environment_blockers(head.with_(torch="2.12"), head) == [
        "base and head ran with different torch"]


def test_signatures_compare_across_processes_and_worktrees():
    g1 = ("class GraphModule(torch.nn.Module):\n    def forward(self, L_x_: \"f32[2, 8]\"):\n"
          "        # File: /tmp/a/repo/pkg/m.py:11 in forward, code: x = x + 0\n"
          "        x = l_x_ + 0\n        return (x,)\n")
    g2 = g1.replace("/tmp/a/repo", "/w/b/repo").replace(":11 ", ":14 ")
    assert normalise_graph(g1) == normalise_graph(g2)
    assert normalise_graph(g1) != normalise_graph(g1.replace("+ 0", "+ 1"))
    guard = ("| | +- ID_MATCH: ___check_obj_id(G['torch'], 139724077682496), type=<class "
             "'module'>  # return self.lin(x)  # mp/a/repo/pkg/m.py:12 in forward\n"
             "| +- TENSOR_MATCH: check_tensor(L['x'], size=[2, 8])  # x = x + 0  # m.py:11\n"
             "Guard latency = 190.70 us\n")
    other = guard.replace("139724077682496", "140001234567890").replace(
        "mp/a/repo", "mp/b/repo").replace("190.70", "12.00")
    assert normalise_guards(guard) == normalise_guards(other)
    assert normalise_guards(guard) != normalise_guards(guard.replace("[2, 8]", "[4, 8]"))
    assert normalise_guards("x at /w/a/repo/f.py", "/w/a/repo") == "x at <repo>/f.py"


# --------------------------------------------------------------------------- sequential rounds

def test_an_interim_look_settles_no_change_only():
    # a change beyond the threshold is concluded at the last look only
    assert not decided({"significant": True, "ci_low": 1.2, "ci_high": 1.5, "threshold_pct": 10})
    assert decided({"significant": False, "ci_low": 0.95, "ci_high": 1.05, "threshold_pct": 10})
    # the interval still reaches past the threshold: another round
    assert not decided({"significant": False, "ci_low": 0.95, "ci_high": 1.12,
                        "threshold_pct": 10})
    assert not decided({"significant": False, "ci_low": None, "ci_high": None,
                        "threshold_pct": 10})


def _groups(level: float, rounds: int, spread: float = 0.02) -> list[list[float]]:
    return [[level * (1 + spread * ((i * 7 + r * 3) % 5 - 2) / 2) for i in range(20)]
            for r in range(rounds)]


def test_every_look_is_at_the_full_alpha():
    base, head = _groups(1.0, 2), _groups(2.0, 2)
    row = compare_samples(base, head, threshold_pct=10)
    assert row["alpha"] == 0.05 and row["rounds"] == 2 and row["significant"]


def _latency_run(groups: list[list[float]]) -> ModelRun:
    flat = tuple(x for g in groups for x in g)
    samples = Samples(median=sorted(flat)[len(flat) // 2], samples=flat,
                      rounds=tuple(tuple(g) for g in groups))
    return ModelRun(name="m", status="ok", latency=(LatencyRow(
        shape={"batch": 4}, eager_ms=samples, compiled_ms=samples),))


def test_latency_decided_stops_a_clear_no_change_and_times_a_slowdown_to_the_last_round():
    base = _latency_run(_groups(1.0, 2))
    assert latency_decided(base, _latency_run(_groups(1.0, 2)), threshold_pct=10, max_rounds=3)
    # two processes per side cannot show between-process noise: a slowdown gets its last round
    assert not latency_decided(base, _latency_run(_groups(2.0, 2)), threshold_pct=10,
                               max_rounds=3)
    assert latency_decided(_latency_run(_groups(1.0, 3)), _latency_run(_groups(2.0, 3)),
                           threshold_pct=10, max_rounds=3)
    # head's two processes disagree by 25 %: the interval reaches past the threshold
    assert not latency_decided(_latency_run([[1.0] * 20, [1.0] * 20]),
                               _latency_run([[1.0] * 20, [1.25] * 20]),
                               threshold_pct=10, max_rounds=3)
    # ... which, at the last look, is the verdict as it stands
    assert latency_decided(_latency_run([[1.0] * 20] * 3),
                           _latency_run([[1.0] * 20, [1.25] * 20, [1.0] * 20]),
                           threshold_pct=10, max_rounds=3)


def test_nothing_is_decided_before_the_first_look():
    one = _latency_run(_groups(1.0, 1))
    assert not latency_decided(one, _latency_run(_groups(2.0, 1)), threshold_pct=10,
                               max_rounds=3)
    # one round of one is the fixed design's only look
    assert latency_decided(one, _latency_run(_groups(2.0, 1)), threshold_pct=10, max_rounds=1)
