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
connection with fewer than `depth` in flight). Only GETs are pipelined.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
import httptools

from pagebench.core import modes
from pagebench.core.errors import PagebenchError
from pagebench.core.modes import Mode

#: The modes the edge proxy carries across the link (those that run in the proxy topology).
STRATEGIES = tuple(mode.name for mode in modes.in_topology("proxy"))
#: Request headers that belong to one hop, not to the request (RFC 9110 7.6.1), and
#: what the browser->proxy hop adds.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "host"})
#: How often a request is re-sent after its connection closed before answering it.
MAX_RETRIES = 3
#: Chromium's own HTTP/2 settings, so the h2 strategy's flow control matches a browser's.
H2_STREAM_WINDOW = 6 * 1024 * 1024
H2_CONNECTION_WINDOW = 15 * 1024 * 1024
READ_SIZE = 256 * 1024


class UpstreamError(PagebenchError, RuntimeError):
    """A request could not be answered by its origin (one line: which and why)."""


@dataclass(frozen=True)
class Strategy:
    mode: str  # one of STRATEGIES
    connections: int = 6
    depth: int = 1
    cleartext: bool = False  # plain HTTP across the link (the browser's hop stays TLS)

    @property
    def kind(self) -> Mode:
        return modes.get(self.mode)

    def __post_init__(self) -> None:
        if self.mode not in STRATEGIES:
            raise ValueError(f"mode {self.mode!r}: allowed {', '.join(STRATEGIES)}")
        if self.connections < 1 or self.depth < 1:
            raise ValueError("connections and depth must be at least 1")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""
    client: int = 0  # which browser client (aggregation)


@dataclass(frozen=True)
class Response:
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes


@dataclass
class Exchange:
    """One request as it crossed the link: the proxy's own record of it."""

    host: str
    method: str
    path: str
    client: int
    queued_at: float  # the strategy got it
    received_at: float | None = None  # the proxy read it from the browser (its own cost before queued_at)
    connection: int | None = None
    protocol: str = ""
    sent_at: float | None = None
    done_at: float | None = None
    status: int | None = None
    body_bytes: int = 0
    retries: int = 0
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Job:
    request: Request
    exchange: Exchange
    future: asyncio.Future[Response]


@dataclass
class ConnectionRecord:
    serial: int
    host: str
    address: str
    protocol: str
    opened_at: float
    closed_at: float | None = None
    requests: int = 0
    max_in_flight: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def request_bytes(request: Request, host: str, version: str) -> bytes:
    """The request as HTTP/1.x text; HTTP/1.0 carries no keep-alive."""
    lines = [f"{request.method} {request.path} HTTP/{version}", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in request.headers if name.lower() not in HOP_BY_HOP]
    if request.body or request.method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(request.body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + request.body


class _ResponseReader:
    """httptools (llhttp) callbacks: consecutive responses on one stream, in order."""

    def __init__(self, on_response: Callable[[Response], None]) -> None:
        self.on_response = on_response
        self.parser = httptools.HttpResponseParser(self)
        self._reset()

    def _reset(self) -> None:
        self.headers: list[tuple[str, str]] = []
        self.body: list[bytes] = []
        self.headers_done = False
        self.started = False

    def feed(self, data: bytes) -> None:
        self.parser.feed_data(data)

    def on_message_begin(self) -> None:
        self.started = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name.decode("latin-1"), value.decode("latin-1")))

    def on_headers_complete(self) -> None:
        self.headers_done = True

    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        response = Response(self.parser.get_status_code(), tuple(self.headers), b"".join(self.body))
        self._reset()
        self.on_response(response)

    def eof(self) -> None:
        """A response delimited by the connection's close ends here."""
        if self.headers_done:
            self.on_message_complete()


