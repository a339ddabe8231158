"""The proof loop (pt2bot/fixes.py, pt2bot/smoke/verify.py): candidate fixes re-run in a real
proof worker on a tiny model, with real torch, before anything is suggested.

The model has two graph breaks: a branch on a tensor value that guards against NaN
(GB0170) and a masked mean by boolean indexing (GB0036). The candidates are written here,
as the recipes write them (`rules.Candidate`): right ones, and wrong ones that a reviewer
would be glad the loop refused: deleting the NaN guard (equal on ordinary inputs, not on a
NaN) and a masked mean over the whole length (a different denominator). A patched model
that does not parse, hangs or crashes the worker, and a budget that runs out, are each a
"no verified fix" with its reason.
"""
from __future__ import annotations

import os
import re
import time

import pytest

from pt2bot.configfile.schema import build_config
from pt2bot.fixes import ProofSetting, Proposal, prove_on_model, target_key
from pt2bot.smoke import forkserver
from pt2bot.results import ResultsFile
from pt2bot.rules import Candidate, apply_candidate
from pt2bot.smoke.patch import Edit
from pt2bot.smoke.verify import guard_kinds, judge

NET = """\
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x, mask):
        h = self.lin(x)
        if torch.isnan(h).any():
            h = torch.nan_to_num(h)
        m = h[mask].mean()
        return h * m


class Tokens(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)

    def forward(self, ids):
        h = self.emb(ids)
        if torch.isnan(h).any():
            h = torch.nan_to_num(h)
        return h.relu()


class Table(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.randn(10, 8))

    def forward(self, ids):
        h = self.table[ids]
        if torch.isnan(h).any():
            h = torch.nan_to_num(h)
        return h.relu()


class Checked(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 8)

    def forward(self, ids):
        h = self.emb(ids)
        if not torch.isfinite(h).all():
            raise RuntimeError("non-finite hidden states")
        return h.relu()
"""

CONFIG = """\
version: 1
models:
  - name: net
    entry: pkg.net:Net
    inputs: [{name: x, shape: [batch, 8]}, {name: mask, shape: [batch, 8], dtype: bool}]
    shapes: {batch: [2, 4]}
    export: false
    timeout_s: 6
  - name: tokens
    entry: pkg.net:Tokens
    inputs: [{name: ids, shape: [batch, 3], dtype: int64, high: 10}]
    shapes: {batch: [2]}
    export: false
  - name: table
    entry: pkg.net:Table
    inputs: [{name: ids, shape: [batch, 3], dtype: int64, high: 10}]
    shapes: {batch: [2]}
    export: false
  - name: checked
    entry: pkg.net:Checked
    inputs: [{name: ids, shape: [batch, 3], dtype: int64, high: 10}]
    shapes: {batch: [2]}
    export: false
run: {backend: eager, latency: false, timeout_s: 120}
fixes: {budget_s: 240}
"""

BRANCH, MEAN = 12, 14           # the lines of the two breaks in Net.forward
TOKEN_BRANCH, TABLE_BRANCH, CHECK = 25, 37, 49
NAN_BREAK = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": BRANCH,
             "gb": "GB0170", "gb_type": "Data-dependent branching"}
MEAN_BREAK = {"kind": "break", "model": "net", "path": "pkg/net.py", "line": MEAN,
              "gb": "GB0036", "gb_type": "Dynamic shape operator"}


def proposal(cid: str, start: int, end: int, lines: list[str], guards: tuple[str, ...] = (),
             rank: int = 0) -> Proposal:
    cand = Candidate(code="PTC201", path="pkg/net.py", start_line=start, end_line=end,
                     lines=tuple(lines), title=cid, safe=False, guards=guards, rank=rank)
    return Proposal(cid=cid, cand=cand, original=NET, patched=apply_candidate(NET, cand),
                    findings=[], targets=[])


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("fixes") / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "net.py").write_text(NET)
    (root / "pt2bot.yml").write_text(CONFIG)
    return root


def setting(repo, budget: float | None = None) -> ProofSetting:
    text = CONFIG if budget is None else CONFIG.replace("budget_s: 240", f"budget_s: {budget}")
    config = build_config(text, str(repo / "pt2bot.yml"))
    return ProofSetting(config=config, changeset=None, root=str(repo), head_sha=None,
                        head_results=ResultsFile.empty(), device="cpu")


def prove(repo, tmp_path, model: str, items, budget: float | None = None):
    s = setting(repo, budget)
    deadline = time.monotonic() + s.config.fixes.budget_s
    return prove_on_model(s, s.config.model(model), None, items, str(repo), deadline,
                          str(tmp_path))


# --------------------------------------------------------------------------- the real loop

@pytest.mark.torch
def test_the_loop_accepts_right_fixes_and_rejects_wrong_ones(repo, tmp_path):
    items = [
        # deletes the NaN guard: equal on ordinary inputs, not on a NaN
        (proposal("drop-guard", BRANCH, BRANCH + 1, ["        h = h"]), [NAN_BREAK]),
        # the branchless form: equal everywhere, the break is gone
        (proposal("branchless", BRANCH, BRANCH + 1, ["        h = torch.nan_to_num(h)"],
                  guards=("nan",), rank=1), [NAN_BREAK]),
        # a masked mean over the whole length: the denominator changed
        (proposal("mean-all", MEAN, MEAN, ["        m = torch.where(mask, h, 0).mean()"]),
         [MEAN_BREAK]),
        # the same masked mean: sum over the mask, divided by the mask's count
        (proposal("mean-masked", MEAN, MEAN,
                  ["        m = torch.where(mask, h, 0).sum() / mask.sum()"],
                  guards=("empty",), rank=1), [MEAN_BREAK]),
    ]
    for p, ts in items:
        p.cid = p.cand.title
    verdicts = prove(repo, tmp_path, "net", items)
    # the proof worker was forked from a warm server (no `import torch` of its own)
    if forkserver.fork_supported():
        logs = [p.read_text() for p in tmp_path.rglob("*.log")
                if p.name != forkserver.SERVER_LOG]
        assert logs and not any("spawned, not forked" in text for text in logs)
        assert any(s.dead is None for s in forkserver.SERVERS._servers.values())

    drop = verdicts["drop-guard"]
    assert drop["accepted"] is False
    assert drop["reason"].startswith("differs from head on an input with NaN in `x`")

    good = verdicts["branchless"]
    assert good["accepted"] is True, good
    assert good["evidence"] == ("GB0170 gone, 2 graphs instead of 3, outputs equal on 2 shape "
                                "cases, gradients equal on 2 shape cases, `h` equal after line 13, "
                                "equal with NaN injected into `x`, equal on inputs all 0, all 1 and with one NaN and on weights all 0, "
                                "gradients too")

    wrong_mean = verdicts["mean-all"]
    assert wrong_mean["accepted"] is False
    assert wrong_mean["reason"].startswith("outputs differ from head's on shape case batch=2")

    right_mean = verdicts["mean-masked"]
    assert right_mean["accepted"] is True, right_mean
    assert right_mean["evidence"].startswith("GB0036 gone, 2 graphs instead of 3")
    assert right_mean["evidence"].endswith("equal with an empty mask injected into `mask`, `x` (one at a time), equal on "
                                           "inputs all 0, all 1 "
                                           "and with one NaN and on weights all 0, gradients too")


