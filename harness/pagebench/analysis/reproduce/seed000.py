"""Seed 000 (Padmanabhan & Mogul 1994; 003 is the same paper): its measures and figures."""

from __future__ import annotations

import math
from collections.abc import Mapping

from pagebench.analysis.report import charts
from pagebench.analysis.reproduce.figures import Figure, add, median_point
from pagebench.analysis.reproduce.measures import (Data, object_of, rates_of, rtt_ms, throughput, transfer_bytes,
                                                   transfer_name, values)
from pagebench.analysis.reproduce.scenarios import ERA, TODAY, TRANSFER_BYTES
from pagebench.analysis.report.page import legend
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core import modes
from pagebench.core.modes import HTTP10, KEEPALIVE, PIPELINING, Mode


def share_of_gain(data: Data, variant: str, site: str) -> Interval | None:
    """(keepalive - pipelining) / (http1.0 - pipelining): how much of the whole gain over
    HTTP/1.0 pipelining adds on top of persistent connections."""
    groups = [values(data.select(variant, site=site, mode=mode)) for mode in (HTTP10, KEEPALIVE, PIPELINING)]
    if not all(groups):
        return None
    return bootstrap_ci(lambda serial, persistent, piped: (persistent - piped) / (serial - piped)
                        if serial != piped else math.nan, groups)


def of_best(data: Data, variant: str, profile: str, nbytes: int) -> Interval | None:
    """A transfer's goodput over the longest transfer's on the same link and TCP: seed
    000's "best-case value", the plateau of its figure 3-2."""
    longest = max((transfer_bytes(load.condition.site) for load in data.select(variant)), default=0)
    rates, best = rates_of(data, variant, profile, nbytes), rates_of(data, variant, profile, longest)
    if not rates or not best or longest <= nbytes:
        return None
    return bootstrap_ci(lambda r, b: r / b, [rates, best])


def first_image_rtts(data: Data, variant: str, mode: Mode, *, on_open_connection: bool) -> Interval | None:
    """Round trips from the request to the image's first byte (seed 000 figure 3-1: 4 for
    HTTP/1.0); `on_open_connection`: counted from the HTML's request on an open connection
    (figure 4-1: 2), i.e. without the round trips that opened it."""
    rtt = rtt_ms(data, "remote")
    values = []
    for load in data.select(variant, mode=mode, profile="remote", site=transfer_name(TRANSFER_BYTES[0])):
        resources = data.resources_of(load)
        html, image = (resources[0].resource, object_of(data, load, TRANSFER_BYTES[0])) if resources else (None, None)
        if html is None or image is None or image.response_start_ms is None or html.response_start_ms is None:
            continue
        trips = image.response_start_ms / rtt
        if on_open_connection:  # the HTML's request left one round trip before its first byte
            trips -= html.response_start_ms / rtt - 1
        values.append(trips)
    return bootstrap_ci(lambda v: v, [values]) if values else None


def _latency_figures(data: Data | None, profile: str, small_fig: str, large_fig: str | None) -> list[Figure]:
    """Load time against N images per protocol (seed 000 figures 6-1, 6-2, 6-4); era dashed."""
    if data is None:
        return []
    out = []
    for kind, size, fig in (("small", 2544, small_fig), ("large", 45566, large_fig)):
        if fig is None:
            continue
        series, entries = [], []
        for variant in (ERA, TODAY):
            for mode in modes.MODES:
                points = []
                for load_n in sorted({int(site.rsplit("-n", 1)[1]) for l in data.loads.get((variant, ""), [])
                                      if (site := l.condition.site).startswith(f"seed000-{kind}-n")}):
                    values = [l.load_ms / 1000 for l in data.select(variant, mode=mode,
                                                                    site=f"seed000-{kind}-n{load_n}")
                              if l.load_ms is not None]
                    point = median_point(load_n, values)
                    if point is not None:
                        points.append(point)
                if points:
                    add(series, entries, f"{mode.name} {variant}", mode.colour, points, variant == ERA)
        if series:
            svg = charts.line_plot(series, "images on the page (N)", "load time (s)", {})
            out.append(Figure(f"fig-{fig}", svg, f"Like the seed's figure {fig}: load time against N {size}-byte "
                               f"images, {profile} profile, medians with 95 % intervals; era dashed.",
                               legend(entries)))
    return out


def _throughput_figures(data: Data | None) -> list[Figure]:
    """One connection's throughput against transfer length (figures 3-2 and 3-3)."""
    if data is None:
        return []
    out = []
    for profile, fig, slug in (("remote", "3-2", "fig-3-2"), ("remote-mss536", "3-2 (536-byte MSS)", "fig-3-2-mss536"),
                               ("local", "3-3", "fig-3-3")):
        if profile not in data.profiles:
            continue
        series, entries = [], []
        sizes = sorted({transfer_bytes(l.condition.site) for loads in data.loads.values() for l in loads} - {0})
        for variant, colour in ((ERA, "#D55E00"), (TODAY, "#0072B2")):
            points = []
            for nbytes in sizes:
                found = throughput(data, variant, profile, nbytes, of_capacity=False)
                if found is not None:
                    points.append(charts.Point(math.log10(nbytes), found.estimate, found.low, found.high))
            if points:
                add(series, entries, variant, colour, points, variant == ERA)
        if series:
            marks = {math.log10(n): f"{n / 1024:g} KB" for n in sizes}
            capacity = data.profiles[profile].get("down_mbit")
            svg = charts.line_plot(series, "transfer length (log10 bytes)", "throughput (Mbit/s)", marks)
            out.append(Figure(slug, svg, f"Like the seed's figure {fig}: one new connection's goodput "
                               f"against transfer length, {profile} ({capacity} Mbit/s link), HTTP/1.0.",
                               legend(entries)))
    return out


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return [*_latency_figures(data.get("000-latency"), "remote", "6-1", "6-2"),
            *_latency_figures(data.get("000-local"), "local", "6-4", None),
            *_throughput_figures(data.get("000-transfer"))]
