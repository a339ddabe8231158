from __future__ import annotations

import textwrap

import pytest
from gitrepo import GitRepo

from pt2bot.changes import diff_changes
from pt2bot.config import Config, ModelConfig, RunConfig
from pt2bot.select import Selection, select_all, select_models

CONFIG_YML = """\
version: 1
static: {filter: added}
models:
  - name: tiny
    entry: mypkg.models:Tiny
    kwargs: {width: 8}
  - name: cnn
    entry: mypkg.vision.cnn:build
run: {device: cpu}
"""

PROJECT = {
    "pt2bot.yml": CONFIG_YML,
    "README.md": "# demo\n",
    "mypkg/__init__.py": "",
    "mypkg/models.py": """\
        from __future__ import annotations
        from typing import TYPE_CHECKING
        import torch
        from .layers import MLP
        if TYPE_CHECKING:
            from mypkg import typing_only

        class Tiny(torch.nn.Module):
            def __init__(self, width=8):
                super().__init__()
                import mypkg.utils as U   # a lazy import still counts
                self.mlp = MLP(U.WIDTH)
        """,
    "mypkg/layers.py": "import torch\nfrom mypkg.common import act\nMLP = torch.nn.Linear\n",
    "mypkg/common.py": "def act(x):\n    return x\n",
    "mypkg/utils.py": "WIDTH = 8\n",
    "mypkg/typing_only.py": "class T: ...\n",
    "mypkg/other.py": "import importlib\n",
    "mypkg/vision/__init__.py": "",
    "mypkg/vision/cnn.py": "from .. import common\nfrom .blocks import Block\n\n"
                           "def build():\n    return Block()\n",
    "mypkg/vision/blocks.py": "class Block: ...\n",
}


def make_project(repo: GitRepo, files: dict[str, str]) -> str:
    for path, text in files.items():
        repo.write(path, textwrap.dedent(text))
    return repo.commit("base")


def models_config(repo: GitRepo, *models: ModelConfig, **kw) -> Config:
    models = models or (ModelConfig(name="tiny", entry="mypkg.models:Tiny", kwargs={"width": 8}),
                        ModelConfig(name="cnn", entry="mypkg.vision.cnn:build"))
    return Config(models=models, path=str(repo.path / "pt2bot.yml"), **kw)


@pytest.fixture
def project(git_repo: GitRepo) -> tuple[GitRepo, str]:
    return git_repo, make_project(git_repo, PROJECT)


def select_after(repo: GitRepo, base: str, edits: dict[str, str | None], config: Config | None = None,
                 **kw) -> Selection:
    """Apply edits to the working tree (None deletes) and select against base."""
    for path, text in edits.items():
        if text is None:
            repo.rm(path)
        else:
            repo.write(path, textwrap.dedent(text))
    cs = diff_changes(repo.path, base)
    return select_models(config or models_config(repo), cs, repo.path, **kw)


@pytest.mark.parametrize(("changed", "expected"), [
    ("README.md", ()),
    ("mypkg/other.py", ()),
    ("mypkg/typing_only.py", ()),             # only imported under TYPE_CHECKING
    ("mypkg/layers.py", ("tiny",)),
    ("mypkg/utils.py", ("tiny",)),            # lazy import inside __init__
    ("mypkg/common.py", ("tiny", "cnn")),     # tiny via layers; cnn via `from .. import common`
    ("mypkg/vision/blocks.py", ("cnn",)),     # relative `from .blocks import`
    ("mypkg/vision/__init__.py", ("cnn",)),   # parent package of the entry
    ("mypkg/__init__.py", ("tiny", "cnn")),
])
def test_import_closure_selects_affected_models(project, changed: str, expected: tuple) -> None:
    repo, base = project
    sel = select_after(repo, base, {changed: repo.read(changed) + "# edited\n"})
    assert sel.selected == expected
    assert set(sel.selected) | set(sel.skipped) == {"tiny", "cnn"}
    assert set(sel.reasons) == set(expected)
    for name in expected:
        assert sel.reasons[name].startswith(f"changes {changed} (")
    for name in sel.skipped:
        assert "no changed file in its import closure" in sel.skipped[name]


