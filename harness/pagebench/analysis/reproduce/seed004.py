"""Seed 004 (Pearson, McGregor & Cleary, multiplexing HTTP over the US/NZ link): its measures and figures.

The pool scenarios load several clients' pages at once (one planned load, one `seq`):
those pages share the link, the proxy and the moment, so they are not independent, and
every interval of their load times resamples whole loads (`clustered_bootstrap_ci`).
What a load carried across the link (its counters) is one value per load, not per page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from itertools import groupby

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure, add
from pagebench.analysis.reproduce.measures import Data, throughput
from pagebench.analysis.reproduce.scenarios import ERA, LOAD_POOL, LOAD_SMALL_POOLS, TODAY, WINDOW_BYTES, pool_of
from pagebench.analysis.stats import Interval, bootstrap_ci, clustered_bootstrap_ci
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, Mode
from pagebench.results.rows import LoadRow

#: The pools of seed 004's conclusions (section 6): 20 to use the link, 50 for the best latency.
TWENTY, FIFTY = LOAD_SMALL_POOLS[-1], LOAD_POOL


def clusters(loads: list[LoadRow], metric: str = "load_ms") -> list[list[float]]:
    """The loads' values grouped by planned load (`seq`): each client's page of one load together."""
    ordered = sorted((load for load in loads if load.metric(metric) is not None), key=lambda load: load.seq)
    return [[float(load.metric(metric)) for load in group]  # type: ignore[arg-type]
            for _, group in groupby(ordered, key=lambda load: load.seq)]


def per_load(loads: list[LoadRow]) -> list[list[LoadRow]]:
    """The loads grouped by planned load (`seq`): one planned load's pages, one per client."""
    ordered = sorted(loads, key=lambda load: load.seq)
    return [list(group) for _, group in groupby(ordered, key=lambda load: load.seq)]


def carried_mbit(pages: list[LoadRow]) -> float | None:
    """What one planned load carried down the link (its counters: every byte offered to
    the downlink, headers and retransmissions included, as seed 004's figure 5(a) counts)
    over the time its slowest client took: Mbit/s."""
    times = [page.load_ms for page in pages if page.load_ms]
    down = pages[0].link.get("bytes_down") if pages and pages[0].link else None
    if not times or not isinstance(down, (int, float)):
        return None
    return down * 8 / max(times) / 1000


def _largest(data: Data, variant: str) -> str | None:
    labels = sorted(data.labels(variant), key=lambda label: pool_of(label)[1])
    return labels[-1] if labels else None


def _clustered(statistic: Callable[..., float], *selections: list[LoadRow]) -> Interval | None:
    grouped = [clusters(loads) for loads in selections]
    return clustered_bootstrap_ci(statistic, grouped) if all(grouped) else None


def _cut_at_largest(data: Data, variant: str, mode: Mode) -> Interval | None:
    label = _largest(data, variant)
    if label is None:
        return None
    return _clustered(lambda serial, pooled: 1 - pooled / serial, data.select(variant, label, mode=HTTP10),
                      data.select(variant, label, mode=mode))


def pool_cut(data: Data, variant: str) -> Interval | None:
    """1 - load time through a warm pool of the largest C (keep-alive) / with a connection
    per request across the link (HTTP/1.0 through the same proxy): seed 004's US proxy
    against no US proxy."""
    return _cut_at_largest(data, variant, KEEPALIVE)


def multiplexed_cut(data: Data, variant: str) -> Interval | None:
    """1 - load time through one multiplexed h2 connection between the proxies / with a
    connection per request: every client's requests interleaved on one TCP connection."""
    return _cut_at_largest(data, variant, H2)


def pool_knee(data: Data, variant: str) -> Interval | None:
    """How much slower the warm pool's loads are at the smallest C than at the largest:
    seed 004's latency rising as the pool becomes the bottleneck."""
    labels = sorted(data.labels(variant), key=lambda label: pool_of(label)[1])
    if len(labels) < 2:
        return None
    return _clustered(lambda small, large: small / large - 1, data.select(variant, labels[0], mode=KEEPALIVE),
                      data.select(variant, labels[-1], mode=KEEPALIVE))


def _heaviest(data: Data, variant: str, size: int) -> list[LoadRow]:
    """The pooled (keep-alive) loads of pool `size` at the largest offered load."""
    runs = [pool_of(label) + (label,) for label in data.labels(variant)]
    if not runs:
        return []
    clients = max(n for n, _, _ in runs)
    return next((data.select(variant, label, mode=KEEPALIVE) for n, c, label in runs if (n, c) == (clients, size)),
                [])


def twenty_carried(data: Data, variant: str) -> Interval | None:
    """What a pool of 20 carries down the link at the heaviest offered load, as a share of
    what the largest pool (50) carries: one value per planned load."""
    small, large = ([rate for pages in per_load(_heaviest(data, variant, size)) if (rate := carried_mbit(pages))]
                    for size in (TWENTY, FIFTY))
    return bootstrap_ci(lambda s, lg: s / lg, [small, large]) if small and large else None


def fifty_latency(data: Data, variant: str) -> Interval | None:
    """How much slower the clients' pages are through a pool of 20 than of 50 at the
    heaviest offered load."""
    return _clustered(lambda s, lg: s / lg - 1, _heaviest(data, variant, TWENTY), _heaviest(data, variant, FIFTY))


def rate_window(data: Data, variant: str) -> Interval | None:
    """One bulk connection's goodput (Mbit/s) over the US/NZ link."""
    return throughput(data, variant, "us-nz", WINDOW_BYTES, of_capacity=False)


# Figures ------------------------------------------------------------------------------


