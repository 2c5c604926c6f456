"""Replayed pages in real Chromium: deterministic pages (a fixed clock start, a seeded
Math.random) and the replay's marked 404 seen by a load, from a small HTTP server here.
The same rules on loads made by hand: `test_browser_replay.py`."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote

import pytest
from playwright.sync_api import Playwright

from pagebench.core.measure.metrics import LinkView, ServerView, evaluate
from pagebench.core.modes import KEEPALIVE
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE
from pagebench.core.records import Condition
from pagebench.lab.browser import Driver, Setup
from pagebench.lab.pagescripts import DETERMINISTIC_START_MS
from tests.helpers import needs_root, readable_dir
from tests.lab.handler import QuietHandler, serving
from tests.lab.replayed import recording_of

pytestmark = needs_root

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

    server = _Server(("127.0.0.1", 0), _Page)
    server.reports = []
    with readable_dir() as work, serving(server) as port, sync_playwright() as pw:  # Chromium runs as nobody
        setup = Setup(f"MAP {HOST}:80 127.0.0.1:{port}, MAP * ~NOTFOUND", "")
        yield server, setup, work, pw


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
