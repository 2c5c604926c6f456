"""nginx serving every mode and TLS version at once, checked with real curl from the
client namespace; the access-log parser; and that nothing outlives the testbed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.core.sites import generate as sitegen
from pagebench.core.servers.accesslog import ServerLog, parse_nginx_log, summarize
from pagebench.core.certs import Leaf
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.servers.plan import ServerPlan, plan
from pagebench.core.sites.model import Site, SiteManifest
from pagebench.lab.servers import nginx
from pagebench.lab import sites as sitefiles
from pagebench.lab.netns import NamespaceBed, existing_namespaces
from pagebench.lab.servers.nginx import NginxServer, ServerError
from pagebench.lab.tls import Authority
from tests.helpers import needs_root, readable_dir

# The access log (pure) ---------------------------------------------------------------------

LINES = [
    "1763780000.101\t0.002\t198.18.1.2\t7\t1\tHTTP/1.1\tTLSv1.3\t200\t527\twww.gen.test\t/\tGET\t801",
    "1763780000.105\t0.001\t198.18.1.2\t7\t2\tHTTP/1.1\tTLSv1.3\t200\t2544\twww.gen.test\t/img/0001.png\tGET\t2811",
    "1763780000.107\t0.001\t198.18.1.3\t8\t1\tHTTP/1.1\tTLSv1.3\t200\t2544\to2.gen.test\t/img/0002.png\tGET\t2811",
    "1763780000.109\t0.001\t2001:2:0:1::2\t7\t3\tHTTP/2.0\tTLSv1.2\t304\t0\twww.gen.test\t/\tGET\t180",
]


def test_parser_reads_every_field():
    records, malformed = parse_nginx_log("\n".join(LINES) + "\n")
    assert malformed == 0 and len(records) == 4
    first = records[0]
    assert (first.end, first.request_time, first.server_addr, first.connection, first.connection_requests) == \
        (1763780000.101, 0.002, "198.18.1.2", 7, 1)
    assert (first.protocol, first.tls, first.status, first.body_bytes, first.host, first.uri, first.method,
            first.bytes_sent) == ("HTTP/1.1", "TLSv1.3", 200, 527, "www.gen.test", "/", "GET", 801)
    assert records[3].server_addr == "2001:2:0:1::2" and records[3].status == 304


def test_parser_leaves_a_partial_last_line_and_counts_garbage():
    text = "\n".join(LINES[:2]) + "\nnot a log line\n" + LINES[2][:20]
    records, malformed = parse_nginx_log(text)
    assert len(records) == 2 and malformed == 1
    assert parse_nginx_log("") == ([], 0)


def test_connections_are_distinct_address_and_connection_pairs():
    records, _ = parse_nginx_log("\n".join(LINES) + "\n")
    log = summarize(records)
    assert log.connections == 3  # (.2, 7), (.3, 8), (::2, 7): same serial on another address counts apart
    assert log.connections_by_host() == {"o2.gen.test": 1, "www.gen.test": 2}
    assert summarize(records, hosts={"www.gen.test"}).connections == 2
    assert summarize(records, addresses={"198.18.1.2"}).connections == 1
    assert summarize(records, hosts={"www.gen.test"}, addresses={"198.18.1.2"}).requests == 2
    assert log.requests == 4 and len(log.records) == 4


def test_statuses_for_the_document():
    records, _ = parse_nginx_log("\n".join(LINES) + "\n")
    log = summarize(records)
    assert log.statuses_for("/") == (200, 304)
    assert log.statuses_for("/", host="o2.gen.test") == ()
    assert log.statuses_for("/img/0001.png") == (200,)
    query = LINES[0].replace("\t/\tGET", "\t/?v=1\tGET")
    assert summarize(parse_nginx_log(query + "\n")[0]).statuses_for("/") == (200,)


def test_unreadable_site_directories_are_named(tmp_path: Path):
    generated = sitegen.generate(sitegen.GenParams(images=1))
    site = sitefiles.write_site(generated, tmp_path / "data")
    leaf = Leaf(tmp_path / "c.pem", tmp_path / "k.pem", tmp_path / "ch.pem", "x")
    server_plan = plan([site], ["h2"], ["1.3"], leaf)
    os.chmod(tmp_path / "data" / "sites", 0o700)
    with pytest.raises(ServerError, match=r"sites is not searchable by nginx's workers .*chmod o\+x"):
        nginx.check_readable(server_plan)


def test_nginx_version():
    if shutil.which("nginx") is None and not Path(nginx.NGINX).exists():
        pytest.skip("nginx not installed")
    version = nginx.nginx_version()
    assert version.count(".") == 2 and all(part.isdigit() for part in version.split("."))


# Integration: one nginx, three modes x two TLS versions ------------------------------------------

MODES = ("http1.0", "keepalive", "h2")
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
def data_dir() -> Iterator[Path]:
    with readable_dir() as path:
        yield path


@pytest.fixture(scope="module")
def served(data_dir: Path) -> Iterator[Served]:
    if os.geteuid() != 0:
        pytest.skip("builds network namespaces: run as root")
    site = sitefiles.write_site(sitegen.generate(sitegen.GenParams(images=3, origins=2)), data_dir)
    site = Site(site.manifest.model_copy(update={"headers": RULE}), site.root)
    authority = Authority(data_dir / "tls")
    server_plan = nginx.prepare([site], MODES, ("none", *VERSIONS), authority)
    assert server_plan.ip_count == 18
    with NamespaceBed(Layout(new_prefix(), server_ips=server_plan.ip_count)) as bed:
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


def curl(served: Served, mode: str, tls: str, host: str, *paths: str, args: tuple[str, ...] = (),
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


@pytest.mark.integration
@needs_root
@pytest.mark.parametrize("tls", VERSIONS)
@pytest.mark.parametrize("mode", MODES)
def test_protocol_and_tls_version_per_listen(served: Served, mode: str, tls: str):
    offset = served.server.log_offset()
    transfers, _ = curl(served, mode, tls, "www.gen.test", "/", "/img/0001.png", args=("--http2",))
    expected = "2" if mode == "h2" else "1.1"  # keepalive and http1.0 listens refuse h2 in ALPN
    assert [t.version for t in transfers] == [expected, expected]
    assert [t.status for t in transfers] == [200, 200]
    log = logged(served, offset, 2)
    assert log.requests == 2
    assert {r.tls for r in log.records} == {f"TLSv{tls}"}
    assert {r.protocol for r in log.records} == {"HTTP/2.0" if mode == "h2" else "HTTP/1.1"}
    assert {r.server_addr for r in log.records} == {served.plan.address(mode, tls, "www.gen.test").ip}
    # http1.0: a connection per request; keepalive and h2: one connection for both
    assert log.connections == (2 if mode == "http1.0" else 1)
    if mode == "http1.0":
        assert all(t.header("connection") == "close" for t in transfers)
    else:
        assert all(t.header("connection") != "close" for t in transfers)


@pytest.mark.integration
@needs_root
@pytest.mark.parametrize("mode", MODES)
def test_cleartext_listens_speak_plain_http_on_port_80_only(served: Served, mode: str):
    offset = served.server.log_offset()
    # h2 with prior knowledge is what the edge proxy speaks (browsers never); curl 7.88 fails
    # its second request on such a connection ("Error in the HTTP2 framing layer"): one path
    h2 = mode == "h2"
    paths = ("/",) if h2 else ("/", "/img/0001.png")
    transfers, _ = curl(served, mode, "none", "www.gen.test", *paths, args=("--http2-prior-knowledge",) if h2 else ())
    assert [t.version for t in transfers] == (["2"] if h2 else ["1.1", "1.1"])
    assert {t.status for t in transfers} == {200}
    log = logged(served, offset, len(paths))
    assert log.tls_seen() == {"none"} and {r.tls for r in log.records} == {"-"}
    assert log.connections == (2 if mode == "http1.0" else 1)
    binding = served.plan.address(mode, "none", "www.gen.test")
    tls_attempt = subprocess.run(served.bed.exec_argv(served.bed.layout.client, [
        "curl", "-sS", "--max-time", "5", "--resolve", f"www.gen.test:443:{binding.ip}", "--cacert", str(served.ca),
        "https://www.gen.test/"]), capture_output=True, text=True, timeout=30)
    assert tls_attempt.returncode != 0  # nothing listens for TLS on a cleartext binding


@pytest.mark.integration
@needs_root
def test_http1_0_opens_a_connection_per_request_on_every_origin(served: Served):
    offset = served.server.log_offset()
    transfers, _ = curl(served, "http1.0", "1.3", "o2.gen.test", "/img/0002.png", "/img/0002.png", "/img/0002.png")
    assert [t.info["num_connects"] for t in transfers] == [1, 1, 1]
    assert logged(served, offset, 3).connections == 3
    offset = served.server.log_offset()
    transfers, _ = curl(served, "keepalive", "1.3", "o2.gen.test", "/img/0002.png", "/img/0002.png", "/img/0002.png")
    assert [t.info["num_connects"] for t in transfers] == [1, 0, 0]
    assert logged(served, offset, 3).connections == 1


@pytest.mark.integration
@needs_root
@pytest.mark.parametrize("tls,wrong", [("1.3", "--tls-max 1.2"), ("1.2", "--tlsv1.3")])
def test_only_the_configured_tls_version_is_offered(served: Served, tls: str, wrong: str):
    _, result = curl(served, "keepalive", tls, "www.gen.test", "/", args=tuple(wrong.split()), check=False)
    assert result.returncode == 35, result.stderr  # TLS handshake failure


@pytest.mark.integration
@needs_root
def test_headers_html_no_cache_static_max_age_everything_cross_origin(served: Served):
    html, image, rule = curl(served, "h2", "1.3", "www.gen.test", "/", "/img/0001.png", "/img/0003.png")[0]
    assert [html.status, image.status, rule.status] == [200, 200, 200]
    assert html.header("cache-control") == "no-cache" and html.header("content-type") == "text/html"
    assert image.header("cache-control") == "max-age=86400" and image.header("content-type") == "image/png"
    assert rule.header("cache-control") == "max-age=60" and rule.header("x-pagebench") == "rule"
    for transfer in (html, image, rule):
        assert transfer.header("timing-allow-origin") == "*"
        assert transfer.header("access-control-allow-origin") == "*"
        assert transfer.header("etag") and transfer.header("last-modified")
    assert int(image.header("content-length")) == 2544


@pytest.mark.integration
@needs_root
@pytest.mark.parametrize("mode", MODES)
def test_revalidation_answers_304(served: Served, mode: str):
    (first,), _ = curl(served, mode, "1.2", "www.gen.test", "/")
    etag = first.header("etag")
    offset = served.server.log_offset()
    (second,), _ = curl(served, mode, "1.2", "www.gen.test", "/", args=("-H", f"If-None-Match: {etag}"))
    assert second.status == 304
    assert logged(served, offset, 1).statuses_for("/") == (304,)  # what the runner checks on warm loads
    assert second.header("cache-control") == "no-cache" and second.header("timing-allow-origin") == "*"


@pytest.mark.integration
@needs_root
def test_ipv6_listens_too(served: Served):
    offset = served.server.log_offset()
    (transfer,), _ = curl(served, "h2", "1.3", "o2.gen.test", "/img/0002.png", ipv6=True, args=("--http2",))
    assert transfer.version == "2" and transfer.status == 200
    (record,) = logged(served, offset, 1).records
    assert record.server_addr == served.plan.address("h2", "1.3", "o2.gen.test").ip6


@pytest.mark.integration
@needs_root
@pytest.mark.parametrize("tls", VERSIONS)
def test_every_connection_is_a_full_handshake(served: Served, tls: str, tmp_path: Path):
    binding = served.plan.address("keepalive", tls, "www.gen.test")
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


@pytest.mark.integration
@needs_root
def test_the_ca_verifies_the_served_leaf_and_refuses_others(served: Served):
    # Without -k: curl verified the chain in every test above; a wrong CA fails.
    other = Authority(served.data / "other-tls").ca_path
    binding = served.plan.address("h2", "1.3", "www.gen.test")
    argv = ["curl", "-sS", "--resolve", f"www.gen.test:443:{binding.ip}", "--cacert", str(other),
            "https://www.gen.test/", "-o", "/dev/null"]
    result = subprocess.run(served.bed.exec_argv(served.bed.layout.client, argv), capture_output=True, text=True)
    assert result.returncode == 60, result.stderr  # peer certificate cannot be authenticated
    with pytest.raises(ValueError, match="'www.example.com'"):
        served.authority.leaf(["www.gen.test", "www.example.com"])


@pytest.mark.integration
@needs_root
def test_bad_config_is_one_line_and_leaves_nothing(data_dir: Path):
    site = sitefiles.write_site(sitegen.generate(sitegen.GenParams(images=1)), data_dir)
    leaf = Leaf(data_dir / "missing.pem", data_dir / "missing.key", data_dir / "missing-chain.pem", "x")
    bad = plan([site], ["h2"], ["1.3"], leaf)
    with NamespaceBed(Layout(new_prefix(), server_ips=1)) as bed:
        with pytest.raises(ServerError) as error:
            with NginxServer(bed, bad, bed.state_dir / "nginx"):
                pass
        message = str(error.value)
        assert message.startswith("nginx config ") and "missing.pem" in message and "\n" not in message
        with pytest.raises(ServerError, match=r"plan needs 2 server IPs, the topology has 1"):
            NginxServer(bed, plan([site], ["h2", "keepalive"], ["1.3"], leaf), bed.state_dir / "nginx")


@pytest.mark.integration
@needs_root
def test_nothing_outlives_the_server_or_the_testbed(data_dir: Path):
    site = sitefiles.materialize(sitefiles.resolve({"generate": {"images": 1}}), data_dir)
    server_plan = plan([site], ["h2"], ["1.3"])  # no certificate yet: the server issues it
    topology = Layout(new_prefix(), server_ips=1)
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


# Encodings and versions: a two-version site in the agreed layout, written by hand --------------

BASE_MTIME = 1_767_225_600  # 2026-01-01T00:00:00Z: every file of version 1 (the agreed layout)
DAY = 86_400
ENCODINGS = ("identity", "gzip", "br", "zstd", "dcz")


def _text(seed: str, lines: int) -> bytes:
    return "".join(f".{seed}-{i} {{ margin: {i % 7}px; color: #{i * 2654435761 % 0xFFFFFF:06x}; }}\n"
                   for i in range(lines)).encode()


V1 = {
    "www.enc.test/index.html": b"<!doctype html><title>v1</title>" + _text("page", 40),
    "www.enc.test/css/a.css": _text("a", 200),
    "www.enc.test/js/b.js": _text("b", 150),
    "www.enc.test/img/c.png": bytes(range(256)) * 12,
    "o2.enc.test/css/o.css": _text("o", 80),
}
#: Version 2: the page and a.css changed; b.js, the image and o.css as in version 1.
V2 = {**V1, "www.enc.test/index.html": V1["www.enc.test/index.html"].replace(b"v1", b"v2") + _text("new", 3),
      "www.enc.test/css/a.css": V1["www.enc.test/css/a.css"].replace(b"margin: 3px", b"margin: 4px")}


def write_versioned_site(root: Path) -> Site:
    """The layout `core/sites.py` and the content writer agree on: v1 at <root>/<host>/,
    v2 at <root>/v2/<host>/; sidecars beside every text file; deltas of changed text files
    against v1 in v2; mtimes fixed (changed files of v2: BASE_MTIME + 2 days)."""
    for version, files in ((1, V1), (2, V2)):
        base = root if version == 1 else root / f"v{version}"
        for key, body in files.items():
            path = base / key
            path.parent.mkdir(parents=True, exist_ok=True)
            changed = body != V1[key]
            mtime = BASE_MTIME + (version * DAY if changed else 0)
            made = {path: body}
            if encodings.is_text(key):
                made.update({Path(f"{path}{e.suffix}"): encodings.encode(e.name, body) for e in encodings.SIDECARS})
                if changed:
                    made[Path(f"{path}.{encodings.dictionary_id(V1[key])}.dcz")] = \
                        encodings.dcz_encode(V1[key], body)
            for made_path, made_body in made.items():
                made_path.write_bytes(made_body)
                os.utime(made_path, (mtime, mtime))
    for directory in [root, *root.rglob("*")]:
        if directory.is_dir():
            os.chmod(directory, 0o755)
    manifest = SiteManifest(
        name="enc", entry="https://www.enc.test/", origins=("www.enc.test", "o2.enc.test"), versions=2,
        dictionaries={key: encodings.available_dictionary(body) for key, body in V1.items()
                      if encodings.is_text(key)},
        changed={2: sorted(key for key in V1 if V2[key] != V1[key])})
    return Site(manifest, root)


@dataclass
class Got:
    status: int
    headers: dict[str, str]  # lower-case names; repeated headers joined with ", "
    body: bytes


def fetch(bed: NamespaceBed, binding, path: str, ca: Path, headers: dict[str, str] | None = None,
          http: str = "--http2") -> Got:
    """One GET by curl from the client namespace, the body as sent (never decoded)."""
    with tempfile.TemporaryDirectory(prefix="pagebench-curl-") as tmp:
        argv = ["curl", "-sS", "--max-time", "20", http, "--resolve", f"{binding.origin}:443:{binding.ip}",
                "--cacert", str(ca), "-D", f"{tmp}/h", "-o", f"{tmp}/b", f"https://{binding.origin}{path}"]
        for name, value in (headers or {}).items():
            argv += ["-H", f"{name}: {value}"]
        result = subprocess.run(bed.exec_argv(bed.layout.client, argv), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        lines = Path(f"{tmp}/h").read_text().splitlines()
        body = Path(f"{tmp}/b").read_bytes() if Path(f"{tmp}/b").exists() else b""
    got: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            got[name.strip().lower()] = ", ".join(filter(None, [got.get(name.strip().lower()), value.strip()]))
    return Got(int(lines[0].split()[1]), got, body)


CHROMIUM_AE = "gzip, deflate, br, zstd, dcb, dcz"
TEXT = {"/css/a.css": "text/css", "/js/b.js": "text/javascript", "/": "text/html"}


def check_encodings(bed: NamespaceBed, server_plan: ServerPlan, mode: str, ca: Path, http: str) -> None:
    """What both servers must do for each encoding (nginx here, Caddy in test_caddy)."""
    site = server_plan.sites[0]
    for encoding in ENCODINGS:
        www = server_plan.address(mode, "1.3", "www.enc.test", encoding=encoding)
        token = encodings.get(encodings.get(encoding).fallback or encoding).token
        for path, mime in TEXT.items():
            body = V1["www.enc.test" + (path if path != "/" else "/index.html")]
            got = fetch(bed, www, path, ca, {"Accept-Encoding": CHROMIUM_AE}, http)
            assert got.status == 200, (encoding, path)
            assert got.headers.get("content-encoding", "") == token, (encoding, path, got.headers)
            assert got.headers.get("content-type") == mime, (encoding, path, got.headers)
            assert encodings.decode(token, got.body) == body, (encoding, path)
            assert got.headers["cache-control"] == "no-cache", (encoding, path)  # versioned: text revalidated
            if token:
                assert got.headers["vary"] == "Accept-Encoding", (encoding, path)
                assert int(got.headers["content-length"]) == len(got.body) < len(body)
            plain = fetch(bed, www, path, ca, {"Accept-Encoding": "identity"}, http)
            assert (plain.status, plain.body, plain.headers["content-type"]) == (200, body, mime), (encoding, path)
            assert "content-encoding" not in plain.headers, (encoding, path)
            if encoding in ("gzip", "br"):  # a coding the request does not name is never sent
                other = fetch(bed, www, path, ca, {"Accept-Encoding": "zstd" if encoding != "zstd" else "gzip"}, http)
                assert "content-encoding" not in other.headers and other.body == body, (encoding, path)
                refused = fetch(bed, www, path, ca, {"Accept-Encoding": f"{token};q=0, identity"}, http)
                assert "content-encoding" not in refused.headers and refused.body == body, (encoding, path)
        image = fetch(bed, www, "/img/c.png", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
        assert (image.status, image.body, image.headers["content-type"]) == (200, V1["www.enc.test/img/c.png"],
                                                                              "image/png"), encoding
        assert "content-encoding" not in image.headers and image.headers["cache-control"] == "max-age=86400"
        assert image.headers["timing-allow-origin"] == "*" and image.headers["etag"]
        v2 = server_plan.address(mode, "1.3", "www.enc.test", encoding=encoding, version=2)
        for path in ("/css/a.css", "/js/b.js"):
            first = fetch(bed, www, path, ca, {"Accept-Encoding": CHROMIUM_AE}, http)
            again = fetch(bed, v2, path, ca, {"Accept-Encoding": CHROMIUM_AE, "If-None-Match": first.headers["etag"]},
                          http)
            changed = f"www.enc.test{path}" in site.manifest.changed[2]
            assert again.status == (200 if changed else 304), (encoding, path, again.headers)
            if changed:
                assert encodings.decode(token, again.body) == V2[f"www.enc.test{path}"]
                assert again.headers["etag"] != first.headers["etag"]
            else:
                assert again.headers["etag"] == first.headers["etag"] and not again.body
                assert again.headers["cache-control"] == "no-cache"


def check_deltas(bed: NamespaceBed, server_plan: ServerPlan, mode: str, ca: Path, http: str) -> None:
    """dcz: the delta for the dictionary offered, zstd for another; dictionaries and Link."""
    v1 = server_plan.address(mode, "1.3", "www.enc.test", encoding="dcz")
    v2 = server_plan.address(mode, "1.3", "www.enc.test", encoding="dcz", version=2)
    for path, key in (("/css/a.css", "www.enc.test/css/a.css"), ("/", "www.enc.test/index.html")):
        offered = {"Accept-Encoding": CHROMIUM_AE, "Available-Dictionary": encodings.available_dictionary(V1[key])}
        delta = fetch(bed, v2, path, ca, offered, http)
        assert (delta.status, delta.headers["content-encoding"]) == (200, "dcz"), (path, delta.headers)
        assert delta.headers["vary"] == "Accept-Encoding, Available-Dictionary"
        assert delta.headers["content-type"] == TEXT[path] and delta.headers["cache-control"] == "no-cache"
        assert encodings.decode("dcz", delta.body, V1[key]) == V2[key]
        assert len(delta.body) < len(encodings.encode("zstd", V2[key]))
        again = fetch(bed, v2, path, ca, {**offered, "If-None-Match": delta.headers["etag"]}, http)
        assert again.status == 304, path
        wrong = fetch(bed, v2, path, ca, {"Accept-Encoding": CHROMIUM_AE,
                                          "Available-Dictionary": encodings.available_dictionary(b"other")}, http)
        assert wrong.headers["content-encoding"] == "zstd" and encodings.decode("zstd", wrong.body) == V2[key]
        lower = fetch(bed, v2, path, ca, {**offered, "Available-Dictionary": offered["Available-Dictionary"].lower()},
                      http)
        assert lower.headers["content-encoding"] == "zstd", path  # sf-binary is case-sensitive
        no_dcz = fetch(bed, v2, path, ca, {**offered, "Accept-Encoding": "gzip, br, zstd"}, http)
        assert no_dcz.headers["content-encoding"] == "zstd", path
    # an unchanged file has no delta: zstd, and its v1 ETag still matches
    unchanged = fetch(bed, v2, "/js/b.js", ca, {"Accept-Encoding": CHROMIUM_AE, "Available-Dictionary":
                                               encodings.available_dictionary(V1["www.enc.test/js/b.js"])}, http)
    assert unchanged.headers["content-encoding"] == "zstd"
    for binding in (v1, v2):
        dictionary = fetch(bed, binding, "/css/a.css.pbdict", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
        assert dictionary.status == 200 and dictionary.body == V1["www.enc.test/css/a.css"]  # v1, as stored
        assert dictionary.headers["use-as-dictionary"] == 'match="/css/a.css"'
        assert dictionary.headers["cache-control"] == "max-age=86400"
        assert dictionary.headers["access-control-allow-origin"] == "*" == dictionary.headers["timing-allow-origin"]
        assert "content-encoding" not in dictionary.headers
        assert fetch(bed, binding, "/img/c.png.pbdict", ca, http=http).status == 404
    page = fetch(bed, v1, "/", ca, {"Accept-Encoding": CHROMIUM_AE}, http)
    links = [link.strip() for link in page.headers["link"].split(",")]
    assert sorted(links) == sorted(f"<https://{key.split('/', 1)[0]}/{key.split('/', 1)[1]}.pbdict>; "
                                   "rel=compression-dictionary" for key in V1 if encodings.is_text(key))
    assert "link" not in fetch(bed, v2, "/", ca, http=http).headers  # version 1's page only
    assert "link" not in fetch(bed, v1, "/css/a.css", ca, http=http).headers
    zstd_v1 = server_plan.address(mode, "1.3", "www.enc.test", encoding="zstd")
    assert "link" not in fetch(bed, zstd_v1, "/", ca, http=http).headers
    assert fetch(bed, zstd_v1, "/css/a.css.pbdict", ca, http=http).status == 404
    o2 = server_plan.address(mode, "1.3", "o2.enc.test", encoding="dcz")
    assert fetch(bed, o2, "/css/o.css.pbdict", ca, http=http).headers["use-as-dictionary"] == 'match="/css/o.css"'


@pytest.fixture(scope="module")
def encoded(data_dir: Path) -> Iterator[tuple[NamespaceBed, ServerPlan, Path]]:
    if os.geteuid() != 0:
        pytest.skip("builds network namespaces: run as root")
    site = write_versioned_site(data_dir / "enc")
    authority = Authority(data_dir / "tls")
    server_plan = nginx.prepare([site], ["h2"], ["1.3"], authority, encodings=ENCODINGS)
    assert server_plan.ip_count == 2 * 5 * 2
    with NamespaceBed(Layout(new_prefix(), server_ips=server_plan.ip_count)) as bed:
        with NginxServer(bed, server_plan, bed.state_dir / "nginx"):
            yield bed, server_plan, authority.ca_path


@pytest.mark.integration
@needs_root
def test_each_encoding_is_served_from_its_sidecar_and_revalidates_across_versions(encoded):
    check_encodings(*encoded[:2], "h2", encoded[2], "--http2")


@pytest.mark.integration
@needs_root
def test_dcz_answers_the_delta_for_the_dictionary_offered(encoded):
    check_deltas(*encoded[:2], "h2", encoded[2], "--http2")


@pytest.mark.integration
@needs_root
def test_identity_bindings_of_a_versioned_site_send_text_no_cache_and_no_vary(encoded):
    bed, server_plan, ca = encoded
    www = server_plan.address("h2", "1.3", "www.enc.test", version=2)
    got = fetch(bed, www, "/css/a.css", ca, {"Accept-Encoding": CHROMIUM_AE})
    assert got.body == V2["www.enc.test/css/a.css"] and got.headers["content-type"] == "text/css"
    assert got.headers["cache-control"] == "no-cache" and "vary" not in got.headers
    assert "content-encoding" not in got.headers
