"""pt2bot.smoke.graph_breaks: break text → GB id, type, hints, user frames (no torch import)."""
from __future__ import annotations

import os

import pytest

from pt2bot import gb as registry
from pt2bot.smoke import graph_breaks as gb

HERE = os.path.dirname(os.path.abspath(__file__))
# A real `dynamo_graph_break_reason` payload (torch 2.13; paths rewritten): a print() inside
# a layer called in a for loop, so the message chains GB0059 then GB7000.
LOOP_PAYLOAD = open(os.path.join(HERE, "fixtures", "models", "graph_break_loop.txt"),
                    encoding="utf-8").read()


def test_chained_loop_break_root_cause_and_loop_flag():
    p = gb.parse_break(LOOP_PAYLOAD)
    assert p.gb == "GB0059"
    assert p.gb_type == "Failed to trace builtin operator"
    assert p.in_loop is True
    assert [s.gb for s in p.sections] == ["GB0059", "GB7000"]
    assert p.url == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"
    assert p.header_file == "/repo/pkg/m.py" and p.header_line == 10
    assert p.hints and p.hints[0].startswith("Avoid calling builtin `print`")
    assert "Hint:" not in p.reason and "Developer debug context" not in p.reason
    assert "print" in p.explanation


def test_user_frames_with_source_lines():
    frames = gb.parse_break(LOOP_PAYLOAD).frames
    assert (frames[0].file, frames[0].line, frames[0].function) == ("/repo/run.py", 7, "<module>")
    last = frames[-1]
    assert (last.file, last.line, last.function, last.source) == (
        "/repo/pkg/m.py", 10, "forward", 'print("hi")')
    # the caret lines under a frame are not taken for source
    assert all(not set(f.source) <= set("^~ ") or not f.source for f in frames)


def test_registry_lookup_and_reverse_lookup():
    e = gb.lookup("GB0124")
    assert e is not None
    assert e.gb_type == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert gb.gb_for_type(e.gb_type) == "GB0124"
    assert gb.lookup("GB7000").gb_type == "graph break in loop"
    assert len(registry.load_registry()) > 400


def test_message_without_url_falls_back_to_registry_type():
    text = ("Graph break in user code at /r/a.py:3\nGraph Break Reason: "
            "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
            "  Explanation: nope\n")
    p = gb.parse_break(text)
    assert p.gb_type == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert p.gb == "GB0124"


def _clear_caches():
    registry._raw.cache_clear()
    registry.load_registry.cache_clear()
    registry.types_index.cache_clear()


def test_torch_without_registry_uses_the_vendored_copy(monkeypatch):
    monkeypatch.setattr(registry, "installed_registry_path", lambda: None)
    assert registry.registry_path(installed=True) == registry.VENDORED
    assert gb.lookup("GB0124").gb_type.startswith("Unsupported Tensor.item()")


def test_degrades_without_registry(monkeypatch, tmp_path):
    # An older torch and no vendored copy: the URL still gives the id, the text the type.
    monkeypatch.setattr(registry, "installed_registry_path", lambda: None)
    monkeypatch.setattr(registry, "VENDORED", str(tmp_path / "missing.json"))
    _clear_caches()
    try:
        assert registry.load_registry() == {}
        p = gb.parse_break(LOOP_PAYLOAD)
        assert p.gb == "GB0059" and p.gb_type == "Failed to trace builtin operator"
        bare = gb.parse_break("Graph Break Reason: Some new break type\n  Explanation: x\n")
        assert bare.gb is None and bare.gb_type == "Some new break type" and bare.url is None
    finally:
        _clear_caches()


def test_vendored_registry_matches_the_installed_torch():
    # tools/vendor_gb_registry.py keeps the copy; a torch upgrade without re-vendoring shows here
    import json
    installed = registry.installed_registry_path()
    if installed is None:
        pytest.skip("no torch installed")
    with open(installed, encoding="utf-8") as fh:
        ids = set(json.load(fh))
    assert len(ids & set(registry.load_registry())) > 400


def test_classify_exception_uses_url_then_attribute_then_text():
    class Unsupported(Exception):
        gb_type = "Failed to trace builtin operator"

    e = Unsupported("x\n For more details ... https://meta-pytorch.github.io/"
                    "compile-graph-break-site/gb/gb0059.html\n ... gb/gb7000.html")
    assert gb.classify_exception(e)[0] == "GB0059"
    ids = gb.classify_exception(Unsupported("no url here"))
    assert ids[1] == "Failed to trace builtin operator"
    assert gb.classify_exception(ValueError(""))[1] == "ValueError"


