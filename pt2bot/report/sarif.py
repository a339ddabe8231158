"""SARIF 2.1.0 for code scanning: `findings_to_sarif(findings, *, tool_version)`.

Rules metadata comes from the rule registry (docs, helpUri = the GB page or torch docs);
results carry `partialFingerprints` from `Finding.fingerprint()` (line-independent), so code
scanning keeps an alert's identity when code moves. The review job reuses this function.
A finding under a condition says so in its message and in `properties.condition`; whether
configured models reached the line is `properties.reachedBy` (a list; [] = none did), and
what the smoke run made of the claim `properties.smoke` (`{status, models, evidence}`, the
report's `smoke`; the message says it too). The "info" severity (a demoted warning, or a
claim the smoke run did not observe) is SARIF's `note`.

`fixes` (optional): per finding, the fix candidates to carry as SARIF `fixes` (pt2bot/rules/base.py
`Candidate`): `pt2bot check` passes the ones that are safe by construction. Each replaces whole
lines: the region from the first replaced line's column 1 to column 1 of the line after the
last, by the new lines each ended with a newline (a deletion inserts nothing). A finding with
candidates carries them instead of its one-line `suggestion`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from pt2bot.findings import Finding

if TYPE_CHECKING:
    from pt2bot.rules.base import Candidate

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/pt2bot/pt2bot"
FINGERPRINT_KEY = "pt2botFingerprint/v1"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def _rule_descriptor(code: str) -> dict[str, Any]:
    from pt2bot.rules import BY_CODE

    r = BY_CODE.get(code)
    if r is None:   # a code from another stage (e.g. a smoke-run finding): minimal metadata
        return {"id": code, "shortDescription": {"text": code}}
    sections = r.doc_sections()
    return {
        "id": r.code,
        "name": "".join(p.capitalize() for p in r.name.split("-")),
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": sections.get("Why is this bad?", r.summary)},
        "help": {"text": r.doc(), "markdown": r.doc()},
        "helpUri": r.help_uri(),
        "defaultConfiguration": {"level": "error" if r.severity == "error" else "warning",
                                 "enabled": bool(r.default)},
        "properties": {"tags": ["pytorch", "torch.compile"], "gb": r.gb or "", "claim": r.claim},
    }


def fix_to_sarif(cand: "Candidate") -> dict[str, Any]:
    """One candidate as a SARIF `fix` (whole lines replaced; see the module's docstring)."""
    text = "".join(line + "\n" for line in cand.lines)
    return {"description": {"text": cand.title + ("" if cand.safe else " (not safe by construction)")},
            "artifactChanges": [{
                "artifactLocation": {"uri": cand.path, "uriBaseId": "%SRCROOT%"},
                "replacements": [{"deletedRegion": {"startLine": cand.start_line, "startColumn": 1,
                                                    "endLine": cand.end_line + 1, "endColumn": 1},
                                  "insertedContent": {"text": text}}]}]}


def findings_to_sarif(findings: Sequence[Finding], *, tool_version: str,
                      fixes: "Mapping[Finding, Sequence[Candidate]] | None" = None) -> dict[str, Any]:
    from pt2bot.rules import RULES

    codes = [r.code for r in RULES]
    for f in findings:
        if f.rule not in codes:
            codes.append(f.rule)
    index = {c: i for i, c in enumerate(codes)}
    results = []
    for f in findings:
        region: dict[str, Any] = {"startLine": max(1, f.line), "startColumn": f.col + 1}
        if f.end_line:
            region["endLine"] = max(f.end_line, region["startLine"])
            if f.end_col is not None:
                region["endColumn"] = max(1, f.end_col + 1)
                if region["endLine"] == region["startLine"] and region["endColumn"] < region["startColumn"]:
                    region["endColumn"] = region["startColumn"]
        if f.source:
            region["snippet"] = {"text": f.source}
        text = f.message + (f" When `{f.condition}`." if f.condition else "")
        if f.smoke is not None:   # what the smoke run made of the claim (pt2bot/reach.py)
            who = ", ".join(f"`{m}`" for m in f.smoke.models)
            text += (f" Confirmed by the smoke run ({who}): {f.smoke.evidence}."
                     if f.smoke.status == "confirmed" else
                     f" Not observed by the smoke run ({who}): {f.smoke.evidence}.")
        res: dict[str, Any] = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": LEVELS.get(f.severity, "warning"),
            "message": {"text": text + (f" Predicts {f.gb}: {f.url}" if f.gb and f.url else "")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "region": region}}],
            "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint()},
        }
        if f.function:
            res["locations"][0]["logicalLocations"] = [{"fullyQualifiedName": f.function, "kind": "function"}]
        cands = (fixes or {}).get(f) or ()
        if cands:
            res["fixes"] = [fix_to_sarif(c) for c in cands]
        elif f.suggestion and f.end_line == f.line:
            res["fixes"] = [{"description": {"text": "Replace the line"}, "artifactChanges": [{
                "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                "replacements": [{"deletedRegion": {"startLine": f.line},
                                  "insertedContent": {"text": f.suggestion}}]}]}]
        props: dict[str, Any] = {}
        if f.diff is not None:
            props["diff"] = f.diff
        if f.condition is not None:
            props["condition"] = f.condition
        if f.reached_by is not None:
            props["reachedBy"] = list(f.reached_by)
        if f.smoke is not None:
            props["smoke"] = f.smoke.to_dict()
        if props:
            res["properties"] = props
        results.append(res)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "pt2bot", "version": tool_version, "informationUri": INFO_URI,
                                "rules": [_rule_descriptor(c) for c in codes]}},
            "originalUriBaseIds": {"%SRCROOT%": {"description": {"text": "The repository root."}}},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    }
