"""The one nginx.conf that serves a plan's TCP bindings (`nginx` modes of `modes.MODES`).

Pure: `render` returns the text; `lab.nginx.NginxServer` writes and runs it.

    connection per request  keepalive_timeout 0: `Connection: close`, a TCP+TLS connection
                            per request; ALPN offers http/1.1 only
    persistent (HTTP/1.1)   no `http2` on the listen, so ALPN offers http/1.1
    multiplexed             `listen ... ssl http2`
    cleartext (tls none)    `listen ...:80` without `ssl` (h2: `listen ...:80 http2`, prior
                            knowledge only: the edge proxy's upstream, never a browser),
                            `sendfile off` (see `_server`)

A binding's encoding (`encodings.py`) and site version choose its root and what it
answers from (plain nginx 1.22: no gzip_static, brotli or zstd module is needed):

    identity    the files as stored (exactly the configuration before encodings existed)
    gzip/br/zstd a text file from its sidecar (`try_files $uri.gz $uri`, the suffix from a
                `map` of Accept-Encoding) with `Content-Encoding` and `Vary: Accept-Encoding`;
                its own Content-Type (the sidecar's extension is in no `types`, so
                `default_type ""` leaves it unset and `add_header` names the original's)
    dcz         as zstd, but first `<file>.<id>.dcz` when Accept-Encoding names dcz and
                `Available-Dictionary` maps to a dictionary `id` of the plan; `<path>.pbdict`
                is version 1 of `<path>` (`Use-As-Dictionary`), and version 1's entry page
                lists every dictionary of the site in `Link`
    versions    a site of several versions sends its text files `no-cache`

ETag and Last-Modified are those of the file sent: a sidecar has its original's mtime and
is byte-identical across versions when the original is, so a revalidation in another
version of an unchanged file is a 304 whatever the encoding.

A recorded site (`Site.recording`) is replayed (`_replay`): `location /` looks the request
up in http-level maps keyed by the site (`set $pb_replay_site` in each of its server
blocks), `$host` and `$request_uri` (the target exactly as sent) and rewrites it to one
internal `location = //pb-replay/<index>` per exchange, which carries its status, type
(`types {}` and `default_type`), headers and body file (`try_files`, a sidecar in gzip, br
and zstd bindings), or to `//pb-replay/unrecorded` (404 and `X-Pagebench-Replay`). A map
hash compares without case, so a hit is checked against the recorded target with `if`;
targets recorded in several cases, and those too long for a configuration token (a
prefix and the length), are case-sensitive regex keys instead. A status other than 200
with a body is `return 418` turned into that status by `error_page`, which serves the
body (without validators); a POST for a 200 is served as a GET (`error_page 405`), as the
recording answered it. Loose query matching (`ServerPlan.query`) adds the same pair of
maps keyed by the path alone. `$` in a header value is written `${pb_dollar}` (a `geo`).
The access log keeps `$request_uri`, so logs read as for any site.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from pagebench.core import encodings, modes
from pagebench.core.certs import Leaf
from pagebench.core.sites.recording import REDIRECTS, Exchange
from pagebench.core.servers.plan import (
    COMMON_HEADERS,
    DCZ_VARY,
    DICTIONARY_CACHE_CONTROL,
    HTML_CACHE_CONTROL,
    MIME_TYPES,
    STATIC_CACHE_CONTROL,
    VARY,
    Binding,
    PlanError,
    ServerPlan,
    accepts_pattern,
    dictionary_ids,
    dictionary_links,
    dictionary_paths,
    UNRECORDED_HEADERS,
    entry_file,
    glob_regex,
    literal_regex,
    loosely_replayed,
    negotiated,
    replay_headers,
    replay_sidecar,
    replayed,
    sidecar_pattern,
    text_pattern,
    use_as_dictionary,
)
from pagebench.core.sites.model import Site

#: Tab-separated; `accesslog.parse_nginx_log` reads exactly these fields in this order.
LOG_FIELDS = ("msec", "request_time", "server_addr", "connection", "connection_requests", "server_protocol",
              "ssl_protocol", "status", "body_bytes_sent", "host", "request_uri", "request_method", "bytes_sent")
CACHE_VARIABLE = "$pagebench_cache_control"
SSL_PROTOCOLS = {"1.2": "TLSv1.2", "1.3": "TLSv1.3"}
#: Every response's headers: Cache-Control by path (HTML or static), then the common ones.
HEADERS = (("Cache-Control", CACHE_VARIABLE), *COMMON_HEADERS)
#: The variables of the maps the negotiated and versioned bindings use (`_encoding_maps`).
ENCODED_CACHE_VARIABLE = "$pb_encoded_cache_control"  # HTML no-cache, its sidecars too
VERSIONED_CACHE_VARIABLE = "$pb_versioned_cache_control"  # every text file no-cache
CONTENT_ENCODING_VARIABLE = "$pb_content_encoding"
CONTENT_TYPE_VARIABLE = "$pb_content_type"
VARY_VARIABLE = "$pb_vary"

# Rendering ----------------------------------------------------------------------------


def _path(path: Path | str) -> str:
    text = str(path)
    if any(ch in text for ch in '"\\$;{} \t\n'):
        raise PlanError(f"path {text!r}: must not contain quotes, backslashes, $, ;, braces or spaces")
    return text


def _add_headers(headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    return [f'{indent}add_header {name} "{value}" always;' for name, value in headers]


def _merged(extra: dict[str, str]) -> list[tuple[str, str]]:
    """The common headers, with a site rule's headers replacing same-named ones."""
    override = {name.lower() for name in extra}
    return [(n, v) for n, v in HEADERS if n.lower() not in override] + list(extra.items())


