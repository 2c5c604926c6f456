"""The routes of a site's Caddy server (h3): the headers nginx's configuration sends
(`headers.COMMON_HEADERS`, the HTML/static Cache-Control split, site header rules, the
same MIME types), then the files; `file_server` gives ETag and Last-Modified, so a warm
load's HTML revalidates with a 304. Also the handler pieces `caddyreplay` builds on.

A binding's encoding and site version are served as nginx serves them (`nginxencoding`):
gzip, br and zstd by `file_server`'s `precompressed` restricted to that one encoding, and
only for text files (the route before the plain `file_server`); dcz as zstd after a route
that answers `<file>.<id>.dcz` when Accept-Encoding names dcz and the `map` of
`Available-Dictionary` gives an `id` whose delta exists; `<path>.pbdict` routes for the
dictionaries; `Link` on version 1's entry page; text `no-cache` in versioned sites.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pagebench.core import encodings
from pagebench.core.modes import H3
from pagebench.core.servers.binding import Binding, PlanError
from pagebench.core.servers.headers import COMMON_HEADERS, HTML_CACHE_CONTROL, INDEX, MIME_TYPES
from pagebench.core.servers.headers import STATIC_CACHE_CONTROL, glob_regex
from pagebench.core.servers.negotiation import DCZ_VARY, DICTIONARY_CACHE_CONTROL, accepts_pattern, dictionary_ids
from pagebench.core.servers.negotiation import dictionary_links, dictionary_paths, entry_file, negotiated
from pagebench.core.servers.negotiation import text_pattern, use_as_dictionary
from pagebench.core.sites.model import Site

DEFAULT_TYPE = "application/octet-stream"
#: What nginx's `map $uri` sends `no-cache` for; a directory path is served its
#: index.html (nginx matches the map after the index redirect).
HTML_PATH = r"(\.html?|/)$"
#: The placeholder the `map` of Available-Dictionary sets: the id of a delta's dictionary.
DICTIONARY_PLACEHOLDER = "{pb_dictionary_id}"


def safe_path(path: Path | str) -> str:
    """Caddy expands `{placeholders}` in paths: refuse braces (and control characters)."""
    text = str(path)
    if any(ch in text for ch in "{}") or any(ord(ch) < 32 for ch in text):
        raise PlanError(f"path {text!r}: must not contain braces or control characters")
    return text


def set_headers(headers: dict[str, str]) -> dict[str, Any]:
    """A `headers` handler setting each header to one value."""
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


def file_server(root: Path, encoding: str | None = None) -> dict[str, Any]:
    """A `file_server` handler of `root`; with `encoding`, its precompressed sidecars only."""
    handler: dict[str, Any] = {"handler": "file_server", "root": safe_path(root), "index_names": [INDEX]}
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
    if binding.encoding.dictionary:
        for path in dictionary_paths(site, binding.origin):
            before.append({"match": [{"path": [path + encodings.DICTIONARY_SUFFIX]}], "handle": [
                set_headers({"Cache-Control": DICTIONARY_CACHE_CONTROL, "Content-Type": _mime_of(path),
                             "Use-As-Dictionary": use_as_dictionary(path)}),
                {"handler": "rewrite", "uri": path},
                file_server(site.origin_root(binding.origin))]})
        host, entry = entry_file(site)
        if binding.version == 1 and host == binding.origin and site.manifest.dictionaries:
            paths = [entry] + ([entry.removesuffix(INDEX)] if entry.endswith("/" + INDEX) else [])
            before.append({"match": [{"path": paths}], "handle": [set_headers({"Link": dictionary_links(site)})]})
        after.append(_route({"handler": "map", "source": "{http.request.header.Available-Dictionary}",
                             "destinations": [DICTIONARY_PLACEHOLDER],
                             "mappings": [{"input": value, "outputs": [ident]}
                                          for value, ident in dictionary_ids([site]).items()],
                             "defaults": [""]}))
        delta = "." + DICTIONARY_PLACEHOLDER + binding.encoding.suffix
        after.append({"match": [{
            "header_regexp": {"Accept-Encoding": {"pattern": "(?i)" + accepts_pattern(binding.encoding.token)}},
            "file": {"root": safe_path(root), "try_files": ["{http.request.uri.path}" + delta,
                                                            "{http.request.uri.path}" + INDEX + delta]},
        }], "handle": [
            {"handler": "rewrite", "uri": "{http.matchers.file.relative}"},
            # deferred: set when the response starts, over the Vary file_server adds
            {"handler": "headers",
             "response": {"set": {"Content-Encoding": [binding.encoding.token], "Vary": [DCZ_VARY]}, "deferred": True}},
            file_server(root)]})
    token = binding.encoding.plain.token
    after.append({"match": [{"path_regexp": {"pattern": text}}, {"path_regexp": {"pattern": "/$"}}],
                  "handle": [file_server(root, token)]})
    return before, after


def routes(site: Site, origin: str, binding: Binding | None = None) -> list[dict[str, Any]]:
    """Headers first (each route sets, later ones override), then the files. Site rules
    form one group, so only the first matching rule applies, like nginx's regex locations.
    `binding` (else identity, version 1) chooses the encoding and the version's root."""
    binding = binding or Binding("1.3", H3, site.name, origin, 0)
    common = dict(COMMON_HEADERS)
    out = [_route(set_headers({"Cache-Control": STATIC_CACHE_CONTROL, **common, "Content-Type": DEFAULT_TYPE}))]
    for mime, extensions in MIME_TYPES:
        pattern = _mime_pattern(extensions)
        if mime == "text/html":
            pattern = f"{pattern}|/$"
        out.append(_route(set_headers({"Content-Type": mime}), pattern))
    out.append(_route(set_headers({"Cache-Control": HTML_CACHE_CONTROL}), HTML_PATH))
    if site.manifest.versions > 1:
        out.append(_route(set_headers({"Cache-Control": HTML_CACHE_CONTROL}), f"(?i){text_pattern()}$"))
    before, after = _negotiated_routes(site, binding) if negotiated(binding) else ([], [])
    out += before
    for glob, headers in site.manifest.headers.items():
        out.append(_route(set_headers(dict(headers)), glob_regex(glob), group="site-rules"))
    out += after
    out.append(_route(file_server(site.origin_root(origin, binding.version))))
    return out
