"""Dependency levels (pure): from Chrome's and WebPageTest's initiators, else from the
Referer (a mitmproxy HAR, written by mitmproxy's own savehar addon)."""

from __future__ import annotations

import json

from pagebench.core.har.importer import import_har
from pagebench.core.har.parse import parse_har
from tests.core.har.hars import PNG, T0, body, chrome_har, entry, imported


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
