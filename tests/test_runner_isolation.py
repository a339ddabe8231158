"""The smoke runner against misbehaving models, in real worker subprocesses.

One `run_models` call runs every crashy fixture (tests/fixtures/crashy) side by side; each
test then checks what became of one of them. The runner must turn a segfault, an abort, a
hang, an import error, a syntax error and an output flood into RUN entries, and the run as a
whole must still finish.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from pt2bot.config import Config, InputSpec, ModelConfig, RunConfig
from pt2bot.results import ModelRun, ResultsFile
from pt2bot.smoke import device, run_models, supervise
from pt2bot.smoke.env import scrub_env

pytestmark = [pytest.mark.torch, pytest.mark.slow]

CRASHY = Path(__file__).parent / "fixtures" / "crashy"
HANG_TIMEOUT_S = 5.0
SECRETS = {"GITHUB_TOKEN": "ghs_secret", "GH_TOKEN": "gho_secret",
           "ACTIONS_RUNTIME_TOKEN": "rt", "PT2BOT_TEST_PASSWORD": "pw", "HF_TOKEN": "hf"}
# What a model must not reach beyond the obvious tokens: the runner's file
# commands (writing GITHUB_ENV sets variables for every later step of the job), secrets named
# the way real workflows name them, and anything nobody put on the allow-list.
ATTACK_ENV = {"GITHUB_ENV": "/runner/_temp/set_env", "GITHUB_PATH": "/runner/_temp/add_path",
              "GITHUB_OUTPUT": "/runner/_temp/set_output", "GITHUB_STATE": "/runner/_temp/state",
              "GITHUB_STEP_SUMMARY": "/runner/_temp/summary", "GH_PAT": "ghp_x",
              "GITHUB_PAT": "ghp_y", "SLACK_WEBHOOK_URL": "https://hooks/x",
              "SENTRY_DSN": "https://k@sentry/1", "NETRC": "/home/u/.netrc",
              "DOCKER_AUTH_CONFIG": "{}", "DEPLOY_JWT": "eyJ", "GPG_SIGNING_KEY": "k",
              "INPUT_GITHUB-TOKEN": "ghs_input", "INPUT_REPO_TOKEN": "ghs_input2",
              "PT2BOT_TEST_UNLISTED": "anything"}
# ... while what torch and the model need still gets through.
NEEDED_ENV = {"LC_ALL": "C.UTF-8", "HF_HUB_OFFLINE": "1", "MKL_NUM_THREADS": "1",
              "TORCH_SHOW_CPP_STACKTRACES": "0"}


def _config(tmp: Path) -> Config:
    tiny = (InputSpec(shape=(2, 4)),)
    return Config(
        models=(
            # First, so it starts at once; its timeout covers the worker's torch import.
            ModelConfig("hangs", "crashy_models.hang:build", inputs=tiny,
                        kwargs={"pidfile": str(tmp / "hang.pids")}, timeout_s=HANG_TIMEOUT_S),
            ModelConfig("aborts", "crashy_models.abort:build", inputs=tiny),
            ModelConfig("segfaults", "crashy_models.segv:build", inputs=tiny),
            ModelConfig("missing_dep", "crashy_models.missing_dep:build", inputs=tiny),
            ModelConfig("bad_syntax", "crashy_models.bad_syntax:build", inputs=tiny),
            ModelConfig("envdump", "crashy_models.envdump:build", inputs=tiny,
                        kwargs={"path": str(tmp / "env.json")}),
            ModelConfig("floods", "crashy_models.flood:build", inputs=tiny),
        ),
        run=RunConfig(device="cpu", timeout_s=120, jobs=3, threads=1, latency=False,
                      cache_dir=str(tmp / "inductor-cache")),
    )


@pytest.fixture(scope="module")
def crashy(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("crashy")
    out = tmp / "out"
    finished: list[str] = []
    pids: dict[str, int] = {}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in {**SECRETS, **ATTACK_ENV, **NEEDED_ENV}.items():
            mp.setenv(k, v)
        # A small cap so the flood is caught within a second instead of after 64 MiB.
        mp.setattr(supervise, "LOG_CAP_BYTES", 2 * 1024 * 1024)
        parent_env = dict(os.environ)
        start = time.monotonic()
        typed = run_models(_config(tmp), repo_root=str(CRASHY), out_dir=str(out),
                           device="cpu", phases=["breaks"],
                           progress=lambda run: finished.append(run.name),
                           started=pids.__setitem__)
        elapsed = time.monotonic() - start
    assert isinstance(typed, ResultsFile)     # typed; the checks below read what --out writes
    results = typed.to_json()
    runs = {m["name"]: m for m in results["models"]}
    return {"results": results, "runs": runs, "tmp": tmp, "out": out, "elapsed": elapsed,
            "finished": finished, "parent_env": parent_env, "pids": pids}


def _assert_failed(run: dict, status: str, kind: str) -> dict:
    assert run["status"] == status, run
    assert run["error"]["kind"] == kind, run["error"]
    assert run["log"] == f"logs/{run['name']}.log"
    return run["error"]


def test_every_model_gets_a_result_and_the_header_is_filled(crashy):
    res = crashy["results"]
    assert [m["name"] for m in res["models"]] == sorted(crashy["runs"])
    assert len(res["models"]) == 7 and sorted(crashy["finished"]) == sorted(crashy["runs"])
    assert res["schema"] == "pt2bot.results/1"
    assert res["device"] == "cpu" and res["device_name"]
    assert res["torch"].startswith("2.")
    assert res["commit"] is None or len(res["commit"]) == 40
    assert res["config_digest"].startswith("sha256:") and res["shard"] == "1/1"
    for run in res["models"]:
        assert (crashy["out"] / run["log"]).is_file()


def test_abort_is_a_crash_with_sigabrt(crashy):
    err = _assert_failed(crashy["runs"]["aborts"], "error", "crash")
    assert err["signal"] == "SIGABRT" and "SIGABRT" in err["message"]


def test_segfault_is_a_crash_with_sigsegv(crashy):
    err = _assert_failed(crashy["runs"]["segfaults"], "error", "crash")
    assert err["signal"] == "SIGSEGV"


def test_hang_times_out_and_the_whole_process_group_is_gone(crashy):
    run = crashy["runs"]["hangs"]
    err = _assert_failed(run, "timeout", "timeout")
    assert f"{HANG_TIMEOUT_S:g} s" in err["message"]
    assert HANG_TIMEOUT_S <= run["duration_s"] < HANG_TIMEOUT_S + 3 * supervise.TERM_GRACE_S
    # The worker led its own group: nothing in it may survive, wherever it hung (on a busy
    # machine it may still have been importing torch when the timeout struck).
    worker_pid = crashy["pids"]["hangs"]
    assert supervise.group_members(worker_pid) == []
    assert not supervise.process_alive(worker_pid)
    pidfile = crashy["tmp"] / "hang.pids"
    if pidfile.exists():   # it reached the model, which started a child: gone too
        assert pidfile.read_text().split()[0] == str(worker_pid)
        assert not supervise.process_alive(int(pidfile.read_text().split()[1]))


def test_missing_dependency_is_an_import_error(crashy):
    err = _assert_failed(crashy["runs"]["missing_dep"], "error", "import")
    assert "pt2bot_fixture_no_such_dependency" in err["message"]


def test_syntax_error_is_an_import_error(crashy):
    err = _assert_failed(crashy["runs"]["bad_syntax"], "error", "import")
    assert "SyntaxError" in err["message"] or "invalid syntax" in err["message"]


def test_output_flood_is_stopped_and_the_log_stays_bounded(crashy):
    err = _assert_failed(crashy["runs"]["floods"], "error", "exception")
    assert "bytes of output" in err["message"]
    assert len(err["message"]) <= supervise.MESSAGE_CHARS + 1
    size = (crashy["out"] / "logs" / "floods.log").stat().st_size
    assert size < 2 * 1024 * 1024 + 8 * 1024 * 1024   # the cap plus at most a poll's worth


def test_worker_environment_is_scrubbed(crashy):
    run = crashy["runs"]["envdump"]
    assert run["status"] == "ok", run
    env = json.loads((crashy["tmp"] / "env.json").read_text())
    for name in SECRETS:
        assert name in crashy["parent_env"]  # the parent had them ...
        assert name not in env["keys"]       # ... the worker did not
    assert env["PYTHONPATH"] == str(CRASHY)
    assert env["OMP_NUM_THREADS"] == "1"
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(crashy["tmp"] / "inductor-cache")
    assert "PATH" in env["keys"]


def test_worker_cannot_reach_workflow_file_commands_or_unlisted_variables(crashy):
    run = crashy["runs"]["envdump"]
    assert run["status"] == "ok", run
    env = json.loads((crashy["tmp"] / "env.json").read_text())
    leaked = sorted(name for name in ATTACK_ENV if name in env["keys"])
    assert leaked == [], leaked
    for name in NEEDED_ENV:
        assert name in env["keys"], name


def test_parallel_jobs_overlap(crashy):
    # 7 workers at 3 a time, one of them held for the full timeout: a serial run would take
    # at least the sum; this only checks the pool really overlaps (generous for a busy box).
    durations = sum(r["duration_s"] for r in crashy["runs"].values())
    assert crashy["elapsed"] < durations


# A stand-in worker (no torch: it reaches its hang at once, so these tests are quick and
# exact): "quick" writes a RUN and exits, anything else starts a child and hangs.
QUICK_OR_HANG = """
import json, subprocess, sys, time
spec = json.load(open(sys.argv[1]))
if spec["model"]["name"] == "quick":
    json.dump({"name": "quick", "status": "ok"}, open(sys.argv[2], "w"))
    sys.exit(0)
child = subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(1)"])
print("PIDS", child.pid, flush=True)
while True:
    time.sleep(1)
"""


def test_an_interrupted_run_leaves_no_workers_behind(tmp_path):
    config = Config(models=(ModelConfig("hangs", "x:y"), ModelConfig("quick", "x:y")),
                    run=RunConfig(device="cpu", timeout_s=300, jobs=2))
    log = tmp_path / "out" / "logs" / "hangs.log"
    pids: dict[str, int] = {}

    def interrupt(run: ModelRun) -> None:
        # Stop as Ctrl-C would, once the hanging worker has surely started its child.
        deadline = time.monotonic() + 60
        while "PIDS" not in (log.read_text() if log.exists() else ""):
            assert time.monotonic() < deadline, "the stand-in worker never started"
            time.sleep(0.02)
        raise KeyboardInterrupt

    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_models(config, repo_root=str(tmp_path), out_dir=str(tmp_path / "out"), device="cpu",
                   phases=["breaks"], progress=interrupt, started=pids.__setitem__,
                   worker_argv=("-c", QUICK_OR_HANG))
    assert time.monotonic() - start < 60          # not the 300 s timeout
    child_pid = int(log.read_text().split("PIDS", 1)[1].split()[0])
    assert supervise.group_members(pids["hangs"]) == []
    assert not supervise.process_alive(pids["hangs"]) and not supervise.process_alive(child_pid)


def test_timeout_kills_the_workers_children_too(tmp_path):
    # The runner's timeout must take down the child the worker started, not just the worker.
    config = Config(models=(ModelConfig("spawner", "x:y", timeout_s=2.0),),
                    run=RunConfig(device="cpu"))
    pids: dict[str, int] = {}
    results = run_models(config, repo_root=str(tmp_path), out_dir=str(tmp_path / "out"),
                         device="cpu", phases=["breaks"], started=pids.__setitem__,
                         worker_argv=("-c", QUICK_OR_HANG)).to_json()
    [run] = results["models"]
    assert (run["status"], run["error"]["kind"]) == ("timeout", "timeout")
    log = (tmp_path / "out" / "logs" / "spawner.log").read_text()
    child_pid = int(log.split("PIDS", 1)[1].split()[0])
    assert supervise.group_members(pids["spawner"]) == []
    assert not supervise.process_alive(pids["spawner"]) and not supervise.process_alive(child_pid)
    assert "PIDS" in run["error"]["message"]     # the log's tail is the message


def test_device_resolution_probes_torch_in_a_child_process(monkeypatch):
    env = scrub_env(os.environ, repo_root=str(CRASHY))
    assert device.resolve_device("cpu", env).device == "cpu"
    # Force the real probe (a child process importing torch) even on a machine with no
    # NVIDIA device nodes: on this CPU build of torch it must see no GPU.
    monkeypatch.setattr(device, "may_have_cuda", lambda: True)
    probed: list[str | None] = []
    real_probe = device.probe_cuda

    def probe_once(env):   # one torch import (seconds) serves the three questions below
        if not probed:
            probed.append(real_probe(env))
        return probed[0]

    monkeypatch.setattr(device, "probe_cuda", probe_once)
    info = device.resolve_device("auto", env)
    has_gpu = probed[0] is not None
    if (device.torch_version() or "").endswith("+cpu"):
        assert not has_gpu
    assert info.device == ("cuda" if has_gpu else "cpu") and info.name
    if not has_gpu:
        with pytest.raises(device.UserError, match="no CUDA device"):
            device.resolve_device("cuda", env)
    with pytest.raises(device.UserError, match="--device"):
        device.resolve_device("tpu", env)


def test_cuda_probe_reports_the_device_a_child_process_sees(tmp_path):
    # No GPU here: a fake `torch` first on the child's path stands in for a CUDA build.
    fake = tmp_path / "fake" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "class cuda:\n"
        "    is_available = staticmethod(lambda: True)\n"
        "    get_device_name = staticmethod(lambda i: 'Fake H200 #%d' % i)\n")
    env = scrub_env(os.environ, repo_root=str(tmp_path / "fake"))
    assert device.probe_cuda(env) == "Fake H200 #0"
    (fake / "__init__.py").write_text("raise ImportError('broken install')\n")
    assert device.probe_cuda(env) is None        # a broken torch means no GPU, not a crash


def test_a_result_written_before_a_crash_at_exit_is_kept_and_the_crash_noted(tmp_path):
    # Some native libraries crash in their exit handlers after the work is done.
    code = ("import json, os, sys\n"
            "json.dump({'name': 'm', 'status': 'ok', 'graph_count': 1}, open(sys.argv[2], 'w'))\n"
            "os.abort()\n")
    config = Config(models=(ModelConfig("m", "x:y"),), run=RunConfig(device="cpu"))
    [run] = run_models(config, repo_root=str(tmp_path), out_dir=str(tmp_path / "out"),
                       device="cpu", worker_argv=("-c", code)).to_json()["models"]
    assert run["status"] == "ok" and run["graph_count"] == 1
    assert run["phase_errors"][-1]["phase"] == "exit"
    assert "SIGABRT after writing its result" in run["phase_errors"][-1]["message"]


def test_a_worker_that_exits_0_without_a_result_is_reported_as_such(tmp_path):
    config = Config(models=(ModelConfig("m", "x:y"),), run=RunConfig(device="cpu"))
    [run] = run_models(config, repo_root=str(tmp_path), out_dir=str(tmp_path / "out"),
                       device="cpu", worker_argv=("-c", "print('bye')")).to_json()["models"]
    assert (run["status"], run["error"]["kind"]) == ("error", "exception")
    assert run["error"]["message"].startswith("the worker wrote no result")
    assert "bye" in run["error"]["message"]
