"""Tables for benchmarks/zoo/RESULTS.md from the JSON that bench.py and
bench_inductor_verdict.py wrote.

    python3 benchmarks/zoo/report.py benchmarks/zoo/results/grid.json \\
        [--inductor benchmarks/zoo/results/inductor_grid.json] \\
        [--verdict benchmarks/zoo/results/inductor_verdict.json]
    python3 benchmarks/zoo/report.py --again RUN1.json RUN2.json ... [--scenario shared]
"""
from __future__ import annotations

import argparse
import json
from typing import Any

PHASES = ("breaks", "matrix", "export", "latency")


def by_name(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["scenario"]: r for r in data["records"]}


def smoke_s(r: dict[str, Any]) -> float | None:
    return ((r.get("report") or {}).get("timings") or {}).get("smoke")


def scenario_table(recs: dict[str, dict[str, Any]]) -> list[str]:
    out = ["| scenario | command | models run | wall s | smoke s | load (1 min) start/end | conclusion |",
           "|---|---|---:|---:|---:|---|---|"]
    for name, r in recs.items():
        rep = r.get("report") or {}
        n = len(rep.get("selected") or []) if rep else len(r.get("head") or [])
        sm = None if name.startswith("merge-") else smoke_s(r)   # merge copies the shards'

        out.append(f"| {name} | `{r['command']}` | {n} | {r['wall_s']:.1f} | "
                   f"{'' if sm is None else f'{sm:.1f}'} | {r['load'][0]} / {r['load'][1]} | "
                   f"{rep.get('conclusion') or ('rc ' + str(r['rc']))} |")
    return out


def shard_rows(recs: dict[str, dict[str, Any]], src: str, unsharded: str,
               fixed: float) -> tuple[list[str], dict[str, Any]]:
    base = recs.get(unsharded)
    lines, facts = [], {}
    if base is None:
        return lines, facts
    lines += ["| shards | slowest shard s | sum of shards s | models per shard | slowest / unsharded | "
              "target 1.3/N × unsharded + fixed | slowest / (sum/N) | target 1.3/N × sum + fixed "
              "| merge s |", "|---:|---:|---:|---|---:|---:|---:|---:|---:|"]
    lines.append(f"| 1 (unsharded) | {base['wall_s']:.1f} | {base['wall_s']:.1f} | "
                 f"{len(base['report'].get('selected') or [])} | 1.00 | | | | |")
    for n in (2, 4):
        shards = [recs.get(f"{src}-shard{i}-{n}") for i in range(1, n + 1)]
        if not all(shards):
            continue
        walls = [s["wall_s"] for s in shards]
        per = [len([m for m in s.get("head") or []]) for s in shards]
        merge = recs.get(f"merge-{src}-{n}")
        target = 1.3 * base["wall_s"] / n + fixed
        merge_s = f"{merge['wall_s']:.2f}" if merge else ""
        fair = 1.3 * sum(walls) / n + fixed      # the same, against this run's own sum
        facts[n] = {"slowest": max(walls), "sum": sum(walls), "target": target, "fair": fair,
                    "merge": merge["wall_s"] if merge else None, "walls": walls}
        lines.append(f"| {n} | {max(walls):.1f} | {sum(walls):.1f} | {'/'.join(map(str, per))} | "
                     f"{max(walls) / base['wall_s']:.2f} | {target:.1f} "
                     f"({'met' if max(walls) <= target else 'MISSED'}) | "
                     f"{max(walls) / (sum(walls) / n):.2f} | {fair:.1f} "
                     f"({'met' if max(walls) <= fair else 'MISSED'}) | {merge_s} |")
    return lines, facts


