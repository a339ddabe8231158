"""The pytest plugin, as a user's suite sees it: pytester runs real test files and a real
pt2bot.yml against real torch (dynamo, eager backend, CPU), and the entry point in
pyproject.toml is checked to make pytest load the plugin by itself."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ("-p", "pt2bot.pytest_plugin")   # explicit; a no-op where the entry point loaded it


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # A subprocess: in-process runs drop the torch modules they imported afterwards, and
    # importing some of them again fails (torch registers its operator libraries once).
    return pytester.runpytest_subprocess(*PLUGIN, "-p", "no:cacheprovider", *args,
                                         timeout=300)

MODEL = """\
import torch


class TwoBreaks(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        if y.sum().item() > 0:
            y = y * 2
        print("two breaks")
        return y + 1


class Clean(torch.nn.Module):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.fc(x))
"""
ITEM_LINE, PRINT_LINE = 11, 13
USER_TESTS = """\
import torch

from userpkg.model import Clean, TwoBreaks


def test_two_breaks(pt2bot):
    pt2bot.assert_no_graph_breaks(TwoBreaks(), torch.randn(2, 8))


def test_clean(pt2bot):
    pt2bot.assert_no_graph_breaks(Clean(), torch.randn(2, 8))


def test_records(pt2bot):
    breaks = pt2bot.graph_breaks(TwoBreaks(), torch.randn(2, 8))
    assert [(b.gb, b.path, b.line) for b in breaks] == [
        ("GB0124", "userpkg/model.py", 11), ("GB0059", "userpkg/model.py", 13)]


def test_recompiles(pt2bot):
    pt2bot.assert_no_recompiles(Clean(), [torch.randn(n, 8) for n in (2, 3, 5)])
"""
CONFIG = """\
version: 1
models:
  - name: clean
    entry: userpkg.model:Clean
    kwargs: {width: 8}
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
  - name: broken
    entry: userpkg.model:TwoBreaks
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2]}
  - name: missing
    entry: userpkg.nothere:Model
    inputs: [{shape: [2, 8]}]
"""


@pytest.fixture
def project(pytester):
    (pytester.path / "pyproject.toml").write_text("[project]\nname = 'userproj'\n")
    pkg = pytester.mkpydir("userpkg")
    (pkg / "model.py").write_text(MODEL)
    return pytester


def test_fixture_in_a_user_test_file_fails_with_the_right_lines(project):
    project.makepyfile(test_user=USER_TESTS)
    result = run(project)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines([
        "*FAILED test_user.py::test_two_breaks*",
    ])
    out = result.stdout.str()
    assert "2 graph breaks in TwoBreaks.forward (dynamo, eager backend; pt2bot.testing):" in out
    assert (f"userpkg/model.py:{ITEM_LINE} in forward: GB0124 Unsupported Tensor.item() call"
            in out)
    assert f"userpkg/model.py:{PRINT_LINE} in forward: GB0059 Failed to trace builtin" in out
    assert "hint: " in out and "gb/gb0124.html" in out
    # the failure points at the user's test line, not into pt2bot
    assert "test_user.py:7: AssertionError" in out


def test_config_models_become_test_items(project):
    (project.path / "pt2bot.yml").write_text(CONFIG)
    result = run(project, "--pt2bot-config", "pt2bot.yml", "-v", "-rP")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines_random([
        "*pt2bot.yml::clean PASSED*",
        "*pt2bot.yml::broken FAILED*",
        "*pt2bot.yml::missing FAILED*",
    ])
    out = result.stdout.str()
    assert "2 graph breaks in model broken (dynamo, eager backend; pt2bot.testing):" in out
    assert f"userpkg/model.py:{ITEM_LINE} in forward: GB0124" in out
    assert f"userpkg/model.py:{PRINT_LINE} in forward: GB0059" in out
    assert "model missing: import error" in out and "userpkg.nothere" in out
    # the model that passes shows its shape advice
    assert "shape advice for model clean (pt2bot.testing):" in out
    assert "  x.shape[0] (batch): dynamic, any size" in out
    assert "  compiles over the matrix: 2 -> 1 with mark_dynamic" in out
    assert "    dynamic_shapes = {'x': {0: batch}}" in out


def test_config_items_obey_k_and_a_bad_config_is_a_usage_error(project):
    (project.path / "pt2bot.yml").write_text(CONFIG)
    result = run(project, "--pt2bot-config", "pt2bot.yml", "-k", "clean")
    result.assert_outcomes(passed=1, deselected=2)
    (project.path / "bad.yml").write_text("version: 1\nmodels:\n  - name: m\n    shapes: {b: '8'}\n")
    result = run(project, "--pt2bot-config", "bad.yml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--pt2bot-config: " in result.stderr.str() and "bad.yml:" in result.stderr.str()


def test_without_the_option_the_plugin_adds_nothing(project):
    (project.path / "pt2bot.yml").write_text(CONFIG)
    project.makepyfile(test_one="def test_one():\n    pass\n")
    result = run(project)
    result.assert_outcomes(passed=1)
    # loading the plugin (every pytest run, once installed) does not import torch
    proc = subprocess.run([sys.executable, "-c", "import sys, pt2bot.pytest_plugin; "
                           "print(sorted(m for m in sys.modules if m.split('.')[0] in "
                           "('torch', 'yaml', 'numpy')))"],
                          capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip() == "[]"


def test_entry_point_loads_the_plugin_without_p(tmp_path):
    # Build pt2bot's real metadata from pyproject.toml (setuptools, no network) and put the
    # dist-info on the path of a fresh pytest: pluggy finds the pytest11 entry point there.
    src = tmp_path / "src"
    (src / "pt2bot").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", src / "pyproject.toml")
    shutil.copy(ROOT / "README.md", src / "README.md")
    (src / "pt2bot" / "__init__.py").write_text("")
    meta = tmp_path / "meta"
    meta.mkdir()
    code = ("import sys; from setuptools import build_meta; "
            "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))")
    subprocess.run([sys.executable, "-c", code, str(meta)], cwd=src, check=True,
                   capture_output=True, timeout=120)
    [dist] = meta.glob("pt2bot-*.dist-info")
    assert "[pytest11]" in (dist / "entry_points.txt").read_text()
    (tmp_path / "test_fx.py").write_text("def test_fx(pt2bot):\n"
                                         "    assert callable(pt2bot.assert_no_graph_breaks)\n")
    env = {**os.environ, "PYTHONPATH": str(meta)}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_fx.py"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--help"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert "--pt2bot-config=FILE" in proc.stdout


def test_the_structured_trace_stays_out_of_pytests_captured_log(project):
    # pytest attaches its capture handlers to every logger that does not propagate, torch's
    # structured-trace logger included: its records (data, no message) became rows of empty
    # `DEBUG torch.__trace` lines in a failure's "Captured log call" section.
    project.makepyfile(test_logs="""
