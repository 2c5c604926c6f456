"""Seed 000 (Padmanabhan & Mogul 1994; 003 is the same paper): its measures and figures.

Section 6's claims read the network retrieval time, as the paper timed it ("we measured
network retrieval times, not including the time it took to render images"): from the
first request to the last byte of the last response, from the stored resources; the load
event is kept beside it (`LOAD`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from pagebench.analysis.report import charts
from pagebench.analysis.reproduce.figures import Figure, add, median_point
from pagebench.analysis.reproduce.measures import (Data, object_of, rates_of, rtt_ms, throughput, transfer_bytes,
                                                   transfer_name, values)
from pagebench.analysis.reproduce.scenarios import (BEST_BYTES, CLAIM_IMAGES, ERA, MODERATE_IMAGES, TODAY,
                                                    TRANSFER_BYTES)
from pagebench.analysis.report.page import legend
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core import modes
from pagebench.core.modes import HTTP10, KEEPALIVE, PIPELINING, Mode
from pagebench.core.records import Resource
from pagebench.results.rows import LoadRow

RETRIEVAL, LOAD = "retrieval_ms", "load_ms"
#: The runs' labels: the LAN transfers (000-transfer), the LAN pages direct and proxied (000-local).
LAN, DIRECT, PROXIED = "lan", "direct", "proxy"
LONGEST = TRANSFER_BYTES[-1]


def page(kind: str, n: int = CLAIM_IMAGES) -> str:
    return f"seed000-{kind}-n{n}"


def retrieval_ms(data: Data, load: LoadRow) -> float | None:
    """The first request's start to the last response's last byte (what the browser
    fetched over the network; cached and unfinished requests left out)."""
    fetched = [r.resource for r in data.resources_of(load)
               if not r.resource.from_cache and r.resource.end_ms is not None]
    if not fetched:
        return None
    return max(r.end_ms for r in fetched if r.end_ms is not None) - min(r.start_ms for r in fetched)


def times(data: Data, variant: str, metric: str = RETRIEVAL, label: str = "", **where: Any) -> list[float]:
    loads = data.select(variant, label, **where)
    if metric == LOAD:
        return values(loads)
    return [t for load in loads if (t := retrieval_ms(data, load)) is not None]


def time_cut(data: Data, variant: str, base: dict[str, Any], new: dict[str, Any], *, metric: str = RETRIEVAL,
        label: str = "") -> Interval | None:
    """1 - median(new) / median(base) of the retrieval (or load) time."""
    old, fresh = times(data, variant, metric, label, **base), times(data, variant, metric, label, **new)
    return bootstrap_ci(lambda b, n: 1 - n / b, [old, fresh]) if old and fresh else None


def pipelining_cut(data: Data, variant: str, site: str, *, metric: str = RETRIEVAL, label: str = "",
                   **where: Any) -> Interval | None:
    """The modified protocol's cut (persistent and pipelined) against HTTP/1.0 on one page."""
    return time_cut(data, variant, {"site": site, "mode": HTTP10, **where}, {"site": site, "mode": PIPELINING, **where},
               metric=metric, label=label)


def window_cut(window: int) -> Callable[[Data, str], Interval | None]:
    """The 20 large images' cut under a receive window (000-window's profile remote-w<window>)."""
    def measure(data: Data, variant: str) -> Interval | None:
        return pipelining_cut(data, variant, page("large"), profile=f"remote-w{window}")
    return measure


def share_of_gain(data: Data, variant: str, site: str) -> Interval | None:
    """(keepalive - pipelining) / (http1.0 - pipelining): how much of the whole gain over
    HTTP/1.0 pipelining adds on top of persistent connections."""
    groups = [times(data, variant, site=site, mode=mode) for mode in (HTTP10, KEEPALIVE, PIPELINING)]
    if not all(groups):
        return None
    return bootstrap_ci(lambda serial, persistent, piped: (persistent - piped) / (serial - piped)
                        if serial != piped else math.nan, groups)


