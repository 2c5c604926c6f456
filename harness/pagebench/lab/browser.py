"""Drive Debian's Chromium through Playwright, inside the client namespace, as an
unprivileged user with its sandbox on. One load in, one raw record out.

Cold: a fresh browser context per load (fresh cache, fresh socket pool). Warm: a
persistent profile primed once, then relaunched before each measured load (disk cache
kept, connections new). Certificates are trusted by the leaf's SPKI, never by ignoring
errors (Chromium then skips its HTTP cache).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playwright.sync_api import Browser as PWBrowser
from playwright.sync_api import BrowserContext, CDPSession, Page, Playwright
from playwright.sync_api import Error as PlaywrightError

from pagebench.core.measure import visual
from pagebench.core.records import RawLoad
from pagebench.lab.network import Recorder
from pagebench.lab.pagescripts import OBSERVE_JS, PAGE_METRICS_JS, deterministic_script
from pagebench.lab.emulation import CpuBenchmark, Emulation, benchmarking

#: Debian's headless shell: the same Chromium (net stack, Blink, V8, same version) without
#: the desktop browser layer, and what Playwright itself runs for headless. The full
#: `chromium` starts three renderers per context at about 0.8 s of CPU each on a 2-core
#: machine; that work spilled into the measured loads (docs/benchmarks.md). The shell has
#: no learned preconnects, so warm relaunches open connections only for what they request.
CHROMIUM = os.environ.get("PAGEBENCH_CHROMIUM", "/usr/lib/chromium/chromium-headless-shell")
NOBODY = 65534
#: Playwright passes its own background-networking, sync and first-run switches; these add
#: what it leaves on. (No --disable-features here: a second one replaces Playwright's list;
#: the wrapper appends DISABLED_FEATURES to Playwright's own.)
BASE_ARGS = ("--disable-domain-reliability",)
#: Compression dictionaries (dcz) are used only over certificates of a known root by
#: default; the lab's authority is private.
DISABLED_FEATURES = ("CompressionDictionaryTransportRequireKnownRootCert",)
#: After a scripted interaction, how long its Event Timing entries may take to come (they
#: are reported after the next paint).
INTERACTION_WAIT_S = 1.0
#: How long the element to click may take to be there and clickable, once loaded.
CLICK_TIMEOUT_S = 5.0

#: What every measured load's trace records: the compositor's screenshots and navigation
#: start, the frames `core.measure.visual` reads (what a person sees).
FRAME_CATEGORIES = (visual.SCREENSHOT_CATEGORY, visual.NAVIGATION_CATEGORY)
#: What a `--trace` load records besides: DevTools' timeline (tasks, layout, paint,
#: frames), script execution, loading and user timing.
TRACE_CATEGORIES = ("devtools.timeline", "disabled-by-default-devtools.timeline",
                    "disabled-by-default-devtools.timeline.frame", "toplevel", "v8.execute", "blink.user_timing",
                    "loading", "latencyInfo")

@dataclass(frozen=True)
class Setup:
    """How Chromium must be launched for one (mode, TLS) lab: the host mapping and trust.
    `force_quic_on` (`ServerPlan.force_quic_on`: `host:443,...`) makes those origins use
    QUIC from the first request, without TCP or Alt-Svc discovery; it implies `quic`."""

    resolver_rules: str
    spki_list: str
    quic: bool = False
    extra_args: tuple[str, ...] = ()
    #: The edge proxy's address for each client (proxy topology); client k uses proxies[k].
    proxies: tuple[str, ...] = ()
    force_quic_on: str = ""

    def args(self) -> list[str]:
        args = list(BASE_ARGS) + [
            f"--host-resolver-rules={self.resolver_rules}",
            f"--ignore-certificate-errors-spki-list={self.spki_list}",
        ]
        args.append("--enable-quic" if self.quic or self.force_quic_on else "--disable-quic")
        if self.force_quic_on:
            args.append(f"--origin-to-force-quic-on={self.force_quic_on}")
        if self.proxies:
            args.append(f"--proxy-server={self.proxies[0]}")
        return args + list(self.extra_args)

    def context_options(self, client: int) -> dict[str, Any]:
        return {"proxy": {"server": self.proxies[client]}} if self.proxies else {}


def write_wrapper(path: Path, namespace: str | None, home: Path) -> Path:
    """The executable Playwright launches: enter the client namespace (None: stay in this
    one, the harness's own, as in the compose lab), give the profile to `nobody`, add
    DISABLED_FEATURES to Playwright's --disable-features (or pass ours if it gave none),
    drop root, exec Chromium itself (not Debian's launcher script)."""
    enter = f"ip netns exec {namespace} " if namespace is not None else ""
    features = ",".join(DISABLED_FEATURES)
    home.mkdir(parents=True, exist_ok=True)
    os.chown(home, NOBODY, NOBODY)
    path.write_text(
        "#!/bin/sh\n"
        "# Generated by pagebench: run Chromium in the client namespace as nobody.\n"
        "features=\n"
        'for arg in "$@"; do\n'
        "  shift\n"
        '  case "$arg" in\n'
        '    --user-data-dir=*) chown -R 65534:65534 "${arg#--user-data-dir=}" ;;\n'
        f'    --disable-features=) features=1; arg="${{arg}}{features}" ;;\n'
        f'    --disable-features=*) features=1; arg="${{arg}},{features}" ;;\n'
        "  esac\n"
        '  set -- "$@" "$arg"\n'
        "done\n"
        f'[ -n "$features" ] || set -- "$@" "--disable-features={features}"\n'
        f'exec {enter}setpriv --reuid={NOBODY} --regid={NOBODY} --clear-groups '
        f'env HOME={home} {CHROMIUM} "$@"\n'
    )
    path.chmod(0o755)
    return path


class _Tracer:
    """A Chrome trace of one page's load over its CDP session (`RawLoad.trace`: the events
    as DevTools' Performance panel reads them): with `frames` its frames, with `full` what
    `--trace` keeps. Events arrive only inside Playwright calls, so the end is waited for in the
    page's own small pauses."""

    def __init__(self, session: CDPSession, raw: RawLoad, page: Page, full: bool, frames: bool) -> None:
        self.session, self.page = session, page
        self.done = False
        raw.trace = {"traceEvents": []}
        session.on("Tracing.dataCollected", lambda e: raw.trace["traceEvents"].extend(e.get("value") or []))
        session.on("Tracing.tracingComplete", self._complete)
        categories = dict.fromkeys((TRACE_CATEGORIES if full else ()) + (FRAME_CATEGORIES if frames else ()))
        session.send("Tracing.start", {"transferMode": "ReportEvents",
                                       "traceConfig": {"includedCategories": list(categories)}})

    def _complete(self, _e: dict[str, Any]) -> None:
        self.done = True

    def stop(self) -> None:
        """The capture ends here; the browser flushes the trace meanwhile (`wait`)."""
        self.session.send("Tracing.end")

    def wait(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not self.done and time.monotonic() < deadline:
            self.page.wait_for_timeout(5)


def _measure(pages: list[Page], contexts: list[BrowserContext], url: str, timeout_s: float,
             dictionaries: bool = False, trace: bool = False, frames: bool = True,
             click: str | None = None, ready: Callable[[], None] = lambda: None,
             meanwhile: Callable[[], None] = lambda: None) -> list[RawLoad]:
    """Each page loads `url`, all at the same moment (several clients: aggregation).
    Sync Playwright's `goto` returns only at `load`, so with several pages each
    navigation is started from the page itself, then awaited. With `dictionaries`, it
    then waits for the dictionaries the page announced (an error if they did not come).
    Each page's load is traced (`_Tracer`): its frames (unless not `frames`), and
    everything with `trace`; with several pages (clients), only the first's, with `trace`
    (Chromium allows one trace at a time), and no frames. With `click`, once that ends,
    each page is clicked there (`interact`: the load's INP). `ready`: the caller's work
    that must be done before the navigation starts, done once the renderer answers;
    `meanwhile`: its work that may wait until the page has loaded, done at the
    start of the network-idle wait (IDLE_S), which then sees what arrived meanwhile."""
    for page in pages:
        page.evaluate("1")  # the renderer is up and answering before navigation starts
    raws = [RawLoad(url=url, started_at=time.time(), error=None) for _ in pages]
    sessions = [context.new_cdp_session(page) for page, context in zip(pages, contexts)]
    try:
        recorders: list[Recorder] = []
        tracers: list[_Tracer | None] = []
        for page, session, raw in zip(pages, sessions, raws):
            session.send("Network.enable")
            recorders.append(Recorder(session, raw, page))
            # Chromium traces one session at a time: with several clients, only the first
            # client's load, only with `trace`, and without frames (they might be any client's)
            alone = len(pages) == 1
            capture = (frames or trace) if alone else (trace and not tracers)
            tracers.append(_Tracer(session, raw, page, full=trace, frames=frames and alone) if capture else None)
            page.on("console", lambda m, raw=raw: raw.console_errors.append(m.text) if m.type == "error" else None)
        ready()
        for raw in raws:
            raw.started_at = time.time()
        together = len(pages) > 1
        if together:
            for page in pages:
                page.evaluate("url => { window.location.href = url; }", url)
        for page, recorder, tracer, raw in zip(pages, recorders, tracers, raws):
            try:
                if together:
                    page.wait_for_url(url, wait_until="load", timeout=timeout_s * 1000)
                else:
                    page.goto(url, wait_until="load", timeout=timeout_s * 1000)
                meanwhile()
                recorder.wait_idle(timeout=min(10.0, timeout_s))
                if tracer is not None:
                    tracer.stop()
                    tracer = None
                raw.page = json.loads(page.evaluate(PAGE_METRICS_JS))  # while the trace flushes
                if dictionaries:
                    raw.error = recorder.wait_dictionaries(timeout=timeout_s)  # as long as a load: a dictionary is a file
            except Exception as error:  # noqa: BLE001 - any navigation failure is recorded, not raised
                raw.error = str(error).splitlines()[0]
                if isinstance(error, PlaywrightError):
                    page.evaluate("1")  # raises if the browser went away: the Driver's "lost" load
            if tracer is not None:  # not stopped: the load failed before
                tracer.stop()
        for found in tracers:
            if found is not None:
                found.wait()
        if click is not None:
            for page, raw in zip(pages, raws):
                if raw.error is None:
                    interact(page, raw, click)
    finally:
        for session in sessions:
            _quietly(session.detach)  # or it collects the next load's events
    return raws


def interact(page: Page, raw: RawLoad, click: str) -> None:
    """Click `click` as a person would (real input events) once the load is measured, then
    keep the interaction's Event Timing entries (`raw.page["interactions"]`, INP's); a
    selector that matches nothing is the load's error."""
    try:
        page.click(click, timeout=CLICK_TIMEOUT_S * 1000)
    except PlaywrightError as error:
        raw.error = f"interaction: cannot click {click!r}: {_first_line(error)}"
        return
    deadline = time.monotonic() + INTERACTION_WAIT_S
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        found = page.evaluate("() => (window.__pagebench_inputs || []).slice()")
        if any(entry["name"] in ("pointerup", "click") for entry in found):
            break
        page.wait_for_timeout(50)
    raw.page["interactions"] = found


def _lost(url: str, started: float, error: BaseException) -> RawLoad:
    return RawLoad(url=url, started_at=started,
                   error=f"the browser was lost during the load ({_first_line(error)}); the next load relaunches it")


def _quietly(close: Any) -> None:
    """Close what a dead browser may already have taken with it."""
    try:
        close()
    except PlaywrightError:
        pass


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class Driver:
    """Chromium instances for one run: a long-lived browser per Setup for cold loads,
    relaunched persistent profiles for warm ones."""

    def __init__(self, playwright: Playwright, workdir: Path, namespace: str | None,
                 deterministic: int | None = None, trace: bool = False, frames: bool = True,
                 click: str | None = None) -> None:
        """`deterministic`: the seed of a deterministic run (`deterministic_script`): every
        context its loads use, cold, warm or priming, runs that script in every page.
        `trace`: every measured load records a full Chrome trace (`RawLoad.trace`), else
        its frames only (`frames`: none, then no trace at all). `click`: the spec's
        interaction, clicked after every measured load (`interact`)."""
        self.pw = playwright
        self.trace, self.frames, self.click = trace, frames, click
        self.workdir = workdir
        self.wrapper = write_wrapper(workdir / "chromium-in-netns", namespace, workdir / "home")
        self._browsers: dict[Setup, PWBrowser] = {}
        self.init_script = deterministic_script(deterministic) if deterministic is not None else None

    def _prepared(self, context: BrowserContext) -> BrowserContext:
        """A new context as this run's loads need it: observing layout shifts and long
        tasks, and with the deterministic script when asked for, ahead of every script of
        its pages (those open now on their next navigation, and every later one)."""
        context.add_init_script(OBSERVE_JS)
        if self.init_script is not None:
            context.add_init_script(self.init_script)
        return context

    def _launch_options(self, setup: Setup) -> dict[str, Any]:
        return dict(executable_path=str(self.wrapper), chromium_sandbox=True, headless=True,
                    args=setup.args())

    def _browsers_for(self, setup: Setup) -> PWBrowser:
        """The long-lived browser of a Setup; one that died (killed, crashed) is relaunched."""
        browser = self._browsers.get(setup)
        if browser is None or not browser.is_connected():
            browser = self._browsers[setup] = self.pw.chromium.launch(**self._launch_options(setup))
        return browser

    def cold(self, setup: Setup, url: str, timeout_s: float, clients: int = 1,
             emulation: Emulation = Emulation(), ready: Callable[[], None] = lambda: None,
             meanwhile: Callable[[], None] = lambda: None) -> list[RawLoad]:
        """One load per client, each in a fresh context of the `emulation`'s device; several
        clients load together; `ready` is done before the navigation, `meanwhile` after its
        `load` (`_measure`). A browser lost during the load (killed, crashed: Playwright
        tells it from any other failure only later) makes it a failed load, recorded and
        counted as such; the next load launches a new browser."""
        browser = self._browsers_for(setup)
        started = time.time()
        contexts: list[BrowserContext] = []
        try:
            for k in range(clients):
                contexts.append(browser.new_context(**setup.context_options(k), **emulation.context_options()))
                self._prepared(contexts[-1])
            pages = [context.new_page() for context in contexts]
            for context, page in zip(contexts, pages):
                emulation.throttle(context, page)  # its session lasts as long as the context
            return _measure(pages, contexts, url, timeout_s, trace=self.trace, frames=self.frames, click=self.click,
                            ready=ready, meanwhile=meanwhile)
        except PlaywrightError as error:
            self._browsers.pop(setup, None)
            _quietly(browser.close)
            return [_lost(url, started, error) for _ in range(clients)]
        finally:
            for context in contexts:
                _quietly(context.close)

    def _profile(self, name: str) -> Path:
        return self.workdir / "profiles" / name

    def prime(self, setup: Setup, profile: str, url: str, timeout_s: float, dictionaries: bool = False,
              emulation: Emulation = Emulation()) -> RawLoad:
        """A fresh persistent profile, loaded once (as the `emulation`'s device, as its
        warm loads will be) so its disk cache holds the page; with `dictionaries`, also the
        compression dictionaries the page announces (fetched after `load`: the load's
        `error` says if they did not all come)."""
        path = self._profile(profile)
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return self.warm(setup, profile, url, timeout_s, dictionaries=dictionaries, measured=False,
                         emulation=emulation)

    def warm(self, setup: Setup, profile: str, url: str, timeout_s: float, dictionaries: bool = False,
             measured: bool = True, emulation: Emulation = Emulation(),
             ready: Callable[[], None] = lambda: None, meanwhile: Callable[[], None] = lambda: None) -> RawLoad:
        context = self.pw.chromium.launch_persistent_context(str(self._profile(profile)),
                                                            **self._launch_options(setup),
                                                            **emulation.context_options())
        started = time.time()
        try:
            self._prepared(context)
            page = context.pages[0] if context.pages else context.new_page()
            emulation.throttle(context, page)  # its session lasts as long as the context
            return _measure([page], [context], url, timeout_s, dictionaries, trace=self.trace and measured,
                            frames=self.frames and measured, click=self.click if measured else None, ready=ready,
                            meanwhile=meanwhile)[0]
        except PlaywrightError as error:
            return _lost(url, started, error)
        finally:
            _quietly(context.close)

    def cpu_benchmark(self, setup: Setup) -> AbstractContextManager[CpuBenchmark]:
        """The CPU benchmark (`lab.emulation`) in a browser of its own, launched as the
        loads' are (`setup`'s namespace, user and flags), closed when done."""
        return benchmarking(self.pw.chromium.launch(**self._launch_options(setup)))

    def close(self) -> None:
        for browser in self._browsers.values():
            try:
                browser.close()
            except Exception:  # noqa: BLE001 - the browser may already be gone with the namespace
                pass
        self._browsers.clear()
