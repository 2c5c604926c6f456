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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.sites import history

Spec = dict[str, Any]

ERA, TODAY = "era", "today"
VARIANTS = (ERA, TODAY)
#: A controlled variant: today's TCP and browser with one factor set back (TLS off), for a
#: claim that differs today for a known cause: the difference should go away here.
CLEARTEXT = "today-cleartext"
#: What each variant is, per seed (shown in the output and the docs).
VARIANT_NOTES = {
    ("000", ERA): "cleartext, 1994 TCP (Reno, no SACK/timestamps/window scaling; initial window 1 for section 3.2's "
                  "transfers, 2 for section 6's pages, where slow start did not limit the window)",
    ("000", TODAY): "TLS 1.3, Linux TCP (cubic, initial window 10, SACK, timestamps, window scaling)",
    ("000", CLEARTEXT): "today's Linux TCP and browser without TLS: the control for TLS's round trips",
    ("002", ERA): "TLS 1.2 as in 2013, Linux TCP (the links fitted with it)",
    ("002", TODAY): "TLS 1.3, Linux TCP",
    ("001", ERA): "cleartext, 1994 TCP (Reno, initial window 1 on the modem, no SACK/timestamps/window scaling)",
    ("001", TODAY): "TLS 1.3, Linux TCP; deltas by Compression Dictionary Transport (RFC 9842, dcz)",
    ("004", ERA): "cleartext, 1999 TCP (32767-byte window, Reno, no SACK/timestamps/window scaling)",
    ("004", TODAY): "TLS 1.3, Linux TCP (autotuned windows)",
}


#: Verdicts that settle a claim: a look where every claim has one stops the loads.
DECISIVE = ("reproduced", "demonstrated", "differs")


def every_claim_decisive(verdicts: Sequence[str]) -> bool:
    """The scenarios' stopping rule: stop when every claim the scenario serves has a
    decisive verdict ("can't tell", or no data yet, keeps loading up to the cap)."""
    return bool(verdicts) and all(verdict in DECISIVE for verdict in verdicts)


@dataclass(frozen=True)
class Scenario:
    """What runs for some claims: `runs(variant, quick)` gives the specs, each with a label
    (several runs when a parameter is not a spec matrix axis, e.g. the proxy pool's size).
    `stopping`: its rule for `repetitions: auto`, fixed before the run: at each look of
    the spec's schedule (`core/spec/sequential.py`), given the verdicts of the claims it
    serves on the loads so far at the look's level, whether to stop
    (`analysis/reproduce/stopping.py` asks it)."""

    name: str
    seed: str
    what: str
    runs: Callable[[str, bool], list[tuple[str, Spec]]]
    variants: tuple[str, ...] = VARIANTS
    stopping: Callable[[Sequence[str]], bool] = every_claim_decisive


def _profile(name: str, era: str, today: str, variant: str, **extra: Any) -> dict[str, Any]:
    """A profile named the same in every variant (claims select by name), based on the
    era's or today's built-in; `extra` (the era's knobs) applies to the era only."""
    return {"name": name, "base": era, **extra} if variant == ERA else {"name": name, "base": today}


#: The error allowed across a scenario's looks (each look's interval: 1 - ALPHA / looks).
ALPHA = 0.05


def auto(cap: int, quick: bool, quick_n: int = 2) -> int | Spec:
    """A scenario's `repetitions:`: auto up to `cap` (its planned loads, the budget), or
    `quick_n` with --quick (a smoke run: too few loads for a look to stop anything)."""
    return quick_n if quick else {"cap": cap, "alpha": ALPHA}


def _base(name: str, variant: str, quick: bool, *, tls_era: str = "none", cap: int = 5, **fields: Any) -> Spec:
    spec: Spec = {
        "name": f"reproduce-{name}-{variant}", "cache": ["cold"],
        "tls": [tls_era if variant == ERA else "none" if variant == CLEARTEXT else "1.3"],
        "repetitions": auto(cap, quick), "warmup": 0 if quick else 1, "seed": 1994,
        "timeouts": {"load_s": 120, "link_check": not quick},
    }
    return spec | fields


