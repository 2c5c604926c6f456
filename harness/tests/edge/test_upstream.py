"""The edge proxy's upstream strategies against a real TLS server on loopback that
behaves as nginx does at its `keepalive_requests` limit: it answers a few requests on a
connection, marks the last `Connection: close` and closes, whatever else was pipelined;
and against real nginx, that encoded bodies and the headers of revalidation and of
dictionaries cross every strategy untouched."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import httptools
import pytest

from pagebench.core import encodings, modes
from pagebench.core.layout import Layout, new_prefix
from pagebench.edge.upstream import Request, Strategy, Upstream
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.nginx import NginxServer, prepare
from pagebench.lab.tls import Authority
from tests.lab.servers.test_nginx import V1, V2, write_versioned_site

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


# Through the proxy's strategies to real nginx: encodings and revalidation untouched ------------

#: Run in the client namespace (where the proxy runs): every request through one strategy.
FETCH_SCRIPT = """
import asyncio, base64, json, sys
from pagebench.edge.upstream import Request, Strategy, Upstream
args = json.loads(sys.argv[1])
async def main():
    upstream = Upstream(Strategy(args["mode"]), args["addresses"], args["ca"])
    try:
        answers = await asyncio.gather(*(upstream.fetch(r["host"], Request("GET", r["path"], tuple(map(tuple,
            r["headers"])))) for r in args["requests"]))
    finally:
        await upstream.close()
    return [{"status": a.status, "headers": [[k.lower(), v] for k, v in a.headers],
             "body": base64.b64encode(a.body).decode()} for a, _ in answers]
print(json.dumps(asyncio.run(main())))
"""


@pytest.mark.integration
@pytest.mark.skipif(os.geteuid() != 0, reason="builds network namespaces: run as root")
@pytest.mark.parametrize("mode", ["http1.0", "keepalive", "pipelining", "h2"])
def test_encoded_responses_and_dictionary_headers_cross_untouched(mode, request):
    data = Path(tempfile.mkdtemp(prefix="pagebench-test-"))  # not pytest's 0700 tmp: nginx's workers read it
    os.chmod(data, 0o755)
    request.addfinalizer(lambda: shutil.rmtree(data, ignore_errors=True))
    site = write_versioned_site(data / "site")
    authority = Authority(data / "tls")
    origin = modes.get(mode).origin
    server_plan = prepare([site], [origin], ["1.3"], authority, encodings=["dcz"])
    v1, v2 = (server_plan.address(origin, "1.3", "www.enc.test", encoding="dcz", version=k) for k in (1, 2))
    dictionary = encodings.available_dictionary(V1["www.enc.test/css/a.css"])
    with NamespaceBed(Layout(new_prefix(), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx"):
            def through(binding, requests):
                args = {"mode": mode, "addresses": {"www.enc.test": binding.ip}, "ca": str(authority.ca_path),
                        "requests": [{"host": "www.enc.test", "path": p, "headers": h} for p, h in requests]}
                result = subprocess.run(bed.exec_argv(bed.layout.client, [sys.executable, "-c", FETCH_SCRIPT,
                                                                          json.dumps(args)]),
                                        capture_output=True, text=True, timeout=60)
                assert result.returncode == 0, result.stderr
                return [(a["status"], {k: v for k, v in a["headers"]}, base64.b64decode(a["body"]))
                        for a in json.loads(result.stdout)]

            ae = [["Accept-Encoding", "gzip, deflate, br, zstd, dcb, dcz"]]
            (_, first, _), (_, page, _) = through(v1, [("/js/b.js", ae), ("/", ae)])
            assert "rel=compression-dictionary" in page["link"]
            (s1, delta, body), (s2, _, unchanged) = through(v2, [
                ("/css/a.css", ae + [["Available-Dictionary", dictionary]]),
                ("/js/b.js", ae + [["If-None-Match", first["etag"]]])])
            assert (s1, delta["content-encoding"]) == (200, "dcz")
            assert delta["vary"] == "Accept-Encoding, Available-Dictionary"
            assert int(delta["content-length"]) == len(body)
            assert encodings.decode("dcz", body, V1["www.enc.test/css/a.css"]) == V2["www.enc.test/css/a.css"]
            assert (s2, unchanged) == (304, b"")
