"""How the edge proxy's requests cross the link: one pool per origin, with the mode's
strategy. The part of the proxy that is pagebench's own (mitmproxy does the browser side).

    http1.0     a new connection per request, `HTTP/1.0` request line, no keep-alive
    keepalive   persistent HTTP/1.1 connections, one request in flight on each
    pipelining  persistent HTTP/1.1 connections, up to `depth` requests in flight on each,
                responses read in order; requests the server left unanswered when it
                closed are retried on a new connection
    h2          one multiplexed HTTP/2 connection

`connections` is the most connections open at once to one origin, for every strategy
(h2 needs one). A request takes an idle connection, else opens a new one while the
origin has fewer than `connections`, else queues (pipelining: joins the least loaded
connection with fewer than `depth` in flight). Only GETs are pipelined. Those decisions
are `strategy.py`'s; the connections are `http1.py` and `http2.py`.

Runs in mitmproxy's event loop (`addon.py`) but imports nothing of mitmproxy, so it is
tested on its own against real nginx. Every connection does a full TLS handshake (no
session resumption), as the origin servers are configured; with `cleartext` (a spec's
`tls: none`) none at all, on port 80, h2 with prior knowledge (RFC 9113 3.3).
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from dataclasses import dataclass, field

from pagebench.edge.connection import Connection, Job
from pagebench.edge.http1 import H1Connection
from pagebench.edge.http2 import H2Connection
from pagebench.edge.messages import ConnectionRecord, Exchange, Request, Response, UpstreamError
from pagebench.edge.strategy import OPEN, Strategy, choose, origin_port

#: How often a request is re-sent after its connection closed before answering it.
MAX_RETRIES = 3


class OriginPool:
    """The upstream connections to one origin and the requests waiting for them."""

    def __init__(self, upstream: Upstream, host: str, address: str, port: int = 443) -> None:
        self.upstream = upstream
        self.strategy = upstream.strategy
        self.host, self.address, self.port = host, address, port
        self.queue: deque[Job] = deque()
        self.connections: list[Connection] = []

    def tls_context(self, alpn: list[str]) -> ssl.SSLContext:
        return self.upstream.tls_context(alpn)

    async def fetch(self, request: Request, received_at: float | None = None) -> tuple[Response, Exchange]:
        exchange = Exchange(self.host, request.method, request.path, request.client, time.time(), received_at)
        self.upstream.exchanges.append(exchange)
        job = Job(request, exchange, asyncio.get_running_loop().create_future())
        self.queue.append(job)
        self._dispatch()
        try:
            response = await job.future
        except UpstreamError as error:
            exchange.error = str(error)
            raise
        return response, exchange

    def _dispatch(self) -> None:
        while self.queue:
            job = self.queue[0]
            connection = self._choose(job)
            if connection is None:
                return
            self.queue.popleft()
            connection.assign(job)

    def _choose(self, job: Job) -> Connection | None:
        loads = [len(c.in_flight) if c.can_take(job) else None for c in self.connections]
        chosen = choose(self.strategy, loads)
        if chosen == OPEN:
            return self._open()
        return None if chosen is None else self.connections[chosen]

    def _open(self) -> Connection:
        kind = self.strategy.mode
        protocol = kind.upstream_protocol or ""
        record = self.upstream.new_connection(self.host, self.address, protocol)
        connection: Connection
        if kind.multiplexed:
            connection = H2Connection(self, record)
        else:
            connection = H1Connection(self, record, protocol.removeprefix("http/"))
        self.connections.append(connection)
        return connection

    def answered(self, connection: Connection, job: Job, response: Response) -> None:
        job.exchange.done_at = time.time()
        job.exchange.status = response.status
        job.exchange.body_bytes = len(response.body)
        if not job.future.done():
            job.future.set_result(response)
        self._dispatch()

    def retry(self, job: Job, why: str) -> None:
        job.exchange.retries += 1
        if job.exchange.retries > MAX_RETRIES:
            if not job.future.done():
                job.future.set_exception(UpstreamError(f"{self.host}{job.request.path}: {why} "
                                                       f"(after {MAX_RETRIES} retries)"))
            return
        self.queue.appendleft(job)

    def connection_closed(self, connection: Connection, error: str | None) -> None:
        if connection in self.connections:
            self.connections.remove(connection)
        for job in reversed(connection.in_flight):
            self.retry(job, error or "the server closed the connection before answering")
        connection.in_flight.clear()
        if not self.upstream.closing:
            self._dispatch()

    async def close(self) -> None:
        """Close the connections; whatever was still waiting fails (the load is over)."""
        tasks = [c.task for c in self.connections]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for job in self.queue:
            if not job.future.done():
                job.future.set_exception(UpstreamError(f"{self.host}{job.request.path}: proxy reset"))
        self.queue.clear()


@dataclass
class Upstream:
    """Every origin pool of the proxy, for one strategy and one host -> address map,
    and the record of what crossed the link since the last reset."""

    strategy: Strategy
    addresses: dict[str, str]  # origin hostname -> server IP
    cafile: str | None = None
    port: int | None = None  # the origins' port: 443, or 80 for a cleartext strategy
    exchanges: list[Exchange] = field(default_factory=list)
    connections: list[ConnectionRecord] = field(default_factory=list)
    pools: dict[str, OriginPool] = field(default_factory=dict)
    closing: bool = False
    _contexts: dict[tuple[str, ...], ssl.SSLContext] = field(default_factory=dict)

    def tls_context(self, alpn: list[str]) -> ssl.SSLContext:
        key = tuple(alpn)
        if key not in self._contexts:
            context = ssl.create_default_context(cafile=self.cafile)
            if alpn:
                context.set_alpn_protocols(alpn)
            self._contexts[key] = context
        return self._contexts[key]

    def new_connection(self, host: str, address: str, protocol: str) -> ConnectionRecord:
        record = ConnectionRecord(len(self.connections) + 1, host, address, protocol, time.time())
        self.connections.append(record)
        return record

    def pool(self, host: str) -> OriginPool:
        """The pool of one origin of this load, made on first use (nothing opened yet)."""
        if host not in self.addresses:
            raise UpstreamError(f"{host}: not an origin of this load (known: {', '.join(sorted(self.addresses))})")
        if host not in self.pools:
            self.pools[host] = OriginPool(self, host, self.addresses[host], origin_port(self.strategy, self.port))
        return self.pools[host]

    async def fetch(self, host: str, request: Request, received_at: float | None = None) -> tuple[Response, Exchange]:
        return await self.pool(host).fetch(request, received_at)

    async def close(self) -> None:
        """Close every connection (a cold start for the next load)."""
        self.closing = True
        await asyncio.gather(*(pool.close() for pool in self.pools.values()))
        self.pools.clear()