def per_image_rtts(data: Data, variant: str) -> Interval | None:
    """Round trips each extra image costs HTTP/1.0 on one connection at a time: the
    retrieval time of N small images less one image's, over N - 1, in RTTs."""
    one, many = (times(data, variant, site=page("small", n), mode=HTTP10) for n in (1, CLAIM_IMAGES))
    if not one or not many:
        return None
    rtt = rtt_ms(data, "remote")
    return bootstrap_ci(lambda a, b: (b - a) / (CLAIM_IMAGES - 1) / rtt, [one, many])


def _cut_difference(data: Data, variant: str, first: str, second: str) -> Interval | None:
    """Pipelining's cut on page `first` less its cut on page `second`, in points."""
    groups = [times(data, variant, site=site, mode=mode) for site in (first, second) for mode in (HTTP10, PIPELINING)]
    if not all(groups):
        return None
    return bootstrap_ci(lambda a, b, c, d: (1 - b / a) - (1 - d / c), groups)


def small_over_large(data: Data, variant: str) -> Interval | None:
    """Figure 6-3: how much more the modified protocol cuts for 2544-byte images than for 45566-byte ones."""
    return _cut_difference(data, variant, page("small"), page("large"))


def moderate_over_one(data: Data, variant: str) -> Interval | None:
    """Figure 6-3: how much more it cuts for a moderate number of images than for one."""
    return _cut_difference(data, variant, page("small", MODERATE_IMAGES), page("small", 1))


def waiting_ms(resource: Resource) -> float | None:
    """How long a request waited from its sending to its response's first byte (the
    browser's own timing phases): the network's time, without the browser's work."""
    sent, first = resource.timing.get("sendStart"), resource.timing.get("receiveHeadersEnd")
    return None if sent is None or first is None or sent < 0 or first < sent else first - sent


def first_image_rtts(data: Data, variant: str, mode: Mode) -> Interval | None:
    """Network round trips before the first image (figure 3-1: 4 for HTTP/1.0; figure
    4-1: 2 on a connection already open): what the HTML's request and then the image's
    waited, summed, over the RTT. Through the edge proxy every connection across the link
    is opened inside a request's wait; what is left out is the browser's own work (its
    connection to the proxy on this machine, its parsing), the local delays of the
    paper's figure 3-1."""
    rtt, found = rtt_ms(data, "remote"), []
    for load in data.select(variant, mode=mode, profile="remote", site=transfer_name(TRANSFER_BYTES[0])):
        resources = data.resources_of(load)
        image = object_of(data, load, TRANSFER_BYTES[0])
        waits = [waiting_ms(r) for r in (resources[0].resource, image)] if resources and image else [None]
        if all(w is not None for w in waits):
            found.append(sum(w for w in waits if w is not None) / rtt)
    return bootstrap_ci(lambda v: v, [found]) if found else None


def of_best(data: Data, variant: str, profile: str, nbytes: int) -> Interval | None:
    """A transfer's goodput over the best case's on the same link and TCP (figure 3-2's
    plateau: the 512 KB transfer, before the decline past about 500 KB)."""
    rates, best = rates_of(data, variant, profile, nbytes), rates_of(data, variant, profile, BEST_BYTES)
    return bootstrap_ci(lambda r, b: r / b, [rates, best]) if rates and best else None


def rate_ratio(data: Data, variant: str, first: tuple[str, int], second: tuple[str, int]) -> Interval | None:
    """Goodput of the (profile, bytes) transfer `first` over `second`'s."""
    a, b = rates_of(data, variant, *first), rates_of(data, variant, *second)
    return bootstrap_ci(lambda x, y: x / y, [a, b]) if a and b else None


def lan_share(data: Data, variant: str, nbytes: int) -> Interval | None:
    """One new connection's goodput on the LAN as a share of the link's 10 Mbit/s."""
    return throughput(data, variant, "local", nbytes, of_capacity=True, label=LAN)


# Figures -------------------------------------------------------------------------------


def _sizes(data: Data, variant: str, kind: str, label: str = "") -> list[int]:
    return sorted({int(site.rsplit("-n", 1)[1]) for load in data.loads.get((variant, label), [])
                   if (site := load.condition.site).startswith(f"seed000-{kind}-n")})


