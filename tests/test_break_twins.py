"""One break in a package's layer, called from a model's loop over its layers, is one site at
the model's line (pt2bot/smoke/breaks.py `_fold_package_twins`). dynamo logs it from the
model's line that calls into the package (`inside`) and again from the package's frame alone
(`library`, no line of the repository); a new user's review of egnn-pytorch read one `.item()`
as "2 new graph breaks", one of them with no line, and the frame run eagerly unnamed."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.torch

LIBRARY = """\
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, adj):
        k = int(adj.float().sum(-1).max().item())
        return self.lin(x) * k
"""
MODEL = """\
import torch
from twinlib import Layer


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer(), Layer()])

    def forward(self, x, adj):
        for layer in self.layers:
            x = layer(x, adj)
        return x
"""


def test_a_package_break_under_the_models_loop_is_one_site_at_the_models_line(tmp_path, monkeypatch):
    from pt2bot.smoke.worker import measure
    from test_worker import spec

    lib = tmp_path / "venv" / "lib" / "site-packages"     # an installed package, as pip puts it
    lib.mkdir(parents=True)
    (lib / "twinlib.py").write_text(LIBRARY)
    (tmp_path / "repo" / "pkg_twin").mkdir(parents=True)
    (tmp_path / "repo" / "pkg_twin" / "__init__.py").write_text("")
    (tmp_path / "repo" / "pkg_twin" / "m.py").write_text(MODEL)
    monkeypatch.syspath_prepend(str(lib))
    s = spec("m", "pkg_twin.m:Net", phases=("breaks",), shapes={"batch": [2]},
             inputs=[{"name": "x", "shape": ["batch", 4]}, {"name": "adj", "shape": ["batch", 4], "dtype": "bool"}])
    s["repo_root"] = str(tmp_path / "repo")
    [b] = measure(s)["graph_breaks"]
    assert (b["gb"], b["path"], b["line"], b["inside"]) == ("GB0124", "pkg_twin/m.py", 12, "twinlib.py:10")
    assert b["count"] == 2 and b["in_loop"] is True
    # the frame run eagerly is the model's `forward`, whose loop holds the call
    assert b["loop_frame"] == {"path": "pkg_twin/m.py", "line": 11, "function": "forward"}
