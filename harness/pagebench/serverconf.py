"""The server plan of a run (every site under every mode and TLS version at once) and
the one nginx.conf that serves its TCP modes.

Pure: `plan` allocates addresses and `render` returns the configuration text; nothing
here reads a file or starts a process (`servers` does).

Each (TLS version, mode, site, origin) gets its own server IP on port 443, in that
nesting order (h3 cells under TLS 1.3 only): index i is `Topology.server_addresses[i]`
(and `server_addresses6[i]`).
Distinct IPs keep Chromium from pooling connections across modes, TLS versions or
origins (h2 coalescing needs a shared IP). The browser reaches a condition through
`ServerPlan.host_resolver_rules(mode, tls)` (name the site when two sites of the plan
share a hostname, as the seed000 family does). The certificate (`tls.Leaf`) is only
needed to render; `servers.NginxServer` issues it when the plan has none.

Modes in the direct topology:

    http1.0    keepalive_timeout 0: `Connection: close`, a TCP+TLS connection per request;
               ALPN offers http/1.1 only
    keepalive  HTTP/1.1 only (no `http2` on the listen, so ALPN offers http/1.1),
               persistent connections
    h2         `listen ... ssl http2`
    h3         not nginx: Caddy serves these bindings (`caddyconf`), QUIC on UDP 443;
               QUIC always runs TLS 1.3, so h3 bindings exist for TLS "1.3" only

`pipelining` is not served in the direct topology. Every connection does a full
handshake (no session cache, no tickets, no early data).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .records import MODES, TLS_VERSIONS
from .sites import Site
from .tls import Leaf
from .topology import MAX_SERVER_IPS, Topology

NGINX_MODES = ("http1.0", "keepalive", "h2")
#: Served by Caddy (`caddyconf`) on the plan's own addresses; `render` skips them.
CADDY_MODES = ("h3",)
#: The only TLS version QUIC runs (RFC 9001).
QUIC_TLS = "1.3"
QUIC_PORT = 443
NOT_SERVED = {
    "pipelining": "mode pipelining: no shipping browser pipelines, so it is not served in the direct "
                  "topology (use the edge-proxy topology)",
}
SSL_PROTOCOLS = {"1.2": "TLSv1.2", "1.3": "TLSv1.3"}

# Addresses depend only on the index, not on the run's prefix.
_ADDRESSES = Topology("pbplan", server_ips=MAX_SERVER_IPS)
SERVER_ADDRESSES = _ADDRESSES.server_addresses
SERVER_ADDRESSES6 = _ADDRESSES.server_addresses6

#: Tab-separated; `servers.parse_access_log` reads exactly these fields in this order.
LOG_FIELDS = ("msec", "request_time", "server_addr", "connection", "connection_requests", "server_protocol",
              "ssl_protocol", "status", "body_bytes_sent", "host", "request_uri", "request_method", "bytes_sent")
CACHE_VARIABLE = "$pagebench_cache_control"
HTML_CACHE_CONTROL = "no-cache"
STATIC_CACHE_CONTROL = "max-age=86400"
COMMON_HEADERS = (("Cache-Control", CACHE_VARIABLE), ("Timing-Allow-Origin", "*"),
                  ("Access-Control-Allow-Origin", "*"))
MIME_TYPES = (
    ("text/html", "html htm"), ("text/css", "css"), ("text/javascript", "js mjs"),
    ("application/json", "json"), ("text/plain", "txt"), ("image/png", "png"), ("image/jpeg", "jpg jpeg"),
    ("image/gif", "gif"), ("image/svg+xml", "svg"), ("image/webp", "webp"), ("image/avif", "avif"),
    ("image/x-icon", "ico"), ("font/woff", "woff"), ("font/woff2", "woff2"), ("font/ttf", "ttf"),
    ("font/otf", "otf"),
)


class PlanError(ValueError):
    """One line: which mode, TLS version, site or host is at fault, and why."""


@dataclass(frozen=True)
class Binding:
    """One nginx server block: a site's origin under one mode and TLS version."""

    tls: str
    mode: str
    site: str
    origin: str
    index: int  # into Topology.server_addresses / server_addresses6

    @property
    def server(self) -> str:
        """Which server program serves it: "nginx" or "caddy"."""
        return "caddy" if self.mode in CADDY_MODES else "nginx"

    @property
    def ip(self) -> str:
        return SERVER_ADDRESSES[self.index]

    @property
    def ip6(self) -> str:
        return SERVER_ADDRESSES6[self.index]


