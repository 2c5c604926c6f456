"""Importing a HAR (pure): parsing what DevTools, Playwright and mitmproxy write, one-line
errors for malformed files, the host mapping and body rewriting, what cannot be replayed,
the replayed headers, the dependency levels, and the summary `site show` prints."""

from __future__ import annotations

import base64
import gzip
import json
from email.utils import formatdate
from pathlib import Path
from typing import Any

import pytest

from pagebench.core.har.importer import HarError, describe, import_har, parse_har
from pagebench.core.sites.recording import BODIES_DIR, lab_host
from pagebench.core.sites.generate import builtin
from pagebench.core.sites.model import Site
from tests.helpers import HARNESS

FIXTURES = HARNESS / "tests" / "fixtures"
T0 = 1_767_225_600.0  # seconds since the epoch of the first request


def iso(seconds: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(seconds, timezone.utc).isoformat().replace("+00:00", "Z")


def entry(url: str, status: int = 200, mime: str = "text/html", text: str | bytes | None = "", *,
          at: float = 0.0, time: float = 10.0, method: str = "GET", headers: dict[str, str] | list | None = None,
          request_headers: dict[str, str] | None = None, size: int | None = None, **extra: Any) -> dict[str, Any]:
    """A HAR entry as Chrome DevTools writes it (binary bodies base64)."""
    content: dict[str, Any] = {"mimeType": mime}
    if isinstance(text, bytes):
        content.update(text=base64.b64encode(text).decode(), encoding="base64", size=len(text))
    elif text is not None:
        content.update(text=text, size=len(text.encode()))
    if size is not None:
        content["size"] = size
    pairs = list(headers.items()) if isinstance(headers, dict) else list(headers or [])
    return {
        "startedDateTime": iso(T0 + at), "time": time,
        "request": {"method": method, "url": url, "httpVersion": "h2",
                    "headers": [{"name": ":path", "value": "/"}] +
                               [{"name": k, "value": v} for k, v in (request_headers or {}).items()]},
        "response": {"status": status, "statusText": "", "httpVersion": "h2",
                     "headers": [{"name": ":status", "value": str(status)}, {"name": "content-type", "value": mime}] +
                                [{"name": k, "value": v} for k, v in pairs],
                     "content": content, "redirectURL": ""},
        **extra,
    }


def har(*entries: dict[str, Any], pages: list[dict[str, Any]] | None = None) -> str:
    return json.dumps({"log": {"version": "1.2", "creator": {"name": "test", "version": "1"},
                               "pages": pages or [], "entries": list(entries)}})


def imported(*entries: dict[str, Any], name: str = "mine", pages=None):
    return import_har(parse_har(har(*entries, pages=pages), "x.har"), name, "x.har")


def body(site, url: str) -> bytes:
    exchange = next(e for e in site.recording.exchanges if e.url == url)
    return site.files[f"{exchange.host}/{exchange.file}"]


# A Chrome DevTools HAR: initiators, pages, base64 bodies --------------------------------

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
PAGE = """<!doctype html><html><head>
<link rel="stylesheet" href="https://cdn.example.com/site.css" integrity="sha384-abc" crossorigin>
<meta http-equiv="Content-Security-Policy" content="script-src 'sha256-x'">
<script src="//cdn.example.com/app.js" integrity='sha256-def'></script>
<p>integrity = "ours"</p><a href="http://www.example.com/about">about</a> <a href="https://cdn.example.com.au/x">au</a>
<a href="https://mycdn.example.com/x">other</a> <a href="/track?u=https%3A%2F%2Fwww.example.com%2F">t</a>
</head></html>"""


def chrome_har() -> list[dict[str, Any]]:
    page = {"pageref": "page_1", "_resourceType": "document", "_initiator": {"type": "other"}}
    return [
        entry("https://www.example.com/", text=PAGE, **page),
        entry("https://cdn.example.com/site.css", mime="text/css", at=0.02, pageref="page_1",
              text="@font-face{src:url(https://fonts.example.com/f.woff2)}",
              _initiator={"type": "parser", "url": "https://www.example.com/", "lineNumber": 2}),
        entry("https://cdn.example.com/app.js", mime="application/javascript", at=0.02, pageref="page_1",
              text='fetch("https:\\/\\/api.example.com\\/data.json")',
              _initiator={"type": "parser", "url": "https://www.example.com/"}),
        entry("https://fonts.example.com/f.woff2", mime="font/woff2", text=b"wOF2" + bytes(100), at=0.05,
              pageref="page_1", _initiator={"type": "parser", "url": "https://cdn.example.com/site.css"}),
        entry("https://api.example.com/data.json", mime="application/json",
              text='{"next": "https://img.example.com/a.png"}', at=0.06, pageref="page_1",
              _initiator={"type": "script", "stack": {"callFrames": [], "parent": {
                  "callFrames": [{"url": "https://cdn.example.com/app.js", "lineNumber": 1}]}}}),
        entry("https://img.example.com/a.png", mime="image/png", text=PNG, at=0.08, pageref="page_1",
              _initiator={"type": "script", "stack": {"callFrames": [
                  {"url": "https://api.example.com/data.json"}]}}),
        entry("data:image/png;base64,AAAA", mime="image/png", text=b"\x00", at=0.09, pageref="page_1"),
        entry("https://www.example.com/later", at=5, pageref="page_2", _resourceType="document"),
    ]


PAGES = [{"id": "page_1", "startedDateTime": iso(T0), "title": "x"},
         {"id": "page_2", "startedDateTime": iso(T0 + 5), "title": "y"}]


def test_a_devtools_har_becomes_a_site_with_its_hosts_mapped():
    site = imported(*chrome_har(), pages=PAGES)
    assert site.recording.hosts == {h: f"{h}.test" for h in (
        "www.example.com", "cdn.example.com", "fonts.example.com", "api.example.com", "img.example.com")}
    assert site.manifest.entry == "https://www.example.com.test/"
    assert site.manifest.origins[0] == "www.example.com.test" and site.manifest.recording == "recording.json"
    urls = [e.url for e in site.recording.exchanges]
    assert "https://www.example.com.test/later" not in urls  # the second page
    assert any("later pages" in w for w in site.warnings)
    assert not any(u.startswith("data:") for u in urls) and not site.recording.missing
    assert body(site, "https://img.example.com.test/a.png") == PNG  # base64 decoded, untouched
    exchange = next(e for e in site.recording.exchanges if e.url.endswith("a.png"))
    assert exchange.file == f"{BODIES_DIR}/{exchange.file[len(BODIES_DIR) + 1:]}" and exchange.file.endswith(".png")
    assert exchange.content_type == "image/png" and exchange.original == "https://img.example.com/a.png"


def test_text_bodies_are_rewritten_at_host_boundaries():
    site = imported(*chrome_har())
    html = body(site, "https://www.example.com.test/").decode()
    assert "https://cdn.example.com.test/site.css" in html
    assert "//cdn.example.com.test/app.js" in html
    assert "https://www.example.com.test/about" in html  # http:// becomes https://
    assert "https://cdn.example.com.au/x" in html and "https://mycdn.example.com/x" in html
    assert "https%3A%2F%2Fwww.example.com.test%2F" in html
    assert 'sha384' not in html and "sha256-def" not in html and site.integrity_removed == 2
    assert '<p>integrity = "ours"</p>' in html  # prose, not an attribute of a script or link
    assert "Content-Security-Policy" not in html and "crossorigin" in html
    assert body(site, "https://cdn.example.com.test/site.css") == (
        b"@font-face{src:url(https://fonts.example.com.test/f.woff2)}")
    assert body(site, "https://cdn.example.com.test/app.js") == b'fetch("https:\\/\\/api.example.com.test\\/data.json")'
    assert b"https://img.example.com.test/a.png" in body(site, "https://api.example.com.test/data.json")
    # a query carrying a URL is requested with the rewritten URL: the target is recorded so
    assert site.recording.lookup("www.example.com.test", "/") is not None


def test_levels_follow_chrome_initiators():
    site = imported(*chrome_har())
    levels = {e.path: e.level for e in site.recording.exchanges}
    # page 0; css and js parsed from it 1; the css's font 2; the script's fetch 2; what
    # the fetched JSON's handler (top frame: data.json) asked for 3
    assert [levels[p] for p in ("/", "/site.css", "/app.js", "/f.woff2", "/data.json", "/a.png")] == [0, 1, 1, 2, 2, 3]


def test_webpagetest_initiators_are_urls():
    site = imported(entry("https://www.example.com/", text="<p>x</p>"),
                    entry("https://www.example.com/s.css", mime="text/css", text="a{}", at=0.1,
                          _initiator="https://www.example.com/", _initiator_type="parser"),
                    entry("https://www.example.com/f.woff2", mime="font/woff2", text=b"w", at=0.2,
                          _initiator="https://www.example.com/s.css", _initiator_type="parser"),
                    entry("https://www.example.com/g.woff2", mime="font/woff2", text=b"g", at=0.2,
                          _initiator="https://elsewhere.example.com/unrecorded.css"))
    assert [e.level for e in site.recording.exchanges] == [0, 1, 2, 1]


# A mitmproxy HAR, written by mitmproxy's own savehar addon ---------------------------------


def mitmproxy_har() -> str:
    from mitmproxy import http
    from mitmproxy.addons.savehar import SaveHar
    from mitmproxy.test import tflow

    def flow(url: str, status: int, content: bytes, ctype: str, t: float, referer: str | None = None,
             **headers: str):
        f = tflow.tflow()
        f.server_conn.timestamp_tcp_setup = None  # the test connection's 1 s connect is not ours
        f.request = http.Request.make("GET", url, b"", {"Referer": referer} if referer else {})
        f.request.timestamp_start, f.request.timestamp_end = T0 + t, T0 + t + 0.001
        f.response = http.Response.make(status, content, {"Content-Type": ctype, **headers})
        f.response.timestamp_start, f.response.timestamp_end = T0 + t + 0.01, T0 + t + 0.02
        return f

    flows = [
        flow("https://www.example.org/", 200, b"<link href=https://static.example.org/s.css rel=stylesheet>",
             "text/html; charset=utf-8", 0, **{"Set-Cookie": "a=b", "Server": "x"}),
        flow("https://static.example.org/s.css", 200, b"body{background:url(/i.png)}", "text/css", 0.05,
             "https://www.example.org/"),
        # a cross-origin Referer is the origin alone: the stylesheet of that origin finished before
        flow("https://fonts.example.org/f.woff", 200, b"wOFF\x00\x01" + bytes(40), "font/woff", 0.1,
             "https://static.example.org/"),
        flow("https://static.example.org/i.png", 200, PNG, "image/png", 0.1, "https://static.example.org/s.css"),
        flow("https://www.example.org/x.gif", 200, b"GIF89a", "image/gif", 0.2, "https://www.example.org/"),
    ]
    flows.append(tflow.tflow(err=True))  # a request that failed: status 0, _error
    return json.dumps(SaveHar().make_har(flows))


def test_a_mitmproxy_har_without_initiators_uses_referers():
    site = import_har(parse_har(mitmproxy_har(), "m.har"), "mine", "m.har")
    levels = {e.url: e.level for e in site.recording.exchanges}
    assert levels == {"https://www.example.org.test/": 0, "https://static.example.org.test/s.css": 1,
                      "https://fonts.example.org.test/f.woff": 2, "https://static.example.org.test/i.png": 2,
                      "https://www.example.org.test/x.gif": 1}
    assert body(site, "https://static.example.org.test/i.png") == PNG
    assert len(site.recording.missing) == 1 and "failed when recorded (error)" in site.recording.missing[0]
    assert site.dropped_headers["set-cookie"] == 1 and site.dropped_headers["server"] == 1
    assert "content-length" not in site.dropped_headers  # the servers make their own


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


# Redirects, duplicates, missing bodies ------------------------------------------------------


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


def attached(url: str, file: str) -> dict[str, Any]:
    """A body Playwright saved beside the HAR (`record_har_content="attach"`)."""
    outside = entry(url, mime="text/javascript", text=None, size=100, at=0.4)
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
    assert "https://www.example.com/nobody.js: no body saved" in missing
    assert "https://www.example.com/old.css: revalidated when recorded, no body" in missing
    assert "https://www.example.com/api: a POST: only GET requests are replayed" in missing
    assert "part.mp4: a partial (206) response" in missing
    assert "https://ads.example.net/x.js: failed when recorded (no response)" in missing
    assert "https://www.example.com/fail.js: failed when recorded (net::ERR_BLOCKED_BY_CLIENT)" in missing
    assert "bad_host.example.com/x.png: its host cannot be served in the lab" in missing
    assert "blob:" not in missing and "chrome-extension" not in missing and "dup.css" not in missing
    assert "https://www.example.com/big.js: body in a separate file (abc123.js)" in missing
    assert "wss://www.example.com/live: a WebSocket, not replayed" in missing
    assert len(site.recording.missing) == 9
    assert body(site, "https://www.example.com.test/dup.css") == b"a{}"  # the first complete one
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


def test_ports_and_ip_hosts_get_their_own_lab_hosts():
    page = ("<script src='https://www.example.com:8443/a.js'></script><img src='http://10.1.2.3:8080/i.png'>"
            "<img src='https://www.example.com/b.png'> https://www.example.com:9999/not-recorded")
    site = imported(entry("https://www.example.com/", text=page),
                    entry("https://www.example.com:8443/a.js", mime="text/javascript", text="1", at=0.1),
                    entry("http://10.1.2.3:8080/i.png", mime="image/png", text=PNG, at=0.1))
    assert site.recording.hosts == {"www.example.com": "www.example.com.test",
                                    "www.example.com:8443": "p8443.www.example.com.test",
                                    "10.1.2.3:8080": "p8080.ip-10-1-2-3.test"}
    html = body(site, "https://www.example.com.test/").decode()
    assert "https://p8443.www.example.com.test/a.js" in html
    assert "https://p8080.ip-10-1-2-3.test/i.png" in html
    assert "https://www.example.com.test/b.png" in html
    assert "https://www.example.com:9999/not-recorded" in html  # another origin, not in the HAR


def test_text_in_a_declared_charset_is_stored_in_it():
    site = imported(entry("https://www.example.com/", mime="text/html; charset=iso-8859-1", text="<p>café €</p>"),
                    entry("https://www.example.com/z.txt", mime="text/plain; charset=iso-8859-1", text="中", at=0.1))
    assert body(site, "https://www.example.com.test/") == "<p>café €</p>".encode("cp1252")
    assert body(site, "https://www.example.com.test/z.txt") == "中".encode()
    z = next(e for e in site.recording.exchanges if e.path == "/z.txt")
    assert z.content_type == "text/plain; charset=utf-8"
    assert any("stored as UTF-8" in w for w in site.warnings)


# Headers ------------------------------------------------------------------------------------------


def test_replayed_headers_are_an_allow_list_cleaned_and_mapped():
    date = formatdate(T0, usegmt=True)
    site = imported(
        entry("https://www.example.com/", text="<p>x</p>", headers=[
            ("Link", '<https://cdn.example.com/s.css>; rel="preload"; as="style"'),
            ("link", '<https://cdn.example.com/f.woff2>; rel=preload; as=font; type="font/woff2"; crossorigin'),
            ("Link", '<https://cdn.example.com/m.css>; rel="preload"; media="(min-width: 600px)"'),
            ("Content-Security-Policy", "default-src 'self'"), ("Strict-Transport-Security", "max-age=1"),
            ("Vary", "Accept-Encoding, Origin"), ("Date", date), ("Expires", formatdate(T0 + 3600, usegmt=True)),
            ("X-Odd", "ok"), ("Access-Control-Allow-Headers", "$weird")]),
        entry("https://cdn.example.com/s.css", mime="text/css", text="a{}", at=0.1, headers={
            "Access-Control-Allow-Origin": "https://www.example.com", "Timing-Allow-Origin": "http://www.example.com",
            "Cache-Control": 'public, max-age=60, no-cache="Set-Cookie, X-A", private="y"', "Expires": "0",
            "Vary": "accept-encoding",
            "Cross-Origin-Embedder-Policy": 'require-corp; report-to="coep"'}),
        entry("https://cdn.example.com/f.woff2", mime="font/woff2", text=b"wOF2", at=0.1, headers={"Expires": "-1"}),
    )
    page, css, font = site.recording.exchanges
    assert page.headers == {
        "Link": "<https://cdn.example.com.test/s.css>; rel=preload; as=style, "
                "<https://cdn.example.com.test/f.woff2>; rel=preload; as=font; type=font/woff2; crossorigin",
        "Vary": "Origin", "Cache-Control": "max-age=3600"}
    assert css.headers == {"Access-Control-Allow-Origin": "https://www.example.com.test",
                           "Timing-Allow-Origin": "https://www.example.com.test",
                           "Cache-Control": "public, max-age=60, no-cache, private=y",
                           "Cross-Origin-Embedder-Policy": "require-corp; report-to=coep"}
    assert font.headers == {"Cache-Control": "max-age=0"}  # an invalid Expires: already expired
    assert site.dropped_headers["content-security-policy"] == 1
    assert site.dropped_headers["strict-transport-security"] == 1 and site.dropped_headers["x-odd"] == 1
    assert not {"date", "expires", ":status", "content-type"} & set(site.dropped_headers)
    assert any("m.css" in w and "Link" in w for w in site.warnings)
    assert any("Access-Control-Allow-Headers dropped" in w for w in site.warnings)
    for exchange in site.recording.exchanges:
        for value in exchange.headers.values():
            assert value.isascii() and value.isprintable() and not set(value) & set('"\\$')


# Malformed files ------------------------------------------------------------------------------------


def _with(change) -> str:
    data = json.loads(har(entry("https://www.example.com/", text="<p>x</p>"),
                          entry("https://www.example.com/a.css", mime="text/css", text="a{}", at=0.1)))
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "x.har: not JSON (Expecting property name enclosed in double quotes: line 1 column 2)"),
    (b"\xff\xfe{}", "x.har: not UTF-8 (byte 0)"),
    ("[1, 2]", "x.har: not a HAR file (the top level must be an object with `log`, not a list)"),
    ("{}", "x.har: log: missing"),
    ('{"log": {"entries": {}}}', "x.har: log.entries: must be a list, not an object"),
    ('{"log": {"entries": []}}', "x.har: no entries (log.entries is empty)"),
    (har(entry("data:text/plain,hi", text="hi")), "x.har: no entries with an http(s) URL"),
    (_with(lambda d: d["log"]["entries"][1]["response"].pop("status")),
     "x.har: log.entries[1].response.status: missing"),
    (_with(lambda d: d["log"]["entries"][1]["response"].update(status="200")),
     "x.har: log.entries[1].response.status: must be an integer, not a string"),
    (_with(lambda d: d["log"]["entries"][1]["response"].update(status=True)),
     "x.har: log.entries[1].response.status: must be an integer, not a boolean"),
    (_with(lambda d: d["log"]["entries"][0]["request"].pop("url")), "x.har: log.entries[0].request.url: missing"),
    (_with(lambda d: d["log"]["entries"][0]["response"]["headers"].append({"name": "x", "value": 3})),
     "x.har: log.entries[0].response.headers[2].value: must be a string, not a number"),
    (_with(lambda d: d["log"]["entries"][1].update(startedDateTime="yesterday")),
     "x.har: log.entries[1].startedDateTime: not an ISO 8601 date and time ('yesterday')"),
    (_with(lambda d: d["log"]["entries"][1]["response"]["content"].update(encoding="gzip")),
     "x.har: log.entries[1].response.content.encoding: 'gzip': only base64 (or none) is defined"),
    (_with(lambda d: d["log"]["entries"][1]["response"]["content"].update(encoding="base64", text="abc")),
     "x.har: log.entries[1].response.content.text: not valid base64"),
    (_with(lambda d: d["log"]["entries"][1]["request"].update(url="https://a.com:99999/")),
     "x.har: log.entries[1].request.url: Port out of range 0-65535 ('https://a.com:99999/')"),
    (_with(lambda d: d["log"].update(pages=[3])), "x.har: log.pages[0]: must be an object, not a number"),
])
def test_malformed_hars_are_one_line_errors(text, message):
    with pytest.raises(HarError) as caught:
        parse_har(text, "x.har")
    assert str(caught.value) == message


