"""Seed 001 (Mogul et al. 1997, delta encoding and compression): its measures and figures."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure, add, median_point
from pagebench.analysis.reproduce.measures import Data, cut, rate_mbit, values
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.analysis.stats import RESAMPLES, SEED, Interval, bootstrap_ci, median_ci
from pagebench.core import encodings
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.sites import history
from pagebench.results.rows import LoadRow


def _encoded(data: Data, load: LoadRow) -> int:
    """The page's body bytes as sent (a single-file page: its one response)."""
    return sum(r.resource.encoded_bytes if r.resource.encoded_bytes is not None else r.resource.transfer_bytes
               for r in data.resources_of(load) if not r.resource.from_cache)


def _page_bytes(data: Data, variant: str, **where: Any) -> dict[str, int]:
    return {load.condition.site: _encoded(data, load) for load in data.select(variant, **where)}


@dataclass(frozen=True)
class Response:
    """One delta-eligible response of the page history (a pair site's version 2, loaded
    warm after version 1): its body bytes as Chromium received them in each encoding."""

    site: str
    content_type: str
    stored: int
    gzip: int | None
    dcz: int | None


def responses(data: Data, variant: str, content_type: str | None = None) -> list[Response]:
    """The page history's delta-eligible responses (`history`), those of `content_type`
    when named, in site order; a response counts once it has its identity load."""
    stored = _page_bytes(data, variant, encoding=IDENTITY, version=2)
    gzip, dcz = (_page_bytes(data, variant, encoding=e, version=2) for e in (GZIP, DCZ))
    return [Response(site, history.content_type(site), stored[site], gzip.get(site), dcz.get(site))
            for site in sorted(stored) if history.content_type(site) and stored[site] > 0
            and content_type in (None, history.content_type(site))]


def saved_share(sent: list[int], stored: list[int]) -> Interval | None:
    """1 - sum(sent) / sum(stored), the bytes saved over a set of responses (the seed's
    tables count bytes, not responses), with a bootstrap interval that resamples the
    responses (each with its pair of sizes): the pages are a sample of a site's changes."""
    if not sent or len(sent) != len(stored) or not sum(stored):
        return None
    top, bottom = np.array(sent, dtype=float), np.array(stored, dtype=float)
    estimate = 1 - top.sum() / bottom.sum()
    if len(sent) == 1:
        return Interval(estimate, estimate, estimate)
    picks = np.random.default_rng(SEED).integers(0, len(sent), size=(RESAMPLES, len(sent)))
    shares = 1 - top[picks].sum(axis=1) / bottom[picks].sum(axis=1)
    return Interval(float(estimate), float(np.percentile(shares, 2.5)), float(np.percentile(shares, 97.5)))


def delta_bytes_saved(data: Data, variant: str, content_type: str | None = None) -> Interval | None:
    """The bytes a dictionary delta saved over the delta-eligible responses (of
    `content_type`): seed 001's table 5-1 ("vdelta", bytes saved, delta-eligible) and 5-5."""
    found = [r for r in responses(data, variant, content_type) if r.dcz is not None]
    return saved_share([r.dcz for r in found if r.dcz is not None], [r.stored for r in found])


#: Table 5-1: the share of all status-200 body bytes that were delta-eligible in the
#: proxy trace: 751 MB saved was 83.0 % of the eligible bytes (905 MB), of 2462 MB in all.
PAPER_ELIGIBLE_SHARE = 751 / 0.830 / 2462


def delta_of_all(data: Data, variant: str) -> Interval | None:
    """The delta's saving over all status-200 body bytes, for the paper's mix of responses
    (PAPER_ELIGIBLE_SHARE of its bytes delta-eligible): a site's history has no first
    fetches, images or other users, so the mix can only be the paper's."""
    saved = delta_bytes_saved(data, variant)
    if saved is None:
        return None
    return Interval(saved.estimate * PAPER_ELIGIBLE_SHARE, saved.low * PAPER_ELIGIBLE_SHARE,
                    saved.high * PAPER_ELIGIBLE_SHARE)


def delta_saving(data: Data, variant: str) -> Interval | None:
    """The median over delta-eligible responses of the share of each one's bytes its
    delta saved, with its bootstrap interval: seed 001's "for half of the delta-eligible
    responses, vdelta saved at least 98.5 %" is that median."""
    savings = [1 - r.dcz / r.stored for r in responses(data, variant) if r.dcz is not None]
    return median_ci(savings) if savings else None