import logging

import torch

from userpkg.model import Clean, TwoBreaks


def test_fails_after_the_checks(pt2bot):
    logging.getLogger("userpkg").warning("the user's own record")
    pt2bot.graph_breaks(TwoBreaks(), torch.randn(2, 8))
    pt2bot.recompiles(Clean(), [torch.randn(n, 8) for n in (2, 3, 5)], dynamic=False)
    assert False
""")
    result = run(project)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "Captured log call" in out and "the user's own record" in out
    assert "torch.__trace" not in out


def test_config_alone_collects_only_the_models_from_inside_the_repository(project):
    # A repository with tests of its own that need the project installed: `pytest` (the
    # script: the working directory is not on sys.path, `python -P` here) with the config
    # and no test paths runs the configured models and nothing else, and imports them from
    # the repository's root.
    from gitrepo import GitRepo

    (project.path / "pt2bot.yml").write_text(CONFIG)
    tests = project.path / "tests"
    tests.mkdir()
    (tests / "test_own.py").write_text("import userpkg.model\n\n\ndef test_own():\n    pass\n")
    GitRepo.init(project.path).commit("a repository")
    sub = project.path / "userpkg"

    def pytest_in(cwd, *args, safe_path=True):
        return subprocess.run([sys.executable, *(["-P"] if safe_path else []), "-m", "pytest",
                               *PLUGIN, "-p",
                               "no:cacheprovider", "-v", *args], cwd=cwd, capture_output=True,
                              text=True, timeout=300)

    proc = pytest_in(project.path, "--pt2bot-config", "pt2bot.yml")
    out = proc.stdout + proc.stderr
    assert "collected 3 items" in out, out
    assert "test_own" not in out and "ERROR collecting" not in out
    assert "pt2bot.yml::clean PASSED" in out and "pt2bot.yml::broken FAILED" in out
    # from a subdirectory, with the config named relative to it: the same models
    proc = pytest_in(sub, "--pt2bot-config", "../pt2bot.yml", "-k", "clean")
    assert "1 passed, 2 deselected" in proc.stdout, proc.stdout + proc.stderr
    # test paths given: those are collected too, beside the models (`python -m pytest`
    # puts the working directory on sys.path, as the repository's own tests need)
    proc = pytest_in(project.path, "--pt2bot-config", "pt2bot.yml", "tests", "-k",
                     "clean or own", safe_path=False)
    assert "tests/test_own.py" in proc.stdout and "pt2bot.yml::clean" in proc.stdout


NO_TORCH = """\
import sys

sys.modules["torch"] = None     # as if torch were not installed: `import torch` fails
"""


def test_without_torch_the_plugin_says_what_to_install(project):
    # torch comes only with pt2bot's `smoke` extra: a plain `pip install pt2bot` has the
    # plugin but not what its checks run on.
    (project.path / "conftest.py").write_text(NO_TORCH)
    (project.path / "pt2bot.yml").write_text(CONFIG)
    result = run(project, "--pt2bot-config", "pt2bot.yml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--pt2bot-config needs torch" in err and "pip install 'pt2bot[smoke]'" in err
    assert "Traceback" not in err

    project.makepyfile(test_fx="def test_fx(pt2bot):\n"
                               "    pt2bot.assert_no_graph_breaks(abs, 1)\n")
    result = run(project, "test_fx.py")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "the pt2bot fixture needs torch" in out and "pip install 'pt2bot[smoke]'" in out
    assert "ModuleNotFoundError" not in out and "Traceback" not in out
