"""A model whose forward differentiates inside itself (a force field's `-dE/dx` by
`torch.autograd.grad`) raises under `torch.no_grad()`, where the smoke run and the proof call
every model. `grad: true` runs its calls with autograd on: the run measures it, and the proof
verifies a fix on it."""
from __future__ import annotations

import json
import subprocess
import sys

from proofs import break_target, item, offered, one_model, prove, write_repo

from pt2bot.configfile.schema import build_config

PAIR = '''\
import torch


class PairEnergy(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = torch.nn.Parameter(torch.tensor(0.5))

    def forward(self, pos):
        pos = pos.detach().requires_grad_(True)
        d = torch.cdist(pos, pos) + torch.eye(pos.shape[0])
        energy = (self.k / d).sum()
        forces = -torch.autograd.grad(energy, pos)[0]
        return energy.detach(), forces
'''


def test_grad_is_a_model_key_off_by_default():
    text = ("version: 1\nmodels:\n  - {name: a, entry: m:A}\n  - {name: b, entry: m:B, grad: true}\n")
    config = build_config(text, "pt2bot.yml")
    assert (config.model("a").grad, config.model("b").grad) == (False, True)


def test_train_brings_grad_unless_the_file_says_otherwise():
    """A model compiled for a training step runs its forward with autograd on."""
    text = ("version: 1\nmodels:\n  - {name: a, entry: m:A, train: true}\n"
            "  - {name: b, entry: m:B, train: true, grad: false}\n"
            "  - {name: c, entry: m:C, train: false}\n")
    config = build_config(text, "pt2bot.yml")
    assert [config.model(n).grad for n in "abc"] == [True, False, False]


def test_a_forward_that_differentiates_runs_with_grad(tmp_path):
    """Without `grad:` the model is a reported crash with torch's reason; with it every phase
    runs, latency too, and the break at `torch.autograd.grad` is on its line."""
    from gitrepo import GitRepo

    repo = GitRepo.init(tmp_path / "repo")
    repo.write("net/__init__.py", "")
    repo.write("net/pair.py", PAIR)
    model = ("  - name: {name}\n    entry: net.pair:PairEnergy\n    inputs: [{{shape: [atoms, 3]}}]\n"
             "    shapes: {{atoms: [4, 6]}}\n")
    repo.write("pt2bot.yml", "version: 1\nmodels:\n" + model.format(name="inference")
               + model.format(name="forces") + "    grad: true\n"
               + "run: {device: cpu, backend: eager, timeout_s: 120, warmup: 1, repeats: 3}\n")
    repo.commit("a pair potential")
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "pt2bot", "run", "--config", str(repo.path / "pt2bot.yml"),
                           "--out", str(out)], capture_output=True, text=True, cwd=str(repo.path), timeout=300)
    assert proc.returncode == 0, proc.stderr
    runs = {m["name"]: m for m in json.loads(out.read_text())["models"]}
    assert runs["inference"]["status"] == "error"
    message = runs["inference"]["error"]["message"]
    assert "does not require grad" in message and message.endswith(
        "set `grad: true` on the model if its forward differentiates inside itself"), message
    # said on the console and in the model's log, not only in the results file
    assert message in proc.stderr
    assert message in (tmp_path / runs["inference"]["log"]).read_text()
    forces = runs["forces"]
    assert forces["status"] == "ok", forces
    assert ("GB9186", "net/pair.py", 13) in {(b["gb"], b["path"], b["line"]) for b in forces["graph_breaks"]}
    assert forces["latency"] and all(r["eager_ms"]["median"] > 0 for r in forces["latency"]), forces["latency"]
    assert {r["shape"]["atoms"] for r in forces["accuracy"]} == {4, 6}
    assert all(r["match"] for r in forces["accuracy"]), forces["accuracy"]


FORCES = '''\
import torch
from torch import nn


class Forces(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.k = nn.Parameter(torch.tensor(0.5))

    def forward(self, pos):
        pos = pos.detach().requires_grad_(True)
        energy = (self.k * pos.pow(2)).sum()
        forces = -torch.autograd.grad(energy, pos)[0]
        if not torch.isfinite(forces).all():
            forces = torch.nan_to_num(forces)
        return energy.detach(), forces
'''


def _proof(tmp_path, extra: str, title: str = "torch.where") -> dict:
    config = one_model("forces", "pkg.forces:Forces", "[{shape: [atoms, 3]}]", "{atoms: [4, 6]}", extra)
    root = write_repo(tmp_path / "repo", {"pkg/forces.py": FORCES}, config)
    target = break_target("forces", "pkg/forces.py", 14, "GB0170", "Data-dependent branching")
    c = next(c for c in offered(target, FORCES) if title in c.title)
    return prove(root, "forces", [item("f", c, FORCES, target)], tmp_path / "work")["f"]


def test_the_proof_verifies_a_fix_on_a_model_run_with_grad(tmp_path):
    verdict = _proof(tmp_path, "    grad: true\n")
    assert verdict["accepted"], verdict
    assert verdict["evidence"].startswith("GB0170 gone"), verdict


def test_the_branch_dropped_is_verified_too(tmp_path):
    """`if not torch.isfinite(f).all(): f = torch.nan_to_num(f)` is `nan_to_num` always: it
    changes nothing where every value is finite, compared with NaN and inf injected."""
    verdict = _proof(tmp_path, "    grad: true\n", "drop the branch")
    assert verdict["accepted"], verdict
    assert "NaN" in verdict["evidence"] and "inf" in verdict["evidence"], verdict["evidence"]


def test_without_grad_the_proof_has_no_run_to_compare(tmp_path):
    verdict = _proof(tmp_path, "")
    assert not verdict["accepted"]
    assert "does not require grad" in json.dumps(verdict), verdict
