"""The smoke runner's pure parts: model selection, sharding, env scrubbing, exit
classification, RUN normalisation, merging. No subprocesses, no torch."""
from __future__ import annotations

import random
import signal

import pytest

from pt2bot.cli import sigterm_as_exit
from pt2bot.config import Config, ModelConfig
from pt2bot.errors import UserError
from pt2bot.results import RESULTS_SCHEMA
from pt2bot.shard import merge_results, parse_shard, shard_models
from pt2bot.smoke import pick_models, runner, supervise
from pt2bot.smoke.env import scrub_env
from pt2bot.smoke.runner import log_name, status_line


# The supervisor speaks pt2bot.results records; these tests read the JSON a RUN carries.
def classify_exit(*args, **kw) -> dict:
    return supervise.classify_exit(*args, **kw).to_json()


def _normalise_run(*args, **kw) -> dict:
    return supervise.normalise_run(*args, **kw).to_json()


def _read_run(path: str) -> dict | str:
    run = supervise.read_run(path)
    return run if isinstance(run, str) else run.to_json()


def _models(*names: str) -> tuple[ModelConfig, ...]:
    return tuple(ModelConfig(name=n, entry=f"pkg.{n}:build") for n in names)


# ------------------------------------------------------------------ selection and shards

def test_pick_models_keeps_config_order_and_rejects_unknown_names_listing_known():
    cfg = Config(models=_models("b", "a", "c"))
    assert [m.name for m in pick_models(cfg, None)] == ["b", "a", "c"]
    assert pick_models(cfg, []) == []               # an empty selection runs nothing
    assert [m.name for m in pick_models(cfg, ["c", "b"])] == ["b", "c"]
    with pytest.raises(UserError) as e:
        pick_models(cfg, ["a", "nope"])
    assert "'nope'" in str(e.value) and "known models: b, a, c" in str(e.value)
    with pytest.raises(UserError, match=r"\(none configured\)"):
        pick_models(Config(), ["x"])


@pytest.mark.parametrize("text,expected", [("1/1", (1, 1)), ("2/3", (2, 3)), (" 3 / 3 ", (3, 3)),
                                           (None, (1, 1)), ((2, 4), (2, 4))])
def test_parse_shard_accepts_i_of_n(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "1-3", "", "-1/2", "2"])
def test_parse_shard_rejects_nonsense_with_a_usage_error(text):
    with pytest.raises(UserError, match="--shard"):
        parse_shard(text)


@pytest.mark.parametrize("count", [1, 2, 3, 5, 8, 13])
def test_shards_partition_the_models_deterministically_and_balanced(count):
    names = [f"model_{k:02d}" for k in range(13)]
    models = _models(*names)
    shards = [[m.name for m in shard_models(models, i, count)] for i in range(1, count + 1)]
    flat = [n for s in shards for n in s]
    assert sorted(flat) == sorted(names)          # every model ...
    assert len(flat) == len(set(flat))            # ... exactly once
    sizes = [len(s) for s in shards]
    assert max(sizes) - min(sizes) <= 1           # balanced
    # Deterministic: independent of the order the config lists the models in.
    shuffled = list(models)
    random.Random(7).shuffle(shuffled)
    again = [[m.name for m in shard_models(shuffled, i, count)] for i in range(1, count + 1)]
    assert again == shards


# ------------------------------------------------------------------ environment

