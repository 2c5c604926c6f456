"""Seed 002 (the 2013 SPDY testbed report): its measures and figures."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure
from pagebench.analysis.reproduce.measures import Data, cut, values
from pagebench.analysis.reproduce.scenarios import SWEEP_SITES, TODAY
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core.modes import H2, KEEPALIVE


def connections_cut(data: Data, variant: str) -> Interval | None:
    """1 - median TCP connections (h2) / (keep-alive), as the router counted them, cold."""
    h1 = values(data.select(variant, mode=KEEPALIVE, cache="cold"), "connections_link")
    h2 = values(data.select(variant, mode=H2, cache="cold"), "connections_link")
    if not h1 or not h2:
        return None
    return bootstrap_ci(lambda a, b: 1 - b / a, [h1, h2])


def sweep_cells(data: Data, variant: str) -> list[tuple[str, str, Interval]]:
    """(site, profile, h2's cut over keep-alive) for every cell of the seed-002 sweep."""
    cells = []
    for site in SWEEP_SITES:
        for profile in sorted(data.profiles, key=lambda p: (data.profiles[p]["rtt_ms"],
                                                            data.profiles[p].get("down_mbit") or 0)):
            found = cut(data, variant, {"site": site, "profile": profile, "mode": KEEPALIVE},
                        {"site": site, "profile": profile, "mode": H2})
            if found is not None:
                cells.append((site, profile, found))
    return cells


def sweep_inside(data: Data, variant: str) -> Interval | None:
    """The share of the sweep's cells whose h2 gain lies inside the report's 21-42 %
    (the cells themselves are in the HTML report and the docs)."""
    cells = sweep_cells(data, variant)
    if not cells:
        return None
    inside = sum(1 for _, _, c in cells if 0.21 <= c.estimate <= 0.42) / len(cells)
    return Interval(inside, inside, inside)


def _sweep_figure(data: Data | None) -> list[Figure]:
    if data is None:
        return []
    cells = sweep_cells(data, TODAY)
    if not cells:
        return []
    sites = sorted({site for site, _, _ in cells})
    profiles = list(dict.fromkeys(profile for _, profile, _ in cells))
    groups = [charts.BarGroup(_cell_name(data, profile), tuple(
        next((c.estimate * 100 for s, p, c in cells if s == site and p == profile), None) for site in sites))
        for profile in profiles]
    colours = charts.lane_colours(len(sites))
    svg = charts.grouped_bars(groups, sites, colours, "h2's cut of the cold load time against HTTP/1.1 (%)")
    swatches = legend((f'<span class="chip" style="background:{c}"></span>', escape(s)) for s, c in zip(sites, colours))
    return [Figure("sweep-002", svg, "Where seed 002's 21-42 % appears: h2 against HTTP/1.1 (keep-alive), today, "
                    "per RTT and bandwidth.", swatches)]


def _cell_name(data: Data, profile: str) -> str:
    fields = data.profiles[profile]
    return f"{fields['rtt_ms']:g} ms, {fields.get('down_mbit') or 0:g} Mbit/s"


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _sweep_figure(data.get("002-sweep"))
