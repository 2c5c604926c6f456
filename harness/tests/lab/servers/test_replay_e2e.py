"""Recorded sites replayed by real nginx and Caddy, answered by curl (and aioquic over
HTTP/3) from the client namespace: every recorded status, body, type and header, the 404
of an unrecorded request, loose query matching, the sidecars of gzip and br, 304
revalidation and the access log. The plan and its rendering: `test_replay.py`."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pagebench.core.encodings import BR, GZIP, IDENTITY, Encoding
from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE, Mode
from pagebench.core.servers import plan as serverplan, replay
from pagebench.core import encodings
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab import sites as sitefiles
from pagebench.lab.servers.caddy import CaddyServer
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.nginx import NginxServer, check_readable, with_certificate
from pagebench.lab.tls import Authority
from tests.helpers import needs_root
from tests.lab.servers.recorded import CDN, EXCHANGES, EXTENSIONS, LONG, ODD, PIPE, THINK, WWW, exchange

pytestmark = needs_root


MODES = (HTTP10, KEEPALIVE, H2, H3)
TLS = ("1.3", "1.2", "none")
ENCODINGS = (IDENTITY, GZIP, BR)
AE = "gzip, deflate, br, zstd"


@dataclass
class Lab:
    bed: NamespaceBed
    plan: ServerPlan
    ca: Path
    nginx: NginxServer
    caddy: CaddyServer

    def server(self, mode: Mode) -> NginxServer | CaddyServer:
        return self.caddy if mode is H3 else self.nginx


@dataclass
class Got:
    target: str
    status: int
    version: str
    headers: dict[str, str]  # lower-case names; repeated ones joined with ", "
    body: bytes
    info: dict = field(default_factory=dict)  # curl's -w %{json}: its times (s) among them

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@contextlib.contextmanager
def serving(data_dir: Path, site: sitefiles.Site, query: str, tag: str) -> Iterator[Lab]:
    authority = Authority(data_dir / "tls")
    server_plan = with_certificate(serverplan.plan([site], MODES, TLS, encodings=ENCODINGS, query=query), authority)
    check_readable(server_plan)
    with NamespaceBed(Layout(new_prefix(tag), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx") as nginx, \
                CaddyServer(bed, server_plan, bed.state_dir / "caddy", tcp=True) as caddy:
            yield Lab(bed, server_plan, authority.ca_path, nginx, caddy)


@pytest.fixture(scope="module")
def exact(data_dir: Path, site: sitefiles.Site, session_tag: str) -> Iterator[Lab]:
    with serving(data_dir, site, "exact", session_tag) as lab:
        yield lab


def get(lab: Lab, mode: Mode, tls: str, host: str, targets: list[str], headers: dict[str, str] | None = None,
        encoding: Encoding = IDENTITY, args: tuple[str, ...] = (), ipv6: bool = False) -> list[Got]:
    """GETs in one curl process (it reuses connections where the mode allows), each
    target sent exactly as written, bodies as sent (never decoded)."""
    binding = lab.plan.address(mode, tls, host, encoding=encoding)
    http = ("--http2-prior-knowledge" if mode is H2 else "--http1.1") if tls == "none" else \
        ("--http2" if mode in (H2, H3) else "--http1.1")
    scheme = "http" if tls == "none" else "https"
    with tempfile.TemporaryDirectory(prefix="pagebench-curl-") as tmp:
        argv = ["curl", "-sS", "--max-time", "20", "--path-as-is", "-g", http, "--cacert", str(lab.ca),
                "--resolve", f"{host}:{binding.port}:{f'[{binding.ip6}]' if ipv6 else binding.ip}",
                "-w", "%{json}%{header_json}\n", *args]
        for name, value in (headers or {}).items():
            argv += ["-H", f"{name}: {value}"]
        for i, target in enumerate(targets):
            argv += [f"{scheme}://{host}{target}", "-o", f"{tmp}/{i}"]
        result = subprocess.run(lab.bed.exec_argv(lab.bed.layout.client, argv), capture_output=True, text=True,
                                timeout=60)
        assert result.returncode == 0, (mode, tls, targets, result.stderr)
        decoder, out, pos, objects = json.JSONDecoder(), result.stdout, 0, []
        while out[pos:].strip():
            obj, pos = decoder.raw_decode(out, pos + len(out[pos:]) - len(out[pos:].lstrip()))
            objects.append(obj)
        got = []
        for i, target in enumerate(targets):
            info, sent = objects[2 * i], objects[2 * i + 1]
            body = Path(f"{tmp}/{i}").read_bytes() if Path(f"{tmp}/{i}").exists() else b""
            got.append(Got(target, info["response_code"], info["http_version"],
                           {name: ", ".join(values) for name, values in sent.items()}, body, info))
        return got


def logged(lab: Lab, mode: Mode, offset: int, count: int):
    """The server log after the transfers (a server logs when the response is done)."""
    server = lab.server(mode)
    for _ in range(100):
        log = server.connections_since(offset)
        if log.requests >= count:
            return log
        time.sleep(0.02)
    return log


RECORDED = [(host, target) for host, target, *_ in EXCHANGES]
#: nginx's conditions (and Caddy's h3 routes over TCP); h2 with prior knowledge: curl 7.88
#: fails a second request on such a connection, so one target per process there.
CONDITIONS = [(HTTP10, "1.3"), (KEEPALIVE, "1.3"), (H2, "1.3"), (H2, "1.2"), (KEEPALIVE, "none"),
              (HTTP10, "none"), (H3, "1.3")]


def check_recorded(got: Got, host: str, negotiated: str = "") -> None:
    """A response is the exchange's: status, body, type and headers."""
    _, target, status, body, mime, headers, location = exchange(got.target, host)
    where = (host, got.target[:40], got.version)
    assert got.status == status, where
    assert got.header(UNRECORDED_HEADER) is None, where
    assert got.header("timing-allow-origin") == "*", where
    assert got.header("access-control-allow-origin") == headers.get("Access-Control-Allow-Origin", "*"), where
    for name, value in headers.items():
        if name.lower() not in replay.REPLAY_DROPPED and name != "Vary":
            assert got.header(name) == value, (where, name)
    # never the recorded Alt-Svc (Caddy's TCP test mode adds its own, with ma=)
    assert all("ma=" in part for part in (got.header("alt-svc") or "").split(",") if part), where
    if location is not None:
        assert got.header("location") == location, where
    if body is None:
        if status == 204:
            assert got.body == b"", where
        return
    coding = got.header("content-encoding") or ""
    assert coding == (negotiated if encodings.is_text(exchange_file(host, target)) else ""), (where, coding)
    assert encodings.decode(coding, got.body) == body, where
    if mime is None and got.header("server") == "Caddy":  # Go names a type where none is set: the extension's
        assert got.header("content-type") == "application/octet-stream", where
    else:
        assert got.header("content-type") == mime, where
    if coding:
        assert "accept-encoding" in (got.header("vary") or "").lower(), where
    if "Vary" in headers:
        assert headers["Vary"] in (got.header("vary") or ""), where
    if status == 200:
        assert got.header("etag") and got.header("last-modified"), where
    else:  # served as an error page: nothing to revalidate
        assert got.header("etag") is None and got.header("last-modified") is None, where


