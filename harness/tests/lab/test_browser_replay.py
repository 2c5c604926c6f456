"""Loads of a replayed site: a request the recording lacks (the replay's marked 404) is
counted and flags the load without failing it; a recorded error status is the page as it
was. The spec's `replay_query` and `deterministic`; and, in real Chromium, deterministic
pages (a fixed clock start, a seeded Math.random) and the marked 404 seen by a load."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from playwright.sync_api import Playwright

from pagebench.core.encodings import BR, Encoding, IDENTITY
from pagebench.core.measure.metrics import UNRECORDED_SHOWN, LinkView, ServerView, evaluate
from pagebench.core.modes import H2, KEEPALIVE
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE, Exchange, Recording
from pagebench.core.records import Condition, RawLoad
from pagebench.core.spec.model import SpecError, parse
from pagebench.lab.browser import DETERMINISTIC_START, DETERMINISTIC_START_MS, Driver, Setup, deterministic_script
from tests.helpers import needs_root
from tests.lab.handler import QuietHandler

SITE = "https://www.r.test"
MARK = {UNRECORDED_HEADER: UNRECORDED_VALUE}


def replayed_load(*files: tuple[str, int, dict[str, str], str], document_headers: dict[str, str] | None = None,
                  document_encoding: str = "") -> RawLoad:
    """A load of SITE/ (text/html) then `files`: (path, status, response headers, content
    encoding); statuses >= 400 have no Resource Timing body."""
    requests, timing = {}, []
    status = 200 if document_headers is None else 404
    document = ("/", status, {"Content-Type": "text/html", **(document_headers or {})}, document_encoding)
    for i, (path, status, headers, encoding) in enumerate((document, *files)):
        url = SITE + path
        requests[f"r{i}"] = {"url": url, "type": "Document" if i == 0 else "Other", "sent": 10.0 + i / 100,
                             "status": status, "protocol": "h2", "connection_id": 1, "encoded_bytes": 400,
                             "content_encoding": encoding, "response_headers": headers}
        if i:
            timing.append({"name": url, "startTime": 100.0 + i, "nextHopProtocol": "h2",
                           "encodedBodySize": 300, "decodedBodySize": 1000})
    page = {"nav": {"responseStart": 151.0, "loadEventStart": 320.0, "nextHopProtocol": "h2"}, "resources": timing}
    return RawLoad(url=SITE + "/", started_at=0.0, error=None, page=page, requests=requests)


def recording_of(raw: RawLoad, **statuses: int) -> Recording:
    """The recording a replay of `raw` came from: every request but the unrecorded ones,
    each with the status it got, unless `statuses` (by path) says what it had instead."""
    exchanges = [Exchange(host="www.r.test", target="/never-requested", status=204, original=SITE)]
    for entry in raw.requests.values():
        parts = urlsplit(entry["url"])
        if any(str(v).lower() == UNRECORDED_VALUE for v in entry["response_headers"].values()):
            continue
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        status = statuses.get(parts.path.strip("/"), entry["status"])
        exchanges.append(Exchange(host=parts.hostname, target=target, status=status, original=entry["url"],
                                  file="_replay/0001" if status in (200, 203) else None))
    return Recording(source="test", hosts={}, exchanges=tuple(exchanges))


def judge(raw: RawLoad, replayed: bool = True, encoding: Encoding = IDENTITY, **statuses: int):
    condition = Condition("rec", H2, "direct", "cable", "cold", encoding=encoding)
    return evaluate(condition, raw, LinkView(1, 0, {}), ServerView(1, len(raw.requests), (200,)),
                    recording=recording_of(raw, **statuses) if replayed else None)


# -- metrics --------------------------------------------------------------------------------

def test_an_unrecorded_404_is_counted_and_flagged_and_a_recorded_404_is_the_page_as_it_was():
    raw = replayed_load(("/app.js", 200, {"content-type": "text/javascript"}, ""),
                        ("/missing.png", 404, MARK, ""),
                        ("/gone.css", 404, {"content-type": "text/html"}, ""),  # 404 when recorded
                        ("/api?x=1", 503, {}, ""))
    result = judge(raw)
    assert result.ok and result.errors == ()
    assert result.unrecorded == (f"{SITE}/missing.png",)
    assert result.flagged and result.flags == (f"1 request(s) not in the recording: {SITE}/missing.png",)
    plain = judge(raw, replayed=False)  # a site served by path: every 4xx/5xx is an error
    assert not plain.ok and plain.unrecorded is None
    assert plain.errors == (f"{SITE}/missing.png: HTTP 404", f"{SITE}/gone.css: HTTP 404", f"{SITE}/api?x=1: HTTP 503")


def test_an_error_status_the_recording_does_not_have_is_an_error():
    """The edge proxy's 502 for a file recorded as a 200 is the lab failing, not the page."""
    raw = replayed_load(("/app.js", 502, {}, ""), ("/gone.css", 404, {}, ""))
    result = judge(raw, **{"app.js": 200})
    assert not result.ok and result.errors == (f"{SITE}/app.js: HTTP 502",)


