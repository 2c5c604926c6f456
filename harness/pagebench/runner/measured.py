"""A load as the runner measured it: the browser's raw records and what the link, the
servers and the edge proxy saw of it, read once the link has drained of it; evaluated
(`results`, pure) while the next load's browser settles (`runner.run`)."""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.measure.metrics import LinkView, ProxyView, ServerView, evaluate
from pagebench.core.records import LoadResult, RawLoad
from pagebench.core.spec import plan as planner
from pagebench.edge.proxy import ProxyStats
from pagebench.lab.servers.origins import Offset
from pagebench.link.counters import LinkCounters


@dataclass(frozen=True)
class Reading:
    """The link's counters and the servers' log offset at one moment with no packet held:
    after one load, before the next."""

    counters: LinkCounters
    offset: Offset


@dataclass(frozen=True)
class Measured:
    """One planned load's clients as measured."""

    visit: planner.Visit
    raws: list[RawLoad]
    started: float
    link: LinkView
    server: ServerView
    proxy: tuple[ProxyView | None, ...]
    query: str

    @classmethod
    def of(cls, visit: planner.Visit, raws: list[RawLoad], started: float, delta: LinkCounters, server: ServerView,
           stats: ProxyStats | None, query: str) -> Measured:
        """From the link's counters over the load and the edge proxy's stats (when proxied)."""
        link = LinkView(delta.tcp_conns, delta.udp_flows, delta.as_dict())
        views = tuple(None if stats is None else ProxyView(stats.connection_count, len(stats.exchanges),
                                                           stats.for_client(client).exchanges, len(stats.reused))
                      for client in range(len(raws)))
        return cls(visit, raws, started, link, server, views, query)

    def results(self) -> list[LoadResult]:
        """Each client's load evaluated (`core.measure.metrics.evaluate`: the checks and the
        metrics, its visual ones included)."""
        visit = self.visit
        return [evaluate(visit.condition, raw, self.link, self.server, view, expect_delta=visit.expect_delta,
                         versioned=visit.versioned, recording=visit.recording, query=self.query, app=visit.app)
                for raw, view in zip(self.raws, self.proxy)]
