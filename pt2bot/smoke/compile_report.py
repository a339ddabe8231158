"""Compile reports on disk: each model's structured trace, and tlparse's HTML report of it.

The smoke worker writes the structured trace of its "breaks" and "matrix" phases (what
`TORCH_TRACE` writes and tlparse reads) to `compile/<model>/<side>/trace.log`, capped
(pt2bot/smoke/trace.py `TraceFile`), beside the results file (`side`: head or base; a
plain `pt2bot run` uses head; the paths are built by pt2bot/results.py `report_dir`). When
tlparse is installed (`pip install 'pt2bot[tlparse]'`), the runner turns it into
`compile/<model>/<side>/index.html` (`finish_compile_report`); the review and the audit copy
both into the report directory (`copy_compile_reports`), and summary.md says where to find
them (pt2bot/report/compile_report.py `summary_line`).

A missing, failing or hanging tlparse is a `note` on the RUN's `compile_report`, never a
failure of the run. The trace is text from the user's code: it goes into files only.
Torch-free. `PT2BOT_TLPARSE` names the tlparse binary (empty: do not render).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from typing import Mapping

# The layout (`compile/<model>/<side>/...`) is the results file's; the runner reads SIDES and
# trace_path through this module.
from pt2bot.smoke.signature import trace_signature
from pt2bot.results import (COMPILE_DIR, HTML_NAME, SIDES, TRACE_NAME, CompileReport, ModelRun,
                            report_dir, trace_path)

TLPARSE_ENV = "PT2BOT_TLPARSE"
TLPARSE_TIMEOUT_S = 120.0
NO_TLPARSE = "tlparse is not installed (pip install 'pt2bot[tlparse]')"


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
                          timeout_s: float = TLPARSE_TIMEOUT_S,
                          repo_root: str | None = None) -> ModelRun:
    """The RUN with `compile_report` as the files on disk say (the runner owns these paths:
    the worker's own claim is trusted for `truncated` only). A trace left by a worker that
    crashed or timed out is rendered too: it shows what dynamo did up to the end. A whole
    trace of a run that finished also gives the `signature` of what was compiled
    (pt2bot/smoke/signature.py; `repo_root` is the tree the model ran from)."""
    rel = trace_path(name, side)
    trace = os.path.join(out_dir, *rel.split("/"))
    if not os.path.isfile(trace) or os.path.islink(trace):
        return run.without("compile_report") if run.compile_report is not None else run
    claimed = run.compile_report
    truncated = bool(claimed.truncated) if claimed is not None and \
        isinstance(claimed.truncated, bool) else None
    signature = (trace_signature(trace, repo_root)
                 if truncated is False and run.ok and not run.phase_errors else None)
    note = render_html(trace, tlparse=tlparse, timeout_s=timeout_s)
    html = f"{report_dir(name, side)}/{HTML_NAME}"
    return run.with_(compile_report=CompileReport(
        trace=rel, html=None if note else html, bytes=os.path.getsize(trace),
        truncated=truncated, note=note, signature=signature))


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


__all__ = ["NO_TLPARSE", "SIDES", "clear_report_dir", "copy_compile_reports", "find_tlparse",
           "finish_compile_report", "render_html", "trace_path"]
