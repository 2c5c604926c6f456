"""The analytic lower bound of a page load: seed 000's round-trip accounting, extended.

Pure. Given what a load fetched (per resource: origin, bytes, dependency level), the
link (RTT, downlink rate, MSS, initial window) and the condition (mode, TLS, cache),
it returns the least time any browser could have taken, every idealisation chosen in
the browser's favour so that the bound is never above a real measurement:

- a new connection costs TCP (1 RTT) + TLS (1 RTT: TLS 1.3, or TLS 1.2 with False Start,
  which Chromium always uses; none in cleartext) before its first request;
- a request costs 1 RTT to its first byte; its bytes then arrive in slow-start rounds
  of one RTT, the window growing by every segment delivered (an ACK per segment, no
  loss), starting from the initial window plus the server's handshake flight;
- `h2`: one connection per origin, every request of a dependency level multiplexed on
  it; `h3` the same over QUIC, whose handshake is 1 RTT (transport and TLS 1.3 in one)
  and whose initial window is quic-go's (32 packets), larger than TCP's; `keepalive`: up to 6 connections per origin, one request at a time on each,
  requests given to whichever connection finishes them first; `http1.0`: a new
  connection per request, 6 at a time per origin;
- level 0 is the HTML; a level-L resource can be discovered no earlier than the first
  level-(L-1) resource completes (the HTML's first byte for level 1);
- every body byte crosses the downlink at its payload rate, after the HTML's first byte;
- warm: the HTML is revalidated on a new connection (3 RTT; h3 2), the rest is cached.

No parse, script, layout, decode or server time: a load's measured / bound says how
much of it the protocol and the link explain.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core.modes import Mode
from pagebench.core.records import Resource

#: Chromium's HTTP/1.1 connections per origin.
PER_ORIGIN = 6
#: Segments of the server's handshake flight (certificate chain included) acknowledged
#: before the response: they grow the window. Generous on purpose (a lower bound).
HANDSHAKE_SEGMENTS = 4
#: quic-go's (Caddy's) initial congestion window, 32 packets, counted as 32 full TCP
#: segments (more bytes than 32 QUIC packets carry: generous, as a lower bound must be).
QUIC_INITIAL_WINDOW = 32
TCP_TIMESTAMPS = 12
ETHERNET_OVERHEAD = 54  # Ethernet 14 + IPv4 20 + TCP 20 per full frame, besides the options


@dataclass(frozen=True)
class Fetch:
    """One request of a load as the bound sees it: origin, body bytes, dependency level."""

    origin: str
    bytes: int
    level: int  # 0 = the HTML


@dataclass(frozen=True)
class Link:
    """The link as the bound sees it: RTT, downlink rate, MSS, initial window."""

    rtt_ms: float
    down_mbit: float | None = None
    mss: int | None = None
    initcwnd: int | None = None
    timestamps: bool = True
    tls: bool = True  # False: cleartext, no handshake flight besides TCP's

    @property
    def options(self) -> int:
        return TCP_TIMESTAMPS if self.timestamps else 0

    @property
    def payload(self) -> int:
        """TCP payload bytes per segment (1448 on Ethernet with timestamps)."""
        return (self.mss or 1460) - self.options

    @property
    def window0(self) -> int:
        return (self.initcwnd or 10) + (HANDSHAKE_SEGMENTS if self.tls else 0)

    def bytes_per_ms(self) -> float | None:
        """Payload goodput of the downlink, or None when it is not limited."""
        if not self.down_mbit:
            return None
        frame = self.payload + self.options + ETHERNET_OVERHEAD
        return self.down_mbit * 1e3 / 8 * self.payload / frame


def fetches_of(resources: Sequence[Resource], level_of: Callable[[str], int]) -> list[Fetch]:
    """What a load fetched over the network: the first resource is the HTML (level 0);
    `level_of("host/path")` gives every other one's dependency level. A body counts as
    sent (a compressed one's encoded bytes: its decoded size never crossed the link)."""
    fetches = []
    for i, resource in enumerate(resources):
        if i and resource.from_cache:
            continue
        parts = urlsplit(resource.url)
        level = 0 if i == 0 else level_of(f"{parts.hostname}{parts.path}")
        sent = resource.encoded_bytes if resource.encoded_bytes is not None else resource.body_bytes
        fetches.append(Fetch(resource.origin, max(0, sent), level))
    return fetches


def rounds(nbytes: int, window: int, payload: int) -> tuple[int, int]:
    """Slow-start rounds to deliver nbytes on a connection with `window` segments, and
    the window after (it grows by every segment delivered)."""
    segments = max(1, math.ceil(nbytes / payload))
    k = 0
    while segments > 0:
        sent = min(window, segments)
        segments -= sent
        window += sent
        k += 1
    return k, window


class _Connection:
    def __init__(self, free_at: float, window: int) -> None:
        self.free_at = free_at
        self.window = window


def _window0(link: Link, mode: Mode) -> int:
    return max(link.window0, QUIC_INITIAL_WINDOW) if mode.quic else link.window0


def _handshake_trips(mode: Mode, link: Link) -> int:
    """TCP then TLS; QUIC does both in one round trip; cleartext TCP's alone."""
    return 1 if mode.quic or not link.tls else 2


def lower_bound_ms(fetches: Sequence[Fetch], link: Link, mode: Mode, cache: str = "cold") -> float:
    """The least load time the protocol and the link allow (ms from navigation start)."""
    return _bound(fetches, link, mode, cache)


def _bound(fetches: Sequence[Fetch], link: Link, mode: Mode, cache: str) -> float:
    rtt = link.rtt_ms
    html = next((f for f in fetches if f.level == 0), None)
    if html is None:
        raise ValueError("a page needs its HTML (level 0)")
    handshake = _handshake_trips(mode, link) * rtt
    if cache == "warm":
        return handshake + rtt  # the HTML's 304 on a new connection; the rest from the disk cache
    setup = handshake
    k, window = rounds(html.bytes, _window0(link, mode), link.payload)
    first_byte = setup + rtt
    html_done = setup + k * rtt
    # The HTML's connection: h2 can send on it at once, HTTP/1.1 once the HTML is in, and
    # under HTTP/1.0 it closes, leaving a slot whose next connection starts then.
    free_at = setup if mode.multiplexed else html_done
    pools: dict[str, list[_Connection]] = {html.origin: [_Connection(free_at, window)]}
    discovered = {1: first_byte}
    end = html_done
    levels = sorted({f.level for f in fetches if f.level > 0})
    for level in levels:
        start = discovered.get(level, end)
        earliest_done = math.inf
        batch = [f for f in fetches if f.level == level]
        for origin in sorted({f.origin for f in batch}):
            mine = [f for f in batch if f.origin == origin]
            pool = pools.setdefault(origin, [])
            for done in _schedule(mine, pool, start, link, mode):
                earliest_done = min(earliest_done, done)
                end = max(end, done)
        discovered[level + 1] = earliest_done
    rate = link.bytes_per_ms()
    if rate is not None:
        total = sum(f.bytes for f in fetches)
        end = max(end, first_byte + max(0, total - link.payload) / rate)
    return end


def _schedule(fetches: Sequence[Fetch], pool: list[_Connection], start: float, link: Link,
              mode: Mode) -> list[float]:
    """Completion time of each fetch of one origin at one level."""
    rtt = link.rtt_ms
    if mode.multiplexed:
        if not pool:
            pool.append(_Connection(start + _handshake_trips(mode, link) * rtt, _window0(link, mode)))
        conn = pool[0]
        begin = max(start, conn.free_at)
        k, conn.window = rounds(sum(f.bytes for f in fetches), conn.window, link.payload)
        return [begin + rtt] * (len(fetches) - 1) + [begin + k * rtt]
    done, opening = [], _handshake_trips(mode, link) * rtt
    for fetch in sorted(fetches, key=lambda f: f.bytes):
        options = []
        for conn in pool:
            if mode.connection_per_request:  # this slot's next request opens a new connection
                k, _ = rounds(fetch.bytes, link.window0, link.payload)
                options.append((max(start, conn.free_at) + opening + k * rtt, conn, link.window0))
            else:
                k, grown = rounds(fetch.bytes, conn.window, link.payload)
                options.append((max(start, conn.free_at) + k * rtt, conn, grown))
        if len(pool) < PER_ORIGIN:
            k, grown = rounds(fetch.bytes, link.window0, link.payload)
            options.append((start + opening + k * rtt, None, grown))
        finish, conn, window = min(options, key=lambda option: option[0])
        if conn is None:
            conn = _Connection(finish, window)
            pool.append(conn)
        conn.free_at, conn.window = finish, window
        done.append(finish)
    return done