#: Transfer lengths of seed 000 section 3.2 (its figures run 1 KB .. 1 MB; past 500 KB
#: its remote throughput declines, l. 100); the LAN's stop at 512 KB (0.4 s at 10 Mbit/s).
TRANSFER_BYTES = (2_048, 20_480, 102_400, 512_000, 1_048_576)
TRANSFER_BYTES_QUICK = (2_048, 20_480, 512_000, 1_048_576)
LAN_TRANSFER_BYTES = (2_048, 20_480, 102_400, 512_000)
LAN_TRANSFER_BYTES_QUICK = (2_048, 20_480)
#: The "best case" of figure 3-2 (the plateau before the decline past about 500 KB).
BEST_BYTES = 512_000
#: Images per page of seed 000 section 6 (figures 6-1 .. 6-4): one, a moderate number,
#: and the N the claims are read at (40 served no claim: 6 s per serial load).
IMAGE_COUNTS = (1, 10, 20)
IMAGE_COUNTS_QUICK = (1, 10, 20)
CLAIM_IMAGES = 20  # the N at which the section 6 claims are read
MODERATE_IMAGES = 10  # "at least a moderate number of images" (figure 6-3)
SMALL, LARGE = 2544, 45566
#: Section 6's era TCP as the paper states it (l. 209): "the TCP MSS was 1460 bytes, and
#: traces showed that slow-start did not limit the window size" for median-size images: an
#: initial window that holds one 2544-byte image and its headers (2 segments); the large
#: images still slow-start from it (l. 192: "connection setup and slow-start latencies").
SECTION6_INITCWND = 2
#: The receive windows of the 1994 hosts swept under the 20 large images (4.3BSD's default
#: socket buffer, and 4.4BSD's): "a few popular TCP buffer (maximum window) sizes" (l. 90).
WINDOWS = (4_096, 8_192)
#: Pool sizes of seed 004 (its figure 5: connections between the proxies); HTTP/1.0 (a
#: connection per request: no US proxy) and h2 (one multiplexed connection) run at the
#: largest only, where the pool limits neither. Today's variant reads its claims at the
#: ends only (each run builds a lab and checks its link: about a minute).
POOL_SIZES = (1, 4, 16, 32)
POOL_SIZES_TODAY = (1, 32)
POOL_SIZES_QUICK = (2, 32)
POOL_CLIENTS = 4
#: Seed 004's offered load (its figures 5-7 put presented load on the x axis): clients
#: loading the large-image page at once, each with Chromium's 6 connections to the proxy.
#: At the heaviest, pools of 8 and 20 beside LOAD_POOL: the conclusions' 20 and 50.
LOAD_CLIENTS = (1, 4, 8)
LOAD_CLIENTS_QUICK = (1, 8)
LOAD_POOL = 50
LOAD_SMALL_POOLS = (8, 20)
LOAD_SITE = "seed000-large-n20"
#: Seed 002's pages: the report's own (Appendix A, scenarios 1 and 2), and for its real
#: sites (section 3.3, Amazon.com) a public HAR of a many-origin portal of its time:
#: aftonbladet.se's front page, WebPageTest 2.17 (171 requests from 34 origins, 1.34 MB),
#: from the test corpus (tests/fixtures/hars/README.md: source and MIT licence).
PAGE002_SITE = "seed002"
REAL002_HAR = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "hars" / "wpt-aftonbladet.se.har.gz"
REAL002_SITE = "wpt-aftonbladet.se"


def _transfer_site(nbytes: int) -> dict[str, Any]:
    return {"generate": {"images": 1, "image_bytes": nbytes}}