@pytest.mark.torch
def test_a_guard_the_inputs_cannot_reach_is_no_verified_fix(repo, tmp_path):
    """Table.forward takes integer ids and looks them up in a buffer: nothing it takes or
    holds can carry a NaN to the test, so the branchless form is not posted, however equal it
    is on the ids."""
    cand = Candidate(code="PTC201", path="pkg/net.py", start_line=TABLE_BRANCH,
                     end_line=TABLE_BRANCH + 1, lines=("        h = torch.nan_to_num(h)",),
                     title="branchless", safe=False, guards=("nan",))
    p = Proposal(cid="c0", cand=cand, original=NET, patched=apply_candidate(NET, cand),
                 findings=[], targets=[])
    target = {**NAN_BREAK, "model": "table", "line": TABLE_BRANCH}
    [verdict] = prove(repo, tmp_path, "table", [(p, [target])]).values()
    assert verdict["accepted"] is False
    assert verdict["reason"] == ("the guard's case (NaN) cannot be reached: no tensor argument "
                                 "of Table.forward can hold NaN")


@pytest.mark.torch
def test_a_nan_in_an_intermediate_fed_by_ids_comes_from_the_weights(repo, tmp_path):
    """Tokens.forward's `h` comes from an embedding of integer ids: no argument can hold a
    NaN, but the embedding's weights can (one entry NaN, then all), and the guard is compared
    there: the case the proof could not reach before, a NaN check on a hidden state of a
    language model fed token ids."""
    cand = Candidate(code="PTC201", path="pkg/net.py", start_line=TOKEN_BRANCH,
                     end_line=TOKEN_BRANCH + 1, lines=("        h = torch.nan_to_num(h)",),
                     title="branchless", safe=False, guards=("nan",))
    deleted = Candidate(code="PTC201", path="pkg/net.py", start_line=TOKEN_BRANCH,
                        end_line=TOKEN_BRANCH + 1, lines=("        pass",),
                        title="deleted", safe=False, guards=("nan",))
    items = [(Proposal(cid=c.title, cand=c, original=NET, patched=apply_candidate(NET, c),
                       findings=[], targets=[]), [{**NAN_BREAK, "model": "tokens", "line": TOKEN_BRANCH}])
             for c in (deleted, cand)]
    verdicts = prove(repo, tmp_path, "tokens", items)
    assert verdicts["deleted"]["accepted"] is False, verdicts["deleted"]
    assert verdicts["deleted"]["reason"].startswith("differs from head on an input with NaN in `the model's weights`")
    assert verdicts["branchless"]["accepted"] is True, verdicts["branchless"]
    assert "equal with NaN in the model's weights, equal on inputs" in verdicts["branchless"]["evidence"]


@pytest.mark.torch
def test_a_check_kept_as_assert_async_says_what_it_is_on_cuda(repo, tmp_path):
    """llama2.c's check on its hidden states: head raises RuntimeError, and so does the check
    kept in compiled code as `torch._assert_async`, so no exception type changes; yet on CUDA
    that assert is a device-side one, which ends the process's CUDA context, and the evidence
    said nothing of it."""
    from pt2bot.rules import fix_candidates
    from pt2bot.config import StaticConfig
    from pt2bot.static import check_paths

    found = check_paths(str(repo), ["pkg/net.py"], StaticConfig(select=("ALL",)), jobs=1)
    [f] = [f for f in found if f.rule == "PTC201" and f.line == CHECK]
    [cand] = [c for c in fix_candidates(f, NET) if any("_assert_async" in ln for ln in c.lines)]
    p = Proposal(cid="assert", cand=cand, original=NET, patched=apply_candidate(NET, cand),
                 findings=[], targets=[])
    target = {**NAN_BREAK, "model": "checked", "line": CHECK}
    [verdict] = prove(repo, tmp_path, "checked", [(p, [target])]).values()
    assert verdict["accepted"] is True, verdict
    assert verdict["evidence"].endswith(
        "compiled code raises RuntimeError where head does, by torch._assert_async (on CUDA a "
        "device-side assert, which ends the process's CUDA context)"), verdict["evidence"]


@pytest.mark.torch
def test_broken_candidates_are_no_verified_fix_with_their_reason(repo, tmp_path):
    """One that does not parse, one that hangs, one that kills the worker: each is reported,
    and the candidate after the crash still gets its proof (a second worker)."""
    items = [
        (proposal("no-parse", MEAN, MEAN, ["        m = ("]), [MEAN_BREAK]),
        (proposal("hangs", MEAN, MEAN, ["        while True: pass"]), [MEAN_BREAK]),
        (proposal("crashes", MEAN, MEAN, ["        __import__('os').abort()"]), [MEAN_BREAK]),
        (proposal("fine", BRANCH, BRANCH + 1, ["        h = torch.nan_to_num(h)"]),
         [NAN_BREAK]),
    ]
    for p, _ in items:
        p.cid = p.cand.title
    verdicts = prove(repo, tmp_path, "net", items)
    assert verdicts["no-parse"] == {**verdicts["no-parse"], "accepted": False}
    assert verdicts["no-parse"]["reason"].startswith("the patched file does not parse: SyntaxError")
    assert verdicts["hangs"]["accepted"] is False
    # beside head's own time for the same work, which tells a hang from a slow machine
    assert re.fullmatch(r"the patched model gave no result within 6 s; head's own measurement \(eager "
                        r"run, break pass[a-z ,]*\) took \d+ s here: it hangs, or compiles or runs "
                        r"slower than that", verdicts["hangs"]["reason"]), verdicts["hangs"]["reason"]
    assert verdicts["crashes"] == {"accepted": False,
                                   "reason": "the patched model crashed the proof worker (SIGABRT)"}
    assert verdicts["fine"]["accepted"] is True, verdicts["fine"]
    assert os.path.isfile(os.path.join(repo, "pkg", "net.py"))
    assert (repo / "pkg" / "net.py").read_text() == NET   # the checkout is never written