def test_reason_shows_the_import_chain(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"mypkg/common.py": "def act(x):\n    return -x\n"})
    assert sel.reasons["tiny"] == "changes mypkg/common.py (mypkg.models → mypkg.layers → mypkg.common)"
    assert sel.reasons["cnn"] == "changes mypkg/common.py (mypkg.vision.cnn → mypkg.common)"


def test_several_changed_files_are_counted(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"mypkg/layers.py": "MLP = 1\n", "mypkg/utils.py": "WIDTH = 2\n"})
    assert sel.reasons["tiny"].startswith("changes mypkg/layers.py and 1 more (")


def test_deleted_module_still_imported_selects(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"mypkg/vision/blocks.py": None})
    assert sel.selected == ("cnn",)
    assert "mypkg/vision/blocks.py" in sel.reasons["cnn"]


def test_renamed_module_selects_its_importers(project) -> None:
    repo, base = project
    # A pure move: models.py still imports the old name, so tiny breaks and must run.
    repo.mv("mypkg/layers.py", "mypkg/nn_layers.py")
    sel = select_after(repo, base, {})
    assert sel.selected == ("tiny",)
    assert sel.reasons["tiny"].startswith("changes mypkg/layers.py (mypkg.models → mypkg.layers")


def test_new_or_missing_entry_module_is_selected(project) -> None:
    repo, base = project
    cfg = models_config(repo, ModelConfig(name="fresh", entry="mypkg.fresh:Net"),
                        ModelConfig(name="ghost", entry="mypkg.ghost:Net"),
                        ModelConfig(name="tiny", entry="mypkg.models:Tiny"))
    sel = select_after(repo, base, {"mypkg/fresh.py": "class Net: ...\n"}, cfg)
    assert sel.selected == ("fresh", "ghost")
    assert sel.reasons["fresh"].startswith("changes mypkg/fresh.py")
    assert sel.reasons["ghost"] == "entry module mypkg.ghost is not a module of this repo"


def test_inputs_entry_module_counts(project) -> None:
    repo, base = project
    cfg = models_config(repo, ModelConfig(name="cnn", entry="mypkg.vision.cnn:build",
                                          inputs_entry="mypkg.other:make_inputs"))
    sel = select_after(repo, base, {"mypkg/other.py": "def make_inputs(): ...\n"}, cfg)
    assert sel.selected == ("cnn",)


def test_unparsable_module_in_closure_does_not_crash(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"mypkg/layers.py": "def broken(:\n"})
    assert sel.selected == ("tiny",)


def test_importlib_literal_and_src_layout(git_repo: GitRepo) -> None:
    base = make_project(git_repo, {
        "pt2bot.yml": "models: []\n",
        "src/zoo/__init__.py": "",
        "src/zoo/entry.py": "import importlib\nimpl = importlib.import_module('zoo.impl')\n",
        "src/zoo/impl.py": "X = 1\n",
    })
    cfg = models_config(git_repo, ModelConfig(name="m", entry="zoo.entry:build"))
    sel = select_after(git_repo, base, {"src/zoo/impl.py": "X = 2\n"}, cfg)
    assert sel.reasons == {"m": "changes src/zoo/impl.py (zoo.entry → zoo.impl)"}


@pytest.mark.parametrize("level,module,package,base", [
    (0, "a.b", "pkg", "a.b"),
    (1, "m", "pkg.sub", "pkg.sub.m"),
    (2, None, "pkg.sub", "pkg"),
    (2, "m", "pkg.sub", "pkg.m"),
    (3, "m", "pkg.sub", "m"),          # one level above the top: the tree may be a package itself
    (3, None, "pkg.sub", ""),
    (4, "m", "pkg.sub", None),         # further up: ImportError
    (1, "m", "", "m"),                 # a top-level module
])
def test_one_rule_for_relative_imports(level, module, package, base) -> None:
    """Selection, the analysis engine (what `pt2bot check` and `pt2bot init` resolve names by)
    and this agree on what a relative import names; selection reads nothing above the
    repository's top-level packages (its root is a directory on sys.path, not a package)."""
    import ast

    from pt2bot.analysis.model import import_base, import_bindings
    from pt2bot.select import ModuleIndex, Tree

    assert import_base(level, module, package) == base
    st = ast.parse(f"from {'.' * level}{module or ''} import x, y as z").body[0]
    bound = dict(import_bindings(st, package))
    if base is None:
        assert bound == {}
    else:
        assert bound == {"x": f"{base}.x" if base else "x", "z": f"{base}.y" if base else "y"}

    class OneFile(Tree):
        def read(self, rel):
            return ast.unparse(st).encode()

    name = f"{package}.mod" if package else "mod"
    found = ModuleIndex(OneFile(""), ("",)).imports_of(name.replace(".", "/") + ".py", name)
    assert found == ({base, f"{base}.x", f"{base}.y"} if base else set())


