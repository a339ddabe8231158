"""The ceiling of the held-out replays: does ANY allowed edit fix the re-introduced break?

    python benchmarks/bench_fix_ceiling.py [--case NAME]... [--out benchmarks/results/fix_replay_ceiling.json]
    python benchmarks/bench_fix_ceiling.py --report     # the Markdown of --out, runs nothing

The held-out sets of benchmarks/bench_fix_replay.py (`held-out`, `held-out-2`, `held-out-3`,
`held-out-4`) measure how often pt2bot's own recipes find a verified edit. This script asks
the question above them: for each case, is there an edit at all, within the rules a
suggestion must keep, that pt2bot's proof verifies? The rules: the edit replaces lines of ONE
hunk of the PR's diff (a GitHub suggestion cannot reach `__init__`, an import or another
function the PR did not touch there), and the model's eager outputs stay equal to head's on
every shape case (and on the special values the replaced code guards against, where it does).

The edits were written by hand, by someone who read the cases' diffs and replay models but
not pt2bot's recipes: benchmarks/fix_replay/ceiling.json, one entry per case, with the hand
verdict (`fix`: an edit is given; `none`: no allowed edit exists, and why; `outside`: a fix
exists but needs lines outside one hunk, and what; `undecided`: not settled, and why). An
edit is the PR's lines to replace (`old`, found exactly once in head's file) and their
replacement (`new`), with the special values it must be compared on (`guards`,
pt2bot/rules/base.py GUARDS) and where it comes from (the maintainers' own lines, or a hand
edit).

How an edit is proven: the replay repository is built exactly as bench_fix_replay.py builds
it (its `make_pr`, imported, not copied), then `pt2bot review --base main` runs in it as the
PR job does, in a child process where the review's candidate gathering
(`pt2bot.fixes.gather`) is replaced by one that offers only the hand edits, as `Candidate`s
(pt2bot/rules/base.py). Everything else is the review's own: the targets (new breaks and
recompiles on the PR's lines), the one-hunk check (`pt2bot.changes.in_one_hunk`), the proof
worker (`prove_on_model`: head and the patched model side by side, outputs, gradients, guard
inputs, breaks, recompiles, the shape matrix) and the verdict (`decide`). An edit's targets
are the targets on the lines it replaces: the proof looks for a targeted break inside the
replaced lines only, so a target outside them could not be judged by this edit and is
reported as not covered.

Then, as a check on the proof from the other side, the verified edits (all of them where none
is, the first of any that replace the same lines) are committed onto the PR branch and the
review runs once more (`--base main`, no hand edits offered): what it still finds new in head
(breaks, recompiles) is reported as `after`. A target that no edit replaces but that is gone
there once a verified edit is in (a recompile of a frame only the fixed break split off) counts
as gone `with` the edits.

Three cases have no target on the PR's lines (the new break is located on a line the PR did
not write): the review proves nothing there, whatever edit exists. For those, `off_pr_targets`
in ceiling.json offers the new break to the proof as a target anyway (outputs, gradients and
nothing-new are then the proof's), and the re-review says whether the break is gone. They are
reported apart from the ceiling, which counts targets on the PR's lines.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import bench_fix_replay as replay  # noqa: E402  (the replay repositories, built the same way)

ROOT = replay.ROOT
EDITS = os.path.join(replay.CASES_DIR, "ceiling.json")
OUT = os.path.join(ROOT, "benchmarks", "results", "fix_replay_ceiling.json")
# the sets the hand edits of ceiling.json were written for; a later held-out set joins once
# each of its cases has an entry there (written without reading the recipes, as these were)
HELD_OUT = ("held-out", "held-out-2", "held-out-3", "held-out-4")
HAND_RULE = "HAND"   # the `code` of a hand edit's Candidate (no rule offered it)


# --------------------------------------------------------------------------- in the review child

def locate(source: str, old: list[str]) -> tuple[int, int]:
    """The 1-based first and last line of `old` in `source`, which must hold it exactly once."""
    lines = source.split("\n")
    n = len(old)
    at = [i for i in range(len(lines) - n + 1) if lines[i:i + n] == old]
    if len(at) != 1:
        raise ValueError(f"the edit's old lines occur {len(at)} times in head's file, not once: {old[:2]}")
    return at[0] + 1, at[0] + n


def _hand_gather(edits: list[dict], info_path: str):
    """A stand-in for pt2bot.fixes.gather that offers the hand edits only. A target the PR did
    not write (`off_pr`, see `_all_new_breaks`) is given to every edit: the proof cannot see
    whether it is gone (it looks inside the replaced lines), so the re-review decides that."""
    from pt2bot.changes import diff_position, in_one_hunk
    from pt2bot.findings import DIFF_ADDED
    from pt2bot.fixes import Proposal, _read
    from pt2bot.rules import Candidate, apply_candidate

    def gather(targets, findings, head_root, changeset):
        proposals, why, info = [], {}, []
        covered: set[int] = set()
        for k, e in enumerate(edits):
            source = _read(head_root, e["path"])
            rec = {"edit": k, "path": e["path"]}
            try:
                first, last = locate(source or "", e["old"])
            except ValueError as err:
                info.append({**rec, "error": str(err)})
                continue
            cand = Candidate(code=HAND_RULE, path=e["path"], start_line=first, end_line=last,
                             lines=tuple(e["new"]), title=e.get("title") or "the hand edit",
                             safe=False, guards=tuple(e.get("guards") or ()), rank=k)
            mine = [i for i, t in enumerate(targets) if t.get("off_pr")
                    or (t.get("path") == e["path"] and first <= t["line"] <= last)]
            covered.update(mine)
            one = changeset is not None and in_one_hunk(changeset, e["path"], first, last)
            # the hunk's unchanged lines a suggestion may also span (GitHub allows it): counted,
            # so that a reader sees which edits replace only lines the PR wrote
            context = sum(1 for ln in range(first, last + 1)
                          if changeset is None or diff_position(changeset, e["path"], ln) != DIFF_ADDED)
            info.append({**rec, "start_line": first, "end_line": last, "one_hunk": one, "context_lines": context,
                         "targets": [targets[i]["line"] for i in mine]})
            p = Proposal(cid="", cand=cand, original=source, patched=apply_candidate(source, cand),
                         findings=[f"hand-{k}"], targets=mine, by_target={i: [f"hand-{k}"] for i in mine})
            proposals.append(p)
        for i, t in enumerate(targets):
            if i not in covered:
                why[i] = "no hand edit replaces this line"
        with open(info_path, "w") as fh:
            json.dump({"edits": info, "targets": [{k: t.get(k) for k in ("kind", "path", "line", "gb", "off_pr")}
                                                  for t in targets]}, fh, indent=1)
        return proposals, why

    return gather


def _all_new_breaks(find_targets):
    """find_targets, plus the new breaks located on lines the PR did not write (`off_pr`)."""
    def targets(report, changeset):
        out = find_targets(report, changeset)
        seen = {(t["path"], t["line"]) for t in out}
        for m in report.models:
            if m.status != "ok":
                continue
            for b in m.new_breaks:
                if isinstance(b.get("line"), int) and (b.get("path"), b["line"]) not in seen:
                    seen.add((b.get("path"), b["line"]))
                    out.append({"kind": "break", "model": m.name, "path": b.get("path"), "line": b["line"],
                                "gb": b.get("gb"), "gb_type": b.get("gb_type"),
                                "fingerprint": b.get("fingerprint"), "off_pr": True})
        return out
    return targets


def review_child(edits_path: str, out: str) -> int:
    """`pt2bot review --base main --out OUT` in the current directory, offering the hand edits."""
    import pt2bot.fixes
    from pt2bot.cli import main as cli_main

    spec = json.load(open(edits_path))
    os.makedirs(out, exist_ok=True)
    pt2bot.fixes.gather = _hand_gather(spec["edits"], os.path.join(out, "hand_edits.json"))
    if spec.get("off_pr_targets"):
        pt2bot.fixes.find_targets = _all_new_breaks(pt2bot.fixes.find_targets)
    return cli_main(["review", "--base", "main", "--out", out])


# --------------------------------------------------------------------------- per case

def _review(repo: str, out: str, python: str, edits_path: str | None) -> tuple[dict | None, str, float]:
    argv = ([python, os.path.abspath(__file__), "--_review-child", edits_path, out] if edits_path
            else [python, "-m", "pt2bot", "review", "--base", "main", "--out", out])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=repo, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    try:
        return json.load(open(os.path.join(out, "report.json"))), "", wall
    except OSError:
        return None, f"rc {proc.returncode}: {proc.stderr[-1500:]}", wall


def _apply(repo: str, edits: list[dict]) -> None:
    """The hand edits written into the PR branch's files (bottom-up per file) and committed."""
    by_path: dict[str, list[dict]] = collections.defaultdict(list)
    for e in edits:
        by_path[e["path"]].append(e)
    for path, es in by_path.items():
        full = os.path.join(repo, path)
        text = open(full).read()
        lines = text.split("\n")
        spans = sorted(((*locate(text, e["old"]), e) for e in es), key=lambda s: -s[0])
        for first, last, e in spans:
            lines[first - 1:last] = e["new"]
        open(full, "w").write("\n".join(lines))
    replay.git(repo, "commit", "-qam", "the hand edits")


