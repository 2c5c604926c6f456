"""What crosses the edge proxy's upstream: a request and its response as values, and the
proxy's own record of each exchange and connection (what `pool.Lease.stats` reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pagebench.core.errors import PagebenchError


#: Request headers that belong to one hop, not to the request (RFC 9110 7.6.1), and
#: what the browser->proxy hop adds.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
                        "trailer", "transfer-encoding", "upgrade", "host"})


class UpstreamError(PagebenchError, RuntimeError):
    """A request could not be answered by its origin (one line: which and why)."""


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
class ConnectionRecord:
    """One upstream connection as the proxy opened it: its serial, origin and use."""

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