def test_a_replayed_load_with_everything_recorded_is_clean():
    result = judge(replayed_load(("/app.js", 200, {"content-type": "text/javascript"}, "")))
    assert result.ok and not result.flagged and result.unrecorded == ()


def test_the_marker_is_read_whatever_its_case_and_from_the_wire_headers_too():
    raw = replayed_load(("/a.png", 404, {"x-pagebench-replay": "Unrecorded"}, ""), ("/b.png", 404, {}, ""),
                        ("/c.png", 404, {UNRECORDED_HEADER: "something else"}, ""))
    raw.requests["r2"]["wire_headers"] = {"X-PAGEBENCH-REPLAY": UNRECORDED_VALUE}  # only in the ExtraInfo event
    assert judge(raw).unrecorded == (f"{SITE}/a.png", f"{SITE}/b.png")


def test_the_flag_names_the_first_urls_and_counts_the_rest():
    n = UNRECORDED_SHOWN + 2
    result = judge(replayed_load(*((f"/i{i}.png", 404, MARK, "") for i in range(n))))
    assert len(result.unrecorded or ()) == n and result.ok
    shown = ", ".join(f"{SITE}/i{i}.png" for i in range(UNRECORDED_SHOWN))
    assert result.flags == (f"{n} request(s) not in the recording: {shown} (and 2 more)",)


def test_a_page_that_is_not_in_the_recording_fails_its_load():
    result = judge(replayed_load(document_headers=MARK))
    assert not result.ok and result.unrecorded == (f"{SITE}/",)
    assert result.errors == (f"{SITE}/: HTTP 404: the page itself is not in the recording",)


def test_a_replayed_resource_is_text_by_its_content_type_not_its_url():
    """Recorded URLs need no extension: the body's file took it from the Content-Type, and
    the servers encode by that."""
    files = (("/bundle?v=3", 200, {"Content-Type": "application/javascript; charset=utf-8"}, "br"),
             ("/logo", 200, {"Content-Type": "image/png"}, ""), ("/font", 200, {}, ""))
    assert judge(replayed_load(*files, document_encoding="br"), encoding=BR).flags == ()
    plain = (files[0][:3] + ("",), *files[1:])
    assert judge(replayed_load(*plain, document_encoding="br"), encoding=BR).flags == (
        f"1 text resource(s) arrived with Content-Encoding none instead of br (encoding br), e.g. {SITE}/bundle?v=3",)
    assert judge(replayed_load(*files, document_encoding="br"), replayed=False, encoding=BR).flags == (
        f"1 image/font resource(s) arrived with Content-Encoding br (they are sent as stored), e.g. {SITE}/bundle?v=3",)


# -- the spec -------------------------------------------------------------------------------

BASE = {"sites": ["seed000-small-n2"], "modes": ["h2"]}


def test_replay_query_and_deterministic_default_to_exact_and_off():
    spec = parse(BASE, "s.yaml")
    assert (spec.replay_query, spec.deterministic) == ("exact", False)
    spec = parse({**BASE, "replay_query": "loose", "deterministic": True}, "s.yaml")
    assert (spec.replay_query, spec.deterministic) == ("loose", True)


@pytest.mark.parametrize(("change", "message"), [
    ({"replay_query": "fuzzy"}, "s.yaml: replay_query: 'fuzzy': must be one of exact, loose"),
    ({"replay_query": ["loose"]}, "s.yaml: replay_query: Input should be a valid string"),
    ({"deterministic": "yes please"}, "s.yaml: deterministic: Input should be a valid boolean"),
    ({"deterministic": 1}, "s.yaml: deterministic: Input should be a valid boolean"),
])
def test_bad_replay_options_are_one_line_errors(change, message):
    with pytest.raises(SpecError) as caught:
        parse({**BASE, **change}, "s.yaml")
    assert str(caught.value) == message


def test_the_unknown_field_error_lists_the_new_fields():
    with pytest.raises(SpecError, match="allowed: .*replay_query, deterministic"):
        parse({**BASE, "replay": "loose"}, "s.yaml")


def test_the_deterministic_script_starts_the_clock_at_2026_and_takes_any_seed():
    assert datetime.fromtimestamp(DETERMINISTIC_START_MS / 1000, timezone.utc) == datetime.fromisoformat(
        DETERMINISTIC_START.replace("Z", "+00:00"))
    assert "const start = 1767225600000;" in deterministic_script(1)
    assert "let state = 4294967295;" in deterministic_script(-1)
    assert deterministic_script(5) == deterministic_script(5 + 2**32) != deterministic_script(6)


# -- real Chromium --------------------------------------------------------------------------

