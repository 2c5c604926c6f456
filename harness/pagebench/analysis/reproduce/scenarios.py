"""The seeds' scenarios: what runs to measure their claims (`claims`), as ordinary
experiment specs, stored like any run.

Every scenario runs in two variants where the physics changed since the paper:

* **era**: the paper's own conditions as far as they can be had: cleartext HTTP (the
  seeds' 1994 and 1999 paid no TLS handshake; seed 002's 2013 testbed ran TLS 1.2) and
  the endpoints' TCP of the time (link/profiles.yaml's `-tcp` family: no window scaling,
  SACK or timestamps, Reno, a small initial window; seed 004: a 32767-byte window);
* **today**: TLS 1.3 on every connection and Linux's TCP as it ships.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pagebench.core.encodings import DCZ, GZIP, IDENTITY

Spec = dict[str, Any]

ERA, TODAY = "era", "today"
VARIANTS = (ERA, TODAY)
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


#: The seed's modem (its section 6.1: 28,800 bit/s, V.42bis), the same in both variants:
#: the line compresses what crosses it, so today's TLS leaves it nothing to compress.
MODEM001 = "modem-28k8-v42bis"


def _files001(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Each file as a page of its own, as stored and gzipped, on the V.42bis modem and the
    LAN: one request, so a load is the file's transfer (the seed timed FTP transfers). The
    modem's compressing line is the delay program's: the userspace backend."""
    modem = {"name": "modem", "base": MODEM001, **(TCP_1994 | {"initcwnd": 1} if variant == ERA else {})}
    spec = _base("001-files", variant, quick, sites=[f"seed001-{f}" for f in FILES001], modes=["http1.0"],
                 encoding=[IDENTITY.name, GZIP.name], backend="userspace",
                 profiles=[modem, _profile("local", "lan-1994-tcp", "lan-1994", variant)])
    # File C as stored: about 30 s on the modem in cleartext (V.42bis about 4x), 110 s over
    # TLS (nothing to compress); so 3 repetitions in the era, 2 today: about 4 + 6 minutes.
    spec |= {"repetitions": 1 if quick else (3 if variant == ERA else 2), "warmup": 0,
             "timeouts": {"load_s": 300, "link_check": not quick}}
    return [("", spec)]


def _delta001(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Version 1 in the cache, then the page after a 0.1 % and a 1 % edit (and 10 %), as
    stored and as a dictionary delta (bytes do not depend on the link)."""
    versions = list(SMALL_EDIT_VERSIONS) + ([] if quick else [4])
    return [("", _base("001-delta", variant, quick, sites=[f"seed001-{f}" for f in FILES001], modes=["h2"],
                       encoding=[IDENTITY.name, DCZ.name], version=versions, cache=["warm"], profiles=["lte"],
                       repetitions=1 if quick else 2, warmup=0))]


SCENARIOS = (
    Scenario("000-transfer", "000", "one object per page over a new connection: throughput against length "
             "(seed 000 section 3.2)", _transfer),
    Scenario("000-first-image", "000", "one 2 KB image, HTTP/1.0 and persistent: round trips to its first "
             "byte (figures 3-1 and 4-1)", _first_image),
    Scenario("000-latency", "000", "the seed-000 page with N images of 2544 or 45566 bytes over the T1, "
             "one upstream connection (section 6, figures 6-1 and 6-2)", _latency),
    Scenario("000-local", "000", "the small-image pages on the 1994 LAN (section 6, figure 6-4)", _local),
    Scenario("001-files", "001", "the seed's files A-D, as stored and gzipped, over a 28.8 kbit/s V.42bis modem "
             "and the LAN (section 6.1, table 6-3)", _files001),
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
