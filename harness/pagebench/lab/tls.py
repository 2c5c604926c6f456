"""The local certificate authority that signs the test sites' certificates.

One CA per installation, generated on first use under `<data dir>/tls/` (default
`/var/lib/pagebench/tls`; `$PAGEBENCH_DATA_DIR/tls` when that is set), never inside
the repository. Its certificate carries a critical NameConstraints extension that
permits DNS names under `.test` only (and excludes every IP address), so even a
leaked CA key can never vouch for a real site.

All leaf certificates share ONE leaf key, so Chromium trusts every site through a
single `--ignore-certificate-errors-spki-list=<spki_list()>` value: a trust decision
for one key. Ignoring certificate errors wholesale would turn off Chromium's HTTP
cache, so pagebench never does. curl and
openssl use the CA file (`ca_path()`). Keys are ECDSA P-256.

Layout (directory 0700, keys 0600):

    tls/ca.key  tls/ca.pem  tls/leaf.key
    tls/leaf-<sha256(hostnames)[:16]>.pem         the leaf certificate
    tls/leaf-<sha256(hostnames)[:16]>-chain.pem   leaf + CA

The `build_*` and `spki_sha256_b64` helpers are pure (keys and time are arguments);
`Authority` does the file I/O.
"""

from __future__ import annotations

import base64
import datetime as dt
import fcntl
import hashlib
import ipaddress
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from pagebench.core.certs import PERMITTED_DOMAIN, Leaf, check_hostnames
from pagebench.system import places

CA_DAYS = 3650
LEAF_DAYS = 397  # within browsers' 398-day limit, should it ever matter
RENEW_BEFORE = dt.timedelta(days=30)


# Pure helpers ------------------------------------------------------------------