def run_case(name: str, spec: dict, python: str) -> dict:
    case = replay.load_case(name)
    edits = [{**e, "path": e.get("path") or case["path"]} for e in spec.get("edits") or ()]
    res: dict = {"set": case.get("set"), "repo": case["repo"], "sha": case["sha"], "path": case["path"],
                 "verdict": spec["verdict"], "target": spec.get("target"), "why": spec.get("why"),
                 "outside": spec.get("outside"), "caveat": spec.get("caveat"),
                 "edits": [{k: e.get(k) for k in ("source", "old", "new", "guards", "why")} for e in edits]}
    if not edits:
        return res
    with tempfile.TemporaryDirectory(prefix="bench-fix-ceiling-") as root:
        repo, _pr = replay.make_pr(root, case)
        edits_path = os.path.join(root, "edits.json")
        json.dump({"edits": edits, "off_pr_targets": bool(spec.get("off_pr_targets"))}, open(edits_path, "w"))
        out = os.path.join(root, "out")
        report, err, wall = _review(repo, out, python, edits_path)
        res["wall_s"] = round(wall, 1)
        if report is None:
            res["error"] = err
            return res
        try:
            hand = json.load(open(os.path.join(out, "hand_edits.json")))
        except OSError:   # the proof never gathered: no target on the PR's lines
            hand = {"edits": [], "targets": []}
        fixes = report.get("fixes") or {"targets": [], "candidates": []}
        off = {(t.get("path"), t.get("line")) for t in hand["targets"] if t.get("off_pr")}
        res["targets"] = [{**{k: t.get(k) for k in ("kind", "path", "line", "gb", "fixed_by", "reason")},
                           "off_pr": (t.get("path"), t.get("line")) in off} for t in fixes["targets"]]
        res["proof"] = []
        for e in hand["edits"]:
            # two alternatives may replace the same lines: the candidate is the one with this
            # edit's replacement text
            c = next((c for c in fixes["candidates"] if c["rule"] == HAND_RULE
                      and c["start_line"] == e.get("start_line") and c["end_line"] == e.get("end_line")
                      and c["lines"] == edits[e["edit"]]["new"]), None)
            res["proof"].append({**e, "id": (c or {}).get("id"), "verified": bool(c and c["verified"]),
                                 "evidence": (c or {}).get("evidence"), "reason": (c or {}).get("reason")})
        res["head_new"] = replay.new_breaks(report, name)
        res["fixes_s"] = (report.get("timings") or {}).get("fixes")
        # the other side: the verified edits in the PR's commit (all of them where none is
        # verified, the first of any that replace the same lines), reviewed again with
        # nothing offered
        chosen = [edits[p["edit"]] for p in res["proof"] if p["verified"]]
        if not chosen:
            taken: list[tuple[int, int]] = []
            for p in res["proof"]:
                if "start_line" in p and not any(a <= p["end_line"] and p["start_line"] <= b for a, b in taken):
                    taken.append((p["start_line"], p["end_line"]))
                    chosen.append(edits[p["edit"]])
        res["after_edits"] = [edits.index(e) for e in chosen]
        try:
            _apply(repo, chosen)
        except (ValueError, subprocess.CalledProcessError) as e2:
            res["after_error"] = str(e2)
            return res
        report2, err2, _wall2 = _review(repo, os.path.join(root, "out2"), python, None)
        if report2 is None:
            res["after_error"] = err2
        else:
            res["after"] = replay.new_breaks(report2, name)
            res["after_status"] = next((m.get("status") for m in report2.get("models") or ()
                                        if m.get("name") == name), None)
            # a model the review skips is one whose files no longer differ from main's (the
            # edits put the maintainers' lines back): nothing new, and nothing run
            res["after_skipped"] = next((s.get("reason") for s in report2.get("skipped") or ()
                                         if s.get("name") == name), None)
    return res


