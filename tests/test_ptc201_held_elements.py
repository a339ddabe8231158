"""The hint of PTC201 on an element of a tensor the module holds (the fixture
tests/fixtures/rules/ptc201_held_elements.py, checked against dynamo in test_rules_torch.py):
the values are the module's, set once, so the advice is to keep them as Python values where
they are set; `torch.where` does not fit arms that run different modules."""
from __future__ import annotations

from pathlib import Path

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

FIXTURES = Path(__file__).parent / "fixtures" / "rules"


def test_the_hint_names_the_element_and_the_held_tensor():
    found = check_paths(str(FIXTURES), ["ptc201_held_elements.py"], StaticConfig(select=("ALL",)), jobs=1)
    by_line = {f.line: f for f in found}
    mask = by_line[21]
    assert mask.rule == "PTC201" and mask.gb == "GB0170"
    assert mask.message.startswith("`if` on `is_continuous`, an element of `self.continuous_idx`, a tensor the "
                                   "module holds")
    assert "`.tolist()` in `__init__`" in mask.message and "torch.where" not in mask.message
    assert "an element of `self.keep`" in by_line[37].message
