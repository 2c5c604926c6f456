"""A measured load as a HAR 1.2 log: the evidence kept beside the store, read by the
report's links, `pagebench export --har` and any HAR viewer (Chrome DevTools' import).

Built from what the load already collected over CDP (`RawLoad.requests`, one merged record
per request) and what it was judged as (`LoadResult.resources`, in the same order), so a
HAR costs no second recorder: per request its URL, method and headers, initiator,
protocol and connection as the report shows them, sizes, cache hit, and the phases of
CDP's ResourceTiming as HAR timings (-1 where a phase did not happen or is not known).
Pure: values in, a JSON-ready dict out.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pagebench.core.measure.metrics import network_entries
from pagebench.core.records import LoadResult, RawLoad, Resource

VERSION = "1.2"
PAGE_ID = "page_1"
#: The phases HAR allows -1 for (did not happen, or not known); send, wait and receive are always >= 0.
OPTIONAL_PHASES = ("blocked", "dns", "connect", "ssl")


def har(raw: RawLoad, result: LoadResult, title: str, creator: str, browser: str | None = None) -> dict[str, Any]:
    """The load as a HAR log with one page (`title`: what the load measured) and one entry
    per request of `result` (`creator`: pagebench's version; `browser`: Chromium's)."""
    records = network_entries(raw)
    offset = _wall_offset(records)
    started = records[0].get("wall") if records and records[0].get("wall") else raw.started_at
    page = {
        "startedDateTime": _iso(started), "id": PAGE_ID, "title": title,
        "pageTimings": {"onContentLoad": _ms(result.dcl_ms), "onLoad": _ms(result.load_ms)},
    }
    if not result.ok:
        page["comment"] = "; ".join(result.errors)
    log: dict[str, Any] = {
        "version": VERSION, "creator": {"name": "pagebench", "version": creator},
        "pages": [page],
        "entries": [_entry(record, resource, offset, raw.started_at)
                    for record, resource in zip(records, result.resources)],
    }
    if browser:
        log["browser"] = {"name": "Chromium", "version": browser}
    return {"log": log}


def _ms(value: float | None) -> float:
    return -1 if value is None else round(value, 3)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _wall_offset(records: list[dict[str, Any]]) -> float | None:
    """Wall clock minus CDP's monotonic clock (their `wallTime` and `timestamp`), from the
    first request that has both: every start then lies on one clock."""
    return next((r["wall"] - r["sent"] for r in records if r.get("wall") and r.get("sent") is not None), None)


def _headers(headers: dict[str, Any] | None) -> list[dict[str, str]]:
    """CDP's header object as HAR's list; CDP joins repeated headers with newlines."""
    return [{"name": str(name), "value": value} for name, values in (headers or {}).items()
            for value in str(values).split("\n")]


def _header(headers: dict[str, Any] | None, name: str) -> str | None:
    return next((str(v) for k, v in (headers or {}).items() if k.lower() == name), None)


def _entry(record: dict[str, Any], resource: Resource, offset: float | None, fallback: float) -> dict[str, Any]:
    sent = record.get("sent")
    wall = sent + offset if sent is not None and offset is not None else record.get("wall") or fallback
    timings = _timings(record)
    response_headers = record.get("wire_headers") or record.get("response_headers") or {}
    entry: dict[str, Any] = {
        "pageref": PAGE_ID,
        "startedDateTime": _iso(wall),
        "time": round(sum(v for k, v in timings.items() if k != "ssl" and v > 0), 3),
        "request": {
            "method": record.get("method", "GET"), "url": resource.url, "httpVersion": resource.protocol,
            "cookies": [], "headers": _headers(record.get("request_headers")),
            "queryString": [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(resource.url).query, True)],
            "headersSize": -1, "bodySize": 0,
        },
        "response": _response(record, resource, response_headers),
        "cache": {},
        "timings": timings,
        "_resourceType": resource.resource_type,
        "_initiator": record.get("initiator") or {"type": "other"},
        "_transferSize": resource.transfer_bytes,
    }
    if record.get("remote_ip"):
        entry["serverIPAddress"] = str(record["remote_ip"]).strip("[]")
    if resource.connection_id is not None:
        entry["connection"] = str(resource.connection_id)
    if resource.from_cache:
        entry["_fromCache"] = "memory" if record.get("memory_cache") else "disk"
    return entry


def _response(record: dict[str, Any], resource: Resource, headers: dict[str, Any]) -> dict[str, Any]:
    body = 0 if resource.from_cache else (-1 if resource.encoded_bytes is None else resource.encoded_bytes)
    wire_headers = resource.transfer_bytes - body if not resource.from_cache and body >= 0 else -1
    content: dict[str, Any] = {
        "size": resource.body_bytes,
        "mimeType": record.get("mime_type") or _header(headers, "content-type") or "x-unknown",
    }
    if body > 0 and resource.body_bytes > body:
        content["compression"] = resource.body_bytes - body
    response: dict[str, Any] = {
        "status": resource.status, "statusText": record.get("status_text", ""), "httpVersion": resource.protocol,
        "cookies": [], "headers": _headers(headers), "content": content,
        "redirectURL": _header(headers, "location") or "",
        "headersSize": wire_headers if wire_headers >= 0 else -1, "bodySize": body,
    }
    if record.get("failed"):
        response["_error"] = str(record["failed"])
    return response


def _timings(record: dict[str, Any]) -> dict[str, float]:
    """CDP's ResourceTiming (`requestTime` in s, phases in ms after it, -1: none) as HAR's
    consecutive phases from the request's issue (`sent`) to its last byte: blocked (queued
    until DNS, connect or send began), dns, connect (TLS included, also given as ssl), send
    (to the request's last byte, from the end of connecting), wait (for the first byte of
    the response) and receive (to the last byte). No timing (a memory-cache hit): the whole
    time is receive."""
    t = record.get("timing") or {}
    sent, end = record.get("sent"), record.get("finished") or record.get("failed_at")
    phases = dict.fromkeys(OPTIONAL_PHASES, -1.0) | {"send": 0.0, "wait": 0.0, "receive": 0.0}
    if sent is None:
        return phases
    if not isinstance(t.get("requestTime"), (int, float)):
        phases["receive"] = round(max((end - sent) * 1000, 0.0), 3) if end else 0.0
        return phases

    def at(name: str) -> float | None:
        value = t.get(name)
        return float(value) if isinstance(value, (int, float)) and value >= 0 else None

    def span(start: str, stop: str) -> float:
        a, b = at(start), at(stop)
        return round(b - a, 3) if a is not None and b is not None and b >= a else -1.0

    began = min((v for v in (at("dnsStart"), at("connectStart"), at("sendStart")) if v is not None), default=0.0)
    queued = max((t["requestTime"] - sent) * 1000, 0.0)
    phases["blocked"] = round(queued + began, 3)
    phases["dns"], phases["connect"], phases["ssl"] = span("dnsStart", "dnsEnd"), span("connectStart", "connectEnd"), \
        span("sslStart", "sslEnd")
    ready = max(v for v in (began, at("dnsEnd"), at("connectEnd")) if v is not None)
    sent_end, headers = at("sendEnd"), at("receiveHeadersEnd")
    if sent_end is not None:
        phases["send"] = round(max(sent_end - ready, 0.0), 3)
        ready = max(ready, sent_end)
    if headers is not None:
        phases["wait"] = round(max(headers - ready, 0.0), 3)
        ready = max(ready, headers)
    if end is not None:
        phases["receive"] = round(max((end - t["requestTime"]) * 1000 - ready, 0.0), 3)
    return phases
