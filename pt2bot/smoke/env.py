"""The environment a model's worker process gets: an allow-list, then a secret filter.

A model is untrusted code on a CI runner. Copying the runner's environment and removing
known secret names loses to every name nobody thought of, and it also hands the model the
runner's *file commands*: `GITHUB_ENV`, `GITHUB_PATH`, `GITHUB_OUTPUT`, `GITHUB_STATE` and
`GITHUB_STEP_SUMMARY` name files whose contents the runner applies to later steps, so a model
that can write to them injects environment (`LD_PRELOAD=...`) or PATH entries into the
privileged steps that follow. So the worker gets only what torch, compilers and the model
need (the allow-list below), and of that, nothing whose name looks like a secret.
"""
from __future__ import annotations

import os
import re
from typing import Mapping

# Names a worker keeps as they are: the process basics, locale, and the harmless GitHub
# context a model might read (never the file commands, never a token).
ALLOWED_NAMES = frozenset({
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "TZ", "LANG", "LANGUAGE",
    "TMPDIR", "TEMP", "TMP", "PWD",
    "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
    "CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH",
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
    "CI", "GITHUB_ACTIONS", "GITHUB_REPOSITORY", "GITHUB_REPOSITORY_OWNER", "GITHUB_SHA",
    "GITHUB_REF", "GITHUB_REF_NAME", "GITHUB_HEAD_REF", "GITHUB_BASE_REF", "GITHUB_EVENT_NAME",
    "GITHUB_RUN_ID", "GITHUB_RUN_NUMBER", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "GITHUB_WORKFLOW",
    "GITHUB_SERVER_URL", "GITHUB_WORKSPACE", "RUNNER_OS", "RUNNER_ARCH", "RUNNER_TEMP",
})
# Families torch, its compilers and kernels, BLAS/OpenMP and the Hugging Face stack read.
ALLOWED_PREFIXES = (
    "LC_", "XDG_", "PYTHON", "CUDA_", "CUDNN_", "CUBLAS_", "NCCL_", "NVIDIA_", "ROCM_", "HIP_",
    "TORCH", "TRITON_", "INDUCTOR_", "OMP_", "KMP_", "GOMP_", "MKL_", "OPENBLAS_", "BLIS_",
    "NUMEXPR_", "HF_", "HUGGINGFACE_", "TRANSFORMERS_", "TOKENIZERS_", "DIFFUSERS_",
)
# Interpreter hooks: an inherited PYTHONPATH/PYTHONSTARTUP would run code we did not choose
# (the worker's PYTHONPATH is set to the repository below).
DROPPED_NAMES = frozenset({"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT",
                           "PYTHONUSERBASE", "PYTHONBREAKPOINT"})

# Secret-looking names, refused even inside an allowed family (HF_TOKEN, TORCH_..._API_KEY).
# A name is split into segments at "_" and "-" (action inputs arrive as INPUT_GITHUB-TOKEN).
_SECRET_SUBSTRINGS = ("SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "SIGNING", "NETRC",
                      "WEBHOOK", "PRIVATE")
_SECRET_SEGMENTS = frozenset({"TOKEN", "APIKEY", "PAT", "JWT", "DSN", "AUTH", "COOKIE",
                              "SESSION", "KEY"})
_SECRET_NAMES = frozenset({"DOCKER_AUTH_CONFIG", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_OUTPUT",
                           "GITHUB_STATE", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH"})
_SECRET_PREFIXES = ("ACTIONS_", "INPUT_", "GITHUB_TOKEN", "GH_TOKEN", "API_KEY")
_SEGMENT = re.compile(r"[_\-]+")


def is_secret(name: str) -> bool:
    """Whether a variable's name says it holds (or points at) a credential or a file command."""
    upper = name.upper()
    if upper in _SECRET_NAMES or upper.startswith(_SECRET_PREFIXES):
        return True
    if any(w in upper for w in _SECRET_SUBSTRINGS):
        return True
    return any(seg in _SECRET_SEGMENTS for seg in _SEGMENT.split(upper))


def is_allowed(name: str) -> bool:
    """Whether the worker may see the variable at all (before the secret filter)."""
    upper = name.upper()
    if upper in DROPPED_NAMES:
        return False
    return upper in ALLOWED_NAMES or upper.startswith(ALLOWED_PREFIXES)


def import_roots(repo_root: str) -> list[str]:
    """Where a worker imports the repository's code from: its root, and in a src layout
    (`src/` with no `__init__.py`) `src/` too. Both come before site-packages, so each side of
    a review imports its own tree: with the project installed editable (`pip install -e .`,
    the workflow's install step), the installed path is the head checkout's `src/`, and the
    base worktree's code would otherwise never run (its results would be head's)."""
    src = os.path.join(repo_root, "src")
    return [repo_root] + ([src] if os.path.isdir(src) and not os.path.isfile(
        os.path.join(src, "__init__.py")) else [])


def scrub_env(environ: Mapping[str, str], *, repo_root: str, threads: int | None = None,
              cache_dir: str | None = None) -> dict[str, str]:
    """The worker's environment: the allow-list minus secrets, the repository on the path."""
    env = {k: v for k, v in environ.items() if is_allowed(k) and not is_secret(k)}
    env["PYTHONPATH"] = os.pathsep.join(import_roots(repo_root))
    # Worker output is read from a file; unbuffered so a crash does not eat the last lines.
    env["PYTHONUNBUFFERED"] = "1"
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    if cache_dir:
        env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    return env


__all__ = ["ALLOWED_NAMES", "ALLOWED_PREFIXES", "DROPPED_NAMES", "import_roots", "is_allowed",
           "is_secret", "scrub_env"]
