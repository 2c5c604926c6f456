"""The server plan of a run: every site under every mode and TLS version at once, each
(TLS version, mode, site, version, encoding, origin) on its own server address.

Pure: `plan` allocates addresses; `nginxconf` and `caddyconf` render the configuration
text of the two server programs, `lab.nginx` and `lab.caddy` run them.

Each (TLS version, mode, site, site version, encoding, origin) gets its own server IP on
port 443 (cleartext, `tls: none`: port 80; the browser speaks it directly for HTTP/1.x,
the edge proxy across the link for every strategy, h2 with prior knowledge), in that
nesting order (QUIC modes under TLS 1.3 only): index i is `Layout.server_addresses[i]`
(and `server_addresses6[i]`). Distinct IPs keep Chromium from pooling connections across
modes, TLS versions or origins (h2 coalescing needs a shared IP). The browser reaches a
condition through `ServerPlan.host_resolver_rules(mode, tls)` (name the site when two
sites of the plan share a hostname, as the seed000 family does; and the encoding and the
site version when the plan has several: a version is the same URLs on other addresses,
so a warm load of version 2 revalidates what version 1's load left in the cache). The
certificate (`certs.Leaf`) is only needed to render; `lab.nginx.NginxServer` issues it when the plan
has none. Every connection does a full handshake (no session cache, no tickets, no
early data). The modes a plan serves are the origin modes of `modes.MODES`: a mode
served by another's bindings (pipelining, by keep-alive's) is not planned itself.

An imported or recorded site (`Site.recording`) is replayed, not served by path: both
renderers answer each request from `Recording.lookup(host, target, plan.query)` (the
helpers at the end of this module), in identity, gzip, br or zstd and one version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core import encodings as encodings_table
from pagebench.core import modes as modes_table
from pagebench.core.certs import Leaf
from pagebench.core.errors import BAD_INPUT, PagebenchError
from pagebench.core.layout import MAX_SERVER_IPS, Layout
from pagebench.core.sites.recording import QUERY_MATCHING, UNRECORDED_HEADER, UNRECORDED_VALUE, Exchange
from pagebench.core.sites.model import Site

QUIC_PORT = 443
TLS_PORT = 443
CLEARTEXT_PORT = 80


# Addresses depend only on the index, not on the run's prefix.
_ADDRESSES = Layout("pbplan", server_ips=MAX_SERVER_IPS)
SERVER_ADDRESSES = _ADDRESSES.server_addresses
SERVER_ADDRESSES6 = _ADDRESSES.server_addresses6

HTML_CACHE_CONTROL = "no-cache"
STATIC_CACHE_CONTROL = "max-age=86400"
#: Sent with every response besides its Cache-Control (HTML or static, above): cross-origin
#: resource timing (else sizes and protocols read as 0 and ""), and CORS for fonts.
COMMON_HEADERS = (("Timing-Allow-Origin", "*"), ("Access-Control-Allow-Origin", "*"))
MIME_TYPES = (
    ("text/html", "html htm"), ("text/css", "css"), ("text/javascript", "js mjs"),
    ("application/json", "json"), ("text/plain", "txt"), ("image/png", "png"), ("image/jpeg", "jpg jpeg"),
    ("image/gif", "gif"), ("image/svg+xml", "svg"), ("image/webp", "webp"), ("image/avif", "avif"),
    ("image/x-icon", "ico"), ("font/woff", "woff"), ("font/woff2", "woff2"), ("font/ttf", "ttf"),
    ("font/otf", "otf"),
)


#: What a directory URL serves (nginx's default `index`, Caddy's `index_names`).
INDEX = "index.html"
#: Sent with a negotiated text response; a dcz one also varies with the dictionary offered.
VARY = "Accept-Encoding"
DCZ_VARY = "Accept-Encoding, Available-Dictionary"
#: A dictionary (`<path>.pbdict`) stays fresh for a day: Chromium registers none without freshness.
DICTIONARY_CACHE_CONTROL = "max-age=86400"
#: The characters a dictionary's `match` URL pattern would read as syntax, or its
#: structured-field string could not hold.
_PATTERN_SYNTAX = set('*?+:(){}\\"')


class PlanError(PagebenchError, ValueError):
    """One line: which mode, TLS version, site or host is at fault, and why."""

    exit_code = BAD_INPUT


@dataclass(frozen=True)
class Binding:
    """One nginx server block: a site's origin under one mode and TLS version, one version
    of its content and one content encoding."""

    tls: str
    mode: str
    site: str
    origin: str
    index: int  # into Layout.server_addresses / server_addresses6
    encoding: str = encodings_table.IDENTITY  # a name of `encodings.ENCODINGS`
    version: int = 1  # of the site's content (`Site.origin_root(origin, version)`)

    @property
    def server(self) -> str:
        """Which server program serves it: "nginx" or "caddy"."""
        return modes_table.get(self.mode).server

    @property
    def port(self) -> int:
        return CLEARTEXT_PORT if self.tls == modes_table.CLEARTEXT else TLS_PORT

    @property
    def ip(self) -> str:
        return SERVER_ADDRESSES[self.index]

    @property
    def ip6(self) -> str:
        return SERVER_ADDRESSES6[self.index]


@dataclass(frozen=True)
class ServerPlan:
    """Every binding of a run's sites, modes and TLS versions, and how the browser reaches them."""

    sites: tuple[Site, ...]
    modes: tuple[str, ...]
    tls_versions: tuple[str, ...]
    bindings: tuple[Binding, ...]
    leaf: Leaf | None = None  # the certificate; `servers` supplies it when the plan has none
    encodings: tuple[str, ...] = (encodings_table.IDENTITY,)
    #: How recorded sites match a request's query: "exact", or "loose" (`Recording.lookup`).
    query: str = "exact"

    @property
    def ip_count(self) -> int:
        """How many server IPs the topology needs: `Layout(prefix, server_ips=this)`."""
        return len(self.bindings)

    def served_by(self, server: str) -> tuple[Binding, ...]:
        """The bindings one program serves: "nginx" or "caddy"."""
        return tuple(b for b in self.bindings if b.server == server)

    @property
    def hostnames(self) -> tuple[str, ...]:
        """Every origin served (what the certificate must name)."""
        return tuple(sorted({b.origin for b in self.bindings}))

    def select(self, mode: str, tls: str, site: str | None = None, *, encoding: str = encodings_table.IDENTITY,
               version: int = 1) -> tuple[Binding, ...]:
        """The bindings of one condition (mode, TLS, optionally the site; the encoding and the
        site version), checked to be servable."""
        if mode not in self.modes:
            raise PlanError(f"mode {mode!r}: not in this plan (has {', '.join(self.modes)})")
        if tls not in self.tls_versions:
            raise PlanError(f"tls {tls!r}: not in this plan (has {', '.join(self.tls_versions)})")
        if tls not in modes_table.get(mode).tls_versions:
            raise PlanError(f"mode {mode} with tls {tls}: QUIC always uses TLS {modes_table.QUIC_TLS}")
        if site is not None and site not in {s.name for s in self.sites}:
            raise PlanError(f"site {site!r}: not in this plan (has {', '.join(s.name for s in self.sites)})")
        if encoding not in self.encodings:
            raise PlanError(f"encoding {encoding!r}: not in this plan (has {', '.join(self.encodings)})")
        versions = max((s.manifest.versions for s in self.sites if site in (None, s.name)), default=1)
        if not 1 <= version <= versions:
            raise PlanError(f"version {version}: not in this plan (site {site or 'any'} has versions 1..{versions})")
        chosen = tuple(b for b in self.bindings if b.mode == mode and b.tls == tls and site in (None, b.site)
                       and b.encoding == encoding and b.version == version)
        hosts = [b.origin for b in chosen]
        shared = sorted({host for host in hosts if hosts.count(host) > 1})
        if shared:
            owners = sorted({b.site for b in chosen if b.origin == shared[0]})
            raise PlanError(f"host {shared[0]} is served for several sites ({', '.join(owners)}): name the site")
        return chosen

    def addresses(self, mode: str, tls: str, site: str | None = None, *, encoding: str = encodings_table.IDENTITY,
                  version: int = 1) -> dict[str, str]:
        """host -> IPv4 address for one condition (e.g. for curl --resolve host:443:ip)."""
        return {b.origin: b.ip for b in self.select(mode, tls, site, encoding=encoding, version=version)}

    def address(self, mode: str, tls: str, host: str, site: str | None = None, *,
                encoding: str = encodings_table.IDENTITY, version: int = 1) -> Binding:
        """The binding serving `host` in one condition."""
        for binding in self.select(mode, tls, site, encoding=encoding, version=version):
            if binding.origin == host:
                return binding
        raise PlanError(f"host {host!r}: not served under mode {mode}, tls {tls}, encoding {encoding}, "
                        f"version {version}")

    def host_resolver_rules(self, mode: str, tls: str, site: str | None = None, block_others: bool = False, *,
                            encoding: str = encodings_table.IDENTITY, version: int = 1) -> str:
        """Chromium's --host-resolver-rules value: `MAP host ip, MAP host2 ip2`.
        `block_others` adds `MAP * ~NOTFOUND` so no other name is ever looked up."""
        rules = [f"MAP {b.origin} {b.ip}" for b in self.select(mode, tls, site, encoding=encoding, version=version)]
        return ", ".join(rules + (["MAP * ~NOTFOUND"] if block_others else []))

    def force_quic_on(self, mode: str, tls: str, site: str | None = None, *,
                      encoding: str = encodings_table.IDENTITY, version: int = 1) -> str:
        """Chromium's --origin-to-force-quic-on value for a QUIC mode's origins:
        `host:443,host2:443` (QUIC from the first request, no TCP and no Alt-Svc discovery)."""
        return ",".join(f"{b.origin}:{QUIC_PORT}"
                        for b in self.select(mode, tls, site, encoding=encoding, version=version))