def spki_sha256_b64(public_key: ec.EllipticCurvePublicKey) -> str:
    """base64(sha256(DER SubjectPublicKeyInfo)): what Chromium's SPKI flag wants."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.b64encode(hashlib.sha256(der).digest()).decode()


def new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _serial(*parts: bytes) -> int:
    return int.from_bytes(hashlib.sha256(b"".join(parts)).digest()[:16], "big") >> 1 or 1


def build_ca(key: ec.EllipticCurvePrivateKey, now: dt.datetime) -> x509.Certificate:
    """Self-signed CA, name-constrained to `.test` DNS names, no IP addresses."""
    name = x509.Name([
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pagebench"),
        x509.NameAttribute(NameOID.COMMON_NAME, "pagebench local CA (.test only)"),
    ])
    public = key.public_key()
    constraints = x509.NameConstraints(
        permitted_subtrees=[x509.DNSName(PERMITTED_DOMAIN)],
        excluded_subtrees=[x509.IPAddress(ipaddress.ip_network("0.0.0.0/0")),
                           x509.IPAddress(ipaddress.ip_network("::/0"))],
    )
    return (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(public)
        .serial_number(_serial(b"ca", spki_sha256_b64(public).encode(), now.isoformat().encode()))
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=CA_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                     crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(constraints, critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )


def build_leaf(
    hostnames: Iterable[str],
    leaf_public: ec.EllipticCurvePublicKey,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    now: dt.datetime,
) -> x509.Certificate:
    """A server certificate for `hostnames` (all under .test), signed by the CA."""
    names = check_hostnames(hostnames)
    ca_ski = ca_cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(ca_cert.subject).public_key(leaf_public)
        .serial_number(_serial(b"leaf", ",".join(names).encode(), now.isoformat().encode()))
        .not_valid_before(now - dt.timedelta(hours=1))
        .not_valid_after(now + dt.timedelta(days=LEAF_DAYS))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name) for name in names]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                     data_encipherment=False, key_agreement=False, key_cert_sign=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(leaf_public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ca_ski), critical=False)
        .sign(ca_key, hashes.SHA256())
    )


def leaf_usable(cert: x509.Certificate, ca_cert: x509.Certificate, leaf_public: ec.EllipticCurvePublicKey,
                now: dt.datetime) -> bool:
    """Still signed by this CA, for this key, and not about to expire."""
    try:
        cert.verify_directly_issued_by(ca_cert)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return cert.public_key() == leaf_public and cert.not_valid_after_utc - RENEW_BEFORE > now


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


# File I/O ----------------------------------------------------------------------


class Authority:
    """The CA and leaf key in one directory; created on first use, then reused."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = Path(directory) if directory is not None else places.data_dir() / "tls"
        repo = places.checkout()
        if repo is not None and (repo / ".git").exists() and self.directory.resolve().is_relative_to(repo):
            raise ValueError(f"{places.DATA_DIR_ENV}: {self.directory} is inside the repository; "
                             f"private keys must live outside it")

    @property
    def ca_path(self) -> Path:
        """The CA certificate (PEM), for curl --cacert / openssl -CAfile."""
        self._ensure_ca()
        return self.directory / "ca.pem"

    def leaf(self, hostnames: Iterable[str]) -> Leaf:
        """A certificate for these .test hostnames, cached on disk and reused."""
        names = check_hostnames(hostnames)
        ca_cert, ca_key = self._ensure_ca()
        leaf_key = self._ensure_leaf_key()
        tag = hashlib.sha256(",".join(names).encode()).hexdigest()[:16]
        cert_path = self.directory / f"leaf-{tag}.pem"
        chain_path = self.directory / f"leaf-{tag}-chain.pem"
        now = _now()
        with self._lock():
            current = _read_cert(cert_path)
            if current is None or not leaf_usable(current, ca_cert, leaf_key.public_key(), now) \
                    or not chain_path.exists():
                cert = build_leaf(names, leaf_key.public_key(), ca_cert, ca_key, now)
                _write(cert_path, pem(cert), 0o644)
                _write(chain_path, pem(cert) + pem(ca_cert), 0o644)
        return Leaf(cert_path, self.directory / "leaf.key", chain_path, spki_sha256_b64(leaf_key.public_key()))

    def spki_list(self) -> str:
        """The value for Chromium's --ignore-certificate-errors-spki-list."""
        return spki_sha256_b64(self._ensure_leaf_key().public_key())

    # internals

    def _prepare_dir(self) -> None:
        parent = self.directory.parent
        if not parent.exists():
            parent.mkdir(parents=True, mode=0o755)
        self.directory.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.directory, 0o700)

    @contextmanager
    def _lock(self) -> Iterator[None]:
        self._prepare_dir()
        with open(self.directory / ".lock", "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def _ensure_ca(self) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        with self._lock():
            key_path, cert_path = self.directory / "ca.key", self.directory / "ca.pem"
            key, cert = _read_key(key_path), _read_cert(cert_path)
            if key is None or cert is None or cert.public_key() != key.public_key():
                key = new_key()
                cert = build_ca(key, _now())
                _write(key_path, key_pem(key), 0o600)
                _write(cert_path, pem(cert), 0o644)
            return cert, key

    def _ensure_leaf_key(self) -> ec.EllipticCurvePrivateKey:
        with self._lock():
            path = self.directory / "leaf.key"
            key = _read_key(path)
            if key is None:
                key = new_key()
                _write(path, key_pem(key), 0o600)
            return key


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def _read_cert(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _read_key(path: Path) -> ec.EllipticCurvePrivateKey | None:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _write(path: Path, data: bytes, mode: int) -> None:
    """Atomic: a reader sees the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(fd, mode)
        handle.write(data)
    os.replace(tmp, path)


# Module-level shortcuts on the default directory ---------------------------------


def leaf(hostnames: Iterable[str], directory: Path | None = None) -> Leaf:
    return Authority(directory).leaf(hostnames)


def spki_list(directory: Path | None = None) -> str:
    return Authority(directory).spki_list()


def ca_path(directory: Path | None = None) -> Path:
    return Authority(directory).ca_path