def _transfer(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Remote (both MSSs) with few repetitions, their figures are tight; the LAN's
    millisecond transfers with more, as a run of its own (label "lan")."""
    remote = _base("000-transfer", variant, quick, modes=["http1.0"],
                   sites=[_transfer_site(n) for n in (TRANSFER_BYTES_QUICK if quick else TRANSFER_BYTES)],
                   profiles=[_profile("remote", "t1-1994-tcp", "t1-1994", variant),
                             _profile("remote-mss536", "t1-1994-mss536-tcp", "t1-1994-mss536", variant)])
    remote["repetitions"] = auto(3, quick, 1)
    lan = _base("000-transfer-lan", variant, quick, modes=["http1.0"],
                sites=[_transfer_site(n) for n in (LAN_TRANSFER_BYTES_QUICK if quick else LAN_TRANSFER_BYTES)],
                profiles=[_profile("local", "lan-1994-tcp", "lan-1994", variant)])
    lan["repetitions"] = auto(12, quick, 3)
    return [("", remote), ("lan", lan)]


def _section6(variant: str) -> dict[str, Any]:
    return _profile("remote", "t1-1994-tcp", "t1-1994", variant, initcwnd=SECTION6_INITCWND)


def _first_image(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Figures 3-1 and 4-1 on the wire: one 2 KB image, through the edge proxy with one
    upstream connection; a warm pool keeps the persistent one open before the load (4-1's
    "the client already has a TCP connection open"), HTTP/1.0 opens one per request."""
    spec = _base("000-first-image", variant, quick, sites=[_transfer_site(TRANSFER_BYTES[0])],
                 modes=["http1.0", "keepalive"], topology="proxy",
                 proxy={"connections": 1, "depth": 1, "pool": "warm"}, profiles=[_section6(variant)])
    spec["warmup"] = 1  # opens the warm pool
    return [("", spec)]


def _latency(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    small, large = (IMAGE_COUNTS_QUICK, (CLAIM_IMAGES,)) if quick else (IMAGE_COUNTS, IMAGE_COUNTS)
    sites = [f"seed000-small-n{n}" for n in small] + [f"seed000-large-n{n}" for n in large]
    return [("", _base("000-latency", variant, quick, repetitions=auto(4, quick, 1), sites=sites,
                       modes=["http1.0", "keepalive", "pipelining"], topology="proxy",
                       proxy={"connections": 1, "depth": 40}, profiles=[_section6(variant)]))]


def _window(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """The 20 large images under each 1994 receive window (era only: today's windows scale)."""
    profiles = [_profile(f"remote-w{w}", "t1-1994-tcp", "t1-1994", variant, initcwnd=SECTION6_INITCWND,
                         rwnd_bytes=w) for w in WINDOWS]
    return [("", _base("000-window", variant, quick, repetitions=auto(3, quick, 1), warmup=0,
                       sites=[f"seed000-large-n{CLAIM_IMAGES}"], modes=["http1.0", "pipelining"],
                       topology="proxy", proxy={"connections": 1, "depth": 40}, profiles=profiles))]


def _local(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """The LAN direct (label "direct": no edge proxy, whose ~2 ms per request would swamp
    a 0.5 ms link), pipelining through the proxy beside its own HTTP/1.0 (label "proxy");
    the cleartext control runs the direct comparison only, at the claim's N."""
    counts = (CLAIM_IMAGES,) if quick or variant == CLEARTEXT else IMAGE_COUNTS
    sites = [f"seed000-small-n{n}" for n in counts]
    local = [_profile("local", "lan-1994-tcp", "lan-1994", variant)]
    direct = _base("000-local", variant, quick, sites=sites, modes=["http1.0", "keepalive"], profiles=local)
    direct["repetitions"] = auto(20, quick, 3)  # millisecond loads on a shared machine: noisy, and cheap
    runs = [("direct", direct)]
    if variant != CLEARTEXT:
        runs.append(("proxy", _base("000-local-proxy", variant, quick, sites=sites, modes=["http1.0", "pipelining"],
                                    topology="proxy", proxy={"connections": 1, "depth": 40}, profiles=local)))
    return runs


#: The report's links, fitted from its appendices (link/profiles.yaml, benchmarks/seed002_fit.py).
EC2_2013, VLAB_2013 = "ec2-2013", "vlab-2013"


def _page002(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """The report's page, cold (it cleared the cache before every load), on the links
    fitted from Appendix B (its EC2 server) and C (its virtual lab)."""
    return [("", _base("002-page", variant, quick, tls_era="1.2", sites=[PAGE002_SITE], modes=["keepalive", "h2"],
                       profiles=[EC2_2013, VLAB_2013]))]


def _real002(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """The real-site stand-in, cold and warm (section 3.3: cache cleared for 10 loads, kept
    for 10), on the EC2 link (the report's client, the only link of its own it lets us fit)."""
    spec = _base("002-real", variant, quick, tls_era="1.2", sites=[{"corpus": str(REAL002_HAR)}],
                 modes=["keepalive", "h2"], profiles=[EC2_2013], cache=["cold", "warm"])
    # its rows are far from their ranges (docs/reproductions.md): 3 loads a condition tell;
    # no warm-up (a warm load is primed by a load of its own anyway)
    return [("", spec | {"repetitions": 2 if quick else 3, "warmup": 0})]


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
    sizes = POOL_SIZES_QUICK if quick else POOL_SIZES if variant == ERA else POOL_SIZES_TODAY
    for size in sizes:
        modes = ["http1.0", "keepalive", "h2"] if size == sizes[-1] else ["keepalive"]
        spec = _base(f"004-pool-c{size}", variant, quick, sites=["seed000-small-n20"], modes=modes,
                     topology="proxy", clients=POOL_CLIENTS, proxy={"connections": size, "depth": 1, "pool": "warm"},
                     profiles=[_us_nz(variant)])
        spec["warmup"] = 1  # opens the warm pool
        if quick:
            spec["repetitions"] = 1  # four clients: four loads per condition even so
        runs.append((pool_label(size), spec))
    return runs


def pool_label(size: int, clients: int = 0) -> str:
    """A seed-004 run's label: `C=32`, or `N=8 C=50` on the offered-load axis."""
    return f"N={clients} C={size}" if clients else f"C={size}"


def pool_of(label: str) -> tuple[int, int]:
    """(clients, pool size) of a label from `pool_label` (clients 0: the pool scenario's)."""
    fields = dict(part.split("=", 1) for part in label.split())
    return int(fields.get("N", 0)), int(fields["C"])


def _load004(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Offered load: N clients at once on the large-image page (20 x 45566 B each),
    through a warm pool of LOAD_POOL, per request (HTTP/1.0) and multiplexed (h2); at the
    heaviest load also through pools of 8 and 20 (the conclusions' numbers)."""
    counts = LOAD_CLIENTS_QUICK if quick else LOAD_CLIENTS
    runs = [(n, LOAD_POOL, ["http1.0", "keepalive", "h2"]) for n in counts]
    runs += [(counts[-1], size, ["keepalive"]) for size in LOAD_SMALL_POOLS]
    found = []
    for clients, size, modes in runs:
        spec = _base(f"004-load-n{clients}-c{size}", variant, quick, sites=[LOAD_SITE], modes=modes,
                     topology="proxy", clients=clients, proxy={"connections": size, "depth": 1, "pool": "warm"},
                     profiles=[_us_nz(variant)], repetitions=auto(3, quick, 1))
        spec["warmup"] = 1  # opens the warm pool
        found.append((pool_label(size, clients), spec))
    return found


#: The control of the conclusions' rows: a router queue that holds every window of the
#: largest pool at once (50 x 32767 B), so nothing is lost, as the report's simulated
#: routers lost nothing (its Fig. 6); everything else as the heaviest offered load's.
DEEP_QUEUE = LOAD_POOL * 32767


def _deep004(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """The heaviest offered load through pools of 20 and 50 with a queue that cannot
    overflow: the one factor the 50-connection conclusion's difference is put down to."""
    clients = (LOAD_CLIENTS_QUICK if quick else LOAD_CLIENTS)[-1]
    found = []
    for size in (LOAD_SMALL_POOLS[-1], LOAD_POOL):
        spec = _base(f"004-deep-n{clients}-c{size}", variant, quick, sites=[LOAD_SITE], modes=["keepalive"],
                     topology="proxy", clients=clients, proxy={"connections": size, "depth": 1, "pool": "warm"},
                     profiles=[{**_us_nz(variant), "queue_bytes": DEEP_QUEUE}], repetitions=auto(3, quick, 1))
        spec["warmup"] = 1  # opens the warm pool
        found.append((pool_label(size, clients), spec))
    return found


#: Seed 001's files A-D (its table 6-3).
FILES001 = ("a", "b", "c", "d")
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
    spec |= {"repetitions": auto(3 if variant == ERA else 2, quick, 1), "warmup": 0,
             "timeouts": {"load_s": 300, "link_check": not quick}}
    return [("", spec)]


def _delta001(variant: str, quick: bool) -> list[tuple[str, Spec]]:
    """Real successive versions of real pages (`core.sites.history`: toybox's site, each
    page's last five instances): instance k - 1 in the cache, then instance k whole,
    gzipped and as a dictionary delta (dcz), as Chromium receives it. Bytes are exact and
    do not depend on the link: one load per condition."""
    sites = list(history.pair_names())
    if quick:
        sites = [name for name in sites if name.endswith(f"-{history.INSTANCES}")]
    return [("", _base("001-delta", variant, quick, sites=sites, modes=["h2"],
                       encoding=[IDENTITY.name, GZIP.name, DCZ.name], version=[2], cache=["warm"], profiles=["lte"],
                       repetitions=1, warmup=0))]


SCENARIOS = (
    Scenario("000-transfer", "000", "one object per page over a new connection: throughput against length, "
             "remote (MSS 1460 and 536) and LAN (seed 000 section 3.2, figures 3-2 and 3-3)", _transfer),
    Scenario("000-first-image", "000", "one 2 KB image through the edge proxy, HTTP/1.0 against a persistent "
             "connection already open: round trips to its first byte (figures 3-1 and 4-1)", _first_image,
             (ERA, TODAY, CLEARTEXT)),
    Scenario("000-latency", "000", "the seed-000 page with N images of 2544 or 45566 bytes over the T1, "
             "one upstream connection (section 6, figures 6-1 .. 6-3)", _latency),
    Scenario("000-window", "000", "the 20 large images under 1994's receive windows (4 and 8 KB), HTTP/1.0 "
             "against pipelining", _window, (ERA,)),
    Scenario("000-local", "000", "the small-image pages on the 1994 LAN, direct, and pipelining through the "
             "edge proxy (section 6, figure 6-4)", _local, (ERA, TODAY, CLEARTEXT)),
    Scenario("001-files", "001", "the seed's files A-D, as stored and gzipped, over a 28.8 kbit/s V.42bis modem "
             "and the LAN (section 6.1, table 6-3)", _files001),
    Scenario("001-delta", "001", "real successive versions of toybox's web pages: each instance after the one "
             "before it in the cache, whole, gzipped or as a dictionary delta (dcz) (sections 5.4-5.7)", _delta001,
             (TODAY,)),
    Scenario("002-page", "002", "the SPDY report's photo page, HTTP/1.1 over TLS against h2, cold, on the links "
             "fitted from its Appendices B and C", _page002),
    Scenario("002-real", "002", "a public HAR of a many-origin portal standing in for the report's real sites, "
             "HTTP/1.1 over TLS against h2, cold and warm (section 4.3, Appendix D)", _real002),
    Scenario("004-window", "004", "one bulk connection over the US/NZ link", _window004),
    Scenario("004-pool", "004", "four clients through the edge proxy over the US/NZ link: a connection per "
             "request and one multiplexed h2 connection against a warm pool of C persistent connections", _pool004),
    Scenario("004-load", "004", "offered load: 1-8 clients at once on the large-image page over the US/NZ "
             "link, per request, pooled (C = 50, and 8 and 20 at 8 clients) and multiplexed", _load004, (ERA,)),
    Scenario("004-deep", "004", "the control of the 20- and 50-connection rows: the heaviest offered load through "
             "pools of 20 and 50 with a router queue that loses nothing", _deep004, (ERA,)),
)
SCENARIO_BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
