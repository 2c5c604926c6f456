"""Record a live page into a site directory: one cold load in Chromium through mitmproxy,
its HAR imported as `pagebench site import-har` imports one (`core.har`, `lab.imported`).

    Chromium (fresh profile) --HTTP proxy on loopback--> mitmdump --TLS, verified--> the site

Chromium runs as the lab runs it (as nobody, its sandbox on) when we are root, else as we
are: recording needs no root.

Trust is the lab's, for this recording only: mitmproxy signs every leaf certificate with
its CA's own key, so Chromium trusts it by that key's SPKI
(`--ignore-certificate-errors-spki-list`), one decision for one key, as the lab's `Setup`
trusts its single leaf key. Certificate errors are never ignored wholesale (Chromium would
skip its HTTP cache). Each recording has a private mitmproxy confdir in a temporary
directory (a fresh CA, deleted afterwards; the user's ~/.mitmproxy is never touched).
mitmproxy verifies the real site against the system's CAs, plus `extra_ca` when given;
`resolve` sends chosen hostnames to chosen addresses (a staging server under its public
name, or the tests' stand-in internet) while SNI and the certificate check keep the name.

The load waits for `load`, then for the network to go quiet (Playwright's `networkidle`:
500 ms without a request), within the timeout, so script-discovered late requests are in.
mitmdump is a child stopped on every way out (Ctrl-C too); it writes the HAR (savehar's
entries, every body base64: `addon.RecordAddon`) when it stops (`mitmdump.Mitmdump`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pagebench.core.har.importer import ImportedSite, check_name, import_har
from pagebench.core.har.parse import parse_har
from pagebench.core.sites.model import Site
from pagebench.lab.browser import CHROMIUM, Setup, write_wrapper
from pagebench.lab.imported import check_destination, write_imported
from pagebench.lab.record.mitmdump import Mitmdump, RecordError

DEFAULT_TIMEOUT_S = 30.0
#: Chromium makes no lookup of its own: every name goes through the proxy (which resolves it).
NO_DIRECT_LOOKUPS = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
#: Loopback URLs too go through the proxy (Chromium bypasses it for them by default).
PROXY_EVERYTHING = "--proxy-bypass-list=<-loopback>"

Step = Callable[[str], None]


def _quiet(_text: str) -> None:
    pass


# Values ---------------------------------------------------------------------------------


def check_url(url: str) -> str:
    """An http(s) URL with a host, or a one-line RecordError."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RecordError(f"{url!r}: must be an http:// or https:// URL with a host")
    return url


def parse_resolve(items: Iterable[str]) -> dict[str, str]:
    """`HOST=ADDRESS` items (as curl's --resolve, without the port) -> {host: address}."""
    mapping: dict[str, str] = {}
    for item in items:
        host, sep, address = item.partition("=")
        try:
            if not sep:
                raise ValueError
            ip = str(ipaddress.ip_address(address.strip().strip("[]")))
        except ValueError:
            raise RecordError(f"--resolve {item!r}: must be HOST=IP, e.g. www.example.com=192.0.2.10") from None
        name = host.strip().lower().rstrip(".")
        if not name or any(ch in name for ch in "/:@ "):
            raise RecordError(f"--resolve {item!r}: {host!r} is not a hostname")
        mapping[name] = ip
    return mapping


