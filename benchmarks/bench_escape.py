"""How long does the publisher take to re-escape hostile artifact Markdown? (not a test)

`pt2bot publish` runs `sanitize_markdown` (pt2bot/report/escape.py) on every Markdown field of
a report artifact, up to 4 MiB each (publish/artifact.py MAX_MD_BYTES), in the job that holds
the write token. The inputs are the worst shapes tests/test_escape_sinks.py knows for its
suggestion-fence scan, plus the mixed input that test runs through every sink.

    python benchmarks/bench_escape.py                       # 64 KiB, 512 KiB, 4 MiB
    python benchmarks/bench_escape.py --sizes 64,256 --shapes "one backtick run"
    PYTHONPATH=/some/other/checkout python benchmarks/bench_escape.py   # another version

Each figure is the best of `--repeat` runs, in seconds. A size that would take longer than
`--budget` seconds, going by the growth between the two sizes before it, is skipped and its
estimate printed instead (quadratic code at 4 MiB takes hours).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))

from test_escape_sinks import FENCE_INPUTS, _mixed  # noqa: E402

from pt2bot.report import escape  # noqa: E402

SHAPES = {**FENCE_INPUTS, "mixed": _mixed}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,512,4096", help="KiB, comma-separated")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated, of: "
                    + ", ".join(SHAPES))
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per measurement")
    args = ap.parse_args()
    sizes = [int(s) << 10 for s in args.sizes.split(",")]
    print(f"sanitize_markdown from {os.path.dirname(escape.__file__)}")
    print(f"{'input':28s}" + "".join(f"{n >> 10:>12} KiB" for n in sizes))
    for name in args.shapes.split(","):
        build = SHAPES[name]
        row, seen = [], []
        for n in sizes:
            if len(seen) >= 2:
                (n0, t0), (n1, t1) = seen[-2], seen[-1]
                growth = max(1.0, (t1 / max(t0, 1e-6))) ** (1 / max(1e-6, math.log(n1 / n0)))
                estimate = t1 * growth ** math.log(n / n1)
                if estimate > args.budget:
                    row.append(f"~{estimate:>10.0f}s*")
                    continue
            text = build(n)
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                escape.sanitize_markdown(text)
                best = min(best, time.perf_counter() - t)
            seen.append((n, best))
            row.append(f"{best:>12.3f}s")
        print(f"{name:28s}" + "".join(f"{c:>16}" for c in row), flush=True)
    print("* estimated from the growth between the two sizes before it, not run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
