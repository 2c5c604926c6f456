"""`pagebench site record` against a stand-in internet: the built-in `modern` site under
real-looking names (`*.modern-shop.com`), served by nginx over TLS from a throwaway CA, one
address per origin, in the server namespace of a lab of this test's own. The recorder runs
in the lab's client namespace (a regular route through the router to those addresses) and
reaches the names through `--resolve` and `--upstream-ca`: no traffic leaves the test's
namespaces or loopback.

For other tests too (the replay acceptance test records the stand-in, then replays what
was written): `recorded_stand_in(into)` does the whole round; `stand_in_internet()` and
`record_stand_in()` are its two halves."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pagebench.core import encodings
from pagebench.core.har.parse import HarError
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.servers.headers import MIME_TYPES
from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.model import SiteError
from pagebench.lab.netns import NamespaceBed, namespace_pids
from pagebench.lab.record.mitmdump import RecordError, spki_of
from pagebench.lab.record.recorder import ordered_har, parse_resolve, record_site
from pagebench.system.process import ManagedProcess
from tests.helpers import HARNESS, needs_root

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
#: The stand-in's registrable domain: `modern.test` becomes this in every name and text file.
DOMAIN = "modern-shop.com"
URL = f"https://www.{DOMAIN}/"


# The stand-in internet ---------------------------------------------------------------------


@dataclass(frozen=True)
class StandIn:
    """A running stand-in internet: where the recorder runs and how it reaches the names."""

    bed: NamespaceBed
    url: str
    resolve: dict[str, str]  # real-looking host -> its address in the server namespace
    ca: Path  # the throwaway CA that signed the stand-in's certificate (PEM)
    files: dict[str, bytes]  # "host/path" -> the body served (after the host rewrite)
    silent: str  # an address of the server namespace where nothing listens on 443
    tarpit: int  # a port of `silent` that accepts connections and never answers

    @property
    def client(self) -> str:
        return self.bed.layout.client


def stand_in_files() -> dict[str, bytes]:
    """`modern`'s files with `modern.test` rewritten to DOMAIN in every name and text file."""
    files = {}
    for host_path, body in builtin("modern").files.items():
        host, _, path = host_path.partition("/")
        if encodings.is_text(path):
            body = body.replace(b"modern.test", DOMAIN.encode())
        files[f"{host.replace('modern.test', DOMAIN)}/{path}"] = body
    return files


def _throwaway_pki(hosts: list[str], directory: Path) -> tuple[Path, Path, Path]:
    """A CA made for this test only, and one certificate for every host: (ca, chain, key)."""
    now = dt.datetime.now(dt.timezone.utc)
    ca_key, leaf_key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pagebench stand-in internet CA (test)")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(hours=1))
          .not_valid_after(now + dt.timedelta(days=2))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
            .issuer_name(ca_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    paths = directory / "ca.pem", directory / "chain.pem", directory / "leaf.key"
    paths[0].write_bytes(ca.public_bytes(pem))
    paths[1].write_bytes(leaf.public_bytes(pem) + ca.public_bytes(pem))
    paths[2].write_bytes(leaf_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                serialization.NoEncryption()))
    return paths


def _nginx_conf(directory: Path, origins: dict[str, str], chain: Path, key: Path) -> str:
    """As the lab serves `modern` (h2 over TLS, its headers), each origin on its address."""
    types = "".join(f"        {mime} {' '.join(exts.split())};\n" for mime, exts in MIME_TYPES)
    servers = "".join(
        f"    server {{\n        listen {ip}:443 ssl http2;\n        server_name {host};\n"
        f"        root {directory / 'www' / host};\n    }}\n"
        for host, ip in origins.items())
    return (
        f"daemon off;\nworker_processes 1;\npid {directory}/nginx.pid;\nerror_log {directory}/error.log;\n"
        "events { worker_connections 1024; }\n"
        "http {\n"
        f"    types {{\n{types}    }}\n    default_type application/octet-stream;\n"
        f"    access_log {directory}/access.log;\n"
        f"    ssl_certificate {chain};\n    ssl_certificate_key {key};\n"
        '    map $uri $cache_control { default "max-age=86400"; ~\\.html$ "no-cache"; }\n'
        '    add_header Cache-Control $cache_control always;\n'
        '    add_header Timing-Allow-Origin "*" always;\n'
        '    add_header Access-Control-Allow-Origin "*" always;\n'
        f"{servers}}}\n")


