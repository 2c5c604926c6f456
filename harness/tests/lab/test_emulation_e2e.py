"""Devices in real Chromium (the headless shell, as nobody, sandboxed, through the driver's
wrapper): a moto-g-power load is 412 CSS pixels wide, mobile, touch, with its user agent on
the wire, cold and warm (primed as the same device); DevTools' CPU throttling holds through
the navigation; the CPU benchmark does its fixed work and slows when throttled. The page
reports what it saw in the URL of an image it requests from a small HTTPS server here,
trusted by the lab's private CA's leaf (as `test_browser_e2e.py`).

Timing is asserted only in the direction physics allows, with room for a vCPU that stalls:
a 4x rate makes script at least 2x slower, never "about 4x"."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import sync_playwright

from pagebench.core.devices import DESKTOP
from pagebench.core.records import RawLoad
from pagebench.lab.browser import Driver, Setup
from pagebench.lab.emulation import Emulation
from pagebench.yamlfiles import builtin_devices
from tests.helpers import needs_root, readable_dir
from tests.lab.handler import QuietHandler, https_origin

pytestmark = needs_root

HOST = "www.d.test"
PAGE = f"https://{HOST}/"
PHONE = builtin_devices().devices["moto-g-power"]
#: What the page saw, as the query of an image it asks for: its viewport, pixel ratio,
#: touch points, user agent and how long a fixed loop of script took it (ms).
PROBE = b"""<!doctype html><html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" href="data:,">
<title>probe</title></head><body><p>probe</p><script>
(() => {
  const start = performance.now();
  let h = 0;
  for (let i = 0; i < 4000000; i++) h = Math.imul(h ^ i, 16777619);
  const seen = new URLSearchParams({w: innerWidth, dpr: devicePixelRatio, touch: navigator.maxTouchPoints,
                                    ua: navigator.userAgent, cpu: (performance.now() - start).toFixed(2), h: h & 1});
  const img = new Image();
  img.src = "/seen.gif?" + seen;
  document.body.appendChild(img);
})();
</script></body></html>"""
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00" \
      b"\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


class _Probe(QuietHandler):
    server: _Server

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        path = urlsplit(self.path)
        self.server.seen.append((path.path, {k: v[0] for k, v in parse_qs(path.query).items()},
                                 self.headers.get("User-Agent", "")))
        if path.path == "/":
            self.answer(200, {"Content-Type": "text/html", "Cache-Control": "no-cache"}, PROBE)
        else:
            self.answer(200, {"Content-Type": "image/gif", "Cache-Control": "no-store"}, GIF)


class _Server(ThreadingHTTPServer):
    seen: list[tuple[str, dict[str, str], str]]


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[_Server, Setup, Driver]]:
    with readable_dir() as work:  # Chromium runs as nobody
        server = _Server(("127.0.0.1", 0), _Probe)
        with https_origin(server, HOST, work) as setup, sync_playwright() as pw:
            driver = Driver(pw, work / "browser", None)
            try:
                yield server, setup, driver
            finally:
                driver.close()


def _seen(server: _Server) -> tuple[dict[str, str], set[str]]:
    """What the page reported in its last load, and every User-Agent the server saw since."""
    reports = [query for path, query, _ in server.seen if path == "/seen.gif"]
    assert reports, server.seen
    return reports[-1], {agent for _, _, agent in server.seen}


def test_a_phone_load_is_412_wide_mobile_touch_with_its_user_agent(lab):
    server, setup, driver = lab
    server.seen = []
    [raw] = driver.cold(setup, PAGE, 30.0, emulation=Emulation(PHONE))
    assert raw.error is None, raw.error
    page, agents = _seen(server)
    assert (page["w"], page["dpr"], page["touch"]) == ("412", "1.75", "1")
    assert page["ua"] == PHONE.user_agent and agents == {PHONE.user_agent}  # the page's and on the wire

    server.seen = []
    [raw] = driver.cold(setup, PAGE, 30.0, emulation=Emulation(DESKTOP))
    assert raw.error is None, raw.error
    page, agents = _seen(server)
    assert (page["w"], page["dpr"], page["touch"]) == ("1280", "1", "0")  # Playwright's default context
    assert "HeadlessChrome/" in page["ua"] and "Mobile" not in page["ua"] and agents == {page["ua"]}


def _cpu(server: _Server, load: Callable[[], list[RawLoad]]) -> float:
    """How long the page's loop of script took it in the load `load` makes (ms)."""
    server.seen = []
    raws = load()
    assert all(raw.error is None for raw in raws), [raw.error for raw in raws]
    return float(_seen(server)[0]["cpu"])


def test_throttling_holds_through_cold_and_warm_loads_and_priming_is_the_same_device(lab):
    server, setup, driver = lab
    desktop = statistics.median(_cpu(server, lambda: driver.cold(setup, PAGE, 30.0)) for _ in range(3))
    slowed = Emulation(PHONE, 4.0)
    cold = statistics.median(_cpu(server, lambda: driver.cold(setup, PAGE, 30.0, emulation=slowed)) for _ in range(3))
    assert cold >= 2 * desktop, (cold, desktop)

    server.seen = []
    assert driver.prime(setup, "phone", PAGE, 30.0, emulation=slowed).error is None
    assert {agent for _, _, agent in server.seen} == {PHONE.user_agent}  # primed as the phone its loads are
    warm = statistics.median(_cpu(server, lambda: [driver.warm(setup, "phone", PAGE, 30.0, emulation=slowed)])
                             for _ in range(3))
    assert warm >= 2 * desktop, (warm, desktop)
    assert _seen(server)[0]["w"] == "412"


def test_the_cpu_benchmark_does_its_fixed_work_and_slows_when_throttled(lab):
    _, setup, driver = lab
    with driver.cpu_benchmark(setup) as benchmark:
        host = benchmark.times(Emulation(PHONE), 3)
        throttled = benchmark.times(Emulation(PHONE, 4.0), 3)
    assert len(host) == len(throttled) == 3 and min(host) > 0  # and its checksum was the reference's
    assert statistics.median(throttled) >= 2 * statistics.median(host), (throttled, host)
