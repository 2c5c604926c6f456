"""The seeds' claims, as data: what each paper says, the scenario that measures it
(`scenarios`), how the measured value comes from the stored loads (`measures`), and the
rule that gives the verdict.

In the spirit of the QUIC Interop Runner's test-case table: a claim is a record, its
measurement a small function of the loads of its scenario's runs, its verdict a range.
`verdicts` evaluates the table; `pagebench reproduce` runs the scenarios (ordinary runs,
stored like any run) and prints one row per claim and variant (era and today: see
`scenarios`). A claim that does not reproduce is a finding: the row says which variant,
and why.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pagebench.analysis.reproduce.measures import Data, cut, throughput
from pagebench.analysis.reproduce.seed000 import first_image_rtts, of_best, share_of_gain
from pagebench.analysis.reproduce.seed001 import delta_saving, gzip_html_saving, lan_tiny_cut, modem_rate, modem_ratio
from pagebench.analysis.reproduce.seed002 import connections_cut, sweep_inside
from pagebench.analysis.reproduce.seed004 import pool_cut, pool_knee, rate_window
from pagebench.analysis.reproduce.scenarios import CLAIM_IMAGES, SCENARIOS, Scenario
from pagebench.analysis.stats import Interval
from pagebench.core.modes import H2, HTTP10, KEEPALIVE, PIPELINING

SEEDS = ("000", "001", "002", "004")


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

    def falsifier(self, unit: str) -> str:
        """What would have made the row "differs": the whole interval outside the range."""
        def shown(x: float) -> str:
            return f"{x * 100:g} %" if unit == "%" else f"{x:g} {unit}"
        sides = ([f"under {shown(self.low)}"] if math.isfinite(self.low) else []) + (
            [f"over {shown(self.high)}"] if math.isfinite(self.high) else [])
        return "the whole interval " + " or ".join(sides) if sides else "nothing: the range is unbounded"


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
    #: The paper's condition for this claim, with where the paper states it ("T1, 70 ms,
    #: 1.544 Mbit/s, MSS 1460 (§3.1)"), and ours as the scenario sets it.
    condition: str = ""
    ours: str = ""
    #: The first line of `words` in the seed's text (../shared/seeds/<seed>_*.txt), checked
    #: by the tests where that text is at hand.
    line: int = 0
    #: Non-empty when the check cannot fail by construction (it measures what pagebench
    #: set, or compares a value with itself): the row says "demonstrated", and why.
    demonstrated: str = ""
    #: What result would have made the row "differs", in the physics' words; the rule's
    #: range is stated beside it (`falsifier`).
    falsifies: str = ""

    def falsifier(self) -> str:
        stated = self.rule.falsifier(self.unit)
        return f"{stated} ({self.falsifies})" if self.falsifies else stated


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
          lambda d, v: first_image_rtts(d, v, HTTP10, on_open_connection=False),
          Rule(3.5, 4.6, "4 RTT: 3.5-4.6 (the image's bytes and the host add a little)"), "RTT",
          "TLS adds a round trip to each of the two connections"),
    Claim("000-4-first-image-open", "000", "§4, Fig. 4-1", "persistent: round trips to the first image",
          "the first image arrives after just two round trips, rather than four", "2 RTT", "000-first-image",
          lambda d, v: first_image_rtts(d, v, KEEPALIVE, on_open_connection=True),
          Rule(1.5, 2.6, "2 RTT: 1.5-2.6"), "RTT", "counted on an open connection, TLS changes nothing"),
    Claim("000-6-small-cut", "000", "§6, Fig. 6-1", f"pipelining's cut, {CLAIM_IMAGES} x 2544 B, T1",
          "Our modified HTTP protocol cuts the latency by more than half", "> 50 %", "000-latency",
          lambda d, v: cut(d, v, {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": HTTP10},
                           {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": PIPELINING}),
          Rule(low=0.50, reading="> 50 %"), "%", "TLS makes every HTTP/1.0 connection a round trip dearer"),
    Claim("000-6-large-cut", "000", "§6, Fig. 6-2", f"pipelining's cut, {CLAIM_IMAGES} x 45566 B, T1",
          "using 45566-byte images and the remote server, the new protocol improves latency by about 22%",
          "about 22 %", "000-latency",
          lambda d, v: cut(d, v, {"site": f"seed000-large-n{CLAIM_IMAGES}", "mode": HTTP10},
                           {"site": f"seed000-large-n{CLAIM_IMAGES}", "mode": PIPELINING}),
          Rule(0.17, 0.27, "about 22 %: 17-27 %"), "%",
          "each new connection's slow start: from 1 segment in 1994, from 10 today, plus TLS"),
    Claim("000-6-pipelining-share", "000", "§6, Fig. 6-1", "share of the gain due to pipelining",
          "more than half of the improvement comes from pipelining", "> 50 %", "000-latency",
          lambda d, v: share_of_gain(d, v, f"seed000-small-n{CLAIM_IMAGES}"), Rule(low=0.50, reading="> 50 %"), "%",
          "persistent connections save the set-up round trips, pipelining the per-request ones"),
    Claim("000-6-local-keepalive", "000", "§6, Fig. 6-4", f"persistent's cut on the LAN, {CLAIM_IMAGES} images",
          "For the local case, long-lived connections without pipelining reduces latency by only about 5% "
          "to 15%", "5-15 %", "000-local",
          lambda d, v: cut(d, v, {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": HTTP10},
                           {"site": f"seed000-small-n{CLAIM_IMAGES}", "mode": KEEPALIVE}),
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
    Claim("001-7-modem", "001", "§6.1, Table 6-3", "gzip's time over stored, files C and D, V.42bis modem",
          "the overall transfer time for a given file is shorter with high-level compression than with modem "
          "compression", "C 25.1 / 66.4 s, D 6.9 / 17.7 s: 0.38, 0.39", "001-files", modem_ratio,
          Rule(0.30, 0.45, "0.38 and 0.39, each within about 2 standard deviations of the paper's own trials "
                           "(gzip's 3.07 of 25.1 s, 1.04 of 6.9 s): 0.30-0.45"), "x",
          "the modem's V.42bis compresses the stored file in cleartext; over TLS it has nothing to compress, so "
          "the stored file takes its full size's time and gzip gains its full ratio",
          condition="FTP of files C (374144 B) and D (97125 B) as HTML and gzipped over 28,800 bit/s modems with "
                    "V.42bis, client a 75 MHz 486 with Windows 95, mean of at least 7 trials (§6.1, Table 6-3)",
          ours="a one-file page over HTTP/1.0 through modem-28k8-v42bis (28.8 kbit/s, V.42bis N2 2048, N7 32, "
               "120 ms RTT assumed) on the userspace backend; era: cleartext, 1994 TCP; today: TLS 1.3",
          line=421,
          falsifies="modem compression as strong as gzip (ratio near 1), or none at all (ratio near the bytes' "
                    "0.10: the link carrying the stored file at its full size)"),
    Claim("001-7-v42bis", "001", "§6.1, Table 6-3", "file C as stored: the V.42bis modem's rate",
          "the achieved transfer rate for file C using only modem compression was 55.3 Kbps (over a nominal "
          "28.8 Kbps link)", "55.3 kbit/s (text); 45.1 (table: 374144 B in 66.4 s)", "001-files", modem_rate,
          Rule(40.6, 60.8, "the text's 55.3 and the table's 45.1 kbit/s disagree: both, with 10 % either side: "
                           "40.6-60.8"), "kbit/s",
          "V.42bis (2048 codewords) gets about 4x from this file C's markup in cleartext; the paper's 1.6-1.9x may "
          "be its file's text, or its PC's serial port (57.6 kbit/s with start and stop bits carries 46 kbit/s, "
          "the table's 45.1 for C and 43.9 for D); over TLS the modem has nothing to compress",
          condition="file C (374144 B) as HTML by FTP over 28,800 bit/s modems with V.42bis (§6.1, Table 6-3)",
          ours="file C as a one-file page over HTTP/1.0 through modem-28k8-v42bis (V.42bis N2 2048, N7 32); "
               "its goodput from request to last byte; era: cleartext; today: TLS 1.3",
          line=421,
          falsifies="a modem that compresses nothing (about 27 kbit/s of goodput on the 28.8 line) or far more "
                    "than the paper's (over 60 kbit/s)"),
    Claim("001-7-lan", "001", "§6.1, Table 6-3", "gzip's cut for a tiny file (B, 6 KB) on the LAN",
          "file B over the 10 Mbit/s LAN: 0.10 s as HTML, 0.10 s gzipped", "no gain", "001-files", lan_tiny_cut,
          Rule(-0.05, 0.05, "no gain: within 5 %"), "%",
          "6 KB is a few segments in one round trip either way: set-up, not bytes, is the time"),
    Claim("002-load", "002", "§5, Figs. 4 and 8", "h2's cut of the cold load time",
          "a decrease of 21% download time ... SPDY's downloading time in our test was 42% better than HTTP",
          "21-42 %", "002-page",
          lambda d, v: cut(d, v, {"mode": KEEPALIVE, "cache": "cold"}, {"mode": H2, "cache": "cold"}),
          Rule(0.21, 0.42, "21-42 %"), "%",
          "a page of six big photos is bandwidth-bound: one connection or seven carry the same bytes"),
    Claim("002-connections", "002", "§5, Fig. 5", "h2's cut of TCP connections",
          "On average, the number of TCP connections dropped by 57% when compared to those in HTTP", "57 %",
          "002-page", connections_cut, Rule(0.50, 0.64, "57 %: 50-64 %"), "%",
          "Chromium keeps 6 HTTP/1.1 connections per host, and h2 coalesces nothing across the two addresses"),
    Claim("002-warm", "002", "§5, Fig. 9", "h2's cut of the warm load time",
          "SPDY fails to deliver in term of reducing download time when caching is enabled", "no gain",
          "002-page", lambda d, v: cut(d, v, {"mode": KEEPALIVE, "cache": "warm"}, {"mode": H2, "cache": "warm"}),
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
