"""Generate the zoo benchmark's git repository (outside this checkout).

    /work/venvs/zoo/bin/python benchmarks/zoo/generate.py DIR [--backend eager|inductor]
        [--rounds 2] [--repeats 20] [--warmup 3] [--timeout 600] [--models a,b,...]
        [--no-shape-advice] [--no-verify-fixes]

DIR becomes a git repository with three branches:
  main       the zoo: zoo/__init__.py (the torchvision shim), zoo/layers.py (TokenHead, the
             layer the encoders share), zoo/models/<name>.py (one entry module per model,
             benchmarks/zoo/models.py), pt2bot.yml (every model, 2 values per dim);
  pr-one     one commit on main: the one-model PR (models.ONE_MODEL_PR's file gains a
             `float(tensor)` normalisation: a new graph break in that model only);
  pr-shared  one commit on main: the shared-layer PR (TokenHead gains a data-dependent
             overflow guard: a new graph break in every encoder that uses it).
Prints the repository path and the models (JSON) on stdout.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from models import MODELS, ONE_MODEL_PR, ZooModel  # noqa: E402

INIT = '''"""The zoo package.

transformers and timm import torchvision when it is installed. A torchvision built for
another torch (0.28 beside the CPU build of torch 2.13.0) cannot load its C++ ops and then
fails to import, because it registers fake kernels for two of them; defining their schemas
first lets its pure-Python parts import. A torchvision whose ops load is left alone. No
torchvision op is called by any model here.
"""
import glob
import importlib.util
import os

import torch


def _shim_torchvision() -> None:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or not spec.submodule_search_locations:
        return
    libs = glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "_C*.so"))
    try:
        if libs:
            torch.ops.load_library(libs[0])   # what torchvision does itself; a no-op later
            return
    except (OSError, RuntimeError):
        pass
    lib = torch.library.Library("torchvision", "DEF")
    lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    globals()["_TV_LIB"] = lib   # the definitions live as long as the Library object


_shim_torchvision()
'''

LAYERS = '''"""Layers the zoo's models share."""
from __future__ import annotations

import torch


class TokenHead(torch.nn.Module):
    """LayerNorm over the last hidden state, mean over tokens, then a projection."""

    def __init__(self, dim: int, out: int = 16) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.proj = torch.nn.Linear(dim, out)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.proj(self.norm(h).mean(dim=1))
