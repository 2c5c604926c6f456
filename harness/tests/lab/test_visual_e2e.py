"""What a person sees, in real Chromium: frames captured during a load give the visual
progress its page was built to show; layout shifts and long tasks are what Chromium's own
trace says they were (a load with `trace`: its LayoutShift and RunTask events)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from playwright.sync_api import sync_playwright

from pagebench.core.measure import visual
from pagebench.lab.browser import Driver, Setup
from tests.helpers import needs_root, readable_dir
from tests.lab.handler import QuietHandler, https_origin

pytestmark = needs_root

HOST = "www.v.test"
#: The block painted first covers BLOCK of the viewport's width, the late one the rest
#: below it: the histogram's share of the first is its share of the coloured pixels.
FIRST, LATE = "rgb(200, 30, 30)", "rgb(30, 30, 200)"
LATE_DELAY_S = 0.8
BUSY_MS = 250

PAGES = {
    # a red block at once, a blue one of three times its area once a slow script arrives
    "/steps": f"""<!doctype html><body style="margin:0">
<div style="width:400px;height:200px;background:{FIRST}"></div>
<div id="late"></div>
<script src="/slow.js"></script></body>""".encode(),
    # content that a late banner pushes down (a layout shift), then a long task, both
    # before `load` (a slow image holds it back): the capture ends soon after `load`
    "/shift": f"""<!doctype html><body style="margin:0"><p style="font-size:40px">text first</p>
<div style="width:600px;height:300px;background:{LATE}"></div><img src="/slow.gif" width=1 height=1>
<script>
setTimeout(() => {{
  const b = document.createElement("div");
  b.style.cssText = "height:200px;background:{FIRST}";
  document.body.prepend(b);
  setTimeout(() => {{ const end = performance.now() + {BUSY_MS}; while (performance.now() < end) {{}} }}, 50);
}}, 300);
</script></body>""".encode(),
    # a button whose handler blocks the main thread before the next paint
    "/button": f"""<!doctype html><body style="margin:0"><button id="go" style="font-size:40px">go</button>