def test_the_page_url_has_one_spelling_that_every_reader_matches():
    # pt2bot/gb.py spells the page URL once: the smoke run finds ids in dynamo's messages by
    # it, and the publisher keeps only links to it live. Changing the URL there changes both.
    from pt2bot.report.escape import ZWSP, inert_markdown

    page = registry.url("GB0124")
    assert page == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert gb.gb_ids(f"see {page} and {registry.url('GB7000').upper()}") == ["GB0124", "GB7000"]
    assert gb.gb_ids("compile-graph-break-site/gb/gb0059.html on another host") == ["GB0059"]
    assert gb.gb_ids("compile-graph-break-site/gb/gbX059.html") == []
    link = f"[GB0124]({page})"
    assert inert_markdown(link) == link                                  # ours: stays live
    for other in (f"[GB0059]({page})", "[GB0124](https://meta-pytorch.github.io/x/gb0124.html)"):
        assert ZWSP in inert_markdown(other)                             # not ours: inert


def test_corrupt_registry_is_empty_not_a_crash(tmp_path):
    bad = tmp_path / "graph_break_registry.json"
    bad.write_text("{not json")
    assert registry.load_registry(str(bad)) == {}


# A real payload (torch 2.13; paths rewritten): `g` branches on an `.item()` that
# `capture_scalar_outputs` captured, and is reached through `h(x, *[s])`; dynamo logs the
# caller's instruction first, then a `UserError` with no GB id and no Explanation line.
NESTED_GUARD_PAYLOAD = open(os.path.join(HERE, "fixtures", "models", "graph_break_nested_guard.txt"),
                            encoding="utf-8").read()


def test_a_nested_data_dependent_guard_is_named_by_its_cause_not_by_the_call():
    p = gb.parse_break(NESTED_GUARD_PAYLOAD)
    assert p.gb is None  # torch gives this error no registry id
    assert p.gb_type == "Could not guard on data-dependent expression"
    assert p.explanation == "the guard `zuf0 <= 0.0` from `if s <= 0.0:`"
    assert p.hints == ("Consider annotating your code using torch._check*()",)
    assert p.header_line == 4
    assert not p.reason.startswith("Encountered graph break")
    assert p.frames[-1].source == "if s <= 0.0:"


def test_a_nested_unsupported_keeps_its_own_type():
    # the same wrapper over an `Unsupported` (torch 2.13's text for an `.item()` in a callee)
    text = ("Graph break in user code at /r/m.py:3\nGraph Break Reason: Encountered graph break "
            "when attempting to trace CALL: a function call, e.g. f(x, y):\n\n"
            "Unsupported Tensor.item() call with capture_scalar_outputs=False\n"
            "  Explanation: Dynamo does not support tracing `Tensor.item()` with "
            "config.capture_scalar_outputs=False.\n\n For more details about this graph break, "
            "please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html\n")
    p = gb.parse_break(text)
    assert (p.gb, p.gb_type) == ("GB0124", "Unsupported Tensor.item() call with capture_scalar_outputs=False")
    assert p.reason.splitlines()[0] == "Unsupported Tensor.item() call with capture_scalar_outputs=False"


def test_an_integer_dynamo_cannot_specialise_is_named_too():
    # torch 2.13's other words for the same error, where the expression is an integer (a list
    # index, a count): pytorch-metric-learning's `torch.where(ref_labels == label)[0]` with
    # `capture_dynamic_output_shape_ops` (a refused setting read "Consider annotating your code
    # using torch._check*()" as the break's type)
    text = ("Graph break in user code at /r/a.py:147\nGraph Break Reason: Encountered graph break when "
            "attempting to trace CALL: a function call, e.g. f(x, y):\n\nConsider annotating your code "
            "using torch._check*(). Could not extract specialized integer from data-dependent expression "
            "u1 (unhinted: u1).  (Size-like symbols: u1)\n\n\nCaused by: p_inds = torch.where(ref_labels == "
            "label)[0]  # mp/x.py:149 in get (_dynamo/variables/lists.py:174 in getitem_const)\n")
    p = gb.parse_break(text)
    assert p.gb_type == "Could not extract specialized integer from data-dependent expression"
    assert p.explanation == "the integer `u1` from `p_inds = torch.where(ref_labels == label)[0]`"


def test_the_fundamental_boilerplate_is_no_hint():
    """torch adds "This graph break is fundamental - it is unlikely that Dynamo will ever be
    able to trace through your code" under a data-dependent branch: no advice, and untrue for
    a NaN check kept as `torch._assert_async` (openai/guided-diffusion's review relayed it
    under advice that works). torch's own advice beside it stays; the registry's too."""
    text = ("Data-dependent branching\n"
            "  Explanation: Detected data-dependent branching (e.g. `if my_tensor.sum() > 0:`).\n"
            "  Hint: This graph break is fundamental - it is unlikely that Dynamo will ever be able "
            "to trace through your code. Consider finding a workaround.\n"
            "  Hint: Use `torch.cond` to express dynamic control flow.\n\n"
            "  Developer debug context: attempted to jump with TensorVariable()\n\n"
            " For more details about this graph break, please visit: "
            "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html\n")
    p = gb.parse_break(text)
    assert p.gb == "GB0170"
    assert p.hints == ("Use `torch.cond` to express dynamic control flow.",)
    assert not any(h.startswith("This graph break is fundamental")
                   for entry in registry.load_registry().values() for h in entry.hints)
