"""The edge proxy's upstream strategies against a real TLS server on loopback that
behaves as nginx does at its `keepalive_requests` limit: it answers a few requests on a
connection, marks the last `Connection: close` and closes, whatever else was pipelined."""

from __future__ import annotations

import asyncio
import os
import ssl
from dataclasses import dataclass, field

import httptools
import pytest

from pagebench.edge.upstream import Request, Strategy, Upstream
from pagebench.lab.tls import Authority

HOST = "www.upstream.test"


@dataclass
class Seen:
    """What the server saw on one connection."""

    request_lines: list[str] = field(default_factory=list)
    waiting_at_first_answer: int = 0  # requests received when the first response was written


class _Requests:
    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.done: list[str] = []
        self.url = ""

    def on_url(self, url: bytes) -> None:
        self.url += url.decode()

    def on_message_complete(self) -> None:
        version = self.parser.get_http_version()
        self.done.append(f"{self.parser.get_method().decode()} {self.url} HTTP/{version}")
        self.url = ""


async def serve(limit: int, authority: Authority, connections: list[Seen], tls: bool = True) -> asyncio.AbstractServer:
    leaf = authority.leaf([HOST])
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(leaf.chain_path, leaf.key_path)
    context.set_alpn_protocols(["http/1.1"])

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen, requests, answered = Seen(), _Requests(), 0
        connections.append(seen)
        while answered < limit:
            data = await reader.read(65536)
            if not data:
                break
            requests.parser.feed_data(data)
            await asyncio.sleep(0.02)  # let pipelined requests pile up, as over a real link
            try:
                requests.parser.feed_data(await asyncio.wait_for(reader.read(65536), 0.001))
            except asyncio.TimeoutError:
                pass
            while requests.done and answered < limit:
                line = requests.done.pop(0)
                seen.request_lines.append(line)
                if answered == 0:
                    seen.waiting_at_first_answer = len(requests.done) + 1
                answered += 1
                last = answered == limit or line.endswith("HTTP/1.0")
                body = line.encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n%s\r\n%s"
                             % (len(body), b"Connection: close\r\n" if last else b"", body))
                if last:
                    answered = limit
        await writer.drain()
        writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context if tls else None)


async def fetch_all(strategy: Strategy, limit: int, count: int, tmp_path) -> tuple[list, Upstream, list[Seen]]:
    authority = Authority(tmp_path / "tls")
    connections: list[Seen] = []
    server = await serve(limit, authority, connections, tls=not strategy.cleartext)
    port = server.sockets[0].getsockname()[1]
    upstream = Upstream(strategy, {HOST: "127.0.0.1"}, str(authority.ca_path), port=port)
    try:
        answers = await asyncio.gather(*(
            upstream.fetch(HOST, Request("GET", f"/r{i}", (("Accept", "*/*"),))) for i in range(count)))
    finally:
        await upstream.close()
        server.close()
    return [response for response, _ in answers], upstream, connections


def test_pipelining_retries_what_a_closing_server_left_unanswered(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy("pipelining", 1, 10), 3, 10, tmp_path))
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/1.1" for i in range(10)]
    assert len(upstream.connections) == len(seen) == 4  # 3 + 3 + 3 + 1, one connection at a time
    assert seen[0].waiting_at_first_answer > 1  # really pipelined
    assert sum(e.retries for e in upstream.exchanges) > 0
    assert max(c.max_in_flight for c in upstream.connections) > 1


def test_keepalive_keeps_one_request_in_flight_per_connection(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy("keepalive", 2, 10), 100, 6, tmp_path))
    assert len(responses) == 6 and len(upstream.connections) == 2
    assert {c.max_in_flight for c in upstream.connections} == {1}
    assert all(s.waiting_at_first_answer == 1 for s in seen)
    assert sum(e.retries for e in upstream.exchanges) == 0


def test_http10_opens_a_connection_per_request(tmp_path):
    responses, upstream, seen = asyncio.run(fetch_all(Strategy("http1.0", 3, 1), 100, 5, tmp_path))
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/1.0" for i in range(5)]
    assert len(upstream.connections) == len(seen) == 5
    assert {e.protocol for e in upstream.exchanges} == {"http/1.0"}


@pytest.mark.parametrize("mode", ["http1.0", "keepalive", "pipelining"])
def test_a_cleartext_strategy_speaks_plain_http_to_a_plain_server(tmp_path, mode):
    # the server parses what arrives as HTTP: a TLS ClientHello would answer nothing
    responses, upstream, seen = asyncio.run(fetch_all(Strategy(mode, 1, 4, cleartext=True), 100, 3, tmp_path))
    version = "1.0" if mode == "http1.0" else "1.1"
    assert [r.body.decode() for r in responses] == [f"GET /r{i} HTTP/{version}" for i in range(3)]
    assert len(seen) == (3 if mode == "http1.0" else 1)


def test_a_cleartext_strategy_goes_to_port_80_unless_told(tmp_path):
    upstream = Upstream(Strategy("keepalive", cleartext=True), {HOST: "127.0.0.1"})
    try:  # whether anything answers on loopback port 80 does not matter: where it went does
        asyncio.run(upstream.fetch(HOST, Request("GET", "/", ())))
    except Exception:  # noqa: BLE001
        pass
    assert upstream.pools[HOST].port == 80
    assert Upstream(Strategy("keepalive"), {HOST: "127.0.0.1"}).port is None  # TLS: 443, the origins' port


def test_unknown_origin_is_refused(tmp_path):
    upstream = Upstream(Strategy("h2"), {HOST: "127.0.0.1"})
    with pytest.raises(Exception, match="not an origin of this load"):
        asyncio.run(upstream.fetch("other.test", Request("GET", "/", ())))


@pytest.mark.parametrize("fields", [{"mode": "spdy"}, {"mode": "h2", "connections": 0}, {"mode": "h2", "depth": 0}])
def test_strategy_is_checked(fields):
    with pytest.raises(ValueError):
        Strategy(**fields)


def test_the_proxy_says_how_it_is_scheduled_when_real_time_is_refused():
    from pagebench.edge.serve import realtime

    assert realtime(0) == "normal"
    assert realtime(100) == "normal (SCHED_FIFO 100 refused: Invalid argument)"  # 1..99 only
    assert os.sched_getscheduler(0) == os.SCHED_OTHER  # this process untouched