# --------------------------------------------------------------------------- figures

def _gone_after(r: dict, t: dict) -> bool:
    """Whether the re-review with the edits in no longer finds target `t` new in head."""
    if r.get("after_skipped"):
        return True
    return "after" in r and not any(x["kind"] == t["kind"] and x.get("path") == t.get("path")
                                    and x.get("line") == t.get("line") for x in r["after"])


def _site(r: dict, t: dict) -> str:
    """`proven`: a verified edit replaced the target's line and the re-review no longer finds
    it; `with`: no edit replaced its line, but it is gone once the verified edits are in (a
    recompile of a frame that only a fixed break had split off); `open`: neither."""
    verified = any(p["verified"] for p in r.get("proof") or ())
    if t.get("fixed_by") and _gone_after(r, t):
        return "proven"
    if verified and _gone_after(r, t):
        return "with"
    return "open"


def _proven(r: dict) -> bool:
    """The ceiling, per case: a target on the PR's lines, every one of them gone by a verified
    edit (its own, or the case's verified edits applied), and every verified edit in one hunk."""
    ts = [t for t in r.get("targets") or () if not t.get("off_pr")]
    verified = [p for p in r.get("proof") or () if p["verified"]]
    return bool(ts) and bool(verified) and all(_site(r, t) != "open" for t in ts) and \
        all(p.get("one_hunk") for p in verified)


