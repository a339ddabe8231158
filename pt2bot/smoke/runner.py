"""The smoke run: every selected model in its own supervised worker, into one results file.

The orchestration of pt2bot/smoke: pick the models and take this shard's share of them
(pt2bot/shard), resolve the device (device.py), give each worker a scrubbed environment
(env.py) and run it under supervision (supervise.py), a few at a time; `cli_run` backs
`pt2bot run` (`pt2bot merge` of its results files is pt2bot/shard/merge.py's).

Parallel runs (`run.jobs > 1`) are safe but, on CPU, models running side by side compete
for cores and memory bandwidth: latency figures from a parallel CPU run are noisier and
slower than from a serial one. Keep `jobs: 1` when latency matters on CPU.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import platform
import re
import sys
import tempfile
from typing import Any, Callable, Iterable, Mapping, Sequence

from pt2bot import git
from pt2bot.config import Config, ModelConfig
from pt2bot.configfile import load_config
from pt2bot.errors import UserError
from pt2bot.jsonio import write_json
from pt2bot.report.escape import cap, log_line
from pt2bot.results import (COMPILE_DIR, PHASES, ExportOutcome, ModelRun, ResultsFile, every_case_raised,
                            shape_label, split_off_frame, unmeasured)
from pt2bot.smoke import compile_report
from pt2bot.shard import parse_shard, shard_models
from pt2bot.smoke.device import git_head, resolve_device, torch_version
from pt2bot.smoke.export import TRUNCATED_DIVISION
from pt2bot.smoke.env import import_roots, scrub_env
from pt2bot.smoke.forkserver import SERVERS, fork_supported, preload_for
from pt2bot.smoke.supervise import (WORKER_ARGV, WorkerGroups, WorkerJob, forked_main,
                                     run_worker)


# --------------------------------------------------------------------------- one model

def log_name(name: str) -> str:
    """A file-system safe, collision-free log file name for a model name."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "model"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return safe[:120] + ".log"


# --------------------------------------------------------------------------- all models

def pick_models(config: Config, names: Sequence[str] | None = None) -> list[ModelConfig]:
    """The configured models named in `names` (all when None), in config order."""
    if names is None:
        return list(config.models)
    known = [m.name for m in config.models]
    unknown = [n for n in names if n not in known]
    if unknown:
        listing = ", ".join(known) if known else "(none configured)"
        raise UserError(f"unknown model {', '.join(map(repr, unknown))}; known models: {listing}")
    wanted = set(names)
    return [m for m in config.models if m.name in wanted]


def default_phases(config: Config) -> list[str]:
    """Every phase, less latency and the shape advice when the config turns them off."""
    off = {"latency": not config.run.latency, "advice": not config.run.shape_advice}
    return [p for p in PHASES if not off.get(p)]


def _model_spec(model: ModelConfig) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(model), default=str))


def own_dir(path: str) -> None:
    """Make a directory for a run's own files (its logs, its compile reports); one that pt2bot
    creates gets a `.gitignore` of `*`, as pytest and mypy do for their caches. `pt2bot run
    --out results.json` writes them beside the results, the repository's root in the
    README's first run, where they would be untracked files of `git status` and, counted
    as the PR's changes, of the review after it. A directory that exists already may hold
    the user's own files, which an ignore file would hide: it is left as it is."""
    if os.path.isdir(path):
        return
    os.makedirs(path, exist_ok=True)
    with contextlib.suppress(OSError):
        with open(os.path.join(path, ".gitignore"), "w", encoding="utf-8") as fh:
            fh.write("# written by pt2bot: this directory holds a run's output\n*\n")