class _Connection:
    """One upstream connection. Subclasses speak HTTP/1.x or HTTP/2."""

    protocol = ""

    def __init__(self, pool: OriginPool, record: ConnectionRecord) -> None:
        self.pool = pool
        self.record = record
        self.in_flight: deque[_Job] = deque()
        self.reusable = True  # may take another request
        self.closed = False
        self.writer: asyncio.StreamWriter | None = None
        self.task = asyncio.ensure_future(self._run())

    def capacity(self, job: _Job) -> int:
        raise NotImplementedError

    def can_take(self, job: _Job) -> bool:
        return self.reusable and not self.closed and len(self.in_flight) < self.capacity(job)

    def assign(self, job: _Job) -> None:
        job.exchange.connection = self.record.serial
        job.exchange.protocol = self.protocol
        self.in_flight.append(job)
        self.record.requests += 1
        self.record.max_in_flight = max(self.record.max_in_flight, len(self.in_flight))
        if self.writer is not None:
            self._send(job)

    async def _open(self, alpn: list[str]) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.pool.strategy.cleartext:
            return await asyncio.open_connection(self.pool.address, self.pool.port, limit=READ_SIZE)
        context = self.pool.tls_context(alpn)
        return await asyncio.open_connection(self.pool.address, self.pool.port, ssl=context,
                                             server_hostname=self.pool.host, limit=READ_SIZE)

    async def _run(self) -> None:
        error: str | None = None
        try:
            await self._serve()
        except asyncio.CancelledError:
            error = "proxy reset"
        except (OSError, ssl.SSLError, h2.exceptions.ProtocolError, httptools.HttpParserError,
                UpstreamError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self.closed = True
            self.record.closed_at = time.time()
            if self.writer is not None:
                self.writer.close()
            self.pool.connection_closed(self, error)

    async def _serve(self) -> None:
        raise NotImplementedError

    def _send(self, job: _Job) -> None:
        raise NotImplementedError


class H1Connection(_Connection):
    """HTTP/1.0 or 1.1: requests written in order, responses parsed in order."""

    def __init__(self, pool: OriginPool, record: ConnectionRecord, version: str) -> None:
        self.version = version
        self.protocol = f"http/{version}"
        self._pending_write: list[bytes] = []
        super().__init__(pool, record)

    def capacity(self, job: _Job) -> int:
        strategy = self.pool.strategy
        if strategy.kind.pipelined and job.request.method == "GET":
            return strategy.depth
        return 1

    def can_take(self, job: _Job) -> bool:
        # Only GETs join a pipeline, and nothing joins behind a non-GET.
        if self.in_flight and (job.request.method != "GET"
                               or any(j.request.method != "GET" for j in self.in_flight)):
            return False
        return super().can_take(job)

    def assign(self, job: _Job) -> None:
        super().assign(job)
        if self.version == "1.0":
            self.reusable = False  # one request per connection

    async def _serve(self) -> None:
        reader, self.writer = await self._open(["http/1.1"] if self.version == "1.1" else [])
        for job in self.in_flight:
            self._send(job)
        parser = _ResponseReader(self._response)
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                parser.eof()
                return
            parser.feed(data)
            if not self.in_flight and not self.reusable:
                return

    def _send(self, job: _Job) -> None:
        """Requests written in the same event-loop turn leave in one write (one segment
        when they fit), as a pipelining client batches them."""
        job.exchange.sent_at = time.time()
        if not self._pending_write:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending_write.append(request_bytes(job.request, self.pool.host, self.version))

    def _flush(self) -> None:
        if self.writer is not None and not self.closed and self._pending_write:
            self.writer.write(b"".join(self._pending_write))
        self._pending_write.clear()

    def _response(self, response: Response) -> None:
        if not self.in_flight:
            raise UpstreamError(f"{self.pool.host}: a response nobody asked for")
        job = self.in_flight.popleft()
        if any(name.lower() == "connection" and "close" in value.lower() for name, value in response.headers):
            self.reusable = False  # the server closes after this one: the rest are retried
        self.pool.answered(self, job, response)


class H2Connection(_Connection):
    """One HTTP/2 connection carrying every request to its origin."""

    protocol = modes.H2.upstream_protocol or ""

    def __init__(self, pool: OriginPool, record: ConnectionRecord) -> None:
        # Headers come from Chromium and nginx as they are: checking them again in Python
        # would only add to the proxy's cost per request.
        config = h2.config.H2Configuration(client_side=True, header_encoding="utf-8", validate_outbound_headers=False,
                                           normalize_outbound_headers=False, validate_inbound_headers=False,
                                           normalize_inbound_headers=False)
        self.h2 = h2.connection.H2Connection(config)
        self.max_streams = 100  # until the server's SETTINGS say otherwise
        self.streams: dict[int, _Job] = {}
        self.partial: dict[int, tuple[int, list[tuple[str, str]], list[bytes]]] = {}
        super().__init__(pool, record)

    def capacity(self, job: _Job) -> int:
        return self.max_streams

    async def _serve(self) -> None:
        reader, self.writer = await self._open([self.protocol])
        tls = self.writer.get_extra_info("ssl_object")
        if tls is not None and tls.selected_alpn_protocol() != self.protocol:
            raise UpstreamError(f"{self.pool.host}: the server did not negotiate {self.protocol}")
        self.h2.local_settings = h2.settings.Settings(client=True, initial_values={
            h2.settings.SettingCodes.ENABLE_PUSH: 0,
            h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: H2_STREAM_WINDOW,
            h2.settings.SettingCodes.HEADER_TABLE_SIZE: 65536,
        })
        self.h2.initiate_connection()
        self.h2.increment_flow_control_window(H2_CONNECTION_WINDOW - 65535)
        for job in self.in_flight:
            self._send(job)
        self._write()
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                return
            for event in self.h2.receive_data(data):
                self._event(event)
            self._write()
            if not self.reusable and not self.in_flight:
                return

    def _write(self) -> None:
        data = self.h2.data_to_send()
        if data and self.writer is not None:
            self.writer.write(data)

    def _send(self, job: _Job) -> None:
        job.exchange.sent_at = time.time()
        request = job.request
        stream = self.h2.get_next_available_stream_id()
        scheme = "http" if self.pool.strategy.cleartext else "https"
        headers = [(":method", request.method), (":scheme", scheme), (":authority", self.pool.host),
                   (":path", request.path)]
        headers += [(name.lower(), value) for name, value in request.headers
                    if name.lower() not in HOP_BY_HOP and not name.startswith(":")]
        self.h2.send_headers(stream, headers, end_stream=not request.body)
        if request.body:
            self.h2.send_data(stream, request.body, end_stream=True)
        self.streams[stream] = job
        self._write()

    def _event(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.ResponseReceived):
            headers = [(str(k), str(v)) for k, v in event.headers]
            status = int(dict(headers)[":status"])
            self.partial[event.stream_id] = (status, [(k, v) for k, v in headers if not k.startswith(":")], [])
        elif isinstance(event, h2.events.DataReceived):
            if event.stream_id in self.partial:
                self.partial[event.stream_id][2].append(event.data)
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            job = self.streams.pop(event.stream_id, None)
            status, headers, body = self.partial.pop(event.stream_id, (502, [], []))
            if job is not None:
                self.in_flight.remove(job)
                self.pool.answered(self, job, Response(status, tuple(headers), b"".join(body)))
        elif isinstance(event, h2.events.StreamReset):
            job = self.streams.pop(event.stream_id, None)
            self.partial.pop(event.stream_id, None)
            if job is not None:
                self.in_flight.remove(job)
                self.pool.retry(job, f"stream reset ({event.error_code})")
        elif isinstance(event, h2.events.RemoteSettingsChanged):
            changed = event.changed_settings.get(h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS)
            if changed is not None:
                self.max_streams = changed.new_value
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.reusable = False


class OriginPool:
    """The upstream connections to one origin and the requests waiting for them."""

    def __init__(self, upstream: Upstream, host: str, address: str, port: int = 443) -> None:
        self.upstream = upstream
        self.strategy = upstream.strategy
        self.host, self.address, self.port = host, address, port
        self.queue: deque[_Job] = deque()
        self.connections: list[_Connection] = []

    def tls_context(self, alpn: list[str]) -> ssl.SSLContext:
        return self.upstream.tls_context(alpn)

    async def fetch(self, request: Request, received_at: float | None = None) -> tuple[Response, Exchange]:
        exchange = Exchange(self.host, request.method, request.path, request.client, time.time(), received_at)
        self.upstream.exchanges.append(exchange)
        job = _Job(request, exchange, asyncio.get_running_loop().create_future())
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

    def _choose(self, job: _Job) -> _Connection | None:
        usable = [c for c in self.connections if c.can_take(job)]
        idle = [c for c in usable if not c.in_flight]
        if idle:
            return idle[0]
        if len(self.connections) < self.strategy.connections and (not self.strategy.kind.multiplexed or not usable):
            return self._open()
        return min(usable, key=lambda c: len(c.in_flight)) if usable else None

    def _open(self) -> _Connection:
        kind = self.strategy.kind
        protocol = kind.upstream_protocol or ""
        record = self.upstream.new_connection(self.host, self.address, protocol)
        connection: _Connection
        if kind.multiplexed:
            connection = H2Connection(self, record)
        else:
            connection = H1Connection(self, record, protocol.removeprefix("http/"))
        self.connections.append(connection)
        return connection

    def answered(self, connection: _Connection, job: _Job, response: Response) -> None:
        job.exchange.done_at = time.time()
        job.exchange.status = response.status
        job.exchange.body_bytes = len(response.body)
        if not job.future.done():
            job.future.set_result(response)
        self._dispatch()

    def retry(self, job: _Job, why: str) -> None:
        job.exchange.retries += 1
        if job.exchange.retries > MAX_RETRIES:
            if not job.future.done():
                job.future.set_exception(UpstreamError(f"{self.host}{job.request.path}: {why} "
                                                       f"(after {MAX_RETRIES} retries)"))
            return
        self.queue.appendleft(job)

    def connection_closed(self, connection: _Connection, error: str | None) -> None:
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

    async def fetch(self, host: str, request: Request, received_at: float | None = None) -> tuple[Response, Exchange]:
        if host not in self.addresses:
            raise UpstreamError(f"{host}: not an origin of this load (known: {', '.join(sorted(self.addresses))})")
        if host not in self.pools:
            port = self.port or (80 if self.strategy.cleartext else 443)
            self.pools[host] = OriginPool(self, host, self.addresses[host], port)
        return await self.pools[host].fetch(request, received_at)

    async def close(self) -> None:
        """Close every connection (a cold start for the next load)."""
        self.closing = True
        await asyncio.gather(*(pool.close() for pool in self.pools.values()))
        self.pools.clear()
