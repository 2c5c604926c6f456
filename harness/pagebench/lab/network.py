"""What one page's load fetched, from its CDP Network events (`RawLoad.requests`), and the
waits that depend on it: network quiet, the compression dictionaries a page announces."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import urljoin

from playwright.sync_api import CDPSession, Page

from pagebench.core.records import RawLoad

#: Settles in-flight requests after `load` (late, script-discovered resources).
IDLE_S = 0.15
#: Priming for dictionaries: Chromium fetches those a page's `Link:` header announces at
#: idle after `load`, and stores them a moment later; the profile closes after this long
#: without a request once every announced one is in.
DICTIONARY_QUIET_S = 1.0


def _header(headers: dict[str, Any], name: str) -> str | None:
    """A header's value whatever the case of its name (HTTP/1.1 keeps the server's)."""
    return next((str(v) for k, v in headers.items() if k.lower() == name), None)


def dictionary_links(headers: dict[str, Any], base: str) -> list[str]:
    """The URLs a response's `Link:` header announces as compression dictionaries
    (CDP joins repeated headers with newlines)."""
    found = []
    for target, params in re.findall(r"<([^>]*)>([^,<]*)", (_header(headers, "link") or "").replace("\n", ",")):
        rel = re.search(r"""\brel\s*=\s*"?([^";]*)""", params, re.IGNORECASE)
        if rel and "compression-dictionary" in rel.group(1).lower().split():
            found.append(urljoin(base, target.strip()))
    return found


def _initiator(initiator: dict[str, Any]) -> dict[str, Any]:
    """What started a request (parser, script, preload, ...), where, without the full
    stack: a script's top frame says which script asked."""
    kept = {k: initiator[k] for k in ("type", "url", "lineNumber", "columnNumber") if k in initiator}
    frames = (initiator.get("stack") or {}).get("callFrames") or []
    if frames and "url" not in kept:
        top = frames[0]
        kept.update(url=top.get("url", ""), lineNumber=top.get("lineNumber"), columnNumber=top.get("columnNumber"))
    return kept


class Recorder:
    """Collects CDP Network events of one page into per-request records. The ExtraInfo
    events (headers as sent and received) may come before or after their request's."""

    def __init__(self, session: CDPSession, raw: RawLoad, page: Page) -> None:
        self.raw = raw
        self.page = page
        self.inflight: set[str] = set()
        self.last_activity = time.monotonic()
        session.on("Network.requestWillBeSent", self._sent)
        session.on("Network.requestWillBeSentExtraInfo", self._sent_extra)
        session.on("Network.responseReceived", self._response)
        session.on("Network.responseReceivedExtraInfo", self._response_extra)
        session.on("Network.loadingFinished", self._finished)
        session.on("Network.loadingFailed", self._failed)
        session.on("Network.requestServedFromCache", self._from_cache)

    def _entry(self, rid: str) -> dict[str, Any]:
        self.last_activity = time.monotonic()
        return self.raw.requests.setdefault(rid, {})

    def _sent(self, e: dict[str, Any]) -> None:
        entry = self._entry(e["requestId"])
        request = e["request"]
        entry.update(url=request["url"], type=e.get("type", ""), sent=e["timestamp"], wall=e.get("wallTime"),
                     method=request.get("method", "GET"), initiator=_initiator(e.get("initiator") or {}))
        entry.setdefault("request_headers", request.get("headers") or {})  # ExtraInfo's, as sent, replace them
        self.inflight.add(e["requestId"])

    def _sent_extra(self, e: dict[str, Any]) -> None:
        headers = e.get("headers") or {}
        self._entry(e["requestId"]).update(request_headers=headers,
                                           dictionary_offered=_header(headers, "available-dictionary") is not None)

    def _response(self, e: dict[str, Any]) -> None:
        r = e["response"]
        entry = self._entry(e["requestId"])
        entry.update(
            status=r.get("status"), protocol=r.get("protocol", ""), connection_id=r.get("connectionId"),
            from_disk_cache=r.get("fromDiskCache", False), from_prefetch=r.get("fromPrefetchCache", False),
            remote_ip=r.get("remoteIPAddress"), timing=r.get("timing") or {}, headers_bytes=r.get("encodedDataLength"),
            response_headers=r.get("headers") or {}, mime_type=r.get("mimeType", ""),
            status_text=r.get("statusText", ""),
        )
        self._encoding(entry)

    def _response_extra(self, e: dict[str, Any]) -> None:
        entry = self._entry(e["requestId"])
        entry.update(wire_status=e.get("statusCode"), wire_headers=e.get("headers") or {})
        self._encoding(entry)

    @staticmethod
    def _encoding(entry: dict[str, Any]) -> None:
        """The Content-Encoding received: responseReceived's, else the raw headers'."""
        found = [_header(entry.get(key) or {}, "content-encoding") for key in ("response_headers", "wire_headers")]
        entry["content_encoding"] = next((v for v in found if v is not None), "")

    def _finished(self, e: dict[str, Any]) -> None:
        self._entry(e["requestId"]).update(finished=e["timestamp"], encoded_bytes=e.get("encodedDataLength", 0))
        self.inflight.discard(e["requestId"])

    def _failed(self, e: dict[str, Any]) -> None:
        self._entry(e["requestId"]).update(failed=e.get("errorText", "failed"), canceled=e.get("canceled", False),
                                           failed_at=e.get("timestamp"))
        self.inflight.discard(e["requestId"])

    def _from_cache(self, e: dict[str, Any]) -> None:
        self._entry(e["requestId"]).update(memory_cache=True)

    def _pause(self) -> None:
        """Sync Playwright delivers CDP events only inside its own calls: a time.sleep()
        here would see none of those arriving meanwhile (a late response, never finished).
        Short, as the idle window's end is seen a pause late at most (20 ms cost every load
        10 ms on average)."""
        self.page.wait_for_timeout(5)

    def wait_idle(self, timeout: float, quiet_s: float = IDLE_S) -> None:
        """Until nothing is in flight and nothing happened for quiet_s (or timeout). The
        events that came while the caller was busy are seen first."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._pause()
            if not self.inflight and time.monotonic() - self.last_activity >= quiet_s:
                return

    def wait_dictionaries(self, timeout: float) -> str | None:
        """Until every dictionary the document's `Link:` header announced was fetched and
        then nothing happened for DICTIONARY_QUIET_S; what is missing, if any."""
        entries = [e for e in self.raw.requests.values() if e.get("url")]
        document = min(entries, key=lambda e: e.get("sent", 0.0), default={})
        wanted = set(dictionary_links(document.get("response_headers") or {}, document.get("url", "")))
        if not wanted:
            return "the page announced no compression dictionary (no Link: rel=compression-dictionary)"
        deadline = time.monotonic() + timeout
        while True:
            done = {e.get("url") for e in self.raw.requests.values() if "finished" in e}
            if wanted <= done or time.monotonic() >= deadline:
                break
            self._pause()
        self.wait_idle(max(0.0, deadline - time.monotonic()) + DICTIONARY_QUIET_S, quiet_s=DICTIONARY_QUIET_S)
        missing = sorted(wanted - done)
        return f"{len(missing)} announced dictionar(ies) not fetched, e.g. {missing[0]}" if missing else None
