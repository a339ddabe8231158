"""How many of the real-code benchmark's break sites get a fix candidate? (the static half of
the fixes' measure: whether a recipe offers an edit at all; whether it survives the proof run
is measured by the proof loop).

Over the sites dynamo recorded on the real-code benchmark (benchmarks/real_code: the default-path
graph breaks of tiny instances of third-party models, and apart the specialisations of and
guards on a varying dim), matched to pt2bot's findings as the benchmark matches them
(`evaluate.site_findings`: a finding on a line of a frame of the site's stack, of a rule whose
kind is the site's), this reports

- the mix of kinds (dynamo's GB id for a break, `specialize` / `guard` for the others);
- per kind, the share of sites for which `pt2bot.rules.fix_candidates` yields at least one
  candidate on one of the findings that flag it, and the candidates' titles;
- for the others, why not: no finding flags the site, or the reasons
  `fix_candidates_explained` gives (no recipe for the rule, no edit for this code), with the
  site's source line;
- apart, per rule, the same share over the findings the benchmark judged true (by dynamo or
  by hand: `results/evaluation@<tag>.json`), which covers the rules whose claim is no
  default-path break (PTC103's export failure, PTC110's recompile, PTC302's specialisation).

The findings are the stored `pt2bot check` output (`results/<check-dir>/<lib>.json`, paths in the
library's package directory, read from the benchmark venv; nothing is imported or run). The
recipes are this checkout's. Sites a hand label excludes (labels.json) are left out.

Usage: python benchmarks/bench_recipes.py [--check-dir check@final] [--out benchmarks/results/recipes]
writes OUT.json and OUT.md.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import sys
from collections import Counter, defaultdict
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
REAL = os.path.join(HERE, "real_code")
sys.path.insert(0, REAL)
sys.path.insert(0, os.path.dirname(HERE))

import evaluate  # noqa: E402 - beside the benchmark; imports no library

from pt2bot.findings import Finding  # noqa: E402
from pt2bot.fixes import break_findings  # noqa: E402
from pt2bot.rules import fix_candidates_explained  # noqa: E402

NO_FINDING = "no finding of a rule of this kind flags the site"


def _kind(site: dict[str, Any]) -> str:
    return site["gb"] if site["kind"] == "break" else site["kind"]


def library_sites(results: str, check_dir: str, lib: str,
                  site_labels: dict[tuple[str, str, int, str], dict[str, Any]]) -> list[dict[str, Any]]:
    """Each default-path site of `lib` with its verdict: the candidates of the findings that flag
    it (rule, line, titles), or the reasons there are none."""
    check, truths = evaluate.load_library(results, lib, check_dir)
    pkg = check["benchmark"]["package_dir"]
    facts = evaluate.Facts(pkg)
    ok = [t for t in truths if t.get("status") in ("ok", "compile_error")]
    texts: dict[str, str] = {}
    out = []
    for s in evaluate.truth_sites(ok, facts):
        label = site_labels.get((lib, s["path"], s["line"], s["kind"])) or {}
        if label.get("exclude"):
            continue
        rec = {"lib": lib, "kind": _kind(s), "path": s["path"], "line": s["line"], "source": s["source"],
               "findings": [], "candidates": 0}
        for f, flags in evaluate.site_findings(s, check["findings"], facts):
            if not flags:
                continue
            if f["path"] not in texts:
                with open(os.path.join(pkg, f["path"]), encoding="utf-8") as fh:
                    texts[f["path"]] = fh.read()
            cands, why = fix_candidates_explained(Finding.from_dict(f), texts[f["path"]])
            rec["findings"].append({"rule": f["rule"], "path": f["path"], "line": f["line"],
                                    "source": " ".join((f.get("source") or "").split())[:160],
                                    "candidates": [c.title for c in cands], "why_not": why})
            rec["candidates"] += len(cands)
        if not rec["findings"] and rec["kind"].startswith("GB"):
            # as a review does for a break no finding flags: the recipes of the rules that
            # predict its GB code, anchored where dynamo put it
            if s["path"] not in texts:
                with open(os.path.join(pkg, s["path"]), encoding="utf-8") as fh:
                    texts[s["path"]] = fh.read()
            target = {"kind": "break", "path": s["path"], "line": s["line"], "gb": rec["kind"]}
            stand_ins = break_findings(target, texts[s["path"]], {})
            titles = {c.title: None for f in stand_ins
                      for c in fix_candidates_explained(f, texts[s["path"]])[0]}
            if stand_ins:
                rec["findings"].append({
                    "rule": "/".join(dict.fromkeys(f.rule for f in stand_ins)) + " (by GB code)",
                    "path": s["path"], "line": s["line"], "source": rec["source"],
                    "candidates": list(titles),
                    "why_not": None if titles else f"{NO_FINDING}; the recipes of the rules "
                                                   "predicting its GB code have no edit there"})
                rec["candidates"] += len(titles)
        out.append(rec)
    return out


def judged_findings(results: str, check_dir: str, evaluation: str) -> list[dict[str, Any]]:
    """Each finding the benchmark judged true, with its candidates or why there are none."""
    with open(evaluation, encoding="utf-8") as fh:
        judged = [f for f in json.load(fh)["findings"] if f.get("verdict") is True]
    checks: dict[str, dict[str, Any]] = {}
    texts: dict[tuple[str, str], str] = {}
    out = []
    for j in judged:
        check = checks.get(j["lib"])
        if check is None:
            check = checks[j["lib"]] = evaluate.load_library(results, j["lib"], check_dir)[0]
        f = next((f for f in check["findings"] if (f["rule"], f["path"], f["line"]) == (j["rule"], j["path"], j["line"])
                  and " ".join((f.get("source") or "").split())[:200] == j["source"]), None)
        if f is None:
            continue
        key = (j["lib"], f["path"])
        if key not in texts:
            with open(os.path.join(check["benchmark"]["package_dir"], f["path"]), encoding="utf-8") as fh:
                texts[key] = fh.read()
        cands, why = fix_candidates_explained(Finding.from_dict(f), texts[key])
        out.append({"lib": j["lib"], "rule": f["rule"], "path": f["path"], "line": f["line"], "source": j["source"],
                    "candidates": [c.title for c in cands], "why_not": why})
    return out


def per_rule(findings: list[dict[str, Any]]) -> dict[str, Any]:
    out = {}
    for rule in sorted({f["rule"] for f in findings}):
        fs = [f for f in findings if f["rule"] == rule]
        with_c = sum(1 for f in fs if f["candidates"])
        out[rule] = {"judged_true": len(fs), "with_candidate": with_c, "share": round(with_c / len(fs), 3),
                     "why_not": dict(Counter(f["why_not"] for f in fs if not f["candidates"]).most_common())}
    return out


def summarise(sites: list[dict[str, Any]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for s in sites:
        by_kind[s["kind"]].append(s)
    kinds = {}
    for kind, ss in sorted(by_kind.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        fixed = [s for s in ss if s["candidates"]]
        why: Counter[str] = Counter()
        rules: Counter[str] = Counter()
        for s in ss:
            rules.update({f["rule"] for f in s["findings"]})
            if s["candidates"]:
                continue
            reasons = {f["why_not"] for f in s["findings"]} or {NO_FINDING}
            why.update(reasons)
        kinds[kind] = {"sites": len(ss), "with_candidate": len(fixed),
                       "share": round(len(fixed) / len(ss), 3), "rules": dict(rules.most_common()),
                       "why_not": dict(why.most_common())}
    return kinds


def markdown(result: dict[str, Any]) -> str:
    out = ["# Fix candidates at the real-code benchmark's sites",
           "",
           "Generated by `python benchmarks/bench_recipes.py` (the static half: whether a recipe offers "
           "an edit; the proof loop measures whether it is verified). Findings: "
           f"`benchmarks/real_code/results/{result['check_dir']}`; recipes of pt2bot at {result['pt2bot']}.",
           ""]
    for group, title in (("break", "Graph-break sites"), ("shape", "Specialisation / guard sites")):
        s = result[group]
        total = sum(k["sites"] for k in s.values())
        with_c = sum(k["with_candidate"] for k in s.values())
        out += [f"## {title}: {with_c}/{total} with a candidate"
                f" ({with_c / total:.0%})" if total else f"## {title}: none", ""]
        libs = Counter(x["lib"] for x in result["sites"] if (x["kind"] in ("specialize", "guard")) == (group == "shape"))
        fixed = Counter(x["lib"] for x in result["sites"] if x["candidates"]
                        and (x["kind"] in ("specialize", "guard")) == (group == "shape"))
        by_lib = ", ".join(f"{lib} {fixed[lib]}/{n}" for lib, n in libs.most_common())
        out += [f"By library (with a candidate / sites): {by_lib}.", ""] if libs else []
        out += ["| kind | sites | share of sites | with a candidate | share | flagged by | why not (sites) |",
                "|---|---:|---:|---:|---:|---|---|"]
        for kind, k in s.items():
            rules = ", ".join(f"{r} ({n})" for r, n in k["rules"].items()) or "–"
            why = "; ".join(f"{w} ({n})" for w, n in k["why_not"].items()) or "–"
            out.append(f"| {kind} | {k['sites']} | {k['sites'] / total:.0%} | {k['with_candidate']} | "
                       f"{k['share']:.0%} | {rules} | {why} |")
        out.append("")
    rules = result["rules"]
    total = sum(r["judged_true"] for r in rules.values())
    with_c = sum(r["with_candidate"] for r in rules.values())
    out += [f"## Findings judged true, per rule: {with_c}/{total} with a candidate ({with_c / total:.0%})", "",
            "| rule | judged true | with a candidate | share | why not (findings) |", "|---|---:|---:|---:|---|"]
    for rule, r in rules.items():
        why = "; ".join(f"{w} ({n})" for w, n in r["why_not"].items()) or "–"
        out.append(f"| {rule} | {r['judged_true']} | {r['with_candidate']} | {r['share']:.0%} | {why} |")
    out.append("")
    out += ["## Sites without a candidate", "",
            "| kind | site | source | findings (rule: why not) |", "|---|---|---|---|"]
    for s in result["sites"]:
        if s["candidates"]:
            continue
        fs = "; ".join(f"{f['rule']} at {f['path']}:{f['line']}: {f['why_not']}" for f in s["findings"]) \
            or NO_FINDING
        src = s["source"].replace("|", "\\|")
        out.append(f"| {s['kind']} | {s['lib']} {s['path']}:{s['line']} | `{src}` | {fs} |")
    return "\n".join(out) + "\n"


def _revision() -> str:
    import subprocess
    r = subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", HERE, "status", "--porcelain", "--", "pt2bot"],
                           capture_output=True, text=True).stdout.strip()
    return (r.stdout.strip() or "unknown") + (" (uncommitted changes)" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(REAL, "results"))
    ap.add_argument("--check-dir", default="check@final")
    ap.add_argument("--labels", default=os.path.join(REAL, "labels.json"))
    ap.add_argument("--evaluation", default=None,
                    help="the benchmark's judged findings (default: results/evaluation@<check-dir's tag>.json)")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "recipes"))
    args = ap.parse_args(argv)
    _labels, site_labels = evaluate.load_labels(args.labels)
    libs = sorted(os.path.basename(p)[:-5] for p in glob.glob(os.path.join(args.results, args.check_dir, "*.json")))
    sites = [s for lib in libs for s in library_sites(args.results, args.check_dir, lib, site_labels)]
    evaluation = args.evaluation or os.path.join(
        args.results, "evaluation" + args.check_dir[len("check"):] + ".json")
    judged = judged_findings(args.results, args.check_dir, evaluation)
    result = {"check_dir": args.check_dir, "pt2bot": _revision(),
              "rules": per_rule(judged), "judged": judged,
              "break": summarise([s for s in sites if s["kind"] not in ("specialize", "guard")]),
              "shape": summarise([s for s in sites if s["kind"] in ("specialize", "guard")]),
              "sites": sites}
    with open(args.out + ".json", "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")
    md = markdown(result)
    with open(args.out + ".md", "w", encoding="utf-8") as fh:
        fh.write(md)
    print(md.split("## Sites without")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
