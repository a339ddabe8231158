#!/usr/bin/env bash
# The zoo benchmark's venv, OUTSIDE the repository: torch 2.13.0 (the CPU wheel), the pinned
# model libraries and pt2bot's deps from requirements.lock (--no-deps: pip resolves nothing
# and cannot pull in another torch), and this checkout of pt2bot, editable.
#   bash benchmarks/zoo/setup.sh            # → /work/venvs/zoo (or $ZOO_VENV)
#   bash benchmarks/zoo/setup.sh --snapshot # pt2bot from `git archive HEAD` (a committed
#                                           # state, not a shared working tree in flux)
# torchvision 0.28.0 is there because transformers and timm import it when installed; it
# does not load its C++ ops beside the CPU torch, so the generated zoo/__init__.py defines
# the two op schemas it needs first (benchmarks/zoo/generate.py).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
top="$(cd "$here/../.." && pwd)"
venv="${ZOO_VENV:-/work/venvs/zoo}"
python="${PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv "$venv"
fi
"$venv/bin/pip" install -q torch==2.13.0
"$venv/bin/pip" install -q --no-deps -r "$here/requirements.lock"
if [ "${1:-}" = "--snapshot" ]; then
  sha="$(git -C "$top" rev-parse --short HEAD)"
  src="$(dirname "$venv")/pt2bot-src-$sha"
  rm -rf "$src" && mkdir -p "$src"
  git -C "$top" archive HEAD | tar -x -C "$src"
  "$venv/bin/pip" install -q --no-deps -e "$src"
  echo "pt2bot $sha from $src"
else
  "$venv/bin/pip" install -q --no-deps -e "$top"
fi
"$venv/bin/pip" check
echo "venv ready: $venv"
