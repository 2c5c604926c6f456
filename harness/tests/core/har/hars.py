"""HAR documents as Chrome DevTools writes them, for the HAR tests: entries, whole files,
and the import of one (a Chrome HAR with initiators, pages and base64 bodies)."""

from __future__ import annotations

import base64
import json
from typing import Any

from pagebench.core.har.importer import ImportedSite, import_har
from pagebench.core.har.parse import parse_har
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


def imported(*entries: dict[str, Any], name: str = "mine", pages=None) -> ImportedSite:
    return import_har(parse_har(har(*entries, pages=pages), "x.har"), name, "x.har")


def body(site: ImportedSite, url: str) -> bytes:
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