@contextmanager
def stand_in_internet() -> Iterator[StandIn]:
    """The stand-in internet, up; torn down (nginx, namespaces, files) on exit whatever happened."""
    files = stand_in_files()
    hosts = sorted({host_path.split("/", 1)[0] for host_path in files}, key=lambda h: (h != f"www.{DOMAIN}", h))
    layout = Layout(new_prefix(), server_ips=len(hosts) + 1)  # the last address: nothing listens
    directory = Path(tempfile.mkdtemp(prefix=f"{layout.prefix}-standin-"))
    try:
        directory.chmod(0o755)  # nginx's workers run as nobody
        for host_path, body in files.items():
            path = directory / "www" / host_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        for path in (directory / "www").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        ca, chain, key = _throwaway_pki(hosts, directory)
        origins = dict(zip(hosts, layout.server_addresses))
        (directory / "nginx.conf").write_text(_nginx_conf(directory, origins, chain, key))
        with NamespaceBed(layout) as bed:
            nginx = [NGINX, "-p", str(directory), "-c", str(directory / "nginx.conf")]
            ManagedProcess("the stand-in's nginx", bed.exec_argv(layout.server, nginx), bed.state_dir / "nginx.log",
                           bed=bed).start()
            silent = layout.server_addresses[-1]
            tarpit = [sys.executable, "-c", TARPIT, silent, str(TARPIT_PORT)]
            ManagedProcess("the tarpit", bed.exec_argv(layout.server, tarpit), bed.state_dir / "tarpit.log",
                           bed=bed).start()
            _wait_listening(bed, layout.server_addresses[0], 443)
            _wait_listening(bed, silent, TARPIT_PORT)
            yield StandIn(bed, URL, origins, ca, files, silent, TARPIT_PORT)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


TARPIT_PORT = 8443
#: Accepts connections and holds them unanswered (a server that hangs mid-handshake).
TARPIT = ("import socket, sys\nserver = socket.create_server((sys.argv[1], int(sys.argv[2])))\nheld = []\n"
          "while True:\n    held.append(server.accept()[0])\n")


def _wait_listening(bed: NamespaceBed, address: str, port: int) -> None:
    code = ("import socket, sys, time\nend = time.time() + 10\n"
            "while time.time() < end:\n    try:\n"
            f"        socket.create_connection(({address!r}, {port}), 0.5).close(); sys.exit(0)\n"
            "    except OSError:\n        time.sleep(0.05)\nsys.exit(1)\n")
    result = subprocess.run(bed.exec_argv(bed.layout.client, [sys.executable, "-c", code]), capture_output=True)
    assert result.returncode == 0, f"nothing listened on {address}:{port} of the stand-in within 10 s"


def record_argv(stand_in: StandIn, into: Path, name: str = "modern-shop", *extra: str,
                resolve: dict[str, str] | None = None, url: str | None = None,
                home: Path | None = None, trust: bool = True) -> list[str]:
    """The command line of `pagebench site record` of the stand-in's page, in its client
    namespace; with `home`, run as nobody (uid 65534) with that HOME and TMPDIR; `trust`:
    trust the stand-in's CA (else the system's CAs only)."""
    mapping = stand_in.resolve if resolve is None else resolve
    argv = [sys.executable, "-m", "pagebench", "site", "record", url or stand_in.url, "--name", name,
            "--into", str(into), *(["--upstream-ca", str(stand_in.ca)] if trust else []),
            *[f"--resolve={host}={ip}" for host, ip in mapping.items()], *extra]
    if home is not None:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env", f"HOME={home}",
                f"TMPDIR={home}", "PYTHONDONTWRITEBYTECODE=1", *argv]
    return stand_in.bed.exec_argv(stand_in.client, argv)