def test_scrub_env_drops_secrets_and_git_leaks_and_sets_the_worker_variables():
    env = {
        "GITHUB_TOKEN": "t", "GH_TOKEN": "t", "ACTIONS_RUNTIME_TOKEN": "t",
        "ACTIONS_ID_TOKEN_REQUEST_URL": "u", "ACTIONS_CACHE_URL": "u", "HF_TOKEN": "t",
        "AWS_SECRET_ACCESS_KEY": "s", "DB_PASSWORD": "p", "OPENAI_API_KEY": "k",
        "MY_CREDENTIALS": "c", "GIT_DIR": "/elsewhere", "PYTHONPATH": "/evil",
        "PYTHONSTARTUP": "/evil.py",
        "PATH": "/usr/bin", "HOME": "/home/u", "TOKENIZERS_PARALLELISM": "false",
        "GITHUB_REPOSITORY": "o/r", "TORCHINDUCTOR_CACHE_DIR": "/keep", "OMP_NUM_THREADS": "9",
    }
    out = scrub_env(env, repo_root="/repo", threads=1)
    for gone in ("GITHUB_TOKEN", "GH_TOKEN", "ACTIONS_RUNTIME_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
                 "ACTIONS_CACHE_URL", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "DB_PASSWORD",
                 "OPENAI_API_KEY", "MY_CREDENTIALS", "GIT_DIR", "PYTHONSTARTUP"):
        assert gone not in out, gone
    assert out["PYTHONPATH"] == "/repo"
    assert out["OMP_NUM_THREADS"] == "1"
    assert out["TORCHINDUCTOR_CACHE_DIR"] == "/keep"       # kept when the config sets none
    for kept in ("PATH", "HOME", "TOKENIZERS_PARALLELISM", "GITHUB_REPOSITORY"):
        assert out[kept] == env[kept]
    out = scrub_env(env, repo_root="/repo", threads=None, cache_dir="/ci-cache")
    assert out["TORCHINDUCTOR_CACHE_DIR"] == "/ci-cache"
    assert out["OMP_NUM_THREADS"] == "9"                     # threads unset: leave it alone


@pytest.mark.parametrize("name", [
    "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_STEP_SUMMARY",
    "GH_PAT", "GITHUB_PAT", "SLACK_WEBHOOK_URL", "SENTRY_DSN", "NETRC", "DOCKER_AUTH_CONFIG",
    "DEPLOY_JWT", "GPG_SIGNING_KEY", "INPUT_GITHUB-TOKEN", "INPUT_REPO_TOKEN", "HF_TOKEN",
    "TORCH_HUB_API_KEY", "LD_PRELOAD", "HTTPS_PROXY", "SOME_UNLISTED_NAME", "PYTHONUSERBASE"])
def test_scrub_env_keeps_only_the_allow_list_minus_secrets(name):
    assert name not in scrub_env({name: "x", "PATH": "/bin"}, repo_root="/repo")


@pytest.mark.parametrize("name", [
    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
    "TORCH_LOGS", "TORCHINDUCTOR_MAX_AUTOTUNE", "TRITON_CACHE_DIR", "OMP_NUM_THREADS",
    "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "PYTHONHASHSEED", "VIRTUAL_ENV", "CC", "CXX",
    "XDG_CACHE_HOME", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "LD_LIBRARY_PATH", "CI"])
def test_scrub_env_passes_what_torch_and_the_model_need(name):
    assert scrub_env({name: "v"}, repo_root="/repo")[name] == "v"


# ------------------------------------------------------------------ exit classification

_IMPORT_TAIL = '''Traceback (most recent call last):
  File "/usr/lib/python3/importlib/__init__.py", line 126, in import_module
  File "/repo/pkg/models.py", line 3, in <module>
    import flash_attn
ModuleNotFoundError: No module named 'flash_attn'
'''


def test_classify_exit_names_the_signal_of_a_crash():
    err = classify_exit(-signal.SIGABRT, "boom", repo_root="/repo", oom_before=None, oom_after=None)
    assert (err["kind"], err["signal"]) == ("crash", "SIGABRT")
    assert "SIGABRT" in err["message"] and "boom" in err["message"]
    err = classify_exit(-signal.SIGSEGV, "", repo_root="/repo", oom_before=0, oom_after=0)
    assert (err["kind"], err["signal"]) == ("crash", "SIGSEGV")


def test_classify_exit_calls_sigkill_oom_only_when_the_cgroup_counted_an_oom_kill():
    err = classify_exit(-signal.SIGKILL, "", repo_root="/repo", oom_before=3, oom_after=4)
    assert err["kind"] == "oom"
    err = classify_exit(-signal.SIGKILL, "", repo_root="/repo", oom_before=3, oom_after=3)
    assert (err["kind"], err["signal"]) == ("crash", "SIGKILL")
    assert "OOM" in err["message"]
    err = classify_exit(-signal.SIGKILL, "", repo_root="/repo", oom_before=None, oom_after=None)
    assert err["kind"] == "crash"


