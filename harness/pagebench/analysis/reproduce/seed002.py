"""Seed 002 (the 2013 SPDY testbed report): the appendix's own figures, the link fitted
from them (`fit`), its measures and figures.

The appendices' per-trial tables are data here (`APPENDIX_B` .. `APPENDIX_D_WARM`): the claims'
ranges are the paper's own 95 % intervals from them, fixed before any run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure
from pagebench.analysis.reproduce.measures import Data, cut, values
from pagebench.analysis.reproduce.scenarios import EC2_2013, ERA, PAGE002_SITE, TODAY
from pagebench.analysis.stats import RESAMPLES, SEED, Interval, bootstrap_ci
from pagebench.core.modes import H2, KEEPALIVE, Mode


@dataclass(frozen=True)
class Trials:
    """One table of the appendix: per-trial download times (s) and TCP connections of HTTP
    and SPDY (cold loads, or warm where `APPENDIX_D_WARM` says so)."""

    http_s: tuple[float, ...]
    spdy_s: tuple[float, ...]
    http_tcp: tuple[int, ...]
    spdy_tcp: tuple[int, ...]

    @property
    def http_mean(self) -> float:
        return sum(self.http_s) / len(self.http_s)

    @property
    def spdy_mean(self) -> float:
        return sum(self.spdy_s) / len(self.spdy_s)


#: Appendix B (scenario 1, the EC2 server): 20 cold loads each, lines 235-278.
APPENDIX_B = Trials(
    (6.682552, 6.635064, 8.462049, 6.614158, 10.070165, 7.976932, 7.871864, 6.461424, 8.480123, 6.585104,
     7.407157, 6.928105, 6.903054, 7.00848, 8.110783, 6.530395, 8.420031, 9.318425, 8.638991, 6.6181),
    (5.528038, 5.60174, 6.284596, 5.454791, 5.401357, 6.963359, 6.013799, 5.33201, 6.057527, 4.73131,
     6.225865, 5.100791, 4.671292, 6.042038, 6.041744, 6.963252, 6.962994, 5.939066, 7.67592, 6.453954),
    (9, 9, 11, 10, 9, 10, 10, 9, 10, 9, 9, 11, 10, 9, 9, 9, 11, 11, 10, 9),
    (4, 4, 4, 4, 4, 4, 4, 4, 5, 4, 4, 5, 4, 4, 4, 4, 4, 4, 4, 5))
#: The link's capacity for the fit: the fastest of Appendix B's 40 loads, SPDY's trial 13
#: (9785520 bytes in 4.671292 s: 16.76 Mbit/s, the report's "peak" 16.8). The link carried
#: at least that; the fit takes it as the rate and fits only the RTT.
FIT_MBIT = 16.8


@dataclass(frozen=True)
class Fit:
    """The fitted RTT and each protocol's time there (interpolated from the sweep's
    medians), with its residual against the appendix's mean: HTTP/1.1's is the fit's own
    (nil on the sweep), h2's the prediction's."""

    target: Trials
    rtt_ms: float
    http_s: float
    spdy_s: float

    @property
    def http_residual(self) -> float:
        return self.http_s / self.target.http_mean - 1

    @property
    def spdy_residual(self) -> float:
        return self.spdy_s / self.target.spdy_mean - 1


def _median(xs: Sequence[float]) -> float:
    s = sorted(xs)
    return (s[(len(s) - 1) // 2] + s[len(s) // 2]) / 2


def fit(http: Mapping[float, Sequence[float]], spdy: Mapping[float, Sequence[float]],
        target: Trials) -> Fit | None:
    """The RTT at which HTTP/1.1's median cold load is the appendix's mean, interpolated
    linearly between the first two swept RTTs whose medians bracket it; h2's median is
    interpolated at the same RTT. None when no two RTTs bracket it. h2's times are not
    used to choose the RTT."""
    rtts = sorted(r for r in http if http[r] and spdy.get(r))
    for low, high in zip(rtts, rtts[1:]):
        a, b = _median(http[low]), _median(http[high])
        if min(a, b) <= target.http_mean <= max(a, b) and a != b:
            share = (target.http_mean - a) / (b - a)
            lo, hi = _median(spdy[low]), _median(spdy[high])
            return Fit(target, low + share * (high - low), target.http_mean, lo + share * (hi - lo))
    return None

#: Appendix C (scenario 2, the virtual lab): 20 cold loads each, lines 285-328.
APPENDIX_C = Trials(
    (8.708029, 10.923309, 8.599731, 8.558562, 8.462417, 9.795501, 9.919201, 8.773668, 8.523815, 9.443609,
     8.785404, 8.553245, 8.435742, 7.965119, 7.873165, 8.027133, 8.314962, 8.712659, 11.35193, 8.618497),
    (5.183361, 6.119488, 5.48345, 4.917874, 4.515869, 5.692672, 5.171035, 4.870176, 4.669991, 5.005456,
     6.202168, 5.141831, 4.501827, 4.73222, 4.698316, 4.587777, 4.564547, 7.192253, 4.800492, 4.534262),
    (7, 6, 7, 7, 7, 5, 7, 7, 7, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7),
    (2,) * 20)
#: Appendix D (scenario 3, real sites from Chrome (SPDY) and IE 10 (HTTP)): 10 loads each
#: with the cache cleared (lines 337-354) ...
APPENDIX_D_COLD = Trials(
    (9.624393, 5.075998, 5.289511, 5.313426, 5.756009, 5.30933, 4.980125, 4.482583, 5.48583, 5.07536),
    (2.834118, 3.135537, 2.826154, 2.667771, 0.961368, 2.865283, 2.815795, 2.997078, 3.346629, 0.896259),
    (64, 38, 40, 40, 40, 40, 38, 38, 38, 37),
    (44, 44, 42, 46, 45, 45, 42, 48, 46, 43))
#: ... and 10 with it kept (lines 338-355).
APPENDIX_D_WARM = Trials(
    (1.751177, 1.697038, 1.76351, 1.834875, 1.849248, 1.382889, 3.960572, 1.51279, 0.994619, 1.110107),
    (2.420956, 2.700922, 2.691155, 2.370933, 2.522045, 2.536273, 2.366712, 2.450488, 2.439385, 2.442189),
    (18, 16, 14, 16, 16, 18, 16, 14, 15, 13),
    (34, 31, 34, 31, 33, 35, 29, 29, 28, 31))


def appendix_cut(base: Sequence[float], new: Sequence[float]) -> Interval:
    """1 - mean(new) / mean(base) of an appendix's trials ("on average", as the report
    reads them) with its 95 % percentile-bootstrap interval (each side resampled on its
    own, seeded): the paper's own figure and its own spread, the range a claim's measured
    interval must lie in."""
    rng = np.random.default_rng(SEED)
    a, b = np.asarray(base, dtype=float), np.asarray(new, dtype=float)
    cuts = 1 - rng.choice(b, (RESAMPLES, b.size)).mean(axis=1) / rng.choice(a, (RESAMPLES, a.size)).mean(axis=1)
    low, high = np.percentile(cuts, [2.5, 97.5])
    return Interval(float(1 - b.mean() / a.mean()), float(low), float(high))


def seconds(data: Data, variant: str, mode: Mode, site: str, profile: str) -> Interval | None:
    """The median cold load time (s) of `mode` on `site` over `profile`, with its interval."""
    found = values(data.select(variant, site=site, mode=mode, profile=profile, cache="cold"))
    return bootstrap_ci(lambda m: m / 1000, [found]) if found else None


def load_cut(data: Data, variant: str, site: str, cache: str, profile: str) -> Interval | None:
    """h2's cut of HTTP/1.1's median load time on `site` over `profile`, cold or warm."""
    where = {"site": site, "profile": profile, "cache": cache}
    return cut(data, variant, where | {"mode": KEEPALIVE}, where | {"mode": H2})


def connections_cut(data: Data, variant: str, site: str, cache: str, profile: str) -> Interval | None:
    """1 - median TCP connections (h2) / (HTTP/1.1), as the router counted them: negative
    when h2 opens more."""
    where = {"site": site, "profile": profile, "cache": cache}
    h1 = values(data.select(variant, mode=KEEPALIVE, **where), "connections_link")
    h2 = values(data.select(variant, mode=H2, **where), "connections_link")
    if not h1 or not h2:
        return None
    return bootstrap_ci(lambda a, b: 1 - b / a if a else np.nan, [h1, h2])


def _times_figure(data: Data | None, site: str) -> list[Figure]:
    """Like Appendix B's averages: the report's mean cold load beside ours, per protocol."""
    if data is None:
        return []
    groups = []
    for name, mode, paper in (("HTTP/1.1", KEEPALIVE, APPENDIX_B.http_mean), ("SPDY / h2", H2, APPENDIX_B.spdy_mean)):
        found = [seconds(data, variant, mode, site, EC2_2013) for variant in (ERA, TODAY)]
        groups.append(charts.BarGroup(name, (paper, *(f.estimate if f else None for f in found))))
    if all(value is None for group in groups for value in group.values[1:]):
        return []
    names = ("Appendix B (mean of 20)", "era (TLS 1.2)", "today (TLS 1.3)")
    colours = ["#000000", "#56b4e9", "#0072b2"]
    svg = charts.grouped_bars(groups, names, colours, "cold load time (s)")
    swatches = legend((f'<span class="chip" style="background:{c}"></span>', escape(s)) for s, c in zip(names, colours))
    return [Figure("times-002", svg, "Like seed 002's Appendix B: the report's mean cold load time on its EC2 "
                   "server beside ours on the fitted link (medians), HTTP/1.1 and h2.", swatches)]


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _times_figure(data.get("002-page"), PAGE002_SITE)