@pytest.mark.torch
def test_a_budget_that_runs_out_is_no_verified_fix(repo, tmp_path):
    p = proposal("c0", BRANCH, BRANCH + 1, ["        h = torch.nan_to_num(h)"])
    verdicts = prove(repo, tmp_path, "net", [(p, [NAN_BREAK])], budget=1)
    assert verdicts == {"c0": {"accepted": False, "reason": "the review's fix budget ran out "
                                                           "before it was tried (1 s; a larger `fixes: "
                                                           "{budget_s: ...}` in pt2bot.yml gives the "
                                                           "proof more time)"}}


@pytest.mark.torch
def test_a_budget_that_ran_out_says_where_it_went(repo, tmp_path):
    """A new user's nanochat review: torch's setting for a `.item()` was "not verified: the
    review's fix budget ran out ... (300 s)", with no trace of where the 300 s went; the setting
    alone took 11 s. The candidates of later models now say which models spent it."""
    from pt2bot.fixes import _prove

    slow = proposal("slow", TOKEN_BRANCH, TOKEN_BRANCH + 1, ["        while True: pass"])
    late = proposal("late", BRANCH, BRANCH + 1, ["        h = torch.nan_to_num(h)"])
    per_model = {"tokens": [(slow, [{**NAN_BREAK, "model": "tokens", "line": TOKEN_BRANCH}])],
                 "net": [(late, [NAN_BREAK])]}
    s = setting(repo, 12)
    _prove(s, per_model, {}, str(repo), time.monotonic() + 12, 12)
    reason = late.results["net"]["reason"]
    assert reason.startswith("the review's fix budget ran out before it was tried (12 s;"), reason
    assert re.search(r"; the budget went to `tokens` \(\d+ s, 1 candidate\)$", reason), reason
    assert slow.results["tokens"]["reason"].endswith("1 candidate)")


@pytest.mark.torch
def test_a_candidate_stopped_by_the_budget_is_not_said_to_hang(repo, tmp_path):
    """nystrom-attention, reviewed as a new user would: a NaN guard's edit whose proof (an
    inductor compile of a model that takes minutes) outlasted the 300 s budget was reported as
    "the patched model hangs". Where the budget is the tighter limit (here 20 s against the
    model's 120), a candidate stopped by it ran out of the budget; it is not known to hang."""
    slow = proposal("c0", TOKEN_BRANCH, TOKEN_BRANCH + 1, ["        while True: pass"])
    target = {**NAN_BREAK, "model": "tokens", "line": TOKEN_BRANCH}
    [verdict] = prove(repo, tmp_path, "tokens", [(slow, [target])], budget=20).values()
    assert verdict["accepted"] is False
    assert verdict["reason"] == ("the review's fix budget ran out while the patched model was "
                                 "being proven (20 s; a larger `fixes: {budget_s: ...}` in pt2bot.yml "
                                 "gives the proof more time)")


def test_the_default_budget_is_one_smoke_run_of_the_models_it_proves_on():
    """nystrom-attention's review ran out of a 300 s budget: its inductor compile alone took
    about 100 CPU s a side. Unset, the budget is head's smoke run of the models the proof runs
    on (never below 300 s); set, it is what pt2bot.yml says."""
    from pt2bot.config import Config, FixesConfig
    from pt2bot.fixes import proof_budget
    from pt2bot.results import ModelRun

    head = ResultsFile(models=(ModelRun.empty("slow", duration_s=750.25),
                               ModelRun.empty("other", duration_s=40.0),
                               ModelRun.empty("quick", duration_s=12.0)))
    assert proof_budget(Config(), head, ["slow", "other"]) == 790.2
    assert proof_budget(Config(), head, ["quick"]) == 300.0
    assert proof_budget(Config(), head, ["missing"]) == 300.0
    assert proof_budget(Config(), ResultsFile.empty(), ["slow"]) == 300.0
    assert proof_budget(Config(fixes=FixesConfig(budget_s=45.0)), head, ["slow"]) == 45.0


# --------------------------------------------------------------------------- the judge (pure)

HEAD = {"graph_count": 3, "phase_errors": {},
        "breaks": [{"gb": "GB0170", "gb_type": "Data-dependent branching", "path": "pkg/net.py",
                    "line": 12},
                   {"gb": "GB0036", "gb_type": "Dynamic shape operator", "path": "pkg/net.py",
                    "line": 14}]}
ROWS = [{"shape": {"batch": 2}, "match": True}]
EDIT = Edit(path="pkg/net.py", start_line=12, end_line=13, new_lines=1)


def test_judge_accepts_the_target_gone_and_the_rest_moved_by_the_edit():
    cand = {"graph_count": 2, "phase_errors": {}, "outputs": ROWS,
            "breaks": [{**HEAD["breaks"][1], "line": 13}]}       # line 14 moved up by one
    assert judge(HEAD, cand, [NAN_BREAK], EDIT) == {
        "accepted": True, "reason": None,
        "evidence": "GB0170 gone, 2 graphs instead of 3, outputs equal on 1 shape case"}


@pytest.mark.parametrize("cand, reason", [
    ({"breaks": [{**HEAD["breaks"][1], "line": 13}, {"gb": "GB0170", "path": "pkg/net.py",
                                                     "line": 12}], "graph_count": 3},
     "GB0170 still breaks the graph at pkg/net.py:12"),
    ({"breaks": [{**HEAD["breaks"][1], "line": 13}, {"gb": "GB0059", "path": "pkg/net.py",
                                                     "line": 40}], "graph_count": 3},
     "a new graph break: GB0059 at pkg/net.py:40"),
    ({"breaks": [{**HEAD["breaks"][1], "line": 13}], "graph_count": 4}, "4 graphs instead of 3"),
    ({"breaks": [], "graph_count": 1, "phase_errors": {"breaks": "RuntimeError: x"}},
     "the breaks pass failed on the patched model: RuntimeError: x"),
    ({"outputs": [{"shape": {"batch": 4}, "match": False, "max_abs_err": 0.5}]},
     "outputs differ from head's on shape case batch=4 (max abs error 0.5)"),
])
def test_judge_rejects(cand, reason):
    cand = {"outputs": ROWS, "phase_errors": {}, **cand}
    assert judge(HEAD, cand, [NAN_BREAK], EDIT) == {"accepted": False, "reason": reason,
                                                    "evidence": ""}


