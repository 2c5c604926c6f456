"""A device as the browser is given it (`core.devices`): a context's options (viewport,
scale, mobile, touch, user agent) and DevTools' CPU throttling on the page's CDP session,
set before it navigates; and the CPU benchmark the runner calibrates that throttling with.

The benchmark is a fixed page of pure script work (no network: `set_content` on a blank
page), timed inside the page with `performance.now()`, so what it measures is the renderer's
main thread, which is what DevTools throttles. The device table's reference time
(`link/devices.yaml`, `reference.script_ms`) is this page's time on the reference desktop:
change the page, and that time must be measured again.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from playwright.sync_api import Browser, BrowserContext, CDPSession, Page
from playwright.sync_api import Error as PlaywrightError

from pagebench.core.devices import DESKTOP, Device
from pagebench.core.errors import PagebenchError

#: The benchmark's work per run: about 150 ms unthrottled on the reference desktop.
BENCHMARK_ROUNDS = 1000
#: What a run of BENCHMARK_ROUNDS returns besides its time: the same work, every time.
BENCHMARK_CHECKSUM = 242779
#: Deterministic script work of the kinds pages do (integer hashing, small objects,
#: strings, a sort, JSON), in one function the page exposes; it returns [ms, checksum].
BENCHMARK_PAGE = """<!doctype html><meta charset="utf-8"><title>pagebench CPU benchmark</title>
<script>
function pagebenchWork(rounds) {
  let h = 0x811c9dc5 | 0, total = 0;
  for (let r = 0; r < rounds; r++) {
    const items = [];
    for (let i = 0; i < 200; i++) {
      h = Math.imul(h ^ (r * 200 + i), 0x01000193);
      items.push({id: i, key: "k" + (h >>> 0).toString(36), value: (h >>> 7) & 1023});
    }
    items.sort((a, b) => a.value - b.value || a.id - b.id);
    let text = "";
    for (const item of items) text += item.key.charAt(1);
    total = (total + text.length + items[0].value + JSON.stringify(items[100]).length) | 0;
  }
  return total;
}
window.pagebenchBenchmark = rounds => {
  const start = performance.now();
  const checksum = pagebenchWork(rounds);
  return [performance.now() - start, checksum];
};
</script>
"""


class BenchmarkError(PagebenchError):
    """The benchmark did not do its fixed work (its page changed without its reference)."""


@dataclass(frozen=True)
class Emulation:
    """A device as one load's browser gets it: the context's options, and the DevTools CPU
    rate the run's calibration chose for it (1: none)."""

    device: Device = DESKTOP
    cpu_rate: float = 1.0

    def context_options(self) -> dict[str, Any]:
        """`new_context` / `launch_persistent_context` options; none for the default device,
        whose context stays exactly Playwright's default."""
        d = self.device
        if not d.emulates:
            return {}
        options: dict[str, Any] = {"viewport": {"width": d.width, "height": d.height},
                                   "device_scale_factor": d.device_scale_factor, "is_mobile": d.mobile,
                                   "has_touch": d.touch}
        return options | ({"user_agent": d.user_agent} if d.user_agent is not None else {})

    def throttle(self, context: BrowserContext, page: Page) -> CDPSession | None:
        """Slow the page's main thread before it navigates (it holds across the navigation).
        The session returned must stay attached for the whole load: detaching it ends the
        throttling. None when nothing is slowed."""
        if self.cpu_rate == 1.0:
            return None
        session = context.new_cdp_session(page)
        session.send("Emulation.setCPUThrottlingRate", {"rate": self.cpu_rate})
        return session


@dataclass
class CpuBenchmark:
    """Times the benchmark page in one browser (`Driver.cpu_benchmark`)."""

    browser: Browser
    rounds: int = BENCHMARK_ROUNDS
    checksum: int | None = field(default=BENCHMARK_CHECKSUM)

    def times(self, emulation: Emulation, runs: int) -> list[float]:
        """`runs` script times (ms) in a fresh context of the emulation's device at its CPU
        rate, after one unthrottled run that warms the JIT and is not counted."""
        context = self.browser.new_context(**emulation.context_options())
        try:
            page = context.new_page()
            page.set_content(BENCHMARK_PAGE)
            self._run(page)
            session = emulation.throttle(context, page)
            try:
                return [self._run(page) for _ in range(runs)]
            finally:
                if session is not None:
                    session.detach()
        finally:
            try:
                context.close()
            except PlaywrightError:
                pass

    def _run(self, page: Page) -> float:
        ms, checksum = page.evaluate("rounds => pagebenchBenchmark(rounds)", self.rounds)
        if self.checksum is not None and checksum != self.checksum:
            raise BenchmarkError(f"the CPU benchmark returned {checksum}, not {self.checksum}: its page changed; "
                                 "measure the reference again (link/devices.yaml)")
        return float(ms)


@contextmanager
def benchmarking(browser: Browser) -> Iterator[CpuBenchmark]:
    """The CPU benchmark in `browser`, closed afterwards (a browser of its own: the
    calibration leaves nothing behind for the loads)."""
    try:
        yield CpuBenchmark(browser)
    finally:
        try:
            browser.close()
        except PlaywrightError:
            pass
