"""A `src/` layout checked from the repository's root (pt2bot/analysis/graph.py
`Index.src_packages`): black-forest-labs/flux keeps its package in `src/flux/` with no
`src/__init__.py`, and its model imports `from flux.modules.layers import timestep_embedding`.
The tree names that module `src.flux.modules.layers`; the import named nothing of the tree, so
the helper was never compiled code and a PR's `if t.max().item() <= 1.0:` in it had no finding
(`pt2bot check` said "No findings in 31 files" from the root, one finding from `src/`)."""
from __future__ import annotations

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths

HELPERS = '''\
import torch
from torch import Tensor


def embed(t: Tensor, dim: int) -> Tensor:
    if t.max().item() <= 1.0:
        t = 1000.0 * t
    return t[:, None].expand(-1, dim)
'''

MODEL = '''\
import torch
from torch import nn

from IMPORT


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, t):
        return self.lin(CALL(t, 8))
'''


def _check(root, files: dict[str, str], paths: list[str]) -> list[tuple[str, int, str]]:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    out = check_paths(str(root), paths, StaticConfig(select=("ALL",)), jobs=1)
    return sorted((f.path, f.line, f.rule) for f in out)


@pytest.mark.parametrize("importing, call", [("flux.helpers import embed", "embed"),
                                             ("flux import helpers", "helpers.embed")])
def test_a_src_layout_s_imports_name_its_modules(tmp_path, importing, call):
    files = {"src/flux/__init__.py": "", "src/flux/helpers.py": HELPERS,
             "src/flux/model.py": MODEL.replace("IMPORT", importing).replace("CALL", call)}
    got = _check(tmp_path, files, sorted(files))
    assert ("src/flux/helpers.py", 6, "PTC101") in got, got


def test_a_package_named_src_keeps_its_name(tmp_path):
    """With `src/__init__.py`, `src` is a package its code imports by name (`from
    src.flux.helpers import embed`); a bare `flux.helpers` is then another distribution."""
    files = {"src/__init__.py": "", "src/flux/__init__.py": "", "src/flux/helpers.py": HELPERS,
             "src/flux/model.py": MODEL.replace("IMPORT", "flux.helpers import embed").replace("CALL", "embed")}
    assert ("src/flux/helpers.py", 6, "PTC101") not in _check(tmp_path, files, sorted(files))
    files["src/flux/model.py"] = MODEL.replace("IMPORT", "src.flux.helpers import embed").replace("CALL", "embed")
    assert ("src/flux/helpers.py", 6, "PTC101") in _check(tmp_path, files, sorted(files))