def test_classify_exit_finds_import_errors_and_their_user_location():
    err = classify_exit(1, _IMPORT_TAIL, repo_root="/repo", oom_before=None, oom_after=None)
    assert err["kind"] == "import"
    assert (err["path"], err["line"]) == ("pkg/models.py", 3)
    assert "No module named 'flash_attn'" in err["message"]
    err = classify_exit(1, "Traceback ...\nValueError: bad", repo_root="/repo",
                        oom_before=None, oom_after=None)
    assert err["kind"] == "exception" and err["path"] is None
    assert classify_exit(1, "MemoryError", repo_root="/r", oom_before=None,
                         oom_after=None)["kind"] == "oom"


def test_error_messages_are_bounded():
    err = classify_exit(1, "x" * 100_000, repo_root="/r", oom_before=None, oom_after=None)
    assert len(err["message"]) <= supervise.MESSAGE_CHARS + 1


def test_read_tail_reads_only_the_end_of_a_big_log(tmp_path):
    log = tmp_path / "big.log"
    log.write_text("".join(f"line {k}\n" for k in range(200_000)))
    tail = supervise.read_tail(str(log), limit=1000)
    assert tail.endswith("line 199999\n") and len(tail) <= 1000
    assert tail.startswith("line ")                     # no partial first line
    assert supervise.read_tail(str(tmp_path / "missing.log")) == ""


# ------------------------------------------------------------------ RUN normalisation

def test_normalise_run_pins_runner_owned_fields_and_repairs_bad_errors():
    run = _normalise_run({"name": "evil/../../x", "status": "error", "error": {"kind": "??"}},
                                name="m", log_rel="logs/m.log", duration_s=1.23456)
    assert run["name"] == "m" and run["log"] == "logs/m.log" and run["duration_s"] == 1.235
    assert run["error"]["kind"] == "exception"
    run = _normalise_run({"name": "m", "status": "ok", "error": {"kind": "crash"}},
                                name="m", log_rel="logs/m.log", duration_s=1.0)
    assert "error" not in run                         # present only for error/timeout


def test_read_run_rejects_what_is_not_a_run(tmp_path):
    p = tmp_path / "out.json"
    assert "no result" in _read_run(str(p))
    p.write_text("{not json")
    assert "not valid JSON" in _read_run(str(p))
    p.write_text("[1, 2]")
    assert "not a JSON object" in _read_run(str(p))
    p.write_text('{"status": "fine"}')
    assert "invalid status" in _read_run(str(p))
    p.write_text('{"name": "m", "status": "ok"}')
    assert _read_run(str(p)) == {"name": "m", "status": "ok"}


def test_log_names_are_safe_and_do_not_collide():
    assert log_name("tiny_gpt") == "tiny_gpt.log"
    a, b = log_name("a/b"), log_name("a_b")
    assert a != b and "/" not in a and a.endswith(".log")
    assert not log_name("../..").startswith(".")