def _no_target_fix(r: dict) -> bool:
    """A case without a target on the PR's lines whose new break a verified one-hunk edit removes."""
    ts = [t for t in r.get("targets") or () if t.get("off_pr")]
    verified = [p for p in r.get("proof") or () if p["verified"]]
    return bool(ts) and not any(not t.get("off_pr") for t in r.get("targets") or ()) and bool(verified) \
        and all(_gone_after(r, t) for t in ts) and all(p.get("one_hunk") for p in verified)


def _site_counts(r: dict) -> tuple[int, int, int]:
    ts = [t for t in r.get("targets") or () if not t.get("off_pr")]
    sites = [_site(r, t) for t in ts]
    return sites.count("proven"), sites.count("with"), len(ts)


def _after(r: dict) -> str:
    if "after_error" in r:
        return "re-review failed: " + r["after_error"][-120:]
    if "after" not in r:
        return "–"
    a = r["after"]
    if r.get("after_skipped"):
        return f"nothing new: the model was not run ({r['after_skipped']})"
    if not a:
        return "nothing new"
    return "; ".join(f"{x['gb'] or x['kind']} at {x.get('path')}:{x.get('line')}" if x["kind"] == "break"
                     else f"recompile `{(x.get('gb_type') or '')[:50]}`" + (f" at line {x['line']}" if x.get("line") else "")
                     for x in a)