def _point(x: float, grouped: list[list[float]]) -> charts.Point | None:
    """A median with its clustered interval (whole loads resampled)."""
    if not grouped:
        return None
    found = clustered_bootstrap_ci(lambda m: m, [grouped])
    return charts.Point(x, found.estimate, found.low, found.high)


def _seconds(loads: list[LoadRow]) -> list[list[float]]:
    return [[ms / 1000 for ms in cluster] for cluster in clusters(loads)]


def _pool_figure(data: Data | None) -> list[Figure]:
    """Load time against the pool size C (seed 004 figure 5(b)); HTTP/1.0 (a connection per
    request) and h2 (one multiplexed connection) are measured at the largest C, where the
    pool limits neither, and drawn across."""
    if data is None:
        return []
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    sizes = sorted({pool_of(label)[1] for _, label in data.loads})
    for variant in (ERA, TODAY):
        largest = _largest(data, variant)
        for mode, name in ((HTTP10, "HTTP/1.0, no US proxy"), (KEEPALIVE, "keep-alive pool of C"),
                           (H2, "h2, one multiplexed connection")):
            if mode == KEEPALIVE:
                found = [_point(math.log2(pool_of(label)[1]), _seconds(data.select(variant, label, mode=mode)))
                         for label in data.labels(variant)]
            else:
                at = _point(0, _seconds(data.select(variant, largest, mode=mode))) if largest else None
                found = [] if at is None else [charts.Point(math.log2(c), at.y, at.low, at.high) for c in sizes]
            points = [p for p in found if p is not None]
            if points:
                add(series, entries, f"{name} {variant}", mode.colour, points, variant == ERA)
    if not series:
        return []
    svg = charts.line_plot(series, "pool size C (log2)", "load time (s)", {math.log2(c): f"C={c}" for c in sizes})
    return [Figure("fig-5b", svg, "Like seed 004's figure 5(b): load time of 4 clients' pages against the warm "
                   "pool's size C (keep-alive), beside a connection per request (HTTP/1.0) and one multiplexed h2 "
                   "connection, both measured at the largest C; medians with clustered 95 % intervals; era dashed.",
                   legend(entries))]


#: The offered-load figures' lines: (name, mode, pool size, colour).
LOAD_LINES = (("HTTP/1.0, no US proxy", HTTP10, LOAD_POOL, HTTP10.colour),
              (f"keep-alive pool of {LOAD_POOL}", KEEPALIVE, LOAD_POOL, KEEPALIVE.colour),
              ("h2, one multiplexed connection", H2, LOAD_POOL, H2.colour),
              (f"keep-alive pool of {TWENTY}", KEEPALIVE, TWENTY, "#56B4E9"),
              (f"keep-alive pool of {LOAD_SMALL_POOLS[0]}", KEEPALIVE, LOAD_SMALL_POOLS[0], "#E69F00"))


def _counter(name: str) -> Callable[[list[LoadRow]], float | None]:
    def of(pages: list[LoadRow]) -> float | None:
        value = pages[0].link.get(name) if pages and pages[0].link else None
        return float(value) if isinstance(value, (int, float)) else None
    return of


def _load_figure(data: Data, name: str, y_label: str, caption: str,
                 per_load_value: Callable[[list[LoadRow]], float | None] | None) -> Figure | None:
    """One value against the offered load (clients at once, log2) for each line of
    LOAD_LINES: the pages' load time (per_load_value None), else one value per planned load."""
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    runs = {pool_of(label): label for label in data.labels(ERA)}
    for line, mode, size, colour in LOAD_LINES:
        points = []
        for (clients, c), label in sorted(runs.items()):
            loads = data.select(ERA, label, mode=mode) if c == size else []
            if per_load_value is None:
                point = _point(math.log2(clients), _seconds(loads))
            else:
                found = [v for pages in per_load(loads) if (v := per_load_value(pages)) is not None]
                point = _point(math.log2(clients), [[v] for v in found]) if found else None
            if point is not None:
                points.append(point)
        if points:
            add(series, entries, line, colour, points, dashed=False)
    if not series:
        return None
    counts = sorted({n for n, _ in runs})
    svg = charts.line_plot(series, "clients loading at once (log2)", y_label,
                           {math.log2(n): f"{n} client{'s' if n > 1 else ''}" for n in counts})
    return Figure(name, svg, caption + " Era (cleartext, 32767-byte windows); medians with 95 % intervals "
                  "(load times: clustered, whole loads resampled).", legend(entries))


def _load_figures(data: Data | None) -> list[Figure]:
    """Seed 004's figures 5(a), 5(b), 6 and 7(a) against offered load, as far as a load's
    counters go: the router's queue occupancy is not recorded (its drops are)."""
    if data is None:
        return []
    made = [_load_figure(data, "fig-5a", "carried down the link (Mbit/s)",
                         "Like seed 004's figure 5(a): what crossed the US/NZ link towards the clients (every byte "
                         "offered to the downlink over the slowest client's load time) against the offered load: "
                         "clients loading the 20-image page (20 x 45566 B) at once.", carried_mbit),
            _load_figure(data, "fig-5b-load", "load time (s)",
                         "Like seed 004's figure 5(b) against offered load: each client's load time.", None),
            _load_figure(data, "fig-6", "downlink queue drops per load",
                         "Instead of seed 004's figure 6 (router buffer usage, not recorded here): packets the "
                         "downlink's queue dropped per load, where its buffer overflowed.",
                         _counter("drops_queue_down")),
            _load_figure(data, "fig-7a", "TCP connections across the link per load",
                         "Like seed 004's figure 7(a): TCP connections opened across the US/NZ link per load "
                         "(a warm pool's are open before it: 0 new).", _counter("tcp_conns"))]
    return [figure for figure in made if figure is not None]


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _pool_figure(data.get("004-pool")) + _load_figures(data.get("004-load"))
