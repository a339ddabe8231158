"""How close is `pt2bot check` to the cost of just parsing, cold and warm? (a benchmark, not a test)

On a large real codebase nobody here wrote (default: the `transformers` wheel, source only,
never imported), copied to a temp dir so one file can be edited, in interleaved rounds (each
command a fresh subprocess, timed by wall clock and by its CPU seconds, user+sys):

- `parse`: bare `ast.parse` of every file, 1 process (and N processes for `-j N` rows);
- `cold`:  `pt2bot check --filter nofilter --select ALL -j J` with an empty cache directory
           (PT2BOT_CACHE_DIR): scans every file, parses those that may hold compiled code and
           those the call graph names (pt2bot/static/scan.py), and writes their entries;
- `warm1`: the same again after one file (`--edit`, a large model file) changed: the re-check
           pre-commit does after an edit;
- `nocache`: the same with `--no-cache`.

Targets: cold <= 1.3x parse (1 process) as the ratio of the minima over the rounds,
and warm1 <= 0.1x cold. Single pairs are too noisy on a shared machine; a round runs every
command once, in an order that alternates, so a slow phase of the machine hits all of them.
The findings of cold, warm1 and nocache must be the same (the edit is a trailing comment):
the benchmark fails otherwise.

pt2bot's own bytecode is compiled first (`compileall`), as `pip install` does for a user: the
baseline imports only the standard library, whose bytecode is there, and where
PYTHONDONTWRITEBYTECODE is set (this development machine, the Docker image) an uncompiled
pt2bot would pay ~0.1 s compiling its ~45 modules in every run, cold and warm alike.

`--breakdown` adds an in-process split of one cold check (read, parse, skeleton, walks, graph,
cache writes) and of one warm check. `--bounds` adds what a cold check parses and walks, and
the most that parsing only the function bodies it needs, or a memo of walks of text-identical
functions, could save (`--rounds 0`: only these). TorchFix (its own venv, it pins libcst) runs
once with -j 2 when installed: it is ~100x slower.

Usage: python benchmarks/bench_check.py [--tree DIR] [--rounds N] [--jobs 1,2] [--breakdown] [--bounds]
Without --tree, `pip download --no-deps transformers==5.23.0` into a temp dir and unzip it.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
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
EDIT = "models/llama/modeling_llama.py"


def fetch_tree(dest: str) -> str:
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "transformers==5.23.0",
                    "-d", dest], check=True)
    wheel = next(f for f in os.listdir(dest) if f.endswith(".whl"))
    with zipfile.ZipFile(os.path.join(dest, wheel)) as z:
        z.extractall(os.path.join(dest, "src"))
    return os.path.join(dest, "src", "transformers")


def timed(cmd: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, float, bytes]:
    """(wall seconds, CPU seconds, stdout) of one run."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 1):
        raise SystemExit(f"{cmd[:4]} failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
    return dt, cpu, r.stdout


def findings_of(out: bytes) -> list[tuple]:
    """The findings as comparable rows; a run that printed no findings JSON is a failure."""
    try:
        fs = json.loads(out)["findings"]
    except (ValueError, KeyError) as e:
        raise SystemExit(f"pt2bot check did not print findings JSON ({e}): {out[:500]!r}")
    return sorted((f["path"], f["line"], f["col"], f["rule"], f["message"], f["severity"]) for f in fs)


def breakdown(root: str, pkg: str, edit: str) -> None:
    """Where one cold and one warm check spend their CPU time (in this process)."""
    import ast

    from pt2bot import static
    from pt2bot.static import check as static_check
    from pt2bot.static import files as static_files
    from pt2bot.config import StaticConfig
    from pt2bot.rules import select_rules
    from pt2bot.static.cache import Cache

    spent: dict[str, float] = {}

    def wrap(obj, name: str, key: str) -> None:
        orig = getattr(obj, name)

        def f(*a, **k):
            t = time.process_time()
            try:
                return orig(*a, **k)
            finally:
                spent[key] = spent.get(key, 0.0) + time.process_time() - t
        setattr(obj, name, f)

    wrap(static_files, "read_source", "read files")
    wrap(static_files, "scan_file", "text scans (which files to parse)")
    wrap(static_files, "files_to_parse", "text scans (which files to parse)")
    wrap(ast, "parse", "ast.parse")
    wrap(static_files, "skeleton_module", "skeleton (incl. compile-site walks)")
    wrap(static_files, "_predict", "walks of predicted functions")
    wrap(static_files.FileSet, "walk", "walks the graph asked for (incl. re-parse)")
    wrap(static_files, "add_line_info", "line info")
    wrap(static_files, "content_digest", "content hashes")
    wrap(Cache, "read", "cache: read entries")
    wrap(Cache, "load", "cache: check + unpickle")
    wrap(Cache, "store", "cache: pickle + atomic write")
    wrap(static_check, "find_compiled", "call graph (incl. its walks)")
    cfg = StaticConfig(select=("ALL",))
    codes = tuple(r.code for r in select_rules(cfg.select, cfg.ignore))
    cache_dir = tempfile.mkdtemp(prefix="pt2bot-bench-cache-")
    try:
        for label in ("cold", "warm1"):
            if label == "warm1":
                with open(os.path.join(root, pkg, edit), "a") as fh:
                    fh.write("\n# pt2bot bench: breakdown edit\n")
            spent.clear()
            stats = static_files.Stats()
            t = time.process_time()
            static.check_paths(root, [pkg], cfg, jobs=1, cache=Cache(cache_dir, codes), stats=stats)
            total = time.process_time() - t
            print(f"\n{label}: {total:.2f} CPU s in process ({stats.files} files: {stats.cached} from the cache, "
                  f"{stats.parsed} parsed, {stats.reopened} parsed again for later walks, {stats.written} written)")
            for k, v in sorted(spent.items(), key=lambda kv: -kv[1]):
                print(f"  {k:44s} {v:7.2f}  {v / total:6.1%}")
            print("  (disjoint, except: the call graph includes the walks it asked for, and those include "
                  "their re-parses)")
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)