def test_judge_says_the_weights_apart_from_the_arguments():
    """llama2.c's check: values into the ids, NaN and inf into the weights; one list read as if
    the ids had been given NaN."""
    rows = [{"kind": "invalid", "pattern": p, "argument": "tokens", "hit": True, "match": True,
             "raised": False} for p in ("negative", "zeros", "large", "huge")]
    rows += [{"kind": k, "pattern": "one", "argument": "the model's weights", "hit": True, "match": True,
              "raised": True, "raised_type": "RuntimeError", "weights": True} for k in ("inf", "nan")]
    cand = {"graph_count": 2, "phase_errors": {}, "outputs": ROWS, "guards": rows, "raises": ["RuntimeError"],
            "breaks": [{**HEAD["breaks"][1], "line": 13}]}
    v = judge(HEAD, cand, [NAN_BREAK], EDIT)
    assert v["accepted"] is True, v
    assert ("equal with values a check may refuse (-1, 0, 1e3, 1e6) injected into `tokens`, and with inf and NaN in the "
            "model's weights") in v["evidence"], v["evidence"]


def test_judge_names_zero_gradients_on_the_inputs_all_alike():
    """torchnmf's silent batch: `torch.cond` runs the skipped block's graph with zeros, so on
    the inputs all 0 (which take the early return) a parameter gets zero gradients where head's
    gets none; the evidence said "gradients too" and no more."""
    cand = {"graph_count": 2, "phase_errors": {}, "outputs": ROWS,
            "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "constants": [{"of": "inputs", "value": 0.0, "match": True, "gradients": True,
                           "zeroed": ["encoder.weight"]},
                          {"of": "inputs", "value": 1.0, "match": True, "gradients": True}]}
    v = judge(HEAD, cand, [NAN_BREAK], EDIT)
    assert v["accepted"] is True
    assert ("equal on inputs all 0 and all 1, gradients too (`encoder.weight` gets zero gradients where "
            "head's get none: an optimizer with momentum or weight decay updates a parameter with a zero "
            "gradient and skips one with none)") in v["evidence"], v["evidence"]
    # said once where the shape cases' gradients already name it
    cand["gradients"] = {"match": True, "cases": 1, "shape": {"batch": 2}, "zeroed": ["encoder.weight"]}
    assert judge(HEAD, cand, [NAN_BREAK], EDIT)["evidence"].count("`encoder.weight` gets zero") == 1


def test_judge_names_the_refused_values_that_went_in():
    """A check of integer class labels gets no NaN (an int64 tensor holds none): the evidence
    lists the values injected, not every value of the kind (DiT's `LabelEmbedder`, once said
    to be equal "with values a check may refuse (-1, 0, 1e3, 1e6, NaN) injected")."""
    def rows(patterns):
        return [{"kind": "invalid", "pattern": p, "hit": True, "match": True, "raised": True}
                for p in patterns]
    base = {"graph_count": 2, "phase_errors": {}, "outputs": ROWS,
            "breaks": [{**HEAD["breaks"][1], "line": 13}]}
    labels = judge(HEAD, {**base, "guards": rows(("negative", "zeros", "large", "huge"))},
                   [NAN_BREAK], EDIT)
    assert "equal with values a check may refuse (-1, 0, 1e3, 1e6) injected" in labels["evidence"]
    floats = judge(HEAD, {**base, "guards": rows(("huge", "nan", "negative", "zeros", "large"))},
                   [NAN_BREAK], EDIT)
    assert "equal with values a check may refuse (-1, 0, 1e3, 1e6, NaN) injected" in floats["evidence"]


def test_judge_reads_the_shape_cases_that_take_an_eager_only_exit_or_enter_a_block():
    """An early exit (or a block) in eager only is shown right by the shape matrix's compiled
    runs of the shape cases on which head takes it (enters it): only those, and only where
    those runs were compared. A refusal by the break facts says so first."""
    two = [{"shape": {"batch": 2}, "match": True}, {"shape": {"batch": 3}, "match": True}]
    base = {"outputs": two, "phase_errors": {}, "graph_count": 2,
            "breaks": [{**HEAD["breaks"][1], "line": 13}], "accuracy": two,
            "guards": [{"kind": "zero", "hit": True, "match": True, "reached": True}]}
    exit_ = {**base, "exit": 13, "reached": [{"batch": 3}]}
    verdict = judge(HEAD, exit_, [NAN_BREAK], EDIT)
    assert verdict["accepted"] is True, verdict
    assert ("compiled code runs on past the early exit and still equals head's eager outputs on "
            "1 of the 2 shape cases and inputs with zeros, where head takes it") in verdict["evidence"]
    assert "runs the loop to its end" not in verdict["evidence"] and not verdict.get("caveats")
    # a `break` out of a loop: compiled code runs every iteration head's eager run skips, which
    # is said first, as what the fix does unlike head (held-out batch 40's adaptive computation
    # time: 11.7x head's time a call, NaN where a cell's state overflowed in those iterations)
    looped = judge(HEAD, {**exit_, "loop_exit": True}, [NAN_BREAK], EDIT)
    assert looped["accepted"] is True and looped["caveats"] == [
        "compiled code runs the loop to its end where head's eager run breaks out of it: more work a call, "
        "the loop's length and not its exit deciding it, and a value that overflows in the iterations head "
        "skips reaches the outputs"], looped
    failed = {**exit_, "accuracy": [two[0], {"shape": {"batch": 3}, "match": None}]}
    assert judge(HEAD, failed, [NAN_BREAK], EDIT)["reason"] == (
        "1 shape case takes the early exit at line 13, but the shape matrix's compiled runs of "
        "those cases gave nothing to compare (a run that failed, or head's own compiled outputs "
        "differ from its eager ones there), so compiled code not taking it was never compared "
        "with head on the model's own inputs")
    block = {**base, "block": 13, "reached": [{"batch": 2}, {"batch": 3}]}
    assert ("compiled code skips the block and still equals head's eager outputs on the 2 shape "
            "cases and inputs with zeros, where head runs it") in judge(HEAD, block, [NAN_BREAK],
                                                                       EDIT)["evidence"]
    # the break facts refuse before the shape cases are looked at (the candidate never got
    # as far as the runs that tell)
    still = {k: v for k, v in exit_.items() if k not in ("reached", "accuracy", "guards")}
    still["breaks"] = HEAD["breaks"]
    assert judge(HEAD, still, [NAN_BREAK], EDIT)["reason"] == (
        "GB0170 still breaks the graph at pkg/net.py:12")


