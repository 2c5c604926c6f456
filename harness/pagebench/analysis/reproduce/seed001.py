"""Seed 001 (Mogul et al. 1997, delta encoding and compression): its measures and figures."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from typing import Any

from pagebench.analysis.report import charts
from pagebench.analysis.report.page import legend
from pagebench.analysis.reproduce.figures import Figure, add, median_point
from pagebench.analysis.reproduce.measures import Data, cut, rate_mbit, values
from pagebench.analysis.reproduce.scenarios import ERA, SMALL_EDIT_VERSIONS, TODAY
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core import encodings
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.results.rows import LoadRow


def _encoded(data: Data, load: LoadRow) -> int:
    """The page's body bytes as sent (a single-file page: its one response)."""
    return sum(r.resource.encoded_bytes if r.resource.encoded_bytes is not None else r.resource.transfer_bytes
               for r in data.resources_of(load) if not r.resource.from_cache)


def _page_bytes(data: Data, variant: str, **where: Any) -> dict[str, int]:
    return {load.condition.site: _encoded(data, load) for load in data.select(variant, **where)}


def gzip_html_saving(data: Data, variant: str) -> Interval | None:
    """1 - gzip bytes / bytes as stored, over the four pages together (table 5-6 counts
    bytes, not pages); the modem's loads (the LAN's carry the same bytes)."""
    stored = _page_bytes(data, variant, profile="modem", encoding=IDENTITY)
    gzipped = _page_bytes(data, variant, profile="modem", encoding=GZIP)
    common = [site for site in stored if site in gzipped]
    if not common:
        return None
    saved = 1 - sum(gzipped[s] for s in common) / sum(stored[s] for s in common)
    return Interval(saved, saved, saved)  # bytes are exact: no spread


def delta_saving(data: Data, variant: str) -> Interval | None:
    """The median saving of a dictionary delta over the page as stored, for the small
    edits (0.1 % and 1 %) of files A-D: seed 001's "half of the delta-eligible responses
    saved at least 98.5 %"."""
    savings = []
    for version in SMALL_EDIT_VERSIONS:
        stored = _page_bytes(data, variant, encoding=IDENTITY, version=version)
        for load in data.select(variant, encoding=DCZ, version=version):
            if stored.get(load.condition.site):
                savings.append(1 - _encoded(data, load) / stored[load.condition.site])
    if not savings:
        return None
    middle = statistics.median(savings)
    return Interval(middle, middle, middle)  # bytes are exact: the median of these files, no spread


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


def figures(data: Mapping[str, Data]) -> list[Figure]:
    return _modem_figure(data.get("001-files"))
