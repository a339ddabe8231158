"""A model whose base did not run: what head has is compared with nothing, and the review says
so. A new user's PR added a `bonds` input to the model and to pt2bot.yml together; base's code
has no such argument, so base failed to run with head's config ("the configured inputs do not
fit forward(): got an unexpected keyword argument 'bonds'"), and the summary headlined "2 new
graph breaks" beside "—" for every base figure, never saying why (egnn-pytorch, held-out batch
35)."""
from __future__ import annotations

import cmarkgfm

from pt2bot.compare import compare_model
from pt2bot.config import Config
from pt2bot.report.summary import model_section
from pt2bot.reportdata import Report
from pt2bot.results import ModelRun
from pt2bot.verdict import judge, summary_title

WHY = "the configured inputs do not fit forward(): got an unexpected keyword argument 'bonds'"


def _brk(line: int) -> dict:
    return {"gb": "GB0124", "gb_type": "Unsupported Tensor.item() call", "path": "molprop/model.py",
            "line": line, "function": "forward", "count": 1, "in_loop": False, "user_stack": []}


def test_head_against_a_base_that_failed_is_said_to_be_compared_with_nothing():
    base = ModelRun.from_json({"name": "mol", "status": "error", "error": {"kind": "inputs", "message": WHY}})
    head = ModelRun.from_json({"name": "mol", "status": "ok", "graph_breaks": [_brk(32)],
                               "export": {"ok": False, "kind": "data_dependent", "path": "molprop/model.py",
                                          "line": 32}})
    m = compare_model("mol", base, head, renames={}, line_map=lambda p, n: n, threshold_pct=10)
    [p] = [p for p in m.problems if p["kind"] == "fixed_failure"]
    assert p["message"] == (f"failed on base ({WHY}), runs on head: what head has is compared with "
                            "nothing, each break, recompile and export failure counted as new")
    reasons = {r["code"]: r for r in judge(findings=[], models=[m], head_results=None, base_results=None,
                                           config=Config())}
    assert reasons["new_graph_breaks"]["message"].endswith("(base failed to run: compared with nothing)")
    assert reasons["export_broken"]["message"] == ("torch.export newly fails (base failed to run: compared "
                                                   "with nothing)")
    # the title says no "new" of what nothing was compared with (dasp-pytorch's "2 new graph
    # breaks" counted one that main has too)
    title = summary_title("failure", list(reasons.values()), [m], [])
    assert title == "1 graph break (base failed to run), 1 export regression (base failed to run)", title
    # the model's section says why base has no figures
    html = cmarkgfm.github_flavored_markdown_to_html("\n\n".join(model_section(m, Report(
        head="h" * 40, base="b" * 40, models=(m,))).blocks))
    assert "failed on base (the configured inputs do not fit forward(): got an unexpected keyword argument" in html
    # and base's cells say it measured nothing, graph breaks included
    assert "<td>graph breaks</td>\n<td>—</td>\n<td>1</td>" in html
    # a base that ran: nothing of it
    ok = compare_model("mol", ModelRun.from_json({"name": "mol", "status": "ok"}), head, renames={},
                       line_map=lambda p, n: n, threshold_pct=10)
    assert not any(p["kind"] == "fixed_failure" for p in ok.problems)
    assert "compared with nothing" not in str(judge(findings=[], models=[ok], head_results=None,
                                                    base_results=None, config=Config()))


def test_a_specialisation_with_no_place_names_none():
    """"dim `batch` = 2 at `?`: " (egnn-pytorch's PR 2): torch placed the specialisation in no
    line of the repository."""
    base = ModelRun.from_json({"name": "mol", "status": "ok"})
    head = ModelRun.from_json({"name": "mol", "status": "ok", "specialized": [
        {"dim": "batch", "value": 2, "path": None, "line": None, "source": None},
        # a size of a library's argument no configured dim names (dasp-pytorch's `x`): torch's
        # name for it, not "dim `None`"
        {"dim": None, "value": 4, "path": None, "line": None, "source": None, "input": "x.size()[0]"},
        {"dim": "atoms", "value": 12, "path": "molprop/model.py", "line": 30, "source": "n = x.shape[1]"}]})
    m = compare_model("mol", base, head, renames={}, line_map=lambda p, n: n, threshold_pct=10)
    text = "\n\n".join(model_section(m, Report(head="h" * 40, base="b" * 40, models=(m,))).blocks)
    assert "`?`" not in text
    assert "- dim `batch` = 2 (torch named no line of the repository)\n" in text
    assert "- `x.size()[0]` (no configured dim) = 4 (torch named no line of the repository)\n" in text
    assert "`None`" not in text
    assert "- dim `atoms` = 12 at `molprop/model.py:30`: `n = x.shape[1]`" in text


def test_a_new_break_that_leaves_nothing_to_compile_says_why_the_graphs_stay():
    """Swin's PR 3, a NaN check that raises at the end of `forward`: "graphs 1 → 1" beside
    "graph breaks 0 → 1" read as a contradiction."""
    base = ModelRun.from_json({"name": "m", "status": "ok", "graph_breaks": [], "graph_count": 1})
    head = ModelRun.from_json({"name": "m", "status": "ok", "graph_breaks": [_brk(40)], "graph_count": 1})
    m = compare_model("m", base, head, renames={}, line_map=lambda p, n: n, threshold_pct=10)
    text = "\n\n".join(model_section(m, Report(head="h" * 40, base="b" * 40, models=(m,))).blocks)
    assert ("| graphs | 1 | 1 | 0 (the new break adds no graph: the code after it compiles into none of "
            "its own, or runs eagerly) |") in text
    # where the graphs grew with the break, nothing is added
    head2 = ModelRun.from_json({"name": "m", "status": "ok", "graph_breaks": [_brk(40)], "graph_count": 2})
    m2 = compare_model("m", base, head2, renames={}, line_map=lambda p, n: n, threshold_pct=10)
    assert "adds no graph" not in "\n".join(model_section(m2, Report(head="h" * 40, base="b" * 40,
                                                                      models=(m2,))).blocks)


def test_the_title_pluralises_the_noun():
    """DETR's PR 1: "2 model failing on heads"."""
    reasons = [{"code": "fails_only_on_head", "level": "failure", "model": m, "message": "x", "count": 1}
               for m in ("a", "b")]
    reasons.append({"code": "new_graph_breaks", "level": "failure", "model": "a", "message": "y", "count": 2})
    assert summary_title("failure", reasons, [], []) == "2 models failing on head, 2 new graph breaks"
