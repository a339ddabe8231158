#!/usr/bin/env bash
# The GPU check: a smoke run of the demo and of three zoo models on a
# CUDA device, with that machine's own Python and torch, in at most 8 minutes.
#
#   bash benchmarks/gpu_check.sh [DIR]     # figures → DIR/gpu-check.json (default: $OUT, else ./gpu-check)
#
# Environment:
#   PYTHON             the interpreter that has the machine's torch (default: python3, else python)
#   GPU_CHECK_BUDGET_S the whole run's budget in seconds (default 480)
#   GPU_CHECK_DEVICE   "cpu": a dry run of the script itself on a machine without a GPU
#                      (eager backend, no CUDA checks); default "cuda"
#
# What it checks, each with its figures in the one output file:
#   probe  torch and CUDA versions, device name, capability, memory, Triton (import), driver
#   demo   `pt2bot run --device cuda` of examples/pt2bot.yml (examples/demo.py's main branch):
#          inductor, so Triton kernels; CUDA-event latency; cuda.max_memory_allocated
#   zoo    `pt2bot run --device cuda` of three zoo models (benchmarks/zoo/generate.py:
#          llama, bert, vit), inductor
#   and that the inductor cache holds Triton kernels afterwards.
#
# No package registry on that machine: pt2bot's pure-Python dependencies (and transformers
# for the zoo models) come from wheels carried in the working tree under .whl/. Fetch them
# here, for the GPU machine's Python version and platform:
#   pip download --no-deps --only-binary=:all: --python-version 3.11 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
#       --platform manylinux_2_17_x86_64 --platform any -d .whl -r benchmarks/zoo/gpu-wheels.txt
# (about 37 MB without numpy; leave numpy out where the machine's torch has it.) Only wheels of
# distributions the machine's Python lacks are unpacked, into a throw-away venv that sees the
# system's site-packages (its torch); pt2bot itself is put on that venv's path by a .pth
# file, so nothing is built or installed on the machine.
#
# Exit codes: 0 every check passed; 1 a check failed (see the file); 2 set-up error
# (no Python, missing dependencies); 3 no CUDA device.
set -uo pipefail

t0=$SECONDS
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
out_dir="${1:-${OUT:-$PWD/gpu-check}}"
budget="${GPU_CHECK_BUDGET_S:-480}"
device="${GPU_CHECK_DEVICE:-cuda}"
mkdir -p "$out_dir"
out_file="$out_dir/gpu-check.json"
work="$(mktemp -d "${TMPDIR:-/tmp}/pt2bot-gpu-check.XXXXXX")"
trap 'rm -rf "$work"' EXIT

say() { printf 'gpu_check: %s\n' "$*" >&2; }
left() { echo $(( budget - (SECONDS - t0) )); }

# The one output file when we stop before the summary (no Python that can write it).
early_exit() {  # early_exit CODE STATUS MESSAGE
  local msg=${3//\\/\\\\}
  msg=${msg//\"/\\\"}
  printf '{"schema": "pt2bot.gpu-check/1", "status": "%s", "message": "%s", "wall_s": %d}\n' \
    "$2" "$msg" $(( SECONDS - t0 )) > "$out_file"
  say "$3"
  say "figures: $out_file"
  exit "$1"
}

case "$device" in cuda|cpu) ;; *) early_exit 2 usage "GPU_CHECK_DEVICE must be cuda or cpu, got '$device'";; esac

py="${PYTHON:-}"
if [ -z "$py" ]; then
  py="$(command -v python3 || command -v python || true)"
fi
if [ -z "$py" ] || ! command -v "$py" >/dev/null 2>&1; then
  early_exit 2 setup "no Python interpreter (set PYTHON)"
fi

