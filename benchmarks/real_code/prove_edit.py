"""Prove one hand-written edit of a real-code model's library, as the review's proof would.

    PYTHONPATH=$PWD /work/venvs/realcode/bin/python benchmarks/real_code/prove_edit.py \
        torchdiffeq:odeint_event torchdiffeq/_impl/rk_common.py 70 76 \
        --line "        ti = t1" --line "        perturb = Perturb.PREV"

For an edit a recipe no longer offers (or never did): what the proof says of it today. As in
`benchmarks/bench_realcode_proof.py`: the library copied to a scratch directory put first on
`sys.path`, the model built from it with one thread and seed 0, in eval mode; its first input
case through the break pass (eager backend); the edit (lines START..END of PATH replaced by the
`--line`s, in order; none: deleted) proven by `pt2bot.smoke.verify.prove_candidate` against the
break at START, one shape case, no export. Prints the verdict.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("model", help="lib:name, as in models.py")
    ap.add_argument("path", help="the file, relative to the package's parent directory")
    ap.add_argument("start", type=int)
    ap.add_argument("end", type=int)
    ap.add_argument("--line", action="append", default=[], help="a replacement line, indentation included")
    a = ap.parse_args()
    sys.path.insert(0, os.path.dirname(HERE))
    import bench_realcode_proof as bench

    scratch = tempfile.mkdtemp(prefix="pt2bot-edit-")
    sp = bench.from_scratch(a.model, scratch)
    from pt2bot.smoke.verify import prove_candidate

    model, cases, paths, head_outs, head, phases = bench.head_of(sp, scratch)
    target = next((b for b in head.get("breaks") or () if b.get("path") == a.path
                   and b.get("line") == a.start), None)
    if target is None:
        print(f"head does not break at {a.path}:{a.start}")
        return 1
    original = open(os.path.join(scratch, a.path), encoding="utf-8").read()
    lines = original.splitlines()
    patched = "\n".join(lines[:a.start - 1] + a.line + lines[a.end:]) + "\n"
    t0 = time.perf_counter()
    verdict = prove_candidate(
        {"path": a.path, "start_line": a.start, "end_line": a.end, "lines": a.line,
         "original": original, "patched": patched, "guards": [], "safe": False,
         "targets": [{"kind": "break", "path": a.path, "line": a.start, "gb": target.get("gb"),
                      "gb_type": target.get("gb_type")}]},
        model, cases, head_outs, head, {}, {"backend": "eager"}, paths, phases, 600.0, {}, {})
    print(f"{'verified' if verdict.get('accepted') else 'refused'} in {time.perf_counter() - t0:.1f} s: "
          f"{verdict.get('evidence') or verdict.get('reason')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
