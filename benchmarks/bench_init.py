"""How many real model classes `pt2bot init --check` proposes and keeps (they build and run
without edits), on public model libraries of different styles, for two versions of pt2bot.

    python3 benchmarks/bench_init.py setup --work /tmp/bench-init        # venv + sources (PyPI)
    python3 benchmarks/bench_init.py run --work /tmp/bench-init \\
        --side before=/path/to/old/pt2bot-checkout --side after=.        # → benchmarks/results/init_share.*
    python3 benchmarks/bench_init.py walltime --work /tmp/bench-init   # → results/init_walltime_litgpt.md

The libraries (pinned below) are none of those the other benchmarks use: litgpt (dataclass
`Config` with a `from_name` preset factory, a ModuleDict embedding, LoRA / adapter variants),
open_clip (two dataclass configs per model), fair-esm (keyword sizes, an alphabet built at run
time) and perceiver-ar-pytorch (lucidrains style, keyword-only sizes); and for forwards of
several inputs, torchkge (knowledge-graph scorers: entity and relation ids; not held out, see
LIBRARIES), torchcfm (flow-matching vector fields, `forward(t, x)`) and linformer. Their wheels are
unpacked, each as a repository of its own; `init --check` runs there with each pt2bot version
in turn, its smoke workers in a venv whose `pt2bot` is that version (a thin venv per side over
one venv holding torch and the libraries).

"Real model classes" are listed by hand below (the whole models a user of each library builds;
not layers, towers, losses or wrappers), with the reason. The share is the real models that
`init --check` keeps (proposed, built and run eagerly, graph-break pass) over all of them; the
other kept entries (layers proposed as models) are counted beside it.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

LIBRARIES = {
    # wheel pin, import package(s), the real model classes ("module:Class")
    "litgpt": ("litgpt==0.5.13", [
        # the GPT of each fine-tuning flavour; `litgpt.api:LLM` wraps a built GPT (not counted)
        "litgpt.model:GPT", "litgpt.lora:GPT", "litgpt.adapter:GPT", "litgpt.adapter_v2:GPT"]),
    "open_clip_torch": ("open-clip-torch==3.3.0", [
        # the models `open_clip.create_model` builds; the towers (VisionTransformer,
        # TextTransformer, ModifiedResNet, TimmModel, HFTextEncoder) are their parts
        "open_clip.model:CLIP", "open_clip.model:CustomTextCLIP", "open_clip.coca_model:CoCa"]),
    "fair_esm": ("fair-esm==2.0.0", [
        # the models `esm.pretrained` loads
        "esm.model.esm2:ESM2", "esm.model.esm1:ProteinBertModel",
        "esm.model.msa_transformer:MSATransformer", "esm.esmfold.v1.esmfold:ESMFold",
        "esm.inverse_folding.gvp_transformer:GVPTransformerModel"]),
    "perceiver_ar_pytorch": ("perceiver-ar-pytorch==0.0.10", [
        # AutoregressiveWrapper wraps a built PerceiverAR for training (not counted)
        "perceiver_ar_pytorch.perceiver_ar_pytorch:PerceiverAR"]),
    # Models whose forward takes several inputs. torchkge is NOT held out: a new user's trial
    # on it is what init's guesses for further inputs, ids by name and counts were written for;
    # torchcfm and linformer are (no guess was tuned on them; report them apart).
    "torchkge": ("torchkge==0.17.7", [
        # every scorer of a fact (heads, tails, relations, and negatives); the interfaces
        # (Model, TranslationModel, BilinearModel) are abstract bases
        *(f"torchkge.models.{m}" for m in (
            "bilinear:RESCALModel", "bilinear:DistMultModel", "bilinear:HolEModel",
            "bilinear:ComplExModel", "bilinear:AnalogyModel", "deep:ConvKBModel",
            "translation:TransEModel", "translation:TransHModel", "translation:TransRModel",
            "translation:TransDModel", "translation:TorusEModel"))]),
    "torchcfm": ("torchcfm==1.0.7", [
        # the vector fields a flow-matching user trains (forward(t, x)); the wrapper's and the
        # encoder's variants of the UNet are counted as the user builds them too
        "torchcfm.models.models:MLP", "torchcfm.models.unet.unet:UNetModel",
        "torchcfm.models.unet.unet:UNetModelWrapper", "torchcfm.models.unet.unet:EncoderUNetModel"]),
    "linformer": ("linformer==0.2.3", [
        "linformer.linformer:Linformer", "linformer.linformer:LinformerLM"]),
}
# What the libraries import (litgpt imports lightning at package import; open_clip and
# torchmetrics import torchvision), pinned; torch is the CPU wheel kept on this machine.
DEPENDENCIES = ["torch==2.13.0", "torchvision==0.28.0", "lightning==2.6.1",
                "jsonargparse[signatures]==4.41.0", "huggingface-hub==1.3.0", "safetensors==0.8.0",
                "tokenizers==0.23.3", "tqdm==4.70.1", "psutil==7.2.2", "pyyaml==6.0.4",
                "numpy==2.4.6", "ftfy==6.3.1", "regex==2026.11.19", "einops==0.8.2",
                "pillow==13.0.0", "unidiff==1.0.1", "PyGithub==2.10.0",
                # torchkge imports pandas, torchcfm imports POT (on scipy), at package import
                "pandas==3.1.1", "POT==0.9.7.post1", "scipy==1.17.1"]
# torchvision 0.28 registers fake kernels for two ops the CPU torch 2.13.0 lacks: define their
# schemas when torchvision is first imported (no torchvision op is called by these models).
SITECUSTOMIZE = '''\
import sys


class _DefineTorchvisionOps:
    done = False

    def find_spec(self, name, path=None, target=None):
        if name == "torchvision" and not self.done:
            self.done = True
            import torch
            lib = torch.library.Library("torchvision", "DEF")
            lib.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            lib.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
            globals()["_TV_LIB"] = lib
        return None


sys.meta_path.insert(0, _DefineTorchvisionOps())
'''


def _site(venv: str) -> str:
    return glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))[0]


def setup(work: str) -> None:
    venv = os.path.join(work, "venv")
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q"]
    subprocess.run(pip + DEPENDENCIES, check=True)
    with open(os.path.join(_site(venv), "sitecustomize.py"), "w") as fh:
        fh.write(SITECUSTOMIZE)
    wheels = os.path.join(work, "wheels")
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", wheels]
                   + [pin for pin, _ in LIBRARIES.values()], check=True)
    for lib, (pin, _) in LIBRARIES.items():
        name = pin.split("==")[0].replace("-", "_")
        [wheel] = [w for w in glob.glob(os.path.join(wheels, "*.whl"))
                   if os.path.basename(w).lower().startswith(name.lower() + "-")]
        dest = os.path.join(work, "src", lib)
        shutil.rmtree(dest, ignore_errors=True)
        with zipfile.ZipFile(wheel) as z:
            z.extractall(dest, [n for n in z.namelist() if ".dist-info/" not in n])
    print(f"ready: {work}")


def _side_venv(work: str, side: str, checkout: str) -> str:
    """A venv with no packages of its own: the libraries' venv, and `checkout`'s pt2bot."""
    venv = os.path.join(work, f"venv-{side}")
    if not os.path.exists(os.path.join(venv, "bin", "python")):
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    site = _site(venv)
    with open(os.path.join(site, "libs.pth"), "w") as fh:
        fh.write(_site(os.path.join(work, "venv")) + "\n")
    with open(os.path.join(site, "pt2bot_under_test.pth"), "w") as fh:
        fh.write(os.path.abspath(checkout) + "\n")
    return os.path.join(venv, "bin", "python")


def _live_entries(yml: str) -> list[str]:
    """The entries left live in a written pt2bot.yml (commented-out ones start with #)."""
    return re.findall(r"^    entry: (\S+)", open(yml, encoding="utf-8").read(), re.M)


def measure(work: str, side: str, checkout: str, lib: str) -> dict:
    python = _side_venv(work, side, checkout)
    root = os.path.join(work, "runs", side, lib)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(work, "src", lib), root)
    t0 = time.perf_counter()
    subprocess.run([python, "-m", "pt2bot", "init", ".", "--force"], cwd=root, check=True,
                   capture_output=True, text=True)
    proposed = _live_entries(os.path.join(root, "pt2bot.yml"))
    out = subprocess.run([python, "-m", "pt2bot", "init", ".", "--force", "--check"], cwd=root,
                         check=True, capture_output=True, text=True)
    took = time.perf_counter() - t0
    kept = _live_entries(os.path.join(root, "pt2bot.yml"))
    real = LIBRARIES[lib][1]
    with open(os.path.join(work, "runs", side, f"{lib}.out"), "w") as fh:
        fh.write(out.stdout + out.stderr)
    return {"library": lib, "pin": LIBRARIES[lib][0], "side": side, "real": len(real),
            "proposed": proposed, "kept": kept,
            "real_kept": sorted(set(kept) & set(real)),
            "other_kept": sorted(set(kept) - set(real)), "seconds": round(took, 1)}


