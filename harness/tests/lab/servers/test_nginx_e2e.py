"""nginx serving every mode and TLS version at once, checked with real curl from the
client namespace, and that nothing outlives the testbed (the access-log parser is
`tests/core/servers/test_accesslog.py`'s)."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pagebench.core.modes import H2, HTTP10, KEEPALIVE, Mode
from pagebench.core.sites import generate as sitegen
from pagebench.core.servers.accesslog import ServerLog
from pagebench.core.certs import Leaf
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.servers.plan import ServerPlan, plan
from pagebench.core.sites.model import Site
from pagebench.lab.servers import nginx
from pagebench.lab import sites as sitefiles
from pagebench.lab.netns import NamespaceBed, existing_namespaces
from pagebench.lab.servers.nginx import NginxServer, ServerError
from pagebench.lab.tls import Authority
from tests.helpers import needs_root
from tests.lab.servers.versioned import CHROMIUM_AE, ENCODINGS, V2, check_deltas, check_encodings, fetch
from tests.lab.servers.versioned import write_versioned_site

pytestmark = needs_root


def test_nginx_version():
    if not Path(nginx.NGINX).exists():  # the test command installs it
        pytest.fail(f"{nginx.NGINX} missing: run `sudo harness/bootstrap test` (it installs nginx)")
    version = nginx.nginx_version()
    assert version.count(".") == 2 and all(part.isdigit() for part in version.split("."))


# Integration: one nginx, three modes x two TLS versions ------------------------------------------

MODES = (HTTP10, KEEPALIVE, H2)
VERSIONS = ("1.2", "1.3")
RULE = {"/img/0003.png": {"Cache-Control": "max-age=60", "X-Pagebench": "rule"}}


@dataclass
class Served:
    bed: NamespaceBed
    plan: ServerPlan
    server: NginxServer
    ca: Path
    authority: Authority
    data: Path


@pytest.fixture(scope="module")
def served(data_dir: Path, session_tag: str) -> Iterator[Served]:
    site = sitefiles.write_site(sitegen.generate(sitegen.GenParams(images=3, origins=2)), data_dir)
    site = Site(site.manifest.model_copy(update={"headers": RULE}), site.root)
    authority = Authority(data_dir / "tls")
    server_plan = nginx.prepare([site], MODES, ("none", *VERSIONS), authority)
    assert server_plan.ip_count == 18
    with NamespaceBed(Layout(new_prefix(session_tag), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx") as server:
            yield Served(bed, server_plan, server, authority.ca_path, authority, data_dir)


@dataclass
class Transfer:
    info: dict
    headers: dict

    @property
    def version(self) -> str:
        return self.info["http_version"]

    @property
    def status(self) -> int:
        return self.info["response_code"]

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[0] if values else None


def curl(served: Served, mode: Mode, tls: str, host: str, *paths: str, args: tuple[str, ...] = (),
         ipv6: bool = False, check: bool = True) -> tuple[list[Transfer], subprocess.CompletedProcess[str]]:
    """One curl invocation (one process, so it may reuse connections) from the client namespace."""
    binding = served.plan.address(mode, tls, host)
    address = f"[{binding.ip6}]" if ipv6 else binding.ip
    argv = ["curl", "-sS", "--max-time", "20", "--resolve", f"{host}:{binding.port}:{address}", "--cacert",
            str(served.ca), "-w", "%{json}%{header_json}", *args]
    scheme = "http" if tls == "none" else "https"
    for path in paths:
        argv += [f"{scheme}://{host}{path}", "-o", "/dev/null"]
    result = subprocess.run(served.bed.exec_argv(served.bed.layout.client, argv), capture_output=True,
                            text=True, timeout=60)
    if check:
        assert result.returncode == 0, result.stderr
    decoder, out, pos, objects = json.JSONDecoder(), result.stdout, 0, []
    while pos < len(out.rstrip()):
        obj, pos = decoder.raw_decode(out, pos)
        objects.append(obj)
        while pos < len(out) and out[pos].isspace():
            pos += 1
    return [Transfer(objects[i], objects[i + 1]) for i in range(0, len(objects), 2)], result


def logged(served: Served, offset: int, count: int) -> ServerLog:
    """The server log after a transfer: nginx logs when the response is done; allow a moment."""
    for _ in range(100):
        log = served.server.connections_since(offset)
        if log.requests >= count:
            return log
        time.sleep(0.02)
    return log


@pytest.mark.parametrize("tls", VERSIONS)
@pytest.mark.parametrize("mode", MODES, ids=str)
def test_protocol_and_tls_version_per_listen(served: Served, mode: Mode, tls: str):
    offset = served.server.log_offset()
    transfers, _ = curl(served, mode, tls, "www.gen.test", "/", "/img/0001.png", args=("--http2",))
    expected = "2" if mode is H2 else "1.1"  # keepalive and http1.0 listens refuse h2 in ALPN
    assert [t.version for t in transfers] == [expected, expected]
    assert [t.status for t in transfers] == [200, 200]
    log = logged(served, offset, 2)
    assert log.requests == 2
    assert {r.tls for r in log.records} == {f"TLSv{tls}"}
    assert {r.protocol for r in log.records} == {"HTTP/2.0" if mode is H2 else "HTTP/1.1"}
    assert {r.server_addr for r in log.records} == {served.plan.address(mode, tls, "www.gen.test").ip}
    # http1.0: a connection per request; keepalive and h2: one connection for both
    assert log.connections == (2 if mode is HTTP10 else 1)
    if mode is HTTP10:
        assert all(t.header("connection") == "close" for t in transfers)
    else:
        assert all(t.header("connection") != "close" for t in transfers)


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_cleartext_listens_speak_plain_http_on_port_80_only(served: Served, mode: Mode):
    offset = served.server.log_offset()
    # h2 with prior knowledge is what the edge proxy speaks (browsers never); curl 7.88 fails
    # its second request on such a connection ("Error in the HTTP2 framing layer"): one path
    h2 = mode is H2
    paths = ("/",) if h2 else ("/", "/img/0001.png")
    transfers, _ = curl(served, mode, "none", "www.gen.test", *paths, args=("--http2-prior-knowledge",) if h2 else ())
    assert [t.version for t in transfers] == (["2"] if h2 else ["1.1", "1.1"])
    assert {t.status for t in transfers} == {200}
    log = logged(served, offset, len(paths))
    assert log.tls_seen() == {"none"} and {r.tls for r in log.records} == {"-"}
    assert log.connections == (2 if mode is HTTP10 else 1)
    binding = served.plan.address(mode, "none", "www.gen.test")
    tls_attempt = subprocess.run(served.bed.exec_argv(served.bed.layout.client, [
        "curl", "-sS", "--max-time", "5", "--resolve", f"www.gen.test:443:{binding.ip}", "--cacert", str(served.ca),
        "https://www.gen.test/"]), capture_output=True, text=True, timeout=30)
    assert tls_attempt.returncode != 0  # nothing listens for TLS on a cleartext binding


def test_http1_0_opens_a_connection_per_request_on_every_origin(served: Served):
    offset = served.server.log_offset()
    transfers, _ = curl(served, HTTP10, "1.3", "o2.gen.test", "/img/0002.png", "/img/0002.png", "/img/0002.png")
    assert [t.info["num_connects"] for t in transfers] == [1, 1, 1]
    assert logged(served, offset, 3).connections == 3
    offset = served.server.log_offset()
    transfers, _ = curl(served, KEEPALIVE, "1.3", "o2.gen.test", "/img/0002.png", "/img/0002.png", "/img/0002.png")
    assert [t.info["num_connects"] for t in transfers] == [1, 0, 0]
    assert logged(served, offset, 3).connections == 1


@pytest.mark.parametrize("tls,wrong", [("1.3", "--tls-max 1.2"), ("1.2", "--tlsv1.3")])
def test_only_the_configured_tls_version_is_offered(served: Served, tls: str, wrong: str):
    _, result = curl(served, KEEPALIVE, tls, "www.gen.test", "/", args=tuple(wrong.split()), check=False)
    assert result.returncode == 35, result.stderr  # TLS handshake failure


def test_headers_html_no_cache_static_max_age_everything_cross_origin(served: Served):
    html, image, rule = curl(served, H2, "1.3", "www.gen.test", "/", "/img/0001.png", "/img/0003.png")[0]
    assert [html.status, image.status, rule.status] == [200, 200, 200]
    assert html.header("cache-control") == "no-cache" and html.header("content-type") == "text/html"
    assert image.header("cache-control") == "max-age=86400" and image.header("content-type") == "image/png"
    assert rule.header("cache-control") == "max-age=60" and rule.header("x-pagebench") == "rule"
    for transfer in (html, image, rule):
        assert transfer.header("timing-allow-origin") == "*"
        assert transfer.header("access-control-allow-origin") == "*"
        assert transfer.header("etag") and transfer.header("last-modified")
    assert int(image.header("content-length")) == 2544


@pytest.mark.parametrize("mode", MODES, ids=str)
def test_revalidation_answers_304(served: Served, mode: Mode):
    (first,), _ = curl(served, mode, "1.2", "www.gen.test", "/")
    etag = first.header("etag")
    offset = served.server.log_offset()
    (second,), _ = curl(served, mode, "1.2", "www.gen.test", "/", args=("-H", f"If-None-Match: {etag}"))
    assert second.status == 304
    assert logged(served, offset, 1).statuses_for("/") == (304,)  # what the runner checks on warm loads
    assert second.header("cache-control") == "no-cache" and second.header("timing-allow-origin") == "*"


def test_ipv6_listens_too(served: Served):
    offset = served.server.log_offset()
    (transfer,), _ = curl(served, H2, "1.3", "o2.gen.test", "/img/0002.png", ipv6=True, args=("--http2",))
    assert transfer.version == "2" and transfer.status == 200
    (record,) = logged(served, offset, 1).records
    assert record.server_addr == served.plan.address(H2, "1.3", "o2.gen.test").ip6


@pytest.mark.parametrize("tls", VERSIONS)
def test_every_connection_is_a_full_handshake(served: Served, tls: str, tmp_path: Path):
    binding = served.plan.address(KEEPALIVE, tls, "www.gen.test")
    session = tmp_path / "session.pem"
    base = ["openssl", "s_client", "-connect", f"{binding.ip}:443", "-servername", "www.gen.test",
            "-CAfile", str(served.ca)]
    request = "GET / HTTP/1.1\r\nHost: www.gen.test\r\nConnection: close\r\n\r\n"

    def s_client(*extra: str) -> str:
        result = subprocess.run(served.bed.exec_argv(served.bed.layout.client, [*base, *extra]), input=request,
                                capture_output=True, text=True, timeout=30)
        return result.stdout

    first = s_client("-sess_out", str(session))
    assert "Verify return code: 0 (ok)" in first and f"New, TLSv{tls}" in first
    if session.exists():
        assert f"New, TLSv{tls}" in s_client("-sess_in", str(session))  # never "Reused"
    else:
        assert "TLS session ticket:" not in first  # TLS 1.2: no ticket and no session id to resume


def test_the_ca_verifies_the_served_leaf_and_refuses_others(served: Served):
    # Without -k: curl verified the chain in every test above; a wrong CA fails.
    other = Authority(served.data / "other-tls").ca_path
    binding = served.plan.address(H2, "1.3", "www.gen.test")
    argv = ["curl", "-sS", "--resolve", f"www.gen.test:443:{binding.ip}", "--cacert", str(other),
            "https://www.gen.test/", "-o", "/dev/null"]
    result = subprocess.run(served.bed.exec_argv(served.bed.layout.client, argv), capture_output=True, text=True)
    assert result.returncode == 60, result.stderr  # peer certificate cannot be authenticated
    with pytest.raises(ValueError, match="'www.example.com'"):
        served.authority.leaf(["www.gen.test", "www.example.com"])


def test_bad_config_is_one_line_and_leaves_nothing(data_dir: Path, session_tag: str):
    site = sitefiles.write_site(sitegen.generate(sitegen.GenParams(images=1)), data_dir)
    leaf = Leaf(data_dir / "missing.pem", data_dir / "missing.key", data_dir / "missing-chain.pem", "x")
    bad = plan([site], [H2], ["1.3"], leaf)
    with NamespaceBed(Layout(new_prefix(session_tag), server_ips=1)) as bed:
        with pytest.raises(ServerError) as error:
            with NginxServer(bed, bad, bed.state_dir / "nginx"):
                pass
        message = str(error.value)
        assert message.startswith("nginx config ") and "missing.pem" in message and "\n" not in message
        with pytest.raises(ServerError, match=r"plan needs 2 server IPs, the topology has 1"):
            NginxServer(bed, plan([site], [H2, KEEPALIVE], ["1.3"], leaf), bed.state_dir / "nginx")


def test_nothing_outlives_the_server_or_the_testbed(data_dir: Path, session_tag: str):
    site = sitefiles.materialize(sitefiles.resolve({"generate": {"images": 1}}), data_dir)
    server_plan = plan([site], [H2], ["1.3"])  # no certificate yet: the server issues it
    topology = Layout(new_prefix(session_tag), server_ips=1)
    with pytest.raises(RuntimeError, match="boom"):
        with NamespaceBed(topology) as bed:
            authority = Authority(data_dir / "tls")
            with NginxServer(bed, server_plan, bed.state_dir / "nginx", authority=authority) as server:
                assert server.running and server.plan.leaf is not None
                master = server.process.pid
                workers = subprocess.run(["pgrep", "-P", str(master)], capture_output=True, text=True).stdout.split()
                assert workers, "nginx started no worker"
                raise RuntimeError("boom")
    for pid in [master, *map(int, workers)]:
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    assert not any(ns.startswith(topology.prefix) for ns in existing_namespaces())
    assert not (bed.state_dir).exists()


# Encodings and versions: the two-version site of `versioned.py` ------------------------------


@pytest.fixture(scope="module")
def encoded(data_dir: Path, session_tag: str) -> Iterator[tuple[NamespaceBed, ServerPlan, Path]]:
    site = write_versioned_site(data_dir / "enc")
    authority = Authority(data_dir / "tls")
    server_plan = nginx.prepare([site], [H2], ["1.3"], authority, encodings=ENCODINGS)
    assert server_plan.ip_count == 2 * 5 * 2
    with NamespaceBed(Layout(new_prefix(session_tag), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx"):
            yield bed, server_plan, authority.ca_path


def test_each_encoding_is_served_from_its_sidecar_and_revalidates_across_versions(encoded):
    check_encodings(*encoded[:2], H2, encoded[2], "--http2")


def test_dcz_answers_the_delta_for_the_dictionary_offered(encoded):
    check_deltas(*encoded[:2], H2, encoded[2], "--http2")


def test_identity_bindings_of_a_versioned_site_send_text_no_cache_and_no_vary(encoded):
    bed, server_plan, ca = encoded
    www = server_plan.address(H2, "1.3", "www.enc.test", version=2)
    got = fetch(bed, www, "/css/a.css", ca, {"Accept-Encoding": CHROMIUM_AE})
    assert got.body == V2["www.enc.test/css/a.css"] and got.headers["content-type"] == "text/css"
    assert got.headers["cache-control"] == "no-cache" and "vary" not in got.headers
    assert "content-encoding" not in got.headers
