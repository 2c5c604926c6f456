"""Seed 004 (Pearson, McGregor & Cleary, multiplexing HTTP over the US/NZ link): its measures and figures."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure, add, median_point
from pagebench.analysis.reproduce.measures import Data, throughput, values
from pagebench.analysis.reproduce.scenarios import ERA, TODAY, WINDOW_BYTES
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core import modes
from pagebench.core.modes import HTTP10, KEEPALIVE


def pool_cut(data: Data, variant: str) -> Interval | None:
    """1 - load time through a warm pool of the largest C (keep-alive) / with a connection
    per request across the link (HTTP/1.0 through the same proxy): seed 004's US proxy
    against no US proxy."""
    labels = sorted(data.labels(variant), key=_pool_size)
    if not labels:
        return None
    largest = labels[-1]
    serial = values(data.select(variant, largest, mode=HTTP10))
    pooled = values(data.select(variant, largest, mode=KEEPALIVE))
    if not serial or not pooled:
        return None
    return bootstrap_ci(lambda s, p: 1 - p / s, [serial, pooled])


def pool_knee(data: Data, variant: str) -> Interval | None:
    """How much slower the warm pool's loads are at the smallest C than at the largest:
    seed 004's latency rising as the pool becomes the bottleneck."""
    labels = sorted(data.labels(variant), key=_pool_size)
    if len(labels) < 2:
        return None
    small = values(data.select(variant, labels[0], mode=KEEPALIVE))
    large = values(data.select(variant, labels[-1], mode=KEEPALIVE))
    if not small or not large:
        return None
    return bootstrap_ci(lambda s, lg: s / lg - 1, [small, large])


def _pool_size(label: str) -> int:
    return int(label.removeprefix("C=")) if label.startswith("C=") else 0


def rate_window(data: Data, variant: str) -> Interval | None:
    """One bulk connection's goodput (Mbit/s) over the US/NZ link."""
    return throughput(data, variant, "us-nz", WINDOW_BYTES, of_capacity=False)


def _pool_figure(data: Data | None) -> list[Figure]:
    """Load time against the pool size C (seed 004 figure 5(b)); HTTP/1.0 crosses the link
    on a connection per request whatever C is."""
    if data is None:
        return []
    series, entries = [], []
    for variant in (ERA, TODAY):
        for mode in (modes.HTTP10, modes.KEEPALIVE):
            points = []
            for label in data.labels(variant):
                size = int(label.removeprefix("C="))
                values = [l.load_ms / 1000 for l in data.select(variant, label, mode=mode)
                          if l.load_ms is not None]
                point = median_point(math.log2(size), values)
                if point is not None:
                    points.append(point)
            if points:
                add(series, entries, f"{mode.name} {variant}", mode.colour, points, variant == ERA)
    if not series:
        return []
    sizes = sorted({int(label.removeprefix("C=")) for _, label in data.loads})
    svg = charts.line_plot(series, "pool size C (log2)", "load time (s)", {math.log2(c): f"C={c}" for c in sizes})
    return [Figure("fig-5b", svg, "Like seed 004's figure 5(b): load time of 4 clients' pages against the warm "
                    "pool's size C (keep-alive), beside a connection per request (HTTP/1.0); era dashed.",
                    legend(entries))]


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _pool_figure(data.get("004-pool"))