def exchange_file(host: str, target: str) -> str:
    _, _, _, _, mime, _, _ = exchange(target, host)
    return "x." + (EXTENSIONS[mime] if mime else "bin")


@pytest.mark.parametrize("mode,tls", CONDITIONS, ids=str)
def test_every_exchange_is_answered_as_recorded_and_logged_as_requested(exact: Lab, mode: Mode, tls: str):
    for host in (WWW, CDN):
        targets = [target for h, target in RECORDED if h == host]
        offset = exact.server(mode).log_offset()
        got = get(exact, mode, tls, host, targets)
        for response in got:
            check_recorded(response, host)
            assert response.version == ("2" if mode in (H2, H3) else "1.1")
        log = logged(exact, mode, offset, len(targets))
        assert [(r.host, r.uri, r.status) for r in log.records] == [(host, g.target, g.status) for g in got]
        if mode is HTTP10:
            assert log.connections == len(targets)
        else:
            assert log.connections == 1


def test_cleartext_h2_answers_with_prior_knowledge(exact: Lab):
    for target in ("/", "/style.css?v=1", ODD, "/old", "/gone.png"):
        (got,) = get(exact, H2, "none", WWW, [target])
        assert got.version == "2"
        check_recorded(got, WWW)


@pytest.mark.parametrize("mode", [H2, H3], ids=str)
def test_unrecorded_requests_are_404_with_the_marker(exact: Lab, mode: Mode):
    targets = ["/style.css?v=2", "/style.css", "/Style.css?v=1", "/CASE.txt", "/nothing", "/api/items?page=3",
               "/pipe%7Cx.txt?", LONG + "x", LONG[:-1], "//pb-replay/0", "//pb-replay/unrecorded", "/pb-replay/0"]
    offset = exact.server(mode).log_offset()
    got = get(exact, mode, "1.3", WWW, targets)
    for response in got:
        assert response.status == 404, response.target[:40]
        assert response.header(UNRECORDED_HEADER) == UNRECORDED_VALUE, (mode, response.target[:40])
        assert response.header("access-control-allow-origin") == "*" == response.header("timing-allow-origin")
    assert [r.status for r in logged(exact, mode, offset, len(targets)).records] == [404] * len(targets)
    (other_host,) = get(exact, mode, "1.3", CDN, ["/"])  # the entry's target, but not on this host
    assert other_host.status == 404 and other_host.header(UNRECORDED_HEADER) == UNRECORDED_VALUE