<p id="out">waiting</p>
<script>document.getElementById("go").addEventListener("click", () => {{
  const end = performance.now() + {BUSY_MS}; while (performance.now() < end) {{}}
  document.getElementById("out").textContent = "done";
}});</script></body>""".encode(),
}
GIF = bytes.fromhex("47494638396101000100800000000000ffffff21f90401000000002c00000000010001000002024401003b")
SLOW_JS = (f'document.getElementById("late").innerHTML = \'<div style="width:400px;height:600px;'
           f'background:{LATE}"></div>\';').encode()


class _Site(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/slow.js":
            time.sleep(LATE_DELAY_S)
            self.answer(200, {"Content-Type": "text/javascript", "Cache-Control": "no-store"}, SLOW_JS)
        elif self.path == "/slow.gif":
            time.sleep(LATE_DELAY_S)
            self.answer(200, {"Content-Type": "image/gif", "Cache-Control": "no-store"}, GIF)
        elif self.path in PAGES:
            self.answer(200, {"Content-Type": "text/html", "Cache-Control": "no-store"}, PAGES[self.path])
        else:
            self.answer(404, {}, b"")


@pytest.fixture(scope="module")
def lab() -> Iterator[tuple[Setup, Driver, Driver, Driver]]:
    """An HTTPS origin here, a driver capturing frames, one keeping full traces, one
    clicking `#go` after each load."""
    with readable_dir() as work:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
        with https_origin(server, HOST, work) as setup, sync_playwright() as pw:
            frames, traced = Driver(pw, work / "frames", None), Driver(pw, work / "traced", None, trace=True)
            clicking = Driver(pw, work / "clicking", None, click="#go")
            try:
                yield setup, frames, traced, clicking
            finally:
                for driver in (frames, traced, clicking):
                    driver.close()


def test_the_frames_show_the_progress_the_page_was_built_to_show(lab):
    setup, driver, _, _ = lab
    [raw] = driver.cold(setup, f"https://{HOST}/steps", 20.0)
    assert raw.error is None, raw.error
    seen = visual.visual(visual.frames_of(raw.trace["traceEvents"]), raw.page, raw.page["paints"].get(
        "first-contentful-paint"))
    curve = seen.progress
    assert len(curve) >= 2 and curve[-1][1] == 1.0
    # the red block is a quarter of the coloured pixels (400x200 of 400x200 + 400x600)
    first_change, share = curve[0]
    assert share == pytest.approx(0.25, abs=0.03)
    assert first_change == pytest.approx(raw.page["paints"]["first-paint"], abs=50)
    # the blue block came with the slow script, after its delay (physics: not before)
    assert seen.last_visual_change_ms is not None and seen.last_visual_change_ms >= LATE_DELAY_S * 1000
    expected = first_change + (1 - share) * (seen.last_visual_change_ms - first_change)
    assert seen.speed_index_ms == pytest.approx(expected, rel=1e-6)
    assert seen.visual_complete_85_ms == seen.visual_complete_99_ms == seen.last_visual_change_ms
    assert seen.first_visual_change_ms == first_change
    assert seen.cls == 0.0 and seen.long_tasks == 0
    assert seen.tbt_ms is None  # coloured boxes are no contentful paint: no FCP, no TBT (as Lighthouse)


def test_layout_shift_and_blocking_agree_with_chromiums_trace(lab):
    setup, _, driver, _ = lab
    [raw] = driver.cold(setup, f"https://{HOST}/shift", 20.0)
    assert raw.error is None, raw.error
    fcp = raw.page["paints"]["first-contentful-paint"]
    seen = visual.visual(visual.frames_of(raw.trace["traceEvents"]), raw.page, fcp)
    events = raw.trace["traceEvents"]
    shifts = [e["args"]["data"] for e in events if e.get("name") == "LayoutShift"]
    assert shifts and seen.cls is not None and seen.cls > 0.05
    assert seen.cls == pytest.approx(sum(s["weighted_score_delta"] for s in shifts if not s["had_recent_input"]),
                                     rel=1e-3)
    # the busy loop is one long task; the trace's renderer main thread ran it as one task
    main = {(e["pid"], e["tid"]) for e in events if e.get("name") == "thread_name"
            and e["args"].get("name") == "CrRendererMain"}
    tasks = [e["dur"] / 1000 for e in events if e.get("name") == "ThreadControllerImpl::RunTask"
             and (e.get("pid"), e.get("tid")) in main and e.get("dur", 0) > visual.BLOCKING_MS * 1000]
    assert seen.long_tasks is not None and seen.long_tasks >= 1 and len(tasks) >= 1
    assert max(tasks) >= BUSY_MS  # physics: the loop ran at least this long
    assert seen.tbt_ms == pytest.approx(sum(t - visual.BLOCKING_MS for t in tasks), abs=20)


def test_a_scripted_click_after_the_load_gives_its_inp_and_leaves_the_frames_alone(lab):
    setup, _, _, driver = lab
    [raw] = driver.cold(setup, f"https://{HOST}/button", 20.0)
    assert raw.error is None, raw.error
    seen = visual.visual(visual.frames_of(raw.trace["traceEvents"]), raw.page,
                         raw.page["paints"]["first-contentful-paint"])
    assert seen.inp_ms is not None and seen.inp_ms >= BUSY_MS  # physics: the handler ran that long before a paint
    assert {entry["name"] for entry in raw.page["interactions"]} >= {"pointerdown", "click"}
    # the click came after the capture: its paint ("done") is no visual change of the load
    assert seen.last_visual_change_ms is not None and seen.last_visual_change_ms < raw.page["nav"]["loadEventEnd"] + 400
    [missing] = driver.cold(setup, f"https://{HOST}/steps", 20.0)  # no #go there
    assert missing.error is not None and missing.error.startswith("interaction: cannot click '#go'")