def _server(binding: Binding, site: Site, query: str = "exact") -> list[str]:
    mode = modes.get(binding.mode)
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
    lines.append(f"        root {_path(site.origin_root(binding.origin, binding.version))};")
    if site.recording is not None:
        lines += _replay(binding, site, query)
    elif not negotiated(binding) and site.manifest.versions == 1:
        lines += _add_headers(HEADERS, "        ")
        for glob, headers in site.manifest.headers.items():
            lines.append(f'        location ~ "{glob_regex(glob)}" {{')
            lines += _add_headers(_merged(headers), "            ")
            lines.append("        }")
    else:
        lines += _negotiated(binding, site)
    lines.append("    }")
    return lines


# Encodings and versions -------------------------------------------------------------------------


def _headers_of(binding: Binding, site: Site) -> list[tuple[str, str]]:
    """A negotiated or versioned binding's response headers (in place of HEADERS)."""
    cache = VERSIONED_CACHE_VARIABLE if site.manifest.versions > 1 else ENCODED_CACHE_VARIABLE
    headers = [("Cache-Control", cache), *COMMON_HEADERS]
    if negotiated(binding):
        headers.append(("Vary", VARY_VARIABLE))
    return headers


def _try_files(binding: Binding) -> str:
    """The files a request may be answered from, best first (sidecar suffixes come from
    the maps of Accept-Encoding; an empty one is the file itself)."""
    if binding.encoding == "dcz":
        return "try_files $uri$pb_dcz_first $uri$pb_dcz_then $uri $uri/ =404;"
    if negotiated(binding):
        return f"try_files $uri$pb_accepts_{binding.encoding} $uri $uri/ =404;"
    return ""


