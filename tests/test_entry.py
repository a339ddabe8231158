"""Importing a model's entry from a real package on disk, and building the model."""
from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path
from collections.abc import Callable, Iterator

import pytest

from pt2bot.smoke.entry import EntryError, build_model, load_entry


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
         ) -> Iterator[tuple[Path, str, Callable[[str, str], None]]]:
    """A repo root with a uniquely named package; sys.path and sys.modules restored after."""
    pkg = f"userpkg_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    monkeypatch.setattr(sys, "path", list(sys.path))

    def write(rel: str, source: str) -> None:
        p = tmp_path / pkg / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(source))

    yield tmp_path, pkg, write
    for name in [m for m in sys.modules if m == pkg or m.startswith(pkg + ".")]:
        del sys.modules[name]


def entry_error(spec: str, root: Path) -> EntryError:
    with pytest.raises(EntryError) as info:
        load_entry(spec, str(root))
    assert str(info.value) == info.value.message
    return info.value


def test_loads_class_and_dotted_attribute(repo) -> None:
    root, pkg, write = repo
    write("models.py", """\
        class Net:
            @classmethod
            def build(cls):
                return cls()
        """)
    cls = load_entry(f"{pkg}.models:Net", str(root))
    assert cls.__name__ == "Net" and cls.__module__ == f"{pkg}.models"
    assert load_entry(f"{pkg}.models:Net.build", str(root)).__qualname__ == "Net.build"
    assert sys.path[0] == str(root)  # stays, for imports the model makes lazily


def test_entry_module_missing(repo) -> None:
    root, pkg, write = repo
    e = entry_error("nosuchpkg_q.models:Net", root)
    assert e.kind == "module_not_found"
    assert e.message == (f'module "nosuchpkg_q.models" not found (no "nosuchpkg_q" under {root} '
                         "or on sys.path)")
    assert (e.path, e.line) == (None, None)


def test_entry_submodule_missing_suggests_a_sibling(repo) -> None:
    root, pkg, write = repo
    write("models.py", "X = 1\n")
    e = entry_error(f"{pkg}.modles:X", root)
    assert e.kind == "module_not_found"
    assert e.message == (f'module "{pkg}.modles" not found (no "{pkg}.modles" under {root} or on '
                         f'sys.path); did you mean "{pkg}.models"?')


def test_module_imported_by_the_entry_missing(repo) -> None:
    root, pkg, write = repo
    write("models.py", """\
        import os

        import not_installed_dep_zz

        class Net: ...
        """)
    e = entry_error(f"{pkg}.models:Net", root)
    assert e.kind == "module_not_found"
    assert e.message == (f'"{pkg}.models" imports "not_installed_dep_zz", which is not installed '
                         f"at {pkg}/models.py:3")
    assert (e.path, e.line, e.exc_type) == (f"{pkg}/models.py", 3, "ModuleNotFoundError")


def test_attribute_missing_with_did_you_mean(repo) -> None:
    root, pkg, write = repo
    write("models.py", "class TinyGPT: ...\ndef build_tiny_gpt(): ...\n")
    e = entry_error(f"{pkg}.models:TinyGTP", root)
    assert e.kind == "attribute_missing"
    assert e.message == f'"{pkg}.models" has no attribute "TinyGTP"; did you mean "TinyGPT"?'
    e = entry_error(f"{pkg}.models:TinyGPT.biuld", root)
    assert e.message == f'"{pkg}.models.TinyGPT" has no attribute "biuld"'


def test_import_raised_names_the_innermost_user_frame(repo) -> None:
    root, pkg, write = repo
    write("helpers.py", """\
        def load_vocab():
            raise ValueError("vocab.txt is missing")
        """)
    write("models.py", f"""\
        from {pkg}.helpers import load_vocab

        VOCAB = load_vocab()
        """)
    e = entry_error(f"{pkg}.models:Net", root)
    assert e.kind == "import_raised"
    assert e.message == (f'importing "{pkg}.models" raised ValueError: vocab.txt is missing '
                         f"at {pkg}/helpers.py:2")
    assert (e.path, e.line, e.exc_type) == (f"{pkg}/helpers.py", 2, "ValueError")


def test_syntax_error_is_located_in_the_file(repo) -> None:
    root, pkg, write = repo
    write("models.py", "x = 1\ndef f(:\n    pass\n")
    e = entry_error(f"{pkg}.models:f", root)
    assert e.kind == "import_raised" and e.exc_type == "SyntaxError"
    assert (e.path, e.line) == (f"{pkg}/models.py", 2)
    assert e.message.startswith(f'importing "{pkg}.models" raised SyntaxError: ')
    assert e.message.endswith(f" at {pkg}/models.py:2")


def test_sys_exit_at_import_is_reported_not_fatal(repo) -> None:
    root, pkg, write = repo
    write("models.py", "import sys\nsys.exit(3)\n")
    e = entry_error(f"{pkg}.models:Net", root)
    assert (e.kind, e.exc_type, e.line) == ("import_raised", "SystemExit", 2)


@pytest.mark.parametrize("spec", ["pkg.models.Net", "pkg/models.py:Net", "pkg:", ":Net"])
def test_bad_spec(spec: str, tmp_path: Path) -> None:
    e = entry_error(spec, tmp_path)
    assert e.kind == "bad_spec" and e.message == f'expected "module.path:attr", got {spec!r}'