@pytest.mark.parametrize(("entries", "name", "message"), [
    ([entry("https://www.example.com/a.css", mime="text/css", text="a{}")], "mine",
     "x.har: no HTML document among the first page's requests"),
    ([entry("https://www.example.com/", text=None, size=100)], "mine",
     "x.har: the page https://www.example.com/: no body saved (export the HAR with content)"),
    ([entry("https://www.example.com/", text="x")], "modern", "name 'modern': taken by a built-in or generated site"),
    ([entry("https://www.example.com/", text="x")], "Mine Site", "name 'Mine Site': must be 1-80 lower-case"),
    ([entry("https://1.2.3.4/", text="x"), entry("https://ip-1-2-3-4/", text="y", at=1)], "mine",
     "x.har: hosts 1.2.3.4 and ip-1-2-3-4 would both be the lab host ip-1-2-3-4.test"),
])
def test_hars_that_make_no_site_are_one_line_errors(entries, name, message):
    with pytest.raises(HarError) as caught:
        imported(*entries, name=name)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_the_first_page_is_the_first_to_start():
    pages = [{"id": "b", "startedDateTime": iso(T0 + 10)}, {"id": "a", "startedDateTime": iso(T0)}]
    site = imported(entry("https://one.example.com/", text="1", pageref="b", at=10),
                    entry("https://two.example.com/", text="2", pageref="a"), pages=pages)
    assert site.manifest.entry == "https://two.example.com.test/"
    assert [e.url for e in site.recording.exchanges] == ["https://two.example.com.test/"]


# Summaries ---------------------------------------------------------------------------------------------


def test_describe_a_built_in_site():
    generated = builtin("modern")
    summary = describe(generated)
    assert summary.kind == "built-in" and summary.requests == len(generated.files)
    assert summary.bytes == generated.total_bytes
    assert summary.depth == max(generated.levels.values()) and dict(summary.levels)[0] == 1
    assert sum(s.requests for s in summary.types) == summary.requests
    assert [o.name for o in summary.origins] == list(generated.origins)


def test_describe_an_imported_site():
    site = imported(*chrome_har(), pages=PAGES)
    on_disk = Site(site.manifest, Path("/nowhere"), site.recording)
    summary = describe(on_disk, {path: len(b) for path, b in site.files.items()})
    assert summary.kind == "recorded" and summary.source == "x.har"
    assert summary.requests == len(site.recording.exchanges) and summary.bytes == site.total_bytes
    assert {o.name: o.original for o in summary.origins}["cdn.example.com.test"] == "cdn.example.com"
    assert summary.depth == 3 and dict(summary.levels) == {0: 1, 1: 2, 2: 2, 3: 1}
    assert {s.name for s in summary.types} == {"html", "css", "js", "font", "json", "image"}