@dataclass(frozen=True)
class ServerPlan:
    sites: tuple[Site, ...]
    modes: tuple[str, ...]
    tls_versions: tuple[str, ...]
    bindings: tuple[Binding, ...]
    leaf: Leaf | None = None  # the certificate; `servers` supplies it when the plan has none

    @property
    def ip_count(self) -> int:
        """How many server IPs the topology needs: `Topology(prefix, server_ips=this)`."""
        return len(self.bindings)

    def served_by(self, server: str) -> tuple[Binding, ...]:
        """The bindings one program serves: "nginx" or "caddy"."""
        return tuple(b for b in self.bindings if b.server == server)

    @property
    def hostnames(self) -> tuple[str, ...]:
        """Every origin served (what the certificate must name)."""
        return tuple(sorted({b.origin for b in self.bindings}))

    def select(self, mode: str, tls: str, site: str | None = None) -> tuple[Binding, ...]:
        if mode not in self.modes:
            raise PlanError(f"mode {mode!r}: not in this plan (has {', '.join(self.modes)})")
        if tls not in self.tls_versions:
            raise PlanError(f"tls {tls!r}: not in this plan (has {', '.join(self.tls_versions)})")
        if mode in CADDY_MODES and tls != QUIC_TLS:
            raise PlanError(f"mode {mode} with tls {tls}: QUIC always uses TLS {QUIC_TLS}")
        if site is not None and site not in {s.name for s in self.sites}:
            raise PlanError(f"site {site!r}: not in this plan (has {', '.join(s.name for s in self.sites)})")
        chosen = tuple(b for b in self.bindings if b.mode == mode and b.tls == tls and site in (None, b.site))
        hosts = [b.origin for b in chosen]
        shared = sorted({host for host in hosts if hosts.count(host) > 1})
        if shared:
            owners = sorted({b.site for b in chosen if b.origin == shared[0]})
            raise PlanError(f"host {shared[0]} is served for several sites ({', '.join(owners)}): name the site")
        return chosen

    def addresses(self, mode: str, tls: str, site: str | None = None) -> dict[str, str]:
        """host -> IPv4 address for one condition (e.g. for curl --resolve host:443:ip)."""
        return {b.origin: b.ip for b in self.select(mode, tls, site)}

    def address(self, mode: str, tls: str, host: str, site: str | None = None) -> Binding:
        for binding in self.select(mode, tls, site):
            if binding.origin == host:
                return binding
        raise PlanError(f"host {host!r}: not served under mode {mode}, tls {tls}")

    def host_resolver_rules(self, mode: str, tls: str, site: str | None = None, block_others: bool = False) -> str:
        """Chromium's --host-resolver-rules value: `MAP host ip, MAP host2 ip2`.
        `block_others` adds `MAP * ~NOTFOUND` so no other name is ever looked up."""
        rules = [f"MAP {b.origin} {b.ip}" for b in self.select(mode, tls, site)]
        return ", ".join(rules + (["MAP * ~NOTFOUND"] if block_others else []))

    def force_quic_on(self, tls: str = QUIC_TLS, site: str | None = None) -> str:
        """Chromium's --origin-to-force-quic-on value for the h3 origins: `host:443,host2:443`
        (QUIC from the first request, no TCP and no Alt-Svc discovery)."""
        return ",".join(f"{b.origin}:{QUIC_PORT}" for b in self.select("h3", tls, site))

    def conf(self, rundir: Path, leaf: Leaf | None = None) -> str:
        return render(self, rundir, leaf)


def plan(sites: Sequence[Site], modes: Iterable[str], tls_versions: Iterable[str],
         leaf: Leaf | None = None) -> ServerPlan:
    """Allocate one server IP per (TLS version, mode, site, origin), in that order; h3
    cells exist for TLS 1.3 only (QUIC has no other)."""
    modes, tls_versions = tuple(dict.fromkeys(modes)), tuple(dict.fromkeys(tls_versions))
    for mode in modes:
        if mode in NOT_SERVED:
            raise PlanError(NOT_SERVED[mode])
        if mode not in MODES:
            raise PlanError(f"mode {mode!r}: unknown; served are {', '.join(NGINX_MODES + CADDY_MODES)}")
    for tls in tls_versions:
        if tls not in TLS_VERSIONS:
            raise PlanError(f"tls {tls!r}: must be one of {', '.join(TLS_VERSIONS)}")
    if not sites or not modes or not tls_versions:
        raise PlanError("plan: needs at least one site, one mode and one TLS version")
    if any(mode in CADDY_MODES for mode in modes) and QUIC_TLS not in tls_versions:
        raise PlanError(f"mode h3: QUIC always uses TLS {QUIC_TLS}, and the plan has tls "
                        f"{', '.join(tls_versions)} only")
    names = [site.name for site in sites]
    if len(set(names)) != len(names):
        raise PlanError(f"sites: {sorted({n for n in names if names.count(n) > 1})[0]} is listed twice")
    cells = [(tls, mode, site.name, origin)
             for tls in tls_versions for mode in modes for site in sites for origin in site.origins
             if mode not in CADDY_MODES or tls == QUIC_TLS]
    if len(cells) > MAX_SERVER_IPS:
        raise PlanError(f"plan: needs {len(cells)} server IPs (one per TLS version x mode x origin), at most "
                        f"{MAX_SERVER_IPS}: split it into several plans")
    bindings = tuple(Binding(*cell, index=i) for i, cell in enumerate(cells))
    return ServerPlan(tuple(sites), modes, tls_versions, bindings, leaf)


