"""One upstream connection's life, whatever it speaks: opened (TLS or cleartext), served
until the server closes it or the proxy resets it, and every request it still held
handed back to its origin's pool. `http1` and `http2` say how requests cross it."""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from dataclasses import dataclass
from typing import Protocol

from pagebench.edge.messages import ConnectionRecord, Exchange, Request, Response, UpstreamError
from pagebench.edge.strategy import Strategy

READ_SIZE = 256 * 1024


@dataclass
class Job:
    """A request waiting for its response, and the record of its crossing."""

    request: Request
    exchange: Exchange
    future: asyncio.Future[Response]


class Origin(Protocol):
    """What a connection needs of its pool (`upstream.OriginPool`)."""

    strategy: Strategy
    host: str
    address: str
    port: int

    def tls_context(self, alpn: list[str]) -> ssl.SSLContext: ...

    def answered(self, connection: Connection, job: Job, response: Response) -> None: ...

    def retry(self, job: Job, why: str) -> None: ...

    def connection_closed(self, connection: Connection, error: str | None) -> None: ...


class Connection:
    """One upstream connection. Subclasses speak HTTP/1.x or HTTP/2."""

    protocol = ""
    #: The parser's errors that end the connection (its requests are retried).
    protocol_errors: tuple[type[Exception], ...] = ()

    def __init__(self, pool: Origin, record: ConnectionRecord) -> None:
        self.pool = pool
        self.record = record
        self.in_flight: deque[Job] = deque()
        self.reusable = True  # may take another request
        self.closed = False
        self.writer: asyncio.StreamWriter | None = None
        self.task = asyncio.ensure_future(self._run())

    def capacity(self, job: Job) -> int:
        raise NotImplementedError

    def can_take(self, job: Job) -> bool:
        return self.reusable and not self.closed and len(self.in_flight) < self.capacity(job)

    def assign(self, job: Job) -> None:
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
        except (OSError, ssl.SSLError, UpstreamError, *self.protocol_errors) as exc:
            error = f"{type(exc).__name__}: {exc}"
        finally:
            self.closed = True
            self.record.closed_at = time.time()
            if self.writer is not None:
                self.writer.close()
            self.pool.connection_closed(self, error)

    async def _serve(self) -> None:
        raise NotImplementedError

    def _send(self, job: Job) -> None:
        raise NotImplementedError
