"""A termination signal that lands in Playwright, in real Chromium: while a sync browser
call waits, Playwright's asyncio loop and its event listeners run in greenlets of their
own in the main thread, and the signal's handler runs there. The code that made the call
must get the stop, and the browser must still answer and close (the unwinding closes it)."""

from __future__ import annotations

import signal
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from pagebench.lab.browser import CHROMIUM
from pagebench.system.signals import Interrupted, signals_raise
from tests.helpers import needs_root

pytestmark = needs_root


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True)
        yield browser
        browser.close()


@pytest.mark.parametrize(("sig", "stop"), [(signal.SIGTERM, Interrupted), (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_in_a_listener_stops_the_call_and_the_browser_still_answers(chromium: Browser, sig, stop):
    """The listener's greenlet runs inside the task that reads the driver's messages: an
    Interrupted raised there ended that task, the connection closed and the caller got
    "Target page, context or browser has been closed" (a browser lost, to the runner),
    not the stop."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)  # as from a terminal
    page = chromium.new_page()
    try:
        page.on("console", lambda message: signal.raise_signal(sig) if message.text == "stop" else None)
        reached = []
        with signals_raise():
            with pytest.raises(stop):
                for n in range(20):
                    page.evaluate("text => console.log(text)", "stop" if n == 2 else str(n))
                    reached.append(n)
        assert 2 <= len(reached) <= 3  # the evaluate that logged it, or the next one
        assert page.evaluate("1 + 1") == 2  # the loop, left where the signal found it, goes on
    finally:
        page.close()
        signal.signal(signal.SIGINT, old)
