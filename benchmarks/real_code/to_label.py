"""Print the findings and sites that need a hand label, with their code, for labels.json.

    python benchmarks/real_code/to_label.py [--all] [--tag TAG]

Needs a label: every finding dynamo traced without confirming (`executed-unconfirmed`,
`executed-conditional`), every `executed-untraced` and `not-checkable` one, a fixed sample
of `not-executed` ones (the first of each family by a hash of lib, rule, path and source,
so the sample does not move when findings elsewhere change), and every missed site.
Already-labelled entries are skipped unless `--all`.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLE = {"PTC1xx": 14, "PTC2xx": 12, "PTC3xx": 14, "PTC4xx": 0}
ALWAYS = {"executed-unconfirmed", "executed-conditional", "executed-untraced", "not-checkable"}


def _h(f: dict) -> str:
    return hashlib.sha1(f"{f['lib']}|{f['rule']}|{f['path']}|{f['source']}".encode()).hexdigest()


def selected(ev: dict) -> list[dict]:
    out = [f for f in ev["findings"] if f["auto"] in ALWAYS]
    for fam, n in SAMPLE.items():
        pool = sorted((f for f in ev["findings"] if f["auto"] == "not-executed" and f["family"] == fam),
                      key=_h)
        out += pool[:n]
    return out


def context(pkg_dirs: dict[str, str], lib: str, path: str, line: int, before: int = 6,
            after: int = 2) -> str:
    try:
        with open(os.path.join(pkg_dirs[lib], path), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return ""
    lo, hi = max(0, line - 1 - before), min(len(lines), line + after)
    return "\n".join(f"{'>' if i + 1 == line else ' '}{i + 1:5d} {lines[i]}" for i in range(lo, hi))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--tag", help="the evaluation of `run.py --tag TAG`")
    a = ap.parse_args()
    name = f"evaluation@{a.tag}.json" if a.tag else "evaluation.json"
    with open(os.path.join(HERE, "results", name), encoding="utf-8") as fh:
        ev = json.load(fh)
    pkg_dirs = {}
    for lib in {f["lib"] for f in ev["findings"]}:
        with open(os.path.join(HERE, "results", "check", f"{lib}.json"), encoding="utf-8") as fh:
            pkg_dirs[lib] = json.load(fh)["benchmark"]["package_dir"]
    for f in selected(ev):
        if f["hand"] and not a.all:
            continue
        print(f"## finding {f['lib']} {f['rule']} {f['path']}:{f['line']} auto={f['auto']} "
              f"conds={f['conditions'][:2]} models={f['models'][:2]}")
        print(context(pkg_dirs, f["lib"], f["path"], f["line"]))
    for s in ev["sites"]:
        if not s["family"] and s.get("pattern") and not a.all:
            continue
        if s["family"] and s["flagged_by"]:
            continue
        if s.get("pattern") and not a.all:
            continue
        print(f"## site {s['lib']} {s['kind']} {s['gb']} {s['path']}:{s['line']} family={s['family']} "
              f"any={s['flagged_any']} reason={s['reason'][:120]!r}")
        print(context(pkg_dirs, s["lib"], s["path"], s["line"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
