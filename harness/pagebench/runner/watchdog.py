"""The runner's watchdog: a load in flight ends as soon as a part of the lab dies, not at
its timeout."""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from pagebench.edge.proxy import EdgeProxy
from pagebench.lab.build import Origins
from pagebench.lab.split.remote import RemoteSites
from pagebench.link.emulator import LinkControl
from pagebench.system.commands import LabError

#: How long past its own timeout a load may take before the run gives up on the browser.
LOAD_GRACE_S = 30.0


class Watchdog:
    """Watches the lab's local processes while loads run. When one dies (the delay
    program, nginx, Caddy, the edge proxy), or a load overruns its deadline (a browser
    Playwright did not see die), the load in flight must end now, not at its timeout:
    the watchdog kills this process's Playwright driver, so every pending browser call
    fails at once, and the runner raises the watchdog's one-line error (`raise_if_fired`).
    (A signal handler raising the error was tried: Playwright's event loop swallows what
    is raised inside it.)"""

    PERIOD_S = 0.25

    def __init__(self, checks: list[Callable[[], None]]) -> None:
        self.checks = checks
        self.error: Exception | None = None
        self.until: float | None = None  # a load's hard deadline (monotonic)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pagebench-watchdog", daemon=True)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """The block must end within `seconds` (then the run fails, one line)."""
        self.until = time.monotonic() + seconds
        try:
            yield
        finally:
            self.until = None

    def raise_if_fired(self) -> None:
        if self.error is not None:
            raise self.error

    def _watch(self) -> None:
        while not self._stop.wait(self.PERIOD_S):
            until = self.until
            if until is not None and time.monotonic() > until:
                self._fire(LabError(f"the browser stopped answering: a load ran {LOAD_GRACE_S:g} s past its "
                                    "timeout (its process killed or crashed?)"))
                return
            for check in self.checks:
                try:
                    check()
                except Exception as error:  # noqa: BLE001 - the part's own one-line error, raised by the runner
                    self._fire(error)
                    return

    def _fire(self, error: Exception) -> None:
        self.error = error
        # The driver's pending futures die with it, unread: asyncio would log each one (with a
        # traceback) at exit, after the one line that says what happened.
        logging.getLogger("asyncio").disabled = True
        for pid in _playwright_drivers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _playwright_drivers() -> list[int]:
    """This process's children that run Playwright's driver."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == me and b"playwright" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def local_checks(link: LinkControl, origins: Origins, proxy: EdgeProxy | None) -> list[Callable[[], None]]:
    """What the watchdog can ask without a network call: processes of this machine."""
    checks: list[Callable[[], None]] = []
    for part in (link, origins, proxy):
        check = getattr(part, "check_alive", None)
        if check is not None and not isinstance(part, RemoteSites):
            checks.append(check)
    return checks