def plan(sites: Sequence[Site], modes: Iterable[str], tls_versions: Iterable[str],
         leaf: Leaf | None = None, encodings: Iterable[str] = (encodings_table.IDENTITY,),
         query: str = "exact") -> ServerPlan:
    """Allocate one server IP per (TLS version, mode, site, site version, encoding, origin),
    in that order; QUIC cells exist for TLS 1.3 only (QUIC has no other). With one encoding
    and sites of one version, indices are what they were before either existed. `query`
    is how recorded sites match a request's query ("exact" or "loose")."""
    modes, tls_versions = tuple(dict.fromkeys(modes)), tuple(dict.fromkeys(tls_versions))
    encoding_names = tuple(dict.fromkeys(encodings))
    for encoding in encoding_names:
        if encoding not in encodings_table.BY_NAME:
            raise PlanError(f"encoding {encoding!r}: unknown; known are {', '.join(encodings_table.NAMES)}")
    served = [mode.name for mode in modes_table.MODES if mode.origin == mode.name]
    for mode in modes:
        if mode not in modes_table.BY_NAME:
            raise PlanError(f"mode {mode!r}: unknown; served are {', '.join(served)}")
        if mode not in served:
            raise PlanError(f"mode {mode}: not served in the direct topology: "
                            f"{modes_table.NOT_IN.get((mode, 'direct'), 'served by ' + modes_table.get(mode).origin)}")
    for tls in tls_versions:
        if tls not in modes_table.TLS_CHOICES:
            raise PlanError(f"tls {tls!r}: must be one of {', '.join(modes_table.TLS_CHOICES)}")
    if not sites or not modes or not tls_versions or not encoding_names:
        raise PlanError("plan: needs at least one site, one mode, one TLS version and one encoding")
    for mode in modes:
        if not set(modes_table.get(mode).tls_versions) & set(tls_versions):
            raise PlanError(f"mode {mode}: QUIC always uses TLS {modes_table.QUIC_TLS}, and the plan has tls "
                            f"{', '.join(tls_versions)} only")
    names = [site.name for site in sites]
    if len(set(names)) != len(names):
        raise PlanError(f"sites: {sorted({n for n in names if names.count(n) > 1})[0]} is listed twice")
    if query not in QUERY_MATCHING:
        raise PlanError(f"query {query!r}: must be one of {', '.join(QUERY_MATCHING)}")
    for site in sites:
        if site.recording is not None and ("dcz" in encoding_names or site.manifest.versions > 1):
            raise PlanError(f"site {site.name}: a recorded site is replayed in one version and in identity, "
                            f"gzip, br or zstd only (not dcz)")
        check_replayable(site)
    cells = [(tls, mode, site.name, origin, version, encoding)
             for tls in tls_versions for mode in modes for site in sites
             for version in range(1, site.manifest.versions + 1) for encoding in encoding_names
             for origin in site.origins
             if tls in modes_table.get(mode).tls_versions]
    if len(cells) > MAX_SERVER_IPS:
        raise PlanError(f"plan: needs {len(cells)} server IPs (one per TLS version x mode x site version x "
                        f"encoding x origin), at most {MAX_SERVER_IPS}: split it into several plans")
    bindings = tuple(Binding(tls, mode, site, origin, index=i, encoding=encoding, version=version)
                     for i, (tls, mode, site, origin, version, encoding) in enumerate(cells))
    return ServerPlan(tuple(sites), modes, tls_versions, bindings, leaf, encoding_names, query)


