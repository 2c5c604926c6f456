"""Small HARs written by hand in the shapes of the tools that make them, for the import's
tests: WebPageTest (and the HTTP Archive's crawl, made with it), browsertime/sitespeed.io
(chrome-har), Firefox, Chrome DevTools and Playwright. These are imitations of each tool's
layout (fields, versions, page ids and titles, where sizes and initiators live), NOT real
captures; real public HARs are staged apart, with their licences.

Every shape holds the same page: a document on www.example.com naming a stylesheet and a
script on cdn.example.com and an image on img.example.com; the stylesheet loads a font
from fonts.example.com. `bodies` says whether the tool saved response bodies (WebPageTest
and browsertime keep text bodies only when asked; Firefox and DevTools all of them).
"""

from __future__ import annotations

import base64
from typing import Any

from tests.core.har.hars import T0, iso

PAGE_URL = "https://www.example.com/"
HTML = ('<!doctype html><link rel=stylesheet href="https://cdn.example.com/site.css">'
        '<script src="https://cdn.example.com/app.js"></script><img src="https://img.example.com/hero.png">')
CSS = "@font-face{font-family:f;src:url(https://fonts.example.com/f.woff2)}body{font-family:f}"
JS = "document.title = 'x';"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(300)
WOFF2 = b"wOF2" + bytes(200)

#: (url, mime, body, initiator, seconds after the page started) of a first view.
RESOURCES: tuple[tuple[str, str, str | bytes, str | None, float], ...] = (
    (PAGE_URL, "text/html", HTML, None, 0.0),
    ("https://cdn.example.com/site.css", "text/css", CSS, PAGE_URL, 0.1),
    ("https://cdn.example.com/app.js", "application/javascript", JS, PAGE_URL, 0.1),
    ("https://img.example.com/hero.png", "image/png", PNG, PAGE_URL, 0.15),
    ("https://fonts.example.com/f.woff2", "font/woff2", WOFF2, "https://cdn.example.com/site.css", 0.3),
)


def _headers(pairs: dict[str, str]) -> list[dict[str, str]]:
    return [{"name": k, "value": v} for k, v in pairs.items()]


def _text(body: str | bytes) -> dict[str, Any]:
    """A body as HAR content holds it: text as is, binary base64."""
    if isinstance(body, bytes):
        return {"text": base64.b64encode(body).decode(), "encoding": "base64"}
    return {"text": body}


def _log(creator: str, version: str, pages: list[dict[str, Any]], entries: list[dict[str, Any]],
         har_version: str = "1.2", **extra: Any) -> dict[str, Any]:
    return {"log": {"version": har_version, "creator": {"name": creator, "version": version}, **extra,
                    "pages": pages, "entries": entries}}


# WebPageTest ---------------------------------------------------------------------------