def bounds(root: str, pkg: str) -> None:
    """What a cold check cannot avoid and what the ways of doing less could save at most:
    the bytes it parses; of them, the bytes of the functions it walks, of those it parses but
    never walks (split by why the skeleton reads them), and of text-identical copies among the
    walked ones (what a memo of walks by text could skip). Functions as the skeleton sees them
    (pt2bot/analysis/walk.py `skeleton_module`): module-level defs and methods of module-level
    classes, each from its `def` line to its last line."""
    import ast
    import hashlib

    from pt2bot import static
    from pt2bot.static import check as static_check
    from pt2bot.static import files as static_files
    from pt2bot.config import StaticConfig

    states: dict = {}
    close = static_files.Analysis.close

    def keep(self) -> None:
        states.update(self.states)
        close(self)
    static_files.Analysis.close = keep
    try:
        static.check_paths(root, [pkg], StaticConfig(select=("ALL",)), jobs=1, cache=None)
    finally:
        static_files.Analysis.close = close
    total = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(os.path.join(root, pkg))
                for f in fs if f.endswith(".py"))
    n_total = sum(1 for d, _, fs in os.walk(os.path.join(root, pkg)) for f in fs if f.endswith(".py"))
    parsed = walked = init = compiling = other = 0
    texts: set[bytes] = set()
    in_class: set[tuple[str | None, bytes]] = set()
    n_walked = dup_bytes = dup_class_bytes = 0
    for rel, st in states.items():
        with open(os.path.join(root, rel), "rb") as fh:
            data = fh.read()
        parsed += len(data)
        if st.summary.error or st.summary.skip_file:
            continue
        starts = [0]
        for line in data.split(b"\n"):
            starts.append(starts[-1] + len(line) + 1)
        compiles = static_files.may_compile(data)
        tree = ast.parse(data)
        defs = [(n, None, n.name) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
        defs += [(m, c.name, f"{c.name}.{m.name}") for c in tree.body if isinstance(c, ast.ClassDef)
                 for m in c.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        for node, cls, q in defs:
            text = data[starts[node.lineno - 1]:starts[node.end_lineno]]
            if q in st.walked:
                walked += len(text)
                n_walked += 1
                digest = hashlib.sha1(text).digest()
                if digest in texts:
                    dup_bytes += len(text)
                texts.add(digest)
                if (cls, digest) in in_class:
                    dup_class_bytes += len(text)
                in_class.add((cls, digest))
            elif cls is not None and ("init" in node.name or "build" in node.name or "setup" in node.name):
                init += len(text)
            elif compiles:
                compiling += len(text)
            else:
                other += len(text)
    rest = parsed - walked - init - compiling - other

    def mb(b: int) -> str:
        return f"{b / 1e6:.1f} MB ({b / parsed:.1%} of parsed)"
    print(f"\nbounds (cold, in process, no cache): {n_total} files, {total / 1e6:.1f} MB; the check parsed "
          f"{len(states)} files, {parsed / 1e6:.1f} MB ({parsed / total:.1%} of the bytes)")
    print(f"  in the {n_walked} functions it walked (compiled code):       {mb(walked)}")
    print(f"  never walked, constructors the skeleton reads (attributes, flags): {mb(init)}")
    print(f"  never walked, in files that may call compile (the skeleton finds compile sites): {mb(compiling)}")
    print(f"  never walked, the rest (the most that parsing only needed bodies saves): {mb(other)}")
    print(f"  outside functions (imports, class bodies, module code):  {mb(rest)}")
    print(f"  walked functions whose text is a copy of another walked one: {dup_bytes / 1e6:.1f} MB "
          f"({dup_bytes / max(walked, 1):.1%} of the walked bytes); a copy in a class of the same name: "
          f"{dup_class_bytes / 1e6:.1f} MB ({dup_class_bytes / max(walked, 1):.1%})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", help="package directory to check (default: download transformers)")
    ap.add_argument("--rounds", type=int, default=5, help="0: only --breakdown/--bounds")
    ap.add_argument("--jobs", default="1", help="comma-separated -j values to time (e.g. 1,2)")
    ap.add_argument("--edit", default=EDIT, help="file (relative to the package) edited before warm1")
    ap.add_argument("--breakdown", action="store_true", help="also split one cold and one warm check")
    ap.add_argument("--bounds", action="store_true",
                    help="also what a cold check parses and walks, and what doing less could save at most")
    ap.add_argument("--torchfix", default=shutil.which("torchfix") or "/tmp/torchfix-venv/bin/torchfix",
                    help="TorchFix executable ('none' to skip)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="pt2bot-bench-")
    try:
        src = os.path.abspath(args.tree) if args.tree else fetch_tree(os.path.join(tmp, "dl"))
        pkg = os.path.basename(src)
        cwd = os.path.join(tmp, "tree")
        shutil.copytree(src, os.path.join(cwd, pkg), ignore=shutil.ignore_patterns("__pycache__", ".pt2bot-cache"))
        if not os.path.isfile(os.path.join(cwd, pkg, args.edit)):
            raise SystemExit(f"--edit {args.edit}: not in {src}")
        compile_pt2bot()
        if args.rounds > 0:
            run_rounds(args, cwd, pkg, tmp)
        if args.breakdown:
            breakdown(cwd, pkg, args.edit)
        if args.bounds:
            bounds(cwd, pkg)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def compile_pt2bot() -> None:
    """Write the bytecode of the pt2bot the checks import, as an installed package has it."""
    out = subprocess.run([sys.executable, "-c", "import os, pt2bot; print(os.path.dirname(pt2bot.__file__))"],
                         check=True, capture_output=True, text=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "compileall", "-q", out], check=True)


def run_rounds(args, cwd: str, pkg: str, tmp: str) -> None:
    files = sorted(os.path.relpath(os.path.join(d, f), cwd) for d, _, fs in os.walk(os.path.join(cwd, pkg))
                   for f in fs if f.endswith(".py"))
    py = sys.executable
    check = [py, "-m", "pt2bot", "check", "--filter", "nofilter", "--select", "ALL", "--format", "json", pkg]
    jobs = sorted({int(j) for j in args.jobs.split(",")})
    times: dict[str, list[tuple[float, float]]] = {}
    edit = os.path.join(cwd, pkg, args.edit)
    for r in range(args.rounds):
        cache = os.path.join(tmp, f"cache-{r}")
        env = {**os.environ, "PT2BOT_CACHE_DIR": cache}
        steps = [("parse", lambda: timed([py, "-c", PARSE_1, *files], cwd))]
        for j in jobs:
            if j > 1:
                steps.append((f"parse -j {j}", lambda j=j: timed([py, "-c", PARSE_N, str(j), *files], cwd)))
        seen: dict[str, list[tuple]] = {}
        for j in jobs:
            cache_j = f"{cache}-j{j}"
            env_j = {**env, "PT2BOT_CACHE_DIR": cache_j}

            def cold(j=j, env_j=env_j, cache_j=cache_j):
                shutil.rmtree(cache_j, ignore_errors=True)
                return timed(check + ["-j", str(j)], cwd, env_j)

            def warm1(j=j, env_j=env_j):
                with open(edit, "a") as fh:
                    fh.write(f"\n# pt2bot bench: round {r} -j {j}\n")
                return timed(check + ["-j", str(j)], cwd, env_j)
            steps += [(f"cold -j {j}", cold), (f"warm1 -j {j}", warm1),
                      (f"nocache -j {j}", lambda j=j: timed(check + ["-j", str(j), "--no-cache"], cwd))]
        # alternate: odd rounds run the checks before the parses (warm1 still follows its cold)
        if r % 2:
            n_parse = sum(1 for name, _ in steps if name.startswith("parse"))
            steps = steps[n_parse:] + steps[:n_parse]
        for name, step in steps:
            wall, cpu, out = step()
            times.setdefault(name, []).append((wall, cpu))
            if not name.startswith("parse"):
                seen[name] = findings_of(out)
        ref = next(iter(seen.values()))
        for name, fs in seen.items():
            if fs != ref:
                raise SystemExit(f"round {r}: {name} found {len(fs)} findings, {next(iter(seen))} {len(ref)}")
        print(f"round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1][0]:.2f}s/{v[-1][1]:.2f}cpu"
                                                          for k, v in times.items()), flush=True)
    print(f"\ntree: {pkg} ({len(files)} files, {sum(os.path.getsize(os.path.join(cwd, f)) for f in files) >> 20} MiB), "
          f"{args.rounds} interleaved rounds, each command a fresh process; {len(ref)} findings, the same in every "
          f"check\n")
    print(f"{'what':16s} {'min wall':>9s} {'min CPU':>8s} {'med CPU':>8s}   ratio of minima (wall / CPU)")
    mins = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in times.items()}
    for name, v in times.items():
        wall, cpu = mins[name]
        j = name.rpartition(" ")[2] if "-j" in name else "1"
        base = "parse" if j == "1" else f"parse -j {j}"
        if name.startswith(("cold", "nocache")):
            note = f"{wall / mins[base][0]:5.2f} / {cpu / mins[base][1]:5.2f} x {base}"
        elif name.startswith("warm1"):
            c = mins[f"cold -j {j}"]
            note = f"{wall / c[0]:5.3f} / {cpu / c[1]:5.3f} x cold -j {j}"
        else:
            note = ""
        print(f"{name:16s} {wall:9.2f} {cpu:8.2f} {statistics.median(c for _, c in v):8.2f}   {note}")
    print("\ntargets: cold -j 1 <= 1.3 x parse; warm1 <= 0.1 x cold")
    if args.torchfix and args.torchfix != "none" and os.path.exists(args.torchfix) and 2 in jobs:
        wall, cpu, _ = timed([args.torchfix, "--select", "ALL", "-j", "2", pkg], cwd)
        print(f"torchfix -j 2 (1 run): {wall:.2f} s wall, {cpu:.2f} CPU s, {wall / mins['parse -j 2'][0]:.1f} x parse -j 2")


if __name__ == "__main__":
    sys.exit(main())
