"""The rule registry and each rule's fixture: findings must equal the inline `# PTCnnn` marks."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.errors import UserError
from pt2bot.rules import BY_CODE, RULES, rules_table_markdown, select_rules
from pt2bot.rules.base import SECTIONS
from pt2bot.static import check_paths

from pymodule import sibling_imports

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
README = Path(__file__).parent.parent / "README.md"
# `# PTC101` or `# PTC101 when `guard``: the finding's `condition` (absent: it has none)
_MARK = re.compile(r"#\s*(PTC\d{3}(?:\s*,\s*PTC\d{3})*)(?:\s+when\s+`([^`]+)`)?\s*$")


def expected_marks(path: Path) -> set[tuple[int, str]]:
    return set(expected_conditions(path))


def expected_conditions(path: Path) -> dict[tuple[int, str], str | None]:
    out = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        m = _MARK.search(line)
        if m:
            out |= {(i, c.strip()): m.group(2) for c in m.group(1).split(",")}
    return out


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("ptc*.py"))


def test_codes_unique_and_named_by_family():
    codes = [r.code for r in RULES]
    assert len(codes) == len(set(codes))
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for r in RULES:
        assert re.fullmatch(r"PTC[0-4]\d\d", r.code), r.code
        assert r.severity in ("error", "warning")


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.code)
def test_doc_has_the_four_sections(rule):
    sections = rule.doc_sections()
    for s in SECTIONS:
        assert sections.get(s), f"{rule.code}: missing or empty section {s!r}"


@pytest.mark.parametrize("rule", [r for r in RULES if r.code != "PTC000"], ids=lambda r: r.code)
def test_every_rule_has_a_fixture_with_positive_marks(rule):
    files = [f for f in fixture_files() if f.name.startswith(rule.code.lower())]
    assert files, f"no fixture for {rule.code}"
    assert any(code == rule.code for f in files for _, code in expected_marks(f))


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture_findings_match_inline_marks(path):
    findings = check_paths(str(FIXTURES), [path.name], StaticConfig(select=("ALL",)), jobs=1,
                           context=sibling_imports(path))
    got = {(f.line, f.rule) for f in findings}
    assert got == expected_marks(path)
    # the condition each finding is stated under, and none where the mark names none
    assert {(f.line, f.rule): f.condition for f in findings} == expected_conditions(path)
    for f in findings:
        rule = BY_CODE[f.rule]
        assert f.path == path.name and f.source and f.message
        assert f.gb == (f.gb or rule.gb)
        if f.gb:
            assert f.url == f"https://meta-pytorch.github.io/compile-graph-break-site/gb/{f.gb.lower()}.html"
            assert f.gb_type


def test_selection_by_prefix_and_defaults():
    assert {r.code for r in select_rules(["PTC1"])} == {r.code for r in RULES
                                                         if r.code.startswith("PTC1") and r.default}
    assert "PTC103" not in {r.code for r in select_rules()}
    assert "PTC103" in {r.code for r in select_rules(["PTC103"])}
    assert "PTC201" not in {r.code for r in select_rules(ignore=["PTC2"])}
    with pytest.raises(UserError, match="PTC9"):
        select_rules(["PTC9"])


def test_readme_rules_table_is_generated():
    text = README.read_text()
    m = re.search(r"<!-- rules-table:start -->\n(.*?)<!-- rules-table:end -->", text, re.S)
    assert m, "README lacks the rules-table markers"
    assert m.group(1) == rules_table_markdown()


def test_cli_rules_prints_doc_list_and_json(capsys):
    import json

    from pt2bot.cli import main

    assert main(["rules", "PTC101"]) == 0
    out = capsys.readouterr().out
    assert "## What it does" in out and "GB0124" in out
    assert main(["rules"]) == 0
    out = capsys.readouterr().out
    assert all(r.code in out for r in RULES)
    assert main(["rules", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [d["code"] for d in data] == [r.code for r in RULES]
    assert main(["rules", "PTC999"]) == 2


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)


def test_package_directory_as_root_resolves_its_own_absolute_imports(tmp_path):
    # `pt2bot check site-packages/kornia`: module names lack `kornia.`, its imports carry it
    # (without that, kornia's augmentations were not recognised as modules, their breaks missed)
    pkg = tmp_path / "mypkg"
    _write(pkg, {
        "__init__.py": "from mypkg.model import Net\n",
        "base.py": "import torch.nn as nn\n\n\nclass Base(nn.Module):\n"
                   "    def forward(self, x):\n        return self.step(x)\n\n"
                   "    def step(self, x):\n        return x\n",
        "model.py": "from mypkg.base import Base\n\n\nclass Net(Base):\n"
                    "    def step(self, x):\n        return x * x.sum().item()\n",
    })
    findings = check_paths(str(pkg), [], StaticConfig(select=("ALL",)), jobs=1)
    assert [(f.path, f.line, f.rule) for f in findings] == [("model.py", 6, "PTC101")]


def test_tensor_attributes_are_not_sizes_or_tensors_elsewhere(tmp_path):
    # a buffer's own shape is fixed per model (no PTC301/PTC303), its truth value is a tensor's
    _write(tmp_path, {"m.py": (
        "import torch\nimport torch.nn as nn\n\n\nclass M(nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n"
        "        self.register_buffer('table', torch.zeros(4, 8))\n"
        "        self.register_buffer('unset', None)\n\n"
        "    def forward(self, x):\n"
        "        for i in range(self.table.shape[0]):\n            x = x + i\n"
        "        if self.table.size(0) > 2:\n            x = x * 2\n"
        "        if self.unset is not None:\n            x = x + self.unset\n"
        "        if self.table.any():\n            x = x - 1\n"
        "        return x\n")})
    findings = check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
    assert [(f.line, f.rule) for f in findings] == [(18, "PTC201")]


def test_an_int_that_bounds_a_slice_gets_advice_for_a_slice_not_keep_a_tensor():
    """A new user's trim-padding PR (`longest = int(mask.sum(1).max())`, then
    `tokens[:, :longest]`) was told "keep a tensor, e.g. `t.to(torch.int64)`", which cannot help:
    the sliced shape still follows the data."""
    findings = check_paths(str(FIXTURES), ["ptc104_slice_bound.py", "ptc104_tensor_to_scalar.py"],
                           StaticConfig(select=("PTC104",)), jobs=1)
    trim = next(f for f in findings if f.function == "PosTrimPadding.forward")
    assert ("`longest` then bounds a slice (line 42: `tokens[:, :longest]`), so a tensor cannot stand "
            "in") in trim.message
    assert "keep a tensor" not in trim.message and "mask what the slice drops" in trim.message
    plain = next(f for f in findings if f.path == "ptc104_tensor_to_scalar.py" and "n = int(x.sum())" in f.source)
    assert "keep a tensor, e.g. `t.to(torch.int64)`" in plain.message


def test_the_masked_augmented_assignment_hint_broadcasts_a_mask_over_leading_dims(tmp_path):
    """SAM's `point_embedding[labels == -1] += self.not_a_point_embed.weight`: the mask covers
    [B, N] of a [B, N, C] tensor, and `torch.where(mask, x + v, x)` as the hint wrote it raised
    (or broadcast to [B, B, C] where N was 1)."""
    (tmp_path / "m.py").write_text(
        "import torch\nfrom torch import nn\n\n\nclass E(nn.Module):\n    def forward(self, w):\n"
        "        point_embedding = torch.zeros(3, 4, 8)\n"
        "        labels = torch.randint(-1, 2, (3, 4))\n"
        "        point_embedding[labels == -1] += w\n"
        "        return point_embedding\n")
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC304"]
    assert f.line == 9 and "`mask[..., None]`" in f.message


def test_the_item_hint_keeps_the_number_s_lack_of_gradient(tmp_path):
    """"drop `.item()`" taken literally changed every input gradient of a new user's min-max
    normalisation (`lo, hi = x.min().item(), x.max().item()`; 70 of 160 results): the number
    carried none, the tensor does; the hint says `.detach()`."""
    (tmp_path / "m.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n"
                                   "    lo = x.min().item()\n    return x - lo\n")
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC101"]
    assert "keep it a tensor (`.detach()` where `.item()` was: the number carried no gradient" in f.message
    assert "math." not in f.message


def test_the_item_hint_names_torchs_function_for_maths(tmp_path):
    """dasp-pytorch's peak level kept for a log, `math.log10(peak.item() + 1e-12)`: "`.detach()`
    where `.item()` was" alone still breaks the graph, math converting the tensor back to a
    number; `torch.log10` keeps it a tensor."""
    (tmp_path / "m.py").write_text("import math\nimport torch\n\n\n@torch.compile\ndef f(x):\n"
                                   "    db = 20.0 * math.log10(x.abs().amax().item() + 1e-12)\n    return x, db\n")
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC101"]
    assert ("a tensor kept without `.detach()` would pass gradients back to the input; `torch.log10` for `math.log10`, which takes Python "
            "numbers only: given the tensor, it converts it to one itself, the same break)") in f.message


def test_the_item_hint_in_a_test_says_to_select_not_to_drop(tmp_path):
    """CLIP's `if logit_scale.item() > 100:`: "drop `.item()`" leaves `if logit_scale > 100:`,
    which still breaks (GB0170); in a test the hint is `torch.where`."""
    (tmp_path / "m.py").write_text("import torch\n\n\n@torch.compile\ndef f(x, s):\n"
                                   "    if s.item() > 100:\n        s = s.clamp(max=100)\n    return x * s\n")
    [f] = [f for f in check_paths(str(tmp_path), ["m.py"], StaticConfig(select=("ALL",)), jobs=1)
           if f.rule == "PTC101"]
    assert "select with `torch.where(cond, a, b)` instead of branching" in f.message
    assert "`.detach()` where" not in f.message