def _serving(binding: Binding, headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    """What every location of a negotiated binding repeats (add_header is not inherited by
    a location that has its own): where the file comes from and the headers."""
    lines = [indent + line for line in [_try_files(binding)] if line]
    lines += _add_headers(headers, indent)
    if negotiated(binding):  # on 2xx/3xx only: error pages keep nginx's own
        lines += [f'{indent}add_header Content-Encoding "{CONTENT_ENCODING_VARIABLE}";',
                  f'{indent}add_header Content-Type "{CONTENT_TYPE_VARIABLE}";']
    return lines


def _rule_for(site: Site, path: str) -> dict[str, str]:
    """The headers of the first site rule matching `path` (nginx's first matching regex location)."""
    for glob, headers in site.manifest.headers.items():
        if re.search(glob_regex(glob), path):
            return headers
    return {}


def _negotiated(binding: Binding, site: Site) -> list[str]:
    """The body of a server block that negotiates an encoding or serves a versioned site."""
    base = _headers_of(binding, site)
    lines = []
    if negotiated(binding):
        lines.append('        default_type "";')  # the sidecars' extensions: Content-Type from the map
    lines += _serving(binding, base, "        ")
    if binding.encoding == "dcz":
        host, entry = entry_file(site)
        if binding.version == 1 and host == binding.origin and site.manifest.dictionaries:
            headers = [*_merged_into(base, _rule_for(site, entry)), ("Link", dictionary_links(site))]
            lines.append(f"        location = {_path(entry)} {{")
            lines += _serving(binding, headers, "            ")
            lines.append("        }")
        v1 = _path(site.origin_root(binding.origin))
        for path in dictionary_paths(site, binding.origin):
            lines += [f"        location = {_path(path)}{encodings.DICTIONARY_SUFFIX} {{",
                      f"            root {v1};",
                      f"            try_files {_path(path)} =404;"]
            lines += _add_headers([("Cache-Control", DICTIONARY_CACHE_CONTROL), *COMMON_HEADERS], "            ")
            lines += [f"            add_header Use-As-Dictionary '{use_as_dictionary(path)}' always;", "        }"]
    for glob, headers in site.manifest.headers.items():
        lines.append(f'        location ~ "{glob_regex(glob)}" {{')
        lines += _serving(binding, _merged_into(base, headers), "            ")
        lines.append("        }")
    return lines


def _merged_into(base: Sequence[tuple[str, str]], extra: dict[str, str]) -> list[tuple[str, str]]:
    override = {name.lower() for name in extra}
    return [(n, v) for n, v in base if n.lower() not in override] + list(extra.items())


def _encoding_maps(server_plan: ServerPlan) -> list[str]:
    """The maps negotiated and versioned bindings read: which sidecar Accept-Encoding
    allows, which delta Available-Dictionary names, and the headers of the file sent
    (by its final $uri: `style.css.br` after try_files)."""
    bindings = server_plan.served_by("nginx")
    sites = {s.name: s for s in server_plan.sites}
    if all(not negotiated(b) and sites[b.site].manifest.versions == 1 for b in bindings):
        return []
    text, sidecar = text_pattern(), sidecar_pattern()
    lines = ["    # content encodings and versions (core/encodings.py)"]
    for encoding in encodings.SIDECARS:
        lines += [f"    map $http_accept_encoding $pb_accepts_{encoding.name} {{",
                  f'        "~*{accepts_pattern(encoding.token)}" "{encoding.suffix}";',
                  "    }"]
    lines += ["    map $http_accept_encoding $pb_accepts_dcz {",
              f'        "~*{accepts_pattern("dcz")}" "1";',
              "    }",
              '    map "$pb_accepts_dcz$http_available_dictionary" $pb_dcz {']
    for value, ident in dictionary_ids(server_plan.sites).items():
        lines.append(f'        "~^1{re.escape(value)}$" ".{ident}.dcz";')
    lines += ["    }",
              "    map $pb_dcz $pb_dcz_first {",
              '        "" $pb_accepts_zstd;',
              "        default $pb_dcz;",
              "    }",
              "    map $pb_dcz $pb_dcz_then {",
              '        "" "";',
              "        default $pb_accepts_zstd;",
              "    }",
              f"    map $uri {CONTENT_ENCODING_VARIABLE} {{"]
    for encoding in encodings.SIDECARS:
        lines.append(f'        "~*{text}{re.escape(encoding.suffix)}$" "{encoding.token}";')
    lines += [f'        "~*{text}\\.[0-9a-f]{{16}}\\.dcz$" "dcz";',
              "    }",
              f"    map $uri {VARY_VARIABLE} {{",
              f'        "~*{text}\\.[0-9a-f]{{16}}\\.dcz$" "{DCZ_VARY}";',
              f'        "~*{text}{sidecar}?$" "{VARY}";',
              "    }",
              f"    map $uri {CONTENT_TYPE_VARIABLE} {{"]
    known = []
    for mime, extensions in MIME_TYPES:
        pattern = "|".join(re.escape(ext) for ext in extensions.split())
        known.append(pattern)
        if any(encodings.is_text("." + ext) for ext in extensions.split()):
            lines.append(f'        "~*\\.({pattern}){sidecar}$" "{mime}";')
    lines += [f'        "~*\\.({"|".join(known)})$" "";',
              '        default "application/octet-stream";',
              "    }",
              f"    map $uri {ENCODED_CACHE_VARIABLE} {{",
              f'        default "{STATIC_CACHE_CONTROL}";',
              f'        "~\\.html?{sidecar}?$" "{HTML_CACHE_CONTROL}";',
              "    }",
              f"    map $uri {VERSIONED_CACHE_VARIABLE} {{",
              f'        default "{STATIC_CACHE_CONTROL}";',
              f'        "~*{text}{sidecar}?$" "{HTML_CACHE_CONTROL}";',
              "    }"]
    return lines


# Replaying recorded sites ------------------------------------------------------------------------

#: The internal URIs of the exchanges: `//` is merged out of every request's $uri, so no
#: request reaches them but through the lookup.
REPLAY_PREFIX = "//pb-replay/"
UNRECORDED_URI = REPLAY_PREFIX + "unrecorded"
#: nginx reads a configuration token into a 4 KiB buffer ("too long parameter"): longer map
#: keys become a regex of a prefix and the length.
_MAX_TOKEN = 3800


def _quote(text: str) -> str:
    """A literal in double quotes (map keys, default_type: no variables there)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _complex(text: str) -> str:
    """A literal where nginx expands variables (add_header, return, map values)."""
    return _quote(text).replace("$", "${pb_dollar}")


def _regex_key(key: str) -> str:
    """A case-sensitive map key matching exactly `key`; a too long one by a prefix and the
    length (two such keys alike in both answer as the first)."""
    whole = "~^" + literal_regex(key) + "$"
    if len(_quote(whole)) <= _MAX_TOKEN:
        return whole
    size, cut = len(_quote("~^.{99999}$")), 0
    while size + len(_quote(literal_regex(key[cut]))) - 2 <= _MAX_TOKEN:
        size += len(_quote(literal_regex(key[cut]))) - 2
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
        if counts[key.lower()] > 1 or len(_quote(key)) > _MAX_TOKEN:
            regexes.append((_regex_key(key), index))
            continue
        hashed.append(key)
        checks.append(f"        {_quote(key)} {_complex(recorded)};")
        targets.append(f'        {_quote(key)} "{REPLAY_PREFIX}{index}";')
    for regex, index in regexes:  # after the hash, in recording order; matched with case already
        checks.append(f"        {_quote(regex)} {whole};")
        targets.append(f'        {_quote(regex)} "{REPLAY_PREFIX}{index}";')
    return checks + ["    }"] + targets + ["    }"], hashed


def _replay_maps(server_plan: ServerPlan) -> tuple[list[str], list[str]]:
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


def _replay(binding: Binding, site: Site, query: str) -> list[str]:
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
        lines += _exchange(binding, index, exchange)
    return lines


def _replay_headers(headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    return [f"{indent}add_header {_quote(name)} {_complex(value)} always;" for name, value in headers]


def _exchange(binding: Binding, index: int, exchange: Exchange) -> list[str]:
    """The internal location(s) answering one exchange."""
    uri, indent = f"{REPLAY_PREFIX}{index}", "            "
    lines = [f"        location = {uri} {{", f"{indent}internal;"]
    headers = _replay_headers(replay_headers(binding, exchange), indent)
    if exchange.file is None or exchange.status in REDIRECTS:
        lines += headers
        location = f" {_complex(exchange.location)}" if exchange.status in REDIRECTS and exchange.location else ""
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
    file = _path("/" + (exchange.file or ""))
    lines = [f"{indent}types {{}}", f"{indent}default_type {_quote(exchange.content_type or '')};"]
    if replay_sidecar(binding, exchange):
        lines += [f"{indent}try_files {file}$pb_accepts_{binding.encoding} {file} =404;",
                  f"{indent}add_header Content-Encoding {CONTENT_ENCODING_VARIABLE} always;"]
    else:
        lines.append(f"{indent}try_files {file} =404;")
    return lines + headers


def render(server_plan: ServerPlan, rundir: Path, leaf: Leaf | None = None) -> str:
    """The nginx.conf text for the plan's nginx bindings (h3 is Caddy's); `leaf` (else the
    plan's) is the certificate for every origin."""
    leaf = leaf or server_plan.leaf
    if leaf is None:
        raise PlanError("render: no certificate; pass leaf=tls.leaf(plan.hostnames)")
    run = _path(rundir)
    sites = {site.name: site for site in server_plan.sites}
    log_format = "\\t".join(f"${name}" for name in LOG_FIELDS)
    replay_sizes, replay_maps = _replay_maps(server_plan)
    lines = [
        "# Generated by pagebench.core.servers.nginxconf: do not edit.",
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
        *replay_sizes,
        f"    map $uri {CACHE_VARIABLE} {{",
        f'        default "{STATIC_CACHE_CONTROL}";',
        f'        "~\\.html?$" "{HTML_CACHE_CONTROL}";',
        "    }",
        *_encoding_maps(server_plan),
        *replay_maps,
    ]
    for binding in server_plan.served_by("nginx"):
        lines += [""] + _server(binding, sites[binding.site], server_plan.query)
    lines.append("}")
    return "\n".join(lines) + "\n"