def test_judge_needs_the_target_reproduced_and_no_new_recompile():
    head = {**HEAD, "recompiles": {"count": 1, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []},
        {"shape": {"b": 4}, "n": 1, "sites": [["pkg/net.py", 30]]}]}}
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 3, "breaks": HEAD["breaks"],
            "recompiles": {"count": 2, "cases": [
                {"shape": {"b": 2}, "n": 1, "sites": [["pkg/net.py", 29]]},
                {"shape": {"b": 4}, "n": 1, "sites": []}]}}
    edit = Edit(path="pkg/net.py", start_line=30, end_line=30, new_lines=1)
    target = {"kind": "recompile", "path": "pkg/net.py", "line": 30}
    assert judge(head, cand, [target], edit)["reason"] == "a new recompile on shape case b=2 (at pkg/net.py:29; 1 recompile there, head 0)"
    fewer = {**cand, "recompiles": {"count": 0, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []}, {"shape": {"b": 4}, "n": 0, "sites": []}]}}
    assert judge(head, fewer, [target], edit)["evidence"] == (
        "no recompile instead of 1, outputs equal on 1 shape case")
    elsewhere = {**target, "line": 31}
    assert judge(head, fewer, [elsewhere], edit)["reason"] == (
        "head does not recompile at pkg/net.py:31 in the proof's run (not reproduced)")


def test_judge_allows_one_size_recompile_in_a_frame_head_ran_uncompiled():
    # head's break in a loop made dynamo skip all of `forward` (line 5): no graph, no recompile;
    # the fix compiles it, and it recompiles once when the batch size first changes
    skipped = [{"function": "forward", "path": "pkg/net.py", "line": 5, "end": 20}]
    head = {**HEAD, "graph_count": 0, "eager_frames": skipped, "recompiles": {"count": 0, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []}, {"shape": {"b": 4}, "n": 0, "sites": []},
        {"shape": {"b": 8}, "n": 0, "sites": []}]}}
    size_once = {"shape": {"b": 4}, "n": 1, "sites": [["pkg/net.py", 6]],
                 "frames": [["forward", "pkg/net.py", 5]], "sizes_only": True}
    quiet = [{"shape": {"b": 2}, "n": 0, "sites": []}, {"shape": {"b": 8}, "n": 0, "sites": []}]
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 1, "eager_frames": [],
            "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "recompiles": {"count": 1, "cases": [quiet[0], size_once, quiet[1]]}}
    verdict = judge(head, cand, [NAN_BREAK], EDIT)
    assert verdict["accepted"] is True, verdict
    assert "1 recompile on shape case b=4 in `forward`, which head ran uncompiled" in verdict["evidence"]

    def refused(*cases, eager_frames=skipped):
        c = {**cand, "recompiles": {"count": len(cases), "cases": list(cases)}}
        return judge({**head, "eager_frames": eager_frames}, c, [NAN_BREAK], EDIT)["reason"]

    # a recompile for anything but a size, a frame head compiled, or the same frame again later
    assert refused(quiet[0], {**size_once, "sizes_only": False}, quiet[1]) == (
        "a new recompile on shape case b=4 (in `forward` at pkg/net.py:5: a guard other than a size failed; "
        "1 recompile there, head 0)")
    elsewhere = [{**skipped[0], "function": "helper"}]
    assert refused(quiet[0], size_once, quiet[1], eager_frames=elsewhere) == (
        "a new recompile on shape case b=4 (in `forward` at pkg/net.py:5: a size changed; 1 recompile there, head 0); "
        "2 compiles, head 0")
    assert refused(quiet[0], size_once, {**size_once, "shape": {"b": 8}}) == (
        "a new recompile on shape case b=8 (in `forward` at pkg/net.py:5: a size changed; 1 recompile there, head 0)")
    # the rest of a function after a resume: head compiled the part before, and its recompile
    resumed = [{**skipped[0], "function": "torch_dynamo_resume_in_forward_at_9"}]
    assert refused(quiet[0], size_once, quiet[1], eager_frames=resumed) == (
        "a new recompile on shape case b=4 (in `forward` at pkg/net.py:5: a size changed; 1 recompile there, head 0); "
        "2 compiles, head 0")

    # a new user's refusal listed three frames, two of them head's own recompiles, and "a size
    # changed" with no tensor named: head's frames are left out, the new one's guard quoted
    lib = ["forward", None, 209]
    theirs = ["torch_dynamo_resume_in_forward_at_219", None, 219]
    head_case = {"shape": {"b": 4}, "n": 1, "sites": [], "frames": [theirs], "sizes_only": True}
    three = {"shape": {"b": 4}, "n": 2, "sites": [], "frames": [lib, theirs], "sizes_only": True,
             "guards": [["forward", "tensor 'x_categ' size mismatch at index 0. expected 2, actual 4"],
                        [theirs[0], "tensor 'x_cont' size mismatch at index 0. expected 2, actual 4"]]}
    h2 = {**head, "graph_count": 1, "eager_frames": [],
          "recompiles": {"count": 1, "cases": [quiet[0], head_case, quiet[1]]}}
    c2 = {**cand, "recompiles": {"count": 2, "cases": [quiet[0], three, quiet[1]]}}
    assert judge(h2, c2, [NAN_BREAK], EDIT)["reason"] == (
        "a new recompile on shape case b=4 (in `forward` outside the repository (`tensor 'x_categ' size "
        "mismatch at index 0. expected 2, actual 4`): a size changed; 2 recompiles there, head 1); "
        "3 compiles, head 2")


