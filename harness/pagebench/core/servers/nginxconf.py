"""The one nginx.conf that serves a plan's TCP bindings (`nginx` modes of `modes.MODES`).

Pure: `render` returns the text; `lab.nginx.NginxServer` writes and runs it.

    connection per request  keepalive_timeout 0: `Connection: close`, a TCP+TLS connection
                            per request; ALPN offers http/1.1 only
    persistent (HTTP/1.1)   no `http2` on the listen, so ALPN offers http/1.1
    multiplexed             `listen ... ssl http2`
    cleartext (tls none)    `listen ...:80` without `ssl` (h2: `listen ...:80 http2`, prior
                            knowledge only: the edge proxy's upstream, never a browser),
                            `sendfile off` (see `_server`)

A server block's body is the site's files with the common headers and the site's header
rules; a binding that negotiates an encoding or serves a versioned site is
`nginxencoding`'s, a recorded site's is `nginxreplay`'s, an app site's passes every
request to the app (`app_body`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pagebench.core import modes
from pagebench.core.certs import Leaf
from pagebench.core.servers.binding import Binding, PlanError
from pagebench.core.servers.headers import COMMON_HEADERS, HTML_CACHE_CONTROL, MIME_TYPES, STATIC_CACHE_CONTROL
from pagebench.core.servers.headers import glob_regex, merged
from pagebench.core.servers.negotiation import negotiated
from pagebench.core.servers.nginxencoding import encoding_maps, negotiated_body
from pagebench.core.servers.nginxreplay import ECHO_MODULE, needs_echo, replay_body, replay_maps
from pagebench.core.servers.nginxtext import add_headers, safe_path
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.sites.model import Site

#: Tab-separated; `accesslog.parse_nginx_log` reads exactly these fields in this order.
LOG_FIELDS = ("msec", "request_time", "server_addr", "connection", "connection_requests", "server_protocol",
              "ssl_protocol", "status", "body_bytes_sent", "host", "request_uri", "request_method", "bytes_sent")
CACHE_VARIABLE = "$pagebench_cache_control"
SSL_PROTOCOLS = {"1.2": "TLSv1.2", "1.3": "TLSv1.3"}
#: Every response's headers: Cache-Control by path (HTML or static), then the common ones.
HEADERS = (("Cache-Control", CACHE_VARIABLE), *COMMON_HEADERS)


#: Connections a worker has room for besides its listening sockets (each takes one slot).
CLIENT_CONNECTIONS = 4096


def listening_sockets(server_plan: ServerPlan) -> int:
    """nginx's sockets: an IPv4 and an IPv6 listen per binding."""
    return 2 * len(server_plan.served_by("nginx"))


def worker_connections(server_plan: ServerPlan) -> int:
    """The worker's connection slots: every listening socket holds one."""
    return listening_sockets(server_plan) + CLIENT_CONNECTIONS


def open_files(server_plan: ServerPlan) -> tuple[int, int]:
    """File descriptors nginx's processes want (a listening socket each, two per connection:
    a proxied app's upstream, and its logs and files) and the least they can run with (the
    sockets and room for a thousand connections). They inherit the limit from the harness
    (`lab.servers.nginx.ensure_open_files`): no `worker_rlimit_nofile`, whose failure
    without CAP_SYS_RESOURCE would be an [alert] at start."""
    sockets = listening_sockets(server_plan)
    return sockets + 2 * CLIENT_CONNECTIONS + 64, sockets + 1024


def upstream_name(site: str) -> str:
    """The `upstream` block of an app site's process."""
    return "pagebench_app_" + site.replace(".", "_").replace("-", "_")


def app_upstreams(server_plan: ServerPlan, upstreams: Mapping[str, str]) -> list[str]:
    """An `upstream` per app site (its `host:port`), without a pool of idle connections:
    a connection per request costs a loopback handshake (tens of microseconds), while a
    kept one stalled an app that writes its head and body in two sends (Python's
    http.server) by nginx's delayed ACK: 44 ms a request over HTTP/2, measured (docs/apps.md)."""
    lines = []
    for site in server_plan.sites:
        if site.app is None:
            continue
        if site.name not in upstreams:
            raise PlanError(f"render: app site {site.name} has no address (start its process first)")
        lines += [f"    upstream {upstream_name(site.name)} {{",
                  f"        server {upstreams[site.name]};",
                  "    }"]
    return lines