def browser_url(entry: str, tls: str, topology: str) -> str:
    """The URL Chromium loads for a site's `entry` (always `https://...`): cleartext direct
    loads use `http://`; through the edge proxy the browser's hop stays TLS on loopback."""
    if tls == modes_table.CLEARTEXT and topology == "direct":
        return "http://" + entry.removeprefix("https://")
    return entry


def glob_regex(glob: str) -> str:
    """A site's path glob as an anchored nginx (PCRE) regex: `*` stays within one path
    segment, `**` crosses segments, `?` is one character."""
    out, i = ["^"], 0
    while i < len(glob):
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        ch = glob[i]
        out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out) + "$"


def binding_rows(server_plan: ServerPlan) -> list[list[object]]:
    """The plan's bindings as JSON rows (tls, mode, site, origin, index, encoding, version):
    what the harness and a split lab's sites role compare to know they serve the same plan."""
    return [[b.tls, b.mode, b.site, b.origin, b.index, b.encoding, b.version] for b in server_plan.bindings]


# Content encodings and versions (what both servers' configurations need) ---------------------


def text_pattern() -> str:
    """A regex (no anchors, no flags) matching a text file's suffix (`encodings.is_text`)."""
    return r"\.(" + "|".join(re.escape(s.lstrip(".")) for s in encodings_table.TEXT_SUFFIXES) + ")"


