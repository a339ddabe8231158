"""The ceiling of the real-code proof: does ANY allowed edit fix the sites pt2bot's recipes leave open?

    python benchmarks/bench_realcode_ceiling.py [--all-models] [--matrix] [--edit NAME]... [--out benchmarks/results/realcode_ceiling.json]
    python benchmarks/bench_realcode_ceiling.py --report     # the Markdown of --out, runs nothing

benchmarks/bench_realcode_proof.py counts the graph-break sites of the real-code benchmark whose
recipes' edits pt2bot's proof verifies (30 of the main set's 166 at e8bcb3f). This script asks
the question above that figure, as benchmarks/bench_fix_ceiling.py asks it for the replayed
public fixes: for each site the recipes leave open, is there an edit at all, within the rules a
suggestion must keep, that the same proof verifies?

The rules: the edit replaces a contiguous range of lines inside ONE function around the break
(a GitHub suggestion: no edit to `__init__`, an import or another function; a file that does
not import torch cannot name `torch.`); the model's eager outputs and gradients stay equal to
head's on the spec's cases (and on the special values the replaced code guards against, where
it does; a fix that deletes a check is not one; one that draws a different number of random
values, or from another generator, is not one unless the outputs stay equal); the targeted
break is gone and nothing new breaks, recompiles or fails.

The hand verdicts: benchmarks/real_code/ceiling.json, one entry per open site (`lib
path:line`), written by someone who read the libraries' code but not pt2bot's recipes
(pt2bot/rules/*_fixes.py, pt2bot/rules/edits.py, the fix parts of the rules' docstrings):
`fix` (an edit is named: `edits[NAME]`, `old` lines found exactly once in the library's file,
`new` lines, `guards`), `none` (no allowed edit exists, and why), `outside` (a fix exists but
needs lines outside one function, and what), `undecided`. One edit may cover several sites
(the lines it replaces hold several breaks), and `pattern` names the kind of edit, the way a
recipe would be written.

How an edit is proven: bench_realcode_proof.py's own worker (`worker`: the library copied to
a scratch directory first on sys.path, the model built there with seed 0, head measured by
the proof worker's `measure_state`, each candidate through `prove_candidate`), in a child
process per model, with the candidate gathering (`pt2bot.fixes.gather`) replaced by one that
offers only the hand edits, as `Candidate`s, and no dynamo setting offered. An edit's
targets are head's breaks on the lines it replaces. Each edit is proven on the first model of
the site's `models` that hits it (`model` in ceiling.json overrides), alone against head; with
`--all-models` also on every other model that breaks on its lines (`other_models`), as one review
of all of them would need: the edit is verified everywhere when no model refuses it other than
as `unexercised` (a guard its inputs cannot reach), as bench_realcode_proof.py's figure counts.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_realcode_proof as proof  # noqa: E402  (the worker, reused, not copied)

ROOT = proof.ROOT
EDITS = os.path.join(proof.REAL, "ceiling.json")
OUT = os.path.join(ROOT, "benchmarks", "results", "realcode_ceiling.json")
RECIPES = os.path.join(ROOT, "benchmarks", "results", "realcode_proof_e8bcb3f.json")
HAND_RULE = "HAND"


# --------------------------------------------------------------------------- in the child

def locate(source: str, old: list[str]) -> tuple[int, int]:
    """The 1-based first and last line of `old` in `source`, which must hold it exactly once."""
    lines = source.split("\n")
    n = len(old)
    at = [i for i in range(len(lines) - n + 1) if [ln.rstrip("\r") for ln in lines[i:i + n]] == old]
    if len(at) != 1:
        raise ValueError(f"the edit's old lines occur {len(at)} times in the file, not once: {old[:2]}")
    return at[0] + 1, at[0] + n


def _hand_gather(edits: dict[str, dict], info_path: str):
    """A stand-in for pt2bot.fixes.gather offering only the hand edits."""
    from pt2bot.fixes import Proposal, _read
    from pt2bot.rules import Candidate, apply_candidate

    def gather(targets, findings, head_root, changeset):
        proposals, why, info = [], {}, []
        covered: set[int] = set()
        for k, (name, e) in enumerate(edits.items()):
            source = _read(head_root, e["path"]) or ""
            rec: dict[str, Any] = {"edit": name, "path": e["path"]}
            try:
                first, last = locate(source, e["old"])
            except ValueError as err:
                info.append({**rec, "error": str(err)})
                continue
            cand = Candidate(code=HAND_RULE, path=e["path"], start_line=first, end_line=last,
                             lines=tuple(e["new"]), title=name, safe=False,
                             guards=tuple(e.get("guards") or ()), rank=k)
            mine = [i for i, t in enumerate(targets) if t.get("path") == e["path"] and first <= t["line"] <= last]
            covered.update(mine)
            info.append({**rec, "start_line": first, "end_line": last,
                         "targets": [f"{targets[i]['line']} {targets[i].get('gb')}" for i in mine]})
            if not mine:
                continue
            proposals.append(Proposal(cid=f"hand-{name}", cand=cand, original=source,
                                      patched=apply_candidate(source, cand), findings=[f"hand-{name}"],
                                      targets=mine, by_target={i: [f"hand-{name}"] for i in mine}))
        for i in range(len(targets)):
            if i not in covered:
                why[i] = "no hand edit replaces this line"
        with open(info_path, "w") as fh:
            json.dump(info, fh, indent=1)
        return proposals, why

    return gather


def child(key: str, out: str, scratch: str, edits_path: str, matrix: bool = False) -> int:
    import pt2bot.fixes

    edits = json.load(open(edits_path))
    pt2bot.fixes.gather = _hand_gather(edits, out + ".edits.json")
    pt2bot.fixes.gather_settings = lambda *a, **k: []
    # the proof's whole verdict per hand edit (the worker keeps its reason and evidence only)
    import pt2bot.smoke.verify as verify
    prove, full = verify.prove_candidate, []

    def keep(cand, *a, **k):
        v = prove(cand, *a, **k)
        full.append({"lines": [cand["start_line"], cand["end_line"]],
                     **{k2: v2 for k2, v2 in v.items() if k2 not in ("evidence",)}})
        with open(out + ".verdicts.json", "w") as fh:
            json.dump(full, fh, indent=1, default=str)
        return v

    verify.prove_candidate = keep
    return proof.worker(key, out, scratch, matrix)


# --------------------------------------------------------------------------- per model

def run_model(key: str, edits: dict[str, dict], timeout: int, matrix: bool = False) -> dict[str, Any]:
    py = os.path.join(proof.VENV, "bin", "python")
    env = {**os.environ, "PYTHONPATH": ROOT}
    with tempfile.TemporaryDirectory(prefix="bench-realcode-ceiling-") as tmp:
        res = os.path.join(tmp, "out.json")
        ep = os.path.join(tmp, "edits.json")
        json.dump(edits, open(ep, "w"))
        t0 = time.perf_counter()
        try:
            p = subprocess.run([py, os.path.abspath(__file__), "--_child", key, res, os.path.join(tmp, "code"), ep]
                               + (["--matrix"] if matrix else []),
                               env=env, timeout=timeout, capture_output=True, text=True, check=False)
            got = json.load(open(res)) if os.path.exists(res) else {
                "model": key, "status": "error", "error": "no result: " + p.stderr[-1500:]}
        except subprocess.TimeoutExpired:
            got = {"model": key, "status": "timeout", "targets": []}
        try:
            got["hand_edits"] = json.load(open(res + ".edits.json"))
        except OSError:
            got["hand_edits"] = []
        try:
            got["verdicts"] = json.load(open(res + ".verdicts.json"))
        except OSError:
            got["verdicts"] = []
        got["wall_s"] = round(time.perf_counter() - t0, 1)
    return got


def verdicts(got: dict[str, Any], names: list[str]) -> dict[str, dict[str, Any]]:
    """Per edit: verified (the proof accepted it), the proof's reason or evidence, its targets."""
    out = {}
    placed = {h["edit"]: h for h in got.get("hand_edits") or ()}
    for n in names:
        h = placed.get(n) or {}
        c = next((c for c in got.get("candidates") or () if c.get("rule") == HAND_RULE and c.get("title") == n), None)
        if "error" in h:
            out[n] = {"verified": False, "reason": h["error"]}
        elif c is None:
            out[n] = {"verified": False, "targets": h.get("targets"),
                      "reason": (f"model {got.get('status')}: {str(got.get('error') or '')[:300]}"
                                 if got.get("status") != "ok" else "the edit replaces no break of this model")}
        else:
            full = next((v for v in got.get("verdicts") or ()
                         if v.get("lines") == [c.get("start_line"), c.get("end_line")]), {})
            out[n] = {"verified": bool(c.get("verified")), "targets": h.get("targets"),
                      "reason": c.get("reason"), "evidence": c.get("evidence"), "s": c.get("s"),
                      "unexercised": bool(c.get("unexercised")),
                      "lines": [c.get("start_line"), c.get("end_line")], "verdict": full}
    return out


