"""nginx's side of a recorded site (`Site.recording`), replayed rather than served by path.

`location /` looks the request up in http-level maps keyed by the site (`set
$pb_replay_site` in each of its server blocks), `$host` and `$request_uri` (the target
exactly as sent) and rewrites it to one internal `location = //pb-replay/<index>` per
exchange, which carries its status, type (`types {}` and `default_type`), headers and
body file (`try_files`, a sidecar in gzip, br and zstd bindings), or to
`//pb-replay/unrecorded` (404 and `X-Pagebench-Replay`). A map hash compares without
case, so a hit is checked against the recorded target with `if`; targets recorded in
several cases, and those too long for a configuration token (a prefix and the length),
are case-sensitive regex keys instead. A status other than 200 with a body is `return
418` turned into that status by `error_page`, which serves the body (without
validators); a POST for a 200 is served as a GET (`error_page 405`), as the recording
answered it. Loose query matching (`ServerPlan.query`) adds the same pair of maps keyed
by the path alone. `$` in a header value is written `${pb_dollar}` (a `geo`). The access
log keeps `$request_uri`, so logs read as for any site.

A response with server think time (`Recording.delay_ms`) is answered after it: its
`//pb-replay/<index>` sleeps (the echo module's `echo_sleep`, a timer: the worker goes on
serving others) and then hands the request to `//pb-replay/<index>.answer`, which
answers as above. The connection is open and the request read meanwhile; only the
response (its first byte) waits, as on the server that thought.
"""

from __future__ import annotations

from collections.abc import Sequence

from pagebench.core.servers.binding import Binding
from pagebench.core.servers.nginxencoding import CONTENT_ENCODING_VARIABLE, accepts_variable
from pagebench.core.servers.nginxtext import literal, quoted, safe_path
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.servers.replay import UNRECORDED_HEADERS, literal_regex, loosely_replayed, replay_headers
from pagebench.core.servers.replay import replay_sidecar, replayed
from pagebench.core.sites.model import Site
from pagebench.core.sites.recording import REDIRECTS, Exchange

#: The internal URIs of the exchanges: `//` is merged out of every request's $uri, so no
#: request reaches them but through the lookup.
REPLAY_PREFIX = "//pb-replay/"
UNRECORDED_URI = REPLAY_PREFIX + "unrecorded"
#: The location a delayed exchange is answered from, after its sleep.
ANSWER_SUFFIX = ".answer"
#: Where Debian's libnginx-mod-http-echo puts the echo module (`echo_sleep`, `echo_exec`).
ECHO_MODULE = "/usr/lib/nginx/modules/ngx_http_echo_module.so"
#: nginx reads a configuration token into a 4 KiB buffer ("too long parameter"): longer map
#: keys become a regex of a prefix and the length.
_MAX_TOKEN = 3800


def _regex_key(key: str) -> str:
    """A case-sensitive map key matching exactly `key`; a too long one by a prefix and the
    length (two such keys alike in both answer as the first)."""
    whole = "~^" + literal_regex(key) + "$"
    if len(quoted(whole)) <= _MAX_TOKEN:
        return whole
    size, cut = len(quoted("~^.{99999}$")), 0
    while size + len(quoted(literal_regex(key[cut]))) - 2 <= _MAX_TOKEN:
        size += len(quoted(literal_regex(key[cut]))) - 2
        cut += 1
    return f"~^{literal_regex(key[:cut])}.{{{len(key) - cut}}}$"


def _lookup_maps(source: str, whole: str, check: str, target: str,
                 rows: list[tuple[str, str, int]]) -> tuple[list[str], list[str]]:
    """Two maps of `source` (rows: key, what the request's `whole` must equal, exchange
    index): `check` (the recorded text, to compare with case) and `target` (the internal
    URI); and the hash keys (for the sizes)."""
    counts: dict[str, int] = {}
    for key, _, _ in rows:
        counts[key.lower()] = counts.get(key.lower(), 0) + 1
    checks, targets, hashed = [f'    map "{source}" {check} {{'], [f'    map "{source}" {target} {{'], []
    regexes: list[tuple[str, int]] = []
    for key, recorded, index in rows:
        if counts[key.lower()] > 1 or len(quoted(key)) > _MAX_TOKEN:
            regexes.append((_regex_key(key), index))
            continue
        hashed.append(key)
        checks.append(f"        {quoted(key)} {literal(recorded)};")
        targets.append(f'        {quoted(key)} "{REPLAY_PREFIX}{index}";')
    for regex, index in regexes:  # after the hash, in recording order; matched with case already
        checks.append(f"        {quoted(regex)} {whole};")
        targets.append(f'        {quoted(regex)} "{REPLAY_PREFIX}{index}";')
    return checks + ["    }"] + targets + ["    }"], hashed


