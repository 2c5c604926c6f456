"""The server plan of a run: every site under every mode and TLS version at once, each
(TLS version, mode, site, version, encoding, origin) on its own server address.

Pure: `plan` allocates addresses (`binding.Binding`); `nginxconf` and `caddyconf` render
the configuration text of the two server programs, `lab.nginx` and `lab.caddy` run them.

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
renderers answer each request from `Recording.lookup(host, target, plan.query)` (what
they share is `replay.py`), in identity, gzip, br or zstd and one version.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pagebench.core import encodings as encodings_table
from pagebench.core import modes as modes_table
from pagebench.core.encodings import IDENTITY, Encoding
from pagebench.core.certs import Leaf
from pagebench.core.layout import MAX_SERVER_IPS
from pagebench.core.modes import Mode
from pagebench.core.servers.binding import QUIC_PORT, Binding, PlanError
from pagebench.core.servers.replay import check_replayable
from pagebench.core.sites.model import Site
from pagebench.core.sites.recording import check_query_matching


@dataclass(frozen=True)
class ServerPlan:
    """Every binding of a run's sites, modes and TLS versions, and how the browser reaches them."""

    sites: tuple[Site, ...]
    modes: tuple[Mode, ...]
    tls_versions: tuple[str, ...]
    bindings: tuple[Binding, ...]
    leaf: Leaf | None = None  # the certificate; `servers` supplies it when the plan has none
    encodings: tuple[Encoding, ...] = (IDENTITY,)
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

    def select(self, mode: Mode, tls: str, site: str | None = None, *, encoding: Encoding = IDENTITY,
               version: int = 1) -> tuple[Binding, ...]:
        """The bindings of one condition (mode, TLS, optionally the site; the encoding and the
        site version), checked to be servable."""
        if mode not in self.modes:
            raise PlanError(f"mode {mode.name!r}: not in this plan (has {', '.join(m.name for m in self.modes)})")
        if tls not in self.tls_versions:
            raise PlanError(f"tls {tls!r}: not in this plan (has {', '.join(self.tls_versions)})")
        if tls not in mode.tls_versions:
            raise PlanError(f"mode {mode} with tls {tls}: QUIC always uses TLS {modes_table.QUIC_TLS}")
        if site is not None and site not in {s.name for s in self.sites}:
            raise PlanError(f"site {site!r}: not in this plan (has {', '.join(s.name for s in self.sites)})")
        if encoding not in self.encodings:
            raise PlanError(f"encoding {encoding.name!r}: not in this plan "
                            f"(has {', '.join(e.name for e in self.encodings)})")
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

    def addresses(self, mode: Mode, tls: str, site: str | None = None, *, encoding: Encoding = IDENTITY,
                  version: int = 1) -> dict[str, str]:
        """host -> IPv4 address for one condition (e.g. for curl --resolve host:443:ip)."""
        return {b.origin: b.ip for b in self.select(mode, tls, site, encoding=encoding, version=version)}

    def address(self, mode: Mode, tls: str, host: str, site: str | None = None, *,
                encoding: Encoding = IDENTITY, version: int = 1) -> Binding:
        """The binding serving `host` in one condition."""
        for binding in self.select(mode, tls, site, encoding=encoding, version=version):
            if binding.origin == host:
                return binding
        raise PlanError(f"host {host!r}: not served under mode {mode}, tls {tls}, encoding {encoding}, "
                        f"version {version}")

    def host_resolver_rules(self, mode: Mode, tls: str, site: str | None = None, block_others: bool = False, *,
                            encoding: Encoding = IDENTITY, version: int = 1) -> str:
        """Chromium's --host-resolver-rules value: `MAP host ip, MAP host2 ip2`.
        `block_others` adds `MAP * ~NOTFOUND` so no other name is ever looked up."""
        rules = [f"MAP {b.origin} {b.ip}" for b in self.select(mode, tls, site, encoding=encoding, version=version)]
        return ", ".join(rules + (["MAP * ~NOTFOUND"] if block_others else []))

    def force_quic_on(self, mode: Mode, tls: str, site: str | None = None, *,
                      encoding: Encoding = IDENTITY, version: int = 1) -> str:
        """Chromium's --origin-to-force-quic-on value for a QUIC mode's origins:
        `host:443,host2:443` (QUIC from the first request, no TCP and no Alt-Svc discovery)."""
        return ",".join(f"{b.origin}:{QUIC_PORT}"
                        for b in self.select(mode, tls, site, encoding=encoding, version=version))


