"""What the claims measure: small functions of the loads of a scenario's runs (`Data`),
each giving an interval (a median's, or a ratio's, with its 95 % bootstrap interval), or
None when there is nothing to measure.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

from pagebench.analysis.reproduce.scenarios import SMALL_EDIT_VERSIONS, SWEEP_SITES, TRANSFER_BYTES, WINDOW_BYTES
from pagebench.analysis.stats import Interval, bootstrap_ci
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, PIPELINING, Mode
from pagebench.core.records import Resource
from pagebench.results.rows import LoadRow, ResourceRow


@dataclass
class Data:
    """The measured loads of one scenario's runs: (variant, run label) -> loads (ok and
    unflagged, warm-ups excluded, in load order); their resources by load id when the
    claims need them; and every profile's fields by name."""

    loads: dict[tuple[str, str], list[LoadRow]]
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    resources: dict[int, list[ResourceRow]] = field(default_factory=dict)

    def select(self, variant: str, label: str = "", **where: Any) -> list[LoadRow]:
        """The loads of a run whose condition has every field `where` names (site, mode, ...)."""
        return [load for load in self.loads.get((variant, label), [])
                if all(getattr(load.condition, key) == value for key, value in where.items())]

    def labels(self, variant: str) -> list[str]:
        return [label for v, label in self.loads if v == variant]

    def resources_of(self, load: LoadRow) -> list[ResourceRow]:
        return self.resources.get(load.id, [])


def _values(loads: list[LoadRow], metric: str = "load_ms") -> list[float]:
    return [float(value) for load in loads if (value := load.metric(metric)) is not None]


def cut(data: Data, variant: str, base: dict[str, Any], new: dict[str, Any], label: str = "") -> Interval | None:
    """1 - median(new) / median(base) of the load time: how much `new` cuts."""
    low, high = _values(data.select(variant, label, **base)), _values(data.select(variant, label, **new))
    if not low or not high:
        return None
    return bootstrap_ci(lambda b, n: 1 - n / b, [low, high])


def share_of_gain(data: Data, variant: str, site: str) -> Interval | None:
    """(keepalive - pipelining) / (http1.0 - pipelining): how much of the whole gain over
    HTTP/1.0 pipelining adds on top of persistent connections."""
    groups = [_values(data.select(variant, site=site, mode=mode)) for mode in (HTTP10, KEEPALIVE, PIPELINING)]
    if not all(groups):
        return None
    return bootstrap_ci(lambda serial, persistent, piped: (persistent - piped) / (serial - piped)
                        if serial != piped else math.nan, groups)


def _rtt_ms(data: Data, profile: str) -> float:
    return float(data.profiles[profile]["rtt_ms"])


def _object(data: Data, load: LoadRow, nbytes: int) -> Resource | None:
    """The page's object of `nbytes` (not the HTML: position 0)."""
    return next((r.resource for r in data.resources_of(load) if r.resource.body_bytes == nbytes and r.position > 0),
                None)


def _rate_mbit(resource: Resource) -> float | None:
    """A resource's goodput over its whole fetch (connection set-up included, as the seeds'
    client measured it): body bits over the time from its start to its end."""
    if resource.end_ms is None or resource.end_ms <= resource.start_ms:
        return None
    return resource.body_bytes * 8 / (resource.end_ms - resource.start_ms) / 1000


def _rates(data: Data, variant: str, profile: str, nbytes: int) -> list[float]:
    rates = []
    for load in data.select(variant, mode=HTTP10, profile=profile, site=_transfer_name(nbytes)):
        resource = _object(data, load, nbytes)
        rate = _rate_mbit(resource) if resource else None
        if rate is not None:
            rates.append(rate)
    return rates


def throughput(data: Data, variant: str, profile: str, nbytes: int, *, of_capacity: bool) -> Interval | None:
    """One new connection's goodput for an `nbytes` object (HTTP/1.0, the page's image),
    in Mbit/s, or as a fraction of the link's rate."""
    rates = _rates(data, variant, profile, nbytes)
    capacity = float(data.profiles.get(profile, {}).get("down_mbit") or 0) if of_capacity else 1.0
    if not rates or not capacity:
        return None
    return bootstrap_ci(lambda r: r / capacity, [rates])


