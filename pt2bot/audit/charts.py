"""Trend charts of the nightly audit as PNG files (matplotlib, optional).

matplotlib is an optional dependency (`pip install 'pt2bot[charts]'`) and is imported only
here, only when a chart is drawn. Without it the audit still runs: no PNGs, and a note saying
why (the Markdown report has Mermaid charts either way).

Figures are built with `matplotlib.figure.Figure` and the Agg canvas directly, never pyplot:
no global backend switch, no GUI, no figure registry to leak across calls.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

NO_MATPLOTLIB = ("matplotlib is not installed, so no PNG charts were drawn "
                 "(pip install 'pt2bot[charts]')")
MAX_LINES = 12   # more models than this: the chart shows the 12 with the most movement


@dataclass(frozen=True)
class Trends:
    """What the trend charts show: one x position per audited night, oldest first."""

    labels: tuple[str, ...]                                        # e.g. "11-02 1a2b3c4"
    graph_breaks: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    latency_ms: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    # the first compile's CPU seconds, and the ops the graph-break pass captured in graphs
    compile_cpu_s: dict[str, tuple[float | None, ...]] = field(default_factory=dict)
    captured_ops: dict[str, tuple[float | None, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class ChartResult:
    files: dict[str, str]           # chart key ("graph_breaks", "latency") -> PNG path
    note: str | None = None         # why charts are missing, when they are


CHARTS = (
    ("graph_breaks", "Graph break sites per model", "graph break sites"),
    ("latency", "Compiled latency per model (geometric mean over shape cases)", "ms"),
    ("compile", "First compile's cost per model (CPU s of the worker and its compile "
                "processes)", "CPU s"),
    ("captured_ops", "Ops captured in graphs per model (calls_captured)", "ops"),
)
SERIES = {"graph_breaks": "graph_breaks", "latency": "latency_ms", "compile": "compile_cpu_s",
          "captured_ops": "captured_ops"}   # chart key -> Trends field
INTEGER_CHARTS = ("graph_breaks", "captured_ops")


def render_trend_charts(trends: Trends, out_dir: str) -> ChartResult:
    """Draw the trends (graph breaks, latency, compile cost, captured ops) into
    `out_dir`/charts/*.png; a chart with no value at all is left out."""
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        return ChartResult(files={}, note=NO_MATPLOTLIB)
    os.makedirs(os.path.join(out_dir, "charts"), exist_ok=True)
    files: dict[str, str] = {}
    for key, title, ylabel in CHARTS:
        series = getattr(trends, SERIES[key])
        if not trends.labels or not any(_points(v) for v in series.values()):
            continue
        fig = Figure(figsize=(8, 4), dpi=100)
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        xs = list(range(len(trends.labels)))
        for name, values in _busiest(series).items():
            # Gaps (a model that failed or was not timed that night) stay gaps: NaN breaks
            # the line instead of inventing a value.
            ys = [math.nan if v is None else float(v) for v in values]
            ax.plot(xs, ys, marker="o", markersize=3, linewidth=1.5, label=name[:40])
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.set_xticks(xs)
        ax.set_xticklabels([label[:20] for label in trends.labels], rotation=45, ha="right",
                           fontsize=7)
        # Padding on every side: a point on the first/last night or a flat line at 0 (the
        # usual clean model) would otherwise sit under the axes' spine, invisible.
        ax.set_xlim(-0.3 if len(xs) > 1 else -0.5, xs[-1] + (0.3 if len(xs) > 1 else 0.5))
        if key in INTEGER_CHARTS:
            ax.yaxis.get_major_locator().set_params(integer=True)
            top = max(1.0, max(max(_points(v), default=0.0) for v in series.values()))
            ax.set_ylim(-0.08 * top, top * 1.08)
        else:
            ax.margins(y=0.08)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        # Fixed margins instead of tight_layout: that draws the figure twice (half the cost).
        fig.subplots_adjust(left=0.08, right=0.98, top=0.9, bottom=0.25)
        path = os.path.join(out_dir, "charts", f"{key}.png")
        fig.savefig(path, format="png")
        files[key] = path
    return ChartResult(files=files)


def _points(values: tuple[float | None, ...]) -> list[float]:
    return [float(v) for v in values if v is not None]


def _busiest(series: dict[str, tuple[float | None, ...]]) -> dict[str, tuple[float | None, ...]]:
    """At most MAX_LINES series: those whose values move most (then by name)."""
    if len(series) <= MAX_LINES:
        return dict(sorted(series.items()))

    def spread(item: tuple[str, tuple[float | None, ...]]) -> tuple[float, str]:
        pts = _points(item[1])
        return (-(max(pts) - min(pts)) if pts else 0.0, item[0])

    return dict(sorted(sorted(series.items(), key=spread)[:MAX_LINES]))


__all__ = ["Trends", "ChartResult", "render_trend_charts", "NO_MATPLOTLIB", "CHARTS", "SERIES"]