def test_a_frame_head_compiled_recompiling_once_on_a_size_is_told_apart_by_a_third_size():
    """Held-out batch 27's trial: dropping the PR's `if unseen.any():` (whose block was a
    `torch.where` of the input) made TabTransformer's `forward`, a frame of its own after the
    library's break, take a tensor the edit computes instead of the user's marked input; it
    recompiled on batch=8, once, and the edit compiled as often as head (a graph fewer, a
    recompile more). Two sizes cannot tell once from once per size: the judge asks for a
    third (`probe`), and accepts only where those frames do not recompile on it."""
    lib = ["forward", None, 209]
    theirs = ["torch_dynamo_resume_in_forward_at_219", None, 219]
    quiet = {"shape": {"b": 2}, "n": 0, "sites": [], "frames": []}
    head = {**HEAD, "graph_count": 5, "eager_frames": [], "recompiles": {"count": 2, "cases": [
        quiet, {"shape": {"b": 8}, "n": 2, "sites": [], "frames": [theirs], "sizes_only": True}]}}
    eight = {"shape": {"b": 8}, "n": 3, "sites": [], "frames": [lib, theirs], "sizes_only": True,
             "guards": [["forward", "tensor 'x_categ' size mismatch at index 0. expected 2, actual 8"]]}
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 4, "eager_frames": [],
            "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "recompiles": {"count": 3, "cases": [quiet, eight]}}
    asked = judge(head, cand, [NAN_BREAK], EDIT)
    assert asked["accepted"] is False and asked.get("probe") is True, asked
    assert asked["reason"].startswith("a new recompile on shape case b=8 (in `forward` outside")
    once = judge(head, {**cand, "probe": {"shape": {"b": 4}, "n": 0, "frames": [], "sizes_only": False}},
                 [NAN_BREAK], EDIT)
    assert once["accepted"] is True, once
    assert ("1 recompile on shape case b=8 in `forward`, once: none on "
            "shape case b=4 after it (the first recompile on a new size of a frame whose input the "
            "edit computes; 7 compiles, head 7)") in once["evidence"]
    # again on the third size: once per size, refused, and said
    again = judge(head, {**cand, "probe": {"shape": {"b": 4}, "n": 1, "frames": [lib], "sizes_only": True,
                                           "guards": [["forward", "tensor 'x_categ' size mismatch"]]}},
                  [NAN_BREAK], EDIT)
    assert again["accepted"] is False and "probe" not in again
    assert again["reason"].endswith("; it recompiles again on shape case b=4 (in `forward` outside the "
                                    "repository (`tensor 'x_categ' size mismatch`): a size changed)"), again
    broke = judge(head, {**cand, "probe": {"shape": {"b": 4}, "error": "RuntimeError: no"}}, [NAN_BREAK], EDIT)
    assert broke["accepted"] is False and "the third size shape case b=4 raised RuntimeError: no" in broke["reason"]
    # a compile more than head's is never the trade, whatever the third size says
    costly = {**cand, "graph_count": 5, "probe": {"shape": {"b": 4}, "n": 0, "frames": []}}
    refused = judge(head, costly, [NAN_BREAK], EDIT)
    assert refused["accepted"] is False and "probe" not in refused
    # ... unless every such frame is split off by a break head has too (the library's own,
    # on its stack): a review of the edit does not count that one recompile (pt2bot/compare.py
    # `after_break`), so neither does the proof; the third size must still say once
    stack = [["pkg/m.py", 12, "forward"], [None, 209, "forward"], [None, 219, "forward"]]
    split = {**cand, "graph_count": 5, "breaks": [{**cand["breaks"][0], "stack": stack}]}
    asked = judge(head, split, [NAN_BREAK], EDIT)
    assert asked["accepted"] is False and asked.get("probe") is True, asked
    kept = judge(head, {**split, "probe": {"shape": {"b": 4}, "n": 0, "frames": []}}, [NAN_BREAK], EDIT)
    assert kept["accepted"] is True, kept
    assert "(head's too) splits off, fed what the edit computes; 8 compiles, head 7)" in kept["evidence"]
    # a frame on no kept break's stack still needs the compile paid for
    short = {**split, "breaks": [{**cand["breaks"][0], "stack": stack[:2]}],
             "probe": {"shape": {"b": 4}, "n": 0, "frames": []}}
    assert judge(head, short, [NAN_BREAK], EDIT)["reason"].endswith("; 8 compiles, head 7")
    # ... unless the recompiles say it is not the model's own frame (frame 0): only a break
    # makes another, and every break of the edit's run is head's (a frame of an installed
    # package, which no user stack reaches)
    apart = {**eight, "split": [theirs]}
    untied = judge(head, {**short, "recompiles": {"count": 3, "cases": [quiet, apart]}}, [NAN_BREAK], EDIT)
    assert untied["accepted"] is True, untied
    assert "a frame a break head has too splits off, fed what the edit computes; 8 compiles" in untied["evidence"]
    # where head recompiled the same frames (its own break's), they are not listed again: a
    # new user read nine frames for two recompiles, every one of them head's too
    both = {**head, "recompiles": {"count": 2, "cases": [
        quiet, {"shape": {"b": 8}, "n": 2, "sites": [], "frames": [lib, theirs], "sizes_only": True}]}}
    same = judge(both, {**short, "recompiles": {"count": 3, "cases": [quiet, apart]}}, [NAN_BREAK], EDIT)
    assert "1 recompile on shape case b=8 in frames head recompiles too, once: none on" in same["evidence"], same


def test_a_frame_recompiles_once_for_each_dim_that_first_changes_size():
    """Held-out batch 33's trial: the fix of a NaN guard fed unfoldNd's `forward` (a frame of
    its own, after the library's own break) a tensor the edit computes, over a matrix of batch
    and depth. Automatic dynamic recompiles such a frame once when depth first changes and once
    more when batch first does; the judge read the second as "the same frame again" and
    refused an exact fix. A third recompile with no dim newly changed is still refused."""
    lib = ["forward", None, 53]
    quiet = {"shape": {"batch": 2, "depth": 8}, "n": 0, "sites": [], "frames": []}

    def case(batch: int, depth: int, n: int) -> dict:
        return {"shape": {"batch": batch, "depth": depth}, "n": n, "sites": [], "frames": [lib] if n else [],
                "sizes_only": True, "split": [lib] if n else []}
    head = {**HEAD, "graph_count": 5, "eager_frames": [], "recompiles": {"count": 0, "cases": [
        quiet, case(2, 12, 0), case(4, 8, 0), case(4, 12, 0)]}}
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 4, "eager_frames": [],
            "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "recompiles": {"count": 2, "cases": [quiet, case(2, 12, 1), case(4, 8, 1), case(4, 12, 0)]},
            "probe": {"shape": {"batch": 6, "depth": 8}, "n": 0, "frames": []}}
    verdict = judge(head, cand, [NAN_BREAK], EDIT)
    assert verdict["accepted"] is True, verdict
    assert ("2 recompiles on shape cases batch=2, depth=12 and batch=4, depth=8 in `forward`, once for each "
            "dim that first changes size: none on shape case batch=6, depth=8 after them (the first recompile "
            "on a new size of a frame a break head has too splits off") in verdict["evidence"], verdict
    # recompiling again where no dim changed for the first time: a recompile per size
    again = {**cand, "recompiles": {"count": 3, "cases": [quiet, case(2, 12, 1), case(4, 8, 1), case(4, 12, 1)]}}
    assert judge(head, again, [NAN_BREAK], EDIT)["reason"].startswith(
        "a new recompile on shape case batch=4, depth=12 (in `forward` outside the repository")