# ---------------------------------------------------------------------------- config changes

def test_config_changes_select_what_they_touch(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"pt2bot.yml": CONFIG_YML.replace("width: 8", "width: 16")})
    assert sel.selected == ("tiny",)
    assert sel.reasons["tiny"] == "its section in pt2bot.yml changed (`kwargs`)"


def test_config_found_by_default_name_when_config_has_no_path(project) -> None:
    repo, base = project
    cfg = Config(models=models_config(repo).models)  # path=None: look for pt2bot.yml
    sel = select_after(repo, base, {"pt2bot.yml": CONFIG_YML.replace("width: 8", "width: 16")}, cfg)
    assert sel.selected == ("tiny",)


def test_config_run_change_selects_every_model(project) -> None:
    repo, base = project
    sel = select_after(repo, base, {"pt2bot.yml": CONFIG_YML.replace("device: cpu", "device: cuda")})
    assert sel.selected == ("tiny", "cnn")
    assert "`run`" in sel.reasons["cnn"]


def test_config_static_or_cosmetic_change_selects_nothing(project) -> None:
    repo, base = project
    yml = "# a comment\n" + CONFIG_YML.replace("filter: added", "filter: file")
    assert select_after(repo, base, {"pt2bot.yml": yml}).selected == ()


def test_model_added_to_config_is_selected(project) -> None:
    repo, base = project
    yml = CONFIG_YML.replace("run:", "  - name: extra\n    entry: mypkg.models:Tiny\nrun:")
    cfg = models_config(repo, ModelConfig(name="tiny", entry="mypkg.models:Tiny"),
                        ModelConfig(name="extra", entry="mypkg.models:Tiny"))
    sel = select_after(repo, base, {"pt2bot.yml": yml}, cfg)
    assert sel.selected == ("extra",)
    assert sel.reasons["extra"] == "added to pt2bot.yml"


def test_new_config_file_selects_everything(git_repo: GitRepo) -> None:
    files = dict(PROJECT)
    del files["pt2bot.yml"]
    base = make_project(git_repo, files)
    sel = select_after(git_repo, base, {"pt2bot.yml": CONFIG_YML})
    assert sel.selected == ("tiny", "cnn")
    assert sel.reasons["tiny"] == "pt2bot.yml is new in this change"


def test_config_compared_at_head_ref_not_working_tree(project) -> None:
    repo, base = project
    repo.write("pt2bot.yml", CONFIG_YML.replace("width: 8", "width: 9"))
    head = repo.commit("pr")
    repo.write("pt2bot.yml", CONFIG_YML)  # uncommitted revert must not matter for head=HEAD
    cs = diff_changes(repo.path, base, head)
    assert select_models(models_config(repo), cs, repo.path).selected == ("tiny",)


# ---------------------------------------------------------------------------- model zoo

ZOO = {
    "zoo/__init__.py": "from .a import A\nfrom .b import B\nfrom .c import C\n",
    "zoo/common.py": "def block(): ...\n",
    "zoo/a.py": "from .common import block\nclass A: ...\n",
    "zoo/b.py": "from .common import block\nclass B: ...\n",
    "zoo/c.py": "class C: ...\n",
}
ZOO_MODELS = tuple(ModelConfig(name=n, entry=f"zoo.{n}:{n.upper()}") for n in "abc")


