"""Sharding's pure parts: the split of a selection, costs, the partial format, refusals.

End to end (real repo, real workers, the merge equal to the unsharded review) is
tests/test_shard_review.py; these need neither torch nor git.
"""
from __future__ import annotations

import json
import random

import pytest

from pt2bot.changes import ChangeSet, FileChange, Hunk
from pt2bot.config import ModelConfig
from pt2bot.errors import UserError
from pt2bot.publish.artifact import _partial
from pt2bot.select import Selection
from pt2bot.shard import load_costs, shard_models, split_names
from pt2bot.shard.merge import check_shards
from pt2bot.shard.partial import (Partial, changeset_from_json, changeset_to_json, plan_shard,
                                  selection_digest, shard_selection)

NAMES = [f"m{k:02d}" for k in range(11)]


def test_without_costs_the_split_is_shard_models_round_robin():
    models = [ModelConfig(name=n, entry="x:y") for n in NAMES]
    for count in (1, 2, 3, 4, 11, 15):
        shards = split_names(NAMES, count)
        assert shards == [[m.name for m in shard_models(models, i, count)]
                          for i in range(1, count + 1)]
        assert sorted(n for s in shards for n in s) == NAMES   # a partition


def test_more_shards_than_models_leaves_empty_shards():
    assert split_names(["a", "b"], 4) == [["a"], ["b"], [], []]
    assert split_names([], 3) == [[], [], []]


@pytest.mark.parametrize("count", [0, -1])
def test_no_shards_is_a_usage_error(count):
    with pytest.raises(UserError, match="--shard"):
        split_names(["a"], count)


def test_n_is_bounded_by_the_models_or_a_full_matrix():
    """Attacks on commit 89ac594: the split made a list per shard, so an N of 10**8 never
    ended, and int() of 5,000 digits raised ValueError (a traceback, not exit 2)."""
    assert plan_shard(["a", "b"], "64/64").mine == ()          # a matrix of 64, shards empty
    assert plan_shard([f"m{k}" for k in range(100)], "100/100").mine == ("m99",)
    for spec in ("1/65", "1/100000000"):
        with pytest.raises(UserError, match=r"--shard: N = \d+ is more shards than 2 selected "
                                            r"model\(s\) can use: expected N <= 64"):
            plan_shard(["a", "b"], spec)
    with pytest.raises(UserError, match=r"--shard: expected I/N such as 1/4, got '1/9999"):
        plan_shard(["a", "b"], "1/" + "9" * 5000)
    with pytest.raises(UserError, match=r"expected I/N such as 1/4, got '##\u200b\[error\]x'"):
        plan_shard(["a"], "##[error]x")


def test_costs_balance_the_slowest_shard():
    costs = {"big": 100.0, "mid1": 40.0, "mid2": 40.0, "s1": 10.0, "s2": 10.0, "s3": 10.0,
             "s4": 10.0}
    shards = split_names(list(costs), 2, costs)
    loads = [sum(costs[n] for n in s) for s in shards]
    assert loads == [110.0, 110.0] and shards[0] == ["big", "s3"]
    # Round-robin over the names puts big, mid2, s2 and s4 together: 160 against 60.
    rr = split_names(list(costs), 2)
    assert [sum(costs[n] for n in s) for s in rr] == [160.0, 60.0]


def test_a_model_without_a_cost_counts_as_the_median():
    shards = split_names(["a", "b", "c", "new"], 2, {"a": 9.0, "b": 1.0, "c": 1.0})
    # median 1.0: a alone (9) against b, c, new (3)
    assert shards == [["a"], ["b", "c", "new"]]


def test_the_split_depends_only_on_names_and_costs():
    costs = {n: float(k % 4 + 1) for k, n in enumerate(NAMES)}
    want = split_names(NAMES, 3, costs)
    for seed in range(5):
        shuffled = NAMES[:]
        random.Random(seed).shuffle(shuffled)
        assert split_names(shuffled, 3, dict(reversed(list(costs.items())))) == want


def test_load_costs_reads_duration_s_and_names_the_bad_file(tmp_path):
    good = tmp_path / "baseline.json"
    good.write_text(json.dumps({"schema": "pt2bot.results/1", "models": [
        {"name": "a", "status": "ok", "duration_s": 12.5},
        {"name": "b", "status": "error", "duration_s": None},
        {"name": "c", "status": "ok", "duration_s": "slow"}]}))
    assert load_costs(str(good)) == {"a": 12.5}
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "pt2bot.report/1"}')
    with pytest.raises(UserError, match=r"--costs: .*bad.json: not a pt2bot results file "
                                        r"\(schema pt2bot.results/1\)"):
        load_costs(str(bad))
    with pytest.raises(UserError, match=r"--costs: .*missing.json: cannot read"):
        load_costs(str(tmp_path / "missing.json"))


