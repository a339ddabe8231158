"""compare.pool_latency: later rounds join the first run's samples, grouped per process."""
from __future__ import annotations

from pt2bot.compare import compare_latency, pool_latency
from pt2bot.results import ModelRun


def _run(model_ms: list[float], ref_ms: list[float], status: str = "ok") -> dict:
    case = {"shape": {"batch": 2},
            "eager_ms": {"median": 1.0, "samples": [1.0] * len(model_ms)},
            "compiled_ms": {"median": model_ms[0], "samples": list(model_ms)},
            "reference_ms": {"median": ref_ms[0], "samples": list(ref_ms)}}
    return {"models": [{"name": "m", "status": status, "latency": [case]}]}


def test_rounds_are_kept_as_groups_for_model_and_reference():
    results = _run([1.0] * 10, [2.0] * 10)
    pool_latency(results, _run([1.5] * 10, [3.0] * 10))
    pool_latency(results, _run([1.1] * 10, [2.2] * 10))
    case = results["models"][0]["latency"][0]
    assert [len(r) for r in case["compiled_ms"]["rounds"]] == [10, 10, 10]
    assert [r[0] for r in case["reference_ms"]["rounds"]] == [2.0, 3.0, 2.2]
    assert case["compiled_ms"]["median"] == 1.1
    assert len(case["compiled_ms"]["samples"]) == 30


def test_failed_round_is_not_pooled():
    results = _run([1.0] * 10, [2.0] * 10)
    pool_latency(results, _run([9.0] * 10, [2.0] * 10, status="error"))
    assert "rounds" not in results["models"][0]["latency"][0]["compiled_ms"]


def _rounds(scale: float, n: int = 3) -> dict:
    """n worker processes; `scale` slows model and reference alike (a busy neighbour)."""
    xs = [scale * (1.0 + 0.01 * i) for i in range(20)]
    refs = [scale * (2.0 + 0.01 * i) for i in range(20)]
    results = _run(xs, refs)
    for _ in range(n - 1):
        pool_latency(results, _run(xs, refs))
    return results


def test_slow_processes_on_head_are_cancelled_by_their_reference():
    # Every head process ran 60 % slow, model and reference alike: not a regression.
    base, head = _rounds(1.0), _rounds(1.6)
    row, = compare_latency(ModelRun.from_json(base["models"][0]),
                           ModelRun.from_json(head["models"][0]), threshold_pct=10)
    assert row["significant"] is False, row


def test_real_slowdown_is_still_detected():
    base, head = _rounds(1.0), _rounds(1.0)
    for r in head["models"][0]["latency"][0]["compiled_ms"]["rounds"]:
        r[:] = [x * 1.3 for x in r]
    head["models"][0]["latency"][0]["compiled_ms"]["samples"] = [
        x for r in head["models"][0]["latency"][0]["compiled_ms"]["rounds"] for x in r]
    row, = compare_latency(ModelRun.from_json(base["models"][0]),
                           ModelRun.from_json(head["models"][0]), threshold_pct=10)
    assert row["significant"] is True and row["direction"] == "slower", row


# --------------------------------------------------------------------------- the user's torch

_PR_MODEL = '''import random
import torch


class Net(torch.nn.Module):
    def forward(self, x):
        if random.random() < 0.5:
            x = x * 2
        return x.sum().item()
'''


def _review_findings(git_repo, tmp_path, torch_release: str) -> list[str]:
    from pt2bot.pipeline import ReviewOptions, review

    pin = f'static:\n  torch: "{torch_release}"\n' if torch_release else ""
    git_repo.write("pt2bot.yml", f"version: 1\n{pin}models: []\n")
    git_repo.write("pkg/__init__.py", "")
    git_repo.write("pkg/net.py", "import torch\n")
    base = git_repo.commit("base")
    git_repo.branch("pr")
    git_repo.write("pkg/net.py", _PR_MODEL)
    git_repo.commit("pr")
    out = tmp_path / f"out-{torch_release or 'installed'}"
    report = review(ReviewOptions(base=base, out_dir=str(out), head="pr", smoke=False,
                                  repo_dir=str(git_repo.path)))
    return sorted(f["rule"] for f in report["findings"])


def test_review_states_only_claims_that_hold_on_the_users_torch(git_repo, tmp_path):
    # random.random() breaks the graph on torch 2.13 (GB0007), not on 2.14 (tests/test_rules_torch.py)
    assert _review_findings(git_repo, tmp_path, "2.14") == ["PTC101"]


def test_review_on_an_older_torch_keeps_the_claim(git_repo, tmp_path):
    assert _review_findings(git_repo, tmp_path, "2.13") == ["PTC101", "PTC107"]


def test_review_reads_the_installed_torch_when_none_is_configured(git_repo, tmp_path, monkeypatch):
    # the review runs its models on the installed torch: its static claims must hold there too
    # (the first torch dist-info on sys.path is the installed one: pt2bot/static/check.py resolve_torch)
    import sys

    site = tmp_path / "site"
    (site / "torch-2.14.1.dist-info").mkdir(parents=True)
    (site / "torch-2.14.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.14.1\n")
    monkeypatch.setattr(sys, "path", [str(site), *sys.path])
    assert _review_findings(git_repo, tmp_path, "") == ["PTC101"]
