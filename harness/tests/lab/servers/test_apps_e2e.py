"""An app site's terminators with real curl: nginx (HTTP/1.0, keep-alive, HTTP/2) and
Caddy (its h3 servers' routes, over TCP here: curl 7.88 has no HTTP/3) in front of the
user's own process (`tests/runner/shopapp.py`), compared with what the app answers on its
own port: the same status, body and headers but for those docs/apps.md lists (hop-by-hop
framing), the origin's name as Host, the app's chunks as the app times them, and the
app running as nobody in the spec's directory, gone with its workers when stopped."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aioquic.asyncio import QuicConnectionProtocol, connect
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration

from pagebench.core.layout import Layout, new_prefix
from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE, Mode
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab import sites as sitefiles
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.apps import AppError, AppServers, in_namespace
from pagebench.lab.servers.caddy import CaddyServer
from pagebench.lab.servers.nginx import NginxServer, prepare
from pagebench.lab.tls import Authority
from tests.helpers import needs_root, readable_dir

pytestmark = needs_root
APP = Path(__file__).parents[2] / "runner" / "shopapp.py"
ORIGINS = ["shop.test", "static.shop.test"]
#: What each terminator's response differs in from the app's own (docs/apps.md).
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding"}


@dataclass
class Fronted:
    bed: NamespaceBed
    plan: ServerPlan
    apps: AppServers
    ca: Path
    spec_dir: Path


@pytest.fixture(scope="module")
def fronted(session_tag: str) -> Iterator[Fronted]:
    with readable_dir() as spec_dir:
        shutil.copy(APP, spec_dir / "shopapp.py")
        entry = {"name": "shop", "origins": ORIGINS,
                 "app": {"command": f"{sys.executable} shopapp.py {{port}} --worker", "ready": "/health"}}
        site = sitefiles.resolve(entry, spec_dir)
        authority = Authority(spec_dir / "tls")
        server_plan = prepare([site], [HTTP10, KEEPALIVE, H2, H3], ["1.3"], authority)
        with NamespaceBed(Layout(new_prefix(session_tag), server_ips=server_plan.ip_count)) as bed:
            apps = AppServers(bed, server_plan, bed.state_dir / "apps")
            apps.start()
            try:
                nginx = NginxServer(bed, server_plan, bed.state_dir / "nginx")
                nginx.upstreams = apps.upstreams
                with nginx:
                    caddy = CaddyServer(bed, nginx.plan, bed.state_dir / "caddy", tcp=True)
                    caddy.upstreams = apps.upstreams
                    with caddy:
                        yield Fronted(bed, nginx.plan, apps, authority.ca_path, spec_dir)
            finally:
                apps.stop()


@dataclass
class Answer:
    status: int
    headers: list[tuple[str, str]]  # lower-case names, in order
    body: bytes
    seconds: float

    def names(self) -> set[str]:
        return {name for name, _ in self.headers}

    def header(self, name: str) -> str | None:
        return next((value for n, value in self.headers if n == name), None)


def _curl(fronted: Fronted, ns: str, url: str, *args: str) -> Answer:
    out = fronted.bed.state_dir / "curl"
    out.mkdir(exist_ok=True)
    argv = ["curl", "-sS", "--max-time", "20", "-D", str(out / "headers"), "-o", str(out / "body"),
            "-w", "%{response_code}", "-H", "Accept-Encoding: gzip", *args, url]
    started = time.monotonic()
    result = subprocess.run(fronted.bed.exec_argv(ns, argv), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    seconds = time.monotonic() - started
    block = (out / "headers").read_text().strip().split("\r\n\r\n")[-1].splitlines()[1:]
    headers = [(line.split(":", 1)[0].strip().lower(), line.split(":", 1)[1].strip()) for line in block]
    return Answer(int(result.stdout), headers, (out / "body").read_bytes(), seconds)


def own(fronted: Fronted, host: str, path: str) -> Answer:
    """What the app answers on its own port (in the server namespace), Host as the browser's."""
    address = fronted.apps.upstreams["shop"]
    return _curl(fronted, fronted.bed.layout.server, f"http://{address}{path}", "--http1.1", "-H", f"Host: {host}")


