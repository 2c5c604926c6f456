"""What both servers need to serve a binding's content encoding and site version: which
sidecar a request's Accept-Encoding allows, which delta its Available-Dictionary names,
the dictionaries a site offers (`<path>.pbdict`, `Use-As-Dictionary`, the entry page's
`Link`) and the headers of a negotiated response."""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from pagebench.core import encodings as encodings_table
from pagebench.core.encodings import DCZ, IDENTITY
from pagebench.core.servers.binding import Binding, PlanError
from pagebench.core.servers.headers import INDEX
from pagebench.core.sites.model import Site

#: Sent with a negotiated text response; a dcz one also varies with the dictionary offered.
VARY = "Accept-Encoding"
DCZ_VARY = "Accept-Encoding, Available-Dictionary"
#: A dictionary (`<path>.pbdict`) stays fresh for a day: Chromium registers none without freshness.
DICTIONARY_CACHE_CONTROL = "max-age=86400"
#: The characters a dictionary's `match` URL pattern would read as syntax, or its
#: structured-field string could not hold.
_PATTERN_SYNTAX = set('*?+:(){}\\"')


def negotiated(binding: Binding) -> bool:
    """Whether a binding answers from precompressed files (every encoding but identity)."""
    return binding.encoding is not IDENTITY


def text_pattern() -> str:
    """A regex (no anchors, no flags) matching a text file's suffix (`encodings.is_text`)."""
    return r"\.(" + "|".join(re.escape(s.lstrip(".")) for s in encodings_table.TEXT_SUFFIXES) + ")"


def sidecar_pattern() -> str:
    """A regex matching what follows a text file's name in its sidecars: `.gz`, `.br`, `.zst`
    or `.<dictionary id>.dcz` (the agreed layout)."""
    plain = "|".join(re.escape(e.suffix) for e in encodings_table.SIDECARS)
    return rf"({plain}|\.[0-9a-f]{{16}}{re.escape(DCZ.suffix)})"


def accepts_pattern(token: str) -> str:
    """A regex (PCRE and RE2 alike; match it case-insensitively) that an Accept-Encoding
    value names `token` with a non-zero q (RFC 9110 12.5.3)."""
    q = r"(;[ \t]*q[ \t]*=[ \t]*(1(\.0{0,3})?|0?\.[0-9]{0,2}[1-9][0-9]{0,2}))?"
    return rf"(^|,)[ \t]*{re.escape(token)}[ \t]*{q}[ \t]*(,|$)"


def dictionary_paths(site: Site, origin: str) -> list[str]:
    """The paths on `origin` that have a version-1 dictionary (`manifest.dictionaries`)."""
    paths = sorted("/" + key.split("/", 1)[1] for key in site.manifest.dictionaries
                   if key.split("/", 1)[0] == origin and "/" in key)
    for path in paths:
        if _PATTERN_SYNTAX & set(path) or any(ord(ch) <= 32 or ord(ch) > 126 for ch in path):
            raise PlanError(f"site {site.name}: dictionary path {path!r} must be printable ASCII without "
                            f"{''.join(sorted(_PATTERN_SYNTAX))} or spaces (it is a URL pattern)")
    return paths


def use_as_dictionary(path: str) -> str:
    """The `Use-As-Dictionary` value of `<path>.pbdict`: it is the dictionary for `path`; a
    directory's index (`/index.html`) also for the directory (`/`, as entries are loaded)."""
    if path.endswith("/" + INDEX):
        return f'match="{path.removesuffix(INDEX)}{{{INDEX}}}?"'
    return f'match="{path}"'


def dictionary_ids(sites: Iterable[Site]) -> dict[str, str]:
    """Every `Available-Dictionary` value the plan's sites can be offered -> the id in the
    file name of the deltas made against it (`<file>.<id>.dcz`)."""
    values = sorted({value for site in sites for value in site.manifest.dictionaries.values()})
    return {value: encodings_table.dictionary_id_of_header(value) for value in values}


def entry_file(site: Site) -> tuple[str, str]:
    """The entry's host and the path of the file it serves (a directory's index)."""
    url = urlsplit(site.manifest.entry)
    path = url.path or "/"
    return url.hostname or "", path + INDEX if path.endswith("/") else path


def dictionary_links(site: Site) -> str:
    """The `Link` header of the entry page of version 1 in a dcz binding: every dictionary
    of the site, on every origin, for Chromium to fetch at idle after the load."""
    links = [f"<https://{origin}{path}{encodings_table.DICTIONARY_SUFFIX}>; rel=compression-dictionary"
             for origin in site.origins for path in dictionary_paths(site, origin)]
    return ", ".join(links)
