"""Trend charts: real matplotlib (Agg) writing real PNGs, and the no-matplotlib fallback."""
from __future__ import annotations

import sys

import pytest

from pt2bot.audit.charts import NO_MATPLOTLIB, Trends, render_trend_charts

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _trends() -> Trends:
    return Trends(labels=("11-01 aaaaaaa", "11-02 bbbbbbb", "11-03 ccccccc"),
                  graph_breaks={"tiny_gpt": (0, 1, 0), "tiny_mlp": (1, None, 1)},
                  latency_ms={"tiny_gpt": (0.8, 0.9, 0.85), "tiny_mlp": (None, None, None)})


def test_pngs_are_valid_images(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib.image as mpimg

    result = render_trend_charts(_trends(), str(tmp_path))
    assert result.note is None
    assert set(result.files) == {"graph_breaks", "latency"}
    for path in result.files.values():
        with open(path, "rb") as fh:
            assert fh.read(8) == PNG_SIGNATURE
        img = mpimg.imread(path)
        assert img.shape[0] >= 300 and img.shape[1] >= 600
        # something was drawn: not a blank canvas
        assert img.std() > 0.01


def test_no_data_no_chart(tmp_path):
    pytest.importorskip("matplotlib")
    result = render_trend_charts(Trends(labels=("a",), latency_ms={"m": (None,)}), str(tmp_path))
    assert result.files == {}


def test_without_matplotlib_degrades_to_a_note(tmp_path, monkeypatch):
    # None in sys.modules makes `import matplotlib...` raise ImportError, as when absent.
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    result = render_trend_charts(_trends(), str(tmp_path))
    assert result.files == {} and result.note == NO_MATPLOTLIB
    assert not (tmp_path / "charts").exists()