def test_status_line_says_what_failed_and_where():
    line = status_line({"name": "m", "status": "error", "duration_s": 2.0, "log": "logs/m.log",
                        "error": {"kind": "crash", "signal": "SIGSEGV", "path": "p.py", "line": 4}})
    assert line == "pt2bot run: m: error (crash SIGSEGV at p.py:4) in 2.0 s; log: logs/m.log"
    # the reason too, the model's own text: one line, no workflow command, capped
    line = status_line({"name": "m", "status": "error", "duration_s": 2.0, "log": "logs/m.log",
                        "error": {"kind": "exception", "path": "p.py", "line": 4,
                                  "message": "forward() raised ValueError: no\n::error::owned " + "x" * 900}})
    assert line.startswith("pt2bot run: m: error (exception at p.py:4): forward() raised ValueError: "
                           "no\\n::error::owned xxx"), line   # the newline shown, not written
    assert "\n" not in line and len(line) < 520 and line.endswith("… in 2.0 s; log: logs/m.log"), line
    line = status_line({"name": "m", "status": "ok", "duration_s": 1.0, "graph_breaks": [{}, {}]})
    assert line == "pt2bot run: m: ok, 2 graph break(s); 1.0 s"
    # where they are, each line once (a new user's V-JEPA run read "2 graph break(s)" for one
    # `with` line that the review then folded away)
    line = status_line({"name": "m", "status": "ok", "duration_s": 1.0, "graph_breaks": [
        {"gb": "GB0208", "path": "src/m.py", "line": 67}, {"gb": "GB0142", "path": "src/m.py", "line": 67},
        {"gb": "GB0170", "path": "src/u.py", "line": 19}]})
    assert line == "pt2bot run: m: ok, 3 graph break(s) at src/m.py:67 (GB0142, GB0208), src/u.py:19 (GB0170); 1.0 s"
    # and how many recompiles are in the frames the breaks split off (frame 0 is the model's own)
    case = {"shape": {"batch": 3}, "recompiles": 3, "reasons": [
        {"guard": "B == 2", "kind": "guard", "compile_id": "0/1"},
        {"guard": "size mismatch", "kind": "size_mismatch", "compile_id": "2/1"},
        {"guard": "size mismatch", "kind": "size_mismatch", "compile_id": "3/1"},
        {"guard": "torch's own", "kind": "size_one", "compile_id": "4/1"}]}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [{"gb": "GB0142", "path": "src/m.py", "line": 67}],
                        "recompiles": {"count": 3, "size_one": 1, "cases": [case]}})
    assert line.startswith("pt2bot run: m: ok, 1 graph break(s) at src/m.py:67 (GB0142), 3 recompile(s) "
                           "(2 of them in frames the breaks split off)"), line
    # what the model ran into, not only that it ran: recompiles and a failed export
    line = status_line({"name": "m", "status": "ok", "duration_s": 1.0, "graph_breaks": [],
                        "recompiles": {"count": 3},
                        "export": {"ok": False, "kind": "data_dependent", "path": "p.py", "line": 9}})
    assert line == "pt2bot run: m: ok, 0 graph break(s), 3 recompile(s), export fails (data_dependent at p.py:9); 1.0 s"
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "recompiles": {"count": 0},
                        "export": {"ok": True}})
    assert line == "pt2bot run: m: ok, 0 graph break(s), 0 recompile(s), exports"
    # torch's own recompile for a size of 1 is counted apart, and said (nanochat's batch 1 -> 3
    # read "0 recompile(s)", though batch 1 is what its generation feeds)
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "recompiles": {"count": 0, "size_one": 1},
                        "export": {"ok": True}})
    assert line == ("pt2bot run: m: ok, 0 graph break(s), 0 recompile(s) (and 1 for a size of 1, which torch "
                    "always specialises), exports"), line
    # an exported program that raises on other sizes is no plain "exports" (complextorch's mean
    # over range x doppler guards on their product)
    cases = [{"shape": {"r": r}, "match": r == 16,
              **({} if r == 16 else {"error": "AssertionError: Guard failed: z.size()[2] == 16"})}
             for r in (16, 24, 32)]
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "recompiles": {"count": 0},
                        "export": {"ok": True, "cases": cases}})
    assert line == ("pt2bot run: m: ok, 0 graph break(s), 0 recompile(s), exports, but the exported program "
                    "fails on 2 of the 3 shape cases (AssertionError: Guard failed: z.size()[2] == 16)")
    # an export that fails on the configured dims where the shape advice's own dims export:
    # the run says those (guided-diffusion's `res` without `multiple_of: 4`, blamed on a guard line)
    advice = {"export": {"ok": True, "cases": [{"shape": {"res": 16}, "match": True}]},
              "compile": {"reused": False}, "code": {"yaml": "dynamic:\n  batch: null\n  res: {multiple_of: 4}"}}
    failed = {"ok": False, "kind": "constraint_violation", "path": "unet.py", "line": 651}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "export": failed, "shape_advice": advice})
    assert line.endswith("export fails (constraint_violation at unet.py:651); the shape advice's dims export: "
                         "dynamic: {batch: null, res: {multiple_of: 4}} in pt2bot.yml"), line
    # a dim that cannot be dynamic is a comment line of that YAML: counted, not inlined (DINOv2's
    # read "dynamic: {batch: null, # x.shape[2]: cannot be dynamic (...")
    pinned = {**advice, "code": {"yaml": "dynamic:\n  batch: null\n  # x.shape[2]: cannot be dynamic (h)\n"
                                         "  # x.shape[3]: cannot be dynamic (w)"}}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "export": failed, "shape_advice": pinned})
    assert line.endswith("the shape advice's dims export: dynamic: {batch: null} in pt2bot.yml (2 more dims "
                         "static: see the shape advice)"), line
    # nor a dim's own trailing comment (DETR's torch-only multiple ran on inside the braces)
    said = {**advice, "code": {"yaml": "dynamic:\n  width: {multiple_of: 16}  # the multiple is for pt2bot's "
                                       "own export, which takes a Dim; the model needs none (Dim.AUTO)"}}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "export": failed, "shape_advice": said})
    assert line.endswith("the shape advice's dims export: dynamic: {width: {multiple_of: 16}} in pt2bot.yml"), line
    # an exported program that holds on some cases says which: those with the static dims' sizes
    # (a new V-JEPA user read "holding on 3 of the 6 shape cases" as an export half broken)
    half = {**advice, "code": {"yaml": "dynamic:\n  seq: null\n  # x.shape[0]: cannot be dynamic (batch)"},
            "export": {"ok": True, "cases": [
        {"shape": {"batch": b, "seq": s}, "match": b == 2, **({} if b == 2 else {"error": "Guard failed"})}
        for b in (2, 3) for s in (16, 32, 72)]}}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "export": failed, "shape_advice": half})
    assert line.endswith("the shape advice's dims export, holding on 3 of the 6 shape cases (those with "
                         "batch = 2): dynamic: {seq: null} in pt2bot.yml (1 more dim static: see the shape "
                         "advice)"), line
    # not where the advice's dims are the configured ones, nor where its export failed too
    for other in ({**advice, "compile": {"reused": True}}, {**advice, "export": {"ok": False}}):
        line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "export": failed, "shape_advice": other})
        assert line.endswith("export fails (constraint_violation at unet.py:651)"), line
    from pt2bot.report.summary import _export_cell
    assert _export_cell({"export": {"ok": True, "cases": cases}}) == "⚠️ exports, fails on 2 of 3 cases"
    # a loss of NaN on every case (torchnmf's KL of a standard normal target) said beside "ok"
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "accuracy": [],
                        "nonfinite": [{"batch": 2}, {"batch": 4}]})
    assert line == "pt2bot run: m: ok, 0 graph break(s); an output is NaN or inf on shape cases batch=2, batch=4"
    # a model trained compiled whose every case raised read "ok, 8 recompile(s)" (a new
    # user's flow with `train: true`): what was not measured is said, the count left out
    err = "TypeError: Multiple dispatch failed for 'torch._ops.aten.detach.default'\n::error::x"
    line = status_line({"name": "m", "status": "ok", "duration_s": 1.0, "graph_breaks": [],
                        "recompiles": {"count": 8, "cases": [{"shape": {"b": 2}, "error": err},
                                                            {"shape": {"b": 4}, "error": err}]},
                        "phase_errors": [{"phase": "latency", "kind": "TypeError",
                                          "message": err.split(": ", 1)[1]}]})
    assert line == ("pt2bot run: m: ok, 0 graph break(s); not measured: the shape matrix "
                    "(recompiles): every case raised TypeError: Multiple dispatch failed for "
                    "'torch._ops.aten.detach.default'; latency: TypeError: Multiple dispatch "
                    "failed for 'torch._ops.aten.detach.default'; 1.0 s"), line
    # a dim declared dynamic that the code specialises (DETR's batch): said on the line, where
    # only the advice's YAML comment had it
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "recompiles": {"count": 1},
                        "specialized": [{"dim": "batch", "value": 2, "path": "util/misc.py", "line": 316}]})
    assert line == ("pt2bot run: m: ok, 0 graph break(s), 1 recompile(s); batch is declared dynamic but under "
                    "compile the code specialises it to 2 at util/misc.py:316 (`mark_dynamic` raises there: measured "
                    "with it marked weakly)"), line
    # pinned in code resumed after a break (ESM-2's contact head at modules.py:343, after the
    # padding test's break at esm2.py:108, which with the break gone stays dynamic)
    brk = {"gb": "GB0170", "path": "esm/model/esm2.py", "line": 108, "function": "forward"}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [brk], "recompiles": {"count": 0},
                        "specialized": [{"dim": "batch", "value": 2, "path": "esm/modules.py", "line": 343,
                                         "resumed_after": {"path": "esm/model/esm2.py", "line": 108}}]})
    assert ("batch is declared dynamic but under compile the code specialises it to 2 at esm/modules.py:343, "
            "in code dynamo resumes after the graph break at esm/model/esm2.py:108, which hands that code "
            "its tensors with no dynamic mark: the break may be what pins it (`mark_dynamic` raises there: "
            "measured with it marked weakly)") in line, line
    # where the repository's code raised, when the worker placed it (a new user's dynamic
    # `samples` raised "not simple sympy type" at their own `unfold` on every case)
    at = {"path": "mixnet/model.py", "line": 22}
    line = status_line({"name": "m", "status": "ok", "graph_breaks": [], "recompiles": {"count": 0, "cases": [
        {"shape": {"b": 2}, "error": "AssertionError: not simple sympy type", "error_at": at}]}})
    assert line.endswith("every case raised AssertionError: not simple sympy type at mixnet/model.py:22"), line
    # the time is its own clause, not the export's ("exports in 157.4 s" read as an export of
    # 157 s), with the phase that took most of it: a new user's UNet spent 119 s timing latency
    line = status_line({"name": "m", "status": "ok", "duration_s": 157.42, "graph_breaks": [],
                        "recompiles": {"count": 0}, "export": {"ok": True},
                        "phase_s": {"breaks": 1.3, "matrix": 31.0, "export": 2.1, "latency": 119.05}})
    assert line == ("pt2bot run: m: ok, 0 graph break(s), 0 recompile(s), exports; 157.4 s "
                    "(latency 119.0 s of it)"), line