def fronted_by(fronted: Fronted, mode: Mode, host: str, path: str, *args: str) -> Answer:
    """What the browser's side gets through `mode`'s terminator (h3: Caddy over TCP)."""
    binding = fronted.plan.address(mode, "1.3", host)
    return _curl(fronted, fronted.bed.layout.client, f"https://{host}{path}", "--resolve",
                 f"{host}:443:{binding.ip}", "--cacert", str(fronted.ca), *args)


CASES = [(HTTP10, "--http1.1"), (KEEPALIVE, "--http1.1"), (H2, "--http2"), (H3, "--http2"), (H3, "--http1.1")]


@pytest.mark.parametrize("mode,version", CASES, ids=[f"{m.name}{v}" for m, v in CASES])
def test_the_apps_response_arrives_unchanged_but_for_framing(fronted, mode, version):
    for host, path in (("shop.test", "/"), ("shop.test", "/app.js"), ("static.shop.test", "/logo.svg"),
                       ("shop.test", "/missing")):
        app, got = own(fronted, host, path), fronted_by(fronted, mode, host, path, version)
        assert (got.status, got.body) == (app.status, app.body), (mode, path)
        framing = HOP_BY_HOP | {"date"} | ({"alt-svc"} if mode is H3 else set())  # Caddy's, over TCP only
        mine = sorted((n, v) for n, v in app.headers if n not in framing)
        theirs = sorted((n, v) for n, v in got.headers if n not in framing)
        assert theirs == mine, (mode.name, version, path)  # the same headers and values (nginx puts
        # Server and Date first)
        assert got.header("date") is not None and got.header("server") == app.header("server")
        added = got.names() - app.names()
        if mode is HTTP10:
            assert got.header("connection") == "close"  # a connection per request, as the mode says
        assert added <= {"connection"} | ({"alt-svc"} if mode is H3 else set()), (mode.name, version, added)
    assert fronted_by(fronted, mode, "shop.test", "/app.js", version).header("content-encoding") == "gzip"


def h3_get(fronted: Fronted, host: str, path: str) -> Answer:
    """One GET over real HTTP/3 (aioquic, mitmproxy's QUIC stack) from the client namespace."""
    binding = fronted.plan.address(H3, "1.3", host)

    async def get() -> Answer:
        answer = Answer(0, [], b"", 0.0)
        done = asyncio.get_running_loop().create_future()

        class Client(QuicConnectionProtocol):
            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, **kwargs)
                self.h3 = H3Connection(self._quic)

            def quic_event_received(self, event) -> None:
                for h3_event in self.h3.handle_event(event):
                    if isinstance(h3_event, HeadersReceived):
                        for name, value in h3_event.headers:
                            if name == b":status":
                                answer.status = int(value)
                            else:
                                answer.headers.append((name.decode(), value.decode()))
                    elif isinstance(h3_event, DataReceived):
                        answer.body += h3_event.data
                    if getattr(h3_event, "stream_ended", False) and not done.done():
                        done.set_result(None)

        config = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, server_name=host)
        config.load_verify_locations(str(fronted.ca))
        async with connect(binding.ip, 443, configuration=config, create_protocol=Client) as client:
            stream = client._quic.get_next_available_stream_id()
            client.h3.send_headers(stream, [(b":method", b"GET"), (b":scheme", b"https"),
                                            (b":authority", host.encode()), (b":path", path.encode()),
                                            (b"accept-encoding", b"gzip")], end_stream=True)
            client.transmit()
            await asyncio.wait_for(done, 10)
        return answer

    return in_namespace(fronted.bed.layout.client, lambda: asyncio.run(get()))


def test_over_real_http3_caddy_adds_nothing(fronted):
    """Caddy's Alt-Svc is for TCP responses only (the checks above): over QUIC, the app's
    headers exactly (HTTP/3 has no hop-by-hop ones)."""
    for host, path in (("shop.test", "/"), ("shop.test", "/app.js")):
        app, got = own(fronted, host, path), h3_get(fronted, host, path)
        assert (got.status, got.body) == (app.status, app.body)
        mine = sorted((n, v) for n, v in app.headers if n not in HOP_BY_HOP | {"date"})
        assert sorted((n, v) for n, v in got.headers if n != "date") == mine
        assert got.header("date") is not None