def test_plan_and_shard_selection():
    sel = Selection(selected=("a", "b", "c"), skipped={"z": "not affected"},
                    reasons={"a": "r", "b": "r", "c": "r"})
    plan = plan_shard(sel.selected, "2/2")
    assert plan.mine == ("b",) and plan.assignment() == {"a": 1, "c": 1, "b": 2}
    assert not plan.runs_static and plan_shard(sel.selected, "1/2").runs_static
    mine = shard_selection(sel, plan)
    assert mine.selected == ("b",) and mine.reasons == {"b": "r"}
    assert mine.skipped == {"z": "not affected", "a": "run by shard 1/2",
                            "c": "run by shard 1/2"}
    assert selection_digest(sel) == selection_digest(
        Selection(selected=("c", "a", "b"), skipped={"z": "not affected"}))
    assert selection_digest(sel) != selection_digest(Selection(selected=("a", "b")))
    with pytest.raises(UserError, match=r"--shard: expected 1 <= I <= N, got 3/2"):
        plan_shard(sel.selected, "3/2")


def test_the_changeset_survives_its_json():
    cs = ChangeSet(base="a" * 40, head=None, files={
        "pkg/m.py": FileChange(path="pkg/m.py", old_path="pkg/old.py", status="renamed",
                               added_lines=frozenset({3, 4}), context_lines=frozenset({1, 2, 5}),
                               deleted_lines=frozenset({3}), hunks=(Hunk(1, 4, 1, 5),),
                               old_mode="100644", new_mode="100644", similarity=90,
                               context_pairs=((1, 1), (2, 2), (4, 5)),
                               code_spans=((3, 4),), branch_of=((3, 2),),
                               functions=((1, 5, "forward"),),
                               changed_cols=((3, ((8, 14), (20, 20))),)),
        "img.png": FileChange(path="img.png", old_path=None, status="added", binary=True)})
    again = changeset_from_json(json.loads(json.dumps(changeset_to_json(cs))), "x")
    # the statement spans, the `if` each is in, the functions and the changed columns too: the
    # merge's `not_run` (its operands no model evaluated) and its failures' `reached_from`
    # need them
    assert again == cs
    assert again.files["img.png"].code_spans is None
    bad = changeset_to_json(cs)
    bad["files"][0]["code_spans"] = [[3, "4"]]
    with pytest.raises(UserError, match=r"x: changes.files\[0\].code_spans\[0\]"):
        changeset_from_json(bad, "x")
    bad = changeset_to_json(cs)
    bad["files"][0]["changed_cols"] = [[3, [[8]]]]
    with pytest.raises(UserError, match=r"x: changes.files\[0\].changed_cols\[0\]\[1\]\[0\]"):
        changeset_from_json(bad, "x")
    bad = changeset_to_json(cs)
    bad["files"][0]["functions"] = [[1, 5]]
    with pytest.raises(UserError, match=r"x: changes.files\[0\].functions\[0\]"):
        changeset_from_json(bad, "x")
    assert again.files["pkg/m.py"].map_old_to_new(4) == 5
    with pytest.raises(UserError, match=r"x: changes.files\[0\].status: missing"):
        changeset_from_json({"base": "a", "files": [{"path": "p"}]}, "x")


def _part(index: int, count: int = 3, **data) -> Partial:
    base = {"mode": "review", "config_digest": "sha256:c", "selection_digest": "sha256:s",
            "head": "h" * 40, "base": "b" * 40, "torch": None, "device": None,
            "backend": None, "assignment": {"a": 1, "b": 2}}
    base.update(data)
    return Partial(directory=f"d{index}", data=base, index=index, count=count, head=None,
                   base=None)


def test_shards_are_put_in_order_and_an_empty_shard_matches_any_torch():
    parts = [_part(3), _part(1, torch="2.13.0+cpu", device="cpu"), _part(2, torch="2.13.0+cpu")]
    assert [p.index for p in check_shards(parts)] == [1, 2, 3]


def test_an_empty_first_shard_does_not_hide_a_torch_mismatch():
    parts = [_part(1), _part(2, torch="2.13.0+cpu"), _part(3, torch="2.14.1")]
    with pytest.raises(UserError, match="the shards ran with different torch: 2.13.0"):
        check_shards(parts)


def test_a_partial_report_is_never_publishable():
    assert _partial(None) is None
    assert _partial({"shard": "2/3"}) == "2/3"
    for forged in ({"shard": "2/3\n::error::x"}, {}, "yes", [], 0, False):
        assert _partial(forged) == "?"        # present but malformed: still partial


def test_merge_into_one_of_its_inputs_is_refused(tmp_path):
    from pt2bot.shard.merge import MergeOptions, merge_report_dirs
    for out in (tmp_path / "s1" / "merged", tmp_path / "s1", tmp_path):
        with pytest.raises(UserError, match="contain one another"):
            merge_report_dirs(MergeOptions(dirs=(str(tmp_path / "s1"),), out_dir=str(out)))
