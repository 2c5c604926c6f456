"""The local CA: name-constrained to .test, one leaf key, cached leaves, safe files."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import stat
import subprocess
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from cryptography.x509.verification import PolicyBuilder, Store, VerificationError

from pagebench.core import certs
from pagebench.lab import tls
from pagebench.system import places
from tests.helpers import program

NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


@pytest.fixture
def authority(tmp_path: Path) -> tls.Authority:
    return tls.Authority(tmp_path / "data" / "tls")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _load(path: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def _verifier(ca: x509.Certificate, host: str):
    now = dt.datetime.now(dt.timezone.utc)
    return PolicyBuilder().store(Store([ca])).time(now).build_server_verifier(x509.DNSName(host))


# Pure helpers ---------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["www.seed000.test", "A.B.test", "x-1.y.test", "www.gen.test."])
def test_test_hostnames_are_accepted(host: str):
    assert certs.check_hostname(host) == host.lower().rstrip(".")


@pytest.mark.parametrize("host", ["example.com", "test", "www.test.com", "a..test", "-a.test", "a_b.test", "",
                                  "www.example.com.evil"])
def test_other_hostnames_are_refused_in_one_line(host: str):
    with pytest.raises(ValueError) as error:
        certs.check_hostname(host)
    message = str(error.value)
    assert repr(host) in message and ".test" in message and "\n" not in message


def test_hostname_sets_are_sorted_and_deduplicated():
    assert certs.check_hostnames(["b.x.test", "a.x.test", "B.x.test"]) == ("a.x.test", "b.x.test")
    with pytest.raises(ValueError, match="at least one"):
        certs.check_hostnames([])


def test_ca_is_name_constrained_to_test_and_no_ip_addresses():
    key = tls.new_key()
    ca = tls.build_ca(key, NOW)
    constraints = ca.extensions.get_extension_for_class(x509.NameConstraints)
    assert constraints.critical
    assert constraints.value.permitted_subtrees == [x509.DNSName("test")]
    assert {str(n.value) for n in constraints.value.excluded_subtrees} == {"0.0.0.0/0", "::/0"}
    basic = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert basic.critical and basic.value.ca and basic.value.path_length == 0
    assert ca.extensions.get_extension_for_class(x509.KeyUsage).value.key_cert_sign
    assert isinstance(ca.public_key(), ec.EllipticCurvePublicKey)
    assert ca.public_key().curve.name == "secp256r1"
    ca.verify_directly_issued_by(ca)  # self-signed


def test_leaf_carries_the_hostnames_and_chains_to_the_ca():
    ca_key, leaf_key = tls.new_key(), tls.new_key()
    ca = tls.build_ca(ca_key, NOW)
    leaf = tls.build_leaf(["www.a.test", "img.a.test"], leaf_key.public_key(), ca, ca_key, NOW)
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["img.a.test", "www.a.test"]
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    leaf.verify_directly_issued_by(ca)
    assert tls.leaf_usable(leaf, ca, leaf_key.public_key(), NOW)
    assert not tls.leaf_usable(leaf, ca, tls.new_key().public_key(), NOW)  # another key
    assert not tls.leaf_usable(leaf, ca, leaf_key.public_key(), NOW + dt.timedelta(days=390))  # expiring
    assert not tls.leaf_usable(leaf, tls.build_ca(tls.new_key(), NOW), leaf_key.public_key(), NOW)  # other CA
    with pytest.raises(ValueError, match="'example.com'"):
        tls.build_leaf(["www.a.test", "example.com"], leaf_key.public_key(), ca, ca_key, NOW)


def test_spki_hash_is_base64_sha256_of_the_der_subject_public_key_info():
    key = tls.new_key()
    der = key.public_key().public_bytes(serialization.Encoding.DER,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    value = tls.spki_sha256_b64(key.public_key())
    assert base64.b64decode(value) == hashlib.sha256(der).digest()
    assert len(value) == 44


# On disk ----------------------------------------------------------------------------------


def test_files_are_created_once_with_private_permissions(authority: tls.Authority):
    leaf = authority.leaf(["www.a.test"])
    directory = authority.directory
    assert _mode(directory) == 0o700
    assert _mode(directory / "ca.key") == 0o600 and _mode(leaf.key_path) == 0o600
    assert leaf.key_path == directory / "leaf.key"
    assert authority.ca_path == directory / "ca.pem"
    assert not any(p.name.endswith(".tmp") for p in directory.iterdir())
    chain = leaf.chain_path.read_bytes()
    assert chain == leaf.cert_path.read_bytes() + authority.ca_path.read_bytes()
    ca_before = authority.ca_path.read_bytes()
    assert tls.Authority(directory).ca_path.read_bytes() == ca_before  # generated once, reused


def test_leaves_are_cached_and_share_one_key(authority: tls.Authority):
    first = authority.leaf(["www.a.test", "img.a.test"])
    stamp = first.cert_path.stat().st_mtime_ns
    again = authority.leaf(["img.a.test", "www.a.test", "www.a.test"])
    assert again == first and first.cert_path.stat().st_mtime_ns == stamp
    other = authority.leaf(["www.b.test"])
    assert other.cert_path != first.cert_path
    assert other.spki_sha256_b64 == first.spki_sha256_b64 == authority.spki_list()
    # the flag value is the hash of what the server actually sends
    cert = _load(first.cert_path)
    assert tls.spki_sha256_b64(cert.public_key()) == authority.spki_list()


def test_a_new_ca_reissues_the_leaves(authority: tls.Authority):
    first = authority.leaf(["www.a.test"])
    old = first.cert_path.read_bytes()
    (authority.directory / "ca.key").unlink()
    again = authority.leaf(["www.a.test"])
    assert again.cert_path.read_bytes() != old
    _load(again.cert_path).verify_directly_issued_by(_load(authority.ca_path))
    assert again.spki_sha256_b64 == first.spki_sha256_b64  # the leaf key is kept


def test_non_test_names_are_refused(authority: tls.Authority):
    with pytest.raises(ValueError) as error:
        authority.leaf(["www.a.test", "www.example.com"])
    assert "'www.example.com'" in str(error.value) and "\n" not in str(error.value)


def test_default_directory_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(places.DATA_DIR_ENV, str(tmp_path / "elsewhere"))
    assert places.data_dir() == tmp_path / "elsewhere"
    assert tls.ca_path() == tmp_path / "elsewhere" / "tls" / "ca.pem"
    monkeypatch.delenv(places.DATA_DIR_ENV)
    assert places.data_dir() == Path("/var/lib/pagebench")


def test_keys_never_go_inside_the_repository():
    repo = places.checkout()  # the test command installs pagebench editable from its checkout
    assert repo is not None and (repo / ".git").exists(), \
        "pagebench is not installed from a git checkout: run `sudo harness/bootstrap test` in one"
    with pytest.raises(ValueError, match="inside the repository"):
        tls.Authority(repo / "results" / "tls")


def test_the_ca_verifies_its_leaves(authority: tls.Authority):
    leaf = authority.leaf(["www.a.test", "img.a.test"])
    ca = _load(authority.ca_path)
    chain = _verifier(ca, "img.a.test").verify(_load(leaf.cert_path), [])
    assert chain[-1] == ca


def _rogue_leaf(authority: tls.Authority, name: str) -> x509.Certificate:
    """What a stolen CA key could sign: a certificate for a real site."""
    ca = _load(authority.ca_path)
    ca_key = serialization.load_pem_private_key((authority.directory / "ca.key").read_bytes(), None)
    key = tls.new_key()
    now = dt.datetime.now(dt.timezone.utc)
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(hours=1)).not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )


def test_name_constraints_reject_a_certificate_for_a_real_site(authority: tls.Authority, tmp_path: Path):
    rogue = _rogue_leaf(authority, "example.com")
    rogue.verify_directly_issued_by(_load(authority.ca_path))  # the signature itself is fine...
    with pytest.raises(VerificationError):  # ...but the CA may not vouch for example.com
        _verifier(_load(authority.ca_path), "example.com").verify(rogue, [])
    openssl = program("openssl", "openssl")
    path = tmp_path / "rogue.pem"
    path.write_bytes(tls.pem(rogue))
    result = subprocess.run([openssl, "verify", "-CAfile", str(authority.ca_path), str(path)],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "permitted subtree violation" in result.stdout + result.stderr
    good = subprocess.run([openssl, "verify", "-CAfile", str(authority.ca_path),
                           str(authority.leaf(["www.a.test"]).cert_path)], capture_output=True, text=True)
    assert good.returncode == 0, good.stdout + good.stderr