def plan(sites: Sequence[Site], modes: Iterable[Mode], tls_versions: Iterable[str],
         leaf: Leaf | None = None, encodings: Iterable[Encoding] = (IDENTITY,),
         query: str = "exact") -> ServerPlan:
    """Allocate one server IP per (TLS version, mode, site, site version, encoding, origin),
    in that order; QUIC cells exist for TLS 1.3 only (QUIC has no other). With one encoding
    and sites of one version, indices are what they were before either existed. `query`
    is how recorded sites match a request's query ("exact" or "loose")."""
    modes, tls_versions = tuple(dict.fromkeys(modes)), tuple(dict.fromkeys(tls_versions))
    encoding_rows = tuple(dict.fromkeys(encodings))
    for mode in modes:
        if mode.origin is not mode:
            raise PlanError(f"mode {mode}: not served in the direct topology: "
                            f"{modes_table.NOT_IN.get((mode, 'direct'), f'served by {mode.origin}')}")
    for tls in tls_versions:
        if tls not in modes_table.TLS_CHOICES:
            raise PlanError(f"tls {tls!r}: must be one of {', '.join(modes_table.TLS_CHOICES)}")
    if not sites or not modes or not tls_versions or not encoding_rows:
        raise PlanError("plan: needs at least one site, one mode, one TLS version and one encoding")
    for mode in modes:
        if not set(mode.tls_versions) & set(tls_versions):
            raise PlanError(f"mode {mode}: QUIC always uses TLS {modes_table.QUIC_TLS}, and the plan has tls "
                            f"{', '.join(tls_versions)} only")
    names = [site.name for site in sites]
    if len(set(names)) != len(names):
        raise PlanError(f"sites: {sorted({n for n in names if names.count(n) > 1})[0]} is listed twice")
    try:
        check_query_matching(query)
    except ValueError as error:
        raise PlanError(f"query {error}") from None
    for site in sites:
        if site.recording is not None and (any(e.dictionary for e in encoding_rows) or site.manifest.versions > 1):
            plain = [e.name for e in encodings_table.ENCODINGS if not e.dictionary]
            raise PlanError(f"site {site.name}: a recorded site is replayed in one version and in "
                            f"{', '.join(plain[:-1])} or {plain[-1]} only (not "
                            f"{', '.join(e.name for e in encodings_table.ENCODINGS if e.dictionary)})")
        check_replayable(site)
    cells = [(tls, mode, site.name, origin, version, encoding)
             for tls in tls_versions for mode in modes for site in sites
             for version in range(1, site.manifest.versions + 1) for encoding in encoding_rows
             for origin in site.origins
             if tls in mode.tls_versions]
    if len(cells) > MAX_SERVER_IPS:
        raise PlanError(too_many_addresses(len(cells), sites, modes, tls_versions, encoding_rows))
    bindings = tuple(Binding(tls, mode, site, origin, index=i, encoding=encoding, version=version)
                     for i, (tls, mode, site, origin, version, encoding) in enumerate(cells))
    return ServerPlan(tuple(sites), modes, tls_versions, bindings, leaf, encoding_rows, query)


def too_many_addresses(needed: int, sites: Sequence[Site], modes: Sequence[Mode], tls_versions: Sequence[str],
                       encoding_rows: Sequence[Encoding]) -> str:
    """The cap's one line: what the count is made of and what to cut (the factors multiply)."""
    pairs = sum(1 for tls in tls_versions for mode in modes if tls in mode.tls_versions)
    per_pair = sum(len(site.origins) * site.manifest.versions for site in sites)
    largest = max(sites, key=lambda site: len(site.origins))
    return (f"plan: needs {needed} server addresses, at most {MAX_SERVER_IPS}: {pairs} (TLS version, mode) pairs x "
            f"{len(encoding_rows)} encoding(s) x {per_pair} origin(s) over the site versions (the largest site, "
            f"{largest.name}, has {len(largest.origins)}): split the spec into several runs with fewer modes, TLS "
            f"versions, encodings or sites each (with these modes, TLS versions and encodings: at most "
            f"{MAX_SERVER_IPS // (pairs * len(encoding_rows))} origins in all)")


def browser_url(entry: str, tls: str, topology: str) -> str:
    """The URL Chromium loads for a site's `entry` (always `https://...`): cleartext direct
    loads use `http://`; through the edge proxy the browser's hop stays TLS on loopback."""
    if tls == modes_table.CLEARTEXT and topology == "direct":
        return "http://" + entry.removeprefix("https://")
    return entry


def binding_rows(server_plan: ServerPlan) -> list[list[object]]:
    """The plan's bindings as JSON rows (tls, mode, site, origin, index, encoding, version):
    what the harness and a split lab's sites role compare to know they serve the same plan."""
    return [[b.tls, b.mode.name, b.site, b.origin, b.index, b.encoding.name, b.version] for b in server_plan.bindings]
