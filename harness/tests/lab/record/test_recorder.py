"""`pagebench site record`'s parts that need no page: the refusals that come before any
load, `--resolve`, the HAR's order and the certificate pin. Recording a stand-in internet
for real is `test_recorder_e2e.py`'s."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from pagebench.core.har.parse import HarError
from pagebench.core.sites.model import SiteError
from pagebench.lab.record.mitmdump import RecordError, spki_of
from pagebench.lab.record.recorder import ordered_har, parse_resolve, record_site
from tests.lab.record.standin import throwaway_pki


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
    ca, chain, key = throwaway_pki(["www.example.com"], tmp_path)
    from pagebench.lab.tls import spki_sha256_b64

    loaded = serialization.load_pem_private_key(key.read_bytes(), None)
    assert spki_of(chain.read_bytes()) == spki_sha256_b64(loaded.public_key())  # the leaf comes first
    assert spki_of(ca.read_bytes()) != spki_of(chain.read_bytes())