'''

# The shared-layer PR: an overflow guard that branches on a tensor value (GB0170).
LAYERS_PR_OLD = "        return self.proj(self.norm(h).mean(dim=1))\n"
LAYERS_PR_NEW = ("        if h.abs().max() > 1e4:   # guard against overflowing activations\n"
                 "            h = h.clamp(-1e4, 1e4)\n"
                 "        return self.proj(self.norm(h).mean(dim=1))\n")
# The one-model PR: normalise by the largest activation, read back as a Python float.
ONE_PR_OLD = "        return h[:, -1]\n"
ONE_PR_NEW = ("        scale = float(h.abs().amax()) + 1.0   # normalise by the largest activation\n"
              "        return h[:, -1] / scale\n")


def config_yml(models: list[ZooModel], *, backend: str, rounds: int, repeats: int,
               warmup: int, timeout_s: int = 600, shape_advice: bool = True,
               verify_fixes: bool = True) -> str:
    """The zoo's pt2bot.yml. `shape_advice` / `verify_fixes` False write `run.shape_advice:
    false` / `fixes: {verify: false}`, so a review does what pt2bot did before those phases
    existed; True writes neither key, so a pt2bot that predates them can read the file."""
    lines = ["# pt2bot configuration of the generated zoo (benchmarks/zoo/generate.py).",
             "version: 1",
             "static:",
             "  paths: [zoo/]",
             "  filter: added",
             "  fail_on: error",
             "models:"]
    for m in models:
        shapes = ", ".join(f"{k}: {v}" for k, v in m.shapes.items())
        lines += [f"  - name: {m.name}",
                  f"    entry: zoo.models.{m.name}:build",
                  f"    inputs: {m.inputs}",
                  f"    shapes: {{{shapes}}}",
                  f"    dynamic: [{', '.join(m.dynamic)}]",
                  "    export: true"]
    advice = "" if shape_advice else ", shape_advice: false"
    lines += [f"run: {{device: cpu, backend: {backend}, timeout_s: {timeout_s}, rounds: {rounds}, "
              f"repeats: {repeats}, warmup: {warmup}, threads: 1{advice}}}",
              "thresholds:",
              "  new_graph_breaks: 0",
              "  new_recompiles: 0",
              "  latency_regression_pct: 10",
              "  export_regression: fail"]
    if not verify_fixes:
        lines.append("fixes: {verify: false}")
    lines.append("")
    return "\n".join(lines)


def git(repo: str, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="zoo", GIT_AUTHOR_EMAIL="zoo@example.invalid",
               GIT_COMMITTER_NAME="zoo", GIT_COMMITTER_EMAIL="zoo@example.invalid")
    subprocess.run(["git", "-C", repo, *args], check=True, env=env, stdout=subprocess.DEVNULL)


def write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def edit(path: str, old: str, new: str) -> None:
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if text.count(old) != 1:
        raise SystemExit(f"{path}: the PR's edit point is not unique")
    write(path, text.replace(old, new))


def build_repo(repo: str, models: list[ZooModel], *, backend: str = "eager", rounds: int = 2,
               repeats: int = 20, warmup: int = 3, timeout_s: int = 600,
               shape_advice: bool = True, verify_fixes: bool = True) -> None:
    shutil.rmtree(repo, ignore_errors=True)
    os.makedirs(repo)
    write(os.path.join(repo, "zoo", "__init__.py"), INIT)
    write(os.path.join(repo, "zoo", "layers.py"), LAYERS)
    write(os.path.join(repo, "zoo", "models", "__init__.py"), "")
    for m in models:
        write(os.path.join(repo, "zoo", "models", f"{m.name}.py"), m.source)
    write(os.path.join(repo, "pt2bot.yml"),
          config_yml(models, backend=backend, rounds=rounds, repeats=repeats, warmup=warmup,
                     timeout_s=timeout_s, shape_advice=shape_advice,
                     verify_fixes=verify_fixes))
    write(os.path.join(repo, ".gitignore"), "__pycache__/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"zoo: {len(models)} models")
    names = {m.name for m in models}
    if ONE_MODEL_PR in names:
        git(repo, "checkout", "-q", "-b", "pr-one", "main")
        edit(os.path.join(repo, "zoo", "models", f"{ONE_MODEL_PR}.py"), ONE_PR_OLD, ONE_PR_NEW)
        git(repo, "commit", "-q", "-am", f"{ONE_MODEL_PR}: normalise by the largest activation")
    git(repo, "checkout", "-q", "-b", "pr-shared", "main")
    edit(os.path.join(repo, "zoo", "layers.py"), LAYERS_PR_OLD, LAYERS_PR_NEW)
    git(repo, "commit", "-q", "-am", "layers: guard TokenHead against overflowing activations")
    git(repo, "checkout", "-q", "main")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--backend", default="eager")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=600, help="run.timeout_s (per model)")
    ap.add_argument("--models", help="comma-separated subset")
    ap.add_argument("--no-shape-advice", action="store_true", help="run.shape_advice: false")
    ap.add_argument("--no-verify-fixes", action="store_true", help="fixes: {verify: false}")
    args = ap.parse_args()
    models = MODELS
    if args.models:
        want = args.models.split(",")
        models = [m for m in MODELS if m.name in want]
        if len(models) != len(want):
            raise SystemExit(f"unknown model in {args.models}")
    repo = os.path.abspath(args.repo)
    build_repo(repo, models, backend=args.backend, rounds=args.rounds, repeats=args.repeats,
               warmup=args.warmup, timeout_s=args.timeout,
               shape_advice=not args.no_shape_advice, verify_fixes=not args.no_verify_fixes)
    print(json.dumps({"repo": repo, "models": [m.name for m in models],
                      "shared": [m.name for m in models if m.shared]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
