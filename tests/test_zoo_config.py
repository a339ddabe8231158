"""The zoo benchmark's generated pt2bot.yml (benchmarks/zoo/generate.py), read by pt2bot's own
loader: the switches that turn a review's newer phases off reach the config, and without them
the file has neither key (so a pt2bot from before those phases can still read it)."""
from __future__ import annotations

import importlib.util
import os
import sys

import pytest

from pt2bot.configfile import load_config

ZOO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "benchmarks", "zoo")


@pytest.fixture(scope="module")
def zoo():
    # generate.py does `from models import ...`: the zoo's models.py, not the `models` package
    # of tests/fixtures that other tests of the same process may have imported first
    saved = sys.modules.pop("models", None)
    try:
        models = _from_file("models", os.path.join(ZOO, "models.py"))
        generate = _from_file("pt2bot_zoo_generate", os.path.join(ZOO, "generate.py"))
        yield generate, models
    finally:
        sys.modules.pop("pt2bot_zoo_generate", None)
        if saved is not None:
            sys.modules["models"] = saved
        else:
            sys.modules.pop("models", None)


def _from_file(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _load(tmp_path, text):
    path = tmp_path / "pt2bot.yml"
    path.write_text(text)
    return load_config(str(path), root=str(tmp_path))


def test_defaults_write_neither_key(zoo, tmp_path):
    generate, models = zoo
    text = generate.config_yml(models.MODELS, backend="eager", rounds=2, repeats=20, warmup=3)
    assert "shape_advice" not in text and "fixes:" not in text
    config = _load(tmp_path, text)
    assert config.run.shape_advice is True and config.fixes.verify is True
    assert (config.run.rounds, config.run.repeats, len(config.models)) == (2, 20,
                                                                          len(models.MODELS))


def test_switches_turn_the_new_phases_off(zoo, tmp_path):
    generate, models = zoo
    text = generate.config_yml(models.MODELS, backend="eager", rounds=2, repeats=20, warmup=3,
                               shape_advice=False, verify_fixes=False)
    config = _load(tmp_path, text)
    assert config.run.shape_advice is False and config.fixes.verify is False
    assert config.run.backend == "eager" and config.run.warmup == 3
