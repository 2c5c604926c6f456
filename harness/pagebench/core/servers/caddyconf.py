"""The Caddy configuration (JSON) that serves a plan's h3 bindings over QUIC.

Pure: `render` returns the configuration text; `lab.caddy.CaddyServer` writes and runs it.

Caddy is the HTTP/3 server because nginx 1.22 has none: the release
`harness/bootstrap install` builds (`lab.caddy.CADDY`; Debian 12's 2.6.2 has a quic-go that
loses half of Chromium's ClientHello). The configuration also loads in 2.6. Each h3
binding is its own Caddy server on its own address (`Binding.ip` and `ip6`, UDP 443),
speaking HTTP/3 only, with the explicit certificate nginx uses and TLS 1.3 (QUIC has no
other). Nothing is implicit: no admin endpoint, no automatic HTTPS, no config autosave,
storage inside the run directory, no session tickets (every connection is a full
handshake, as with nginx). The responses carry the headers nginx's configuration sends
(`serverplan.COMMON_HEADERS`, the HTML/static Cache-Control split, site header rules,
the same MIME types); `file_server` gives ETag and Last-Modified, so a warm load's HTML
revalidates with a 304.

A binding's encoding and site version are served as nginx serves them (`nginxconf`):
gzip, br and zstd by `file_server`'s `precompressed` restricted to that one encoding, and
only for text files (the route before the plain `file_server`); dcz as zstd after a route
that answers `<file>.<id>.dcz` when Accept-Encoding names dcz and the `map` of
`Available-Dictionary` gives an `id` whose delta exists; `<path>.pbdict` routes for the
dictionaries; `Link` on version 1's entry page; text `no-cache` in versioned sites. With
`tcp=True` every server also speaks h1 and h2 on TCP (the same routes): for checks with a
client that has no HTTP/3 (curl 7.88 here); never in a run.

A recorded site (`Site.recording`) is replayed (`replay_routes`): a `map` of
`{http.request.uri}` on the binding's host gives the exchange's index (exact targets
first, then, with loose query matching, each recorded path as a regex), a `vars` handler
keeps it, and one terminal route per exchange answers it: `file_server` of its body file
after a `rewrite` (a sidecar in gzip, br and zstd bindings; `status_code` for a status
other than 200, then without validators) or `static_response` (redirects, no body). The
rest is 404 with `X-Pagebench-Replay`. Caddy sees the target as Go re-encodes it
(`go_request_uri`) and logs it as sent. Every other method is served as a GET, as nginx
does. Braces in recorded values are escaped (Caddy expands `{placeholders}`). Where the
recording has no Content-Type, nginx sends none and Caddy its file's extension's
(`.bin`: application/octet-stream; without a type set, Go would sniff one).

The access log is JSON, one line per request. Each server logs under its own logger,
`http.log.access.<LOGGER_PREFIX><binding index>`, so a record names the binding and
thus the server address it arrived at (`accesslog.parse_caddy_log`).
"""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes

from pagebench.core import encodings, modes
from pagebench.core.certs import Leaf
from pagebench.core.sites.recording import REDIRECTS, Exchange
from pagebench.core.servers.plan import (
    COMMON_HEADERS,
    DCZ_VARY,
    DICTIONARY_CACHE_CONTROL,
    HTML_CACHE_CONTROL,
    INDEX,
    MIME_TYPES,
    QUIC_PORT,
    STATIC_CACHE_CONTROL,
    UNRECORDED_HEADERS,
    Binding,
    PlanError,
    ServerPlan,
    accepts_pattern,
    dictionary_ids,
    dictionary_links,
    dictionary_paths,
    entry_file,
    glob_regex,
    literal_regex,
    loosely_replayed,
    negotiated,
    replay_headers,
    replay_sidecar,
    replay_vary,
    replayed,
    text_pattern,
    use_as_dictionary,
)
from pagebench.core.sites.model import Site

ACCESS_LOGGER = "http.log.access"
LOGGER_PREFIX = "pb"
CERT_TAG = "pagebench"
DEFAULT_TYPE = "application/octet-stream"
#: What nginx's `map $uri` sends `no-cache` for; a directory path is served its
#: index.html (nginx matches the map after the index redirect).
HTML_PATH = r"(\.html?|/)$"
#: The placeholder the `map` of Available-Dictionary sets: the id of a delta's dictionary.
DICTIONARY_PLACEHOLDER = "{pb_dictionary_id}"
#: The stable line Caddy logs once every app has started (all sockets bound).
READY_MESSAGE = "serving initial configuration"