def build_jobs(config: Config, models: Iterable[ModelConfig], *, repo_root: str, out_dir: str,
               work_dir: str, device: str, phases: Sequence[str],
               environ: Mapping[str, str], side: str = "head",
               export_locate: bool = True,
               watch: Mapping[str, Sequence[int]] | None = None) -> list[WorkerJob]:
    run_cfg = config.run
    cache_dir = run_cfg.cache_dir
    if cache_dir:
        # Relative to the config, not repo_root: a review runs the base in a throw-away
        # worktree, and the cache must outlive it (and be shared with the head's run).
        cache_dir = os.path.abspath(os.path.join(config.root, os.path.expanduser(cache_dir)))
    env = scrub_env(environ, repo_root=repo_root, threads=run_cfg.threads, cache_dir=cache_dir)
    logs = os.path.join(out_dir, "logs")
    own_dir(logs)
    if any(p in ("breaks", "matrix") for p in phases):
        own_dir(os.path.join(out_dir, COMPILE_DIR))
    run_dict = json.loads(json.dumps(dataclasses.asdict(run_cfg), default=str))
    jobs = []
    for k, model in enumerate(models):
        lname = log_name(model.name)
        log_path = os.path.join(logs, lname)
        with open(log_path, "wb"):   # a fresh log per run
            pass
        spec = {"repo_root": repo_root, "model": _model_spec(model), "run": run_dict,
                "device": device, "phases": list(phases), "log_path": log_path,
                "export_locate": export_locate}
        if watch:
            spec["watch"] = {path: sorted(lines) for path, lines in watch.items()}
        if any(p in ("breaks", "matrix") for p in phases):
            # The compile report's trace (pt2bot/smoke/compile_report.py); an earlier run's report of
            # this model and side goes first, so no stale index.html outlives it.
            compile_report.clear_report_dir(out_dir, model.name, side)
            rel = compile_report.trace_path(model.name, side)
            spec.update(trace_path=os.path.join(out_dir, *rel.split("/")), trace_rel=rel)
        jobs.append(WorkerJob(
            model=model, spec=spec,
            spec_path=os.path.join(work_dir, f"{k}.spec.json"),
            out_path=os.path.join(work_dir, f"{k}.out.json"),
            log_path=log_path, log_rel=f"logs/{lname}",
            timeout_s=float(model.timeout_s or run_cfg.timeout_s), env=env, cwd=repo_root))
    return jobs


def run_models(config: Config, *, repo_root: str, out_dir: str,
               models: Sequence[str] | None = None, device: str | None = None,
               shard: str | tuple[int, int] | None = None,
               phases: Sequence[str] | None = None,
               progress: Callable[[ModelRun], None] | None = None,
               started: Callable[[str, int], None] | None = None,
               python: str = sys.executable,
               worker_argv: Sequence[str] = WORKER_ARGV, side: str = "head",
               tlparse: str | None | bool = True, export_locate: bool = True,
               watch: Mapping[str, Sequence[int]] | None = None) -> ResultsFile:
    """Run the selected models (each in its own worker) and return their results file.

    `progress` is called with each RUN as it finishes (in completion order), `started` with
    (model name, worker pid) as each worker starts (from pool threads). `python` and
    `worker_argv` choose the worker command (tests; a different interpreter). Each model's
    compile report goes to `out_dir/compile/<model>/<side>/` (`side`: head or base), its
    HTML rendered by `tlparse` (True: find it; None/False: trace only; a path: that binary).
    `export_locate` False: export failures whose error names no line are not located with
    `draft_export` (the review locates only those its report needs: pipeline.py). `watch`:
    repo path -> lines whose operands the RUN's `unevaluated` follows (a review's changed
    lines on head: pt2bot/smoke/coverage.py).
    """
    repo_root = os.path.abspath(repo_root)
    out_dir = os.path.abspath(out_dir)
    if side not in compile_report.SIDES:
        raise ValueError(f"side must be one of {compile_report.SIDES}, not {side!r}")
    tlparse_bin = (compile_report.find_tlparse() if tlparse is True
                   else tlparse if isinstance(tlparse, str) else None)
    picked = pick_models(config, models)
    # N is bounded by the models picked (or a full matrix): results files carry their shard,
    # and `pt2bot merge` reads it back.
    index, count = parse_shard(shard, models=len(picked))
    chosen = shard_models(picked, index, count)
    phases = list(phases) if phases is not None else default_phases(config)
    bad = [p for p in phases if p not in PHASES]
    if bad:
        raise UserError(f"unknown phase {', '.join(bad)}; expected some of {', '.join(PHASES)}")
    dev = resolve_device(device or config.run.device,
                         scrub_env(os.environ, repo_root=repo_root))
    header = ResultsFile(
        commit=git_head(repo_root), torch=torch_version(), python=platform.python_version(),
        device=dev.device, device_name=dev.name, backend=config.run.backend,
        config_digest=config.digest,
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        shard=f"{index}/{count}")
    os.makedirs(out_dir, exist_ok=True)
    runs: list[ModelRun] = []
    with tempfile.TemporaryDirectory(prefix="pt2bot-run-") as work_dir:
        jobs = build_jobs(config, chosen, repo_root=repo_root, out_dir=out_dir,
                          work_dir=work_dir, device=dev.device, phases=phases,
                          environ=os.environ, side=side, export_locate=export_locate,
                          watch=watch)
        workers = max(1, min(int(config.run.jobs or 1), len(jobs) or 1))
        groups = WorkerGroups()
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        # Forked from a server that has imported torch (forkserver.py): only the real worker
        # (a test's stand-in command is spawned), and where fork is safe.
        server = (SERVERS.acquire(python, jobs[0].env, preload_for(config.run.backend),
                                  os.path.join(out_dir, "logs"))
                  if jobs and forked_main(worker_argv) and fork_supported() else None)

        def one(job: WorkerJob) -> ModelRun:
            run = run_worker(job, python=python, worker_argv=worker_argv, groups=groups,
                             started=started, server=server)
            if "trace_path" not in job.spec:   # no traced phase: no report to claim
                return run.without("compile_report") if run.compile_report is not None else run
            return compile_report.finish_compile_report(
                run, out_dir=out_dir, name=job.model.name, side=side, tlparse=tlparse_bin,
                repo_root=repo_root)

        try:
            futures = [pool.submit(one, j) for j in jobs]
            for fut in concurrent.futures.as_completed(futures):
                run = fut.result()
                runs.append(run)
                if progress is not None:
                    progress(run)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM, a failing progress callback): leave no workers.
            groups.kill_all()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            if server is not None:
                SERVERS.release(server)
        pool.shutdown(wait=True)
    return header.with_(models=tuple(sorted(runs, key=lambda r: str(r.name))))


