"""nginx's side of content encodings and site versions: the http-level maps and the
body of a server block whose binding negotiates an encoding or serves a versioned site
(plain nginx 1.22: no gzip_static, brotli or zstd module is needed).

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
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pagebench.core import encodings
from pagebench.core.encodings import Encoding
from pagebench.core.servers.binding import Binding
from pagebench.core.servers.headers import COMMON_HEADERS, HTML_CACHE_CONTROL, MIME_TYPES, STATIC_CACHE_CONTROL
from pagebench.core.servers.headers import glob_regex, merged
from pagebench.core.servers.negotiation import DCZ_VARY, DICTIONARY_CACHE_CONTROL, VARY, accepts_pattern
from pagebench.core.servers.negotiation import dictionary_ids, dictionary_links, dictionary_paths, entry_file
from pagebench.core.servers.negotiation import negotiated, sidecar_pattern, text_pattern, use_as_dictionary
from pagebench.core.servers.nginxtext import add_headers, safe_path
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.sites.model import Site

#: The variables of the maps the negotiated and versioned bindings use (`encoding_maps`).
ENCODED_CACHE_VARIABLE = "$pb_encoded_cache_control"  # HTML no-cache, its sidecars too
VERSIONED_CACHE_VARIABLE = "$pb_versioned_cache_control"  # every text file no-cache
CONTENT_ENCODING_VARIABLE = "$pb_content_encoding"
CONTENT_TYPE_VARIABLE = "$pb_content_type"
VARY_VARIABLE = "$pb_vary"


def accepts_variable(encoding: Encoding) -> str:
    """The variable holding a sidecar's suffix when Accept-Encoding allows `encoding`, else ""."""
    return f"$pb_accepts_{encoding.name}"


def _headers_of(binding: Binding, site: Site) -> list[tuple[str, str]]:
    """A negotiated or versioned binding's response headers (in place of nginxconf.HEADERS)."""
    cache = VERSIONED_CACHE_VARIABLE if site.manifest.versions > 1 else ENCODED_CACHE_VARIABLE
    headers = [("Cache-Control", cache), *COMMON_HEADERS]
    if negotiated(binding):
        headers.append(("Vary", VARY_VARIABLE))
    return headers


def _try_files(binding: Binding) -> str:
    """The files a request may be answered from, best first (sidecar suffixes come from
    the maps of Accept-Encoding; an empty one is the file itself)."""
    if binding.encoding.dictionary:
        return "try_files $uri$pb_dcz_first $uri$pb_dcz_then $uri $uri/ =404;"
    if negotiated(binding):
        return f"try_files $uri{accepts_variable(binding.encoding)} $uri $uri/ =404;"
    return ""


def _serving(binding: Binding, headers: Sequence[tuple[str, str]], indent: str) -> list[str]:
    """What every location of a negotiated binding repeats (add_header is not inherited by
    a location that has its own): where the file comes from and the headers."""
    lines = [indent + line for line in [_try_files(binding)] if line]
    lines += add_headers(headers, indent)
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


def negotiated_body(binding: Binding, site: Site) -> list[str]:
    """The body of a server block that negotiates an encoding or serves a versioned site."""
    base = _headers_of(binding, site)
    lines = []
    if negotiated(binding):
        lines.append('        default_type "";')  # the sidecars' extensions: Content-Type from the map
    lines += _serving(binding, base, "        ")
    if binding.encoding.dictionary:
        host, entry = entry_file(site)
        if binding.version == 1 and host == binding.origin and site.manifest.dictionaries:
            headers = [*merged(base, _rule_for(site, entry)), ("Link", dictionary_links(site))]
            lines.append(f"        location = {safe_path(entry)} {{")
            lines += _serving(binding, headers, "            ")
            lines.append("        }")
        v1 = safe_path(site.origin_root(binding.origin))
        for path in dictionary_paths(site, binding.origin):
            lines += [f"        location = {safe_path(path)}{encodings.DICTIONARY_SUFFIX} {{",
                      f"            root {v1};",
                      f"            try_files {safe_path(path)} =404;"]
            lines += add_headers([("Cache-Control", DICTIONARY_CACHE_CONTROL), *COMMON_HEADERS], "            ")
            lines += [f"            add_header Use-As-Dictionary '{use_as_dictionary(path)}' always;", "        }"]
    for glob, headers in site.manifest.headers.items():
        lines.append(f'        location ~ "{glob_regex(glob)}" {{')
        lines += _serving(binding, merged(base, headers), "            ")
        lines.append("        }")
    return lines


def encoding_maps(server_plan: ServerPlan) -> list[str]:
    """The maps negotiated and versioned bindings read: which sidecar Accept-Encoding
    allows, which delta Available-Dictionary names, and the headers of the file sent
    (by its final $uri: `style.css.br` after try_files). None when no binding needs them."""
    bindings = server_plan.served_by("nginx")
    sites = {s.name: s for s in server_plan.sites}
    if all(not negotiated(b) and sites[b.site].manifest.versions == 1 for b in bindings):
        return []
    text, sidecar = text_pattern(), sidecar_pattern()
    lines = ["    # content encodings and versions (core/encodings.py)"]
    for encoding in encodings.SIDECARS:
        lines += [f"    map $http_accept_encoding {accepts_variable(encoding)} {{",
                  f'        "~*{accepts_pattern(encoding.token)}" "{encoding.suffix}";',
                  "    }"]
    delta = encodings.DCZ
    lines += [f"    map $http_accept_encoding {accepts_variable(delta)} {{",
              f'        "~*{accepts_pattern(delta.token)}" "1";',
              "    }",
              f'    map "{accepts_variable(delta)}$http_available_dictionary" $pb_dcz {{']
    for value, ident in dictionary_ids(server_plan.sites).items():
        lines.append(f'        "~^1{re.escape(value)}$" ".{ident}{delta.suffix}";')
    lines += ["    }",
              "    map $pb_dcz $pb_dcz_first {",
              f'        "" {accepts_variable(delta.plain)};',
              "        default $pb_dcz;",
              "    }",
              "    map $pb_dcz $pb_dcz_then {",
              '        "" "";',
              f"        default {accepts_variable(delta.plain)};",
              "    }",
              f"    map $uri {CONTENT_ENCODING_VARIABLE} {{"]
    for encoding in encodings.SIDECARS:
        lines.append(f'        "~*{text}{re.escape(encoding.suffix)}$" "{encoding.token}";')
    lines += [f'        "~*{text}\\.[0-9a-f]{{16}}{re.escape(delta.suffix)}$" "{delta.token}";',
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