@pytest.mark.parametrize("mode", [KEEPALIVE, H2, H3], ids=str)
@pytest.mark.parametrize("encoding", [GZIP, BR], ids=str)
def test_text_is_sent_from_the_sidecar_the_request_allows(exact: Lab, mode: Mode, encoding: Encoding):
    token = encoding.token
    for host in (WWW, CDN):
        targets = [target for h, target in RECORDED if h == host]
        for response in get(exact, mode, "1.3", host, targets, {"Accept-Encoding": AE}, encoding=encoding):
            check_recorded(response, host, token)
            if response.header("content-encoding"):
                assert "Accept-Encoding" in response.header("vary")
        for response in get(exact, mode, "1.3", host, targets, {"Accept-Encoding": "identity"}, encoding=encoding):
            check_recorded(response, host)


@pytest.mark.parametrize("mode,tls", [(HTTP10, "1.3"), (KEEPALIVE, "1.2"), (H2, "1.3"), (H2, "none"),
                                      (H3, "1.3")], ids=str)
def test_a_revalidation_is_a_304_logged_for_the_requested_target(exact: Lab, mode: Mode, tls: str):
    for target in ("/", "/style.css?v=1"):
        (first,) = get(exact, mode, tls, WWW, [target])
        offset = exact.server(mode).log_offset()
        (again,) = get(exact, mode, tls, WWW, [target], {"If-None-Match": first.header("etag")})
        assert again.status == 304 and again.body == b"", (mode, target)
        assert again.header("cache-control") == exchange(target)[5]["Cache-Control"]
        log = logged(exact, mode, offset, 1)
        assert log.not_modified() == {f"{WWW}{target}"}  # what the runner marks revalidated
        assert log.statuses_for(target) == (304,)


@pytest.mark.parametrize("mode", [KEEPALIVE, H2, H3], ids=str)
def test_other_methods_are_answered_as_the_recording_answered_the_get(exact: Lab, mode: Mode):
    got = get(exact, mode, "1.3", WWW, ["/api/items?page=2", "/beacon?e=load", "/nothing"], args=("-X", "POST"))
    assert [(g.status, g.body) for g in got[:2]] == [(200, exchange("/api/items?page=2")[3]), (204, b"")]
    assert got[2].status == 404 and got[2].header(UNRECORDED_HEADER) == UNRECORDED_VALUE
    head = get(exact, mode, "1.3", WWW, ["/style.css?v=1"], args=("--head",))[0]
    assert head.status == 200 and head.header("content-type") == "text/css"  # (curl writes the head as the body)
    assert head.header("content-length") == str(len(exchange("/style.css?v=1")[3]))


#: A few GETs over HTTP/3 on one QUIC connection (aioquic, which mitmproxy brings): curl
#: 7.88 has no HTTP/3. Prints one JSON line per target: the headers and the body in hex.
H3_CLIENT = """
import asyncio, json, sys
from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration

class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3, self.streams = H3Connection(self._quic), {}

    def quic_event_received(self, event):
        for got in self.h3.handle_event(event):
            stream = self.streams.get(getattr(got, "stream_id", None))
            if isinstance(got, HeadersReceived) and stream:
                stream["headers"] += [(k.decode(), v.decode()) for k, v in got.headers]
            if isinstance(got, DataReceived) and stream:
                stream["body"] += got.data
            if stream and getattr(got, "stream_ended", False):
                stream["done"].set_result(None)

    async def get(self, host, target):
        sid = self._quic.get_next_available_stream_id()
        stream = self.streams[sid] = {"headers": [], "body": b"", "done": asyncio.get_running_loop().create_future()}
        self.h3.send_headers(sid, [(b":method", b"GET"), (b":scheme", b"https"), (b":authority", host.encode()),
                                   (b":path", target.encode())], end_stream=True)
        self.transmit()
        await asyncio.wait_for(stream["done"], 10)
        return {"headers": stream["headers"], "body": stream["body"].hex()}

async def main(ip, host, ca, targets):
    configuration = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=host)
    configuration.load_verify_locations(ca)
    async with connect(ip, 443, configuration=configuration, create_protocol=Client) as client:
        for target in targets:
            print(json.dumps(await client.get(host, target)), flush=True)

asyncio.run(main(*sys.argv[1:4], json.loads(sys.argv[4])))
"""