def _latency_figures(data: Data | None) -> list[Figure]:
    """Retrieval time against N images per protocol (figures 6-1 and 6-2); era dashed."""
    if data is None:
        return []
    out = []
    for kind, size, fig in (("small", 2544, "6-1"), ("large", 45566, "6-2")):
        series: list[charts.Series] = []
        entries: list[tuple[str, str]] = []
        for variant in (ERA, TODAY):
            for mode in modes.MODES:
                points = [p for n in _sizes(data, variant, kind) if (p := median_point(
                    n, [t / 1000 for t in times(data, variant, site=page(kind, n), mode=mode)])) is not None]
                if points:
                    add(series, entries, f"{mode.name} {variant}", mode.colour, points, variant == ERA)
        if series:
            svg = charts.line_plot(series, "images on the page (N)", "network retrieval time (s)", {})
            out.append(Figure(f"fig-{fig}", svg, f"Like the seed's figure {fig}: network retrieval time (first "
                               f"request to last byte) against N {size}-byte images, T1, one upstream connection, "
                               "medians with 95 % intervals; era dashed.", legend(entries)))
    return out


def _improvement_figure(data: Data | None, name: str, caption: str,
                        lines: tuple[tuple[str, str, str, Mode, str], ...]) -> list[Figure]:
    """A cut against N per line (label, kind, legend, mode against HTTP/1.0, colour); era dashed."""
    if data is None:
        return []
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    for variant in (ERA, TODAY):
        for label, kind, text, mode, colour in lines:
            points = []
            for n in _sizes(data, variant, kind, label):
                found = time_cut(data, variant, {"site": page(kind, n), "mode": HTTP10},
                                 {"site": page(kind, n), "mode": mode}, label=label)
                if found is not None:
                    points.append(charts.Point(n, found.estimate * 100, found.low * 100, found.high * 100))
            if points:
                add(series, entries, f"{text} {variant}", colour, points, variant == ERA)
    if not series:
        return []
    svg = charts.line_plot(series, "images on the page (N)", "latency improvement over HTTP/1.0 (%)", {})
    return [Figure(name, svg, caption, legend(entries))]


def _throughput_figures(data: Data | None) -> list[Figure]:
    """One connection's throughput against transfer length (figures 3-2 and 3-3)."""
    if data is None:
        return []
    out = []
    for profile, label, fig, slug in (("remote", "", "3-2", "fig-3-2"),
                                      ("remote-mss536", "", "3-2 (536-byte MSS)", "fig-3-2-mss536"),
                                      ("local", LAN, "3-3", "fig-3-3")):
        if profile not in data.profiles:
            continue
        series: list[charts.Series] = []
        entries: list[tuple[str, str]] = []
        sizes = sorted({transfer_bytes(l.condition.site) for (_, lab), loads in data.loads.items() if lab == label
                        for l in loads} - {0})
        for variant, colour in ((ERA, "#D55E00"), (TODAY, "#0072B2")):
            points = []
            for nbytes in sizes:
                found = throughput(data, variant, profile, nbytes, of_capacity=False, label=label)
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
    return [*_latency_figures(data.get("000-latency")),
            *_improvement_figure(data.get("000-latency"), "fig-6-3", "Like the seed's figure 6-3: the modified "
                                 "protocol's (persistent and pipelined) cut of the network retrieval time against "
                                 "HTTP/1.0, T1, per image size; era dashed.",
                                 (("", "small", "2544 B", PIPELINING, "#CC79A7"),
                                  ("", "large", "45566 B", PIPELINING, "#0072B2"))),
            *_improvement_figure(data.get("000-local"), "fig-6-4", "Like the seed's figure 6-4: cuts of the network "
                                 "retrieval time against HTTP/1.0 on the 1994 LAN, 2544-byte images: persistent "
                                 "connections direct, pipelining through the edge proxy (against HTTP/1.0 through "
                                 "it); era dashed.",
                                 ((DIRECT, "small", "keep-alive, direct", KEEPALIVE, KEEPALIVE.colour),
                                  (PROXIED, "small", "pipelining, proxied", PIPELINING, PIPELINING.colour))),
            *_throughput_figures(data.get("000-transfer"))]
