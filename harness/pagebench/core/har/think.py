"""The server's think time of each response a HAR recorded: `timings.wait` (request sent
to first byte) less one round trip, which the lab's link adds back when it replays it.

The round trip is read, in this order, from:

1. the TCP handshake (`timings.connect` less `timings.ssl`, `HarEntry.rtt_ms`) of the
   connection the request went on: its own, else that of the request that opened the
   same HAR `connection` (Chrome, browsertime);
2. the smallest handshake recorded for the request's origin;
3. the smallest `wait` recorded for the origin (a connection opened by a preconnect, or
   coalesced onto another origin's, shows no handshake): at least one round trip, so
   the think time is never overstated; that origin's quickest response then thinks 0.

A request without a `wait` has none. Never negative; rounded to 0.1 ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

from pagebench.core.har.parse import HarEntry

#: A think time this long (ms) or more is named at import: a long poll, or a request the
#: server held, which the replay holds as long.
LONG_THINK_MS = 10_000


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def round_trip(entry: HarEntry, entries: Sequence[HarEntry]) -> float | None:
    """The round trip `entry`'s wait is taken less (see the module docstring); None: no wait."""
    if entry.wait_ms is None:
        return None
    if entry.rtt_ms:
        return entry.rtt_ms
    if entry.connection is not None:
        opened = [e.rtt_ms for e in entries if e.connection == entry.connection and e.rtt_ms]
        if opened:
            return min(opened)
    origin = _origin(entry.url)
    same = [e for e in entries if _origin(e.url) == origin]
    handshakes = [e.rtt_ms for e in same if e.rtt_ms]
    if handshakes:
        return min(handshakes)
    return min(e.wait_ms for e in same if e.wait_ms is not None)


def think_times(entries: Sequence[HarEntry]) -> dict[int, float]:
    """entry index -> think time (ms) of every entry with a recorded wait."""
    out: dict[int, float] = {}
    for entry in entries:
        rtt = round_trip(entry, entries)
        if entry.wait_ms is not None and rtt is not None:
            out[entry.index] = round(max(0.0, entry.wait_ms - rtt), 1)
    return out
