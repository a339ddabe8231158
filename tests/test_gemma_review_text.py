"""What a new user's review of google/gemma_pytorch read that was not so (no torch needed):

- two ⚠️ lines for one pinned size, "a dim is declared dynamic and now specialised to 4 at
  gemma/model.py:329" beside "seq is declared dynamic and now specialised to 4 at
  gemma/model.py:329": the first is `kv_write_indices`, the positions passed on inside forward,
  which no configured dim names and the user declared nothing of;
- "head raised None and RuntimeError before the check": a run whose exception type was not
  recorded, said as the word None;
- an export phase that crashed ("not measured: export: SyntaxError") where torch exported the
  decoder and then could not make the program a module: torch 2.13 writes its guard on a dict
  input keyed by an enum, `freqs_cis[<AttentionType.GLOBAL: 1>].size()[0]`, as code that does
  not parse.
"""
from __future__ import annotations

from pt2bot.config import Config
from pt2bot.reportdata import Delta, ModelDelta
from pt2bot.smoke.export import run_exported
from pt2bot.smoke.inputs import CaseInputs
from pt2bot.smoke.verify import _injected_words
from pt2bot.verdict import judge


def _pinned(dim, value=4, line=329):
    return {"dim": dim, "value": value, "path": "gemma/model.py", "line": line,
            "caused_by": {"path": "gemma/model.py", "line": 507}}


def test_one_dim_pinned_at_several_lines_by_one_break_is_one_warning():
    m = ModelDelta(name="gemma2_lm", delta=Delta(new_specialized=(
        _pinned("batch", 2, 62), _pinned("batch", 2, 70), _pinned("batch", 2, 76))))
    [r] = [r for r in judge(findings=[], models=[m], head_results=None, base_results=None, config=Config())
           if r["code"] == "new_specialized"]
    assert r["message"] == (
        "batch is declared dynamic and now specialised to 2 at gemma/model.py:62, gemma/model.py:70 and "
        "gemma/model.py:76: `torch._dynamo.mark_dynamic` on it raises (follows from the new break at "
        "gemma/model.py:507)")
    assert r["lines"] == [{"path": "gemma/model.py", "line": n} for n in (62, 70, 76)]


def test_a_size_no_dim_names_pinned_beside_a_named_one_is_said_once():
    m = ModelDelta(name="gemma2_lm", delta=Delta(new_specialized=(
        _pinned(None), _pinned("seq"), _pinned("batch", 2, 62), _pinned(None, 7, 99))))
    said = [r["message"] for r in judge(findings=[], models=[m], head_results=None, base_results=None,
                                        config=Config()) if r["code"] == "new_specialized"]
    assert said == [
        "seq is declared dynamic and now specialised to 4 at gemma/model.py:329: `torch._dynamo.mark_dynamic` "
        "on it raises (follows from the new break at gemma/model.py:507)",
        "batch is declared dynamic and now specialised to 2 at gemma/model.py:62: `torch._dynamo.mark_dynamic` "
        "on it raises (follows from the new break at gemma/model.py:507)",
        # alone at its line, an unnamed one is still said
        "a dim is declared dynamic and now specialised to 7 at gemma/model.py:99: `torch._dynamo.mark_dynamic` "
        "on it raises (follows from the new break at gemma/model.py:507)"]


def test_an_exception_of_no_recorded_type_is_not_said_as_none():
    hit = [{"kind": "invalid", "pattern": "neg", "raised": True, "raised_type": None},
           {"kind": "invalid", "pattern": "nan", "raised": True, "raised_type": "ValueError"},
           {"kind": "invalid", "pattern": "big", "raised": True, "raised_type": "RuntimeError"}]
    said = _injected_words("invalid", hit, refused=True, raises={"ValueError"})
    assert "None" not in said, said
    assert "head raised RuntimeError before the check" in said, said
    only = _injected_words("invalid", hit[:2], refused=True, raises={"ValueError"})
    assert "head raised an error before the check" in only, only


def test_a_program_torch_cannot_make_a_module_is_said_for_every_case():
    class Program:
        def module(self):
            compile("freqs_cis[<AttentionType.GLOBAL: 1>].size()[0] == 4", "<unknown>", "eval")

    cases = [CaseInputs({"batch": b}, (), {}, {}, ()) for b in (2, 3)]
    rows = run_exported(Program(), cases, [None, None], None)
    assert [r["shape"] for r in rows] == [{"batch": 2}, {"batch": 3}]
    assert all(r["match"] is False for r in rows)
    assert rows[0]["error"].startswith("the exported program cannot be run: torch's `ep.module()` raised "
                                       "SyntaxError: invalid syntax"), rows[0]


def test_the_advice_says_the_program_cannot_run_not_that_cases_take_another_path():
    from pt2bot.smoke import advice

    error = "the exported program cannot be run: torch's `ep.module()` raised SyntaxError: invalid syntax"
    res = {"cases": [{"shape": {"batch": b}, "match": False, "error": error} for b in (2, 3)], "notes": []}
    advice._note_refused_cases(res, {})
    assert res["notes"] == [f"the advised spec exports, but {error}"]
    # a program that ran and refused a case: that case takes another path than the example's
    res = {"cases": [{"shape": {"batch": 2}, "match": True},
                     {"shape": {"batch": 3}, "match": False, "error": "Guard failed: x.size()[0] == 2"}],
           "notes": []}
    advice._note_refused_cases(res, {})
    assert res["notes"] == ["the advised spec holds 1 of the matrix's 2 cases: export follows the example's "
                            "path, and (batch=3) take another (torch: Guard failed: x.size()[0] == 2)"]