def record_stand_in(stand_in: StandIn, into: Path, name: str = "modern-shop", *extra: str,
                    resolve: dict[str, str] | None = None, url: str | None = None, home: Path | None = None,
                    trust: bool = True, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """Record the stand-in's page (by default https://www.modern-shop.com/, all ten origins
    reachable) into the site directory `into`; the finished command."""
    return subprocess.run(record_argv(stand_in, into, name, *extra, resolve=resolve, url=url, home=home,
                                      trust=trust),
                          capture_output=True, text=True, timeout=timeout, cwd=HARNESS,
                          env=os.environ | {"COLUMNS": "200"})


def recorded_stand_in(into: Path, name: str = "modern-shop") -> Path:
    """The whole round for other tests: the stand-in internet up, its page recorded into
    the site directory `into` by `pagebench site record`, the stand-in torn down."""
    with stand_in_internet() as stand_in:
        result = record_stand_in(stand_in, into, name)
    assert result.returncode == 0, result.stderr[-3000:]
    return into


# Tests ----------------------------------------------------------------------------------------


def test_a_name_or_place_that_cannot_be_written_is_refused_before_the_load(tmp_path: Path) -> None:
    """No mitmdump, no browser, no temporary directory: the refusal comes first (the URL
    answers nothing; a load would take its whole timeout)."""
    before = set(Path(tempfile.gettempdir()).glob("pagebench-record-*"))
    with pytest.raises(HarError, match="name 'modern': taken by a built-in"):
        record_site("https://www.example.com/", "modern", tmp_path / "x")
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(SiteError, match="is not a site directory; refusing to replace it"):
        record_site("https://www.example.com/", "mine", tmp_path, replace=True)
    assert set(Path(tempfile.gettempdir()).glob("pagebench-record-*")) == before
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_parse_resolve() -> None:
    assert parse_resolve(["WWW.Example.com=192.0.2.1", "a.example.com=[2001:db8::1]"]) == {
        "www.example.com": "192.0.2.1", "a.example.com": "2001:db8::1"}
    for bad in ("www.example.com", "www.example.com=host", "=192.0.2.1", "a/b=192.0.2.1"):
        with pytest.raises(RecordError, match="--resolve"):
            parse_resolve([bad])


def test_ordered_har_sorts_by_request_and_adds_what_chromium_knew() -> None:
    def entry(url: str, started: str, method: str = "GET") -> dict:
        return {"startedDateTime": started, "request": {"method": method, "url": url}, "response": {"status": 200}}

    har = {"log": {"version": "1.2", "entries": [
        entry("https://a.example/x.css", "2026-01-01T00:00:00.200+00:00"),
        entry("https://a.example:443/", "2026-01-01T00:00:00.000+00:00", "CONNECT"),
        entry("https://a.example/", "2026-01-01T00:00:00.100+00:00")]}}
    initiators = {"https://a.example/x.css": {"initiator": {"type": "parser", "url": "https://a.example/"},
                                              "type": "stylesheet"}}
    ordered = ordered_har(har, initiators)["log"]["entries"]
    assert [e["request"]["url"] for e in ordered] == ["https://a.example/", "https://a.example/x.css"]
    assert ordered[1]["_initiator"] == {"type": "parser", "url": "https://a.example/"}
    assert ordered[1]["_resourceType"] == "stylesheet" and "_initiator" not in ordered[0]
    assert len(har["log"]["entries"]) == 3  # the input is left as it was


def test_spki_of_matches_the_certificates_key(tmp_path: Path) -> None:
    ca, chain, key = _throwaway_pki(["www.example.com"], tmp_path)
    from pagebench.lab.tls import spki_sha256_b64

    loaded = serialization.load_pem_private_key(key.read_bytes(), None)
    assert spki_of(chain.read_bytes()) == spki_sha256_b64(loaded.public_key())  # the leaf comes first
    assert spki_of(ca.read_bytes()) != spki_of(chain.read_bytes())


@pytest.fixture(scope="module")
def stand_in() -> Iterator[StandIn]:
    with stand_in_internet() as running:
        yield running


def _running_in_client(stand_in: StandIn) -> list[str]:
    """The command lines of the processes in the client namespace (mitmdump, Chromium,
    Playwright's driver while a recording runs; none after)."""
    found = []
    for pid in namespace_pids(stand_in.client):
        try:
            found.append(Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:160])
        except OSError:
            pass  # gone meanwhile
    return found