def test_status_line_names_the_log_from_where_the_user_ran_it(tmp_path, monkeypatch):
    """The results file stores the log relative to itself; `pt2bot run --out ../out/r.json`
    run from a checkout must print a path that opens from that checkout."""
    (tmp_path / "repo").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    line = status_line({"name": "m", "status": "error", "log": "logs/m.log",
                        "error": {"kind": "import"}}, str(tmp_path / "out"))
    assert line.endswith("; log: ../out/logs/m.log")


# ------------------------------------------------------------------ merge

def _results(shard: str, *names: str, **over) -> dict:
    base = {"schema": RESULTS_SCHEMA, "commit": "a" * 40, "torch": "2.13.0+cpu",
            "python": "3.11", "device": "cpu", "device_name": "CPU", "backend": "inductor",
            "config_digest": "sha256:abc", "created": f"2025-01-0{shard[0]}T00:00:00+00:00",
            "shard": shard, "models": [{"name": n, "status": "ok"} for n in names]}
    base.update(over)
    return base


def test_merge_joins_shards_sorted_and_marks_a_complete_set():
    merged = merge_results([_results("2/2", "d", "b"), _results("1/2", "c", "a")])
    assert [m["name"] for m in merged["models"]] == ["a", "b", "c", "d"]
    assert merged["shard"] == "1/1"
    assert merged["created"] == "2025-01-02T00:00:00+00:00"
    assert merged["config_digest"] == "sha256:abc" and merged["torch"] == "2.13.0+cpu"
    partial = merge_results([_results("1/3", "a"), _results("3/3", "c")])
    assert partial["shard"] == "1/3,3/3"


