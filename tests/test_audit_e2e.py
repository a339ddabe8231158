"""Three nightly audits over real git commits of a fixture project, through the CLI.

Real git, real smoke workers (torch, eager backend, no latency phase to keep it quick), the
real static rules, a real SQLite history, real PNGs, and the tracking issue on the fake
GitHub: night 1 clean, night 2 introduces a graph break (issue opened), night 3 fixes it
(issue closed).
"""
from __future__ import annotations

import json

import pytest

from fakegithub import WRITE_TOKEN, FakeGitHub
from pt2bot.cli import main
from pt2bot.audit.history import History
from pt2bot.audit.report import AUDIT_MARKER

pytestmark = [pytest.mark.torch, pytest.mark.slow]

CONFIG = """\
version: 1
static: {paths: [pkg/], filter: nofilter}
models:
  - name: net
    entry: pkg.model:Net
    inputs: [{name: x, shape: [batch, 8]}]
    shapes: {batch: [2, 4]}
    dynamic: [batch]
    export: true
run: {device: cpu, backend: eager, latency: false, timeout_s: 240}
"""
CLEAN = """\
import torch


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.fc(x)
        return torch.where(y.sum() > 0, y * 2, y - 1)
"""
BROKEN = CLEAN.replace("        return torch.where(y.sum() > 0, y * 2, y - 1)\n",
                       "        if y.sum().item() > 0:\n"
                       "            return y * 2\n"
                       "        return y - 1\n")
PNG = b"\x89PNG\r\n\x1a\n"


def test_three_audits_break_then_fix(git_repo, tmp_path, monkeypatch):
    repo = git_repo
    repo.write("pt2bot.yml", CONFIG)
    repo.write("pkg/__init__.py", "")
    history = str(tmp_path / "history" / "audit.db")
    with FakeGitHub() as gh:
        monkeypatch.chdir(repo.path)
        for k, v in {"GITHUB_API_URL": gh.base_url, "GITHUB_TOKEN": WRITE_TOKEN,
                     "GITHUB_REPOSITORY": gh.full_name}.items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)

        def audit(n: int, source: str) -> tuple[int, dict, str]:
            repo.write("pkg/model.py", source)
            sha = repo.commit(f"night {n}")
            out = tmp_path / f"out{n}"
            rc = main(["audit", "--history", history, "--out", str(out), "--publish"])
            return rc, json.loads((out / "report.json").read_text()), sha

        def tracking() -> list[dict]:
            return [i for i in gh.issues.values() if AUDIT_MARKER in (i["body"] or "")]

        rc1, r1, sha1 = audit(1, CLEAN)
        assert rc1 == 0, r1["audit"]["outstanding"]
        assert r1["head"] == sha1 and r1["base"] is None and r1["conclusion"] == "success"
        net1 = r1["models"][0]
        assert net1["head"]["status"] == "ok" and net1["head"]["graph_breaks"] == []
        assert tracking() == []

        rc2, r2, sha2 = audit(2, BROKEN)
        assert rc2 == 1 and r2["base"] == sha1 and r2["head"] == sha2
        kinds = {(x["model"], x["kind"]) for x in r2["audit"]["regressions"]}
        assert ("net", "graph_break") in kinds
        brk = next(x for x in r2["audit"]["regressions"] if x["kind"] == "graph_break")
        assert brk["gb"] == "GB0124" and brk["path"] == "pkg/model.py"
        assert r2["models"][0]["delta"]["graph_breaks"] >= 1
        [issue] = tracking()
        assert issue["state"] == "open" and "GB0124" in issue["body"]
        # the static rules saw the .item() too (nofilter scan of the whole tree)
        assert r2["audit"]["findings_by_rule"]

        rc3, r3, sha3 = audit(3, CLEAN)
        assert rc3 == 0 and r3["base"] == sha2 and r3["audit"]["clean"]
        assert any(x["kind"] == "graph_break" and x["detail"] == "graph break fixed"
                   for x in r3["audit"]["improvements"])
        assert issue["state"] == "closed" and len(tracking()) == 1
        assert gh.violations == []

    with History(history) as h:
        runs = h.all_runs()
        assert [r.commit for r in runs] == [sha1, sha2, sha3]
        assert [r.conclusion for r in runs] == ["success", "failure", "success"]
        series = h.model_series("net")
        assert [p.status for p in series] == ["ok"] * 3
        assert series[0].graph_breaks == 0 and series[1].graph_breaks >= 1
        assert series[2].graph_breaks == 0
        assert {b["gb"] for b in h.rows("breaks", runs[1].id)} == {"GB0124"}
        assert h.rows("recompiles", runs[0].id)

    out3 = tmp_path / "out3"
    assert (out3 / f"baseline-{sha3}.json").is_file()
    assert json.loads((out3 / f"baseline-{sha3}.json").read_text())["commit"] == sha3
    png = out3 / "charts" / "graph_breaks.png"
    assert png.read_bytes()[:8] == PNG
    from PIL import Image
    with Image.open(png) as im:
        im.verify()
    md = (out3 / "audit.md").read_text()
    assert "xychart-beta" in md and "line [0, 1, 0]" in md
    assert "data:image/png;base64," in (out3 / "report.html").read_text()
