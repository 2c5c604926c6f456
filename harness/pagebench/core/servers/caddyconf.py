"""The Caddy configuration (JSON) that serves a plan's h3 bindings over QUIC.

Pure: `render` returns the configuration text; `lab.caddy.CaddyServer` writes and runs it.

Caddy is the HTTP/3 server because nginx 1.22 has none: the release
`harness/bootstrap install` builds (`lab.caddy.CADDY`; Debian 12's 2.6.2 has a quic-go that
loses half of Chromium's ClientHello). The configuration also loads in 2.6. Each h3
binding is its own Caddy server on its own address (`Binding.ip` and `ip6`, UDP 443),
speaking HTTP/3 only, with the explicit certificate nginx uses and TLS 1.3 (QUIC has no
other). Nothing is implicit: no admin endpoint, no automatic HTTPS, no config autosave,
storage inside the run directory, no session tickets (every connection is a full
handshake, as with nginx). A server's routes are `caddyroutes`' (a recorded site's,
`caddyreplay`'s; an app site's, `app_routes`). With `tcp=True` every server also speaks h1 and h2 on TCP (the same
routes): for checks with a client that has no HTTP/3 (curl 7.88 here); never in a run.

The access log is JSON, one line per request. Each server logs under its own logger,
`http.log.access.<LOGGER_PREFIX><binding index>`, so a record names the binding and
thus the server address it arrived at (`accesslog.parse_caddy_log`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pagebench.core.certs import Leaf
from pagebench.core.servers.binding import QUIC_PORT, Binding, PlanError
from pagebench.core.servers.caddyreplay import replay_routes
from pagebench.core.servers.caddyroutes import routes, safe_path
from pagebench.core.servers.plan import ServerPlan

ACCESS_LOGGER = "http.log.access"
LOGGER_PREFIX = "pb"
CERT_TAG = "pagebench"
#: The stable line Caddy logs once every app has started (all sockets bound).
READY_MESSAGE = "serving initial configuration"


def logger_name(index: int) -> str:
    """The access logger suffix of the binding with this index."""
    return f"{LOGGER_PREFIX}{index}"


def app_routes(upstream: str) -> list[dict[str, Any]]:
    """Every request to the app at `upstream` (`host:port`), its response back as it came
    (docs/apps.md lists what changes and why): Host is the origin's (Caddy passes it
    through), no X-Forwarded-* (Caddy would add them; nginx adds none), every chunk flushed
    as it arrives (the app's own timing)."""
    return [{"handle": [
        # Caddy's own Via on the response (a bare "1.1 Caddy": the app sent none); deferred,
        # it applies once the app's headers are in. One the app sent keeps Caddy's after it.
        {"handler": "headers", "response": {"require": {"headers": {"Via": ["1.1 Caddy"]}}, "delete": ["Via"],
                                            "deferred": True}},
        {"handler": "reverse_proxy",
         "upstreams": [{"dial": upstream}],
         "flush_interval": -1,
         "headers": {"request": {"delete": ["X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "Via"]}}},
    ]}]


def _routes(server_plan: ServerPlan, b: Binding, upstreams: Mapping[str, str]) -> list[dict[str, Any]]:
    site = next(s for s in server_plan.sites if s.name == b.site)
    if site.app is not None:
        if site.name not in upstreams:
            raise PlanError(f"render: app site {site.name} has no address (start its process first)")
        return app_routes(upstreams[site.name])
    if site.recording is not None:
        return replay_routes(site, b, server_plan.query)
    return routes(site, b.origin, b)


def render_config(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None,
                  tcp: bool = False, upstreams: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The configuration as a JSON-ready dict (see `render`)."""
    leaf = leaf or server_plan.leaf
    if leaf is None:
        raise PlanError("render: no certificate; pass leaf=tls.leaf(plan.hostnames)")
    bindings = server_plan.served_by("caddy")
    if not bindings:
        raise PlanError("caddy: the plan has no h3 bindings (mode h3 with tls 1.3)")
    run = safe_path(rundir)
    servers = {}
    for b in bindings:
        servers[logger_name(b.index)] = {
            "listen": [f"{b.ip}:{QUIC_PORT}", f"[{b.ip6}]:{QUIC_PORT}"],
            # QUIC only: UDP 443 alone (Caddy 2.6 also bound TCP 443 and served nothing there).
            # Caddy names its protocols as ALPN does.
            "protocols": ["h1", "h2", *b.mode.alpn] if tcp else list(b.mode.alpn),
            "automatic_https": {"disable": True},
            "tls_connection_policies": [{
                "certificate_selection": {"any_tag": [CERT_TAG]},
                "protocol_min": "tls1.3", "protocol_max": "tls1.3",
            }],
            "logs": {"default_logger_name": logger_name(b.index)},
            "routes": _routes(server_plan, b, upstreams or {}),
        }
    return {
        "admin": {"disabled": True, "config": {"persist": False}},
        "storage": {"module": "file_system", "root": f"{run}/storage"},
        "logging": {"logs": {
            "default": {"writer": {"output": "stderr"}, "encoder": {"format": "json"}, "level": "INFO",
                        "exclude": [ACCESS_LOGGER]},
            "access": {"writer": {"output": "file", "filename": f"{run}/access.log", "roll": False},
                       "encoder": {"format": "json"}, "level": "INFO", "include": [ACCESS_LOGGER]},
        }},
        "apps": {
            "tls": {
                "certificates": {"load_files": [{"certificate": safe_path(leaf.cert_path),
                                                 "key": safe_path(leaf.key_path),
                                                 "format": "pem", "tags": [CERT_TAG]}]},
                "session_tickets": {"disabled": True},
                "disable_ocsp_stapling": True,
            },
            "http": {"servers": servers},
        },
    }


def render(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None, tcp: bool = False,
           upstreams: Mapping[str, str] | None = None) -> str:
    """caddy.json for the plan's h3 bindings; `leaf` (else the plan's) is the certificate;
    `upstreams`, each app site's `host:port`. Deterministic: the same plan renders the same text."""
    return json.dumps(render_config(server_plan, rundir, leaf, tcp, upstreams), indent=2) + "\n"