@pytest.mark.parametrize("key,value", [("config_digest", "sha256:other"), ("torch", "2.12.0"),
                                       ("commit", "b" * 40), ("device", "cuda")])
def test_merge_refuses_shards_of_different_runs(key, value):
    with pytest.raises(UserError, match=key):
        merge_results([_results("1/2", "a"), _results("2/2", "b", **{key: value})],
                      labels=["one.json", "two.json"])


def test_merge_refuses_duplicates_and_foreign_files():
    with pytest.raises(UserError, match="'a' is in both one.json and two.json"):
        merge_results([_results("1/2", "a"), _results("2/2", "a")], labels=["one.json", "two.json"])
    with pytest.raises(UserError, match="not a pt2bot.results/1"):
        merge_results([_results("1/2", "a"), {"schema": "pt2bot.report/1", "models": []}])
    with pytest.raises(UserError, match="no results"):
        merge_results([])


def test_merge_refuses_a_model_entry_that_is_not_an_object_read_or_not():
    # A typed file keeps such an entry aside (in `extra`), where a merge would lose it.
    from pt2bot.results import ResultsFile

    junk = _results("2/2", "b")
    junk["models"].append("c")
    for part in (junk, ResultsFile.from_json(junk)):
        with pytest.raises(UserError, match="two.json: a model entry has no name"):
            merge_results([_results("1/2", "a"), part], labels=["one.json", "two.json"])


def test_sigterm_during_a_run_becomes_systemexit_and_the_handler_is_restored():
    import os
    import time

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as e:
        with sigterm_as_exit():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)   # the handler interrupts this at once
    assert e.value.code == 128 + signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is before


