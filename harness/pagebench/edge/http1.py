"""HTTP/1.0 and 1.1 across the link: requests written in order, responses parsed in
order (httptools, llhttp). Under pipelining a connection carries up to `depth` GETs at
once (`strategy.h1_capacity`, `strategy.may_join`); requests the server left unanswered
when it closed (`Connection: close`) go back to the pool to be retried."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httptools

from pagebench.edge.connection import READ_SIZE, Connection, Job, Origin
from pagebench.edge.messages import HOP_BY_HOP, ConnectionRecord, Request, Response, UpstreamError
from pagebench.edge.strategy import h1_capacity, may_join


def request_bytes(request: Request, host: str, version: str) -> bytes:
    """The request as HTTP/1.x text; HTTP/1.0 carries no keep-alive."""
    lines = [f"{request.method} {request.path} HTTP/{version}", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in request.headers if name.lower() not in HOP_BY_HOP]
    if request.body or request.method in ("POST", "PUT", "PATCH"):
        lines.append(f"Content-Length: {len(request.body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + request.body


def closes(response: Response) -> bool:
    """Whether the server closes the connection after this response (`Connection: close`)."""
    return any(name.lower() == "connection" and "close" in value.lower() for name, value in response.headers)


class ResponseReader:
    """httptools (llhttp) callbacks: consecutive responses on one stream, in order.
    Bytes in, `on_response` called per response: no I/O of its own."""

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


class H1Connection(Connection):
    """HTTP/1.0 or 1.1: requests written in order, responses parsed in order."""

    protocol_errors = (httptools.HttpParserError,)

    def __init__(self, pool: Origin, record: ConnectionRecord, version: str) -> None:
        self.version = version
        self.protocol = f"http/{version}"
        self._pending_write: list[bytes] = []
        super().__init__(pool, record)

    def capacity(self, job: Job) -> int:
        return h1_capacity(self.pool.strategy, job.request.method)

    def can_take(self, job: Job) -> bool:
        return may_join(job.request.method, [j.request.method for j in self.in_flight]) and super().can_take(job)

    def assign(self, job: Job) -> None:
        super().assign(job)
        if self.version == "1.0":
            self.reusable = False  # one request per connection

    async def _serve(self) -> None:
        reader, self.writer = await self._open(["http/1.1"] if self.version == "1.1" else [])
        for job in self.in_flight:
            self._send(job)
        parser = ResponseReader(self._response)
        while True:
            data = await reader.read(READ_SIZE)
            if not data:
                parser.eof()
                return
            parser.feed(data)
            if not self.in_flight and not self.reusable:
                return

    def _send(self, job: Job) -> None:
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
        if closes(response):
            self.reusable = False  # the server closes after this one: the rest are retried
        self.pool.answered(self, job, response)
