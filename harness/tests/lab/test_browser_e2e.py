"""The browser driver in real Chromium: the wrapper's arguments, and priming a profile
with the dictionaries a page announces, then loading a later version of the page over a
delta (dcz) from a small HTTPS server here, with the lab's private CA (what a Link
header announces: `test_network.py`)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from pagebench.core import encodings
from pagebench.core.measure.metrics import resources
from pagebench.lab import browser, network
from pagebench.lab.browser import Driver, Setup, write_wrapper
from tests.helpers import needs_root, readable_dir
from tests.lab.handler import QuietHandler, https_origin

pytestmark = needs_root

HOST = "www.s.test"
PAGE = f"https://{HOST}/"
CSS = {1: b"body { color: rgb(1, 2, 3); }\n" * 40, 2: b"body { color: rgb(1, 2, 3); }\n" * 39 + b"p { margin: 0 }\n"}
HTML = b'<!doctype html><link rel="stylesheet" href="/a.css"><p>hello</p>'


def _wrapper_argv(work: Path, *args: str) -> list[str]:
    """The arguments the wrapper hands Chromium (here a program that prints them, run as
    nobody like Chromium)."""
    printer = work / "print-args"
    printer.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n')
    printer.chmod(0o755)
    saved, browser.CHROMIUM = browser.CHROMIUM, str(printer)
    try:
        wrapper = write_wrapper(work / "wrapper", None, work / "home")
    finally:
        browser.CHROMIUM = saved
    return subprocess.run([str(wrapper), *args], check=True, capture_output=True, text=True).stdout.splitlines()


def test_the_wrapper_adds_our_features_to_playwrights_disable_features():
    feature = "CompressionDictionaryTransportRequireKnownRootCert"
    with readable_dir() as work:
        assert _wrapper_argv(work, "--a", "--disable-features=X,Y", "--b c") == [
            "--a", f"--disable-features=X,Y,{feature}", "--b c"]
        assert _wrapper_argv(work, "--a") == ["--a", f"--disable-features={feature}"]
        assert _wrapper_argv(work, "--disable-features=") == [f"--disable-features={feature}"]


class _Site(QuietHandler):
    """Version `server.version` of a page and its stylesheet, served as the lab's
    versioned sites are: text `no-cache` with ETags, v1 of a.css as a dictionary at
    a.css.pbdict, a dcz delta when the browser offers that dictionary."""

    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.server.seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        version = self.server.version
        headers = {"Cache-Control": "no-cache"}
        if self.path == "/":
            body, headers["Content-Type"] = HTML, "text/html"
            headers["Link"] = f'<https://{HOST}/a.css{encodings.DICTIONARY_SUFFIX}>; rel="compression-dictionary"'
            headers["ETag"] = '"html"'
        elif self.path == "/a.css":
            body, headers["Content-Type"], headers["ETag"] = CSS[version], "text/css", f'"css{version}"'
            headers["Vary"] = "Accept-Encoding, Available-Dictionary"
            offered = self.headers.get("Available-Dictionary")
            if offered == encodings.available_dictionary(CSS[1]) and "dcz" in self.headers.get("Accept-Encoding", ""):
                body, headers["Content-Encoding"] = encodings.dcz_encode(CSS[1], body), "dcz"
        elif self.path == "/a.css" + encodings.DICTIONARY_SUFFIX:
            time.sleep(self.server.dictionary_delay_s)
            body, headers["Content-Type"] = CSS[1], "text/css"
            headers.update({"Cache-Control": "max-age=86400", "Use-As-Dictionary": 'match="/a.css"'})
        else:
            body, headers = b"", {}
        if headers.get("ETag") and self.headers.get("If-None-Match") == headers["ETag"]:
            status, body = 304, b""
        else:
            status = 200 if headers else 404
        self.answer(status, headers, body)


class _Server(ThreadingHTTPServer):
    version = 1
    dictionary_delay_s = 0.0
    seen: list[tuple[str, dict[str, str]]]


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[_Server, Setup, Driver]]:
    """The HTTPS server and one browser driver for the module (each test primes profiles
    of its own names)."""
    with readable_dir() as work:  # Chromium runs as nobody
        server = _Server(("127.0.0.1", 0), _Site)
        with https_origin(server, HOST, work) as setup, sync_playwright() as pw:
            driver = Driver(pw, work / "browser", None)
            try:
                yield server, setup, driver
            finally:
                driver.close()


@pytest.fixture
def lab(served: tuple[_Server, Setup, Driver]) -> tuple[_Server, Setup, Driver]:
    """The module's server as a test starts it: version 1, nothing seen, no delay."""
    server = served[0]
    server.version, server.dictionary_delay_s, server.seen = 1, 0.0, []
    return served


def test_a_primed_profile_gets_the_later_version_as_a_delta(lab):
    """Priming waits for the announced dictionary (fetched after `load`); the warm load
    of version 2 offers it and receives a.css as dcz; the record says both."""
    server, setup, driver = lab
    primed = driver.prime(setup, "p", PAGE, 20.0, dictionaries=True)
    assert primed.error is None
    assert any(path == "/a.css.pbdict" for path, _ in server.seen)
    server.version, server.seen = 2, []
    raw = driver.warm(setup, "p", PAGE, 20.0)
    assert raw.error is None, raw.error
    css = {r.url: r for r in resources(raw)}[f"https://{HOST}/a.css"]
    assert (css.status, css.content_encoding, css.dictionary_offered, css.dictionary_used) == (200, "dcz", True, True)
    assert (css.body_bytes, css.encoded_bytes) == (len(CSS[2]), len(encodings.dcz_encode(CSS[1], CSS[2])))
    [(_, sent)] = [(path, headers) for path, headers in server.seen if path == "/a.css"]
    assert sent["available-dictionary"] == encodings.available_dictionary(CSS[1]) and "dcz" in sent["accept-encoding"]


def test_priming_without_an_announced_dictionary_says_so(lab):
    server, setup, driver = lab
    primed = driver.prime(setup, "q", f"https://{HOST}/a.css", 20.0, dictionaries=True)
    assert primed.error == "the page announced no compression dictionary (no Link: rel=compression-dictionary)"
    assert driver.prime(setup, "q", PAGE, 20.0).error is None  # other callers: no waiting, no error


def test_priming_sees_a_dictionary_that_comes_after_the_pages_last_call(lab):
    """A dictionary answered late (here after the page metrics were read) still counts:
    the recorder's waits let sync Playwright deliver CDP events, which a time.sleep() did
    not (through the edge proxy one dictionary came ~0.2 s late and was reported missing)."""
    server, setup, driver = lab
    server.dictionary_delay_s = 0.7
    started = time.monotonic()
    primed = driver.prime(setup, "late", PAGE, 20.0, dictionaries=True)
    assert primed.error is None, primed.error
    assert time.monotonic() - started < network.DICTIONARY_QUIET_S + 5.0  # not the 10 s deadline