def replay_maps(server_plan: ServerPlan) -> tuple[list[str], list[str]]:
    """The lookups of every recorded site nginx serves (see the module docstring): the
    hash sizes (before the first map of the http block: it fixes them) and the maps."""
    served = {b.site for b in server_plan.served_by("nginx")}
    sites = [s for s in server_plan.sites if s.recording is not None and s.name in served]
    if not sites:
        return [], []
    exact, loose = [], []
    for site in sites:
        for origin in site.origins:
            exact += [(f"{site.name} {origin}{e.target}", e.target, i) for i, e in replayed(site, origin)]
            loose += [(f"{site.name} {origin}{path}", path, i) for path, i in loosely_replayed(site, origin)]
    checks, hashed = _lookup_maps("$pb_replay_site $host$request_uri", "$request_uri", "$pb_replay_target",
                                  "$pb_replay", exact)
    if server_plan.query == "loose":
        checks += ["    map $request_uri $pb_request_path {",
                   '        "~^([^?]*)" $1;',
                   "    }"]
        more, paths = _lookup_maps("$pb_replay_site $host$pb_request_path", "$pb_request_path",
                                   "$pb_replay_loose_path", "$pb_replay_loose", loose)
        checks, hashed = checks + more, hashed + paths
    longest = max((len(key) for key in hashed), default=0)
    bucket = 128
    while bucket < longest + 32:
        bucket *= 2
    sizes = ["    # recorded sites: every key in one bucket (core/recording.py)",
             f"    map_hash_bucket_size {bucket};",
             f"    map_hash_max_size {max(2048, 4 * len(hashed))};"]
    target = max(len(e.target) for site in sites for e in site.recording.exchanges)  # type: ignore[union-attr]
    if target > 6000:  # the request line must fit one of these buffers (default 8k)
        size = 8
        while size * 1024 < target + 2048:
            size *= 2
        sizes.append(f"    large_client_header_buffers 4 {size}k;")
    return sizes, ["    # recorded sites (core/recording.py)", "    geo $pb_dollar {", '        default "$";', "    }",
                   *checks]


def replay_body(binding: Binding, site: Site, query: str) -> list[str]:
    """The body of a recorded site's server block: the lookup, the unrecorded answer and
    one internal location per exchange of its origin."""
    lines = ["        absolute_redirect off;",
             f'        set $pb_replay_site "{site.name}";',
             "        location / {",
             "            if ($pb_replay_target = $request_uri) {",
             "                rewrite ^ $pb_replay last;",
             "            }"]
    if query == "loose":
        lines += ["            if ($pb_replay_loose_path = $pb_request_path) {",
                  "                rewrite ^ $pb_replay_loose last;",
                  "            }"]
    lines += [f"            rewrite ^ {UNRECORDED_URI} last;",
              "        }",
              f"        location = {UNRECORDED_URI} {{",
              "            internal;",
              *_replay_headers(UNRECORDED_HEADERS, "            "),
              "            return 404;",
              "        }"]
    for index, exchange in replayed(site, binding.origin):
        lines += _exchange(binding, index, exchange, site.recording.delay_ms(exchange) if site.recording else 0.0)
    return lines


def _replay_headers(headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    return [f"{indent}add_header {quoted(name)} {literal(value)} always;" for name, value in headers]


def needs_echo(server_plan: ServerPlan) -> bool:
    """Whether nginx delays any response of the plan (and so loads the echo module)."""
    served = {b.site for b in server_plan.served_by("nginx")}
    return any(round(site.recording.delay_ms(e)) > 0 for site in server_plan.sites
               if site.recording is not None and site.name in served for e in site.recording.exchanges)


def _exchange(binding: Binding, index: int, exchange: Exchange, delay_ms: float = 0.0) -> list[str]:
    """The internal location(s) answering one exchange, after `delay_ms` of think time."""
    uri, indent = f"{REPLAY_PREFIX}{index}", "            "
    lines = []
    if round(delay_ms) > 0:  # echo_sleep takes seconds to 3 decimals
        lines += [f"        location = {uri} {{", f"{indent}internal;", f"{indent}echo_sleep {round(delay_ms) / 1000:.3f};",
                  f"{indent}echo_exec {uri}{ANSWER_SUFFIX};", "        }"]
        uri += ANSWER_SUFFIX
    lines += [f"        location = {uri} {{", f"{indent}internal;"]
    headers = _replay_headers(replay_headers(binding, exchange), indent)
    if exchange.file is None or exchange.status in REDIRECTS:
        lines += headers
        location = f" {literal(exchange.location)}" if exchange.status in REDIRECTS and exchange.location else ""
        lines += [f"{indent}return {exchange.status}{location};", "        }"]
    elif exchange.status == 200:
        lines += _body(binding, exchange, headers, indent)
        lines += [f"{indent}error_page 405 =200 {uri};", "        }"]
    else:
        lines += [f"{indent}error_page 418 ={exchange.status} {uri}.body;", f"{indent}return 418;", "        }",
                  f"        location = {uri}.body {{", f"{indent}internal;", f"{indent}etag off;"]
        lines += _body(binding, exchange, headers, indent) + ["        }"]
    return lines


def _body(binding: Binding, exchange: Exchange, headers: list[str], indent: str) -> list[str]:
    """Serving an exchange's body file: its recorded type whatever the file sent, the
    binding's sidecar when Accept-Encoding allows it."""
    file = safe_path("/" + (exchange.file or ""))
    lines = [f"{indent}types {{}}", f"{indent}default_type {quoted(exchange.content_type or '')};"]
    if replay_sidecar(binding, exchange):
        lines += [f"{indent}try_files {file}{accepts_variable(binding.encoding)} {file} =404;",
                  f"{indent}add_header Content-Encoding {CONTENT_ENCODING_VARIABLE} always;"]
    else:
        lines.append(f"{indent}try_files {file} =404;")
    return lines + headers
