"""Compile reports: each model's structured trace, and tlparse's HTML report of it.

The smoke worker writes the structured trace of its "breaks" and "matrix" phases (what
`TORCH_TRACE` writes and tlparse reads) to `compile/<model>/<side>/trace.log`, capped
(pt2bot/smoke/trace.py `TraceFile`), beside the results file (`side`: head or base; a
plain `pt2bot run` uses head). When tlparse is installed (`pip install 'pt2bot[tlparse]'`),
the runner turns it into `compile/<model>/<side>/index.html` (`finish_compile_report`); the
review and the audit copy both into the report directory (`copy_compile_reports`), and
summary.md says where to find them (`summary_line`).

A missing, failing or hanging tlparse is a `note` on the RUN's `compile_report`, never a
failure of the run. The trace is text from the user's code: it goes into files only, and the
summary names only paths built here from the (config-validated) model name.
Torch-free. `PT2BOT_TLPARSE` names the tlparse binary (empty: do not render).
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Mapping

from pt2bot.reportdata import ModelDelta
from pt2bot.results import CompileReport, ModelRun

COMPILE_DIR = "compile"
TRACE_NAME = "trace.log"
HTML_NAME = "index.html"
SIDES = ("head", "base")
TLPARSE_ENV = "PT2BOT_TLPARSE"
TLPARSE_TIMEOUT_S = 120.0
# The artifact the shipped workflows upload the report directory as (.github/workflows/).
ARTIFACTS = {"review": "pt2bot-report", "audit": "pt2bot-audit"}
RENDER_HINT = "pip install tlparse && tlparse trace.log -o report --no-browser"
NO_TLPARSE = "tlparse is not installed (pip install 'pt2bot[tlparse]')"


def model_dir_name(name: str) -> str:
    """A file-system safe, collision-free directory name for a model name (as its log's)."""
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", name).strip(".") or "model"
    if safe != name:
        safe += "-" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return safe[:120]


def report_dir(name: str, side: str) -> str:
    """`compile/<model>/<side>`, relative to the results file or report directory."""
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, not {side!r}")
    return f"{COMPILE_DIR}/{model_dir_name(name)}/{side}"


def trace_path(name: str, side: str) -> str:
    return f"{report_dir(name, side)}/{TRACE_NAME}"


def find_tlparse(environ: Mapping[str, str] = os.environ) -> str | None:
    """The tlparse binary: $PT2BOT_TLPARSE, beside this Python (a venv not on PATH), PATH."""
    if TLPARSE_ENV in environ:
        named = environ[TLPARSE_ENV].strip()
        return (shutil.which(named) if named else None)
    beside = os.path.join(os.path.dirname(sys.executable), "tlparse")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return shutil.which("tlparse")


def render_html(trace: str, *, tlparse: str | None,
                timeout_s: float = TLPARSE_TIMEOUT_S) -> str | None:
    """Run tlparse on `trace`, its report into the trace's directory; None or a note why not.

    tlparse refuses an output directory that exists (and `--overwrite` would delete the
    trace beside it), so it writes into a fresh sibling directory whose entries move up.
    """
    if tlparse is None:
        return NO_TLPARSE
    side_dir = os.path.dirname(os.path.abspath(trace))
    tmp = tempfile.mkdtemp(prefix=".tlparse-", dir=side_dir)
    out = os.path.join(tmp, "out")
    try:
        try:
            proc = subprocess.run([tlparse, trace, "-o", out, "--no-browser"],
                                  stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=timeout_s, cwd=side_dir)
        except subprocess.TimeoutExpired:
            return f"tlparse took more than {timeout_s:g} s and was stopped"
        except OSError as e:
            return f"tlparse could not run: {e.strerror or e}"
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            first = err[0][:200] if err else "no message"
            return f"tlparse exited with code {proc.returncode}: {first}"
        if not os.path.isfile(os.path.join(out, HTML_NAME)):
            return f"tlparse wrote no {HTML_NAME}"
        for entry in os.listdir(out):
            if entry in (TRACE_NAME, "raw.log"):
                continue   # never replace the trace it read; raw.log is a copy of it
            dest = os.path.join(side_dir, entry)
            if os.path.isdir(dest) and not os.path.islink(dest):
                shutil.rmtree(dest)     # a stale report from an earlier run
            elif os.path.lexists(dest):
                os.unlink(dest)
            os.replace(os.path.join(out, entry), dest)
        return None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def clear_report_dir(out_dir: str, name: str, side: str) -> None:
    """Remove an earlier run's report of this model and side (no stale index.html)."""
    path = os.path.join(out_dir, *report_dir(name, side).split("/"))
    if os.path.islink(path):
        os.unlink(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def finish_compile_report(run: ModelRun, *, out_dir: str, name: str, side: str,
                          tlparse: str | None,
                          timeout_s: float = TLPARSE_TIMEOUT_S) -> ModelRun:
    """The RUN with `compile_report` as the files on disk say (the runner owns these paths:
    the worker's own claim is trusted for `truncated` only). A trace left by a worker that
    crashed or timed out is rendered too: it shows what dynamo did up to the end."""
    rel = trace_path(name, side)
    trace = os.path.join(out_dir, *rel.split("/"))
    if not os.path.isfile(trace) or os.path.islink(trace):
        return run.without("compile_report") if run.compile_report is not None else run
    claimed = run.compile_report
    truncated = bool(claimed.truncated) if claimed is not None and \
        isinstance(claimed.truncated, bool) else None
    note = render_html(trace, tlparse=tlparse, timeout_s=timeout_s)
    html = f"{report_dir(name, side)}/{HTML_NAME}"
    return run.with_(compile_report=CompileReport(
        trace=rel, html=None if note else html, bytes=os.path.getsize(trace),
        truncated=truncated, note=note))


def copy_compile_reports(src_dir: str, dest_dir: str, *, move: bool = False) -> int:
    """Copy `src_dir/compile/` into `dest_dir/compile/` (merging); returns the files copied.

    Regular files only: a link a model's run left there is not followed (its target could
    be anything on the runner), and nothing outside `compile/` is touched. `move`: the
    source's files go (a report directory that holds the smoke run's own directory would
    otherwise carry every report twice).
    """
    src = os.path.join(src_dir, COMPILE_DIR)
    if not os.path.isdir(src) or os.path.islink(src):
        return 0
    if os.path.realpath(src) == os.path.realpath(os.path.join(dest_dir, COMPILE_DIR)):
        return 0
    copied = 0
    # A model's side that the source has replaces the destination's (an earlier night's
    # report in the same directory must not leave files of its own behind).
    for model in sorted(os.listdir(src)):
        for side in SIDES:
            if os.path.isdir(os.path.join(src, model, side)):
                clear = os.path.join(dest_dir, COMPILE_DIR, model, side)
                if os.path.islink(clear):
                    os.unlink(clear)
                elif os.path.isdir(clear):
                    shutil.rmtree(clear)
    for here, dirs, files in os.walk(src, followlinks=False):
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]
        target = os.path.join(dest_dir, COMPILE_DIR, os.path.relpath(here, src))
        os.makedirs(target, exist_ok=True)
        for f in files:
            path = os.path.join(here, f)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            if move:
                shutil.move(path, os.path.join(target, f))
            else:
                shutil.copyfile(path, os.path.join(target, f))
            copied += 1
    if move:
        shutil.rmtree(src, ignore_errors=True)
    return copied


# --------------------------------------------------------------------------- summary.md

def run_url(environ: Mapping[str, str] = os.environ) -> str | None:
    """This Actions run's page (its artifacts are listed there), when the env names it."""
    server = environ.get("GITHUB_SERVER_URL", "").rstrip("/")
    repo = environ.get("GITHUB_REPOSITORY", "")
    run_id = environ.get("GITHUB_RUN_ID", "")
    if not (re.fullmatch(r"https://[A-Za-z0-9.-]+(:\d+)?", server)
            and re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo)
            and re.fullmatch(r"\d{1,20}", run_id)):
        return None
    return f"{server}/{repo}/actions/runs/{run_id}"


