"""The origin servers' access logs, read back as requests and connections per load.

Pure: text in, records out. nginx logs the tab-separated `nginxconf.LOG_FIELDS`; Caddy
(h3) logs JSON, one line per request, under a logger named for the binding (so for its
server address). Caddy has no connection serial: a QUIC connection is identified by the
client's (address, UDP port) at one server address, which `AccessRecord.connection`
encodes as one integer. A load's "server" connection count is the number of distinct
(server address, connection) pairs among the requests it logged.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from pagebench.core.servers import caddyconf
from pagebench.core.servers.nginxconf import LOG_FIELDS
from pagebench.core.layout import MAX_SERVER_IPS, origin_address, origin_address6

TLS_NAMES = {0x0303: "TLSv1.2", 0x0304: "TLSv1.3"}
QUIC_TLS = "TLSv1.3"


@dataclass(frozen=True)
class AccessRecord:
    """One request as an origin server logged it."""

    end: float  # $msec: when the request finished, epoch seconds
    request_time: float  # seconds from the first request byte to the last response byte
    server_addr: str
    connection: int  # nginx's connection serial number
    connection_requests: int  # requests so far on that connection (h2: streams)
    protocol: str  # $server_protocol: HTTP/1.1, HTTP/2.0
    tls: str  # $ssl_protocol: TLSv1.2, TLSv1.3, or - (cleartext)
    status: int
    body_bytes: int
    host: str
    uri: str
    method: str
    bytes_sent: int  # headers + body


@dataclass(frozen=True)
class ServerLog:
    """The requests logged during a load (for some hosts or addresses)."""

    records: tuple[AccessRecord, ...]
    malformed: int = 0

    @property
    def requests(self) -> int:
        return len(self.records)

    @property
    def connections(self) -> int:
        """Distinct (server address, $connection) pairs: the server's connection count."""
        return len({(r.server_addr, r.connection) for r in self.records})

    def tls_seen(self) -> frozenset[str]:
        """The TLS versions the servers logged, as a spec names them ("1.3", "none")."""
        return frozenset(r.tls.removeprefix("TLSv") if r.tls.startswith("TLSv") else "none" for r in self.records)

    def not_modified(self) -> frozenset[str]:
        """The requests answered 304 Not Modified, as "host/path?query"."""
        return frozenset(f"{r.host}{r.uri}" for r in self.records if r.status == 304)

    def connections_by_host(self) -> dict[str, int]:
        """Distinct connections per host."""
        pairs: dict[str, set[tuple[str, int]]] = {}
        for r in self.records:
            pairs.setdefault(r.host, set()).add((r.server_addr, r.connection))
        return {host: len(seen) for host, seen in sorted(pairs.items())}

    def statuses_for(self, path: str, host: str | None = None) -> tuple[int, ...]:
        """Statuses of the requests for `path` (query string ignored, in `path` too: an
        entry page's URL may have one), e.g. (304,) for a revalidated page."""
        path = path.split("?", 1)[0]
        return tuple(r.status for r in self.records
                     if r.uri.split("?", 1)[0] == path and host in (None, r.host))