# --------------------------------------------------------------------------- CLI

# the most characters of a failed model's message in its console line
STATUS_MESSAGE_CAP = 400


def summary_line(models: Sequence[ModelRun], device: str | None, out: str) -> str:
    """The run's last line: how many models, how many failed and how, and how many ran but
    raised on every compiled shape case. Such a model is "ok" (it built and ran eagerly), and
    "0 failed" alone hid that every inductor call of a new user's torchhd classifier raised."""
    kinds = failure_counts(models)
    failed = sum(kinds.values())
    detail = f" ({', '.join(f'{n} {k}' for k, n in kinds.items())})" if failed else ""
    raised = [m.name for m in models if not m.failed and every_case_raised(m)]
    compiled = (f", {len(raised)} raising on every compiled shape case ("
                + ", ".join(str(n) for n in raised[:3]) + (", ..." if len(raised) > 3 else "")
                + ")" if raised else "")
    return f"pt2bot run: {len(models)} model(s) on {device}, {failed} failed{detail}{compiled}; results: {out}"


def _held_where(export: Any) -> str:
    """" (those with batch = 2)": the sizes every shape case the exported program held on
    shares and some other case has not, the static dims' (a new V-JEPA user read "holding on 3
    of the 6 shape cases" as an export offered half broken)."""
    cases = [c for c in (export or {}).get("cases") or () if isinstance(c, Mapping)
             and isinstance(c.get("shape"), Mapping)]
    held = [c["shape"] for c in cases if c.get("match")]
    if not held or len(held) == len(cases):
        return ""
    fixed = {d: v for d, v in held[0].items()
             if all(s.get(d) == v for s in held) and any(c["shape"].get(d) != v for c in cases)}
    return f" (those with {', '.join(f'{d} = {v}' for d, v in fixed.items())})" if fixed else ""