def ordered_har(har: dict[str, Any], initiators: Mapping[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The HAR with its entries in request order (mitmproxy appends them as responses end),
    CONNECT tunnels left out, and what Chromium knew of each request that a proxy cannot
    see (`_initiator`, `_resourceType`, as a DevTools HAR has them) added by URL."""
    entries = [dict(e) for e in har.get("log", {}).get("entries", [])
               if e.get("request", {}).get("method") != "CONNECT"]
    entries.sort(key=lambda e: _started(e.get("startedDateTime", "")))
    for entry in entries:
        seen = (initiators or {}).get(entry["request"].get("url", ""))
        if seen:
            entry.setdefault("_initiator", seen["initiator"])
            entry.setdefault("_resourceType", seen["type"])
    return dict(har, log=dict(har.get("log", {}), entries=entries))


def _started(text: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return 0.0


# The load -------------------------------------------------------------------------------


def _reason(url: str, proxy: Mitmdump, browser_error: str) -> str:
    """Why the page did not answer: mitmproxy's upstream error for its host (else for any host:
    before the document answered, every request was the navigation's, redirects included),
    else Chromium's."""
    host = (urlsplit(url).hostname or "").lower()
    failures = [(str(f.get("host", "")).lower(), str(f.get("error", ""))) for f in proxy.failures()]
    mine = [error for name, error in failures if name == host] or [error for _, error in failures]
    return plain(mine[-1]) if mine else browser_error


def plain(error: str) -> str:
    """An OS error said plainly first: `[Errno 111] Connect call failed (...)` becomes
    `connection refused ([Errno 111] Connect call failed (...))`."""
    match = re.match(r"\[Errno (\d+)\]", error)
    return f"{os.strerror(int(match.group(1))).lower()} ({error})" if match else error


def load_through(proxy: Mitmdump, url: str, workdir: Path, timeout_s: float,
                 step: Step) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """One cold load of `url` in a fresh Chromium profile through `proxy`: `load`, then the
    network quiet, within `timeout_s`. Returns what Chromium knew of each URL it requested
    (initiator, resource type) and notes on the load. A page whose document got no answer
    is a RecordError."""
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    setup = Setup(resolver_rules=NO_DIRECT_LOOKUPS, spki_list=proxy.spki(), proxies=(proxy.server,),
                  extra_args=(PROXY_EVERYTHING,))
    if os.geteuid() == 0:  # as the lab runs it: as nobody, its sandbox on
        executable = write_wrapper(workdir / "chromium", None, workdir / "home")
    else:
        executable = Path(CHROMIUM)
    seen: dict[str, dict[str, Any]] = {}
    answered: list[int] = []
    notes: list[str] = []

    def sent(event: dict[str, Any]) -> None:
        seen.setdefault(event["request"]["url"], {"initiator": event.get("initiator") or {},
                                                  "type": str(event.get("type", "")).lower()})
        step(f"loading {url}: {len(seen)} requests")

    def responded(event: dict[str, Any]) -> None:
        if event.get("type") == "Document" and event.get("requestId") == event.get("loaderId"):
            answered.append(int(event["response"].get("status", 0)))  # the navigation's

    step("starting Chromium")
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=str(executable), chromium_sandbox=True, headless=True,
                                         args=setup.args())
        except PlaywrightError as error:
            raise RecordError(f"Chromium did not start: {_first_line(error)}") from None
        try:
            page = browser.new_context(**setup.context_options(0)).new_page()
            session = page.context.new_cdp_session(page)
            session.on("Network.requestWillBeSent", sent)
            session.on("Network.responseReceived", responded)
            session.send("Network.enable")
            deadline = time.monotonic() + timeout_s
            step(f"loading {url}")
            try:
                page.goto(url, wait_until="load", timeout=timeout_s * 1000)
            except PlaywrightError as error:
                if not answered:
                    raise RecordError(f"{url} did not answer: {_reason(url, proxy, _first_line(error))}") from None
                notes.append(f"the page did not reach `load` within {timeout_s:g} s ({_first_line(error)}): "
                             "what came until then is recorded")
            remaining = deadline - time.monotonic()
            if remaining > 0:
                step(f"loading {url}: {len(seen)} requests, waiting for the network to go quiet")
                try:
                    page.wait_for_load_state("networkidle", timeout=remaining * 1000)
                except PlaywrightError:
                    notes.append(f"the network was still busy {timeout_s:g} s after the start: what came until "
                                 "then is recorded")
            session.detach()
        except PlaywrightError as error:
            raise RecordError(f"Chromium failed during the load: {_first_line(error)}") from None
        finally:
            try:
                browser.close()
            except PlaywrightError:
                pass
    return seen, notes


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def record_har(url: str, workdir: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S,
               resolve: Mapping[str, str] | None = None, extra_ca: Path | None = None,
               step: Step = _quiet) -> tuple[dict[str, Any], list[str]]:
    """The HAR of one cold load of `url` (entries in request order) and notes on the load,
    made in `workdir` (which must be searchable by others: Chromium runs as nobody)."""
    check_url(url)
    step("starting mitmproxy")
    with Mitmdump(workdir / "proxy", resolve, extra_ca) as proxy:
        seen, notes = load_through(proxy, url, workdir, timeout_s, step)
        step("writing the HAR")
        har = ordered_har(proxy.finish(), seen)
        entries = har["log"]["entries"]
        document = next((u for u, known in seen.items() if known["type"] == "document"), url)
        first = next((e for e in entries if e["request"].get("url") == document), entries[0] if entries else None)
        if first is None or not first.get("response", {}).get("status"):
            # Chromium had an answer, but mitmproxy made it (an error page): the site gave none.
            error = first["response"].get("_error") if first is not None else None
            why = plain(error) if error else _reason(url, proxy, "no response")
            raise RecordError(f"{url} did not answer: {why}")
    return har, notes


@dataclass(frozen=True)
class Recorded:
    """What `record_site` made: the site as written, the import's account of it (counts,
    warnings) and notes on the load."""

    site: Site
    imported: ImportedSite
    notes: tuple[str, ...] = ()


def record_site(url: str, name: str, into: Path, *, replace: bool = False,
                timeout_s: float = DEFAULT_TIMEOUT_S, resolve: Mapping[str, str] | None = None,
                extra_ca: Path | None = None, step: Step = _quiet) -> Recorded:
    """Record `url` and write it as the site `name` in `into`, as `site import-har` writes
    an imported site (`replace`: over another site directory). Nothing is written when the
    recording fails; a HarError or SiteError when the page cannot be a site there."""
    check_url(url)
    check_name(name)  # before the load: a name or place that cannot be written costs nothing
    check_destination(Path(into), name, replace)
    workdir = Path(tempfile.mkdtemp(prefix="pagebench-record-"))
    try:
        workdir.chmod(0o755)  # Chromium, as nobody, reaches its HOME and profile below it
        har, notes = record_har(url, workdir, timeout_s=timeout_s, resolve=resolve, extra_ca=extra_ca, step=step)
        step("importing")
        imported = import_har(parse_har(json.dumps(har), url), name, url)
        step(f"writing {into}")
        return Recorded(write_imported(imported, into, replace=replace), imported, tuple(notes))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
