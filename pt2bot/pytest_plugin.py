"""pytest plugin (entry point `pytest11`): the `pt2bot` fixture and `--pt2bot-config`.

    def test_no_breaks(pt2bot):
        pt2bot.assert_no_graph_breaks(MyModel(), torch.randn(2, 8))

`pytest --pt2bot-config pt2bot.yml` adds one test item per configured model
(`pt2bot.yml::<model name>`): the model and its first shape case's inputs are built as the
smoke run builds them, and the test fails listing each graph break (pt2bot/testing.py,
`model_graph_breaks`); a model without breaks gets its shape advice as a report section
("pt2bot shape advice", shown by `pytest -rP`; `model_shape_advice`). Given no test paths, the models are all it collects (the repository's
own suite is not imported: it may need an install the models do not); with paths, those are
collected too. The items run in the pytest process and import the models from the
repository's root as `pt2bot run` does (the git root of the directory pytest was started in,
else the config's directory); their paths are relative to it.

Loading this plugin imports neither torch nor the rest of pt2bot: pytest starts as fast as
before in suites that never use it. The checks need torch, which pt2bot installs only with its
`smoke` extra; without it the option is a usage error and the fixture an error of the test,
each saying what to install.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Iterator

import pytest

_CONFIG_KEY = pytest.StashKey[Any]()
_ROOT_KEY = pytest.StashKey[str]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("pt2bot", "pt2bot graph-break checks")
    group.addoption("--pt2bot-config", metavar="FILE", default=None,
                    help="pt2bot.yml: each configured model becomes a test that fails on "
                         "graph breaks")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "pt2bot: a model from --pt2bot-config (pt2bot.yml)")
    path = config.getoption("pt2bot_config", None)
    if not path:
        return
    from pt2bot.configfile import load_config
    from pt2bot.errors import ConfigError

    if not _have_torch():
        from pt2bot.testing import INSTALL_TORCH
        raise pytest.UsageError(f"--pt2bot-config needs torch, which is not installed: "
                                f"{INSTALL_TORCH}")
    from pt2bot.smoke.runner import run_root

    start = str(config.invocation_params.dir)
    full = os.path.join(start, path)
    try:
        loaded = load_config(full, required=True)
    except ConfigError as e:   # a located message ("pt2bot.yml:14: models[1]...")
        raise pytest.UsageError(f"--pt2bot-config: {e}") from None
    config.stash[_CONFIG_KEY] = loaded
    config.stash[_ROOT_KEY] = run_root(loaded, start)


def _have_torch() -> bool:
    """Whether torch can be imported, without importing it."""
    try:
        return importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        return False


def _models_only(config: pytest.Config) -> bool:
    """`--pt2bot-config` and no test paths on the command line: the models are the run."""
    if config.stash.get(_CONFIG_KEY, None) is None:
        return False
    source = getattr(config, "args_source", None)        # pytest >= 7.2
    return source is not None and source != pytest.Config.ArgsSource.ARGS


def _config_path(config: pytest.Config) -> Path | None:
    loaded = config.stash.get(_CONFIG_KEY, None)
    return Path(os.path.abspath(loaded.path)) if loaded is not None else None


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # Models only: the rest is not even imported. A repository's own tests may fail to import
    # where its models do not (the `pytest` script does not put the working directory on
    # sys.path), and a collection error stops the session before the models run.
    if not _models_only(config):
        return None
    target = _config_path(config)
    if target is not None and (collection_path == target or collection_path in target.parents):
        return None           # the way to the config file (collected below)
    return True


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The config file, where collection walks past it (the usual case: the repository's
    root); elsewhere its items are added after collection (below)."""
    if file_path == _config_path(parent.config):
        return ConfigFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)   # before -k/-m deselection, so they apply to our items
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    loaded = config.stash.get(_CONFIG_KEY, None)
    if loaded is None:
        return
    file = ConfigFile.from_parent(session, path=Path(os.path.abspath(loaded.path)))
    seen = {it.nodeid for it in items}
    items.extend(it for it in file.collect() if it.nodeid not in seen)


class ConfigFile(pytest.File):
    """pt2bot.yml as a collector: one ModelItem per configured model."""

    def collect(self) -> Iterator[pytest.Item]:
        loaded = self.config.stash[_CONFIG_KEY]
        for model in loaded.models:
            yield ModelItem.from_parent(self, name=model.name, model=model,
                                        root=self.config.stash[_ROOT_KEY],
                                        device=loaded.run.device)


class ModelItem(pytest.Item):
    """One configured model: passes when its first shape case compiles without a break."""

    def __init__(self, *, model: Any, root: str, device: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.root = root
        self.device = device
        self.add_marker("pt2bot")

    def runtest(self) -> None:
        from pt2bot import testing

        device = testing.pick_device(self.device)
        breaks = testing.model_graph_breaks(self.model, self.root, device=device)
        if breaks:
            raise GraphBreaksFound(testing.format_breaks(breaks, f"model {self.model.name}"))
        # every model's shape advice, as a report section (`pytest -rP` shows it)
        advice = testing.model_shape_advice(self.model, self.root, device=device)
        self.add_report_section("call", "pt2bot shape advice",
                                testing.format_shape_advice(advice, f"model {self.model.name}"))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        from pt2bot.testing import ModelFailed

        if isinstance(excinfo.value, (GraphBreaksFound, ModelFailed)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Any, int | None, str]:
        line = (self.model.line - 1) if self.model.line else None
        return self.path, line, f"pt2bot model {self.model.name}"


class GraphBreaksFound(AssertionError):
    """A configured model has graph breaks (the message lists them)."""


@pytest.fixture
def pt2bot() -> SimpleNamespace:
    """`graph_breaks`, `assert_no_graph_breaks`, `recompiles`, `assert_no_recompiles` from
    pt2bot.testing (the user's code is found from the calling test file, see there)."""
    if not _have_torch():
        from pt2bot.testing import INSTALL_TORCH
        pytest.fail(f"the pt2bot fixture needs torch, which is not installed: {INSTALL_TORCH}",
                    pytrace=False)
    from pt2bot import testing

    return SimpleNamespace(graph_breaks=testing.graph_breaks,
                           assert_no_graph_breaks=testing.assert_no_graph_breaks,
                           recompiles=testing.recompiles,
                           assert_no_recompiles=testing.assert_no_recompiles,
                           format_breaks=testing.format_breaks)
