"""The Action's `mode: audit` path end to end: action.yml's own steps run as a runner would.

Both composite steps of action.yml are read from the file and run with bash, with the env a
runner gives them (`${{ inputs.* }}` and `${{ github.action_path }}` resolved from the step's
`env:` block, GITHUB_OUTPUT / GITHUB_STEP_SUMMARY / GITHUB_WORKSPACE / RUNNER_TEMP set, the
working directory the checked-out repository). The install step runs real pip against a copy
of this repository as the action path, in dry-run mode with a report (no network, nothing
changed in the test venv): it must ask for the `charts` extra in audit mode only. The run step
audits two commits of a real git repo (real smoke workers, eager backend) and publishes the
tracking issue to the fake GitHub: the HTML report must embed the PNG charts, the PNG must be
a real chart (right size, a plotted line), and the issue keeps its Mermaid charts.
"""
from __future__ import annotations

import base64
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakegithub import WRITE_TOKEN, FakeGitHub
from pt2bot.audit.report import AUDIT_MARKER
from test_charts import assert_is_a_chart

pytestmark = [pytest.mark.torch, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """\
version: 1
models:
  - name: net
    entry: pkg.model:Net
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: false
run: {device: cpu, backend: eager, latency: false, timeout_s: 240}
"""
CLEAN = """\
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).relu()
"""
BROKEN = CLEAN.replace("        return self.fc(x).relu()\n",
                       "        y = self.fc(x)\n"
                       "        if y.sum().item() > 0:\n"
                       "            return y * 2\n"
                       "        return y - 1\n")


def _steps() -> dict[str, dict[str, Any]]:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    steps = action["runs"]["steps"]
    return {"install": steps[0], "run": next(s for s in steps if s.get("id") == "run"),
            "inputs": action["inputs"]}


def _step_env(step: dict[str, Any], inputs: dict[str, str], defaults: dict[str, Any],
              runner: dict[str, str]) -> dict[str, str]:
    """The env block as the runner resolves it: only `${{ inputs.X }}` / `${{ github.X }}`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    env.update(runner)
    for key, expr in step["env"].items():
        m = re.fullmatch(r"\$\{\{ (inputs|github)\.([\w-]+) \}\}", str(expr))
        assert m, f"{key}: {expr} is not a plain input/context reference"
        if m.group(1) == "github":
            env[key] = runner[f"github.{m.group(2)}"]
        else:
            name = m.group(2)
            env[key] = inputs.get(name.replace("-", "_"), str(defaults[name].get("default", "")))
    return {k: v for k, v in env.items() if not k.startswith("github.")}


def _action_copy(tmp_path: Path) -> Path:
    """The action path: this repository's tracked files (what `uses: owner/pt2bot@sha` gets)."""
    dest = tmp_path / "action"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--", "pyproject.toml",
                            "README.md", "action.yml", "pt2bot"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    return dest


def _install(tmp_path: Path, mode: str) -> dict[str, Any]:
    """The install step for real, as a pip dry run with a JSON report of what it installs."""
    s = _steps()
    report = tmp_path / f"pip-{mode}.json"
    runner = {"github.action_path": str(_action_copy(tmp_path)),
              # pip reads its options from the environment: no network, no change to the venv
              "PIP_DRY_RUN": "1", "PIP_REPORT": str(report), "PIP_NO_INDEX": "1",
              "PIP_NO_BUILD_ISOLATION": "0"}
    env = _step_env(s["install"], {"mode": mode, "python": sys.executable}, s["inputs"], runner)
    proc = subprocess.run(["bash", "-c", s["install"]["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [item] = [i for i in json.loads(report.read_text())["install"]
              if i["metadata"]["name"] == "pt2bot"]
    return item


def test_install_step_asks_for_the_charts_extra_in_audit_mode_only(tmp_path):
    pytest.importorskip("matplotlib")   # a dry run without the index resolves installed dists
    try:
        importlib.metadata.version("tlparse")   # a wheel with a binary: nothing to import
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("tlparse is not installed")
    audit = _install(tmp_path, "audit")
    # tlparse renders the compile reports in review and audit (pt2bot/smoke/compile_report.py)
    assert audit["requested"] and audit["requested_extras"] == ["charts", "tlparse"]
    assert any(r.startswith("matplotlib") and 'extra == "charts"' in r
               for r in audit["metadata"]["requires_dist"])
    assert _install(tmp_path / "review", "review").get("requested_extras") == ["tlparse"]
    assert not _install(tmp_path / "publish", "publish").get("requested_extras")


def _run_step(repo: Path, runner: dict[str, str], **inputs: str) -> subprocess.CompletedProcess[str]:
    s = _steps()
    env = _step_env(s["run"], {"python": sys.executable, **inputs}, s["inputs"], runner)
    return subprocess.run(["bash", "-c", s["run"]["run"]], env=env, cwd=repo,
                          capture_output=True, text=True, timeout=600)


def test_action_audit_embeds_png_charts_and_keeps_mermaid_in_the_issue(git_repo, tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("PIL")
    repo = git_repo
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    with FakeGitHub() as gh:
        runner = {"GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(repo.path),
                  "RUNNER_TEMP": str(tmp_path), "GITHUB_API_URL": gh.base_url,
                  "GITHUB_REPOSITORY": gh.full_name, "GITHUB_EVENT_NAME": "schedule",
                  "GITHUB_SERVER_URL": "https://github.com", "GITHUB_RUN_ID": "7"}
        procs = []
        for night, source in ((1, CLEAN), (2, BROKEN)):
            repo.write("pkg/model.py", source)
            repo.commit(f"night {night}")
            out = tmp_path / f"github_output{night}"
            summary = tmp_path / f"step_summary{night}"
            runner.update(GITHUB_OUTPUT=str(out), GITHUB_STEP_SUMMARY=str(summary))
            procs.append(_run_step(repo.path, runner, mode="audit", out_dir="pt2bot-audit",
                                   history=".pt2bot-history/history.sqlite", publish="true",
                                   fail_on="never", token=WRITE_TOKEN))
            assert procs[-1].returncode == 0, procs[-1].stdout + procs[-1].stderr
        assert out.read_text().splitlines() == ["conclusion=failure", "report-path=pt2bot-audit"]
        [issue] = [i for i in gh.issues.values() if AUDIT_MARKER in (i["body"] or "")]
        assert gh.violations == []
    # the tracking issue keeps its Mermaid charts (GitHub renders them; no images to host)
    assert "```mermaid" in issue["body"] and "xychart-beta" in issue["body"]
    assert "GB0124" in issue["body"]
    assert "```mermaid" in summary.read_text()

    audit = repo.path / "pt2bot-audit"
    report = json.loads((audit / "report.json").read_text())
    assert report["audit"]["charts"] == {"graph_breaks": "charts/graph_breaks.png",
                                         "compile": "charts/compile.png",
                                         "captured_ops": "charts/captured_ops.png"}
    for name in ("compile", "captured_ops"):
        assert_is_a_chart((audit / "charts" / f"{name}.png").read_bytes())
    assert report["audit"]["charts_note"] is None
    png = (audit / "charts" / "graph_breaks.png").read_bytes()
    page = (audit / "report.html").read_text(encoding="utf-8")
    [src] = re.findall(r'<img alt="graph_breaks trend" src="data:image/png;base64,([A-Za-z0-9+/=]+)"',
                       page)
    assert base64.b64decode(src) == png      # the page is self-contained: the same chart
    assert_is_a_chart(png)