def _positive(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def summary_line(model: ModelDelta, mode: str | None, *,
                 environ: Mapping[str, str] = os.environ) -> str | None:
    """summary.md's pointer to a model's compile report, for a model with a new graph break
    or recompile (the report's entry of the model; `mode` the report's: review or audit);
    None otherwise or without a trace."""
    from pt2bot.report.markdown import code_inline, link   # here: pt2bot.report imports us
    if not (model.new_breaks or _positive(model.delta.recompiles)
            or _positive(model.delta.new_recompiles)):
        return None
    name = model.name
    head = model.head or {}     # the RUN as head's results file has it
    cr = head.get("compile_report") if isinstance(head.get("compile_report"), Mapping) else {}
    if not isinstance(name, str) or not cr.get("trace"):
        return None
    # Paths are rebuilt from the name, never copied from the (worker-written) results.
    side_dir = report_dir(name, "head")
    artifact = ARTIFACTS.get(str(mode or "review"), ARTIFACTS["review"])
    url = run_url(environ)
    # link() keeps only https links to allowed hosts (github.com): elsewhere, the text
    where = f"in the `{artifact}` artifact" + (
        f" ({link('artifacts of this run', url + '#artifacts')})" if url else "")
    if cr.get("html"):
        return (f"🔎 Compile report: {where}, "
                f"{code_inline(f'{side_dir}/{HTML_NAME}', limit=200)}.")
    return (f"🔎 Compile trace: {where}, {code_inline(f'{side_dir}/{TRACE_NAME}', limit=200)}; "
            f"render it with {code_inline(RENDER_HINT)}.")


__all__ = ["ARTIFACTS", "COMPILE_DIR", "HTML_NAME", "NO_TLPARSE", "SIDES", "TRACE_NAME",
           "clear_report_dir", "copy_compile_reports", "find_tlparse", "finish_compile_report",
           "model_dir_name", "render_html", "report_dir", "run_url", "summary_line",
           "trace_path"]
