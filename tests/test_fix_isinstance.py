"""PTC114's fix: `isinstance(x, (A, (B, C)))` with the inner tuples' parentheses removed. Python
flattens nested tuples of types itself, so the test is the same and the edit is safe by
construction (`pt2bot check --diff/--fix` applies it unrun); dynamo, which raises on the nested
form and runs the whole function in eager, traces the flat one (the rule's fixture,
tests/fixtures/rules/ptc114_isinstance_nested.py, is checked against torch)."""
from __future__ import annotations

import numbers

import pytest

from pt2bot.cli import main
from pt2bot.config import StaticConfig
from pt2bot.rules import apply_candidate, fix_candidates
from pt2bot.static import check_paths

SRC = """\
import numbers

import torch
from torch import nn


def parse(shear: list, size: int):
    if not isinstance(shear, (numbers.Number, (list, tuple))):
        raise TypeError("shear")
    kinds = (
        int,  # a count
        (float, (complex,)),  # the others
    )
    if isinstance(size, (bool, (int,),)) or isinstance(size, kinds):
        return shear
    return [isinstance(shear, (
        dict,
        (set, frozenset),   # unordered
    ))]


class M(nn.Module):
    def forward(self, x):
        return x * len(parse([0.5, 0.0], 3))
"""


def _fixed(tmp_path) -> tuple[list, str]:
    (tmp_path / "m.py").write_text(SRC)
    found = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
             if f.rule == "PTC114"]
    text = SRC
    for f in sorted(found, key=lambda f: -f.line):   # bottom-up: each edit's lines still the original's
        [c] = fix_candidates(f, SRC)
        assert c.safe and c.title == "flatten the tuple of types (the same test)"
        text = apply_candidate(text, c)
    return found, text


def test_the_nested_tuples_are_flattened_in_place(tmp_path):
    found, text = _fixed(tmp_path)
    # `kinds` is a name: what it holds is not written in the call, and is not flagged
    assert sorted(f.line for f in found) == [8, 14, 16]
    assert "    if not isinstance(shear, (numbers.Number, list, tuple)):\n" in text
    assert "    if isinstance(size, (bool, int,)) or isinstance(size, kinds):\n" in text
    # across lines, comments and indentation kept
    assert ("    return [isinstance(shear, (\n        dict,\n        set, frozenset,   # unordered\n    ))]\n"
            in text)


@pytest.mark.parametrize("value", [0.5, 3, True, [1.0], (1, 2), {"a": 1}, {1}, frozenset(), "s", None, 1j])
def test_the_flat_test_is_the_same_test(tmp_path, value):
    _found, text = _fixed(tmp_path)
    before, after = {}, {}
    exec(compile(SRC.split("\n\nclass M")[0], "before", "exec"), before)
    exec(compile(text.split("\n\nclass M")[0], "after", "exec"), after)

    def outcome(ns):
        try:
            return ("value", ns["parse"](value, value))
        except TypeError as e:
            return ("raised", str(e))
    assert outcome(before) == outcome(after)


def test_check_fix_applies_it_unrun(tmp_path, capsys, monkeypatch):
    (tmp_path / "m.py").write_text(SRC)
    monkeypatch.chdir(tmp_path)
    rc = main(["check", "--no-cache", "--select", "PTC114", "m.py", "--fix"])
    _out, err = capsys.readouterr()
    assert rc == 0, err
    assert "isinstance(shear, (numbers.Number, list, tuple))" in (tmp_path / "m.py").read_text()
    assert "were not run" in err
