"""The summary numbers `pagebench site show` prints for any site: requests and bytes by
origin and by kind of resource, and how many requests sit at each dependency level (the
round trips the analytic lower bound counts).

Pure: a generated site carries its bytes; a site on disk is described from the sizes
`lab.sites.file_sizes` reads, and a recorded one from its recording.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.core.sites.recording import REDIRECTS


@dataclass(frozen=True)
class Share:
    """Requests and bytes of one origin or one kind of resource."""

    name: str
    requests: int
    bytes: int
    original: str | None = None  # an origin's host as recorded


@dataclass(frozen=True)
class SiteSummary:
    """What `pagebench site show` prints about a site."""

    name: str
    entry: str
    origins: tuple[Share, ...]
    types: tuple[Share, ...]  # by kind: html, css, js, font, image, ... most bytes first
    levels: tuple[tuple[int, int], ...]  # (dependency level, requests)
    source: str | None = None  # the HAR or URL recorded
    missing: tuple[str, ...] = ()  # requests the recording lacks (they 404)

    @property
    def requests(self) -> int:
        return sum(o.requests for o in self.origins)

    @property
    def bytes(self) -> int:
        return sum(o.bytes for o in self.origins)

    @property
    def depth(self) -> int:
        return max((level for level, _ in self.levels), default=0)


_KINDS = {"html": "html", "htm": "html", "css": "css", "js": "js", "mjs": "js", "json": "json", "xml": "xml",
          "txt": "text", "svg": "image", "png": "image", "jpg": "image", "jpeg": "image", "gif": "image",
          "webp": "image", "avif": "image", "ico": "image", "woff": "font", "woff2": "font", "ttf": "font",
          "otf": "font", "mp4": "media", "webm": "media"}
_SIDECAR = re.compile(r"\.(gz|br|zst|dcz)$")


def _kind(path: str) -> str:
    return _KINDS.get(path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else "", "other")


def describe(site: GeneratedSite | Site, sizes: Mapping[str, int] | None = None) -> SiteSummary:
    """The summary numbers of a site. A generated site carries its files; a site on disk
    needs `sizes`, "<host>/<path>" -> bytes of its files (no sidecars), which
    `lab.sites.file_sizes` reads. A recorded site counts each exchange once (redirects
    and bodiless answers as their own kinds); other sites count each file as one request."""
    rows: list[tuple[str, str, int, int]] = []  # host, kind, bytes, level
    recording = site.recording if isinstance(site, Site) else None
    if recording is not None:
        sizes = sizes or {}
        for ex in recording.exchanges:
            kind = _kind(ex.file) if ex.file else ("redirect" if ex.status in REDIRECTS else "no body")
            if ex.status >= 400:
                kind = "error"
            rows.append((ex.host, kind, sizes.get(f"{ex.host}/{ex.file}", 0) if ex.file else 0, ex.level))
    else:
        files = {k: len(v) for k, v in site.files.items()} if isinstance(site, GeneratedSite) else dict(sizes or {})
        entry = urlsplit(site.entry)
        page = f"{entry.hostname}{entry.path}" + ("index.html" if entry.path.endswith("/") else "")
        for path, size in sorted(files.items()):
            if isinstance(site, Site) and _SIDECAR.search(path) and _SIDECAR.sub("", path) in files:
                continue
            level = 0 if path == page else site.level(path)
            rows.append((path.split("/", 1)[0], _kind(path), size, level))

    def shares(key: Callable[[tuple[str, str, int, int]], str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for row in rows:
            tally = out.setdefault(key(row), [0, 0])
            tally[0] += 1
            tally[1] += row[2]
        return out

    originals = {lab: original for original, lab in reversed(list(recording.hosts.items()))} if recording else {}
    by_host = shares(lambda r: r[0])
    origins = tuple(Share(h, *by_host.get(h, [0, 0]), original=originals.get(h)) for h in site.origins)
    types = tuple(sorted((Share(k, n, b) for k, (n, b) in shares(lambda r: r[1]).items()),
                         key=lambda s: (-s.bytes, s.name)))
    levels = tuple(sorted(Counter(r[3] for r in rows).items()))
    return SiteSummary(site.name, site.entry, origins, types, levels,
                       recording.source if recording else None, recording.missing if recording else ())