def test_jobs_carry_the_spec_the_worker_expects(tmp_path):
    from pt2bot.config import InputSpec, RunConfig

    cfg_dir = tmp_path / "project"
    cfg_dir.mkdir()
    config = Config(path=str(cfg_dir / "pt2bot.yml"),
                    models=(ModelConfig("a", "pkg.m:build", inputs=(InputSpec(shape=("b", 4)),),
                                        shapes={"b": (1, 2)}, timeout_s=7),
                            ModelConfig("b/x", "pkg.m:other")),
                    run=RunConfig(timeout_s=99, threads=2, cache_dir=".cache/inductor"))
    worktree = tmp_path / "base-worktree"
    jobs = runner.build_jobs(config, config.models, repo_root=str(worktree),
                             out_dir=str(tmp_path / "out"), work_dir=str(tmp_path),
                             device="cpu", phases=["breaks", "export"], environ={"PATH": "/bin"})
    a, b = jobs
    assert a.spec["repo_root"] == str(worktree) and a.spec["device"] == "cpu"
    assert a.spec["phases"] == ["breaks", "export"]
    assert a.spec["model"]["inputs"] == [{"shape": ["b", 4], "dtype": "float32", "low": None,
                                          "high": None, "name": None}]
    assert a.spec["model"]["shapes"] == {"b": [1, 2]} and a.spec["run"]["threads"] == 2
    assert a.spec["log_path"] == str(tmp_path / "out" / "logs" / "a.log")
    assert (a.timeout_s, b.timeout_s) == (7.0, 99.0)         # model overrides run
    assert b.log_rel.startswith("logs/b_x-") and (tmp_path / "out" / b.log_rel).is_file()
    # The cache is relative to the config, so it outlives a throw-away base worktree.
    assert a.env["TORCHINDUCTOR_CACHE_DIR"] == str(cfg_dir / ".cache" / "inductor")
    assert a.env["OMP_NUM_THREADS"] == "2" and a.env["PYTHONPATH"] == str(worktree)


def test_jobs_of_traced_phases_get_a_fresh_compile_report_dir_per_side(tmp_path):
    config = Config(models=_models("a"))
    out = tmp_path / "out"
    stale = out / "compile" / "a" / "base" / "index.html"
    stale.parent.mkdir(parents=True)
    stale.write_text("an earlier run's report")

    def job(phases, side):
        [j] = runner.build_jobs(config, config.models, repo_root=str(tmp_path), out_dir=str(out),
                                work_dir=str(tmp_path), device="cpu", phases=phases,
                                environ={}, side=side)
        return j.spec

    head = job(["breaks", "export"], "head")
    assert head["trace_rel"] == "compile/a/head/trace.log"
    assert head["trace_path"] == str(out / "compile" / "a" / "head" / "trace.log")
    assert "trace_path" not in job(["latency"], "head")   # a latency round writes no report
    assert stale.exists()
    assert job(["matrix"], "base")["trace_rel"] == "compile/a/base/trace.log"
    assert not stale.exists()                             # cleared before the new run
    with pytest.raises(ValueError):
        job(["breaks"], "../x")


def test_the_last_line_counts_the_models_whose_every_compiled_case_raised():
    """A new user's torchhd classifier: every inductor call raised ("Multiple dispatch failed
    for aten.mm.out"), the model's own line said so under "not measured", and the last line
    read "1 model(s) on cpu, 0 failed"."""
    from pt2bot.results import ModelRun
    from pt2bot.smoke.runner import summary_line

    err = "TypeError: Multiple dispatch failed for 'torch._ops.aten.mm.out'"
    raised = ModelRun.coerce({"name": "activity_hd", "status": "ok", "graph_breaks": [],
                              "recompiles": {"count": 0, "cases": [{"shape": {"b": 2}, "error": err},
                                                                   {"shape": {"b": 4}, "error": err}]}})
    fine = ModelRun.coerce({"name": "mlp", "status": "ok", "graph_breaks": [],
                            "recompiles": {"count": 0, "cases": [{"shape": {"b": 2}}]}})
    assert summary_line([raised, fine], "cpu", "r.json") == (
        "pt2bot run: 2 model(s) on cpu, 0 failed, 1 raising on every compiled shape case "
        "(activity_hd); results: r.json")
    assert summary_line([fine], "cpu", "r.json") == "pt2bot run: 1 model(s) on cpu, 0 failed; results: r.json"
