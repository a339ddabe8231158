"""SARIF output validates against the official SARIF 2.1.0 JSON schema (OASIS, rtm.5)."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from pt2bot.config import StaticConfig
from pt2bot.report.sarif import FINGERPRINT_KEY, findings_to_sarif
from pt2bot.rules import RULES
from pt2bot.static import check_paths

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
FIXTURES = Path(__file__).parent / "fixtures" / "rules"


def test_sarif_is_valid_and_complete():
    findings = check_paths(str(FIXTURES), [], StaticConfig(select=("ALL",)), jobs=1)
    assert len(findings) > 20
    log = findings_to_sarif(findings, tool_version="0.1.0")
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [r.code for r in RULES]
    assert all(r["helpUri"].startswith("https://") for r in rules)
    assert len(run["results"]) == len(findings)
    for res, f in zip(run["results"], findings):
        assert rules[res["ruleIndex"]]["id"] == f.rule
        assert res["partialFingerprints"][FINGERPRINT_KEY] == f.fingerprint()
        loc = res["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == f.path and loc["region"]["startLine"] == f.line


def test_sarif_schema_rejects_a_broken_log():
    """The schema is really enforced (a test that cannot fail is a defect)."""
    import pytest

    log = findings_to_sarif([], tool_version="0.1.0")
    log["runs"][0]["results"] = [{"ruleId": "PTC101", "level": "fatal", "message": {"text": "x"}}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SCHEMA).validate(log)


def test_unknown_rule_codes_are_described():
    from pt2bot.findings import Finding

    f = Finding(rule="SMOKE1", path="a.py", line=1, col=0, severity="warning", message="m")
    log = findings_to_sarif([f], tool_version="0")
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    assert log["runs"][0]["tool"]["driver"]["rules"][-1]["id"] == "SMOKE1"
