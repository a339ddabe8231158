"""How close is `pt2bot check` to the cost of just parsing? (a benchmark, not a test)

On a large real codebase nobody here wrote (default: the `transformers` wheel, source only,
never imported), measure in one run, each as a fresh subprocess timed by wall clock:

- bare `ast.parse` of every file (1 process; and 2 processes for the parallel ratio),
- `pt2bot check --filter nofilter --select ALL` (all files, all rules) with -j 1 and -j 2,
- TorchFix (its own venv, it pins libcst) once with -j 2, when installed: it is ~100x slower,
  so its CPU seconds (user+sys of all its processes) stand in for the 1-process time.

Each row reports wall seconds (min of N runs) and CPU seconds (user+sys of the process and its
children, from the same run): on a shared machine CPU time is the steadier figure.

Usage: python benchmarks/bench_check.py [--tree DIR] [--repeat N] [--jobs 1,2] [--torchfix PATH]
Without --tree, `pip download --no-deps transformers==5.23.0` into a temp dir and unzip it.
The machine is shared: we report the minimum of N runs of each (less sensitive to noise).
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

PARSE_1 = """
import ast, sys
files = sys.argv[1:]
for f in files:
    with open(f, 'rb') as fh:
        try:
            ast.parse(fh.read())
        except (SyntaxError, ValueError):
            pass
"""
PARSE_N = """
import ast, sys
from multiprocessing import Pool
def parse(f):
    with open(f, 'rb') as fh:
        try:
            ast.parse(fh.read())
        except (SyntaxError, ValueError):
            pass
    return 0
if __name__ == '__main__':
    with Pool(int(sys.argv[1])) as p:
        sum(p.imap_unordered(parse, sys.argv[2:], chunksize=16))
"""


def fetch_tree(dest: str) -> str:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "transformers==5.23.0",
                    "-d", dest], check=True)
    wheel = next(f for f in os.listdir(dest) if f.endswith(".whl"))
    with zipfile.ZipFile(os.path.join(dest, wheel)) as z:
        z.extractall(os.path.join(dest, "src"))
    return os.path.join(dest, "src", "transformers")


def timed(cmd: list[str], cwd: str, repeat: int) -> tuple[float, float]:
    """(best wall seconds, CPU seconds of that run) over `repeat` runs."""
    import resource

    best = (float("inf"), 0.0)
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        dt = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        if r.returncode not in (0, 1):
            raise SystemExit(f"{cmd[:3]} failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
        best = min(best, (dt, cpu))
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", help="package directory to check (default: download transformers)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", default="1,2",
                    help="comma-separated -j values to time (e.g. 1: only the 1-process rows)")
    ap.add_argument("--torchfix", default=shutil.which("torchfix") or "/tmp/torchfix-venv/bin/torchfix",
                    help="TorchFix executable ('none' to skip)")
    args = ap.parse_args()
    tmp = None
    tree = args.tree
    if not tree:
        tmp = tempfile.mkdtemp(prefix="pt2bot-bench-")
        tree = fetch_tree(tmp)
    tree = os.path.abspath(tree)
    cwd, pkg = os.path.dirname(tree), os.path.basename(tree)
    files = sorted(os.path.relpath(os.path.join(d, f), cwd) for d, _, fs in os.walk(tree) for f in fs
                   if f.endswith(".py"))
    py = sys.executable
    pt2bot = [py, "-m", "pt2bot", "check", "--filter", "nofilter", "--select", "ALL", "--format", "json", pkg]
    jobs = sorted({int(j) for j in args.jobs.split(",")})
    rows = []
    parse1 = timed([py, "-c", PARSE_1, *files], cwd, args.repeat)
    rows.append(("ast.parse, 1 process", parse1, parse1))
    parse = {1: parse1}
    for j in jobs:
        if j > 1:  # the parallel parse is the baseline of the same -j
            parse[j] = timed([py, "-c", PARSE_N, str(j), *files], cwd, args.repeat)
            rows.append((f"ast.parse, {j} processes", parse[j], parse1))
    for j in jobs:
        rows.append((f"pt2bot check -j {j}", timed(pt2bot + ["-j", str(j)], cwd, args.repeat), parse[j]))
    if 2 in parse and args.torchfix and os.path.exists(args.torchfix):
        parse2 = parse[2]
        t2 = timed([args.torchfix, "--select", "ALL", "-j", "2", pkg], cwd, 1)
        rows.append(("torchfix -j 2", t2, parse2))
    elif 2 in parse:
        print(f"(TorchFix not found at {args.torchfix}: `python -m venv /tmp/torchfix-venv && "
              "/tmp/torchfix-venv/bin/pip install torchfix`)")
    print(f"tree: {tree} ({len(files)} files, {sum(os.path.getsize(os.path.join(cwd, f)) for f in files) >> 20} MiB)")
    print(f"best of {args.repeat} (TorchFix: 1 run); each a fresh process\n")
    print(f"{'what':24s} {'wall s':>8s} {'files/s':>8s} {'x parse':>8s} {'CPU s':>8s} {'CPU x parse':>12s}")
    for name, (wall, cpu), (bwall, bcpu) in rows:
        print(f"{name:24s} {wall:8.2f} {len(files) / wall:8.0f} {wall / bwall:8.2f} {cpu:8.2f} {cpu / parse1[1]:12.2f}")
    print("\n'x parse' (wall) compares 1-process rows with the 1-process parse and 2-process rows with the "
          "2-process parse; 'CPU x parse' divides by the CPU seconds of the 1-process parse.")
    if tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
