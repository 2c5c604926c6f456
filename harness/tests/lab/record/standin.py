"""A stand-in internet for `pagebench site record`: the built-in `modern` site under
real-looking names (`*.modern-shop.com`), served by nginx over TLS from a throwaway CA, one
address per origin, in the server namespace of a lab of the caller's own (its prefix
carries the session's tag). The recorder runs in the lab's client namespace (a regular
route through the router to those addresses) and reaches the names through `--resolve`
and `--upstream-ca`: no traffic leaves the test's namespaces or loopback.

For the recorder's tests (`tests/lab/record/test_recorder_e2e.py`) and others (the replay
acceptance test records the stand-in, then replays what was written): `recorded_stand_in(into,
tag)` does the whole round; `stand_in_internet(tag)` and `record_stand_in()` are its two
halves. `throwaway_pki()` is the CA and certificate alone (pure: files only)."""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pagebench.core import encodings
from pagebench.core.layout import Layout, new_prefix
from pagebench.core.servers.headers import MIME_TYPES
from pagebench.core.sites.builtin import builtin
from pagebench.lab.netns import NamespaceBed
from pagebench.system.process import ManagedProcess
from tests.helpers import HARNESS, tagged

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


def throwaway_pki(hosts: list[str], directory: Path) -> tuple[Path, Path, Path]:
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
def stand_in_internet(tag: str) -> Iterator[StandIn]:
    """The stand-in internet, up, in a lab tagged `tag`; torn down (nginx, namespaces,
    files) on exit whatever happened."""
    files = stand_in_files()
    hosts = sorted({host_path.split("/", 1)[0] for host_path in files}, key=lambda h: (h != f"www.{DOMAIN}", h))
    layout = Layout(new_prefix(tag), server_ips=len(hosts) + 1)  # the last address: nothing listens
    directory = Path(tempfile.mkdtemp(prefix=f"{layout.prefix}-standin-"))
    try:
        directory.chmod(0o755)  # nginx's workers run as nobody
        for host_path, body in files.items():
            path = directory / "www" / host_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(body)
        for path in (directory / "www").rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        ca, chain, key = throwaway_pki(hosts, directory)
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
                          env=tagged({"COLUMNS": "200"}))


def recorded_stand_in(into: Path, tag: str, name: str = "modern-shop") -> Path:
    """The whole round for other tests: the stand-in internet up (in a lab tagged `tag`),
    its page recorded into the site directory `into` by `pagebench site record`, the
    stand-in torn down."""
    with stand_in_internet(tag) as stand_in:
        result = record_stand_in(stand_in, into, name)
    assert result.returncode == 0, result.stderr[-3000:]
    return into