def sidecar_pattern() -> str:
    """A regex matching what follows a text file's name in its sidecars: `.gz`, `.br`, `.zst`
    or `.<dictionary id>.dcz` (the agreed layout)."""
    plain = "|".join(re.escape(e.suffix) for e in encodings_table.SIDECARS)
    return rf"({plain}|\.[0-9a-f]{{16}}\.dcz)"


def accepts_pattern(token: str) -> str:
    """A regex (PCRE and RE2 alike; match it case-insensitively) that an Accept-Encoding
    value names `token` with a non-zero q (RFC 9110 12.5.3)."""
    q = r"(;[ \t]*q[ \t]*=[ \t]*(1(\.0{0,3})?|0?\.[0-9]{0,2}[1-9][0-9]{0,2}))?"
    return rf"(^|,)[ \t]*{re.escape(token)}[ \t]*{q}[ \t]*(,|$)"


def dictionary_paths(site: Site, origin: str) -> list[str]:
    """The paths on `origin` that have a version-1 dictionary (`manifest.dictionaries`)."""
    paths = sorted("/" + key.split("/", 1)[1] for key in site.manifest.dictionaries
                   if key.split("/", 1)[0] == origin and "/" in key)
    for path in paths:
        if _PATTERN_SYNTAX & set(path) or any(ord(ch) <= 32 or ord(ch) > 126 for ch in path):
            raise PlanError(f"site {site.name}: dictionary path {path!r} must be printable ASCII without "
                            f"{''.join(sorted(_PATTERN_SYNTAX))} or spaces (it is a URL pattern)")
    return paths


def use_as_dictionary(path: str) -> str:
    """The `Use-As-Dictionary` value of `<path>.pbdict`: it is the dictionary for `path`; a
    directory's index (`/index.html`) also for the directory (`/`, as entries are loaded)."""
    if path.endswith("/" + INDEX):
        return f'match="{path.removesuffix(INDEX)}{{{INDEX}}}?"'
    return f'match="{path}"'


def dictionary_ids(sites: Iterable[Site]) -> dict[str, str]:
    """Every `Available-Dictionary` value the plan's sites can be offered -> the id in the
    file name of the deltas made against it (`<file>.<id>.dcz`)."""
    values = sorted({value for site in sites for value in site.manifest.dictionaries.values()})
    return {value: encodings_table.dictionary_id_of_header(value) for value in values}


def entry_file(site: Site) -> tuple[str, str]:
    """The entry's host and the path of the file it serves (a directory's index)."""
    url = urlsplit(site.manifest.entry)
    path = url.path or "/"
    return url.hostname or "", path + INDEX if path.endswith("/") else path


def dictionary_links(site: Site) -> str:
    """The `Link` header of the entry page of version 1 in a dcz binding: every dictionary
    of the site, on every origin, for Chromium to fetch at idle after the load."""
    links = [f"<https://{origin}{path}{encodings_table.DICTIONARY_SUFFIX}>; rel=compression-dictionary"
             for origin in site.origins for path in dictionary_paths(site, origin)]
    return ", ".join(links)


