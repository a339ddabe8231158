#!/usr/bin/env bash
# The real-code benchmark's own venv, OUTSIDE the repository, with pinned releases of the
# model libraries it evaluates. Never touches the project's .venv.
#   bash benchmarks/real_code/setup.sh            # → /work/venvs/realcode (or $REALCODE_VENV)
# torch 2.13.0 is the CPU wheel this machine keeps on disk (pip finds it in seconds). Every
# other package is installed with --no-deps from requirements.lock (exact versions), so pip
# resolves nothing and cannot pull in another torch. torchvision 0.28.0 does not load its C++
# ops beside the CPU torch; collect.py defines the two op schemas it needs before importing it
# (see collect.shim_torchvision).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${REALCODE_VENV:-/work/venvs/realcode}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install -q torch==2.13.0
"$venv/bin/pip" install -q --no-deps -r "$here/requirements.lock"
# what benchmarks/bench_realcode_proof.py imports of pt2bot's own dependencies (its proof runs
# inside this venv, next to the libraries); PyYAML comes with the locked libraries
"$venv/bin/pip" install -q --no-deps unidiff==1.0.1
# pytorch-tabnet declares scikit-learn for its sklearn-style wrappers (fit, predict); the benchmark
# builds its network modules (pytorch_tabnet.tab_network: numpy and torch only), so scikit-learn
# is not installed and that one unmet requirement is expected. The same for
# pytorch-metric-learning (scikit-learn only in utils.accuracy_calculator, which no spec imports)
# and nflows (tensorboard, imported nowhere in the package). nflows does import matplotlib
# (nflows.nn.nde.made, reached by `import nflows.distributions`), so matplotlib and its
# dependencies are locked above. pyro-ppl (with pyro-api) and piq need nothing unlocked (piq's
# torchvision is the locked one; its Inception, VGG and LPIPS weights are never loaded). tensorly-torch
# (tltorch) imports tensorly without declaring it; tensorly and tntorch declare only numpy and
# scipy, both locked. torchdeq declares torch and numpy, e2cnn torch, numpy, scipy and sympy, all
# locked. hypll declares torch alone (its dev and docs extras are not installed), diffsort torch
# and numpy. tad-dftd3 declares torch and exactly tad-mctc 0.8.0 (locked with it), which declares
# numpy, opt-einsum, psutil, torch and typing-extensions, all locked; torchlie declares nothing.
# torch-structured declares torch, numpy, scipy, einops and opt_einsum (all locked) but its _ops
# module imports triton unconditionally, so triton is locked too (a 286 MB wheel, only for that
# import: on CPU every op binds to the package's torch reference, and torch's has_triton() stays
# False without a GPU); torchkge declares numpy, tqdm, torch and pandas (locked; pandas declares
# numpy and python-dateutil, both locked). torchcfm declares torch, numpy, scipy, matplotlib, pot,
# torchdiffeq and pandas (locked; POT, locked with it, declares numpy and scipy) and also
# scikit-learn, torchdyn and absl-py, which are not installed: torchdyn only in torchcfm.utils (the
# plotting and toy-data helpers, which no spec imports), scikit-learn and absl-py nowhere in the
# package; so those three unmet requirements are expected. linformer declares torch alone. norse
# 1.1.0 (an sdist with no compiled part; its CMakeLists is not used by pip) declares numpy, torch,
# torchvision (all locked), nir and nirtorch: norse.torch imports both at import time (its NIR
# export and import), so nir 1.0.8 and nirtorch 2.6 are locked with it; nir declares numpy and h5py
# and imports h5py at import time (its serialization), so h5py 3.16.0 (a binary wheel with its own
# HDF5) is locked too; nirtorch declares torch and nir. mega-pytorch declares torch, einops and
# scipy, all locked. torchgan 0.1.0 declares numpy, pillow, scipy, torch, torchvision (all locked)
# and wget, which is imported nowhere in the package (its trainer and loggers take no download),
# so that one unmet requirement is expected; it imports torchvision at package import (its
# visualizers), shimmed as above. flowtorch 0.8 declares torch alone. tab-transformer-pytorch
# 0.6.1 declares einops, hyper-connections (both locked), torch, x-mlps-pytorch and
# discrete-continuous-embed-readout, locked with it: x-mlps-pytorch 0.6.9 declares einops, einx and
# torch-einops-utils (all locked), discrete-continuous-embed-readout 0.2.12 declares einops and
# beartype, so beartype 0.23.1 (pure Python, no dependency) is locked too. dctorch 0.1.2 declares
# numpy<2 and scipy<2; it calls only numpy.eye and scipy.fft.dct/idct, which numpy 2.4.6 serves
# as they are, so that one requirement line is expected. focal-frequency-loss 0.3.0 declares torch
# and numpy (locked; it imports only torch), info-nce-pytorch 0.1.4 declares torch alone.
# torchdrift 0.1.0.post1 declares torch alone (it imports numpy and tqdm, locked; numba is
# optional and not installed, its KS p-value then runs as plain Python), torchnmf 0.3.5 declares
# torch and tqdm (locked). fast-bss-eval 0.1.4 declares numpy and scipy (locked; its torch
# backend imports torch, and scipy only for linear_sum_assignment), ci-sdr 0.0.2 (an sdist, pure
# Python) declares numpy, scipy, torch and einops (all locked). torch-hd 5.8.4 declares torch,
# scipy, pandas, numpy, requests, tqdm (all locked) and openpyxl, which only one dataset's
# pandas.read_excel would use (torchhd.datasets.ccpp, which no spec loads), so that one unmet
# requirement is expected. torcheval 0.0.7 declares typing-extensions (locked); its package
# import reaches torchvision (the FID metric's Inception), shimmed as above. torch-nl 0.3
# declares torch and numpy (locked) and also ase, pytest and black, which are not installed:
# ase only in its tests and in utils.ase2data's body (a converter from ase.Atoms, which no spec
# calls), pytest only in its tests, black nowhere, so those three unmet requirements are
# expected. deel-torchlip 1.0.5 declares numpy and torch (locked). unfoldNd 0.2.3 declares
# packaging, torch and numpy (locked), rtdl-num-embeddings 0.0.12 torch alone (scikit-learn only
# for tree-based bins, imported in a try and not installed: no spec asks for tree bins).
# complextorch 2.1.1 declares numpy>=2.2.0, torch>=2.1.0 and scipy>=1.10.0 (locked: numpy 2.4.6,
# scipy 1.17.1); resize-right 0.0.2 declares nothing (it imports torch and numpy, both locked).
# st-moe-pytorch 0.1.8 declares beartype, CoLT5-attention>=0.10.15, einops>=0.6 and torch>=2.0
# (locked: beartype 0.23.1, colt5-attention 0.11.2, einops 0.8.2); egnn-pytorch 0.2.8 declares
# einops, numpy, torch (locked) and numba, which is not installed: no module of it imports numba
# (its torch_geometric layer imports torch_geometric in a try; locked).
# dasp-pytorch 0.0.1 declares torch, numpy and scipy (locked); ponder-transformer 0.0.8 declares
# einops>=0.3 and torch>=1.6 (locked). Neither adds a pip check line.
# TorchCRF 1.1.0 declares numpy and torch>=1.0.0 (locked); mixture-of-attention 0.0.25 declares
# colt5-attention>=0.10.14, einops>=0.6.1, local-attention>=1.8.6 and torch>=1.6 (locked:
# colt5-attention 0.11.2, einops 0.8.2, local-attention 1.11.2). Neither adds a pip check line.
# coco-lm-pytorch 0.0.2 declares torch, einops and x-transformers (locked: einops 0.8.2,
# x-transformers 2.31.10); torchreg 0.1.3 declares torch and tqdm (locked: tqdm 4.70.1). Neither
# adds a pip check line.
# coral-pytorch 1.4.0 declares setuptools (in the venv); focal-loss-torch 0.1.2 declares torch and
# numpy (locked: numpy 2.4.6). Neither adds a pip check line.
# pytorch-adaptive-computation-time 0.1.3 declares torch<2.0.0,>=1.5.0 and pytorch-lightning
# ==0.8.5, which is not installed: only its tasks (parity, addition; the training scripts, which
# no spec imports) import pytorch_lightning, its models module imports torch alone and runs on
# the locked torch 2.13.0, so those two requirement lines are expected. torchbnn 1.2 declares
# nothing (it imports torch alone).
# nms-3d 0.2.0 declares torch>=2.2.2 (its plotly, pytest, torchvision and monai are extras, not
# installed: plotly only inside plot_3d_boxes, which no spec calls); torch-complex 0.4.4
# declares packaging and numpy (locked: packaging 26.4, numpy 2.4.6). Neither adds a pip check
# line.
# recsys-metrics 0.0.4 declares numpy and torch (locked: numpy 2.4.6; it imports torch alone);
# seesawloss 0.1.1 (a pure-Python sdist) declares nothing (it imports torch alone). Neither adds
# a pip check line.
# otloss 0.1.0 declares torch>=2.0.0 (its black, mypy, pytest, ruff, matplotlib and numpy are
# extras, not installed; it imports torch alone); torch-geometric-median 0.1.1 declares
# torch>=2.0.0 and tqdm>=4.0.0 (locked: tqdm 4.70.1). Neither adds a pip check line.
# mixup 0.2.2 declares torch>=1.10.0 and numpy>=1.21.0 (locked: numpy 2.4.6); torch-image-metrics
# 0.1.0 declares torch>=2.0.0, torchvision>=0.15.0, pillow>=9.0.0, numpy>=1.21.0 and tqdm>=4.67.1
# (locked: torchvision 0.28.0, pillow 13.0.0, tqdm 4.70.1; its extra 'full' names lpips, which is
# not installed, and pytorch-fid, torchmetrics and scipy, which the lock has for other libraries:
# imported only inside LPIPS, FID and ImprovedSSIM, which no spec enables). Neither adds a pip
# check line.
problems="$("$venv/bin/pip" check | grep -vx 'No broken requirements found\.' \
  | grep -vx 'pytorch-tabnet 4\.1\.0 requires scikit-learn, which is not installed\.' \
  | grep -vx 'pytorch-metric-learning 2\.9\.0 requires scikit-learn, which is not installed\.' \
  | grep -vx 'nflows 0\.14 requires tensorboard, which is not installed\.' \
  | grep -vx 'torchcfm 1\.0\.7 requires absl-py, which is not installed\.' \
  | grep -vx 'torchcfm 1\.0\.7 requires scikit-learn, which is not installed\.' \
  | grep -vx 'torchcfm 1\.0\.7 requires torchdyn, which is not installed\.' \
  | grep -vx 'torchgan 0\.1\.0 requires wget, which is not installed\.' \
  | grep -vx 'torch-hd 5\.8\.4 requires openpyxl, which is not installed\.' \
  | grep -vx 'torch-nl 0\.3 requires ase, which is not installed\.' \
  | grep -vx 'torch-nl 0\.3 requires black, which is not installed\.' \
  | grep -vx 'torch-nl 0\.3 requires pytest, which is not installed\.' \
  | grep -vx 'egnn-pytorch 0\.2\.8 requires numba, which is not installed\.' \
  | grep -vx 'dctorch 0\.1\.2 has requirement numpy<2\.0\.0,>=1\.22\.3, but you have numpy 2\.4\.6\.' \
  | grep -vx 'pytorch-adaptive-computation-time 0\.1\.3 requires pytorch-lightning, which is not installed\.' \
  | grep -vx 'pytorch-adaptive-computation-time 0\.1\.3 has requirement torch<2\.0\.0,>=1\.5\.0, but you have torch 2\.13\.0+cpu\.' \
  || true)"
