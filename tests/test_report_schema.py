"""report.json validates against its published JSON Schema (pt2bot/schemas/report.schema.json),
including the keys the later stages added: info findings with a condition and reached_by,
recompiles caused by a new break."""
from __future__ import annotations

import json
import os

import jsonschema
import pytest

from compare_fixtures import make_config, make_pr, resume_pair, results_pair
from pt2bot.compare import build_report
from pt2bot.findings import Finding
from pt2bot.results import ResultsFile

SCHEMA_PATH = os.path.join(os.path.dirname(__file__), "..", "pt2bot", "schemas",
                           "report.schema.json")


@pytest.fixture(scope="module")
def validator():
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        schema = json.load(fh)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _finding(**kw) -> Finding:
    base = dict(rule="PTC101", path="pkg/models.py", line=30, col=8, severity="error",
                message="`.item()` breaks the graph", source="n = x.sum().item()",
                function="Net.forward", gb="GB0124")
    base.update(kw)
    return Finding(**base)


def test_a_review_with_conditional_and_reached_findings_is_valid(git_repo, validator):
    base_sha, head_sha, cs = make_pr(git_repo)
    base, head = results_pair()
    findings = [_finding(),
                _finding(line=31, severity="info", condition="self.training and self.p > 0",
                         reached_by=()),
                _finding(line=32, severity="warning", reached_by=("tiny_gpt",))]
    report = build_report(base_results=ResultsFile.from_json(base),
                          head_results=ResultsFile.from_json(head), base_findings=[],
                          head_findings=findings, changeset=cs, config=make_config(),
                          base_sha=base_sha, head_sha=head_sha).to_dict()
    assert {f["severity"] for f in report["findings"]} >= {"info"}
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    assert [f"{list(e.path)}: {e.message}" for e in errors] == []


def test_a_report_with_recompiles_caused_by_a_new_break_is_valid(validator):
    base, head = resume_pair()
    report = build_report(base_results=ResultsFile.from_json(base),
                          head_results=ResultsFile.from_json(head), base_findings=[],
                          head_findings=[], changeset=None, config=make_config(),
                          base_sha="b" * 40, head_sha="h" * 40).to_dict()
    assert any((m.get("delta") or {}).get("caused_recompiles") for m in report["models"])
    errors = sorted(validator.iter_errors(report), key=lambda e: list(e.path))
    assert [f"{list(e.path)}: {e.message}" for e in errors] == []


def test_the_schema_refuses_an_unknown_severity(validator):
    # the test above would pass on any schema that accepts everything
    base, head = results_pair()
    report = build_report(base_results=ResultsFile.from_json(base),
                          head_results=ResultsFile.from_json(head), base_findings=[],
                          head_findings=[_finding()], changeset=None, config=make_config(),
                          base_sha="b" * 40, head_sha="h" * 40).to_dict()
    report["findings"][0]["severity"] = "fatal"
    assert not validator.is_valid(report)
