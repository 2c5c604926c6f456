"""A real TLS (or plain) HTTP/1.1 server on loopback for the edge proxy's tests. It
behaves as nginx does at its `keepalive_requests` limit: it answers `limit` requests on
a connection, marks the last `Connection: close` and closes, whatever else was
pipelined; each body is the request line it answers."""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass, field

import httptools

from pagebench.edge.messages import Request, Response
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream
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
            with contextlib.suppress(asyncio.TimeoutError):  # nothing more within 1 ms: answer what came
                requests.parser.feed_data(await asyncio.wait_for(reader.read(65536), 0.001))
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


async def fetch_all(strategy: Strategy, limit: int, count: int, tmp_path) -> tuple[list[Response], Upstream, list[Seen]]:
    """`count` GETs at once through `strategy` to a server answering `limit` per connection."""
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
