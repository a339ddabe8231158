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


def test_sarif_carries_the_safe_fixes_with_whole_line_regions(tmp_path, capsys, monkeypatch):
    """`pt2bot check --format sarif`: a finding with a safe candidate carries it as a SARIF fix
    (artifactChanges / replacements) whose region and text, applied to the file, give what
    `--fix` writes; a finding without one carries none."""
    from pt2bot.cli import main

    src = ("import torch\n\n@torch.compile\ndef f(x):\n    print('a',\n          x)\n"
           "    if x.sum() > 0:\n        return x\n    return -x\n")
    (tmp_path / "m.py").write_text(src)
    monkeypatch.chdir(tmp_path)
    main(["check", "--no-cache", "--format", "sarif", "m.py"])
    log = json.loads(capsys.readouterr().out)
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    by_rule = {r["ruleId"]: r for r in log["runs"][0]["results"]}
    assert "fixes" not in by_rule["PTC201"]   # its candidates are not safe: not carried unrun
    (fix,) = by_rule["PTC105"]["fixes"]
    (change,) = fix["artifactChanges"]
    (rep,) = change["replacements"]
    assert change["artifactLocation"]["uri"] == "m.py"
    region = rep["deletedRegion"]
    assert (region["startLine"], region["startColumn"], region["endLine"], region["endColumn"]) == (5, 1, 7, 1)
    lines = src.splitlines(keepends=True)
    patched = "".join(lines[:region["startLine"] - 1]) + rep["insertedContent"]["text"] + \
        "".join(lines[region["endLine"] - 1:])
    assert patched == src.replace("    print('a',\n          x)\n",
                                  "    if not torch.compiler.is_compiling():\n        print('a',\n              x)\n")
    compile(patched, "m.py", "exec")


def test_sarif_fix_of_a_deletion_and_of_an_unsafe_candidate():
    from pt2bot.findings import Finding
    from pt2bot.rules import Candidate

    f = Finding(rule="PTC305", path="a.py", line=3, col=4, severity="warning", message="m",
                suggestion="ignored when candidates are given")
    gone = Candidate(code="PTC305", path="a.py", start_line=3, end_line=3, lines=(), title="drop it", safe=True)
    where = Candidate(code="PTC201", path="a.py", start_line=2, end_line=4, lines=("    y = 1",),
                      title="select", safe=False)
    log = findings_to_sarif([f], tool_version="0", fixes={f: [gone, where]})
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    a, b = log["runs"][0]["results"][0]["fixes"]
    assert a["artifactChanges"][0]["replacements"][0]["insertedContent"]["text"] == ""
    assert b["description"]["text"] == "select (not safe by construction)"
    assert b["artifactChanges"][0]["replacements"][0]["deletedRegion"]["endLine"] == 5
