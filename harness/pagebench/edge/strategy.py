"""A mode's strategy across the link, and the pure decisions of its pool: which
connection takes the next request, and how many one connection may carry.

    choose          an idle connection; else a new one while the origin has fewer than
                    `connections` (multiplexed: only when none can take it); else the
                    least loaded one that can; else the request waits
    may_join        only GETs are pipelined, and nothing joins behind a non-GET
    h1_capacity     `depth` requests in flight for a pipelined GET, one otherwise

No I/O: `upstream.OriginPool` and the connections (`http1`, `http2`) ask these.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pagebench.core import modes
from pagebench.core.modes import Mode

#: The modes the edge proxy carries across the link (those that run in the proxy topology).
STRATEGIES = modes.in_topology("proxy")
#: What `choose` answers for "open a new connection".
OPEN = -1


@dataclass(frozen=True)
class Strategy:
    mode: Mode  # one of STRATEGIES
    connections: int = 6
    depth: int = 1
    cleartext: bool = False  # plain HTTP across the link (the browser's hop stays TLS)

    def __post_init__(self) -> None:
        if self.mode not in STRATEGIES:
            raise ValueError(f"mode {self.mode.name!r}: allowed {', '.join(m.name for m in STRATEGIES)}")
        if self.connections < 1 or self.depth < 1:
            raise ValueError("connections and depth must be at least 1")


def origin_port(strategy: Strategy, port: int | None = None) -> int:
    """The origins' port: `port` when told, else 443, or 80 for a cleartext strategy."""
    return port or (80 if strategy.cleartext else 443)


def choose(strategy: Strategy, loads: Sequence[int | None]) -> int | None:
    """The index of the connection that takes the next request, OPEN for a new one, or
    None (it waits). `loads`: each open connection's requests in flight, None where that
    connection cannot take this request."""
    usable = [(load, index) for index, load in enumerate(loads) if load is not None]
    idle = [index for load, index in usable if load == 0]
    if idle:
        return idle[0]
    if len(loads) < strategy.connections and (not strategy.mode.multiplexed or not usable):
        return OPEN
    return min(usable, key=lambda pair: pair[0])[1] if usable else None


def may_join(method: str, in_flight: Sequence[str]) -> bool:
    """Whether a request may join an HTTP/1.x connection with these methods in flight."""
    return not in_flight or (method == "GET" and all(other == "GET" for other in in_flight))


def h1_capacity(strategy: Strategy, method: str) -> int:
    """How many requests an HTTP/1.x connection may have in flight with this one."""
    return strategy.depth if strategy.mode.pipelined and method == "GET" else 1