def phase_table(models: list[dict[str, Any]], title: str) -> list[str]:
    out = [f"{title}", "",
           "| model | status | duration s | breaks | matrix | export | latency | build + eager (rest) | breaks found | export ok |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    tot = {p: [] for p in (*PHASES, "duration", "rest")}
    for m in sorted(models, key=lambda m: -(m.get("duration_s") or 0)):
        ps = m.get("phase_s") or {}
        dur = m.get("duration_s") or 0.0
        rest = dur - sum(ps.values())
        for p in PHASES:
            tot[p].append(ps.get(p, 0.0))
        tot["duration"].append(dur)
        tot["rest"].append(rest)
        out.append(f"| {m['name']} | {m['status']}{' (' + m['error'] + ')' if m.get('error') else ''} | "
                   f"{dur:.1f} | " + " | ".join(f"{ps.get(p, 0.0):.1f}" for p in PHASES)
                   + f" | {rest:.1f} | {m.get('graph_breaks')} | {m.get('export_ok')} |")
    n = len(models) or 1
    out.append(f"| **mean** | | {sum(tot['duration']) / n:.1f} | "
               + " | ".join(f"{sum(tot[p]) / n:.1f}" for p in PHASES)
               + f" | {sum(tot['rest']) / n:.1f} | | |")
    out.append(f"| **share** | | 100 % | "
               + " | ".join(f"{100 * sum(tot[p]) / max(sum(tot['duration']), 1e-9):.0f} %"
                            for p in PHASES)
               + f" | {100 * sum(tot['rest']) / max(sum(tot['duration']), 1e-9):.0f} % | | |")
    return out


def where_time_goes(r: dict[str, Any]) -> list[str]:
    walls = r.get("rounds_wall_s") or {}
    out = ["| part | s | share |", "|---|---:|---:|"]
    total = r["wall_s"]
    for k, v in walls.items():
        out.append(f"| {k} | {v:.1f} | {100 * v / total:.0f} % |")
    head = r.get("head") or []
    if head and "head/0" in walls:
        inside = sum(m.get("duration_s") or 0 for m in head)
        n = len(head)
        out.append(f"| (head/0: inside the workers, Σ duration_s) | {inside:.1f} | |")
        out.append(f"| (head/0: process start + import per worker, mean) | "
                   f"{(walls['head/0'] - inside) / n:.1f} | |")
    out.append(f"| total | {total:.1f} | |")
    return out


def label(setup: dict[str, Any]) -> str:
    """`<commit>` of the pt2bot snapshot that ran (its directory is named after it) and the
    pt2bot.yml keys bench.py set false (`--no-shape-advice`, `--no-verify-fixes`); without
    any, that pt2bot's defaults."""
    src = (setup.get("versions") or {}).get("pt2bot_src") or "?"
    commit = src.rsplit("pt2bot-src-", 1)[-1]
    off = setup.get("config_off") or []
    return f"{commit}, " + (" + ".join(f"`{k}: false`" for k in off) if off else "defaults")


def again_table(paths: list[str], scenarios: list[str]) -> list[str]:
    """One row per data file and scenario (in the order given: the order they ran in): wall,
    load, report.json's stages, the smoke runs' walls and the models' phases summed over both
    sides (blank where no model of the run has that phase)."""
    rows = []
    for path in paths:
        with open(path) as fh:
            data = json.load(fh)
        recs = by_name(data)
        for scenario in scenarios:
            if scenario in recs:
                name = label(data["setup"])
                rows.append((name if len(scenarios) == 1 else f"{name}: {scenario}",
                             recs[scenario]))
    if not rows:
        return []
    stages = [k for k in ("diff", "static", "smoke", "fixes", "total")
              if any(k in ((r.get("report") or {}).get("timings") or {}) for _, r in rows)]
    phases: list[str] = []
    for _, r in rows:
        for m in (r.get("head") or []) + (r.get("base") or []):
            phases += [p for p in (m.get("phase_s") or {}) if p not in phases]
    runs = ["before_smoke", "head/0", "base/0"]
    for _, r in rows:
        runs += [k for k in (r.get("rounds_wall_s") or {}) if k not in runs]
    out = [f"| pt2bot | wall s | load start/end | {' | '.join(f'`{k}` s' for k in stages)} | "
           f"{' | '.join(runs)} | Σ duration_s | {' | '.join('Σ ' + p for p in phases)} | "
           "conclusion |",
           "|---|" + "---:|" * (1 + len(stages) + len(runs) + 1 + len(phases)) + "---|"]
    for name, r in rows:
        t = (r.get("report") or {}).get("timings") or {}
        w = r.get("rounds_wall_s") or {}
        models = (r.get("head") or []) + (r.get("base") or [])
        ph = {p: sum((m.get("phase_s") or {}).get(p, 0.0) for m in models)
              if any(p in (m.get("phase_s") or {}) for m in models) else None for p in phases}
        cell = lambda v: "" if v is None else f"{v:.1f}"   # noqa: E731
        out.append(f"| {name} | {r['wall_s']:.1f} | {r['load'][0]} / {r['load'][1]} | "
                   + " | ".join(cell(t.get(k)) for k in stages) + " | "
                   + " | ".join(cell(w.get(k)) for k in runs) + " | "
                   + f"{sum(m.get('duration_s') or 0.0 for m in models):.1f} | "
                   + " | ".join(cell(ph[p]) for p in phases)
                   + f" | {(r.get('report') or {}).get('conclusion')} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("grid", nargs="?")
    ap.add_argument("--inductor")
    ap.add_argument("--verdict")
    ap.add_argument("--again", nargs="+", metavar="DATA",
                    help="one data file per run of --scenario, in the order they ran: the "
                         "runs side by side (alone, without the grid)")
    ap.add_argument("--scenario", default="shared", help="comma-separated scenarios")
    args = ap.parse_args()
    if args.again:
        print("\n".join(again_table(args.again, args.scenario.split(","))))
        return 0
    if not args.grid:
        ap.error("a grid data file, or --again")
    with open(args.grid) as fh:
        grid = json.load(fh)
    recs = by_name(grid)
    print("## Setup\n")
    print("```json\n" + json.dumps(grid["setup"], indent=1) + "\n```\n")
    print("## Scenarios\n")
    print("\n".join(scenario_table(recs)) + "\n")
    fixed = recs["nosmoke"]["wall_s"] if "nosmoke" in recs else 0.0
    for src, uns in (("shared", "shared"), ("all", "one-all"), ("audit", "audit")):
        lines, facts = shard_rows(recs, src, uns, fixed)
        if facts:
            print(f"## Shards of `{uns}` (fixed setup = `nosmoke` wall {fixed:.1f} s)\n")
            print("\n".join(lines) + "\n")
    if "one-all" in recs:
        n = grid["setup"]["models"]
        print("## One-model PR\n")
        for one in ("one", "one-again"):
            if one in recs:
                ratio = recs[one]["wall_s"] / recs["one-all"]["wall_s"]
                print(f"- `{one}` / `one-all` = {recs[one]['wall_s']:.1f} / "
                      f"{recs['one-all']['wall_s']:.1f} = {ratio:.3f} (load {recs[one]['load']}); "
                      f"target 1.5/N = {1.5 / n:.3f}: {'met' if ratio <= 1.5 / n else 'MISSED'}")
        print()
    if "audit" in recs:
        print("\n".join(phase_table(recs["audit"]["head"], "## Per-model phases (audit, eager)")))
        print()
    for name in ("one-all", "shared"):
        if name in recs:
            print(f"## Where the time goes: `{name}`\n")
            print("\n".join(where_time_goes(recs[name])) + "\n")
    if args.inductor:
        with open(args.inductor) as fh:
            ind = by_name(json.load(fh))
        for name, r in ind.items():
            print("\n".join(phase_table(r["head"], f"## {name} (wall {r['wall_s']:.1f} s, "
                                                    f"load {r['load']})")))
            print()
    if args.verdict:
        with open(args.verdict) as fh:
            ver = json.load(fh)
        print("## Latency verdict with inductor\n")
        print("| model | reps | true A/B ratio | rounds | samples | A/A false alarms | A/B detected | A/B ratio median |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for model, v in ver["models"].items():
            for row in v["rows"]:
                print(f"| {model} | {v['reps']} | {v['true_ratio']['best_process']} | "
                      f"{row['rounds']} | {row['samples']} | {row['false_alarms']}/{row['reviews']} | "
                      f"{row['detected']}/{row['reviews']} | {row['ab_ratio_median']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