HOST = "www.d.test"
PAGE = f"http://{HOST}/"
#: Reports what the page sees of the clock and of Math.random in a request's query, as a
#: page putting them in a URL (a cache buster) would.
HTML = b"""<!doctype html><link rel="icon" href="data:,"><script>
const t = performance.now(), d = Date.now();
const seen = {start: d - t, random: [Math.random(), Math.random(), Math.random()],
              epoch: new Date(0).toISOString(), called: new Date(Date()).toISOString(),
              isDate: new Date() instanceof Date, parsed: new Date("2001-02-03T04:05:06Z").getTime(), name: Date.name};
fetch("/report?" + encodeURIComponent(JSON.stringify(seen)));
</script><img src="/missing.png"><img src="/gone.png"><p>hello</p>"""


class _Page(QuietHandler):
    """HTML, the report it sends, a recorded 404 and the replay's unrecorded one."""

    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        headers: dict[str, str] = {"Cache-Control": "no-store"}
        if self.path == "/":
            status, body, headers["Content-Type"] = 200, HTML, "text/html"
        elif self.path.startswith("/report?"):
            self.server.reports.append(json.loads(unquote(self.path.split("?", 1)[1])))
            status, body = 204, b""
        else:
            status, body = 404, b"not found"
            if self.path == "/missing.png":
                headers[UNRECORDED_HEADER] = UNRECORDED_VALUE
        self.answer(status, headers, body)


class _Server(ThreadingHTTPServer):
    reports: list[dict]


@pytest.fixture
def lab() -> Iterator[tuple[_Server, Setup, Path, Playwright]]:
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="pagebench-test-"))
    os.chmod(work, 0o755)  # Chromium runs as nobody
    server = _Server(("127.0.0.1", 0), _Page)
    server.reports = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        setup = Setup(f"MAP {HOST}:80 127.0.0.1:{server.server_address[1]}, MAP * ~NOTFOUND", "")
        with sync_playwright() as pw:
            yield server, setup, work, pw
    finally:
        server.shutdown()
        server.server_close()
        shutil.rmtree(work, ignore_errors=True)


def _report(server: _Server, count: int) -> dict:
    deadline = time.monotonic() + 10
    while len(server.reports) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(server.reports) == count, "the page sent no report"
    return server.reports[-1]


def _visits(server: _Server, setup: Setup, driver: Driver) -> list[dict]:
    """The page loaded by two cold loads (fresh contexts of the long-lived browser) and by
    priming a warm profile (a persistent context): what each saw."""
    seen = []
    for _ in range(2):
        [raw] = driver.cold(setup, PAGE, 20.0)
        assert raw.error is None, raw.error
        seen.append(_report(server, len(seen) + 1))
    raw = driver.prime(setup, "det", PAGE, 20.0)
    assert raw.error is None, raw.error
    seen.append(_report(server, len(seen) + 1))
    return seen


@needs_root
def test_deterministic_pages_see_the_same_clock_start_and_random_numbers(lab):
    server, setup, work, pw = lab
    driver = Driver(pw, work / "det", None, deterministic=7)
    try:
        seen = _visits(server, setup, driver)
    finally:
        driver.close()
    for report in seen:
        assert abs(report["start"] - DETERMINISTIC_START_MS) <= 1, report  # Date.now() = start + performance.now()
        assert report["called"].startswith("2026-01-01T00:00:0"), report  # Date() called: a string, in local time
        assert (report["epoch"], report["isDate"], report["parsed"], report["name"]) == (
            "1970-01-01T00:00:00.000Z", True, 981173106000, "Date")
        assert all(0 <= r < 1 for r in report["random"]) and len(set(report["random"])) == 3
    assert seen[0]["random"] == seen[1]["random"] == seen[2]["random"]


@needs_root
def test_without_the_option_pages_see_the_real_clock_and_random_numbers(lab):
    server, setup, work, pw = lab
    driver = Driver(pw, work / "real", None)
    try:
        before = time.time() * 1000
        seen = _visits(server, setup, driver)
    finally:
        driver.close()
    for report in seen:
        assert before - 60_000 < report["start"] < time.time() * 1000, report
    assert len({tuple(report["random"]) for report in seen}) == 3


@needs_root
def test_a_real_load_counts_the_unrecorded_404_and_not_the_recorded_one(lab):
    server, setup, work, pw = lab
    driver = Driver(pw, work / "cold", None)
    try:
        [raw] = driver.cold(setup, PAGE, 20.0)
    finally:
        driver.close()
    assert raw.error is None, raw.error
    condition = Condition("rec", KEEPALIVE, "direct", "none", "cold", "none")
    result = evaluate(condition, raw, LinkView(1, 0, {}), ServerView(1, 4, (200,)), recording=recording_of(raw))
    assert result.ok and result.errors == ()
    assert result.unrecorded == (f"http://{HOST}/missing.png",)
    assert f"1 request(s) not in the recording: http://{HOST}/missing.png" in result.flags
    assert not evaluate(condition, raw, LinkView(1, 0, {}), ServerView(1, 4, (200,))).ok  # served by path: errors
