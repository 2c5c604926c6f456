"""A HAR's page as a site of the lab (`pagebench site import-har`, and what
`pagebench site record` records): a parsed HAR (`parse.py`) in, an `ImportedSite` out:
a manifest, a `Recording` (`core/sites/recording.py`) and the bodies, laid out as
`lab.imported.write_imported` writes them:

    site.yaml, recording.json, <lab host>/_replay/0001.css, ...

The import picks the page's requests (`pages.py`; the entry document is the first
request whose redirects end at HTML), maps their hosts into the lab and rewrites the
bodies (`rewrite.py`), keeps the headers that change how a page loads (`headers.py`) and
gives each request its dependency level (`levels.py`). Requests that cannot be replayed
are listed (`Recording.missing`) and 404 in the lab: failed when recorded, not GET,
partial (206) responses; 304 revalidations too, but for a synthesized stand-in: a page
whose bodies were not all saved (a HAR without any body, or with 304s of a warm capture)
gets the bodies it lacks made (`synth.py`), its 304s standing in as their 200s. Requests
left out of the recording are counted by why (`ImportedSite.left_out`): other pages',
URLs no server is asked for (data:, blob:, ws:, ...), an http:// request redirected to
its https:// self, and repeats of a URL (a replay answers a URL one way: its first
replayable response). A HAR whose document is empty makes no site (a one-line HarError).
What the import changed is counted in the result, for the CLI to say.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from pydantic import ValidationError

from pagebench.core.har.fidelity import Fidelity, fidelity
from pagebench.core.har.headers import clean, content_type, replayed_headers
from pagebench.core.har.levels import dependency_levels, entry_chain
from pagebench.core.har.mime import extension
from pagebench.core.har.pages import choose_page, page_line
from pagebench.core.har.parse import HarEntry, HarError, HarLog
from pagebench.core.har.rewrite import map_hosts, rewrite_body
from pagebench.core.har.synth import Synthesis, synthesize
from pagebench.core.har.think import LONG_THINK_MS, think_times
from pagebench.core.sites.builtin import builtin_sites
from pagebench.core.sites.model import SITE_NAME, SiteManifest, one_line
from pagebench.core.sites.recording import BODIES_DIR, RECORDING_FILE, REDIRECTS, Exchange, Recording, host_key


@dataclass(frozen=True)
class ImportedSite:
    """A HAR's page as a site directory's contents, and what the import changed."""

    manifest: SiteManifest  # recording: RECORDING_FILE
    recording: Recording
    files: Mapping[str, bytes] = field(repr=False)  # "<lab host>/_replay/0001.css" -> body
    integrity_removed: int = 0  # SRI attributes taken out of HTML
    dropped_headers: Mapping[str, int] = field(default_factory=dict)  # lower-case name -> responses
    warnings: tuple[str, ...] = ()
    left_out: Mapping[str, int] = field(default_factory=dict)  # why -> requests not in the recording
    pages: tuple[str, ...] = ()  # every page of the HAR (`pages.page_line`), when it lists any
    page: int | None = None  # the page imported, as an index into `pages`
    fidelity: Fidelity | None = None  # a synthesized stand-in's report (`synth.py`)

    @property
    def total_bytes(self) -> int:
        return sum(len(body) for body in self.files.values())


def _reserved(name: str) -> bool:
    """Names that mean a built-in or generated site to `lab.sites.resolve`."""
    return name in builtin_sites() or name.startswith(("gen-", "seed000-", "seed001-"))


def check_name(name: str) -> None:
    """A name an imported or recorded site may take, or a one-line HarError (`site record`
    asks before it spends a load)."""
    if not SITE_NAME.match(name):
        raise HarError(f"name {name!r}: must be 1-80 lower-case letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit")
    if _reserved(name):
        raise HarError(f"name {name!r}: taken by a built-in or generated site; choose another")


def _why_missing(entry: HarEntry, stand_in: bool = False) -> str | None:
    """Why a request cannot be replayed (None: it can); in a stand-in page (`stand_in`) a
    body not saved is made, and a 304 stands in as its 200."""
    if entry.status == 0 or entry.error:
        return f"failed when recorded ({entry.error or 'no response'})"
    if entry.method != "GET":
        return f"a {entry.method}: only GET requests are replayed"
    if entry.status == 304:
        return None if stand_in else "revalidated when recorded, no body"
    if entry.status == 206:
        return "a partial (206) response: range requests are not replayed"
    if entry.status in REDIRECTS:
        return None if entry.location() else f"a {entry.status} without a Location"
    if entry.status not in (200, 203, 204) and not 400 <= entry.status <= 599:
        return f"status {entry.status} is not replayed"
    return None


#: Why requests no server is asked for are left out, by scheme (others: `_unfetched`).
_UNFETCHED = {
    "data": "data: URLs (inline data: no server is asked)",
    "blob": "blob: URLs (made by the page's scripts: no server is asked)",
    "ws": "WebSockets (ws:, wss:): not replayed; a script that opens one fails to connect in the lab",
    "": "URLs without a scheme (not absolute: no server to ask)",
}


def _unfetched(scheme: str) -> str:
    return _UNFETCHED.get("ws" if scheme == "wss" else scheme,
                          f"{scheme}: URLs (the browser's own or an extension's: no server is asked)")


def _ascii(text: str) -> str:
    """Non-ASCII, control characters and spaces percent-encoded (as a browser sends them)."""
    return "".join(c if "\x21" <= c <= "\x7e" else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace"))
                   for c in text)


def _target(url: str) -> str:
    """Path and query as sent: an empty query too (`/a?`: the browser sends the `?`)."""
    parts = urlsplit(url)
    empty = not parts.query and url.split("#", 1)[0].endswith("?")
    return _ascii((parts.path or "/") + (f"?{parts.query}" if parts.query or empty else ""))


def _needs_stand_in(entries: Iterable[HarEntry]) -> bool:
    """Whether a page lacks bodies it needs (not saved, or 304s of a warm capture)."""
    return any(e.method == "GET" and not e.error and (e.status == 304 or e.status in (200, 203) and e.body is None)
               for e in entries)


def import_har(har: HarLog, name: str, source: str, page: str | None = None,
               synthesize_all: bool = False, server_time: bool = True) -> ImportedSite:
    """The page `page` names (`pages.find_page`; None: `pages.default_page`) of a parsed
    HAR as a site called `name` (`source`: the HAR's name, recorded, and named in errors).
    Of requests for the same (lab host, target) the first that can be replayed is kept;
    the rest of `_why_missing`'s cases are listed as missing. A page whose bodies are not
    all saved (a HAR without bodies too) is a synthesized stand-in (`synth.py`): the
    bodies missing are made, the saved ones kept; `synthesize_all` makes every body.
    Each response keeps its server think time (`think.py`); `server_time` says whether
    the replay applies it."""
    check_name(name)
    choice = choose_page(har, source, page)
    chosen = list(choice.entries)
    warnings: list[str] = []
    left_out: Counter[str] = Counter(choice.left_out)
    for skipped in choice.skipped:
        left_out[_unfetched(skipped.scheme)] += 1

    def warn(text: str) -> None:
        if text not in warnings:
            warnings.append(text)

    chain = entry_chain(chosen, source)
    if chain[-1].body == b"":
        raise HarError(f"{source}: the page {chain[-1].url}: its document is empty (0 bytes) in the HAR: "
                       "there is no page to load")
    levels = dependency_levels(chosen, chain)
    mapping = map_hosts([e.url for e in chosen] + [loc for e in chosen if (loc := e.location())], source)
    hosts, rewrite = mapping.hosts, mapping.rewrite
    stand_in: Synthesis | None = None
    if synthesize_all or _needs_stand_in(chosen):
        stand_in = _stand_in(chosen, chain, mapping.unmappable, synthesize_all)
        levels = {**levels, **stand_in.levels}
        why = "--synthesize" if synthesize_all else "not saved in the HAR"
        warn(f"{len(stand_in.bodies)} of {len(stand_in.nodes)} request(s) have bodies made ({why}): a synthesized "
             "stand-in page (its fidelity report: pagebench site show)")
        for text in stand_in.warnings:
            warn(text)
        attached = sum(1 for e in chosen if e.attached and e.body is None)
        if attached:
            warn(f"{attached} body(ies) saved in separate files beside the HAR (Playwright's attach mode) were made "
                 "instead: record with the content embedded to replay them")

    think = think_times(chosen)
    missing: dict[tuple[str, str], str] = {}
    chosen_ex: dict[tuple[str, str], Exchange] = {}
    requested: dict[tuple[str, str], list[HarEntry]] = {}  # every request of a slot
    kept: dict[tuple[str, str], HarEntry] = {}  # the one replayed
    dropped: Counter[str] = Counter()
    files: dict[str, bytes] = {}
    stored: dict[tuple[str, bytes], str] = {}  # (host, sha256) -> file
    integrity = empty = upgrades = cut = 0
    for entry in chosen:
        key = host_key(entry.url)
        if key in mapping.unmappable:
            missing.setdefault(("", entry.url), f"{_ascii(entry.url)}: its host cannot be served in the lab "
                                                f"({mapping.unmappable[key]})")
            continue
        host, target = hosts[key], rewrite.text(_target(entry.url))
        slot = (host, target)
        requested.setdefault(slot, []).append(entry)
        if slot in chosen_ex:
            continue
        why = _why_missing(entry, stand_in is not None)
        if why is not None:
            missing.setdefault(slot, f"{_ascii(entry.url)}: {why}")
            continue
        if stand_in is not None and entry.index not in stand_in.levels:
            continue  # another request of its URL stands in
        status = 200 if stand_in is not None and entry.status == 304 else entry.status
        location = None
        if status in REDIRECTS:
            location = clean(rewrite.text(_ascii(entry.location() or "")))
            if not location:
                missing.setdefault(slot, f"{_ascii(entry.url)}: a {status} whose Location cannot be "
                                         "rendered")
                continue
            if location == f"https://{host}{target}":
                upgrades += 1  # http -> https of the same URL: the lab serves TLS already
                requested[slot].pop()
                continue
        ext = extension(entry.mime_type, entry.resource_type)
        file = None
        made = stand_in.bodies.get(entry.index) if stand_in is not None else None
        body = (entry.body if made is None else made) or b""
        if status in (200, 203) or (status >= 400 and body):
            empty += status in (200, 203) and not body
            cut += entry.cut and made is None
            body, removed, csp = rewrite_body(body, ext, rewrite)
            integrity += removed
            if csp:
                dropped["content-security-policy (meta)"] += csp
            digest = hashlib.sha256(body).digest()
            file = stored.get((host, digest))
            if file is None:
                file = f"{BODIES_DIR}/{len(stored) + 1:04d}.{ext}"
                stored[(host, digest)] = file
                files[f"{host}/{file}"] = body
        try:
            exchange = Exchange(host=host, target=target, status=status, file=file,
                                content_type=content_type(entry, warn) if file else None,
                                headers=replayed_headers(entry, rewrite, warn, dropped),
                                location=location, level=levels[entry.index], original=entry.url,
                                think_ms=think.get(entry.index))
        except ValidationError as error:
            raise HarError(str(one_line(f"{source}: log.entries[{entry.index}]", error))) from None
        chosen_ex[slot] = exchange
        kept[slot] = entry
        missing.pop(slot, None)

    if upgrades:
        left_out["http:// requests redirected to the same https:// URL (the lab serves every origin over TLS)"] \
            += upgrades
    repeats = [(slot, e) for slot, group in requested.items() for e in group[1:]]
    if repeats:
        other = sum(slot in kept and e is not kept[slot] and _differs(e, kept[slot]) for slot, e in repeats)
        left_out["repeats of a URL requested before (a replay answers a URL with one response, the first that "
                 f"can be replayed; {other} of them were recorded with another status or body)"] = len(repeats)
    if empty:
        warn(f"{empty} response(s) recorded with an empty body (0 bytes) are replayed empty")
    if cut:
        warn(f"{cut} response body(ies) saved shorter than their content.size (cut short by the tool that saved "
             "the HAR?) are replayed as saved")
    exchanges = tuple(chosen_ex.values())
    slow = sorted((e for e in exchanges if (e.think_ms or 0) >= LONG_THINK_MS), key=lambda e: -(e.think_ms or 0))
    if slow and server_time:
        warn(f"{len(slow)} response(s) thought {LONG_THINK_MS / 1000:.0f} s or more at the server (long polls?), "
             f"the longest {_ascii(slow[0].original)} {slow[0].think_ms or 0:,.0f} ms: replayed as late "
             "(--no-server-time drops every think time)")
    first = chain[0]
    entry_host = hosts[host_key(first.url)]
    origins = [entry_host] + [lab for lab in dict.fromkeys(hosts.values()) if lab != entry_host]
    try:
        shown = source if len(har.pages) < 2 or choice.page is None else _which(har, choice.page, source)
        recording = Recording(source=shown, hosts=hosts, exchanges=exchanges, missing=tuple(missing.values()),
                              server_time=server_time)
        manifest = SiteManifest(name=name, entry=f"https://{entry_host}{rewrite.text(_target(first.url))}",
                                origins=tuple(origins), recording=RECORDING_FILE)
    except ValidationError as error:
        raise HarError(str(one_line(source, error))) from None
    report = None
    if stand_in is not None:
        saved = {e.index: e.body for e in chosen if e.body is not None}
        report = fidelity(source, chosen, stand_in, saved)
    return ImportedSite(manifest, recording, files, integrity, dict(dropped.most_common()), tuple(warnings),
                        fidelity=report, left_out=dict(left_out),
                        pages=tuple(page_line(har, i) for i in range(len(har.pages))), page=choice.page)


def _stand_in(chosen: list[HarEntry], chain: list[HarEntry], unmappable: Mapping[str, str],
              synthesize_all: bool) -> Synthesis:
    """The synthesized stand-in of a page: of each URL the first request that can be
    replayed (once its body is made), its body made where not saved (every body with
    `synthesize_all`)."""
    replayed: dict[str, HarEntry] = {}
    for entry in chosen:
        if host_key(entry.url) not in unmappable and _why_missing(entry, stand_in=True) is None:
            first = replayed.setdefault(entry.url, entry)
            if first.body is None and entry.body is not None and entry.status == first.status:
                replayed[entry.url] = entry  # a saved body beats a made one
    return synthesize(sorted(replayed.values(), key=lambda e: (e.started, e.index)), chain,
                      lambda node: synthesize_all or node.entry.body is None or node.entry.status == 304)


def _which(har: HarLog, index: int, source: str) -> str:
    """The HAR and the page of it a site was made of, as `site show` says it."""
    page = har.pages[index]
    title = f' "{page.title[:100]}"' if page.title else ""
    return f"{source}, page {index + 1} of {len(har.pages)} ({page.id[:60]}{title})"


def _differs(entry: HarEntry, kept: HarEntry) -> bool:
    """Whether a repeated request was answered otherwise than the one replayed."""
    return entry.status != kept.status or (entry.body is not None and entry.body != kept.body)