def of_best(data: Data, variant: str, profile: str, nbytes: int) -> Interval | None:
    """A transfer's goodput over the longest transfer's on the same link and TCP: seed
    000's "best-case value", the plateau of its figure 3-2."""
    longest = max((transfer_bytes(load.condition.site) for load in data.select(variant)), default=0)
    rates, best = _rates(data, variant, profile, nbytes), _rates(data, variant, profile, longest)
    if not rates or not best or longest <= nbytes:
        return None
    return bootstrap_ci(lambda r, b: r / b, [rates, best])


def _transfer_name(nbytes: int) -> str:
    return f"gen-i1-b{nbytes}-o1"


def transfer_bytes(site: str) -> int:
    """The object size of a transfer scenario's site (`gen-i1-b2048-o1`), else 0."""
    return int(site.split("-b", 1)[1].split("-", 1)[0]) if site.startswith("gen-i1-b") else 0


def first_image_rtts(data: Data, variant: str, mode: Mode, *, on_open_connection: bool) -> Interval | None:
    """Round trips from the request to the image's first byte (seed 000 figure 3-1: 4 for
    HTTP/1.0); `on_open_connection`: counted from the HTML's request on an open connection
    (figure 4-1: 2), i.e. without the round trips that opened it."""
    rtt = _rtt_ms(data, "remote")
    values = []
    for load in data.select(variant, mode=mode, profile="remote", site=_transfer_name(TRANSFER_BYTES[0])):
        resources = data.resources_of(load)
        html, image = (resources[0].resource, _object(data, load, TRANSFER_BYTES[0])) if resources else (None, None)
        if html is None or image is None or image.response_start_ms is None or html.response_start_ms is None:
            continue
        trips = image.response_start_ms / rtt
        if on_open_connection:  # the HTML's request left one round trip before its first byte
            trips -= html.response_start_ms / rtt - 1
        values.append(trips)
    return bootstrap_ci(lambda v: v, [values]) if values else None


def connections_cut(data: Data, variant: str) -> Interval | None:
    """1 - median TCP connections (h2) / (keep-alive), as the router counted them, cold."""
    h1 = _values(data.select(variant, mode=KEEPALIVE, cache="cold"), "connections_link")
    h2 = _values(data.select(variant, mode=H2, cache="cold"), "connections_link")
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


def pool_cut(data: Data, variant: str) -> Interval | None:
    """1 - load time through a warm pool of the largest C (keep-alive) / with a connection
    per request across the link (HTTP/1.0 through the same proxy): seed 004's US proxy
    against no US proxy."""
    labels = sorted(data.labels(variant), key=_pool_size)
    if not labels:
        return None
    largest = labels[-1]
    serial = _values(data.select(variant, largest, mode=HTTP10))
    pooled = _values(data.select(variant, largest, mode=KEEPALIVE))
    if not serial or not pooled:
        return None
    return bootstrap_ci(lambda s, p: 1 - p / s, [serial, pooled])


def pool_knee(data: Data, variant: str) -> Interval | None:
    """How much slower the warm pool's loads are at the smallest C than at the largest:
    seed 004's latency rising as the pool becomes the bottleneck."""
    labels = sorted(data.labels(variant), key=_pool_size)
    if len(labels) < 2:
        return None
    small = _values(data.select(variant, labels[0], mode=KEEPALIVE))
    large = _values(data.select(variant, labels[-1], mode=KEEPALIVE))
    if not small or not large:
        return None
    return bootstrap_ci(lambda s, lg: s / lg - 1, [small, large])


def _pool_size(label: str) -> int:
    return int(label.removeprefix("C=")) if label.startswith("C=") else 0


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
            groups.append(_values(data.select(variant, site=f"seed001-{f}", profile="modem", encoding=encoding)))
    if not all(groups):
        return None
    return bootstrap_ci(lambda c0, c1, d0, d1: (c1 / c0 + d1 / d0) / 2, groups)


def lan_tiny_cut(data: Data, variant: str) -> Interval | None:
    """gzip's cut of file B's (6 KB) load time on the LAN."""
    return cut(data, variant, {"site": "seed001-b", "profile": "local", "encoding": IDENTITY},
               {"site": "seed001-b", "profile": "local", "encoding": GZIP})


def rate_window(data: Data, variant: str) -> Interval | None:
    """One bulk connection's goodput (Mbit/s) over the US/NZ link."""
    return throughput(data, variant, "us-nz", WINDOW_BYTES, of_capacity=False)