def _advice_exports(run: ModelRun) -> str:
    """Where the configured dims' export fails and the shape advice's own dims export: those
    dims, as pt2bot.yml takes them. guided-diffusion's UNets read "export fails
    (constraint_violation at unet.py:651)", a guard line, where the one cause was `res`
    declared without `multiple_of: 4`, which the advice had verified and the run never said."""
    adv = run.shape_advice
    yaml = (adv.code or {}).get("yaml") if adv is not None else None
    if adv is None or (adv.export or {}).get("ok") is not True or not isinstance(yaml, str) \
            or (adv.compile or {}).get("reused"):
        return ""
    head, _, rest = yaml.partition("\n")
    # (a dim that cannot be dynamic is a comment line in the YAML: counted here, not inlined
    # into the braces, where DINOv2's read "{batch: null, # x.shape[2]: cannot be ...")
    lines = [ln.strip() for ln in rest.splitlines() if ln.strip()]
    static = sum(1 for ln in lines if ln.startswith("#"))
    # (and a dim's own trailing comment stays in the YAML: DETR's "{multiple_of: 16}  # the
    # multiple is for pt2bot's own export ..." ran on inside the braces)
    lines = [ln if ln.startswith("#") else ln.split("  #", 1)[0].rstrip() for ln in lines]
    inline = f"{head} {{{', '.join(ln for ln in lines if not ln.startswith('#'))}}}"
    more = f" ({static} more dim{'s' if static != 1 else ''} static: see the shape advice)" if static else ""
    failed, ran = ExportOutcome.coerce(adv.export).failed_cases()
    but = f", holding on {ran - failed} of the {ran} shape cases{_held_where(adv.export)}" if failed else ""
    return f"; the shape advice's dims export{but}: {log_line(cap(inline, 200))} in pt2bot.yml{more}"


def status_line(run: ModelRun | Mapping[str, Any], log_base: str | None = None) -> str:
    """One short line per model for the console (the details are in the results). The log's
    path is stored relative to the results file; `log_base` (that file's directory) makes it
    one the user can open from where they ran the command."""
    run = ModelRun.coerce(run)
    dur = run.duration_s
    took = f" in {dur:.1f} s" if dur is not None else ""
    if run.failed:
        err = run.error
        detail = (err.kind if err else None) or "error"
        if err and err.signal:
            detail += f" {err.signal}"
        where = f" at {err.path}:{err.line}" if err and err.path and err.line else ""
        log = run.log
        if log and log_base:
            log = os.path.relpath(os.path.join(log_base, log))
        # why, in the line itself: the model's log holds what it printed, which is often
        # nothing, and the reason (a hint such as `grad: true` included) is otherwise only in
        # the results file. It quotes the model's exception: one line that starts no workflow
        # command
        why = f": {log_line(cap(err.message, STATUS_MESSAGE_CAP))}" if err and err.message else ""
        return f"pt2bot run: {run.name}: {run.status} ({detail}{where}){why}{took}; log: {log}"
    # "ok" says the model ran; what it ran into is said next to it, so a model that breaks no
    # graph but recompiles or does not export is not read as clean
    extra = f", {len(run.graph_breaks)} graph break(s){_break_sites(run)}" if run.graph_breaks is not None else ""
    if run.recompiles is not None and run.recompiles.count is not None and not every_case_raised(run):
        extra += f", {run.recompiles.count} recompile(s)"
        carried = _split_recompiles(run, carried=True)
        if carried:
            # (calls in order keeping what each leaves on the module: ESM-2's rotary cache of
            # the last length, which recompiles `forward` for every new length)
            extra += (f" ({carried} on state a call leaves on the module for the next, which a "
                      "process calling it again compiles anew for every new value)")
        split = _split_recompiles(run) if run.graph_breaks else 0
        if split:
            # (what the breaks cost in recompiles: the frames they split off get no dynamic
            # marks; V-JEPA's 13 were 3 once its one `with` line was fixed: the count, never
            # "all of them", which its user read as all going with the breaks)
            extra += f" ({split} of them in frames the breaks split off)"
        if run.recompiles.size_one:
            # torch's own, for a size of 1 (a batch of one, which generation feeds): counted
            # apart, but a user who compiles for it pays it (nanochat's batch 1 -> 3 read "0")
            extra += f" (and {run.recompiles.size_one} for a size of 1, which torch always specialises)"
    exp = run.export
    if exp is not None and exp.ok:
        # the exported program run on the matrix's other cases: one that holds on some only
        # guards on sizes the code pins (complextorch's mean over range x doppler: "exports",
        # then "Guard failed" on 6 of 8 cases)
        failed, held = exp.failed_cases()
        # and why, torch's first line of the first failure (a new user read the bare count
        # for `Guard failed: moving.size()[2] == 16`, a size the code pins)
        why = next((c.error.strip().splitlines()[0] for c in exp.cases
                    if c.match is False and c.error and c.error.strip()), "")
        extra += (f", exports, but the exported program fails on {failed} of the {held} "
                  "shape cases" + (f" ({log_line(cap(why, 200))})" if why else "")
                  if failed else ", exports")
        if exp.frozen:
            extra += f", but {log_line(exp.frozen)}"
    elif exp is not None and exp.ok is False:
        at = f" at {exp.path}:{exp.line}" if exp.path and exp.line else ""
        hint = f": {exp.hint}" if exp.hint in (TRUNCATED_DIVISION,) else ""
        extra += f", export fails ({exp.kind or 'error'}{at}{hint})" + _advice_exports(run)
    # a dim declared dynamic that the code specialises: `mark_dynamic` raises on it, and the
    # matrix measured it marked weakly (`maybe_mark_dynamic`); said, not left to the advice
    # (DETR's batch, specialised by `nested_tensor_from_tensor_list` at util/misc.py:316)
    pinned = [s for s in run.specialized or () if s.dim]
    if pinned:
        s = pinned[0]
        # ("under compile": the shape advice's export may keep the same dim dynamic, and the
        # line said both, which a new user read as a contradiction)
        after = s.resumed_after
        extra += (f"; {s.dim} is declared dynamic but under compile the code specialises it to {s.value}"
                  + (f" at {s.path}:{s.line}" if s.path and s.line else "")
                  # (ESM-2's contact head pinned batch at modules.py:343, in the code resumed
                  # after the padding test's break: with that break gone the line stays dynamic)
                  + (f", in code dynamo resumes after the graph break at {after.path}:{after.line}, "
                     "which hands that code its tensors with no dynamic mark: the break may be "
                     "what pins it"
                     if after is not None and after.path and after.line and run.graph_breaks else "")
                  + " (`mark_dynamic` raises there: measured with it marked weakly)"
                  + (f", and {len(pinned) - 1} more dim(s)" if len(pinned) > 1 else ""))
    # and what it did not measure (a phase or shape cases that raised): "ok, 8 recompile(s)"
    # read as measured for a model whose every compiled case raised
    lost = unmeasured(run)
    if lost:
        extra += "; not measured: " + log_line(cap("; ".join(lost), STATUS_MESSAGE_CAP))
    if run.nonfinite:
        # every comparison on such a case is NaN with NaN: "ok" alone read as a model that works
        extra += f"; an output is NaN or inf on {nonfinite_said(run.nonfinite)}{unset_said(run)}"
    elif run.uniform:
        extra += f"; {UNIFORM_SAID}"
    if dur is not None:
        # "exports in 157.4 s" read as an export of 157 s, where timing the latency took 119 of
        # them: the time is its own clause, with the phase that took most of it
        phase, most = max(run.phase_s.items(), key=lambda kv: kv[1], default=("", 0.0))
        took = f"; {dur:.1f} s" + (f" ({phase} {most:.1f} s of it)" if most >= dur / 2 and most >= 10
                                   else "")
    return f"pt2bot run: {run.name}: {run.status}{extra}{took}"


