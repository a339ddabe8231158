"""The text scan that picks the files a directory check parses (pt2bot/static/scan.py).

Each tree defines its nn.Modules in a way the scan has to follow through files that never
import torch. The check of the directory (only what the scan picks is parsed up front) must
give the same findings as the check with every file named (all parsed), and the files the
scan leaves out must really be the ones that cannot matter."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pt2bot.config import StaticConfig
from pt2bot.static import check_paths, discover_files
from pt2bot.static.files import Stats
from pt2bot.static.scan import files_to_parse, may_name_module, scan_file

ITEM = "    def forward(self, x):\n        return x.sum().item()\n"

TREES = {
    # a base from a file without torch, through two files that never import torch
    "chain": {"pkg/__init__.py": "",
              "pkg/a.py": "import torch.nn as nn\nclass A(nn.Module):\n    pass\n",
              "pkg/b.py": "from pkg.a import A\nclass B(A):\n    pass\n",
              "pkg/c.py": "from pkg.b import B\nclass C(B):\n" + ITEM,
              "pkg/conf.py": "class Conf(object):\n    def f(self):\n        return 1\n"},
    # the base renamed on import, here and in a package that re-exports it
    "alias": {"pkg/__init__.py": "from pkg.a import A as Base\n",
              "pkg/a.py": "from torch import nn\nclass A(nn.Module):\n    pass\n",
              "pkg/c.py": "from pkg.a import A as Parent\nclass C(Parent):\n" + ITEM,
              "pkg/d.py": "from pkg import Base\nclass D(Base):\n" + ITEM},
    # torch's class re-exported by the tree (kornia's `from kornia.core import Module`)
    "reexport": {"pkg/__init__.py": "",
                 "pkg/core.py": "from torch.nn import Module\n",
                 "pkg/c.py": "from pkg.core import Module\nclass C(Module):\n" + ITEM},
    # `import torch.nn as tnn`, a star import, a comment inside the bases
    "spellings": {"pkg/__init__.py": "from pkg.layers import *\n",
                  "pkg/layers.py": "import torch.nn as tnn\nclass Block(tnn.Module):\n    pass\n",
                  "pkg/c.py": "from pkg import Block\nclass C(Block):\n" + ITEM,
                  "pkg/d.py": "from pkg import layers\nclass D(  # see below()\n    layers.Block):\n" + ITEM},
    # a subclass without a forward of its own, in a file without torch: the inherited forward
    # calls self.hook(), which the subclass overrides (virtual dispatch)
    "override": {"pkg/__init__.py": "",
                 "pkg/base.py": "import torch.nn as nn\nclass Base(nn.Module):\n"
                                "    def forward(self, x):\n        return self.hook(x)\n"
                                "    def hook(self, x):\n        return x\n",
                 "pkg/sub.py": "from pkg.base import Base\nclass Sub(Base):\n"
                               "    def hook(self, x):\n        return x.tolist()\n"},
    # the tree is the inside of package `mypkg` (`pt2bot check site-packages/mypkg`): its
    # absolute imports name `mypkg`, which only the top-level __init__.py (never parsed) tells
    "inside": {"__init__.py": "",
               "layers.py": "import torch.nn as nn\nclass Block(nn.Module):\n    pass\n",
               "model.py": "from mypkg.layers import Block\nclass M(Block):\n" + ITEM,
               "head.py": "from mypkg.layers import Block\nclass H(Block):\n" + ITEM},
    # a non-ASCII class name (bytes patterns would stop at its first non-ASCII byte)
    "unicode": {"pkg/__init__.py": "",
                "pkg/a.py": "import torch.nn as nn\nclass Bloqu\u00e9(nn.Module):\n    pass\n",
                "pkg/c.py": "from pkg.a import Bloqu\u00e9\nclass C(Bloqu\u00e9):\n" + ITEM},
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")


def rows(fs) -> list[tuple]:
    return sorted((f.path, f.line, f.rule, f.message, f.condition) for f in fs)


@pytest.mark.parametrize("name", sorted(TREES))
def test_a_directory_check_finds_what_the_check_of_every_file_finds(tmp_path, name):
    write(tmp_path, TREES[name])
    cfg = StaticConfig(select=("ALL",))
    stats = Stats()
    scanned = check_paths(str(tmp_path), [], cfg, jobs=1, stats=stats)
    every = check_paths(str(tmp_path), sorted(TREES[name]), cfg, jobs=1)
    assert scanned and rows(scanned) == rows(every)
    assert stats.files == len(TREES[name])


def test_the_scan_leaves_out_what_no_module_needs(tmp_path):
    write(tmp_path, TREES["chain"])
    files = discover_files(str(tmp_path), ["."])
    scans = {rel: scan_file((tmp_path / rel).read_bytes(), False) for rel in files}
    first, names = files_to_parse(scans)
    assert first == {"pkg/a.py", "pkg/b.py", "pkg/c.py"}       # not conf.py, not __init__.py
    assert {"A", "B", "C", "nn", "torch"} <= names and "Conf" not in names
    assert may_name_module("pkg.b.B", names) and may_name_module("torch.nn.Linear", names)
    assert not may_name_module("pkg.conf.Conf", names)


def test_a_file_that_may_compile_is_parsed_even_without_a_class(tmp_path):
    write(tmp_path, {"run.py": "import torch\n\ndef f(x):\n    return x\n\ng = torch.compile(f, dynamic=False)\n",
                     "notes.py": "import re\nPAT = re.compile('x')\n"})
    stats = Stats()
    fs = check_paths(str(tmp_path), [], StaticConfig(select=("ALL",)), jobs=1, stats=stats)
    assert {f.path for f in fs} == {"run.py"} and (stats.parsed, stats.unread) == (1, 1)