def app_body(site: Site) -> list[str]:
    """Every request to the app, its response back as it came (docs/apps.md lists what
    changes and why): the origin's name as Host, HTTP/1.1 on a connection of its own, the
    request and the response streamed, not buffered (the app's own timing: each chunk
    goes on as it arrives), the app's own Server and Date (nginx would put its own),
    Location and Refresh untouched, the app's error pages its own."""
    return [
        "        location / {",
        f"            proxy_pass http://{upstream_name(site.name)};",
        "            proxy_http_version 1.1;",
        "            proxy_set_header Host $host;",
        "            proxy_buffering off;",
        "            proxy_request_buffering off;",
        "            proxy_pass_header Server;",
        "            proxy_pass_header Date;",
        "            proxy_redirect off;",
        "        }",
    ]


def _server(binding: Binding, site: Site, query: str = "exact") -> list[str]:
    mode = binding.mode
    cleartext = binding.tls == modes.CLEARTEXT
    options = ("" if cleartext else " ssl") + (" http2" if mode.multiplexed else "")
    lines = [
        f"    # tls {binding.tls}, mode {binding.mode}, site {binding.site}",
        "    server {",
        f"        listen {binding.ip}:{binding.port}{options};",
        f"        listen [{binding.ip6}]:{binding.port}{options};",
        f"        server_name {binding.origin};",
    ]
    if not cleartext:
        lines.append(f"        ssl_protocols {SSL_PROTOCOLS[binding.tls]};")
    else:
        # Written from buffers as over TLS. nginx's h2 sendfile path turns TCP_NODELAY off
        # and corks: a response's last partial segment then waits a round trip for the
        # ACK of the SETTINGS frame (measured: h2c 3 RTT to the first response, not 2).
        lines.append("        sendfile off;")
    if mode.connection_per_request:
        lines.append("        keepalive_timeout 0;")
    if site.app is not None:
        return lines + app_body(site) + ["    }"]
    lines.append(f"        root {safe_path(site.origin_root(binding.origin, binding.version))};")
    if site.recording is not None:
        lines += replay_body(binding, site, query)
    elif not negotiated(binding) and site.manifest.versions == 1:
        lines += add_headers(HEADERS, "        ")
        for glob, headers in site.manifest.headers.items():
            lines.append(f'        location ~ "{glob_regex(glob)}" {{')
            lines += add_headers(merged(HEADERS, headers), "            ")
            lines.append("        }")
    else:
        lines += negotiated_body(binding, site)
    lines.append("    }")
    return lines


def render(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None,
           upstreams: Mapping[str, str] | None = None) -> str:
    """The nginx.conf text for the plan's nginx bindings (h3 is Caddy's); `leaf` (else the
    plan's) is the certificate for every origin; `upstreams`, each app site's `host:port`."""
    leaf = leaf or server_plan.leaf
    if leaf is None:
        raise PlanError("render: no certificate; pass leaf=tls.leaf(plan.hostnames)")
    run = safe_path(rundir)
    sites = {site.name: site for site in server_plan.sites}
    log_format = "\\t".join(f"${name}" for name in LOG_FIELDS)
    replay_sizes, replay_lookups = replay_maps(server_plan)
    lines = [
        "# Generated by pagebench.core.servers.nginxconf: do not edit.",
        f"# sites: {', '.join(sites)}; modes: {', '.join(m.name for m in server_plan.modes)}; "
        f"tls: {', '.join(server_plan.tls_versions)}",
        *([f"load_module {safe_path(ECHO_MODULE)};  # echo_sleep: server think time"] if needs_echo(server_plan) else []),
        "daemon off;",
        "master_process on;",
        "worker_processes 1;",
        "user nobody nogroup;",
        f"pid {run}/nginx.pid;",
        f"error_log {run}/error.log;",
        "",
        "events {",
        f"    worker_connections {worker_connections(server_plan)};",
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
        f"    ssl_certificate {safe_path(leaf.cert_path)};",
        f"    ssl_certificate_key {safe_path(leaf.key_path)};",
        "    ssl_session_tickets off;",
        "    ssl_session_cache off;",
        "    ssl_early_data off;",
        *replay_sizes,
        f"    map $uri {CACHE_VARIABLE} {{",
        f'        default "{STATIC_CACHE_CONTROL}";',
        f'        "~\\.html?$" "{HTML_CACHE_CONTROL}";',
        "    }",
        *encoding_maps(server_plan),
        *replay_lookups,
        *app_upstreams(server_plan, upstreams or {}),
    ]
    for binding in server_plan.served_by("nginx"):
        lines += [""] + _server(binding, sites[binding.site], server_plan.query)
    lines.append("}")
    return "\n".join(lines) + "\n"