def gzip_saving(data: Data, variant: str, content_type: str = "text/html") -> Interval | None:
    """gzip's saving on the bytes of the responses of `content_type` (table 5-6 counts bytes
    over every status-200 response of a type): the page history's instances, gzipped as
    received."""
    found = [r for r in responses(data, variant, content_type) if r.gzip is not None]
    return saved_share([r.gzip for r in found if r.gzip is not None], [r.stored for r in found])


def modem_ratio(data: Data, variant: str) -> Interval | None:
    """gzip's load time over the file's as stored on the modem, files C and D (the mean of
    the two ratios)."""
    groups = []
    for f in ("c", "d"):
        for encoding in (IDENTITY, GZIP):
            groups.append(values(data.select(variant, site=f"seed001-{f}", profile="modem", encoding=encoding)))
    if not all(groups):
        return None
    return bootstrap_ci(lambda c0, c1, d0, d1: (c1 / c0 + d1 / d0) / 2, groups)


def modem_rate(data: Data, variant: str) -> Interval | None:
    """File C as stored over the modem: its body's goodput over its fetch (request to last
    byte, as an FTP transfer is timed), kbit/s: what the modem's compression made of the
    28.8 kbit/s line."""
    rates = []
    for load in data.select(variant, site="seed001-c", profile="modem", encoding=IDENTITY):
        page = next((r.resource for r in data.resources_of(load) if r.position == 0), None)
        rate = rate_mbit(page) if page is not None else None
        if rate is not None:
            rates.append(rate * 1000)
    if not rates:
        return None
    return bootstrap_ci(lambda r: r, [rates])


def lan_tiny_cut(data: Data, variant: str) -> Interval | None:
    """gzip's cut of file B's (6 KB) load time on the LAN."""
    return cut(data, variant, {"site": "seed001-b", "profile": "local", "encoding": IDENTITY},
               {"site": "seed001-b", "profile": "local", "encoding": GZIP})


#: Seed 001 table 6-3's files: bytes as stored (the x of its figure here).
FILE_BYTES = {"a": 17545, "b": 6017, "c": 374144, "d": 97125}


#: The encodings of seed 001's table 6-3, drawn in the encodings table's colours.
MODEM_ENCODINGS = (encodings.IDENTITY, encodings.GZIP)


def _modem_figure(data: Data | None) -> list[Figure]:
    """Seed 001 table 6-3 as a figure: each file's load time on the modem, as stored and
    gzipped, against its size."""
    if data is None:
        return []
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    for variant in (ERA, TODAY):
        for encoding in MODEM_ENCODINGS:
            points = [point for f, size in sorted(FILE_BYTES.items(), key=lambda kv: kv[1])
                      for point in [median_point(size / 1000, [l.load_ms / 1000 for l in data.select(
                          variant, site=f"seed001-{f}", profile="modem", encoding=encoding)
                          if l.load_ms is not None])] if point is not None]
            if points:
                add(series, entries, f"{encoding.name} {variant}", encoding.colour, points, variant == ERA)
    if not series:
        return []
    svg = charts.line_plot(series, "file size as stored (KB)", "load time (s)", {})
    return [Figure("fig-001-6-3", svg, "Like the seed's table 6-3: files A-D over the 28.8 kbit/s V.42bis modem, "
                   "as stored and gzipped, medians with 95 % intervals; era dashed. In the era the modem compresses "
                   "the stored files; today's TLS leaves it nothing to compress.", legend(entries))]


def _savings_figure(data: Data | None) -> list[Figure]:
    """Like seed 001's figure 5-5 (the distribution of the share of each delta-eligible
    response's bytes saved), as a cumulative distribution: dcz and gzip on the page
    history, each response a step."""
    found = responses(data, TODAY) if data is not None else []
    series: list[charts.Series] = []
    entries: list[tuple[str, str]] = []
    for encoding in (DCZ, GZIP):
        sent = sorted(1 - size / r.stored for r in found if (size := r.dcz if encoding is DCZ else r.gzip) is not None)
        points = [charts.Point(100 * saved, 100 * (i + 1) / len(sent)) for i, saved in enumerate(sent)]
        if points:
            add(series, entries, f"{encoding.name} ({len(points)} responses)", encoding.colour, points, False)
    if not series:
        return []
    svg = charts.line_plot(series, "bytes saved of the response (%)", "responses saving at most that (%)", {})
    return [Figure("fig-001-5-5", svg, "Like the seed's figure 5-5: the share of each delta-eligible response's "
                   "bytes saved, as a cumulative distribution over the responses: toybox's pages, each instance "
                   "after the one before it, as a dictionary delta (dcz) or gzipped, as Chromium received them.",
                   legend(entries))]


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _modem_figure(data.get("001-files")) + _savings_figure(data.get("001-delta"))