def _path(path: Path | str) -> str:
    """Caddy expands `{placeholders}` in paths: refuse braces (and control characters)."""
    text = str(path)
    if any(ch in text for ch in "{}") or any(ord(ch) < 32 for ch in text):
        raise PlanError(f"path {text!r}: must not contain braces or control characters")
    return text


def logger_name(index: int) -> str:
    """The access logger suffix of the binding with this index."""
    return f"{LOGGER_PREFIX}{index}"


def _set_headers(headers: dict[str, str]) -> dict[str, Any]:
    return {"handler": "headers", "response": {"set": {name: [value] for name, value in headers.items()}}}


def _route(handler: dict[str, Any], pattern: str | None = None, group: str | None = None) -> dict[str, Any]:
    route: dict[str, Any] = {}
    if group is not None:
        route["group"] = group
    if pattern is not None:
        route["match"] = [{"path_regexp": {"pattern": pattern}}]
    route["handle"] = [handler]
    return route


def _mime_pattern(extensions: str) -> str:
    """nginx's `types` match the extension case-insensitively."""
    return r"(?i)\.(" + "|".join(re.escape(ext) for ext in extensions.split()) + r")$"


def _mime_of(path: str) -> str:
    suffix = path.rsplit(".", 1)[-1].lower()
    return next((mime for mime, extensions in MIME_TYPES if suffix in extensions.split()), DEFAULT_TYPE)


def _file_server(root: Path, encoding: str | None = None) -> dict[str, Any]:
    handler: dict[str, Any] = {"handler": "file_server", "root": _path(root), "index_names": [INDEX]}
    if encoding is not None:
        handler["precompressed"] = {encoding: {}}
        handler["precompressed_order"] = [encoding]
    return handler


