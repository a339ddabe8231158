"""Where the models run: the device (probed in a child process) and the run's metadata.

The parent never imports torch (2-4 s, and a CUDA init it does not need): `resolve_device`
asks a child process, with the workers' scrubbed environment, whether torch sees a GPU.
"""
from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Mapping

from pt2bot.errors import UserError
from pt2bot.git import rev_parse


@dataclass(frozen=True)
class DeviceInfo:
    device: str          # "cpu" | "cuda"
    name: str | None     # "NVIDIA H200", "Intel(R) Xeon(R) ..."


def cpu_name() -> str | None:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or None


def may_have_cuda() -> bool:
    """Cheap pre-check so CPU-only machines skip the 2-4 s torch-import probe."""
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return (os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")
            or shutil.which("nvidia-smi") is not None)


def probe_cuda(env: Mapping[str, str], timeout_s: float = 180.0) -> str | None:
    """The CUDA device name when torch in a child process sees one, else None."""
    code = ("import json, torch\n"
            "ok = torch.cuda.is_available()\n"
            "print(json.dumps({'cuda': ok, 'name': torch.cuda.get_device_name(0) if ok else None}))\n")
    try:
        proc = subprocess.run([sys.executable, "-c", code], env=dict(env), capture_output=True,
                              text=True, timeout=timeout_s)
        info = json.loads(proc.stdout.strip().splitlines()[-1])
    except (subprocess.TimeoutExpired, OSError, ValueError, IndexError):
        return None
    return info["name"] if info.get("cuda") else None


def resolve_device(requested: str | None, env: Mapping[str, str]) -> DeviceInfo:
    """`auto` → cuda when a child process sees a GPU, else cpu. `cuda` without one: UserError."""
    requested = requested or "auto"
    if requested not in ("auto", "cpu", "cuda"):
        raise UserError(f"--device: expected auto, cpu or cuda, got {requested!r}")
    if requested == "cpu":
        return DeviceInfo("cpu", cpu_name())
    name = probe_cuda(env) if may_have_cuda() else None
    if name is not None:
        return DeviceInfo("cuda", name)
    if requested == "cuda":
        raise UserError("--device cuda: no CUDA device is available to torch on this machine")
    return DeviceInfo("cpu", cpu_name())


def torch_version() -> str | None:
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def git_head(repo_root: str) -> str | None:
    """The HEAD commit of the repository containing repo_root, or None (no git, no commit)."""
    try:
        return rev_parse(repo_root, "HEAD")
    except UserError:   # git itself is missing: the results just carry no commit
        return None


__all__ = ["DeviceInfo", "cpu_name", "git_head", "may_have_cuda", "probe_cuda",
           "resolve_device", "torch_version"]