def negotiated(binding: Binding) -> bool:
    """Whether a binding answers from precompressed files (every encoding but identity)."""
    return binding.encoding != encodings_table.IDENTITY


# Replaying a recorded site (what both servers' configurations need) -------------------------

#: A request the recording lacks: 404 with this header (and the common ones).
UNRECORDED_HEADERS = ((UNRECORDED_HEADER, UNRECORDED_VALUE), *COMMON_HEADERS)
#: Recorded headers a replay leaves out (lower case): the server makes them (length,
#: validators, date, connection, and the type and Location it sets from the exchange), or
#: they would change how the browser reaches the lab: Alt-Svc would send it to QUIC in a
#: TCP condition, Strict-Transport-Security to https in a cleartext one. Timing-Allow-Origin
#: is always `*` (else resource timing reads 0 for cross-origin sizes).
REPLAY_DROPPED = frozenset({
    "content-length", "content-encoding", "content-type", "etag", "last-modified", "date", "connection",
    "keep-alive", "transfer-encoding", "location", "server", "alt-svc", "strict-transport-security",
    "timing-allow-origin",
})


_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_PRINTABLE = re.compile(r"^[\x20-\x7e]*$")


def check_replayable(site: Site) -> None:
    """Every header name a token and every value (and type and Location) printable ASCII:
    what both servers' configurations can carry, and no response splitting."""
    for exchange in site.recording.exchanges if site.recording is not None else ():
        texts = [("content_type", exchange.content_type or ""), ("location", exchange.location or "")]
        for name, value in exchange.headers.items():
            if not _TOKEN.match(name):
                raise PlanError(f"site {site.name}: {exchange.url}: header name {name!r} is not a token")
            texts.append((f"header {name}", value))
        for what, text in texts:
            if not _PRINTABLE.match(text):
                raise PlanError(f"site {site.name}: {exchange.url}: {what} {text!r} must be printable ASCII")


def replayed(site: Site, origin: str) -> tuple[tuple[int, Exchange], ...]:
    """(index in the recording, exchange) of every exchange a recorded site's origin answers."""
    if site.recording is None:
        return ()
    return tuple((i, e) for i, e in enumerate(site.recording.exchanges) if e.host == origin)


def loosely_replayed(site: Site, origin: str) -> tuple[tuple[str, int], ...]:
    """(path, index) of the exchange loose matching answers a path with (`Recording.loose`),
    in recording order."""
    first: dict[str, int] = {}
    for i, exchange in replayed(site, origin):
        first.setdefault(exchange.path, i)
    return tuple(first.items())


def replay_headers(binding: Binding, exchange: Exchange) -> list[tuple[str, str]]:
    """The headers of a replayed response besides those the server makes: the recorded
    ones (less REPLAY_DROPPED), Vary (`replay_vary`), `Timing-Allow-Origin: *` and, unless
    the recording has its own, `Access-Control-Allow-Origin: *`."""
    recorded = [(name, value) for name, value in exchange.headers.items()
                if name.lower() not in REPLAY_DROPPED and name.lower() != "vary"]
    vary = replay_vary(exchange, replay_sidecar(binding, exchange))
    names = {name.lower() for name, _ in recorded}
    return (recorded + ([("Vary", vary)] if vary else [])
            + [(name, value) for name, value in COMMON_HEADERS if name.lower() not in names])


def replay_vary(exchange: Exchange, negotiates: bool) -> str | None:
    """A replayed response's Vary: the recorded one, with Accept-Encoding added when the
    server picks a sidecar by it (`negotiates`); None when there is neither."""
    recorded = next((value for name, value in exchange.headers.items() if name.lower() == "vary"), None)
    if not negotiates:
        return recorded
    if recorded is None or not recorded.strip():
        return VARY
    if recorded.strip() == "*" or VARY.lower() in [part.strip().lower() for part in recorded.split(",")]:
        return recorded
    return f"{recorded}, {VARY}"


def replay_sidecar(binding: Binding, exchange: Exchange) -> bool:
    """Whether a binding answers an exchange's body from a sidecar it picks by Accept-Encoding."""
    return negotiated(binding) and exchange.file is not None and encodings_table.is_text(exchange.file)


def literal_regex(text: str) -> str:
    """`text` as a regex matching itself, for PCRE (nginx) and RE2 (Caddy) alike: every
    character but ASCII letters and digits escaped."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "\\" + ch for ch in text)