def report(rows: list[dict], sides: list[str], load: str) -> str:
    lines = ["# `pt2bot init --check` on public model libraries", "",
             "Real model classes that `init --check` keeps (built and run without edits) over the "
             "real model classes of each library (benchmarks/bench_init.py lists them); beside "
             "it, the other entries it kept (layers proposed as models).", "",
             f"Machine load when measured (`uptime`): {load}", "",
             "| library | " + " | ".join(f"{s}: real kept | {s}: other kept" for s in sides) + " |",
             "|---|" + "---|---|" * len(sides)]
    libs = list(dict.fromkeys(r["library"] for r in rows))
    total = {s: [0, 0, 0] for s in sides}
    for lib in libs:
        cells = []
        for s in sides:
            r = next(r for r in rows if r["library"] == lib and r["side"] == s)
            cells += [f"{len(r['real_kept'])}/{r['real']}", str(len(r["other_kept"]))]
            total[s][0] += len(r["real_kept"])
            total[s][1] += r["real"]
            total[s][2] += len(r["other_kept"])
        pin = next(r["pin"] for r in rows if r["library"] == lib)
        lines.append(f"| {pin} | " + " | ".join(cells) + " |")
    lines.append("| **all** | " + " | ".join(
        f"**{t[0]}/{t[1]} ({t[0] / t[1]:.0%})** | {t[2]}" for t in (total[s] for s in sides)) + " |")
    lines += ["", "Kept entries per side:", ""]
    for r in rows:
        lines.append(f"- {r['side']} / {r['library']} ({r['seconds']} s for init and init "
                     f"--check): kept {', '.join(r['kept']) or 'nothing'}")
    return "\n".join(lines) + "\n"