@pytest.mark.parametrize("mode,version", CASES[1:4], ids=[f"{m.name}{v}" for m, v in CASES[1:4]])
def test_the_app_sees_the_origins_name_and_the_browsers_headers(fronted, mode, version):
    for host in ORIGINS:
        seen = json.loads(fronted_by(fronted, mode, host, "/echo?q=1", version, "-H", "X-Team: web").body)
        headers = {name.lower(): value for name, value in seen["headers"].items()}
        assert seen["path"] == "/echo?q=1" and headers["host"] == host
        assert headers["x-team"] == "web" and headers["accept-encoding"] == "gzip"
        assert not [name for name in headers if name.startswith("x-forwarded") or name == "via"], headers


@pytest.mark.parametrize("mode,version", CASES[1:4], ids=[f"{m.name}{v}" for m, v in CASES[1:4]])
def test_the_apps_chunks_are_not_held_back(fronted, mode, version):
    """/slow writes a chunk, waits 300 ms, writes another, waits 300 ms, ends: the first
    byte must come before the app's pause is over (a buffering proxy would hold it)."""
    binding = fronted.plan.address(mode, "1.3", "shop.test")
    argv = ["curl", "-sS", "-N", "--max-time", "20", "--resolve", f"shop.test:443:{binding.ip}", "--cacert",
            str(fronted.ca), version, "-o", "/dev/null", "-w", "%{time_starttransfer} %{time_total}",
            "https://shop.test/slow"]
    result = subprocess.run(fronted.bed.exec_argv(fronted.bed.layout.client, argv), capture_output=True,
                            text=True, timeout=60, check=True)
    first, total = (float(x) for x in result.stdout.split())
    assert total >= 0.6  # the app's two pauses
    assert first < 0.25, (first, total)


def test_the_app_runs_as_nobody_in_the_specs_directory(fronted):
    app = fronted.apps.apps["shop"]
    assert app.process is not None
    status = Path(f"/proc/{app.process.pid}/status").read_text()
    assert "\nUid:\t65534\t65534\t65534\t65534\n" in status
    assert Path(f"/proc/{app.process.pid}/cwd").resolve() == fronted.spec_dir.resolve()
    assert "uid 65534 in" in app.process.output()
    app.check_health()  # alive, ready answers 2xx


def test_a_stopped_app_leaves_no_process_of_its_group(fronted, session_tag):
    """Its own app (the module's is shared): started, its worker forked, stopped: no
    process of its group is left; asked for health afterwards, it is one line."""
    site = fronted.plan.sites[0]
    plan = fronted.plan
    apps = AppServers(fronted.bed, plan, fronted.bed.state_dir / "apps2")
    apps.start()
    pid = apps.apps[site.name].process.pid
    time.sleep(0.3)  # its worker forks at start
    group = [p for p in Path("/proc").iterdir() if p.name.isdigit() and _pgid(p) == pid]
    assert len(group) >= 2  # the app and its worker
    apps.stop()
    deadline = time.monotonic() + 2  # SIGKILL is delivered when the process next runs
    while [p for p in Path("/proc").iterdir() if p.name.isdigit() and _pgid(p) == pid]:
        assert time.monotonic() < deadline, "a process of the app's group outlived it"
        time.sleep(0.02)
    with pytest.raises(AppError, match="^app shop exited"):
        apps.apps[site.name].process._stopped = False  # as if it had died by itself
        apps.check_alive()


def _pgid(proc: Path) -> int | None:
    """A live process's group (None: gone, or a zombie, which is dead and only not yet reaped)."""
    try:
        state, _, _, pgid = (proc / "stat").read_text().rsplit(")", 1)[1].split()[:4]
        return None if state in ("Z", "X") else int(pgid)
    except (OSError, ValueError, IndexError):
        return None
