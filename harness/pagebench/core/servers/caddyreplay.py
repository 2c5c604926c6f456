"""Caddy's side of a recorded site (`Site.recording`), replayed rather than served by path.

A `map` of `{http.request.uri}` on the binding's host gives the exchange's index (exact
targets first, then, with loose query matching, each recorded path as a regex), a `vars`
handler keeps it, and one terminal route per exchange answers it: `file_server` of its
body file after a `rewrite` (a sidecar in gzip, br and zstd bindings; `status_code` for
a status other than 200, then without validators) or `static_response` (redirects, no
body). The rest is 404 with `X-Pagebench-Replay`. Caddy sees the target as Go re-encodes
it (`go_request_uri`) and logs it as sent. Every other method is served as a GET, as
nginx does. Braces in recorded values are escaped (Caddy expands `{placeholders}`). Where
the recording has no Content-Type, nginx sends none and Caddy its file's extension's
(`.bin`: application/octet-stream; without a type set, Go would sniff one).
"""

from __future__ import annotations

import string
from typing import Any
from urllib.parse import unquote_to_bytes

from pagebench.core.servers.binding import Binding
from pagebench.core.servers.caddyroutes import file_server, safe_path, set_headers
from pagebench.core.servers.replay import UNRECORDED_HEADERS, literal_regex, loosely_replayed, replay_headers
from pagebench.core.servers.replay import replay_sidecar, replay_vary, replayed
from pagebench.core.sites.model import Site
from pagebench.core.sites.recording import REDIRECTS, Exchange

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
        handlers += [set_headers({name: _literal(value) for name, value in headers.items()}), response]
    else:
        vary = replay_vary(exchange, True)  # file_server always adds Vary: Accept-Encoding
        headers.pop("Vary", None)
        if exchange.content_type:
            headers["Content-Type"] = exchange.content_type
        deferred: dict[str, Any] = {"set": {"Vary": [_literal(vary or "")]}, "deferred": True}
        if exchange.status != 200:
            deferred["delete"] = ["Etag", "Last-Modified"]
        server = file_server(site.origin_root(binding.origin),
                             binding.encoding.token if replay_sidecar(binding, exchange) else None)
        if exchange.status != 200:
            server["status_code"] = exchange.status
        handlers += [set_headers({name: _literal(value) for name, value in headers.items()}),
                     {"handler": "headers", "response": deferred},
                     {"handler": "rewrite", "uri": "/" + safe_path(exchange.file)}, server]
    return {"match": [{"vars": {REPLAY_VARIABLE: [str(index)]}}], "handle": handlers, "terminal": True}


def replay_routes(site: Site, binding: Binding, query: str = "exact") -> list[dict[str, Any]]:
    """A recorded site's routes on one binding: the lookup, each exchange, the rest 404."""
    routes_ = [{"match": [{"not": [{"method": ["GET", "HEAD"]}]}],
                "handle": [{"handler": "rewrite", "method": "GET"}]},
               {"match": [{"host": [binding.origin]}],
                "handle": [_replay_map(site, binding, query),
                           {"handler": "vars", REPLAY_VARIABLE: REPLAY_PLACEHOLDER}]}]
    routes_ += [_exchange_route(site, binding, index, exchange) for index, exchange in replayed(site, binding.origin)]
    routes_.append({"handle": [set_headers(dict(UNRECORDED_HEADERS)),
                               {"handler": "static_response", "status_code": 404}]})
    return routes_