if [ -n "$problems" ]; then echo "$problems"; exit 1; fi
"$venv/bin/python" - <<'PY'
import importlib.metadata as m
for n in ("torch", "torchvision", "vit-pytorch", "x-transformers", "denoising-diffusion-pytorch",
          "monai", "timm", "kornia", "vector-quantize-pytorch", "segmentation-models-pytorch",
          "diffusers", "local-attention", "open-clip-torch", "torchdiffeq", "entmax", "torchmetrics",
          "torchsde", "torch-geometric", "normflows", "pytorch-tabnet", "reformer-pytorch",
          "performer-pytorch", "e3nn", "pytorch-crf", "routing-transformer", "torch-kmeans",
          "pytorch-tcn", "mambapy", "sinkhorn-transformer", "pytorch-ood",
          "lie-transformer-pytorch", "xitorch", "geoopt", "pytorch-minimize", "torch-kf",
          "zuko", "torchcde", "FrEIA", "torchist", "nflows", "pytorch-metric-learning",
          "pyro-ppl", "piq", "tensorly", "tensorly-torch", "tntorch", "torchdeq", "e2cnn",
          "hypll", "diffsort", "tad-dftd3", "tad-mctc", "torchlie", "torch-structured",
          "triton", "torchkge", "pandas", "torchcfm", "POT", "linformer", "norse", "nir",
          "nirtorch", "h5py", "mega-pytorch", "torchgan", "flowtorch",
          "tab-transformer-pytorch", "x-mlps-pytorch", "discrete-continuous-embed-readout",
          "beartype", "dctorch", "focal-frequency-loss", "info-nce-pytorch", "torchdrift",
          "torchnmf", "fast-bss-eval", "ci-sdr", "torch-hd", "torcheval",
          "torch-nl", "deel-torchlip", "unfoldNd", "rtdl-num-embeddings",
          "complextorch", "resize-right", "st-moe-pytorch", "egnn-pytorch",
          "dasp-pytorch", "ponder-transformer", "TorchCRF", "mixture-of-attention",
          "coco-lm-pytorch", "torchreg", "coral-pytorch", "focal-loss-torch",
          "pytorch-adaptive-computation-time", "torchbnn", "nms-3d", "torch-complex",
          "recsys-metrics", "seesawloss", "otloss", "torch-geometric-median",
          "mixup", "torch-image-metrics"):
    print(f"{n}=={m.version(n)}")
PY
echo "venv ready: $venv"