def test_the_third_size_is_one_the_matrix_lacks_and_keeps_the_divisibility():
    from pt2bot.smoke.inputs import CaseInputs
    from pt2bot.smoke.verify import probe_shape

    def cases(*shapes):
        return [CaseInputs(dict(s), (), {}, {}, ()) for s in shapes]

    assert probe_shape(cases({"b": 2, "s": 16}, {"b": 8, "s": 16}), {}) == {"b": 4, "s": 16}
    assert probe_shape(cases({"s": 8}, {"s": 32}), {}) == {"s": 16}         # multiples of 8
    assert probe_shape(cases({"b": 2}, {"b": 4}), {}) == {"b": 6}            # none between
    assert probe_shape(cases({"b": 2}, {"b": 4}), {"bounds": {"b": {"max": 4}}}) is None
    assert probe_shape(cases({"s": 16}, {"s": 48}), {"bounds": {"s": {"multiple_of": 16}}}) == {"s": 32}
    assert probe_shape(cases({"b": 2}), {}) is None                           # nothing varies


def test_guards_come_from_the_recipe_and_from_the_replaced_text():
    assert guard_kinds((), ["if torch.isnan(h).any():", "    h = torch.nan_to_num(h)"]) == ["nan"]
    assert guard_kinds(("empty",), ["m = h[mask].mean()"]) == ["empty"]
    assert guard_kinds((), ["d = n.clamp(min=1)"]) == ["empty", "zero"]
    assert guard_kinds((), ["y = x + 1"]) == []


def test_target_keys_name_the_kind_and_place():
    assert target_key(NAN_BREAK) == "break:pkg/net.py:12:Data-dependent branching"


def test_judge_lets_export_stop_further_on_once_the_targets_failure_is_gone():
    """Export stops at its first failure: with the target's gone it may stop at the next
    problem, which head's export never reached. Still failing at the target, or failing
    inside the edit, is no fix."""
    target = {"kind": "export", "path": "pkg/net.py", "line": 30}
    head = {**HEAD, "export": {"ok": False, "kind": "data_dependent", "path": "pkg/net.py",
                               "line": 30}}
    edit = Edit(path="pkg/net.py", start_line=30, end_line=31, new_lines=4)

    def cand(line):
        return {"outputs": ROWS, "phase_errors": {}, "graph_count": 3, "breaks": HEAD["breaks"],
                "export": {"ok": False, "kind": "data_dependent", "path": "pkg/net.py",
                           "line": line}}

    got = judge(head, cand(12), [target], edit)
    assert got["accepted"] is True, got
    assert "export gets past pkg/net.py:30 and now stops at pkg/net.py:12, which head's " \
           "export never reached" in got["evidence"]
    assert judge(head, cand(30), [target], edit)["reason"] == (
        "export fails (data_dependent) at pkg/net.py:30")
    assert judge(head, cand(32), [target], edit)["accepted"] is False   # inside the edit
    # past the edit, which adds two lines: head's line, as a reader of the PR finds it
    # (flux's guidance test: "now stops at model.py:111", head's 110)
    got = judge(head, cand(40), [target], edit)
    assert "and now stops at pkg/net.py:38, which head's export never reached" in got["evidence"], got


def test_judge_compares_an_export_failure_in_the_patched_files_lines():
    """An edit above the target shifts it: the same failure one line lower is not export
    having moved on."""
    target = {"kind": "export", "path": "pkg/net.py", "line": 30}
    head = {**HEAD, "export": {"ok": False, "kind": "data_dependent", "path": "pkg/net.py",
                               "line": 30}}
    edit = Edit(path="pkg/net.py", start_line=20, end_line=20, new_lines=2)
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 3, "breaks": HEAD["breaks"],
            "export": {"ok": False, "kind": "data_dependent", "path": "pkg/net.py", "line": 31}}
    assert judge(head, cand, [target], edit)["reason"] == (
        "export fails (data_dependent) at pkg/net.py:31")


def test_judge_refuses_a_candidate_the_backend_cannot_run_even_where_head_differs():
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 2,
            "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "backend": {"backend": "inductor", "match": False, "raised": True,
                        "message": "CompilationError: boom", "head_match": False}}
    assert judge(HEAD, cand, [NAN_BREAK], EDIT)["reason"] == (
        "outputs differ from head's eager outputs under inductor (CompilationError: boom)")


def test_judge_uncovers_a_break_only_inside_the_skipped_frames_function():
    """Two classes' `forward`s in one file: the first skipped whole on head; a new break in
    the second (past the first's last line) is new, not uncovered."""
    head = {**HEAD, "eager_frames": [{"function": "forward", "path": "pkg/net.py", "line": 10,
                                      "end": 16}]}
    edit = Edit(path="pkg/net.py", start_line=12, end_line=13, new_lines=1, scope_end=16)

    def cand(line):
        return {"outputs": ROWS, "phase_errors": {}, "graph_count": 3,
                "breaks": [{**HEAD["breaks"][1], "line": 13},
                           {"gb": "GB0059", "gb_type": "print", "path": "pkg/net.py",
                            "line": line, "function": "forward"}]}

    inside = judge(head, cand(15), [NAN_BREAK], edit)
    assert inside["accepted"] is True and "uncovers GB0059 at pkg/net.py:15" in inside["evidence"]
    assert judge(head, cand(40), [NAN_BREAK], edit)["reason"] == (
        "a new graph break: GB0059 at pkg/net.py:40")


def test_an_assertion_is_not_proven_on_cuda():
    """On CUDA a failing `torch._assert_async` is a device-side assert that ends the worker's
    CUDA context; its guard run would fire it on purpose."""
    from pt2bot.smoke.verify import unprovable_on

    cand = {"lines": ["    if torch.compiler.is_compiling():",
                      "        torch._assert_async(torch.logical_not(t), 'bad')"]}
    assert unprovable_on("cuda", cand).startswith("not proven on CUDA")
    assert unprovable_on("cuda:0", cand) is not None
    assert unprovable_on("cpu", cand) is None
    assert unprovable_on("cuda", {"lines": ["    h = torch.nan_to_num(h)"]}) is None


def test_the_guard_kinds_are_one_list_in_the_recipes_and_the_proof():
    """The recipes (rules, no torch) and the proof worker (smoke) each name the guard kinds;
    the layering keeps them apart, so this keeps them the same: a kind a recipe declares is
    one the worker injects and words."""
    from pt2bot.rules.base import GUARDS
    from pt2bot.smoke.patch import GUARD_KINDS, guard_patterns
    from pt2bot.smoke.verify import GUARD_WORDS, PARAM

    # (PARAM, a parameter set past an `if`'s test, is the proof's own input: no recipe declares it)
    assert GUARDS == GUARD_KINDS == tuple(k for k in GUARD_WORDS if k != PARAM)
    # (the pairs "equal" sets come from the replaced code)
    assert all(guard_patterns(k, ("t=t0",)) for k in GUARDS)