def _split_recompiles(run: ModelRun, carried: bool = False) -> int:
    """The recompiles (size-1 ones left out, as in `count`) of frames other than the model's
    own, each of which dynamo compiled only because a graph break sent the code around it to
    eager; with `carried`, those on state a call left on the module instead (any frame)."""
    n = 0
    for case in (run.recompiles.cases if run.recompiles is not None else ()):
        groups: dict[object, list[Any]] = {}
        for r in case.reasons:
            groups.setdefault(r.compile_id, []).append(r)
        n += sum(1 for cid, rs in groups.items() if cid is not None
                 and (any(r.carried for r in rs) if carried
                      else split_off_frame(cid) and not any(r.carried for r in rs))
                 and not all(r.kind == "size_one" for r in rs))
    return n


# the break sites a run's line names, at most
SITES_SAID = 3


def _break_sites(run: ModelRun) -> str:
    """" at src/m.py:67 (GB0142, GB0208)": where the breaks are, each line once with its GB
    codes, so that the line says what to look at (a new user's V-JEPA run read "2 graph
    break(s), 13 recompile(s)", both from one `with` line the review then folded away)."""
    sites: dict[str, list[str]] = {}
    for b in run.graph_breaks or ():
        where = f"{b.path}:{b.line}" if b.path and b.line else (b.library or b.path)
        if where:
            sites.setdefault(where, []).append(b.gb or b.gb_type or "?")
    if not sites:
        return ""
    said = [f"{w} ({', '.join(sorted(set(gbs)))})" for w, gbs in list(sites.items())[:SITES_SAID]]
    more = len(sites) - SITES_SAID
    return " at " + ", ".join(said) + (f" and {more} more line(s)" if more > 0 else "")


