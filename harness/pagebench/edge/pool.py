"""Which upstream pool carries the next load, and what one load's record is.

    cold   every load starts with no upstream connection: the load's pool is closed when
           the next load is configured, and every pool kept before it is closed first
           (the default)
    warm   one pool per (strategy, origin addresses, the caller's key), kept open across
           loads: a condition that comes back (the run interleaves conditions) finds the
           connections its earlier loads opened, as seed 004's inter-proxy connections
           persist. The runner's key is the condition, so no two conditions share
           connections (TCP state learnt over one link profile never serves another's
           loads). The others wait, idle and open, until their condition comes back.

A warm pool keeps what the origin keeps: nginx closes an idle connection after its
`keepalive_timeout` (75 s) and an HTTP/1.0 connection after its one response, and a
closed connection is opened again when a request needs it (for `http1.0` a warm pool
keeps nothing). Bookkeeping only (no I/O of its own); `addon.py` runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream

POOLS = ("cold", "warm")


class Closable(Protocol):
    async def close(self) -> None: ...


U = TypeVar("U", bound=Closable)
Key = tuple[Strategy, tuple[tuple[str, str], ...], str]


class Pools(Generic[U]):
    """The pool of the next load, from `make(strategy, addresses)` or kept from before.

        pool, to_close = pools.choose("warm", strategy, addresses, key="condition")
        for old in to_close: await old.close()
    """

    def __init__(self, make: Callable[[Strategy, dict[str, str]], U]) -> None:
        self.make = make
        self.kept: dict[Key, U] = {}  # the warm pools, open between their loads
        self.cold: U | None = None  # the last cold load's pool: closed at the next choice

    def choose(self, pool: str, strategy: Strategy, addresses: dict[str, str], key: str = "") -> tuple[U, list[U]]:
        """(the pool for the next load, the pools to close first). Cold closes the warm
        pools too (a cold load shares the link with no idle connection); a cold load's
        pool is never kept for a warm one."""
        if pool not in POOLS:
            raise ValueError(f"pool {pool!r}: allowed {', '.join(POOLS)}")
        to_close = [self.cold] if self.cold is not None else []
        self.cold = None
        if pool == "cold":
            to_close += self.kept.values()
            self.kept.clear()
            self.cold = self.make(strategy, dict(addresses))
            return self.cold, to_close
        wanted = (strategy, tuple(sorted(addresses.items())), key)
        if wanted not in self.kept:
            self.kept[wanted] = self.make(strategy, dict(addresses))
        return self.kept[wanted], to_close

    def forget(self) -> list[U]:
        """Every pool, to be closed (a reset, or the proxy stopping)."""
        every = [*self.kept.values(), *([self.cold] if self.cold is not None else [])]
        self.kept.clear()
        self.cold = None
        return every


@dataclass(frozen=True)
class Lease:
    """One load's use of a pool. The connections opened before it started are the warm
    pool's: `reused` when they carry a request of this load."""

    pool: str
    upstream: Upstream
    first: int  # index in upstream.connections of the first connection opened during this load
    pooled: int  # of those opened before, how many were still open when the load started

    @classmethod
    def begin(cls, pool: str, upstream: Upstream) -> Lease:
        """The next load's record starts here: no exchange yet, every connection so far the pool's."""
        upstream.exchanges.clear()
        earlier = upstream.connections
        return cls(pool, upstream, len(earlier), sum(1 for record in earlier if record.closed_at is None))

    def stats(self) -> dict[str, Any]:
        """`connections`: opened during this load; `reused`: opened before it and carrying
        some of its requests (their `requests` and `max_in_flight` count since they were
        opened); `pooled`: open when it started."""
        records, exchanges = self.upstream.connections, self.upstream.exchanges
        used = {exchange.connection for exchange in exchanges}
        return {"pool": self.pool, "pooled": self.pooled,
                "connections": [record.as_dict() for record in records[self.first:]],
                "reused": [record.as_dict() for record in records[:self.first] if record.serial in used],
                "exchanges": [exchange.as_dict() for exchange in exchanges]}