def get_h3(lab: Lab, host: str, targets: list[str]) -> list[Got]:
    binding = lab.plan.address(H3, "1.3", host)
    argv = [sys.executable, "-c", H3_CLIENT, binding.ip, host, str(lab.ca), json.dumps(targets)]
    result = subprocess.run(lab.bed.exec_argv(lab.bed.layout.client, argv), capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr[-2000:]
    got = []
    for target, line in zip(targets, result.stdout.splitlines(), strict=True):
        answer = json.loads(line)
        headers: dict[str, str] = {}
        for name, value in answer["headers"]:
            headers[name] = ", ".join(filter(None, [headers.get(name), value]))
        got.append(Got(target, int(headers.pop(":status")), "3", headers, bytes.fromhex(answer["body"])))
    return got


@pytest.mark.parametrize("mode", [HTTP10, KEEPALIVE, H2], ids=str)
def test_a_response_with_think_time_waits_it_after_the_request_and_not_before(exact: Lab, mode: Mode):
    """/Case.txt thinks 150 ms, /case.txt (as long) none: the first byte of the one comes
    at least that much later after its request was sent; the connection is not held.
    (nginx's timers count whole ms: 1 ms of slack.)"""
    think = THINK[(WWW, "/Case.txt")] / 1000
    slow, fast = get(exact, mode, "1.3", WWW, ["/Case.txt", "/case.txt"])
    assert (slow.status, slow.body, fast.body) == (200, b"upper\n", b"lower\n")
    waited = {got.target: got.info["time_starttransfer"] - got.info["time_pretransfer"] for got in (slow, fast)}
    assert waited["/Case.txt"] >= think - 0.001, waited
    assert waited["/Case.txt"] - waited["/case.txt"] >= think - 0.002, waited
    assert slow.info["time_appconnect"] < think / 2, slow.info  # the handshake went at once


def test_h3_over_quic_answers_as_over_tcp(exact: Lab):
    offset = exact.caddy.log_offset()
    targets = [target for host, target in RECORDED if host == WWW and target != LONG]  # aioquic: too long
    for response in get_h3(exact, WWW, [*targets, "/style.css?v=2", "/CASE.txt"]):
        if response.target in targets:
            check_recorded(response, WWW)
        else:
            assert response.status == 404 and response.header(UNRECORDED_HEADER) == UNRECORDED_VALUE
    log = logged(exact, H3, offset, len(targets) + 2)
    assert {r.protocol for r in log.records} == {"HTTP/3.0"} and log.connections == 1
    assert [r.uri for r in log.records] == [*targets, "/style.css?v=2", "/CASE.txt"]


def test_ipv6_listens_replay_too(exact: Lab):
    for mode in (H2, H3):
        (got,) = get(exact, mode, "1.3", WWW, [ODD], ipv6=True)
        check_recorded(got, WWW)


def test_loose_matching_answers_an_unrecorded_query_with_the_path_s_first_exchange(data_dir: Path, site,
                                                                                   session_tag: str):
    page1, page2, style = exchange("/api/items?page=1")[3], exchange("/api/items?page=2")[3], \
        exchange("/style.css?v=1")[3]
    cases = {"/api/items?page=9": page1, "/api/items": page1, "/api/items?page=2": page2, "/style.css?v=7": style,
             "/style.css": style, "/pipe|x.txt?cache=1": exchange(PIPE)[3], "/odd%20dir/a+b.js": exchange(ODD)[3]}
    with serving(data_dir, site, "loose", session_tag) as lab:
        for mode in (KEEPALIVE, H2, H3):
            got = get(lab, mode, "1.3", WWW, [*cases, "/nothing?x=1", "/Style.css?v=1", "/api/items/?page=1"])
            for response in got[:len(cases)]:
                assert (response.status, response.body) == (200, cases[response.target]), (mode, response.target)
                assert response.header(UNRECORDED_HEADER) is None
            for response in got[len(cases):]:
                assert response.status == 404 and response.header(UNRECORDED_HEADER) == UNRECORDED_VALUE, \
                    (mode, response.target)