@needs_root
def test_record_writes_the_page_as_a_site(stand_in: StandIn, tmp_path: Path) -> None:
    from pagebench.lab.sites import load_site

    into = tmp_path / "modern-shop"
    result = record_stand_in(stand_in, into)
    assert result.returncode == 0, result.stderr[-3000:]
    assert not _running_in_client(stand_in)
    site = load_site(into)
    recording = site.recording
    assert recording is not None
    hosts = sorted({host_path.split("/", 1)[0] for host_path in stand_in.files})
    assert recording.hosts == {host: f"{host}.test" for host in hosts}
    assert site.origins[0] == f"www.{DOMAIN}.test" and sorted(site.origins) == sorted(f"{h}.test" for h in hosts)
    assert site.manifest.entry == f"https://www.{DOMAIN}.test/"
    assert len(recording.exchanges) == len(stand_in.files) == 69, recording.missing
    assert not recording.missing
    assert all(e.status == 200 for e in recording.exchanges)
    entry = recording.exchanges[0]
    assert (entry.host, entry.target, entry.level) == (f"www.{DOMAIN}.test", "/", 0)
    for exchange in recording.exchanges:
        host = exchange.host.removesuffix(".test")
        original = stand_in.files[f"{host}{exchange.path if exchange.path != '/' else '/index.html'}"]
        body = (into / exchange.host / exchange.file).read_bytes()
        if encodings.is_text(exchange.path) or exchange.path == "/":
            assert body == original.replace(f".{DOMAIN}".encode(), f".{DOMAIN}.test".encode()), exchange.url
        else:
            assert body == original, exchange.url  # images and fonts: byte for byte


@needs_root
def test_a_url_that_does_not_answer_is_one_line_and_leaves_nothing(stand_in: StandIn) -> None:
    """Run as nobody: recording needs no root (Chromium is then started as it is)."""
    home = Path(tempfile.mkdtemp(prefix="pagebench-record-test-"))
    home.chmod(0o777)
    try:
        into = home / "silent"
        result = record_stand_in(stand_in, into, "silent", resolve={f"www.{DOMAIN}": stand_in.silent}, home=home,
                                 timeout=120)
        assert result.returncode == 1, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {URL} did not answer: connection refused ("), lines
        assert f"{stand_in.silent}', 443" in lines[0], lines  # mitmproxy's own words, with the address it tried
        assert not list(home.iterdir())  # no site, and the recording's directory is gone
        assert not _running_in_client(stand_in)
    finally:
        shutil.rmtree(home, ignore_errors=True)


@needs_root
def test_the_sites_certificate_is_checked(stand_in: StandIn, tmp_path: Path) -> None:
    """Without --upstream-ca the stand-in's CA is not trusted (the system's CAs only): no page."""
    into = tmp_path / "untrusted"
    result = record_stand_in(stand_in, into, "untrusted", trust=False, timeout=120)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {URL} did not answer: Certificate verify failed"), lines
    assert not into.exists()
    assert not _running_in_client(stand_in)


@needs_root
def test_ctrl_c_stops_mitmdump_and_chromium_and_writes_nothing(stand_in: StandIn, tmp_path: Path) -> None:
    """Interrupted while the page hangs (a server that accepts and never answers)."""
    into = tmp_path / "hung"
    scratch = Path(tempfile.mkdtemp(prefix="pagebench-record-test-"))
    scratch.chmod(0o755)  # TMPDIR of the command: Chromium (as nobody) reaches its profile below it
    url = f"https://www.{DOMAIN}:{stand_in.tarpit}/"
    try:
        proc = subprocess.Popen(record_argv(stand_in, into, "hung", "--timeout", "60", url=url,
                                            resolve={f"www.{DOMAIN}": stand_in.silent}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=HARNESS,
                                env=os.environ | {"TMPDIR": str(scratch), "COLUMNS": "200"})
        try:
            deadline = time.monotonic() + 60
            while not any("chromium" in line for line in _running_in_client(stand_in)):
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.1)
            time.sleep(1.0)  # the navigation is under way, hanging
            proc.send_signal(signal.SIGINT)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 130, stderr
        assert stderr.strip().splitlines() == [
            "error: interrupted; nothing was written, mitmproxy and Chromium are stopped"], stderr
        assert not into.exists()
        assert not _running_in_client(stand_in)
        assert not list(scratch.iterdir())  # the recording's directory (the CA's key in it) is gone
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