def walltime(work: str, checkout: str, lib: str, model: str) -> str:
    """`pt2bot run` of one model that `init --check` kept, with each backend: the wall time of
    the run (what one side of a review costs) and of each phase. Inductor twice: a cold cache,
    then warm."""
    python = _side_venv(work, "walltime", checkout)
    root = os.path.join(work, "runs", "walltime", lib)
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(os.path.join(work, "src", lib), root)
    subprocess.run([python, "-m", "pt2bot", "init", ".", "--force"], cwd=root, check=True,
                   capture_output=True)
    base = open(os.path.join(root, "pt2bot.yml"), encoding="utf-8").read()
    cache = os.path.join(root, ".inductor-cache")
    rows = []
    for label, backend in (("eager", "eager"), ("aot_eager", "aot_eager"),
                           ("inductor, cold cache", "inductor"), ("inductor, warm cache", "inductor")):
        with open(os.path.join(root, "pt2bot.yml"), "w", encoding="utf-8") as fh:
            fh.write(base.replace("run: {device: auto}", f"run: {{device: cpu, backend: {backend}, "
                                                         f"cache_dir: {cache}}}"))
        out = os.path.join(root, f"{backend}.json")
        t0 = time.perf_counter()
        subprocess.run([python, "-m", "pt2bot", "run", "--model", model, "--out", out], cwd=root,
                       check=True, capture_output=True)
        took = time.perf_counter() - t0
        [run] = json.load(open(out))["models"]
        phases = ", ".join(f"{k} {v:.0f}" for k, v in (run.get("phase_s") or {}).items())
        rows.append(f"| {label} | {run['status']} | {took:.0f} | {phases} |")
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return "\n".join([f"`pt2bot run --model {model}` ({lib}, the entry `init` wrote), CPU; {load}", "",
                      "| backend | status | wall s | phases (s) |", "|---|---|---:|---|", *rows]) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("setup")
    s.add_argument("--work", required=True)
    r = sub.add_parser("run")
    r.add_argument("--work", required=True)
    r.add_argument("--side", action="append", required=True, metavar="NAME=CHECKOUT",
                   help="a pt2bot checkout (the directory holding pt2bot/) to measure")
    r.add_argument("--library", action="append", default=[], choices=sorted(LIBRARIES))
    w = sub.add_parser("walltime", help="pt2bot run of one kept model per backend")
    w.add_argument("--work", required=True)
    w.add_argument("--checkout", default=os.path.dirname(HERE))
    w.add_argument("--library", default="litgpt", choices=sorted(LIBRARIES))
    w.add_argument("--model", default="model_gpt")
    args = ap.parse_args()
    if args.cmd == "setup":
        setup(args.work)
        return 0
    if args.cmd == "walltime":
        text = walltime(args.work, args.checkout, args.library, args.model)
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, f"init_walltime_{args.library}.md"), "w") as fh:
            fh.write(text)
        print(text)
        return 0
    sides = [tuple(x.split("=", 1)) for x in args.side]
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    rows = []
    for lib in args.library or list(LIBRARIES):
        for side, checkout in sides:
            rows.append(measure(args.work, side, checkout, lib))
            print(json.dumps(rows[-1]), flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "init_share.json"), "w") as fh:
        json.dump({"load": load, "rows": rows}, fh, indent=1)
    text = report(rows, [s for s, _ in sides], load)
    with open(os.path.join(RESULTS, "init_share.md"), "w") as fh:
        fh.write(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
