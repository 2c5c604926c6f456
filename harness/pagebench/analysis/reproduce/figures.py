"""The seeds' figures as measured: what each seed module draws with (`charts`), one
figure's record and its legend entries."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from pagebench.analysis.report import charts
from pagebench.analysis.stats import bootstrap_ci


@dataclass(frozen=True)
class Figure:
    """One of the seeds' figures as measured: an SVG, its caption, its HTML legend."""

    name: str
    svg: str
    caption: str
    legend: str = ""


def add(series: list[charts.Series], entries: list[tuple[str, str]], label: str, colour: str,
         points: list[charts.Point], dashed: bool) -> None:
    """One line of a figure and its legend entry (era dashed)."""
    series.append(charts.Series(label, colour, tuple(points), dashed))
    entries.append((charts.legend_swatch(colour, dashed), escape(label)))


def median_point(x: float, values: list[float]) -> charts.Point | None:
    if not values:
        return None
    found = bootstrap_ci(lambda m: m, [values])
    return charts.Point(x, found.estimate, found.low, found.high)
