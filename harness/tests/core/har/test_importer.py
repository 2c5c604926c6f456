"""Importing a HAR's page as a site (pure): a DevTools HAR and a real Playwright
recording become sites, redirect chains are replayed from the first URL, what cannot be
replayed is listed as missing, bodies are stored once, and HARs that make no site are
one-line errors."""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import pytest

from pagebench.core.har.importer import import_har
from pagebench.core.har.parse import HarError, parse_har
from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.recording import BODIES_DIR, lab_host
from tests.core.har import shapes
from tests.core.har.hars import FIXTURES, PAGES, PNG, body, chrome_har, entry, imported


def test_a_devtools_har_becomes_a_site_with_its_hosts_mapped():
    site = imported(*chrome_har(), pages=PAGES)
    assert site.recording.hosts == {h: f"{h}.test" for h in (
        "www.example.com", "cdn.example.com", "fonts.example.com", "api.example.com", "img.example.com")}
    assert site.manifest.entry == "https://www.example.com.test/"
    assert site.manifest.origins[0] == "www.example.com.test" and site.manifest.recording == "recording.json"
    urls = [e.url for e in site.recording.exchanges]
    assert "https://www.example.com.test/later" not in urls  # the second page
    assert site.left_out == {"of the HAR's 1 other page(s)": 1, "data: URLs (inline data: no server is asked)": 1}
    assert site.pages == ('1 page_1 "x" (7 requests)', '2 page_2 "y" (1 request)') and site.page == 0
    assert not any(u.startswith("data:") for u in urls) and not site.recording.missing
    assert body(site, "https://img.example.com.test/a.png") == PNG  # base64 decoded, untouched
    exchange = next(e for e in site.recording.exchanges if e.url.endswith("a.png"))
    assert exchange.file == f"{BODIES_DIR}/{exchange.file[len(BODIES_DIR) + 1:]}" and exchange.file.endswith(".png")
    assert exchange.content_type == "image/png" and exchange.original == "https://img.example.com/a.png"


def test_the_modern_fixture_recorded_by_playwright():
    """A real Playwright HAR of the built-in `modern` site: every request replayable, the
    bodies as recorded, the fonts a stylesheet loads (cross-origin Referer) at level 2."""
    raw = gzip.decompress((FIXTURES / "modern.har.gz").read_bytes())
    log = json.loads(raw)["log"]
    site = import_har(parse_har(raw, "modern.har.gz"), "mine", "modern.har.gz")
    assert len(site.recording.exchanges) == len(log["entries"]) and not site.recording.missing
    decoded = sum(len(base64.b64decode(e["response"]["content"]["text"])) if e["response"]["content"].get("encoding")
                  else len(e["response"]["content"]["text"].replace(".modern.test", ".modern.test.test").encode())
                  for e in log["entries"])
    assert site.total_bytes == decoded  # text bodies name the lab hosts (`lab_host`: 5 bytes longer each)
    fonts = {e.level for e in site.recording.exchanges if e.content_type.startswith("font/")}
    assert fonts == {2}
    assert set(site.manifest.origins) == {lab_host(host) for host in builtin("modern").origins}


def test_a_redirect_chain_is_replayed_from_the_first_url():
    site = imported(
        entry("http://example.com/", 301, mime="text/html", headers={"Location": "https://example.com/"}),
        entry("https://example.com/", 302, headers={"location": "/home?a=1"}, at=0.01),
        entry("https://www.example.com/home?a=1", 404, at=0.02, text="gone"),  # not the page
        entry("https://example.com/home?a=1", 301, headers={"Location": "https://www.example.com/home"}, at=0.03),
        entry("https://www.example.com/home", text="<p>home</p>", at=0.04),
    )
    assert site.manifest.entry == "https://example.com.test/"  # the first URL requested
    assert site.manifest.origins[0] == "example.com.test"
    by = {e.url: e for e in site.recording.exchanges}
    # http -> https of the same URL is left out: the lab serves TLS already
    assert by["https://example.com.test/"].status == 302
    assert by["https://example.com.test/"].location == "https://example.com.test/home?a=1"
    assert by["https://example.com.test/home?a=1"].location == "https://www.example.com.test/home"
    assert all(by[u].level == 0 for u in ("https://example.com.test/", "https://example.com.test/home?a=1",
                                          "https://www.example.com.test/home"))
    assert by["https://www.example.com.test/home?a=1"].status == 404  # an error the page met is replayed


def failed(url: str, error: str) -> dict[str, Any]:
    """A request that failed as DevTools writes it: status 0 and `response._error`."""
    failure = entry(url, 0, mime="x-unknown", text=None, at=0.1)
    failure["response"]["_error"] = error
    return failure