# --------------------------------------------------------------------------- build_model (torch)

MODELS = """\
    import torch

    class MLP(torch.nn.Module):
        def __init__(self, hidden, act="relu"):
            super().__init__()
            self.lin = torch.nn.Linear(4, hidden)

    def make_mlp(hidden=8):
        return MLP(hidden)

    def broken_factory():
        return make_mlp(hidden=-1)

    def not_a_model():
        return lambda x: x

    INSTANCE = MLP(3)
    """


@pytest.mark.torch
def test_build_model_class_factory_and_instance(repo) -> None:
    import torch

    root, pkg, write = repo
    write("models.py", MODELS)
    m = build_model(load_entry(f"{pkg}.models:MLP", str(root)), {"hidden": 5})
    assert isinstance(m, torch.nn.Module) and m.lin.out_features == 5
    assert build_model(load_entry(f"{pkg}.models:make_mlp", str(root)), {}).lin.out_features == 8
    inst = load_entry(f"{pkg}.models:INSTANCE", str(root))
    assert build_model(inst, None) is inst


@pytest.mark.torch
def test_build_model_errors(repo) -> None:
    root, pkg, write = repo
    write("models.py", MODELS)

    def err(attr: str, kwargs: dict) -> EntryError:
        with pytest.raises(EntryError) as info:
            build_model(load_entry(f"{pkg}.models:{attr}", str(root)), kwargs, root=str(root))
        return info.value

    e = err("MLP", {"hiden": 4})
    assert (e.kind, e.message) == ("bad_kwargs", 'MLP() got an unexpected keyword argument "hiden"; '
                                                 'did you mean "hidden"? (it accepts: hidden, act)')
    e = err("MLP", {})
    assert (e.kind, e.message) == ("bad_kwargs", "MLP() needs hidden: add it to the model's kwargs")
    e = err("broken_factory", {})
    assert e.kind == "build_raised" and e.exc_type == "RuntimeError"
    assert (e.path, e.line) == (f"{pkg}/models.py", 6)  # the innermost frame in the user's repo
    assert e.message.startswith("broken_factory(...) raised RuntimeError: ")
    e = err("not_a_model", {})
    assert (e.kind, e.message) == ("not_a_model", "not_a_model(...) returned a function, "
                                                  "expected a torch.nn.Module")
    e = err("INSTANCE", {"hidden": 2})
    assert e.kind == "bad_kwargs"


CONFIGS = """\
    from dataclasses import dataclass

    import torch.nn as nn


    @dataclass
    class Cfg:
        width: int = 512
        depth: int = 12

        @classmethod
        def from_name(cls, name, **kwargs):
            return cls(**{**{"tiny": {"width": 8, "depth": 1}}[name], **kwargs})


    class HFStyle:
        def __init__(self, hidden_size=4096, **kwargs):
            self.hidden_size = hidden_size


    class Net(nn.Module):
        def __init__(self, config, text_cfg=None, bias=True):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(config.width, config.width, bias=bias)
                                        for _ in range(config.depth))
            self.text_width = text_cfg.hidden_size if text_cfg else None
    """


@pytest.mark.torch
def test_build_model_from_config_objects(repo) -> None:
    # `config:` in pt2bot.yml: objects built first, passed positionally or by their arg
    from pt2bot.smoke.inputs import build_model as build_entry
    from pt2bot.smoke.location import ModelError, RepoPaths

    root, pkg, write = repo
    write("nets.py", CONFIGS)
    paths = RepoPaths(str(root))
    net = build_entry(f"{pkg}.nets:Net", {"bias": False}, paths, [
        {"entry": f"{pkg}.nets:Cfg.from_name", "kwargs": {"name": "tiny", "depth": 2}},
        {"entry": f"{pkg}.nets:HFStyle", "kwargs": {"hidden_size": 16}, "arg": "text_cfg"}])
    assert [m.in_features for m in net.layers] == [8, 8] and net.layers[0].bias is None
    assert net.text_width == 16 and not net.training

    def err(configs: list, kwargs: dict | None = None) -> ModelError:
        with pytest.raises(ModelError) as info:
            build_entry(f"{pkg}.nets:Net", kwargs or {}, paths, configs)
        return info.value

    e = err([{"entry": f"{pkg}.nets:Cfg", "kwargs": {"widht": 4}}])
    assert e.message == (f'config {pkg}.nets:Cfg: the config Cfg() got an unexpected keyword '
                         'argument "widht"; did you mean "width"? (it accepts: width, depth) (bad_kwargs)')
    e = err([{"entry": f"{pkg}.nets:Cfg.from_name", "kwargs": {"name": "huge"}}])
    assert "the config Cfg.from_name(...) raised KeyError: 'huge'" in e.message
    assert e.path == f"{pkg}/nets.py"
    e = err([{"entry": f"{pkg}.nets:HFStyle", "arg": "text_cfg"}], {"text_cfg": 1})
    assert '"text_cfg" is set twice' in e.message
    e = err([{"entry": f"{pkg}.nets:Nope"}])
    assert e.message.startswith(f"config {pkg}.nets:Nope: {pkg}.nets:Nope: ") or "Nope" in e.message
    # without its config the constructor's missing argument is named as before
    e = err([])
    assert "Net() needs config: add it to the model's kwargs" in e.message
