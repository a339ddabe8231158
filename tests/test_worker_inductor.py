"""The worker with the real inductor backend (CPU, needs g++): matrix, accuracy, compile time."""
from __future__ import annotations

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