def attached(url: str, file: str, mime: str = "text/javascript") -> dict[str, Any]:
    """A body Playwright saved beside the HAR (`record_har_content="attach"`)."""
    outside = entry(url, mime=mime, text=None, size=100, at=0.4)
    outside["response"]["content"]["_file"] = file
    return outside


def test_what_cannot_be_replayed_is_listed_as_missing():
    site = imported(
        entry("https://www.example.com/", text="<p>x</p>"),
        entry("https://www.example.com/nobody.js", mime="text/javascript", text=None, size=500, at=0.1),
        entry("https://www.example.com/old.css", 304, mime="text/css", text=None, at=0.1),
        entry("https://www.example.com/api", method="POST", mime="application/json", text="{}", at=0.1),
        entry("https://www.example.com/part.mp4", 206, mime="video/mp4", text=b"\x00" * 10, at=0.1),
        entry("https://ads.example.net/x.js", 0, mime="", text=None, at=0.1),
        failed("https://www.example.com/fail.js", "net::ERR_BLOCKED_BY_CLIENT"),
        entry("blob:https://www.example.com/1234", text="x", at=0.1),
        entry("chrome-extension://abc/x.js", text="x", at=0.1),
        entry("https://www.example.com/dup.css", mime="text/css", text=None, size=10, at=0.2),
        entry("https://www.example.com/dup.css", mime="text/css", text="a{}", at=0.3),
        entry("https://www.example.com/twice.css", mime="text/css", text="first", at=0.3),
        entry("https://www.example.com/twice.css", mime="text/css", text="second", at=0.4),
        entry("https://bad_host.example.com/x.png", mime="image/png", text=b"x", at=0.5),
        entry("wss://www.example.com/live", 101, mime="", text=None, at=0.5),
        attached("https://www.example.com/big.js", "abc123.js"),
    )
    missing = "\n".join(site.recording.missing)
    # bodies not saved (in the HAR or beside it) and 304s are made: a stand-in (test_synth.py)
    assert "nobody.js" not in missing and "old.css" not in missing and "big.js" not in missing
    assert site.fidelity is not None and site.fidelity.made == 3  # nobody.js, old.css, big.js (not dup.css)
    assert "1 body(ies) saved in separate files beside the HAR (Playwright's attach mode) were made" in " ".join(
        site.warnings)
    assert "https://www.example.com/api: a POST: only GET requests are replayed" in missing
    assert "part.mp4: a partial (206) response" in missing
    assert "https://ads.example.net/x.js: failed when recorded (no response)" in missing
    assert "https://www.example.com/fail.js: failed when recorded (net::ERR_BLOCKED_BY_CLIENT)" in missing
    assert "bad_host.example.com/x.png: its host cannot be served in the lab" in missing
    assert "blob:" not in missing and "chrome-extension" not in missing and "dup.css" not in missing
    assert "wss:" not in missing  # left out by the parser: counted below
    assert len(site.recording.missing) == 5
    assert site.left_out == {
        "blob: URLs (made by the page's scripts: no server is asked)": 1,
        "chrome-extension: URLs (the browser's own or an extension's: no server is asked)": 1,
        "WebSockets (ws:, wss:): not replayed; a script that opens one fails to connect in the lab": 1,
        "repeats of a URL requested before (a replay answers a URL with one response, the first that can be "
        "replayed; 1 of them were recorded with another status or body)": 2}
    assert body(site, "https://www.example.com.test/dup.css") == b"a{}"  # a saved body beats a made one
    assert body(site, "https://www.example.com.test/twice.css") == b"first"
    # a host whose every request failed is still an origin: its requests 404 in the lab
    assert "ads.example.net.test" in site.manifest.origins


def test_one_body_is_stored_once_per_host():
    site = imported(entry("https://www.example.com/", text="<p>x</p>"),
                    entry("https://www.example.com/a.png", mime="image/png", text=PNG, at=0.1),
                    entry("https://www.example.com/b.png", mime="image/png", text=PNG, at=0.1),
                    entry("https://img.example.com/c.png", mime="image/png", text=PNG, at=0.1))
    files = {e.path: (e.host, e.file) for e in site.recording.exchanges}
    assert files["/a.png"] == files["/b.png"] and files["/c.png"][0] == "img.example.com.test"
    assert len(site.files) == 3


