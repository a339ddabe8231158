"""The worker with the real inductor backend (CPU, needs g++): matrix, accuracy, compile time."""
from __future__ import annotations

import os

import pytest

from test_worker import spec

pytestmark = [pytest.mark.torch, pytest.mark.slow]


def test_inductor_matrix_with_a_cold_cache(tmp_path, monkeypatch):
    from pt2bot.smoke.worker import measure

    # a fresh cache dir: this compile is cold, and the phase must say so
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))
    run = measure(spec("clean_inductor", "models.clean:Clean", shapes={"batch": [2, 4]},
                       phases=["matrix"],
                       run={"backend": "inductor", "warmup": 1, "repeats": 3}))
    assert run["status"] == "ok" and run["phase_errors"] == [], run["phase_errors"]
    assert run["recompiles"]["count"] == 0
    # inductor reorders float math: equal within the float32 tolerance, not bit-exact
    for acc in run["accuracy"]:
        assert acc["match"] is True and acc["max_abs_err"] < 1e-4
        assert (acc["rtol"], acc["atol"]) == (1e-4, 1e-5)
    assert run["compile_s"]["cold"] > 0 and run["compile_s"]["warm"] is None
    assert any(files for _r, _d, files in __import__("os").walk(tmp_path / "inductor"))


def test_cold_and_warm_follow_the_cache_lookups_not_the_cache_directory(tmp_path, monkeypatch):
    """A model compiled from scratch is cold even when other models filled the cache
    directory; the same model again loads its graph from there and is warm. The kernels and
    the generated code's size are the same either way (read from the output code torch logs
    on a hit as on a miss)."""
    from pt2bot.smoke.worker import measure

    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "inductor"))

    def first_compile(name: str, entry: str) -> dict:
        run = measure(spec(name, entry, shapes={"batch": [2]}, phases=["matrix"],
                           run={"backend": "inductor"}))
        assert run["status"] == "ok" and run["phase_errors"] == [], run["phase_errors"]
        return run

    other = first_compile("size_branch", "models.size_branch:SizeBranch")
    assert other["compile_cost"]["cache"] == "cold"
    assert any(files for _r, _d, files in os.walk(tmp_path / "inductor"))
    cold = first_compile("clean_cold", "models.clean:Clean")   # a non-empty cache directory
    warm = first_compile("clean_warm", "models.clean:Clean")
    c, w = cold["compile_cost"], warm["compile_cost"]
    assert (c["cache"], c["cache_hits"], c["cache_misses"]) == ("cold", 0, 1)
    assert cold["compile_s"]["cold"] > 0 and cold["compile_s"]["warm"] is None
    assert (w["cache"], w["cache_hits"], w["cache_misses"]) == ("warm", 1, 0)
    assert warm["compile_s"]["warm"] > 0 and warm["compile_s"]["cold"] is None
    assert c["kernels"] == w["kernels"] >= 1 and c["kernel_bytes"] == w["kernel_bytes"] > 0
    assert (c["fx_nodes"], c["guards"], c["graphs"]) == (w["fx_nodes"], w["guards"], w["graphs"])
    assert c["cpu_s"] > w["cpu_s"]      # g++ and the code generation ran only in the cold one
