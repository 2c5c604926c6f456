"""The seeds' claims, as data: what each paper says, the scenario that measures it, how
the measured value comes from the stored loads, and the rule that gives the verdict.

In the spirit of the QUIC Interop Runner's test-case table: a claim is a record, its
measurement a small function of the loads of its scenario's runs (`Data`), its verdict
a range. `analysis.reproduce` evaluates the table; `pagebench reproduce` runs the
scenarios (ordinary runs, stored like any run) and prints one row per claim and variant.

Every scenario runs in two variants where the physics changed since the paper:

* **era**: the paper's own conditions as far as they can be had: cleartext HTTP (the
  seeds' 1994 and 1999 paid no TLS handshake; seed 002's 2013 testbed ran TLS 1.2) and
  the endpoints' TCP of the time (link/profiles.yaml's `-tcp` family: no window scaling,
  SACK or timestamps, Reno, a small initial window; seed 004: a 32767-byte window);
* **today**: TLS 1.3 on every connection and Linux's TCP as it ships.

A claim that does not reproduce is a finding: the row says which variant, and why.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pagebench.analysis.stats import Interval, bootstrap_ci

Spec = dict[str, Any]
Loads = list[dict[str, Any]]

ERA, TODAY = "era", "today"
VARIANTS = (ERA, TODAY)
SEEDS = ("000", "001", "002", "004")
#: What each variant is, per seed (shown in the output and the docs).
VARIANT_NOTES = {
    ("000", ERA): "cleartext, 1994 TCP (Reno, initial window 1 remote, no SACK/timestamps/window scaling)",
    ("000", TODAY): "TLS 1.3, Linux TCP (cubic, initial window 10, SACK, timestamps, window scaling)",
    ("002", ERA): "TLS 1.2 as in 2013, Linux TCP",
    ("002", TODAY): "TLS 1.3, Linux TCP",
    ("001", ERA): "cleartext, 1994 TCP (Reno, initial window 1 on the modem, no SACK/timestamps/window scaling)",
    ("001", TODAY): "TLS 1.3, Linux TCP; deltas by Compression Dictionary Transport (RFC 9842, dcz)",
    ("004", ERA): "cleartext, 1999 TCP (32767-byte window, Reno, no SACK/timestamps/window scaling)",
    ("004", TODAY): "TLS 1.3, Linux TCP (autotuned windows)",
}

# Scenarios -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """What runs for some claims: `runs(variant, quick)` gives the specs, each with a label
    (several runs when a parameter is not a spec matrix axis, e.g. the proxy pool's size)."""

    name: str
    seed: str
    what: str
    runs: Callable[[str, bool], list[tuple[str, Spec]]]
    variants: tuple[str, ...] = VARIANTS


def _profile(name: str, era: str, today: str, variant: str, **extra: Any) -> dict[str, Any]:
    """A profile named the same in both variants (claims select by name), based on the
    era's or today's built-in."""
    return {"name": name, "base": era if variant == ERA else today, **extra}


def _base(name: str, variant: str, quick: bool, *, tls_era: str = "none", **fields: Any) -> Spec:
    spec: Spec = {
        "name": f"reproduce-{name}-{variant}", "cache": ["cold"],
        "tls": [tls_era if variant == ERA else "1.3"],
        "repetitions": 2 if quick else 5, "warmup": 0 if quick else 1, "seed": 1994,
        "timeouts": {"load_s": 120, "link_check": not quick},
    }
    return spec | fields


#: Transfer lengths of seed 000 section 3.2 (its figures run 1 KB .. 1 MB).
TRANSFER_BYTES = (2_048, 20_480, 102_400, 512_000)
TRANSFER_BYTES_QUICK = (2_048, 20_480, 512_000)
#: Images per page of seed 000 section 6 (its figures 6-1 .. 6-4); the large images stop
#: at 20 (40 x 45566 B is 10 s per load on the T1, and the claims are read at 20).
IMAGE_COUNTS = (1, 5, 10, 20, 40)
LARGE_IMAGE_COUNTS = (1, 5, 10, 20)
IMAGE_COUNTS_QUICK = (20,)
CLAIM_IMAGES = 20  # the N at which the section 6 claims are read
SMALL, LARGE = 2544, 45566
#: Pool sizes of seed 004 (its figure 5: connections between the proxies).
POOL_SIZES = (1, 2, 4, 8, 16, 32)
POOL_SIZES_QUICK = (2, 32)
POOL_CLIENTS = 4
#: Seed 002's sweep: where does h2's gain over HTTP/1.1 fall?
SWEEP_RTT_MS = (20, 40, 100, 200)
SWEEP_RTT_MS_QUICK = (200,)
SWEEP_MBIT = (12, 50)
SWEEP_MBIT_QUICK = (12,)
SWEEP_SITES = ("seed002", "seed000-small-n40")


def _transfer_site(nbytes: int) -> dict[str, Any]:
    return {"generate": {"images": 1, "image_bytes": nbytes}}


def _transfer(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    sizes = TRANSFER_BYTES_QUICK if quick else TRANSFER_BYTES
    profiles = [_profile("remote", "t1-1994-tcp", "t1-1994", variant),
                _profile("local", "lan-1994-tcp", "lan-1994", variant)]
    if not quick:
        profiles.append(_profile("remote-mss536", "t1-1994-mss536-tcp", "t1-1994-mss536", variant))
    return [("", _base("000-transfer", variant, quick, sites=[_transfer_site(n) for n in sizes],
                       modes=["http1.0"], profiles=profiles))]


def _first_image(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    return [("", _base("000-first-image", variant, quick, sites=[_transfer_site(TRANSFER_BYTES[0])],
                       modes=["http1.0", "keepalive"],
                       profiles=[_profile("remote", "t1-1994-tcp", "t1-1994", variant)]))]


def _latency(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    small, large = (IMAGE_COUNTS_QUICK, IMAGE_COUNTS_QUICK) if quick else (IMAGE_COUNTS, LARGE_IMAGE_COUNTS)
    sites = [f"seed000-small-n{n}" for n in small] + [f"seed000-large-n{n}" for n in large]
    return [("", _base("000-latency", variant, quick, repetitions=2 if quick else 3, sites=sites,
                       modes=["http1.0", "keepalive", "pipelining", "h2"], topology="proxy",
                       proxy={"connections": 1, "depth": 40},
                       profiles=[_profile("remote", "t1-1994-tcp", "t1-1994", variant)]))]


def _local(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    counts = IMAGE_COUNTS_QUICK if quick else IMAGE_COUNTS
    return [("", _base("000-local", variant, quick, sites=[f"seed000-small-n{n}" for n in counts],
                       modes=["http1.0", "keepalive", "pipelining", "h2"], topology="proxy",
                       proxy={"connections": 1, "depth": 40},
                       profiles=[_profile("local", "lan-1994-tcp", "lan-1994", variant)]))]


SEED002_PROFILE = {"name": "lab-2013", "rtt_ms": 40, "down_mbit": 12, "up_mbit": 12,
                   "source": "the SPDY report's testbed as pagebench reads it: 40 ms, 12 Mbit/s"}


def _page002(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    return [("", _base("002-page", variant, quick, tls_era="1.2", sites=["seed002"], modes=["keepalive", "h2"],
                       profiles=[SEED002_PROFILE], cache=["cold", "warm"]))]


def _sweep002(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    rtts, rates = (SWEEP_RTT_MS_QUICK, SWEEP_MBIT_QUICK) if quick else (SWEEP_RTT_MS, SWEEP_MBIT)
    profile = {"name": "sweep", "rtt_ms": list(rtts), "down_mbit": list(rates), "up_mbit": list(rates)}
    spec = _base("002-sweep", variant, quick, sites=list(SWEEP_SITES), modes=["keepalive", "h2"],
                 profiles=[profile])
    spec["repetitions"] = 2 if quick else 3
    return [("", spec)]


def _us_nz(variant: str) -> dict[str, Any]:
    if variant == ERA:
        return {"name": "us-nz", "base": "us-nz-1999", "rwnd_bytes": 32767, "congctl": "reno", "initcwnd": 2,
                "window_scaling": False, "sack": False, "timestamps": False}
    return {"name": "us-nz", "base": "us-nz-1999"}


def _window004(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    return [("", _base("004-window", variant, quick, sites=[_transfer_site(WINDOW_BYTES)], modes=["http1.0"],
                       profiles=[_us_nz(variant)]))]


WINDOW_BYTES = 2_000_000


def _pool004(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    runs = []
    for size in POOL_SIZES_QUICK if quick else POOL_SIZES:
        spec = _base(f"004-pool-c{size}", variant, quick, sites=["seed000-small-n20"],
                     modes=["http1.0", "keepalive"], topology="proxy", clients=POOL_CLIENTS,
                     proxy={"connections": size, "depth": 1, "pool": "warm"}, profiles=[_us_nz(variant)])
        spec["warmup"] = 1  # opens the warm pool
        if quick:
            spec["repetitions"] = 1  # four clients: four loads per condition even so
        runs.append((f"C={size}", spec))
    return runs


#: Seed 001's files A-D (its table 6-3) and the edits its deltas are read at (section 5.6:
#: "small" changes; the built-ins' versions 2 and 3 edit 0.1 % and 1 % of the bytes).
FILES001 = ("a", "b", "c", "d")
SMALL_EDIT_VERSIONS = (2, 3)
TCP_1994 = {"congctl": "reno", "window_scaling": False, "sack": False, "timestamps": False}


def _files001(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Each file as a page of its own, as stored and gzipped, on the modem and the LAN:
    one request, so a load is the file's transfer (the seed timed FTP transfers)."""
    modem = {"name": "modem", "base": "modem-28k8", **(TCP_1994 | {"initcwnd": 1} if variant == ERA else {})}
    spec = _base("001-files", variant, quick, sites=[f"seed001-{f}" for f in FILES001], modes=["http1.0"],
                 encoding=["identity", "gzip"],
                 profiles=[modem, _profile("local", "lan-1994-tcp", "lan-1994", variant)])
    # file C as stored is 104 s on the modem: few repetitions, no warm-up, a long timeout
    spec |= {"repetitions": 1 if quick else 3, "warmup": 0, "timeouts": {"load_s": 300, "link_check": not quick}}
    return [("", spec)]


def _delta001(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Version 1 in the cache, then the page after a 0.1 % and a 1 % edit (and 10 %), as
    stored and as a dictionary delta (bytes do not depend on the link)."""
    versions = list(SMALL_EDIT_VERSIONS) + ([] if quick else [4])
    return [("", _base("001-delta", variant, quick, sites=[f"seed001-{f}" for f in FILES001], modes=["h2"],
                       encoding=["identity", "dcz"], version=versions, cache=["warm"], profiles=["lte"],
                       repetitions=1 if quick else 2, warmup=0))]


SCENARIOS = (
    Scenario("000-transfer", "000", "one object per page over a new connection: throughput against length "
             "(seed 000 section 3.2)", _transfer),
    Scenario("000-first-image", "000", "one 2 KB image, HTTP/1.0 and persistent: round trips to its first "
             "byte (figures 3-1 and 4-1)", _first_image),
    Scenario("000-latency", "000", "the seed-000 page with N images of 2544 or 45566 bytes over the T1, "
             "one upstream connection (section 6, figures 6-1 and 6-2)", _latency),
    Scenario("000-local", "000", "the small-image pages on the 1994 LAN (section 6, figure 6-4)", _local),
    Scenario("001-files", "001", "the seed's files A-D, as stored and gzipped, over a 28.8 kbit/s modem and "
             "the LAN (section 6.1, table 6-3)", _files001),
    Scenario("001-delta", "001", "files A-D after 0.1 %, 1 % and 10 % edits, whole or as a dictionary delta "
             "(dcz) against the version in the cache (section 5.6)", _delta001, (TODAY,)),
    Scenario("002-page", "002", "the SPDY report's photo page, HTTP/1.1 over TLS against h2, cold and warm",
             _page002),
    Scenario("002-sweep", "002", "h2 against HTTP/1.1 over RTT x bandwidth, photo page beside a page of "
             "40 small images", _sweep002, (TODAY,)),
    Scenario("004-window", "004", "one bulk connection over the US/NZ link", _window004),
    Scenario("004-pool", "004", "four clients through the edge proxy over the US/NZ link: a connection per "
             "request against a warm pool of C persistent connections", _pool004),
)
SCENARIO_BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}

# What a measurement reads --------------------------------------------------------------


@dataclass
class Data:
    """The measured loads of one scenario's runs: (variant, run label) -> loads (ok and
    unflagged, warm-ups excluded), each with its `resources` when the claim needs them,
    and every profile's fields by name."""

    loads: dict[tuple[str, str], Loads]
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)

    def select(self, variant: str, label: str = "", **where: Any) -> Loads:
        return [load for load in self.loads.get((variant, label), [])
                if all(load.get(key) == value for key, value in where.items())]

    def labels(self, variant: str) -> list[str]:
        return [label for v, label in self.loads if v == variant]


def _values(loads: Loads, metric: str = "load_ms") -> list[float]:
    return [float(load[metric]) for load in loads if load.get(metric) is not None]


def cut(data: Data, variant: str, base: dict[str, Any], new: dict[str, Any], label: str = "") -> Interval | None:
    """1 - median(new) / median(base) of the load time: how much `new` cuts."""
    low, high = _values(data.select(variant, label, **base)), _values(data.select(variant, label, **new))
    if not low or not high:
        return None
    return bootstrap_ci(lambda b, n: 1 - n / b, [low, high])


def share_of_gain(data: Data, variant: str, site: str) -> Interval | None:
    """(keepalive - pipelining) / (http1.0 - pipelining): how much of the whole gain over
    HTTP/1.0 pipelining adds on top of persistent connections."""
    groups = [_values(data.select(variant, site=site, mode=mode)) for mode in ("http1.0", "keepalive", "pipelining")]
    if not all(groups):
        return None
    return bootstrap_ci(lambda serial, persistent, piped: (persistent - piped) / (serial - piped)
                        if serial != piped else math.nan, groups)


def _rtt_ms(data: Data, profile: str) -> float:
    return float(data.profiles[profile]["rtt_ms"])


def _object(load: dict[str, Any], nbytes: int) -> dict[str, Any] | None:
    return next((r for r in load.get("resources", []) if r["body_bytes"] == nbytes and r["position"] > 0), None)


def _rate_mbit(resource: dict[str, Any]) -> float | None:
    """A resource's goodput over its whole fetch (connection set-up included, as the seeds'
    client measured it): body bits over the time from its start to its end."""
    if resource.get("end_ms") is None or resource["end_ms"] <= resource["start_ms"]:
        return None
    return resource["body_bytes"] * 8 / (resource["end_ms"] - resource["start_ms"]) / 1000


def _rates(data: Data, variant: str, profile: str, nbytes: int) -> list[float]:
    rates = []
    for load in data.select(variant, mode="http1.0", profile=profile, site=_transfer_name(nbytes)):
        resource = _object(load, nbytes)
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
    longest = max((transfer_bytes(load["site"]) for load in data.select(variant)), default=0)
    rates, best = _rates(data, variant, profile, nbytes), _rates(data, variant, profile, longest)
    if not rates or not best or longest <= nbytes:
        return None
    return bootstrap_ci(lambda r, b: r / b, [rates, best])


def _transfer_name(nbytes: int) -> str:
    return f"gen-i1-b{nbytes}-o1"


def transfer_bytes(site: str) -> int:
    """The object size of a transfer scenario's site (`gen-i1-b2048-o1`), else 0."""
    return int(site.split("-b", 1)[1].split("-", 1)[0]) if site.startswith("gen-i1-b") else 0


def first_image_rtts(data: Data, variant: str, mode: str, *, on_open_connection: bool) -> Interval | None:
    """Round trips from the request to the image's first byte (seed 000 figure 3-1: 4 for
    HTTP/1.0); `on_open_connection`: counted from the HTML's request on an open connection
    (figure 4-1: 2), i.e. without the round trips that opened it."""
    rtt = _rtt_ms(data, "remote")
    values = []
    for load in data.select(variant, mode=mode, profile="remote", site=_transfer_name(TRANSFER_BYTES[0])):
        resources = load.get("resources", [])
        html, image = (resources[0], _object(load, TRANSFER_BYTES[0])) if resources else (None, None)
        if not html or not image or image.get("response_start_ms") is None or html.get("response_start_ms") is None:
            continue
        trips = image["response_start_ms"] / rtt
        if on_open_connection:  # the HTML's request left one round trip before its first byte
            trips -= html["response_start_ms"] / rtt - 1
        values.append(trips)
    return bootstrap_ci(lambda v: v, [values]) if values else None


def connections_cut(data: Data, variant: str) -> Interval | None:
    """1 - median TCP connections (h2) / (keep-alive), as the router counted them, cold."""
    h1 = _values(data.select(variant, mode="keepalive", cache="cold"), "connections_link")
    h2 = _values(data.select(variant, mode="h2", cache="cold"), "connections_link")
    if not h1 or not h2:
        return None
    return bootstrap_ci(lambda a, b: 1 - b / a, [h1, h2])


def sweep_cells(data: Data, variant: str) -> list[tuple[str, str, Interval]]:
    """(site, profile, h2's cut over keep-alive) for every cell of the seed-002 sweep."""
    cells = []
    for site in SWEEP_SITES:
        for profile in sorted(data.profiles, key=lambda p: (data.profiles[p]["rtt_ms"],
                                                            data.profiles[p].get("down_mbit") or 0)):
            found = cut(data, variant, {"site": site, "profile": profile, "mode": "keepalive"},
                        {"site": site, "profile": profile, "mode": "h2"})
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
    serial = _values(data.select(variant, largest, mode="http1.0"))
    pooled = _values(data.select(variant, largest, mode="keepalive"))
    if not serial or not pooled:
        return None
    return bootstrap_ci(lambda s, p: 1 - p / s, [serial, pooled])


def pool_knee(data: Data, variant: str) -> Interval | None:
    """How much slower the warm pool's loads are at the smallest C than at the largest:
    seed 004's latency rising as the pool becomes the bottleneck."""
    labels = sorted(data.labels(variant), key=_pool_size)
    if len(labels) < 2:
        return None
    small = _values(data.select(variant, labels[0], mode="keepalive"))
    large = _values(data.select(variant, labels[-1], mode="keepalive"))
    if not small or not large:
        return None
    return bootstrap_ci(lambda s, lg: s / lg - 1, [small, large])


def _pool_size(label: str) -> int:
    return int(label.removeprefix("C=")) if label.startswith("C=") else 0


def _encoded(load: dict[str, Any]) -> int:
    """The page's body bytes as sent (a single-file page: its one response)."""
    return sum(int(r["encoded_bytes"] if r.get("encoded_bytes") is not None else r["transfer_bytes"])
               for r in load.get("resources", []) if not r["from_cache"])


def _page_bytes(data: Data, variant: str, **where: Any) -> dict[str, int]:
    return {load["site"]: _encoded(load) for load in data.select(variant, **where)}


def gzip_html_saving(data: Data, variant: str) -> Interval | None:
    """1 - gzip bytes / bytes as stored, over the four pages together (table 5-6 counts
    bytes, not pages); the modem's loads (the LAN's carry the same bytes)."""
    stored = _page_bytes(data, variant, profile="modem", encoding="identity")
    gzipped = _page_bytes(data, variant, profile="modem", encoding="gzip")
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
        stored = _page_bytes(data, variant, encoding="identity", version=version)
        for load in data.select(variant, encoding="dcz", version=version):
            if stored.get(load["site"]):
                savings.append(1 - _encoded(load) / stored[load["site"]])
    if not savings:
        return None
    middle = statistics.median(savings)
    return Interval(middle, middle, middle)  # bytes are exact: the median of these files, no spread


def modem_ratio(data: Data, variant: str) -> Interval | None:
    """gzip's load time over the file's as stored on the modem, files C and D (the mean of
    the two ratios)."""
    groups = []
    for f in ("c", "d"):
        for encoding in ("identity", "gzip"):
            groups.append(_values(data.select(variant, site=f"seed001-{f}", profile="modem", encoding=encoding)))
    if not all(groups):
        return None
    return bootstrap_ci(lambda c0, c1, d0, d1: (c1 / c0 + d1 / d0) / 2, groups)


def lan_tiny_cut(data: Data, variant: str) -> Interval | None:
    """gzip's cut of file B's (6 KB) load time on the LAN."""
    return cut(data, variant, {"site": "seed001-b", "profile": "local", "encoding": "identity"},
               {"site": "seed001-b", "profile": "local", "encoding": "gzip"})


def rate_window(data: Data, variant: str) -> Interval | None:
    """One bulk connection's goodput (Mbit/s) over the US/NZ link."""
    return throughput(data, variant, "us-nz", WINDOW_BYTES, of_capacity=False)


# Claims ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A verdict range: reproduced when the whole 95 % interval lies in [low, high],
    differs when none of it does, can't tell otherwise. `reading` says how the paper's
    words became the range."""

    low: float = -math.inf
    high: float = math.inf
    reading: str = ""

    def verdict(self, measured: Interval) -> str:
        if self.low <= measured.low and measured.high <= self.high:
            return "reproduced"
        if measured.high < self.low or measured.low > self.high:
            return "differs"
        return "can't tell"


@dataclass(frozen=True)
class Claim:
    """One claim of a seed: where, in the paper's words, its value, and how it is measured."""

    key: str
    seed: str
    section: str
    claim: str  # a few words
    words: str  # the paper's
    paper: str  # its value as shown
    scenario: str
    measure: Callable[[Data, str], Interval | None]
    rule: Rule
    unit: str  # "%": a fraction shown in per cent; "RTT", "Mbit/s", "x"
    why: str = ""  # the physics that moves it between era and today (the reason line)


CLAIMS: tuple[Claim, ...] = (
    Claim("000-3.2-remote-2k", "000", "§3.2, Fig. 3-2", "2 KB on a new connection, remote",
          "using a TCP connection to transfer only 2 Kbytes results in a throughput less than 10% of "
          "best-case value", "< 10 % of the best case", "000-transfer",
          lambda d, v: of_best(d, v, "remote", 2_048), Rule(high=0.10, reading="< 10 %"), "%",
          "set-up round trips (TCP, plus TLS today) dominate a 2 KB transfer"),
    Claim("000-3.2-remote-20k", "000", "§3.2, Fig. 3-2", "20 KB on a new connection, remote",
          "Even a 20 Kbyte transfer achieves only about 50% of the throughput available with a reasonable "
          "window size", "about 50 % of the best case",
          "000-transfer", lambda d, v: of_best(d, v, "remote", 20_480),
          Rule(0.40, 0.60, "about 50 %: 40-60 %"), "%",
          "slow start from 1 segment (era) against 10 (today), and TLS's extra round trip"),
    Claim("000-3.2-local-2k", "000", "§3.2, Fig. 3-3", "2 KB on a new connection, LAN",
          "per-connection overhead limits throughput to about 25% of capacity for transfers of 2 Kbytes",
          "about 25 %", "000-transfer", lambda d, v: throughput(d, v, "local", 2_048, of_capacity=True),
          Rule(0.15, 0.35, "about 25 %: 15-35 %"), "%",
          "on a sub-millisecond link the hosts' per-connection costs are the overhead: a 1994 DECstation's "
          "against today's kernel, browser and (today) TLS"),
    Claim("000-3.2-local-20k", "000", "§3.2, Fig. 3-3", "20 KB on a new connection, LAN",
          "about 70% of capacity for transfers of 20 Kbytes", "about 70 %", "000-transfer",
          lambda d, v: throughput(d, v, "local", 20_480, of_capacity=True), Rule(0.60, 0.80, "about 70 %: 60-80 %"),
          "%", "per-connection costs of today's hosts against a 1994 workstation's"),
    Claim("000-3-first-image", "000", "§3, Fig. 3-1", "HTTP/1.0: round trips to the first image",
          "the earliest time at which the client could start displaying the first inlined image would be "
          "four network round-trip times after the user requested the document", "4 RTT", "000-first-image",
          lambda d, v: first_image_rtts(d, v, "http1.0", on_open_connection=False),
          Rule(3.5, 4.6, "4 RTT: 3.5-4.6 (the image's bytes and the host add a little)"), "RTT",
          "TLS adds a round trip to each of the two connections"),
    Claim("000-4-first-image-open", "000", "§4, Fig. 4-1", "persistent: round trips to the first image",
          "the first image arrives after just two round trips, rather than four", "2 RTT", "000-first-image",
          lambda d, v: first_image_rtts(d, v, "keepalive", on_open_connection=True),
          Rule(1.5, 2.6, "2 RTT: 1.5-2.6"), "RTT", "counted on an open connection, TLS changes nothing"),
    Claim("000-6-small-cut", "000", "§6, Fig. 6-1", f"pipelining's cut, {CLAIM_IMAGES} x 2544 B, T1",
          "Our modified HTTP protocol cuts the latency by more than half", "> 50 %", "000-latency",
          lambda d, v: cut(d, v, {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": "http1.0"},
                           {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": "pipelining"}),
          Rule(low=0.50, reading="> 50 %"), "%", "TLS makes every HTTP/1.0 connection a round trip dearer"),
    Claim("000-6-large-cut", "000", "§6, Fig. 6-2", f"pipelining's cut, {CLAIM_IMAGES} x 45566 B, T1",
          "using 45566-byte images and the remote server, the new protocol improves latency by about 22%",
          "about 22 %", "000-latency",
          lambda d, v: cut(d, v, {"site": f"seed000-large-n{CLAIM_IMAGES}", "mode": "http1.0"},
                           {"site": f"seed000-large-n{CLAIM_IMAGES}", "mode": "pipelining"}),
          Rule(0.17, 0.27, "about 22 %: 17-27 %"), "%",
          "each new connection's slow start: from 1 segment in 1994, from 10 today, plus TLS"),
    Claim("000-6-pipelining-share", "000", "§6, Fig. 6-1", "share of the gain due to pipelining",
          "more than half of the improvement comes from pipelining", "> 50 %", "000-latency",
          lambda d, v: share_of_gain(d, v, f"seed000-small-n{CLAIM_IMAGES}"), Rule(low=0.50, reading="> 50 %"), "%",
          "persistent connections save the set-up round trips, pipelining the per-request ones"),
    Claim("000-6-local-keepalive", "000", "§6, Fig. 6-4", f"persistent's cut on the LAN, {CLAIM_IMAGES} images",
          "For the local case, long-lived connections without pipelining reduces latency by only about 5% "
          "to 15%", "5-15 %", "000-local",
          lambda d, v: cut(d, v, {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": "http1.0"},
                           {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": "keepalive"}),
          Rule(0.05, 0.15, "5-15 %"), "%",
          "on the LAN a connection's cost is the hosts' work per connection (and TLS's today), not round trips"),
    Claim("001-5-gzip-html", "001", "§5.7, Table 5-6", "gzip's saving on HTML bytes",
          "text/html ... Bytes saved 68.8% (gzip compression, all status-200 responses in the packet-level trace)",
          "68.8 %", "001-files", gzip_html_saving, Rule(0.64, 0.74, "about 69 %: 64-74 %"), "%",
          "the paper's trace mixed every HTML page its users fetched; files A-D are its modem experiment's, and "
          "two of them (C, D) are big tables that gzip cuts tenfold, as its table 6-3 shows"),
    Claim("001-6-delta", "001", "§5.6", "a delta's saving on small edits (median)",
          "For half of the delta-eligible responses, vdelta saved at least 98.5% of the response-body bytes",
          ">= 98.5 %", "001-delta", delta_saving, Rule(low=0.985, reading="at least 98.5 %"), "%",
          "a dictionary delta (dcz) of a 0.1-1 % edit carries the edits and a 40-byte header"),
    Claim("001-7-modem", "001", "§6.1, Table 6-3", "gzip's time over stored, files C and D, modem",
          "the overall transfer time for a given file is shorter with high-level compression than with modem "
          "compression (C: 66.4 s as HTML, 25.1 s gzipped; D: 17.7 s, 6.9 s)", "about a third (0.38)",
          "001-files", modem_ratio, Rule(0.30, 0.45, "C 0.38, D 0.39: 0.30-0.45"), "x",
          "the paper's modem compressed the stored file itself (V.42bis: file C at 55.3 kbit/s over a 28.8 "
          "link); pagebench's link does not, so the stored file takes its full size's time"),
    Claim("001-7-lan", "001", "§6.1, Table 6-3", "gzip's cut for a tiny file (B, 6 KB) on the LAN",
          "file B over the 10 Mbit/s LAN: 0.10 s as HTML, 0.10 s gzipped", "no gain", "001-files", lan_tiny_cut,
          Rule(-0.05, 0.05, "no gain: within 5 %"), "%",
          "6 KB is a few segments in one round trip either way: set-up, not bytes, is the time"),
    Claim("002-load", "002", "§5, Figs. 4 and 8", "h2's cut of the cold load time",
          "a decrease of 21% download time ... SPDY's downloading time in our test was 42% better than HTTP",
          "21-42 %", "002-page",
          lambda d, v: cut(d, v, {"mode": "keepalive", "cache": "cold"}, {"mode": "h2", "cache": "cold"}),
          Rule(0.21, 0.42, "21-42 %"), "%",
          "a page of six big photos is bandwidth-bound: one connection or seven carry the same bytes"),
    Claim("002-connections", "002", "§5, Fig. 5", "h2's cut of TCP connections",
          "On average, the number of TCP connections dropped by 57% when compared to those in HTTP", "57 %",
          "002-page", connections_cut, Rule(0.50, 0.64, "57 %: 50-64 %"), "%",
          "Chromium keeps 6 HTTP/1.1 connections per host, and h2 coalesces nothing across the two addresses"),
    Claim("002-warm", "002", "§5, Fig. 9", "h2's cut of the warm load time",
          "SPDY fails to deliver in term of reducing download time when caching is enabled", "no gain",
          "002-page", lambda d, v: cut(d, v, {"mode": "keepalive", "cache": "warm"}, {"mode": "h2", "cache": "warm"}),
          Rule(high=0.10, reading="no gain: under 10 %"), "%",
          "a warm load is one revalidation: one connection either way"),
    Claim("002-sweep", "002", "§5 (where)", "cells of the sweep with a 21-42 % gain",
          "SPDY ... decrease of 21% ... 42% better (on the report's own links)", "some", "002-sweep", sweep_inside,
          Rule(low=0.01, reading="at least one cell"), "%",
          "h2's gain needs many small objects and a long RTT; a bandwidth-bound page gains little"),
    Claim("004-window", "004", "§2, Fig. 4", "one connection's rate, 32767 B window, 120 ms",
          "the maximum bit rate for a single TCP connection over this link is ... approximately 2.2Mbps",
          "2.2 Mbit/s", "004-window", rate_window, Rule(1.96, 2.4, "2.2 Mbit/s: within 10 % of 2.18"), "Mbit/s",
          "today's windows scale (RFC 7323) far past 32767 bytes, so the link, not the window, limits"),
    Claim("004-pool", "004", "§4, Fig. 5(b)", "warm pool's cut against a connection per request",
          "The result for the US-proxy case, with a large number of connections, is around 17% lower",
          "about 17 %", "004-pool", pool_cut, Rule(0.12, 0.22, "about 17 %: 12-22 %"), "%",
          "the pool saves each request's set-up and slow start: TLS and small windows make that worth more"),
    Claim("004-pool-size", "004", "§4, Fig. 5(b)", "smallest pool's slowdown against the largest",
          "For smaller numbers of connections the latency rises rapidly", "rises", "004-pool", pool_knee,
          Rule(low=0.05, reading="rises: > 5 % slower"), "%",
          "four clients' 84 requests queue on C connections"),
)
CLAIM_BY_KEY = {claim.key: claim for claim in CLAIMS}


def claims_of(seeds: Sequence[str]) -> list[Claim]:
    return [claim for claim in CLAIMS if claim.seed in seeds]


def scenarios_of(seeds: Sequence[str]) -> list[Scenario]:
    wanted = {claim.scenario for claim in claims_of(seeds)}
    return [scenario for scenario in SCENARIOS if scenario.name in wanted]


def unknown_seed(seeds: Sequence[str]) -> str | None:
    """The one-line error for a seed that is not in the catalogue, or None."""
    for seed in seeds:
        if seed not in SEEDS:
            extra = " (003 is the same paper as 000: use 000)" if seed == "003" else ""
            return f"unknown seed {seed!r}{extra}; known: {', '.join(SEEDS)}"
    return None