def markdown(results: dict) -> str:
    cases = results["cases"]
    lines = ["| set | cases | with a target on the PR's lines | hand verdict `fix` | "
             "verified one-hunk fix of every target (the ceiling) | target sites: replaced by a verified edit "
             "(+ gone once it is in) | no target, but a verified one-hunk edit removes the new break |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for s in HELD_OUT + ("all",):
        rs = [r for r in cases.values() if s == "all" or r.get("set") == s]
        n = len(rs)
        with_t = sum(1 for r in rs if any(not t.get("off_pr") for t in r.get("targets") or ()))
        hand = sum(1 for r in rs if r["verdict"] == "fix")
        ceil = sum(1 for r in rs if _proven(r))
        proven, with_, sites = (sum(_site_counts(r)[k] for r in rs) for k in range(3))
        lines.append(f"| {s} | {n} | {with_t} | {hand} | **{ceil} of {n}** ({100 * ceil / n if n else 0:.0f} %; "
                     f"{ceil} of {with_t} targeted) | {proven} (+ {with_}) of {sites} | "
                     f"{sum(1 for r in rs if _no_target_fix(r))} |")
    lines += ["", "| case | set | target (PR line: kind) | hand verdict | edit (source: what) | one hunk | "
              "proof's verdict | re-review with the edits in: new in head |", "|---|---|---|---|---|---|---|---|"]
    for name, r in cases.items():
        ts = "; ".join(f"{t['line']}: {t['gb'] or t['kind']} ({_site(r, t)})" for t in r.get("targets") or ()
                       if not t.get("off_pr")) or (
            "none on the PR's lines" + (": " + "; ".join(
                f"{x['gb'] or x['kind']} at {x.get('path')}:{x.get('line')}" for x in r.get("head_new") or ())
                if r.get("head_new") else ""))
        edits = "<br>".join(f"{e.get('source')}: {e.get('why')}" for e in r.get("edits") or ()) or (
            r.get("why") or "–")
        hunk = ", ".join(("yes" + (f" ({p['context_lines']} unchanged line{'s' if p['context_lines'] > 1 else ''} "
                                   "of the hunk inside)" if p.get("context_lines") else ""))
                         if p.get("one_hunk") else "no" for p in r.get("proof") or ()) or "–"
        proof = "<br>".join(
            (f"lines {p['start_line']}-{p['end_line']} (targets {p.get('targets')}): "
             + ("**verified**: " + (p.get("evidence") or "") if p["verified"] else "refused: " + str(p.get("reason"))))
            if "error" not in p else p["error"] for p in r.get("proof") or ()) or (
            r.get("error") or ("no target on the PR's lines: the review proves nothing" if r.get("edits") else "–"))
        if r.get("targets") and not r.get("proof") and r.get("edits"):
            proof = "; ".join(f"{t['line']}: {t['reason']}" for t in r["targets"])
        verdict = r["verdict"] + (" (**ceiling**)" if _proven(r) else "")
        lines.append(f"| {name} | {r.get('set')} | {ts} | {verdict} | {edits} | {hunk} | {proof} | {_after(r)} |")
    caveats = {n: r for n, r in cases.items() if r.get("caveat")}
    if caveats:
        lines += ["", "Verified, with a caveat a reader should weigh:", "", "| case | caveat |", "|---|---|"]
        for n, r in caveats.items():
            lines.append(f"| {n} | {r['caveat']} |")
    outside = {n: r for n, r in cases.items() if r.get("outside")}
    if outside:
        lines += ["", "Fixes that need lines outside one hunk (the maintainers' own, where a one-hunk edit "
                      "was found instead; the only fix known, where not):", "",
                  "| case | one-hunk fix verified | what the fix outside one hunk needs |", "|---|---|---|"]
        for n, r in outside.items():
            lines.append(f"| {n} | {'yes' if _proven(r) or _no_target_fix(r) else 'no'} | {r['outside']} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--case", action="append", default=[])
    ap.add_argument("--report", action="store_true", help="print the figures of --out, run nothing")
    ap.add_argument("--_review-child", nargs=2, dest="child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return review_child(*args.child)
    if args.report:
        print(markdown(json.load(open(args.out))), end="")
        return 0
    specs = json.load(open(EDITS))
    names = [n for s in HELD_OUT for n in replay.case_names(s)]
    missing = [n for n in names if n not in specs]
    if missing:
        raise SystemExit(f"ceiling.json has no entry for {missing}")
    todo = args.case or names
    results = {"load_before": os.getloadavg(), "cases": {}}
    if args.case and os.path.exists(args.out):   # a partial re-run keeps the other cases' figures
        results["cases"] = json.load(open(args.out)).get("cases", {})
    for name in todo:
        r = run_case(name, specs[name], args.python)
        results["cases"][name] = r
        print(f"{name:32s} {r['verdict']:9s} targets {len(r.get('targets') or [])} "
              f"verified {[p['verified'] for p in r.get('proof') or []]} after {_after(r)[:80]} "
              f"{(r.get('error') or '')[:300]}", flush=True)
    results["load_after"] = os.getloadavg()
    results["cases"] = dict(sorted(results["cases"].items(), key=lambda kv: (kv[1].get("set") or "", kv[0])))
    with open(args.out, "w") as fh:
        json.dump(results, fh, indent=1)
        fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