# 1. No CUDA device: say so at once, before importing torch (seconds), unless a dry run.
if [ "$device" = cuda ]; then
  shopt -s nullglob
  nodes=(/dev/nvidia[0-9]* /dev/kf[d])   # globs: nullglob drops the absent ones
  shopt -u nullglob
  if [ ${#nodes[@]} -eq 0 ] && ! command -v nvidia-smi >/dev/null 2>&1; then
    early_exit 3 no_cuda "no CUDA device on this machine (no /dev/nvidia*, no nvidia-smi); nothing to check (GPU_CHECK_DEVICE=cpu runs the script itself on CPU)"
  fi
fi

# 2. Probe: torch, CUDA, the device, Triton.
probe="$work/probe.json"
timeout -k 5 120 "$py" - "$probe" "$device" >"$work/probe.log" 2>&1 <<'PY'
import json, subprocess, sys
path, device = sys.argv[1], sys.argv[2]
info = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import torch
except Exception as e:   # noqa: BLE001
    info["error"] = f"import torch: {type(e).__name__}: {e}"
    json.dump(info, open(path, "w"))
    sys.exit(4)
info.update(torch=torch.__version__, cuda_build=torch.version.cuda, hip=getattr(torch.version, "hip", None),
            cuda_available=torch.cuda.is_available(), device_count=torch.cuda.device_count())
if info["cuda_available"]:
    p = torch.cuda.get_device_properties(0)
    info.update(device_name=p.name, capability=f"{p.major}.{p.minor}",
                total_memory_gib=round(p.total_memory / 2**30, 1),
                multiprocessors=p.multi_processor_count)
    x = torch.randn(256, 256, device="cuda")
    info["matmul_ok"] = bool(torch.isfinite(x @ x).all().item())
try:
    import triton
    info["triton"] = triton.__version__
except Exception as e:   # noqa: BLE001
    info["triton"] = None
    info["triton_error"] = f"{type(e).__name__}: {e}"[:300]
try:
    info["driver"] = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version,name,memory.total", "--format=csv,noheader"],
        capture_output=True, text=True, timeout=20).stdout.strip() or None
except Exception:   # noqa: BLE001
    info["driver"] = None
json.dump(info, open(path, "w"), indent=1)
sys.exit(0 if info["cuda_available"] or device == "cpu" else 3)
PY
rc=$?
if [ $rc -ne 0 ]; then
  [ $rc -eq 3 ] && early_exit 3 no_cuda "no CUDA device visible to torch ($("$py" -c 'import json,sys; d=json.load(open(sys.argv[1])); print("torch", d.get("torch"), "cuda build", d.get("cuda_build"))' "$probe" 2>/dev/null)); nothing to check"
  early_exit 2 setup "the probe failed (rc $rc): $(tail -c 400 "$work/probe.log" | tr '\n' ' ')$(cat "$probe" 2>/dev/null)"
fi
say "probe: $(tr -d '\n' < "$probe")"

# 3. A throw-away venv on top of the machine's Python (its torch stays), pt2bot on its path.
if ! "$py" -m venv --without-pip --system-site-packages "$work/venv" >"$work/venv.log" 2>&1; then
  early_exit 2 setup "cannot create a venv with $py: $(tail -c 300 "$work/venv.log")"
fi
vpy="$work/venv/bin/python"
site="$("$vpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
# A venv made from a venv (or a conda env's python) sees only the base interpreter's
# packages: put the machine interpreter's own site-packages on the new venv's path too.
"$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' \
  > "$site/zz-machine-site.pth"
printf '%s\n' "$repo" > "$site/pt2bot-src.pth"
if ! "$vpy" - "$repo/.whl" "$site" >"$work/deps.log" 2>&1 <<'PY'
"""Unpack the carried wheels of distributions this interpreter lacks (no pip needed)."""
import importlib.metadata as md, os, platform, re, sys, zipfile
whl_dir, site = sys.argv[1], sys.argv[2]
ver = sys.version_info
arch = platform.machine()


def fits(tags):
    py, abi, plat = tags
    pys = py.split(".")
    ok_py = any(t in (f"cp{ver.major}{ver.minor}", f"py{ver.major}", f"py{ver.major}{ver.minor}")
                for t in pys)
    if abi == "abi3":
        ok_py = any(t.startswith("cp3") and int(t[3:]) <= ver.minor for t in pys if t[3:].isdigit())
    ok_plat = plat == "any" or ("linux" in plat and arch in plat)
    return ok_py and ok_plat


def installed(name):
    try:
        md.version(name)
        return True
    except md.PackageNotFoundError:
        return False


got = []
if os.path.isdir(whl_dir):
    for f in sorted(os.listdir(whl_dir)):
        if not f.endswith(".whl"):
            continue
        parts = f[:-4].split("-")
        name, tags = parts[0], parts[-3:]
        if installed(name) or installed(name.replace("_", "-")) or not fits(tags):
            continue
        with zipfile.ZipFile(os.path.join(whl_dir, f)) as z:
            z.extractall(site)
        got.append(f)
print("unpacked:", " ".join(got) or "nothing")
missing = []
for mod in ("yaml", "unidiff", "github", "pt2bot.cli"):
    try:
        __import__(mod)
    except Exception as e:   # noqa: BLE001
        missing.append(f"{mod} ({type(e).__name__}: {e})"[:200])
if missing:
    print("MISSING:", "; ".join(missing))
    sys.exit(1)
PY
then
  early_exit 2 setup "pt2bot's dependencies are missing and not in $repo/.whl: $(grep MISSING "$work/deps.log") (fetch the wheels: see the header of benchmarks/gpu_check.sh)"
fi
say "deps: $(grep unpacked "$work/deps.log" | cut -c1-300)"
has_transformers=0
"$vpy" -c 'import transformers' >/dev/null 2>&1 && has_transformers=1
export TORCHINDUCTOR_CACHE_DIR="$work/inductor-cache"   # cold: the compile figures are cold
backend=inductor
[ "$device" = cpu ] && backend=eager

# run_step NAME SECONDS DIR ARGS...: one pt2bot command under a timeout; its rc and wall.
declare -A step_rc step_wall
run_step() {
  local name=$1 limit=$2 dir=$3
  shift 3
  if [ "$limit" -lt 20 ]; then
    say "$name: skipped, the budget is spent"
    step_rc[$name]=skipped
    step_wall[$name]=0
    return
  fi
  local s=$SECONDS
  say "$name: $* (limit ${limit}s)"
  (cd "$dir" && timeout -k 10 "$limit" "$vpy" -m pt2bot "$@") >"$work/$name.log" 2>&1
  step_rc[$name]=$?
  step_wall[$name]=$(( SECONDS - s ))
  say "$name: rc ${step_rc[$name]} in ${step_wall[$name]}s"
}

# 4. The demo (examples/): its main branch, smoke run only.
demo="$work/demo"
if command -v git >/dev/null 2>&1 && \
   "$vpy" -c 'import sys; sys.path.insert(0, sys.argv[1]); import demo; demo.build_repo(sys.argv[2])' \
     "$repo/examples" "$demo" >"$work/demo-build.log" 2>&1; then
  git -C "$demo" checkout -q main
  sed -i "s/^run: {.*/run: {device: auto, backend: $backend, timeout_s: 200, rounds: 1}/" "$demo/pt2bot.yml"
  lim=$(( $(left) * 45 / 100 ))
  run_step demo "$lim" "$demo" run --config pt2bot.yml --device "$device" --out "$work/demo.json"
else
  say "demo: cannot build the demo repository: $(tail -c 300 "$work/demo-build.log" 2>/dev/null)"
  step_rc[demo]=build_failed
  step_wall[demo]=0
fi

# 5. Three zoo models (transformers; generated like the CPU benchmark, inductor here).
zoo="$work/zoo"
if [ $has_transformers -eq 1 ] && "$vpy" "$here/zoo/generate.py" "$zoo" --backend "$backend" \
     --models llama,bert,vit --rounds 1 --repeats 20 --timeout 150 >"$work/zoo-build.log" 2>&1; then
  lim=$(( $(left) - 35 ))   # the kill grace (10 s) and the summary stay inside the budget
  run_step zoo "$lim" "$zoo" run --config pt2bot.yml --device "$device" --out "$work/zoo.json"
else
  why="transformers is not importable (carry its wheels in .whl/)"
  [ $has_transformers -eq 1 ] && why="generate.py failed: $(tail -c 300 "$work/zoo-build.log")"
  say "zoo: skipped: $why"
  step_rc[zoo]=skipped
  step_wall[zoo]=0
fi

# 6. The one figures file.
steps_json="{"
for k in demo zoo; do
  steps_json+="\"$k\": {\"rc\": \"${step_rc[$k]:-none}\", \"wall_s\": ${step_wall[$k]:-0}},"
done
steps_json="${steps_json%,}}"
"$vpy" - "$out_file" "$probe" "$work" "$device" "$backend" "$(( SECONDS - t0 ))" "$steps_json" <<'PY'
import glob, json, os, sys
out, probe_path, work, device, backend, wall, steps = sys.argv[1:8]
steps = json.loads(steps)
probe = json.load(open(probe_path))
checks, models = [], {}


def check(name, ok, detail=""):
    checks.append({"check": name, "ok": bool(ok), "detail": detail})


def digest(run):
    lat = []
    for row in run.get("latency") or []:
        e, c = (row.get("eager_ms") or {}), (row.get("compiled_ms") or {})
        lat.append({"shape": row.get("shape"), "eager_ms_median": e.get("median"),
                    "compiled_ms_median": c.get("median"), "compiled_ms_min": c.get("min"),
                    "speedup": round(e["median"] / c["median"], 3)
                    if e.get("median") and c.get("median") else None})
    return {"status": run.get("status"), "error": run.get("error"),
            "duration_s": run.get("duration_s"), "phase_s": run.get("phase_s"),
            "phase_errors": [p.get("message", "")[:300] for p in run.get("phase_errors") or []],
            "compile_s": run.get("compile_s"), "peak_mem_mb": run.get("peak_mem_mb"),
            "peak_mem_method": run.get("peak_mem_method"),
            "graph_breaks": len(run.get("graph_breaks") or []),
            "recompiles": (run.get("recompiles") or {}).get("count"),
            "export_ok": (run.get("export") or {}).get("ok"),
            "accuracy_match": all(a.get("match") for a in run.get("accuracy") or [])
            if run.get("accuracy") else None,
            "latency": lat}


for step in ("demo", "zoo"):
    path = os.path.join(work, f"{step}.json")
    rc = steps[step]["rc"]
    if not os.path.exists(path):
        log = os.path.join(work, f"{step}.log")
        tail = open(log, errors="replace").read()[-800:] if os.path.exists(log) else ""
        check(f"{step}: results written", False, f"rc {rc}; {tail}")
        continue
    res = json.load(open(path))
    models[step] = {"header": {k: res.get(k) for k in ("torch", "device", "device_name",
                                                          "backend", "python", "commit")},
                    "models": {m["name"]: digest(m) for m in res.get("models", [])}}
    check(f"{step}: exit 0", rc == "0", f"rc {rc}")
    check(f"{step}: on {device}", res.get("device") == device, str(res.get("device")))
    for name, m in models[step]["models"].items():
        check(f"{step}/{name}: ok", m["status"] == "ok", json.dumps(m["error"])[:300])
        if m["status"] != "ok":
            continue
        check(f"{step}/{name}: latency measured", bool(m["latency"]) and all(
            r["compiled_ms_median"] for r in m["latency"]), json.dumps(m["latency"])[:300])
        if device == "cuda":
            check(f"{step}/{name}: peak memory from cuda.max_memory_allocated",
                  m["peak_mem_method"] == "cuda.max_memory_allocated",
                  f"{m['peak_mem_method']}: {m['peak_mem_mb']} MB")
        check(f"{step}/{name}: compiled output matches eager", m["accuracy_match"] is not False)
        check(f"{step}/{name}: no phase crashed", not m["phase_errors"], "; ".join(m["phase_errors"]))
if device == "cuda":
    check("probe: Triton importable", probe.get("triton"), str(probe.get("triton_error", "")))
    kernels = [p for p in glob.glob(os.path.join(work, "inductor-cache", "**", "*.py"),
                                    recursive=True)
               if "@triton.jit" in open(p, errors="replace").read()]
    check("inductor generated Triton kernels", kernels, f"{len(kernels)} kernel file(s)")
ok = all(c["ok"] for c in checks)
doc = {"schema": "pt2bot.gpu-check/1", "status": "ok" if ok else "failed",
       "device": device, "backend": backend, "wall_s": int(wall), "probe": probe,
       "steps": steps, "checks": checks, "runs": models}
json.dump(doc, open(out, "w"), indent=1)
bad = [c["check"] for c in checks if not c["ok"]]
print(f"gpu_check: {doc['status']}: {len(checks) - len(bad)}/{len(checks)} checks passed"
      + (f"; failed: {', '.join(bad)}" if bad else ""), file=sys.stderr)
sys.exit(0 if ok else 1)
PY
rc=$?
say "figures: $out_file ($(( SECONDS - t0 ))s wall in all)"
exit $rc