# a model whose eager outputs each hold one value on every shape case (guided-diffusion's UNets,
# zero-initialised last layers): "ok" and "match" read as a model whose compiled runs were shown
UNIFORM_SAID = ("but every output holds a single value on every shape case (a last layer "
                "initialised to zero?): comparisons with it show little; a factory that fills "
                "those weights (`entry:` a function that builds the model) makes them show more")


def nonfinite_said(cases: Sequence[Mapping[str, Any]]) -> str:
    """"shape cases batch=2, batch=4": where an eager output held no finite value."""
    names = [shape_label(dict(c)) for c in cases]
    more = f" and {len(names) - 3} more" if len(names) > 3 else ""
    return f"shape case{'s' if len(names) != 1 else ''} {', '.join(names[:3])}{more}"


def unset_said(run: ModelRun) -> str:
    """" (`decoder.positional_embedding` holds NaN, inf or values past 1e30 as built: ...)",
    where the worker found such weights, else nothing."""
    names = run.unset_weights or ()
    if not names:
        return ""
    said = ", ".join(f"`{log_line(n)}`" for n in names)
    return (f" ({said} hold{'s' if len(names) == 1 else ''} NaN, inf or values past 1e30 as built: "
            "memory never written, `torch.empty` until a checkpoint is loaded?)")


def run_root(config: Config, cwd: str | None = None) -> str:
    """The repository a `pt2bot run` imports the models from: the git root of the working
    directory, as `pt2bot review` takes it. The config may live elsewhere (`--config
    ../cfg.yml`); taking its directory put the worker's PYTHONPATH outside the repository, and
    every model then failed to import. Outside any git work tree: the config's directory."""
    cwd = cwd or os.getcwd()
    try:
        return git.repo_root(cwd)
    except UserError:
        return config.root


def failure_counts(runs: Sequence[ModelRun]) -> dict[str, int]:
    """{error kind: number of models} of the failed runs, in a fixed order."""
    counts: dict[str, int] = {}
    for run in runs:
        if run.failed:
            kind = (run.error.kind if run.error else None) or run.status or "error"
            counts[kind] = counts.get(kind, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def cli_run(args: Any) -> int:
    """Exit 0 when the run produced its results, failed models included (a model that crashes
    or times out is a result, in the file and on stderr); 2 when no model could even be
    imported, which says the set-up is wrong (install, PYTHONPATH, entry), not the models:
    the results are still written, and the error names the first import failure. 2 also for
    a pt2bot.yml with no model at all (a new user's `models: []` from init read "0 model(s),
    0 failed" and exit 0: a green run that compiled nothing)."""
    config = load_config(getattr(args, "config", None), required=True)
    out = os.path.abspath(args.out)
    out_dir = os.path.dirname(out)
    root = run_root(config)

    def progress(run: ModelRun) -> None:
        print(status_line(run, out_dir), file=sys.stderr, flush=True)

    # A SIGTERM reaches this as SystemExit (cli.sigterm_as_exit): run_models kills its workers.
    results = run_models(config, repo_root=root, out_dir=out_dir,
                         models=getattr(args, "model", None) or None,
                         device=getattr(args, "device", None),
                         shard=getattr(args, "shard", None), progress=progress)
    write_json(out, results.to_json())
    kinds = failure_counts(results.models)
    failed = sum(kinds.values())
    print(summary_line(results.models, results.device, args.out), file=sys.stderr)
    if not config.models:
        raise UserError("pt2bot.yml configures no model (`models: []`): nothing was compiled; add one "
                        "under `models:` (`pt2bot init --check` proposes those it can build)")
    if results.models and kinds.get("import") == len(results.models):
        first = results.models[0].error
        raise UserError(
            f"no model could be imported ({failed} of {len(results.models)}): the workers ran "
            f"with PYTHONPATH={os.pathsep.join(import_roots(root))} (the git root of the working "
            f"directory, and a src layout's src/); first: "
            f"{results.models[0].name}: {first.message if first else '?'}")
    return 0


__all__ = ["build_jobs", "cli_run", "default_phases", "failure_counts", "log_name", "pick_models",
           "run_models", "run_root", "status_line"]