def test_a_compiled_comparison_keeps_its_message():
    # the shape matrix's comparison of compiled with eager outputs: a NaN on one side only has
    # no finite error, so without its message the refusal read "differ (max abs error 0)"
    from pt2bot.smoke.verify import _accuracy_summary

    msg = "NaN or inf on one side only in 1 of 4 values"
    rows = _accuracy_summary({"accuracy": [{"shape": {"batch": 2}, "match": False,
                                            "max_abs_err": 0.0, "rtol": 1e-4, "message": msg}]})
    assert rows == [{"shape": {"batch": 2}, "match": False, "max_abs_err": 0.0, "message": msg}]
    cand = {"outputs": ROWS, "phase_errors": {}, "accuracy": rows}
    assert judge(HEAD, cand, [NAN_BREAK], EDIT)["reason"] == (
        f"compiled outputs differ from eager ones on shape case batch=2 ({msg})")


def test_judge_says_what_compiled_code_raises_unlike_head_as_a_caveat_and_not_a_subclass():
    """DINOv2's NaN check kept as `torch._assert_async`: compiled code raises RuntimeError
    where head raises FloatingPointError, which a caller's `except FloatingPointError` no
    longer catches: a caveat, said apart. Dynamo's TorchRuntimeError where head raises
    RuntimeError is no other type (it derives from it, so `except RuntimeError` still catches
    it), and two models read "... and TorchRuntimeError where head raises RuntimeError" beside
    one that did not, two caveats for one difference."""
    rows = [{"kind": "nan", "pattern": "one", "argument": "x", "hit": True, "match": True, "compiled": True,
             "raised": True, "raised_type": old, "compiled_raised_type": new, "compiled_raised_bases": bases}
            for old, new, bases in (("FloatingPointError", "RuntimeError", ["RuntimeError", "Exception"]),
                                    ("RuntimeError", "TorchRuntimeError",
                                     ["TorchRuntimeError", "RuntimeError", "Exception"]))]
    cand = {"graph_count": 2, "phase_errors": {}, "outputs": ROWS, "guards": rows,
            "breaks": [{**HEAD["breaks"][1], "line": 13}]}
    v = judge(HEAD, cand, [NAN_BREAK], EDIT)
    assert v["accepted"] is True, v
    said = ("compiled code raises RuntimeError where head raises FloatingPointError (on CUDA a device-side "
            "assert, which ends the process's CUDA context)")
    assert v["caveats"] == [said] and v["evidence"].endswith(", but " + said), v
    # what head and compiled code raise alike is no caveat
    rows[0].update(compiled_raised_type="FloatingPointError", compiled_raised_bases=["FloatingPointError"])
    assert "caveats" not in judge(HEAD, cand, [NAN_BREAK], EDIT)


def test_judge_does_not_hold_head_s_own_float_value_recompiles_against_an_edit():
    """dasp-pytorch's peak normaliser: head's `.item()` at line 48 passes a float across its
    break, and the frame after it recompiles on every new value. The right `torch.where` of
    line 49 was refused for "a new recompile ... `(1e-12 + ___stack2) == 0.7677...` ... 3
    recompiles there, head 2": how many such recompiles a case makes is the data's, not the
    edit's. Any other guard beyond head's stays a new recompile."""
    frame = ["torch_dynamo_resume_in_forward_at_48", "pkg/net.py", 48]
    size = "tensor 'x' size mismatch at index 0. expected 2, actual 4"

    def case(n, *guards):
        return {"shape": {"b": 4}, "n": n, "sites": [["pkg/net.py", 48]], "frames": [frame],
                "guards": [[frame[0], g] for g in guards], "sizes_only": False}
    head = {**HEAD, "recompiles": {"count": 2, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []}, case(2, "___stack2 == 0.7655948996543884", size)]}}
    cand = {"outputs": ROWS, "phase_errors": {}, "graph_count": 2, "breaks": [{**HEAD["breaks"][1], "line": 13}],
            "recompiles": {"count": 3, "cases": [
                {"shape": {"b": 2}, "n": 0, "sites": []},
                case(3, "___stack2 == 0.7655948996543884", "(1e-12 + ___stack2) == 0.7677050232897268", size)]}}
    verdict = judge(head, cand, [NAN_BREAK], EDIT)
    assert verdict["accepted"] is True, verdict
    assert ("2 recompiles on shape case b=4 on a float's value in `torch_dynamo_resume_in_forward_at_48`, as "
            "head's own code guards it there") in verdict["evidence"], verdict["evidence"]
    # a guard of another kind beyond head's is new
    more = {**cand, "recompiles": {"count": 3, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []}, case(3, "___stack2 == 0.7655948996543884", size, size)]}}
    assert judge(head, more, [NAN_BREAK], EDIT)["reason"].startswith("a new recompile on shape case b=4")
    # head's guard on that float on another shape case is head's too: on which case the value
    # recompiles is the data's and dynamo's (it makes the float dynamic after the first)
    elsewhere = {**head, "recompiles": {"count": 2, "cases": [
        {**case(1, "___stack2 == 0.7655948996543884"), "shape": {"b": 2}}, case(1, size)]}}
    assert judge(elsewhere, cand, [NAN_BREAK], EDIT)["accepted"] is True
    # and a float's value head does not guard in that frame is new
    alone = {**head, "recompiles": {"count": 1, "cases": [
        {"shape": {"b": 2}, "n": 0, "sites": []}, case(1, size)]}}
    assert judge(alone, cand, [NAN_BREAK], EDIT)["reason"].startswith("a new recompile on shape case b=4")


def test_a_block_entered_only_with_values_in_the_weights_says_so():
    """ESM-2's NaN check on its logits, fed token ids: the NaN and inf that made head enter the
    block went into the model's weights (no argument of `forward` can hold them), and the
    evidence read "entered ... by head on inputs with inf and NaN", which sent its new user
    looking for such an input."""
    from pt2bot.smoke.verify import _guard_input_words, _selected_evidence

    rows = [{"kind": "nan", "hit": True, "reached": True, "weights": True},
            {"kind": "inf", "hit": True, "reached": True, "weights": True}]
    cand = {"told": {"selected": True, "line": 133, "cases": []}, "guards": rows, "outputs": [1, 1]}
    assert _selected_evidence(cand) == ("the block at line 133 entered by no shape case, by head "
                                        "with inf and NaN in the model's weights")
    # an argument that held one is an input
    rows.append({"kind": "nan", "hit": True, "reached": True, "argument": "h"})
    assert _guard_input_words(cand, ["inf", "nan"]) == ["inputs with NaN", "inf in the model's weights"]