@pytest.mark.parametrize(("entries", "name", "message"), [
    ([entry("https://www.example.com/a.css", mime="text/css", text="a{}")], "mine",
     "x.har: no HTML document among the page's requests"),
    ([entry("https://www.example.com/", text="")], "mine",
     "x.har: the page https://www.example.com/: its document is empty (0 bytes) in the HAR: there is no page to load"),
    ([entry("https://www.example.com/", text="x")], "modern", "name 'modern': taken by a built-in or generated site"),
    ([entry("https://www.example.com/", text="x")], "Mine Site", "name 'Mine Site': must be 1-80 lower-case"),
    ([entry("https://1.2.3.4/", text="x"), entry("https://ip-1-2-3-4/", text="y", at=1)], "mine",
     "x.har: hosts 1.2.3.4 and ip-1-2-3-4 would both be the lab host ip-1-2-3-4.test"),
])
def test_hars_that_make_no_site_are_one_line_errors(entries, name, message):
    with pytest.raises(HarError) as caught:
        imported(*entries, name=name)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_a_document_not_saved_or_saved_beside_the_har_is_made_not_refused():
    """The refusals of a document without a body (not saved; Playwright's attach mode) are
    gone: its page is a synthesized stand-in, and a warning says so."""
    unsaved = imported(entry("https://www.example.com/", text=None, size=100),
                       entry("https://www.example.com/a.css", mime="text/css", text="a{}", at=1))
    assert not unsaved.recording.missing and unsaved.fidelity is not None and unsaved.fidelity.made == 1
    assert body(unsaved, "https://www.example.com.test/a.css") == b"a{}"  # a saved body kept
    beside = imported(attached("https://www.example.com/", "d41d8c.html", "text/html"))
    assert not beside.recording.missing and body(beside, "https://www.example.com.test/")
    assert "1 body(ies) saved in separate files beside the HAR (Playwright's attach mode) were made" in " ".join(
        beside.warnings)


# The HAR shapes of the tools (hand-written imitations, `shapes.py`) -------------------------

def _import(data: dict, page: str | None = None):
    return import_har(parse_har(json.dumps(data), "t.har"), "mine", "t.har", page)


@pytest.mark.parametrize("data", [
    shapes.webpagetest_shape(), shapes.http_archive_shape(), shapes.browsertime_shape(),
    shapes.firefox_shape(bodies=False), shapes.devtools_shape(bodies=False),
], ids=["webpagetest", "http-archive", "browsertime", "firefox", "devtools"])
def test_a_har_without_bodies_is_synthesized_never_an_empty_page(data):
    """Sizes of 0 and -1 (WebPageTest's `content.size`, `bodySize`) are unknown, not empty:
    no bodiless HAR becomes a site of empty responses. It is no longer refused: its page is
    a synthesized stand-in (`synth.py`, test_synth.py), and a warning says so."""
    site = _import(data)
    assert len(site.recording.exchanges) == 5 and not site.recording.missing
    assert site.fidelity is not None and site.fidelity.made == 5 and all(site.files.values())
    assert site.warnings[0] == ("5 of 5 request(s) have bodies made (not saved in the HAR): a synthesized stand-in "
                                "page (its fidelity report: pagebench site show)")


def test_the_shapes_with_bodies_import_every_request():
    firefox = _import(shapes.firefox_shape())
    assert len(firefox.recording.exchanges) == 5 and not firefox.recording.missing and not firefox.warnings
    assert firefox.left_out == {"data: URLs (inline data: no server is asked)": 1}
    assert body(firefox, "https://img.example.com.test/hero.png") == shapes.PNG  # from the cache: bodySize -1
    devtools = _import(shapes.devtools_shape())
    assert len(devtools.recording.exchanges) == 5 and not devtools.recording.missing
    assert devtools.left_out == {
        "data: URLs (inline data: no server is asked)": 1,
        "blob: URLs (made by the page's scripts: no server is asked)": 1,
        "WebSockets (ws:, wss:): not replayed; a script that opens one fails to connect in the lab": 1}
    assert "live.example.com.test" not in devtools.manifest.origins
    levels = {e.path: e.level for e in devtools.recording.exchanges}
    assert levels == {"/": 0, "/site.css": 1, "/app.js": 1, "/hero.png": 1, "/f.woff2": 2}
    for minimal in (False, True):
        playwright = _import(shapes.playwright_shape(minimal=minimal))
        assert len(playwright.recording.exchanges) == 5 and not playwright.left_out
        assert playwright.pages == (() if minimal else ('1 page@3ef9d1c2a7b84e0f9d6c5b4a39281706 "Example" '
                                                        '(5 requests)',))
        assert playwright.total_bytes == len(shapes.HTML.replace(".example.com", ".example.com.test")) + len(
            shapes.CSS.replace(".example.com", ".example.com.test")) + len(shapes.JS) + len(shapes.PNG) + len(
            shapes.WOFF2)


