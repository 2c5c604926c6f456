"""A load's HAR, built from what pagebench recorded over CDP: two real loads of the
built-in `modern` page (h2, 10 ms RTT, cold and warm; `tests/fixtures/load-modern-h2-*`,
as `lab.browser` recorded them) and hand-made records for the timing phases."""

from __future__ import annotations

import gzip
import json
from datetime import datetime

import jsonschema
import pytest

from pagebench.core.har.parse import parse_har
from pagebench.core.measure.har import har
from pagebench.core.measure.metrics import LinkView, ServerView, evaluate
from pagebench.core.modes import H2
from pagebench.core.records import Condition, LoadResult, RawLoad
from tests.core.measure.harschema import SCHEMA
from tests.helpers import HARNESS

FIXTURES = HARNESS / "tests" / "fixtures"


def _recorded(cache: str) -> tuple[RawLoad, LoadResult]:
    with gzip.open(FIXTURES / f"load-modern-h2-{cache}.raw.json.gz", "rt") as f:
        raw = RawLoad(**json.load(f)["raw"])
    condition = Condition("modern", H2, "direct", "r10", cache)
    return raw, evaluate(condition, raw, LinkView(1, 0, {}), ServerView(1, 69, (200,)))


def _when(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


@pytest.fixture(scope="module")
def cold() -> tuple[RawLoad, LoadResult, dict]:
    raw, result = _recorded("cold")
    return raw, result, har(raw, result, "modern h2 cold seq 0", "0.1.0", "chromium-headless-shell 156")


def test_a_cold_load_has_every_request_with_its_protocol_connection_and_initiator(cold):
    _, result, document = cold
    entries = document["log"]["entries"]
    assert len(entries) == result.requests == 69
    for entry, resource in zip(entries, result.resources):
        assert entry["request"]["url"] == resource.url
        assert entry["request"]["httpVersion"] == entry["response"]["httpVersion"] == "h2"
        assert entry["connection"] == str(resource.connection_id) and entry["serverIPAddress"]
        assert entry["_transferSize"] == resource.transfer_bytes > 0 and "_fromCache" not in entry
        assert entry["response"]["content"]["size"] == resource.body_bytes
        response = entry["response"]
        if resource.encoded_bytes is None:  # no Resource Timing entry (the fonts): sizes not known
            assert response["bodySize"] == response["headersSize"] == -1
        else:
            assert response["bodySize"] + response["headersSize"] == resource.transfer_bytes
    assert entries[0]["_initiator"] == {"type": "other"}  # the navigation
    kinds = {e["_initiator"]["type"] for e in entries[1:]}
    assert kinds == {"parser", "script"}
    assert all(e["_initiator"]["url"].startswith("https://") for e in entries[1:])


def test_a_cold_load_times_add_up_and_start_where_the_browser_says(cold):
    _, result, document = cold
    log = document["log"]
    page = log["pages"][0]
    assert page["pageTimings"] == {"onContentLoad": round(result.dcl_ms, 3), "onLoad": round(result.load_ms, 3)}
    navigation = _when(page["startedDateTime"])
    first = log["entries"][0]["timings"]
    assert first["dns"] >= 0 and first["connect"] > first["ssl"] > 0  # a new TLS connection; ssl inside connect
    for entry, resource in zip(log["entries"], result.resources):
        timings = entry["timings"]
        assert min(timings["send"], timings["wait"], timings["receive"]) >= 0
        assert all(timings[k] == -1 or timings[k] >= 0 for k in ("blocked", "dns", "connect", "ssl"))
        assert entry["time"] == pytest.approx(sum(v for k, v in timings.items() if k != "ssl" and v > 0), abs=0.01)
        # HAR's start (CDP's: the request issued) on the wall clock is at or before Resource
        # Timing's (its fetch began: later for a script's request queued behind others);
        # ISO dates keep whole ms
        start = (_when(entry["startedDateTime"]) - navigation) * 1000
        assert start <= resource.start_ms + 1
        if resource.end_ms is not None:  # and the last byte is Resource Timing's responseEnd
            assert start + entry["time"] == pytest.approx(resource.end_ms, abs=2)


def test_the_har_is_har_1_2_and_reads_back_as_pagebench_imports_hars(cold):
    _, result, document = cold
    jsonschema.validate(document, SCHEMA)
    text = json.dumps(document)
    entries = parse_har(text, "load.har").entries
    assert [e.url for e in entries] == [r.url for r in result.resources]
    assert all(e.status == 200 and e.mime_type for e in entries)
    assert sum(e.initiator is not None for e in entries) == len(entries) - 1


def test_a_warm_load_says_which_requests_the_cache_answered():
    raw, result = _recorded("warm")
    document = har(raw, result, "modern h2 warm seq 1", "0.1.0")
    jsonschema.validate(document, SCHEMA)
    entries = document["log"]["entries"]
    cached = [e for e, r in zip(entries, result.resources) if r.from_cache]
    assert len(cached) == result.cache_hits == 68
    for entry in cached:
        assert entry["_fromCache"] in ("disk", "memory") and "connection" not in entry
        assert entry["_transferSize"] == entry["response"]["bodySize"] == 0
    assert "_fromCache" not in entries[0] and entries[0]["connection"]  # the HTML, revalidated
    assert "browser" not in document["log"]


def _record(**timing: float) -> dict:
    return {"url": "https://a.test/x.js", "type": "Script", "sent": 100.0, "wall": 1_790_000_000.0,
            "finished": 100.050, "status": 200, "timing": {"requestTime": 100.002, **timing}}


def _timings(record: dict) -> dict:
    raw = RawLoad(url="https://a.test/", started_at=1_790_000_000.0, error=None, requests={"1": record})
    result = evaluate(Condition("a", H2, "direct", "r", "cold"), raw, LinkView(1, 0, {}), ServerView(1, 1, (200,)))
    [entry] = har(raw, result, "a", "0")["log"]["entries"]
    return entry["timings"] | {"time": entry["time"]}


def test_a_new_connection_is_queued_dns_connect_send_wait_receive_in_turn():
    timings = _timings(_record(dnsStart=1, dnsEnd=3, connectStart=3, sslStart=5, sslEnd=13, connectEnd=13,
                               sendStart=14, sendEnd=15, receiveHeadersEnd=40))
    assert timings == {"blocked": 3.0, "dns": 2.0, "connect": 10.0, "ssl": 8.0, "send": 2.0, "wait": 25.0,
                       "receive": 8.0, "time": 50.0}  # issued at 100.000 s, last byte at 100.050 s


def test_a_reused_connection_has_no_dns_connect_or_ssl():
    timings = _timings(_record(dnsStart=-1, dnsEnd=-1, connectStart=-1, connectEnd=-1, sslStart=-1, sslEnd=-1,
                               sendStart=0.5, sendEnd=1, receiveHeadersEnd=30))
    assert timings == {"blocked": 2.5, "dns": -1, "connect": -1, "ssl": -1, "send": 0.5, "wait": 29.0,
                       "receive": 18.0, "time": 50.0}


def test_a_memory_cache_hit_without_timing_is_all_receive_and_a_lost_load_has_no_entries():
    record = _record() | {"timing": {}, "memory_cache": True, "finished": 100.004}
    assert _timings(record) == {"blocked": -1, "dns": -1, "connect": -1, "ssl": -1, "send": 0, "wait": 0,
                                "receive": 4.0, "time": 4.0}
    raw = RawLoad(url="https://a.test/", started_at=1_790_000_000.0, error="the browser was lost")
    result = evaluate(Condition("a", H2, "direct", "r", "cold"), raw, LinkView(0, 0, {}), ServerView(0, 0, ()))
    document = har(raw, result, "a", "0")
    jsonschema.validate(document, SCHEMA)
    assert document["log"]["entries"] == [] and document["log"]["pages"][0]["comment"] == "the browser was lost"
    assert document["log"]["pages"][0]["pageTimings"] == {"onContentLoad": -1, "onLoad": -1}
