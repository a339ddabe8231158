"""Trend charts: real matplotlib (Agg) writing real PNGs, and the no-matplotlib fallback."""
from __future__ import annotations

import io
import sys

import pytest

from pt2bot.audit.charts import NO_MATPLOTLIB, Trends, render_trend_charts

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHART_SIZE = (800, 400)          # pt2bot/audit/charts.py: figsize (8, 4) at 100 dpi
LINE_RGB = (0x1F, 0x77, 0xB4)    # matplotlib's first colour cycle entry ("C0")


def decode_png(data: bytes):  # -> PIL.Image.Image (RGB)
    from PIL import Image

    im = Image.open(io.BytesIO(data))
    im.load()
    return im.convert("RGB")


def line_pixels(im) -> int:
    """Pixels of the first plotted series' colour (antialiasing: within a small distance)."""
    r0, g0, b0 = LINE_RGB
    return sum(n for n, (r, g, b) in im.getcolors(maxcolors=1 << 20)
               if abs(r - r0) + abs(g - g0) + abs(b - b0) < 40)


def assert_is_a_chart(data: bytes, min_line_pixels: int = 400) -> None:
    """Decodes to the chart size, is not blank, and shows a plotted series."""
    im = decode_png(data)
    assert im.size == CHART_SIZE
    white = sum(n for n, c in im.getcolors(maxcolors=1 << 20) if c == (255, 255, 255))
    assert white < 0.97 * CHART_SIZE[0] * CHART_SIZE[1], "the chart is (almost) blank"
    assert line_pixels(im) >= min_line_pixels, "no plotted series in the chart"


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


def test_charts_decode_to_their_size_and_show_the_series(tmp_path):
    pytest.importorskip("matplotlib")
    pytest.importorskip("PIL")
    result = render_trend_charts(_trends(), str(tmp_path))
    for path in result.files.values():
        with open(path, "rb") as fh:
            assert_is_a_chart(fh.read())
    # the blank canvas this guards against: same size, nothing drawn
    from PIL import Image
    blank = io.BytesIO()
    Image.new("RGB", CHART_SIZE, "white").save(blank, format="PNG")
    with pytest.raises(AssertionError, match="blank"):
        assert_is_a_chart(blank.getvalue())


def test_a_clean_model_flat_at_zero_stays_visible(tmp_path):
    # Seen as a person: a 0-breaks line sat under the x-axis spine (and the y axis read
    # 0.00-0.05). With padding the whole line is drawn in the plot area.
    pytest.importorskip("matplotlib")
    pytest.importorskip("PIL")
    trends = Trends(labels=("a", "b", "c"), graph_breaks={"clean": (0, 0, 0)})
    path = render_trend_charts(trends, str(tmp_path)).files["graph_breaks"]
    with open(path, "rb") as fh:
        assert_is_a_chart(fh.read(), min_line_pixels=1000)


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