def test_sizes_of_0_without_a_saved_text_are_unknown_and_an_empty_text_is_said():
    wpt = entry("https://www.example.com/pixel.gif", mime="image/gif", text=None, size=0, at=0.1, _bytesIn=1200)
    site = imported(entry("https://www.example.com/", text="<p>x</p>"), wpt,
                    entry("https://www.example.com/empty.js", mime="text/javascript", text="", at=0.2))
    assert not site.recording.missing  # pixel.gif's body is unknown: made (a stand-in), not empty
    assert site.fidelity is not None and site.fidelity.made == 1
    assert body(site, "https://www.example.com.test/pixel.gif") != b""
    assert "1 response(s) recorded with an empty body (0 bytes) are replayed empty" in site.warnings


def test_an_empty_text_for_a_sized_body_is_not_saved_and_a_short_one_is_said():
    site = imported(entry("https://www.example.com/", text="<p>x</p>"),
                    entry("https://www.example.com/a.js", mime="text/javascript", text="", size=5000, at=0.1),
                    entry("https://www.example.com/b.js", mime="text/javascript", text="x" * 100, size=2_000_000,
                          at=0.1))
    assert not site.recording.missing  # a.js's body is unknown: made (a stand-in) at its content.size
    assert site.fidelity is not None and site.fidelity.made == 1
    assert len(body(site, "https://www.example.com.test/a.js")) == 5000
    assert body(site, "https://www.example.com.test/b.js") == b"x" * 100
    assert site.warnings[-1] == ("1 response body(ies) saved shorter than their content.size (cut short by the tool "
                                 "that saved the HAR?) are replayed as saved")


def test_ip_literal_and_port_origins_get_lab_names_and_are_rewritten_in_bodies():
    page = ('<script src="http://1.2.3.4:8080/a.js"></script><link rel=stylesheet href="https://[2001:db8::1]/b.css">'
            '<img src="http://localhost:3000/c.png"><img src="https://10.0.0.1/d.png">')
    site = imported(entry("https://www.example.com/", text=page),
                    entry("http://1.2.3.4:8080/a.js", mime="text/javascript", text="1", at=0.1),
                    entry("https://[2001:db8::1]/b.css", mime="text/css", text="b{}", at=0.1),
                    entry("http://localhost:3000/c.png", mime="image/png", text=PNG, at=0.1),
                    entry("https://10.0.0.1:443/d.png", mime="image/png", text=PNG, at=0.1))
    assert site.recording.hosts == {
        "www.example.com": "www.example.com.test", "1.2.3.4:8080": "p8080.ip-1-2-3-4.test",
        "2001:db8::1": "ip6-2001-0db8-0000-0000-0000-0000-0000-0001.test",
        "localhost:3000": "p3000.localhost.test", "10.0.0.1": "ip-10-0-0-1.test"}
    assert body(site, "https://www.example.com.test/") == (
        '<script src="https://p8080.ip-1-2-3-4.test/a.js"></script><link rel=stylesheet '
        'href="https://ip6-2001-0db8-0000-0000-0000-0000-0000-0001.test/b.css"><img '
        'src="https://p3000.localhost.test/c.png"><img src="https://ip-10-0-0-1.test/d.png">').encode()
    assert not site.recording.missing and len(site.recording.exchanges) == 5


def test_an_http_request_redirected_to_its_https_self_is_counted():
    site = imported(entry("http://www.example.com/", 301, headers={"Location": "https://www.example.com/"}),
                    entry("https://www.example.com/", text="<p>x</p>", at=0.1))
    assert site.manifest.entry == "https://www.example.com.test/" and len(site.recording.exchanges) == 1
    assert site.left_out == {
        "http:// requests redirected to the same https:// URL (the lab serves every origin over TLS)": 1}


def test_an_empty_query_is_kept_as_the_browser_sends_it():
    """`/a?` and `/a` are different request targets: a URL recorded with an empty query
    (DoubleClick's `activityi;...?` in nytimes' HAR) is answered at `/a?`, where the browser
    asks for it, not only at `/a`."""
    site = imported(entry("https://www.example.com/", text='<img src="https://ads.example.com/p;x=1?">'),
                    entry("https://ads.example.com/p;x=1?", mime="image/png", text=PNG, at=0.1),
                    entry("https://ads.example.com/q?#top", mime="image/png", text=PNG, at=0.1))
    assert sorted(e.target for e in site.recording.exchanges if e.host == "ads.example.com.test") == [
        "/p;x=1?", "/q?"]