def _negotiated_routes(site: Site, binding: Binding) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The routes an encoding adds: (before the site rules: dictionaries and the entry's
    Link; after them: the delta and the text files' sidecars)."""
    root, text = site.origin_root(binding.origin, binding.version), f"(?i){text_pattern()}$"
    before: list[dict[str, Any]] = []
    after: list[dict[str, Any]] = []
    if binding.encoding == "dcz":
        for path in dictionary_paths(site, binding.origin):
            before.append({"match": [{"path": [path + encodings.DICTIONARY_SUFFIX]}], "handle": [
                _set_headers({"Cache-Control": DICTIONARY_CACHE_CONTROL, "Content-Type": _mime_of(path),
                              "Use-As-Dictionary": use_as_dictionary(path)}),
                {"handler": "rewrite", "uri": path},
                _file_server(site.origin_root(binding.origin))]})
        host, entry = entry_file(site)
        if binding.version == 1 and host == binding.origin and site.manifest.dictionaries:
            paths = [entry] + ([entry.removesuffix(INDEX)] if entry.endswith("/" + INDEX) else [])
            before.append({"match": [{"path": paths}], "handle": [_set_headers({"Link": dictionary_links(site)})]})
        after.append(_route({"handler": "map", "source": "{http.request.header.Available-Dictionary}",
                             "destinations": [DICTIONARY_PLACEHOLDER],
                             "mappings": [{"input": value, "outputs": [ident]}
                                          for value, ident in dictionary_ids([site]).items()],
                             "defaults": [""]}))
        delta = "." + DICTIONARY_PLACEHOLDER + ".dcz"
        after.append({"match": [{
            "header_regexp": {"Accept-Encoding": {"pattern": "(?i)" + accepts_pattern("dcz")}},
            "file": {"root": _path(root), "try_files": ["{http.request.uri.path}" + delta,
                                                        "{http.request.uri.path}" + INDEX + delta]},
        }], "handle": [
            {"handler": "rewrite", "uri": "{http.matchers.file.relative}"},
            # deferred: set when the response starts, over the Vary file_server adds
            {"handler": "headers", "response": {"set": {"Content-Encoding": ["dcz"], "Vary": [DCZ_VARY]},
                                                "deferred": True}},
            _file_server(root)]})
    token = encodings.get(encodings.get(binding.encoding).fallback or binding.encoding).token
    after.append({"match": [{"path_regexp": {"pattern": text}}, {"path_regexp": {"pattern": "/$"}}],
                  "handle": [_file_server(root, token)]})
    return before, after


def routes(site: Site, origin: str, binding: Binding | None = None) -> list[dict[str, Any]]:
    """Headers first (each route sets, later ones override), then the files. Site rules
    form one group, so only the first matching rule applies, like nginx's regex locations.
    `binding` (else identity, version 1) chooses the encoding and the version's root."""
    binding = binding or Binding("1.3", "h3", site.name, origin, 0)
    common = dict(COMMON_HEADERS)
    out = [_route(_set_headers({"Cache-Control": STATIC_CACHE_CONTROL, **common, "Content-Type": DEFAULT_TYPE}))]
    for mime, extensions in MIME_TYPES:
        pattern = _mime_pattern(extensions)
        if mime == "text/html":
            pattern = f"{pattern}|/$"
        out.append(_route(_set_headers({"Content-Type": mime}), pattern))
    out.append(_route(_set_headers({"Cache-Control": HTML_CACHE_CONTROL}), HTML_PATH))
    if site.manifest.versions > 1:
        out.append(_route(_set_headers({"Cache-Control": HTML_CACHE_CONTROL}), f"(?i){text_pattern()}$"))
    before, after = _negotiated_routes(site, binding) if negotiated(binding) else ([], [])
    out += before
    for glob, headers in site.manifest.headers.items():
        out.append(_route(_set_headers(dict(headers)), glob_regex(glob), group="site-rules"))
    out += after
    out.append(_route(_file_server(site.origin_root(origin, binding.version))))
    return out


# Replaying recorded sites ------------------------------------------------------------------------

#: The `map` destination and the variable holding the exchange's index ("unrecorded": none).
REPLAY_PLACEHOLDER = "{pb_replay}"
REPLAY_VARIABLE = "pb_exchange"
UNRECORDED = "unrecorded"
#: What Go leaves as sent in a request's path (`url.URL.EscapedPath`: RawPath when valid).
_GO_PATH_KEPT = set(string.ascii_letters + string.digits + "-_.~$&+,/:;=@!'()*[]%")
_GO_PATH_SAFE = set(string.ascii_letters + string.digits + "-_.~$&+,/:;=@")


def go_request_uri(target: str) -> str:
    """`{http.request.uri}` for a request target: Go keeps the path as sent unless it holds
    a character its URL parser would escape, then escapes the decoded path itself; the
    query stays as sent."""
    path, mark, query = target.partition("?")
    if not set(path) <= _GO_PATH_KEPT:
        path = "".join(chr(b) if chr(b) in _GO_PATH_SAFE else f"%{b:02X}" for b in unquote_to_bytes(path))
    return path + mark + query


def _literal(text: str) -> str:
    """`text` where Caddy expands placeholders: braces escaped."""
    return text.replace("{", "\\{").replace("}", "\\}")


def _replay_map(site: Site, binding: Binding, query: str) -> dict[str, Any]:
    """The exchange index of a request target: exact targets, then (loose) recorded paths."""
    mappings: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, exchange in replayed(site, binding.origin):
        target = go_request_uri(exchange.target)
        if target not in seen:  # targets Go reads alike: the first recorded answers
            seen.add(target)
            mappings.append({"input": target, "outputs": [str(index)]})
    if query == "loose":
        for path, index in loosely_replayed(site, binding.origin):
            regex = f"^{literal_regex(go_request_uri(path))}(\\?|$)"
            if regex not in seen:
                seen.add(regex)
                mappings.append({"input_regexp": regex, "outputs": [str(index)]})
    return {"handler": "map", "source": "{http.request.uri}", "destinations": [REPLAY_PLACEHOLDER],
            "mappings": mappings, "defaults": [UNRECORDED]}


def _exchange_route(site: Site, binding: Binding, index: int, exchange: Exchange) -> dict[str, Any]:
    """The terminal route answering one exchange."""
    headers = dict(replay_headers(binding, exchange))
    handlers: list[dict[str, Any]] = []
    if exchange.file is None or exchange.status in REDIRECTS:
        response: dict[str, Any] = {"handler": "static_response", "status_code": exchange.status}
        if exchange.status in REDIRECTS and exchange.location:
            response["headers"] = {"Location": [_literal(exchange.location)]}
        handlers += [_set_headers({name: _literal(value) for name, value in headers.items()}), response]
    else:
        vary = replay_vary(exchange, True)  # file_server always adds Vary: Accept-Encoding
        headers.pop("Vary", None)
        if exchange.content_type:
            headers["Content-Type"] = exchange.content_type
        deferred: dict[str, Any] = {"set": {"Vary": [_literal(vary or "")]}, "deferred": True}
        if exchange.status != 200:
            deferred["delete"] = ["Etag", "Last-Modified"]
        server = _file_server(site.origin_root(binding.origin),
                              encodings.get(binding.encoding).token if replay_sidecar(binding, exchange) else None)
        if exchange.status != 200:
            server["status_code"] = exchange.status
        handlers += [_set_headers({name: _literal(value) for name, value in headers.items()}),
                     {"handler": "headers", "response": deferred},
                     {"handler": "rewrite", "uri": "/" + _path(exchange.file)}, server]
    return {"match": [{"vars": {REPLAY_VARIABLE: [str(index)]}}], "handle": handlers, "terminal": True}


def replay_routes(site: Site, binding: Binding, query: str = "exact") -> list[dict[str, Any]]:
    """A recorded site's routes on one binding: the lookup, each exchange, the rest 404."""
    routes_ = [{"match": [{"not": [{"method": ["GET", "HEAD"]}]}],
                "handle": [{"handler": "rewrite", "method": "GET"}]},
               {"match": [{"host": [binding.origin]}],
                "handle": [_replay_map(site, binding, query),
                           {"handler": "vars", REPLAY_VARIABLE: REPLAY_PLACEHOLDER}]}]
    routes_ += [_exchange_route(site, binding, index, exchange) for index, exchange in replayed(site, binding.origin)]
    routes_.append({"handle": [_set_headers(dict(UNRECORDED_HEADERS)),
                               {"handler": "static_response", "status_code": 404}]})
    return routes_


def render_config(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None,
                  tcp: bool = False) -> dict[str, Any]:
    """The configuration as a JSON-ready dict (see `render`)."""
    leaf = leaf or server_plan.leaf
    if leaf is None:
        raise PlanError("render: no certificate; pass leaf=tls.leaf(plan.hostnames)")
    bindings = server_plan.served_by("caddy")
    if not bindings:
        raise PlanError("caddy: the plan has no h3 bindings (mode h3 with tls 1.3)")
    run = _path(rundir)
    sites = {site.name: site for site in server_plan.sites}
    servers = {}
    for b in bindings:
        servers[logger_name(b.index)] = {
            "listen": [f"{b.ip}:{QUIC_PORT}", f"[{b.ip6}]:{QUIC_PORT}"],
            # QUIC only: UDP 443 alone (Caddy 2.6 also bound TCP 443 and served nothing there).
            # Caddy names its protocols as ALPN does.
            "protocols": ["h1", "h2", *modes.get(b.mode).alpn] if tcp else list(modes.get(b.mode).alpn),
            "automatic_https": {"disable": True},
            "tls_connection_policies": [{
                "certificate_selection": {"any_tag": [CERT_TAG]},
                "protocol_min": "tls1.3", "protocol_max": "tls1.3",
            }],
            "logs": {"default_logger_name": logger_name(b.index)},
            "routes": (replay_routes(sites[b.site], b, server_plan.query) if sites[b.site].recording is not None
                       else routes(sites[b.site], b.origin, b)),
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
                "certificates": {"load_files": [{"certificate": _path(leaf.cert_path), "key": _path(leaf.key_path),
                                                 "format": "pem", "tags": [CERT_TAG]}]},
                "session_tickets": {"disabled": True},
                "disable_ocsp_stapling": True,
            },
            "http": {"servers": servers},
        },
    }


def render(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None, tcp: bool = False) -> str:
    """caddy.json for the plan's h3 bindings; `leaf` (else the plan's) is the certificate.
    Deterministic: the same plan renders the same text."""
    return json.dumps(render_config(server_plan, rundir, leaf, tcp), indent=2) + "\n"
