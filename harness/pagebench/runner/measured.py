"""A load as the runner measured it: the browser's raw records and what the link, the
servers and the edge proxy saw of it, read once the link has drained of it (`read`,
`rest`), before the next load's navigation; evaluated (`results`, pure) once that next
load has fired its `load` (`runner.run`)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core.measure import visual
from pagebench.core.measure.har import har
from pagebench.core.measure.metrics import LinkView, ProxyView, ServerView, evaluate
from pagebench.core.records import LoadResult, RawLoad
from pagebench.core.spec import plan as planner
from pagebench.edge.proxy import EdgeProxy, ProxyStats
from pagebench.lab.build import Origins
from pagebench.lab.servers.origins import Offset
from pagebench.link.emulator import LinkControl
from pagebench.link.counters import LinkCounters
from pagebench.results.artifacts import Evidence


@dataclass(frozen=True)
class Keep:
    """What evidence each measured load leaves in the store's artifact directory: its HAR
    (built from what the load collected anyway: milliseconds between loads), its frames
    (the screenshots its visual metrics come from: captured in every load unless off,
    docs/benchmarks.md measures what that costs), its Chrome trace (recorded during the
    load: it costs the browser CPU, so a traced run's timings are its own)."""

    har: bool = True
    trace: bool = False
    frames: bool = True

    def evidence(self, title: str, raws: list[RawLoad], results: list[LoadResult], creator: str,
                 browser: str | None) -> list[Evidence]:
        """Each client's HAR, frames (those that changed the screen) and trace of a measured
        load, as asked (frames are kept where frames were captured)."""
        if not self.har and not self.trace and not self.frames:
            return []
        return [Evidence(har=har(raw, result, title + (f" client {k}" if len(raws) > 1 else ""), creator, browser)
                         if self.har else None, trace=raw.trace if self.trace else None,
                         frames=visual.kept(raw.trace, result.visual_progress) if self.frames else None)
                for k, (raw, result) in enumerate(zip(raws, results))]


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


def read(link: LinkControl, origins: Origins) -> Reading:
    """The link's counters and the servers' log offset, once no packet is held."""
    return Reading(link.drained_counters(), origins.log_offset())


def rest(visit: planner.Visit, raws: list[RawLoad], started: float, before: Reading, after: Reading,
         origins: Origins, proxy: EdgeProxy | None, query: str) -> Measured:
    """What the link, the servers and the edge proxy saw of a load, between the readings
    before and after it (`read`: the link drained of it)."""
    delta = after.counters - before.counters  # raises if the delay program died: the link is down
    origins.check_alive()  # a load measured against dead servers is not kept
    if proxy is not None:
        proxy.check_alive()
    log = origins.connections_since(before.offset)  # up to now: no load since `after`
    # An app site's load counts only if its app is still well after it (`lab.servers.apps`).
    check_app = getattr(origins, "check_app", None)
    if check_app is not None:
        check_app(visit.condition.site, log.statuses_for(visit.document_path, urlsplit(visit.url).hostname))
    stats = proxy.stats() if visit.proxied and proxy is not None else None
    server = ServerView(log.connections, log.requests, log.statuses_for(visit.document_path),
                        log.not_modified(), log.tls_seen())
    return Measured.of(visit, raws, started, delta, server, stats, query)
