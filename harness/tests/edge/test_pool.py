"""Which pool carries each load: sequencing with fakes, then real upstream connections
(the loopback TLS server of `loopback.py`) kept or closed across interleaved loads."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from pagebench.core.modes import HTTP10, KEEPALIVE, PIPELINING
from pagebench.edge.addon import EdgeAddon
from pagebench.edge.messages import Exchange, Request
from pagebench.edge.pool import Lease, Pools
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream
from pagebench.lab.tls import Authority
from tests.edge.loopback import HOST, Seen, serve

A = (Strategy(KEEPALIVE, 2), {HOST: "127.0.0.1"})
B = (Strategy(PIPELINING, 1, 4), {HOST: "127.0.0.1"})


class FakePool:
    made = 0

    def __init__(self, strategy: Strategy, addresses: dict[str, str]) -> None:
        FakePool.made += 1
        self.name, self.key, self.closed = FakePool.made, (strategy, addresses), False

    async def close(self) -> None:
        self.closed = True


def choose(pools: Pools[FakePool], pool: str, strategy: Strategy, addresses: dict[str, str],
           key: str = "") -> FakePool:
    chosen, to_close = pools.choose(pool, strategy, addresses, key)
    for old in to_close:
        asyncio.run(old.close())
    return chosen


def test_warm_keeps_one_pool_per_strategy_and_origins_across_interleaved_loads():
    pools = Pools(FakePool)
    first_a = choose(pools, "warm", *A)
    first_b = choose(pools, "warm", *B)
    assert choose(pools, "warm", *A) is first_a and choose(pools, "warm", *B) is first_b
    assert not first_a.closed and not first_b.closed
    moved = choose(pools, "warm", A[0], {HOST: "127.0.0.2"})  # other addresses: another pool
    assert moved is not first_a and not first_a.closed
    other = choose(pools, "warm", *A, key="another condition")  # same strategy and origins, other key
    assert other is not first_a and choose(pools, "warm", *A, key="another condition") is other


def test_cold_closes_every_pool_before_each_load():
    pools = Pools(FakePool)
    a, b = choose(pools, "cold", *A), choose(pools, "cold", *B)
    assert a.closed and not b.closed
    again = choose(pools, "cold", *A)
    assert again is not a and b.closed and not again.closed


def test_cold_after_warm_closes_the_warm_pools_too():
    pools = Pools(FakePool)
    a, b = choose(pools, "warm", *A), choose(pools, "warm", *B)
    cold = choose(pools, "cold", *A)
    assert a.closed and b.closed and cold is not a
    assert pools.forget() == [cold] and pools.kept == {} and pools.cold is None


def test_a_cold_pool_is_never_kept_for_a_warm_load():
    """The run measures the proxy's overhead cold, then loads warm: the warm-up must open
    its own connections, not inherit the overhead's (opened over another link profile)."""
    pools = Pools(FakePool)
    cold = choose(pools, "cold", *A)
    warm = choose(pools, "warm", *A)
    assert warm is not cold and cold.closed and not warm.closed


def test_an_unknown_pool_is_refused():
    with pytest.raises(ValueError, match="pool 'hot': allowed cold, warm"):
        Pools(FakePool).choose("hot", *A)


def test_a_lease_tells_opened_from_reused():
    upstream = Upstream(*A)
    old = [upstream.new_connection(HOST, "127.0.0.1", "http/1.1") for _ in range(3)]
    old[2].closed_at = 1.0  # the origin closed it before this load
    upstream.exchanges.append(Exchange(HOST, "GET", "/before", 0, 0.0, connection=old[1].serial))
    lease = Lease.begin("warm", upstream)
    assert upstream.exchanges == [] and lease.pooled == 2
    new = upstream.new_connection(HOST, "127.0.0.1", "http/1.1")
    for serial in (old[0].serial, new.serial):  # this load's requests, as OriginPool records them
        upstream.exchanges.append(Exchange(HOST, "GET", "/", 0, 0.0, connection=serial))
    stats = lease.stats()
    assert [c["serial"] for c in stats["connections"]] == [new.serial]
    assert [c["serial"] for c in stats["reused"]] == [old[0].serial]  # old[1] carried nothing of this load
    assert (stats["pool"], stats["pooled"], len(stats["exchanges"])) == ("warm", 2, 2)
    assert json.loads(json.dumps(stats)) == stats  # they cross the control socket as JSON


# Real connections ----------------------------------------------------------------------


async def _loads(pool: str, sequence: list[tuple[Strategy, dict[str, str]]], tmp_path
                 ) -> tuple[list[dict[str, Any]], list[list[tuple[Any, bool]]], list[Seen]]:
    """One load of 4 requests per (strategy, addresses), configured as the runner does:
    each load's stats, the connection objects that carried it with whether each was
    closed when the last load ended (before the proxy stops), what the server saw."""
    authority = Authority(tmp_path / "tls")
    seen: list[Seen] = []
    server = await serve(1000, authority, seen)
    assert isinstance(server, asyncio.Server)
    port = server.sockets[0].getsockname()[1]
    addon = EdgeAddon(str(authority.ca_path), 18080)
    addon.pools = Pools(lambda strategy, addresses: Upstream(strategy, addresses, str(authority.ca_path), port=port))
    stats: list[dict[str, Any]] = []
    connections: list[list[Any]] = []
    try:
        for strategy, addresses in sequence:
            await addon.use(strategy, addresses, pool)
            assert addon.upstream is not None
            await asyncio.gather(*(addon.upstream.fetch(HOST, Request("GET", f"/r{i}", ())) for i in range(4)))
            stats.append(addon.stats())
            connections.append(list(addon.upstream.pools[HOST].connections))
        carried = [[(c, c.closed) for c in load] for load in connections]
    finally:
        await addon.done()
        server.close()
    return stats, carried, seen


def test_warm_reuses_the_same_connections_when_the_condition_comes_back(tmp_path):
    stats, carried, seen = asyncio.run(_loads("warm", [A, B, A], tmp_path))
    assert carried[2] == carried[0] and len(carried[0]) == 2  # the very same connection objects, open
    assert not any(closed for _, closed in carried[0])
    assert [len(s["connections"]) for s in stats] == [2, 1, 0]
    assert [len(s["reused"]) for s in stats] == [0, 0, 2] and stats[2]["pooled"] == 2
    assert {e["connection"] for e in stats[2]["exchanges"]} == {c["serial"] for c in stats[2]["reused"]}
    assert len(seen) == 3  # the server saw A's two connections and B's one, no more


def test_cold_closes_them_and_opens_new_ones(tmp_path):
    stats, carried, seen = asyncio.run(_loads("cold", [A, B, A], tmp_path))
    assert all(closed for _, closed in carried[0]) and len(carried[2]) == 2
    assert not {id(c) for c, _ in carried[2]} & {id(c) for c, _ in carried[0]}
    assert [len(s["connections"]) for s in stats] == [2, 1, 2]
    assert all(s["reused"] == [] and s["pooled"] == 0 for s in stats)
    assert len(seen) == 5


def test_a_warm_http10_pool_keeps_nothing(tmp_path):
    http10 = (Strategy(HTTP10, 2), {HOST: "127.0.0.1"})
    stats, _, seen = asyncio.run(_loads("warm", [http10, http10], tmp_path))
    assert [len(s["connections"]) for s in stats] == [4, 4]  # a connection per request, every load
    assert all(s["reused"] == [] and s["pooled"] == 0 for s in stats)
    assert len(seen) == 8