def test_zoo_init_makes_the_import_closure_select_everything(git_repo: GitRepo) -> None:
    base = make_project(git_repo, ZOO)
    cfg = models_config(git_repo, *ZOO_MODELS)
    sel = select_after(git_repo, base, {"zoo/b.py": "class B: pass\n"}, cfg)
    assert sel.selected == ("a", "b", "c")
    assert sel.reasons["a"] == "changes zoo/b.py (zoo.a → zoo → zoo.b)"


def test_zoo_with_stored_files_selects_only_what_ran(git_repo: GitRepo) -> None:
    base = make_project(git_repo, ZOO)
    cfg = models_config(git_repo, *ZOO_MODELS)
    stored = {"a": {"zoo/a.py", "zoo/common.py"},
              "b": {str(git_repo.path / "zoo" / "b.py"), "zoo/common.py",   # absolute: normalised
                    "/usr/lib/python3/site-packages/torch/nn/modules/module.py"}}
    sel = select_after(git_repo, base, {"zoo/b.py": "class B: pass\n"}, cfg, stored_files=stored)
    # c has no stored set: its import closure (through zoo/__init__) still selects it.
    assert sel.selected == ("b", "c")
    assert sel.reasons["b"] == "changes zoo/b.py (executed by the model in the stored run)"
    assert sel.skipped["a"] == "no file it executed in the stored run changed (2 files)"
    git_repo.git("checkout", "--", ".")
    sel = select_after(git_repo, base, {"zoo/common.py": "def block(): return 1\n"}, cfg,
                       stored_files={**stored, "c": {"zoo/c.py"}})
    assert sel.selected == ("a", "b")


def test_stored_files_always_include_the_entry_module(git_repo: GitRepo) -> None:
    base = make_project(git_repo, ZOO)
    cfg = models_config(git_repo, *ZOO_MODELS)
    stored = {n: {"zoo/common.py"} for n in "abc"}
    sel = select_after(git_repo, base, {"zoo/c.py": "class C: pass\n"}, cfg, stored_files=stored)
    assert sel.selected == ("c",)


def test_empty_or_foreign_stored_record_falls_back_to_the_closure(git_repo: GitRepo) -> None:
    base = make_project(git_repo, ZOO)
    cfg = models_config(git_repo, *ZOO_MODELS)
    stored = {"a": set(), "b": {"/elsewhere/checkout/zoo/b.py"}, "c": {"zoo/c.py"}}
    sel = select_after(git_repo, base, {"zoo/common.py": "def block(): return 2\n"}, cfg,
                       stored_files=stored)
    assert sel.selected == ("a", "b")   # both through the closure: their records say nothing
    assert sel.reasons["a"] == "changes zoo/common.py (zoo.a → zoo.common)"
    assert sel.skipped["c"] == "no file it executed in the stored run changed (1 file)"


def test_select_all() -> None:
    cfg = Config(models=ZOO_MODELS, run=RunConfig())
    sel = select_all(cfg)
    assert sel.selected == ("a", "b", "c") and sel.skipped == {}
    assert sel.reasons["b"].startswith("--all")


def test_head_commit_is_read_from_git_not_from_disk(project) -> None:
    repo, base = project
    repo.branch("pr")
    repo.write("mypkg/other.py", "import importlib  # edited on the PR\n")
    repo.write("pt2bot.yml", CONFIG_YML.replace("width: 8", "width: 9"))
    repo.commit("pr")
    repo.checkout("main")
    # main moves on: on disk, cnn now imports other.py; on the PR's head it does not.
    repo.write("mypkg/vision/cnn.py", "from mypkg import other\n" + repo.read("mypkg/vision/cnn.py"))
    repo.commit("main moves on")
    cs = diff_changes(repo.path, base, "pr")
    sel = select_models(models_config(repo), cs, repo.path)
    assert sel.selected == ("tiny",)   # by its config section, read from the pr commit
    assert "no changed file in its import closure" in sel.skipped["cnn"]
    # the same question asked of the working tree (main) sees cnn import other.py
    cs_disk = diff_changes(repo.path, base)
    assert "cnn" in select_models(models_config(repo), cs_disk, repo.path).selected