def webpagetest_shape(runs: int = 2, repeat_views: bool = True, bodies: bool = False) -> dict[str, Any]:
    """WebPageTest's HAR: version 1.1, a page per run and view (`page_<run>_<cached>_<step>`,
    "Run N, First View for URL"), sizes in `_bytesIn`/`_objectSize*` with content.size and
    bodySize 0 or -1, the initiator a URL string; text bodies only with "Save response
    bodies". A repeat view asks only for the document and revalidates the script (304)."""
    pages, entries = [], []
    for run in range(1, runs + 1):
        for cached in (0, 1) if repeat_views else (0,):
            start = T0 + 60 * run + 30 * cached
            ident = f"page_{run}_{cached}_1"
            pages.append({"startedDateTime": iso(start), "id": ident,
                          "title": f"Run {run}, {'Repeat' if cached else 'First'} View for {PAGE_URL}",
                          "pageTimings": {"onContentLoad": 400, "onLoad": 900, "_startRender": 500}})
            views = RESOURCES if not cached else (RESOURCES[0], RESOURCES[2])
            for url, mime, body, initiator, at in views:
                status = 304 if cached and url.endswith(".js") else 200
                size = len(body) if status == 200 else 0
                content: dict[str, Any] = {"size": 0 if run % 2 else -1, "mimeType": mime}
                if bodies and status == 200 and isinstance(body, str):
                    content.update(text=body)
                entries.append({
                    "pageref": ident, "_run": run, "_cached": cached, "startedDateTime": iso(start + at),
                    "time": 40,
                    "request": {"method": "GET", "url": url, "httpVersion": "HTTP/2", "headersSize": -1,
                                "bodySize": -1, "cookies": [], "queryString": [],
                                "headers": _headers({"accept-encoding": "gzip, deflate, br"})},
                    "response": {"status": status, "statusText": "", "httpVersion": "HTTP/2", "cookies": [],
                                 "headers": _headers({"content-type": mime, "cache-control": "max-age=600"}),
                                 "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
                    "cache": {}, "timings": {"blocked": -1, "dns": 5, "connect": 10, "ssl": 8, "send": 0,
                                             "wait": 15, "receive": 2},
                    "_bytesIn": size + 250, "_bytesOut": 400, "_objectSize": size,
                    "_objectSizeUncompressed": size, "_full_url": url, "_host": url.split("/")[2],
                    "_request_type": "GET", "_contentType": mime, "_responseCode": status,
                    "_initiator": initiator or "", "_initiator_line": "1" if initiator else "",
                    "_initiator_type": "parser" if initiator else "other"})
    return _log("WebPagetest", "21.07", pages, entries, har_version="1.1",
                browser={"name": "Chrome", "version": "120.0.6099.109"})


def http_archive_shape() -> dict[str, Any]:
    """An HTTP Archive crawl's HAR: WebPageTest's layout (version 1.1), one first view, the
    crawl's `_metadata` on the page and no bodies (the archive keeps them apart)."""
    data = webpagetest_shape(runs=1, repeat_views=False)
    page = data["log"]["pages"][0]
    page["_metadata"] = {"rank": 1000, "page_id": 1234, "layout": "Default", "crawl_depth": 0,
                         "root_page_url": PAGE_URL, "client": "desktop", "date": "2026_01_01"}
    for entry in data["log"]["entries"]:
        entry["_body_id"] = None
    return data


# browsertime / sitespeed.io --------------------------------------------------------------

def browsertime_shape(runs: int = 3, bodies: str = "none") -> dict[str, Any]:
    """browsertime's HAR (Chrome, via chrome-har): version 1.2, a page per iteration
    (`page_1`, ...; the title the URL, `_meta.runIndex`), the initiator a URL string with
    `_initiator_type`, `response._transferSize`, and no bodies unless
    `--chrome.includeResponseBodies html|all` (`bodies`)."""
    pages, entries = [], []
    for run in range(runs):
        start = T0 + 40 * run
        ident = f"page_{run + 1}"
        pages.append({"id": ident, "startedDateTime": iso(start), "title": PAGE_URL,
                      "pageTimings": {"onContentLoad": 300, "onLoad": 700}, "_url": PAGE_URL,
                      "_meta": {"connectivity": "native", "runIndex": run}})
        for url, mime, body, initiator, at in RESOURCES:
            content: dict[str, Any] = {"mimeType": mime, "size": len(body), "compression": 0}
            if bodies == "all" or (bodies == "html" and mime == "text/html"):
                content.update(_text(body))
            entries.append({
                "pageref": ident, "startedDateTime": iso(start + at), "time": 35,
                "request": {"method": "GET", "url": url, "httpVersion": "h2", "queryString": [], "cookies": [],
                            "headersSize": -1, "bodySize": 0, "headers": _headers({"accept": "*/*"})},
                "response": {"status": 200, "statusText": "", "httpVersion": "h2", "cookies": [],
                             "headers": _headers({"content-type": mime}), "content": content, "redirectURL": "",
                             "headersSize": -1, "bodySize": -1, "_transferSize": len(body) + 200},
                "cache": {}, "timings": {"blocked": 1, "dns": -1, "connect": -1, "send": 0, "wait": 20,
                                         "receive": 3, "ssl": -1},
                "serverIPAddress": "192.0.2.10", "connection": "443", "_priority": "High",
                "_resourceType": {"text/html": "document", "text/css": "stylesheet", "image/png": "image",
                                  "font/woff2": "font"}.get(mime, "script"),
                "_initiator": initiator, "_initiator_type": "parser" if initiator else "other"})
    return _log("Browsertime", "21.0.0", pages, entries, browser={"name": "Chrome", "version": "120.0"})


# Firefox ---------------------------------------------------------------------------------

def firefox_shape(bodies: bool = True) -> dict[str, Any]:
    """Firefox's "Save All As HAR": version 1.2, one page `page_1` titled with the
    document's title, HTTP/2 without pseudo-headers, no initiators, a data: image, and a
    response from the cache (`bodySize` -1, its content still saved)."""
    entries = []
    for url, mime, body, _, at in (*RESOURCES, ("data:image/gif;base64,R0lGODlhAQABAAAAACw=", "image/gif",
                                                b"GIF89a", PAGE_URL, 0.2)):
        content: dict[str, Any] = {"mimeType": mime, "size": len(body)}
        if bodies:
            content.update(_text(body))
        cached = url.endswith(".png")
        entries.append({
            "pageref": "page_1", "startedDateTime": iso(T0 + at), "time": 0 if cached else 30,
            "request": {"bodySize": 0, "method": "GET", "url": url, "httpVersion": "HTTP/2",
                        "headers": _headers({"Host": url.split("/")[2] if "//" in url else "", "Referer": PAGE_URL}),
                        "cookies": [],
                        "queryString": [], "headersSize": 300},
            "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/2",
                         "headers": _headers({"content-type": mime}), "cookies": [], "content": content,
                         "redirectURL": "", "headersSize": 200, "bodySize": -1 if cached else len(body) + 200},
            "cache": {}, "timings": {"blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 20,
                                     "receive": 0},
            "_securityState": "secure", "serverIPAddress": "192.0.2.10", "connection": "443"})
    page = {"startedDateTime": iso(T0), "id": "page_1", "title": "Example Domain",
            "pageTimings": {"onContentLoad": 250, "onLoad": 600}}
    return _log("Firefox", "120.0", [page], entries, browser={"name": "Firefox", "version": "120.0"})