# --------------------------------------------------------------------------- figures

def _recipe_sites() -> dict[str, dict[str, Any]]:
    """The main set's 166 sites and whether the recipes verified them (at e8bcb3f)."""
    d = json.load(open(RECIPES))
    keys = set(json.load(open(os.path.join(ROOT, "benchmarks", "results", "realcode_proof.json")))["models"])
    sites: dict[str, dict[str, Any]] = {}
    for k, m in d["models"].items():
        if k not in keys:
            continue
        for u in m.get("unlocated") or ():
            sites.setdefault(f"{m['lib']} {u['path']}:{u['reported_line']}",
                             {"lib": m["lib"], "gb": u.get("gb"), "verified": False})
        for t in m.get("targets") or ():
            s = sites.setdefault(f"{m['lib']} {t['path']}:{t['line']}",
                                 {"lib": m["lib"], "gb": t.get("gb"), "verified": False})
            s["verified"] = s["verified"] or bool(t.get("fixed_by"))
    return sites


def markdown(res: dict[str, Any]) -> str:
    spec = res["spec"]
    sites = spec["sites"]
    proofs = res.get("proofs") or {}
    recipes = _recipe_sites()
    n_all = len(recipes)
    n_rec = sum(1 for s in recipes.values() if s["verified"])

    def proven(s: dict[str, Any]) -> bool:
        return s.get("verdict") == "fix" and bool((proofs.get(s.get("edit")) or {}).get("verified"))

    def everywhere(s: dict[str, Any]) -> bool:
        """Verified on its proof's model and refused on no other model that breaks on its lines
        (but as `unexercised`, or where the edit replaces none of that model's breaks)."""
        p = proofs.get(s.get("edit")) or {}
        return proven(s) and all(o.get("verified") or o.get("unexercised")
                                 or o.get("reason") == "the edit replaces no break of this model"
                                 for o in (p.get("other_models") or {}).values())

    ceiling = [k for k, s in sites.items() if proven(s)]
    all_models = any(p.get("other_models") for p in proofs.values())
    every = [k for k in ceiling if everywhere(sites[k])]
    hand = [k for k, s in sites.items() if s.get("verdict") == "fix"]
    lines = [f"Proofs run at {res.get('commit')} ({res.get('date')}), load average {res.get('load_before')} "
             f"before and {res.get('load_after')} after; "
             + ("every input case of a model as its shape matrix (--matrix)." if res.get("matrix")
                else "the first input case of each model (no shape matrix)."), "",
             f"**The ceiling: {n_rec + len(ceiling)} of {n_all} sites** get a verified fix when the hand edits "
             f"join the recipes' {n_rec} ({100 * (n_rec + len(ceiling)) / n_all:.0f} %); "
             f"**{len(ceiling)} of the {len(sites)} open sites** have a verified hand edit "
             f"({len(hand)} with a hand verdict `fix`)."]
    if all_models:
        lines.append(f"Proven on every model that breaks on the edit's lines (refused on none but as unexercised): "
                     f"**{len(every)}** of those {len(ceiling)}, so **{n_rec + len(every)} of {n_all}** "
                     f"({100 * (n_rec + len(every)) / n_all:.0f} %) as one review of all the models would decide.")
    lines.append("")
    verdict_count = collections.Counter(s["verdict"] for s in sites.values())
    lines += ["| hand verdict | open sites |", "|---|---:|"] + [
        f"| {v} | {c} |" for v, c in verdict_count.most_common()] + [""]

    def table(title: str, keyf) -> None:
        groups: dict[str, list[str]] = collections.defaultdict(list)
        for k, s in recipes.items():
            groups[keyf(s)].append(k)
        lines.extend([f"| {title} | sites | recipes verified | open | hand `fix` | hand edit verified | "
                      "ceiling (recipes + hand) |", "|---|---:|---:|---:|---:|---:|---:|"])
        for g, ks in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            r = sum(1 for k in ks if recipes[k]["verified"])
            o = [k for k in ks if k in sites]
            f = sum(1 for k in o if sites[k]["verdict"] == "fix")
            v = sum(1 for k in o if proven(sites[k]))
            lines.append(f"| {g} | {len(ks)} | {r} | {len(o)} | {f} | {v} | {r + v} ({100 * (r + v) // len(ks)} %) |")
        lines.append("")

    table("kind", lambda s: s["gb"] or "?")
    table("library", lambda s: s["lib"])
    # the hand edits grouped by the kind of edit a recipe would write (`family`)
    fams: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: {"verified": [], "refused": []})
    for k in hand:
        e = spec["edits"][sites[k]["edit"]]
        fams[e.get("family") or e.get("pattern") or "?"]["verified" if proven(sites[k]) else "refused"].append(k)
    lines += ["Hand edits by the kind of edit a recipe could write (sites; an example verified edit):", "",
              "| kind of edit | sites verified | sites refused | example (verified) |", "|---|---:|---:|---|"]
    for f, d in sorted(fams.items(), key=lambda kv: (-len(kv[1]["verified"]), -len(kv[1]["refused"]))):
        ex = next((f"{sites[k]['edit']} ({k})" for k in d["verified"]), "–")
        lines.append(f"| {f} | {len(d['verified'])} | {len(d['refused'])} | {ex} |")
    lines.append("")
    # every edit's proof
    lines += ["| edit | pattern | model | sites | verified | the proof's evidence or reason | other models |",
              "|---|---|---|---|---|---|---|"]
    for n, e in spec["edits"].items():
        p = proofs.get(n) or {}
        ks = [k for k, s in sites.items() if s.get("edit") == n]
        why = " ".join(str(p.get("evidence") if p.get("verified") else p.get("reason") or "not run").split())
        oth = "; ".join(f"{m}: " + ("verified" if o.get("verified") else "unexercised" if o.get("unexercised")
                                    else "refused (" + " ".join(str(o.get("reason")).split())[:120] + ")")
                        for m, o in (p.get("other_models") or {}).items()) or "–"
        lines.append(f"| {n} | {e.get('pattern', '')} | {p.get('model', '–')} | {len(ks)} | "
                     f"{'**yes**' if p.get('verified') else 'unexercised' if p.get('unexercised') else 'no'} | "
                     f"{why[:400].replace('|', '/')} | {oth.replace('|', '/')} |")
    lines.append("")
    for v in ("none", "outside", "undecided"):
        groups = collections.defaultdict(list)
        for k, s in sites.items():
            if s["verdict"] == v:
                groups[s.get("why") or s.get("outside") or "?"].append(k)
        if not groups:
            continue
        lines += [f"Sites with the hand verdict `{v}`, by reason:", "", "| reason | sites | which |", "|---|---:|---|"]
        for why, ks in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"| {why.replace('|', '/')} | {len(ks)} | {'; '.join(ks)} |")
        lines.append("")
    refused = [(k, s) for k, s in sites.items() if s["verdict"] == "fix" and not proven(s)]
    if refused:
        lines += ["Hand edits the proof refused (with the hand judgement of the refusal):", "",
                  "| site | edit | the proof's reason | judgement |", "|---|---|---|---|"]
        for k, s in refused:
            p = proofs.get(s["edit"]) or {}
            note = spec["edits"][s["edit"]].get("refusal") or ""
            lines.append(f"| {k} | {s['edit']} | {' '.join(str(p.get('reason') or 'not run').split())[:300].replace('|', '/')} "
                         f"| {note.replace('|', '/')} |")
    cav = [(n, e) for n, e in spec["edits"].items() if e.get("caveat") and (proofs.get(n) or {}).get("verified")]
    if cav:
        lines += ["", "Verified, with a caveat a reader should weigh:", "", "| edit | caveat |", "|---|---|"]
        for n, e in cav:
            lines.append(f"| {n} | {e['caveat'].replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--edit", action="append", default=[], help="prove only these edits (others kept from --out)")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--all-models", action="store_true",
                    help="prove each edit on every model that breaks on its lines, not only the first")
    ap.add_argument("--matrix", action="store_true",
                    help="every input case of a model as its shape matrix (recompiles, compiled outputs "
                         "against eager), as bench_realcode_proof.py --matrix runs it")
    ap.add_argument("--_child", nargs=4, dest="child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(*a.child, matrix=a.matrix)
    if a.report:
        print(markdown(json.load(open(a.out))), end="")
        return 0
    spec = json.load(open(EDITS))
    res: dict[str, Any] = {"commit": proof._commit(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                           "load_before": os.getloadavg()[0], "matrix": a.matrix, "proofs": {}}
    if a.edit and os.path.exists(a.out):
        res["proofs"] = json.load(open(a.out)).get("proofs") or {}
    # the models each edit is proven on: the `model` of the edit (else the first site's first
    # model) is its proof; with --all-models, every other model that breaks on its lines too
    by_model: dict[str, list[str]] = collections.defaultdict(list)
    primary: dict[str, str] = {}
    for n, e in spec["edits"].items():
        if a.edit and n not in a.edit:
            continue
        hits = list(dict.fromkeys(m for s in spec["sites"].values() if s.get("edit") == n for m in s["models"]))
        primary[n] = e.get("model") or hits[0]
        for m in [primary[n]] + ([x for x in hits if x != primary[n]] if a.all_models else []):
            by_model[m].append(n)
    others: dict[str, dict[str, Any]] = collections.defaultdict(dict)
    for model, names in by_model.items():
        got = run_model(model, {n: spec["edits"][n] for n in names}, a.timeout, a.matrix)
        for n, v in verdicts(got, names).items():
            if model == primary[n]:
                res["proofs"][n] = {"model": model, **v}
            else:
                others[n][model] = {k: v.get(k) for k in ("verified", "unexercised", "reason")}
            print(f"{n:40s} {model:45s} {'VERIFIED' if v['verified'] else 'refused '} "
                  f"{' '.join(str(v.get('evidence') if v['verified'] else v.get('reason')).split())[:300]}",
                  flush=True)
        print(f"  ({model}: {got.get('status')}, {got.get('wall_s')} s)", flush=True)
    for n, o in others.items():
        res["proofs"][n]["other_models"] = o
    res["load_after"] = os.getloadavg()[0]
    res["spec"] = spec
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