def _unescaped(text: str) -> str:
    """A logged value as received: nginx logs `"`, `\\` and bytes outside printable ASCII as
    `\\xHH` (and `\\` itself so, which keeps it unambiguous)."""
    return re.sub(r"\\x([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), text) if "\\x" in text else text


def _nginx_record(line: str) -> AccessRecord | None:
    parts = line.split("\t")
    if len(parts) != len(LOG_FIELDS):
        return None
    f = dict(zip(LOG_FIELDS, parts))
    try:
        return AccessRecord(
            end=float(f["msec"]), request_time=float(f["request_time"]), server_addr=f["server_addr"],
            connection=int(f["connection"]), connection_requests=int(f["connection_requests"]),
            protocol=f["server_protocol"], tls=f["ssl_protocol"], status=int(f["status"]),
            body_bytes=int(f["body_bytes_sent"]), host=f["host"], uri=_unescaped(f["request_uri"]),
            method=f["request_method"], bytes_sent=int(f["bytes_sent"]),
        )
    except ValueError:
        return None


def parse_nginx_log(text: str) -> tuple[list[AccessRecord], int]:
    """Records from complete lines (a trailing partial line is left for next time),
    and how many lines did not parse."""
    complete = text[: text.rfind("\n") + 1]
    records, malformed = [], 0
    for line in complete.splitlines():
        if not line:
            continue
        record = _nginx_record(line)
        if record is None:
            malformed += 1
        else:
            records.append(record)
    return records, malformed


def summarize(records: Iterable[AccessRecord], hosts: Collection[str] | None = None,
              addresses: Collection[str] | None = None, malformed: int = 0) -> ServerLog:
    """Keep the records for these hosts and/or server addresses (None: all)."""
    kept = tuple(r for r in records
                 if (hosts is None or r.host in hosts) and (addresses is None or r.server_addr in addresses))
    return ServerLog(kept, malformed)


def connection_key(remote_ip: str, remote_port: int) -> int:
    """One integer per client (address, port): with the server address, a QUIC connection
    (a client that migrates its port mid-connection would count twice)."""
    return int(ipaddress.ip_address(remote_ip)) << 16 | remote_port


def _server_addr(logger: str, remote_ip: str) -> str | None:
    """The binding's address from its logger name, in the client's address family."""
    prefix = f"{caddyconf.ACCESS_LOGGER}.{caddyconf.LOGGER_PREFIX}"
    suffix = logger.removeprefix(prefix)
    if suffix == logger or not suffix.isdigit() or int(suffix) >= MAX_SERVER_IPS:
        return None
    return (origin_address6 if ":" in remote_ip else origin_address)(int(suffix))


def _host(authority: str) -> str:
    """Like nginx's $host: lower case, without the port."""
    host = authority.lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _caddy_record(entry: dict[str, Any], served: dict[int, int]) -> AccessRecord | None:
    request = entry["request"]
    server_addr = _server_addr(entry["logger"], request["remote_ip"])
    if server_addr is None:
        return None
    protocol, size = request["proto"], int(entry["size"])
    tls = TLS_NAMES.get(int((request.get("tls") or {}).get("version") or 0), "")
    if not tls and protocol.startswith("HTTP/3"):
        tls = QUIC_TLS  # Caddy 2.6 logged version 0 for HTTP/3 (2.11: 0x0304); QUIC v1 is always TLS 1.3
    connection = connection_key(request["remote_ip"], int(request["remote_port"]))
    record = AccessRecord(
        end=float(entry["ts"]), request_time=float(entry["duration"]), server_addr=server_addr,
        connection=connection, connection_requests=served.get(connection, 0) + 1, protocol=protocol, tls=tls,
        status=int(entry["status"]), body_bytes=size, host=_host(request["host"]), uri=request["uri"],
        method=request["method"], bytes_sent=size,  # Caddy logs the body size only
    )
    served[connection] = record.connection_requests
    return record


def parse_caddy_log(text: str) -> tuple[list[AccessRecord], int]:
    """Records from complete JSON lines (a trailing partial line is left for next time),
    and how many lines did not parse. `connection_requests` counts within `text`;
    `bytes_sent` is the body size (Caddy does not log header bytes)."""
    complete = text[: text.rfind("\n") + 1]
    records, malformed, served = [], 0, {}
    for line in complete.splitlines():
        if not line.strip():
            continue
        try:
            record = _caddy_record(json.loads(line), served)
        except (ValueError, KeyError, TypeError, AttributeError):
            record = None
        if record is None:
            malformed += 1
        else:
            records.append(record)
    return records, malformed


def parse_both(texts: tuple[str, str], hosts: Collection[str] | None = None,
          addresses: Collection[str] | None = None) -> ServerLog:
    """nginx's and Caddy's log text as one ServerLog."""
    records, malformed = parse_nginx_log(texts[0])
    quic, quic_malformed = parse_caddy_log(texts[1])
    return summarize([*records, *quic], hosts, addresses, malformed + quic_malformed)
