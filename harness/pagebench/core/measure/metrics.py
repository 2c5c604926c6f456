"""Raw browser record + link counters + server log -> one verified LoadResult.

Pure. Every load is checked against what its condition promises (cache state, protocol,
connection counts); a load that breaks a promise is flagged with the reason, never
silently kept or dropped.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

from pagebench.core import encodings
from pagebench.core.har.mime import extension
from pagebench.core.measure import visual
from pagebench.core.modes import Mode
from pagebench.core.sites.recording import UNRECORDED_HEADER, UNRECORDED_VALUE, Recording
from pagebench.core.records import Condition, LoadResult, RawLoad, Resource

#: The status of a response the browser had cached and the server confirmed unchanged.
#: Chromium reports the cached 200 for it (CDP and Resource Timing), so the server's log
#: says which requests were revalidated.
NOT_MODIFIED = 304
#: Chromium's resource types of requests a script makes itself (its own cache mode).
SCRIPT_REQUESTS = frozenset({"fetch", "xhr"})
#: How many of a load's unrecorded URLs its flag names (the store keeps the count).
UNRECORDED_SHOWN = 5


@dataclass(frozen=True)
class LinkView:
    """What the router counted during the load (`link.counters.LinkCounters`, as values)."""

    tcp_conns: int  # new TCP connections client -> server
    udp_flows: int  # new UDP flows client -> server (QUIC connections)
    counters: dict[str, Any]  # every counter, stored with the load


@dataclass(frozen=True)
class ServerView:
    """What the origin servers logged during the load."""

    connections: int  # distinct (server address, connection serial)
    requests: int
    document_statuses: tuple[int, ...]  # status of each request for the page itself
    not_modified: frozenset[str] = frozenset()  # "host/path?query" answered 304 (revalidated)
    tls: frozenset[str] = frozenset()  # TLS versions logged ("1.3", "none" for cleartext)


@dataclass(frozen=True)
class ProxyView:
    """What the edge proxy sent across the link during the load (proxy topology)."""

    connections: int  # upstream connections opened, all clients together
    requests: int  # upstream requests, all clients together
    exchanges: tuple[dict[str, Any], ...]  # this client's: host, path, protocol, connection, ...
    reused: int = 0  # upstream connections a warm pool opened before the load that carried its requests


def _host_path(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}{parts.path or '/'}" + (f"?{parts.query}" if parts.query else "")


def _file_key(url: str) -> str:
    """"host/path" of the file a URL serves (a directory's index.html), as the site's
    manifest names its changed files."""
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.hostname}{path}" + ("index.html" if path.endswith("/") else "")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _match_timing(page: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    by_url: dict[str, list[dict[str, Any]]] = {}
    for entry in page.get("resources", []):
        by_url.setdefault(entry["name"], []).append(entry)
    return by_url


def network_entries(raw: RawLoad) -> list[dict[str, Any]]:
    """The load's http(s) requests in request order: `resources` makes one Resource of each."""
    entries = [e for e in raw.requests.values() if str(e.get("url", "")).startswith(("http://", "https://"))]
    entries.sort(key=lambda e: e.get("sent", 0.0))
    return entries


def _response_header(entry: dict[str, Any], name: str) -> str | None:
    """A response header (`name` in lower case) as the browser reported it, whatever the
    case the server gave it (HTTP/1.1 keeps it); else as received on the wire."""
    for key in ("response_headers", "wire_headers"):
        found = next((str(v) for k, v in (entry.get(key) or {}).items() if k.lower() == name), None)
        if found is not None:
            return found
    return None


def _unrecorded(entry: dict[str, Any]) -> bool:
    """The replay answered this request with its "not in the recording" 404."""
    value = _response_header(entry, UNRECORDED_HEADER.lower())
    return value is not None and value.strip().lower() == UNRECORDED_VALUE


def _recorded(recording: Recording | None, query: str, resource: Resource) -> bool:
    """Whether the recording answers this request with the status it got."""
    parts = urlsplit(resource.url)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    exchange = recording.lookup(parts.hostname or "", target, query) if recording is not None else None
    return exchange is not None and exchange.status == resource.status


def _replayed_text(entry: dict[str, Any]) -> bool:
    """Whether a replayed response is text (sent in the condition's encoding): its body's
    file got its extension from the recorded Content-Type (`har.mime.extension`), and the
    servers encode by that extension; its URL need not have one."""
    name = "body." + extension(_response_header(entry, "content-type") or "", str(entry.get("type", "")).lower())
    return encodings.is_text(name)


def resources(raw: RawLoad) -> list[Resource]:
    """Network requests of the load (http/https only), in request order."""
    timing = _match_timing(raw.page)
    nav = raw.page.get("nav", {})
    entries = network_entries(raw)
    doc_sent = entries[0].get("sent", 0.0) if entries else 0.0
    result = []
    for index, e in enumerate(entries):
        from_cache = bool(e.get("from_disk_cache") or e.get("memory_cache") or e.get("from_prefetch"))
        rt = timing.get(e["url"], [])
        t = rt.pop(0) if rt else ({**nav, "name": e["url"]} if index == 0 and nav else {})
        protocol = t.get("nextHopProtocol") or e.get("protocol") or ""
        connection = e.get("connection_id")
        encoding = str(e.get("content_encoding") or "").strip().lower()
        encoded = t.get("encodedBodySize")
        result.append(Resource(
            url=e["url"],
            origin=_origin(e["url"]),
            protocol=protocol,
            connection_id=int(connection) if connection and not from_cache else None,
            from_cache=from_cache,
            status=int(e.get("status") or 0),
            resource_type=str(e.get("type", "")).lower(),
            start_ms=float(t.get("startTime", (e.get("sent", doc_sent) - doc_sent) * 1000)),
            response_start_ms=t.get("responseStart"),
            end_ms=t.get("responseEnd"),
            transfer_bytes=0 if from_cache else int(e.get("encoded_bytes") or 0),
            body_bytes=int(t.get("decodedBodySize") or 0),
            timing={k: v for k, v in (e.get("timing") or {}).items() if isinstance(v, (int, float))},
            encoded_bytes=None if from_cache or not isinstance(encoded, (int, float)) else int(encoded),
            content_encoding=encoding,
            dictionary_offered=bool(e.get("dictionary_offered")),
            dictionary_used=encoding == encodings.DCZ.token,
        ))
    return result


def _upstream(res: list[Resource], proxy: ProxyView) -> list[Resource]:
    """In the proxy topology a resource's protocol and connection are those of the hop
    across the link (the browser's own hop is loopback to the proxy)."""
    waiting: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for exchange in proxy.exchanges:
        waiting.setdefault((exchange["host"], exchange["path"]), []).append(exchange)
    result = []
    for r in res:
        parts = urlsplit(r.url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        found = waiting.get((parts.hostname or "", path or "/"), [])
        if r.from_cache or not found:
            result.append(replace(r, protocol="" if not r.from_cache else r.protocol, connection_id=None))
            continue
        exchange = found.pop(0)
        result.append(replace(r, protocol=exchange["protocol"], connection_id=exchange["connection"]))
    return result


def _explain_connections(browser: int, link: int, server: int) -> list[str]:
    notes = []
    if link > browser:
        notes.append(f"{link - browser} connection(s) opened (SYNs at the router) that carried no request "
                     "the browser reported: preconnected or speculative sockets")
    if link < browser:
        notes.append(f"the router saw {link} new connection(s) for {browser} in the browser: "
                     "connections reused from before the load")
    if server < link:
        notes.append(f"{link - server} connection(s) reached the server without completing a request "
                     "(nginx logs a connection only with a request)")
    return notes


def evaluate(
    condition: Condition, raw: RawLoad, link: LinkView, server: ServerView, proxy: ProxyView | None = None,
    *, expect_delta: frozenset[str] = frozenset(), versioned: bool = False,
    recording: Recording | None = None, query: str = "exact", app: bool = False,
) -> LoadResult:
    """The load's metrics, checked against what its condition promises (flags) and with
    the differences between the three connection counts explained (notes).
    `expect_delta`: "host/path" of the files that changed since the version a warm
    profile was primed with; they must come over the network (and in a dictionary
    encoding, as deltas), not as 304s or from the cache. `versioned`: the site has versions,
    so its text files are sent `no-cache` and a warm load revalidates them (a 304 is the
    cache at work, not a miss). `recording`: the site is replayed from it (`Site.recording`,
    looked up as its servers do, by `query`), so an HTTP error status the recording has
    for that request is what the page got when recorded, not a failure of the lab (any
    other, e.g. the edge proxy's 502, is an error);
    a request the recording lacks (the replay's 404 carrying `UNRECORDED_HEADER`) is
    counted (`LoadResult.unrecorded`) and flags the load, and only the entry document's
    fails it; a warm load caches what the recording's headers say, so the lab's own
    warm-cache checks do not apply. `app`: the site is the user's own server process, whose
    caching and compression are its own: neither the lab's warm-cache nor its encoding
    promises apply (an HTTP error still fails the load)."""
    mode = condition.mode
    replayed = recording is not None
    res = [replace(r, revalidated=_host_path(r.url) in server.not_modified) for r in resources(raw)]
    entries = network_entries(raw)  # res[i] is entries[i]
    unrecorded = [r.url for r, entry in zip(res, entries) if _unrecorded(entry)] if replayed else []
    nav = raw.page.get("nav", {})
    paints = raw.page.get("paints", {})
    network = [r for r in res if not r.from_cache]
    connections_browser = len({r.connection_id for r in network if r.connection_id is not None})
    if proxy is not None:
        res = _upstream(res, proxy)
        network = [r for r in res if not r.from_cache]
    connections_link = link.udp_flows if mode.quic else link.tcp_conns
    errors = [raw.error] if raw.error else []
    errors += [f"{r.url}: HTTP {r.status}" for r in network
               if r.status >= 400 and not (replayed and (r.url in unrecorded or _recorded(recording, query, r)))]
    if replayed and res and _unrecorded(entries[0]):
        errors.append(f"{res[0].url}: HTTP {res[0].status}: the page itself is not in the recording")
    flags = [f"error: {e}" for e in errors]
    if unrecorded:
        more = len(unrecorded) - UNRECORDED_SHOWN
        flags.append(f"{len(unrecorded)} request(s) not in the recording: {', '.join(unrecorded[:UNRECORDED_SHOWN])}"
                     + (f" (and {more} more)" if more > 0 else ""))
    cache_hits = sum(1 for r in res if r.from_cache)

    document, subresources = (res[0], res[1:]) if res else (None, [])
    # A page that names a URL twice gets the second from the memory cache the first filled
    # (real pages do: a news page's HAR repeats 30 of its 199 URLs): not a warm cache.
    fetched = {r.url for r in network}
    cold_hits = sum(1 for r in res if r.from_cache and r.url not in fetched)
    if condition.cache == "cold" and cold_hits:
        flags.append(f"cold load had {cold_hits} cache hit(s)")
    if condition.cache == "warm" and document is not None and not replayed and not app:
        # The lab's own caching promises (a replayed page caches as its recording says).
        # Versioned sites send text `no-cache` (revalidated on every warm load: a 304 is the
        # cache at work); a changed file must come anew. A request that got no response (a
        # host the lab does not serve) has nothing to cache, and a script's fetch()/XHR is
        # cached as the script asks (a folder site's own code), so neither is a miss.
        missed = [r.url for r in subresources if not r.from_cache and _file_key(r.url) not in expect_delta
                  and r.status != 0 and r.resource_type not in SCRIPT_REQUESTS
                  and not (versioned and r.revalidated and encodings.is_text(_file_key(r.url)))]
        if missed:
            flags.append(f"warm load fetched {len(missed)} cacheable subresource(s) from the network, "
                         f"e.g. {missed[0]}")
        if NOT_MODIFIED not in server.document_statuses and _file_key(document.url) not in expect_delta:
            flags.append("warm load did not revalidate the HTML (no 304 at the server)")
        flags += _check_delta(condition, res, expect_delta)
    expected = mode.upstream_protocol if proxy is not None else mode.browser_protocol
    wrong = [r for r in network if expected and r.protocol and r.protocol != expected]
    if wrong:
        flags.append(f"{len(wrong)} resource(s) used {wrong[0].protocol} instead of {expected}")
    text = ([_replayed_text(entry) for entry in entries] if replayed
            else [encodings.is_text(_file_key(r.url)) for r in res])
    if not app:
        flags += _check_encoding(condition, res, text)
    if server.tls - {condition.tls}:
        flags.append(f"the servers logged TLS {', '.join(sorted(server.tls))} for a tls {condition.tls} load")
    if proxy is not None:
        flags += _check_upstream(mode, proxy, link, server)
    elif mode.connection_per_request and len(answered := [r for r in network if r.status and r.connection_id is not None]
                                             ) != connections_browser:
        # a request without response (a host the lab does not serve) had no connection, and
        # one whose connection the browser did not report (a cross-origin frame's) is not counted
        flags.append(f"{mode.name} load used {connections_browser} connection(s) for {len(answered)} request(s)")

    fcp_ms = paints.get("first-contentful-paint")
    seen = visual.visual(visual.frames_of(raw.trace["traceEvents"]) if raw.trace else [], raw.page, fcp_ms)
    return LoadResult(
        ok=not errors,
        url=raw.url,
        ttfb_ms=nav.get("responseStart"),
        dcl_ms=nav.get("domContentLoadedEventStart"),
        load_ms=nav.get("loadEventStart"),
        fcp_ms=fcp_ms,
        lcp_ms=raw.page.get("lcp"),
        **seen.metrics(),
        visual_progress=seen.progress,
        requests=len(res),
        bytes=sum(r.transfer_bytes for r in res),
        cache_hits=cache_hits,
        connections_browser=connections_browser,
        connections_link=connections_link,
        connections_server=server.connections,
        flagged=bool(flags),
        flags=tuple(flags),
        errors=tuple(errors),
        link=link.counters,
        resources=tuple(res),
        notes=() if proxy is not None else tuple(
            _explain_connections(connections_browser, connections_link, server.connections)),
        connections_proxy=proxy.connections if proxy is not None else None,
        connections_proxy_reused=proxy.reused if proxy is not None else None,
        unrecorded=tuple(unrecorded) if replayed else None,
    )


def _check_upstream(mode: Mode, proxy: ProxyView, link: LinkView, server: ServerView) -> list[str]:
    """The proxy opens a connection only for a request, so the three upstream counts agree:
    the router sees the SYNs of those it opened; nginx logs those and the reused ones of a
    warm pool (opened by an earlier load, no SYN in this one)."""
    flags = []
    if not proxy.connections == link.tcp_conns == server.connections - proxy.reused:
        reused = f" (+{proxy.reused} reused from the warm pool)" if proxy.reused else ""
        flags.append(f"upstream connections disagree: proxy {proxy.connections}{reused}, router {link.tcp_conns}, "
                     f"nginx {server.connections}")
    if mode.connection_per_request and proxy.connections != proxy.requests:
        flags.append(f"{mode.name} through the proxy used {proxy.connections} connection(s) for "
                     f"{proxy.requests} request(s)")
    return flags


def _check_encoding(condition: Condition, res: list[Resource], text: list[bool]) -> list[str]:
    """Every text file the server sent (a 200 over the network) carries the condition's
    Content-Encoding (dcz: or its fallback, where no dictionary was offered); images and
    fonts are sent as stored, without one. `text[i]`: whether res[i] is text."""
    allowed = condition.encoding.answers
    sent = [(r, t) for r, t in zip(res, text) if not r.from_cache and not r.revalidated and r.status == 200]
    flags = []
    wrong = [r for r, t in sent if t and r.content_encoding not in allowed]
    if wrong:
        want = " or ".join(token or "none" for token in allowed)
        flags.append(f"{len(wrong)} text resource(s) arrived with Content-Encoding "
                     f"{wrong[0].content_encoding or 'none'} instead of {want} (encoding {condition.encoding}), "
                     f"e.g. {wrong[0].url}")
    encoded = [r for r, t in sent if r.content_encoding and not t]
    if encoded:
        flags.append(f"{len(encoded)} image/font resource(s) arrived with Content-Encoding "
                     f"{encoded[0].content_encoding} (they are sent as stored), e.g. {encoded[0].url}")
    return flags


def _check_delta(condition: Condition, res: list[Resource], expect_delta: frozenset[str]) -> list[str]:
    """A warm load of a later version: each changed file came anew (not a 304, not the
    cached copy) and, in a dictionary encoding, as a delta; if not, why not."""
    first: dict[str, Resource] = {}
    for r in res:
        first.setdefault(_file_key(r.url), r)
    delta = condition.encoding.dictionary
    flags = []
    for key in sorted(expect_delta):
        r = first.get(key)
        changed = f"{key} changed in version {condition.version}"
        if r is None or r.status >= 400:
            continue  # not requested (nothing measured), or an error (flagged as one)
        if r.revalidated:
            flags.append(f"{changed} but the server answered 304: the browser kept the old one")
        elif r.from_cache:
            flags.append(f"{changed} but was served from the cache without asking the server")
        elif delta and r.status == 200 and not r.dictionary_used:
            why = (f"dictionary offered, answered {r.content_encoding or encodings.IDENTITY.name}" if r.dictionary_offered
                   else "no dictionary offered")
            flags.append(f"{changed} and arrived whole, not as a delta: {why}")
    return flags