# Chrome DevTools -------------------------------------------------------------------------

def devtools_shape(bodies: bool = True) -> dict[str, Any]:
    """Chrome DevTools' "Save all as HAR (with content)": version 1.2, creator WebInspector,
    `page_1` titled with the URL, `_initiator` objects (parser with a url; script with a
    stack), `_resourceType`, `_transferSize`, and the page's data: and blob: requests and a
    WebSocket (`_webSocketMessages`, status 101)."""
    entries = []
    extra = (("data:image/svg+xml,%3Csvg%3E%3C/svg%3E", "image/svg+xml", "<svg></svg>", PAGE_URL, 0.12),
             ("blob:https://www.example.com/7c1e", "application/javascript", "1", "https://cdn.example.com/app.js",
              0.2),
             ("wss://live.example.com/socket", "", "", "https://cdn.example.com/app.js", 0.25))
    for url, mime, body, initiator, at in (*RESOURCES, *extra):
        socket = url.startswith("wss:")
        content: dict[str, Any] = {"size": len(body), "mimeType": mime or "x-unknown"}
        if bodies and not socket:
            content.update(_text(body))
        entry: dict[str, Any] = {
            "_initiator": {"type": "parser", "url": initiator, "lineNumber": 0} if initiator and
            not initiator.endswith(".js") else {"type": "script", "stack": {"callFrames": [
                {"functionName": "", "url": initiator or "", "lineNumber": 0, "columnNumber": 0}]}}
            if initiator else {"type": "other"},
            "_priority": "High", "_resourceType": "websocket" if socket else "other",
            "cache": {}, "connection": "1234", "pageref": "page_1",
            "request": {"method": "GET", "url": url, "httpVersion": "http/2.0", "headers": _headers(
                {":authority": url.split("/")[2] if "//" in url else "", "accept": "*/*"}),
                "queryString": [], "cookies": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 101 if socket else 200, "statusText": "", "httpVersion": "http/2.0",
                         "headers": _headers({"content-type": mime} if mime else {}), "cookies": [],
                         "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1,
                         "_transferSize": len(body) + 150, "_error": None},
            "serverIPAddress": "192.0.2.10", "startedDateTime": iso(T0 + at), "time": 25,
            "timings": {"blocked": 1, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1, "wait": 20, "receive": 2}}
        if socket:
            entry["_webSocketMessages"] = [{"type": "send", "time": T0 + 0.3, "opcode": 1, "data": "hi"}]
        entries.append(entry)
    page = {"startedDateTime": iso(T0), "id": "page_1", "title": PAGE_URL,
            "pageTimings": {"onContentLoad": 300, "onLoad": 650}}
    return _log("WebInspector", "537.36", [page], entries)


# Playwright ------------------------------------------------------------------------------

def playwright_shape(minimal: bool = False) -> dict[str, Any]:
    """Playwright's `record_har` (content embedded): a page `page@<hex>`, `_frameref`,
    `_monotonicTime`, `_serverPort`, `response._transferSize`; `minimal`: stripped to what a
    replay needs (no pages or pageref, sizes and timings -1)."""
    pageref = "page@3ef9d1c2a7b84e0f9d6c5b4a39281706"
    entries = []
    for url, mime, body, _, at in RESOURCES:
        entry: dict[str, Any] = {
            "startedDateTime": iso(T0 + at), "time": -1 if minimal else 30,
            "request": {"method": "GET", "url": url, "httpVersion": "HTTP/2.0", "cookies": [],
                        "headers": _headers({":authority": url.split("/")[2], ":path": "/", "accept": "*/*"}),
                        "queryString": [], "headersSize": -1, "bodySize": 0},
            "response": {"status": 200, "statusText": "", "httpVersion": "HTTP/2.0", "cookies": [],
                         "headers": _headers({"content-type": mime}),
                         "content": {"size": -1 if minimal else len(body), "mimeType": mime, **_text(body)},
                         "headersSize": -1, "bodySize": -1, "redirectURL": "", "_transferSize": -1},
            "cache": {}, "timings": {"send": -1, "wait": -1, "receive": -1}}
        if not minimal:
            entry.update(pageref=pageref, _frameref="frame@9a8b7c6d5e4f30211223344556677889",
                         _monotonicTime=600 + at * 1000, serverIPAddress="192.0.2.10", _serverPort=443)
        entries.append(entry)
    pages = [] if minimal else [{"startedDateTime": iso(T0), "id": pageref, "title": "Example",
                                 "pageTimings": {"onContentLoad": 250, "onLoad": 500}}]
    return _log("Playwright", "1.40.0", pages, entries, browser={"name": "chromium", "version": "120.0.6099.28"})