# Rendering ----------------------------------------------------------------------------


def _path(path: Path | str) -> str:
    text = str(path)
    if any(ch in text for ch in '"\\$;{} \t\n'):
        raise PlanError(f"path {text!r}: must not contain quotes, backslashes, $, ;, braces or spaces")
    return text


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


def _add_headers(headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    return [f'{indent}add_header {name} "{value}" always;' for name, value in headers]


def _merged(extra: dict[str, str]) -> list[tuple[str, str]]:
    """The common headers, with a site rule's headers replacing same-named ones."""
    override = {name.lower() for name in extra}
    return [(n, v) for n, v in COMMON_HEADERS if n.lower() not in override] + list(extra.items())


def _server(binding: Binding, site: Site) -> list[str]:
    http2 = " http2" if binding.mode == "h2" else ""
    lines = [
        f"    # tls {binding.tls}, mode {binding.mode}, site {binding.site}",
        "    server {",
        f"        listen {binding.ip}:443 ssl{http2};",
        f"        listen [{binding.ip6}]:443 ssl{http2};",
        f"        server_name {binding.origin};",
        f"        ssl_protocols {SSL_PROTOCOLS[binding.tls]};",
    ]
    if binding.mode == "http1.0":
        lines.append("        keepalive_timeout 0;")
    lines.append(f"        root {_path(site.origin_root(binding.origin))};")
    lines += _add_headers(COMMON_HEADERS, "        ")
    for glob, headers in site.manifest.headers.items():
        lines.append(f'        location ~ "{glob_regex(glob)}" {{')
        lines += _add_headers(_merged(headers), "            ")
        lines.append("        }")
    lines.append("    }")
    return lines


def render(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None) -> str:
    """The nginx.conf text for the plan's nginx bindings (h3 is Caddy's); `leaf` (else the
    plan's) is the certificate for every origin."""
    leaf = leaf or server_plan.leaf
    if leaf is None:
        raise PlanError("render: no certificate; pass leaf=tls.leaf(plan.hostnames)")
    run = _path(rundir)
    sites = {site.name: site for site in server_plan.sites}
    log_format = "\\t".join(f"${name}" for name in LOG_FIELDS)
    lines = [
        "# Generated by pagebench.serverconf: do not edit.",
        f"# sites: {', '.join(sites)}; modes: {', '.join(server_plan.modes)}; "
        f"tls: {', '.join(server_plan.tls_versions)}",
        "daemon off;",
        "master_process on;",
        "worker_processes 1;",
        "user nobody nogroup;",
        f"pid {run}/nginx.pid;",
        f"error_log {run}/error.log;",
        "",
        "events {",
        "    worker_connections 4096;",
        "}",
        "",
        "http {",
        "    types {",
        *(f"        {mime} {exts};" for mime, exts in MIME_TYPES),
        "    }",
        "    default_type application/octet-stream;",
        f"    log_format pagebench '{log_format}';",
        f"    access_log {run}/access.log pagebench;",
        f"    client_body_temp_path {run}/client_body_temp;",
        f"    proxy_temp_path {run}/proxy_temp;",
        f"    fastcgi_temp_path {run}/fastcgi_temp;",
        f"    uwsgi_temp_path {run}/uwsgi_temp;",
        f"    scgi_temp_path {run}/scgi_temp;",
        "    sendfile on;",
        "    tcp_nodelay on;",
        "    server_tokens off;",
        "    keepalive_requests 10000;",
        "    keepalive_timeout 75s;",
        f"    ssl_certificate {_path(leaf.cert_path)};",
        f"    ssl_certificate_key {_path(leaf.key_path)};",
        "    ssl_session_tickets off;",
        "    ssl_session_cache off;",
        "    ssl_early_data off;",
        f"    map $uri {CACHE_VARIABLE} {{",
        f'        default "{STATIC_CACHE_CONTROL}";',
        f'        "~\\.html?$" "{HTML_CACHE_CONTROL}";',
        "    }",
    ]
    for binding in server_plan.served_by("nginx"):
        lines += [""] + _server(binding, sites[binding.site])
    lines.append("}")
    return "\n".join(lines) + "\n"
