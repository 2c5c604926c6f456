"""A folder site: a directory holding `index.html` (a team's static build), named in a
spec as

    sites:
      - name: docs                  # served as https://docs.test/ (its index.html)
        path: ./site                # relative to the spec file's directory
        host: docs.test             # optional: the lab host it is served as (default <name>.test)
        origins:                    # optional: hosts its pages name in absolute URLs,
          cdn.example.com: ./cdn    #   each served from a folder (relative to the spec)

Every file of the folder is served as it is (hidden files and directories left out); a
host under `origins:` is served in the lab as `<host>.test` (`recording.lab_host`: the
lab's CA signs `.test` names only), and absolute URLs naming it in the pages are
rewritten to that name in the copy the lab serves (`lab.sites` materializes it; the
folder itself is never written).

Pure: the entry parsed into a `FolderRef`, the entry's paths anchored at the spec's
directory, and the absolute URLs of a page's text found (`absolute_urls`) and judged
(`external_hosts`), for `site show` and the note a run prints before its loads.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from pagebench.core.sites.model import SITE_NAME, Site, SiteError, SiteManifest, entry_error
from pagebench.core.sites.recording import lab_host

#: The file a folder must hold: the page the site's entry URL (`/`) serves.
INDEX = "index.html"
#: A host an entry's `origins:` may name: a DNS name (no port, no scheme).
_HOST = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


class FolderEntry(BaseModel):
    """A spec's `{name, path, origins}` entry, as written."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    path: str
    #: The lab host the folder is served as; None: `<name>.test`.
    host: str | None = None
    origins: dict[str, str] = {}

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not SITE_NAME.match(value) or "_" in value or ".." in value or value.endswith((".", "-")):
            raise ValueError(f"{value!r}: a site name must be lower-case letters, digits, '.' and '-' "
                             "(it is the host <name>.test)")
        return value

    @field_validator("host")
    @classmethod
    def _host(cls, value: str | None) -> str | None:
        if value is not None and (not _HOST.match(value) or not value.endswith(".test")):
            raise ValueError(f"{value!r}: a lower-case DNS name under .test (the lab's CA signs .test names only)")
        return value

    @field_validator("origins")
    @classmethod
    def _hosts(cls, value: dict[str, str]) -> dict[str, str]:
        for host in value:
            if not _HOST.match(host):
                raise ValueError(f"{host!r}: a host must be a lower-case DNS name (no scheme, port or path), "
                                 "e.g. cdn.example.com")
        return value


@dataclass(frozen=True)
class FolderRef:
    """A folder site as a spec names it: its name, its folder, and the folder of each
    other host its pages name (`origins:`), paths as written or anchored (`anchored`)."""

    name: str
    path: Path
    origins: tuple[tuple[str, Path], ...] = ()
    served_as: str | None = None  # `host:`; None: <name>.test

    @property
    def host(self) -> str:
        """The lab host the folder itself is served as."""
        return self.served_as or f"{self.name}.test"

    @property
    def entry(self) -> str:
        return f"https://{self.host}/"

    def folders(self) -> dict[str, Path]:
        """Lab host -> the folder it serves, the site's own first."""
        return {self.host: self.path} | {lab_host(host): path for host, path in self.origins}

    def lab_hosts(self) -> dict[str, str]:
        """Each host under `origins:` -> the lab host serving it."""
        return {host: lab_host(host) for host, _ in self.origins}


def parse_folder(entry: Mapping[str, Any]) -> FolderRef:
    """A spec entry `{name, path, origins}` as a reference, or a one-line SiteError naming
    the field (unknown keys listed with those allowed)."""
    try:
        parsed = FolderEntry.model_validate(dict(entry))
    except ValidationError as error:
        raise entry_error(error, "a folder site", FolderEntry) from None
    ref = FolderRef(parsed.name, Path(parsed.path), tuple((host, Path(path)) for host, path in parsed.origins.items()),
                    parsed.host)
    if ref.host in ref.lab_hosts().values():
        raise SiteError(f"origins: a host is served as {ref.host}, the site's own host")
    return ref


def anchored(entry: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """A folder entry with its relative paths made absolute from `base` (the spec file's
    directory), so that where it is run from, resumed or served (a split lab's sites role)
    does not change which folder it names. Other keys are left for `parse_folder`."""
    out = dict(entry)
    if isinstance(out.get("path"), str):
        out["path"] = posixpath.normpath(posixpath.join(base, out["path"]))
    if isinstance(out.get("origins"), Mapping):
        out["origins"] = {host: posixpath.normpath(posixpath.join(base, path)) if isinstance(path, str) else path
                          for host, path in out["origins"].items()}
    return out


# Absolute URLs in the pages --------------------------------------------------------------

#: The text a folder's pages are scanned in for absolute URLs, by extension.
SCANNED = (".html", ".htm", ".css", ".js", ".mjs")
_URL = rb"""https?://[A-Za-z0-9.-]+(?::[0-9]+)?[^\s"'`<>()\\]*"""
#: In HTML: an attribute the browser fetches from (`src`, `srcset`, `poster`, `data`, the
#: `href` of a <link> whose rel loads or connects) holding an absolute URL.
_HTML_FETCHED = re.compile(rb"""<(?:(?P<link>link)|[a-z][a-z0-9]*)\b(?P<attrs>[^>]*)>""", re.IGNORECASE)
_ATTR = re.compile(rb"""\b(?P<name>[a-z-]+)\s*=\s*(?:"(?P<dq>[^"]*)"|'(?P<sq>[^']*)'|(?P<bare>[^\s"'=<>`]+))""",
                   re.IGNORECASE)
_FETCH_ATTRS = frozenset({b"src", b"srcset", b"poster", b"data"})
_FETCH_RELS = frozenset({b"stylesheet", b"preload", b"modulepreload", b"icon", b"manifest", b"prefetch",
                         b"preconnect", b"dns-prefetch", b"apple-touch-icon"})
#: In CSS (files, <style>, style attributes): url(...) and @import.
_CSS_URL = re.compile(rb"""(?:url\(\s*["']?|@import\s+["'])(""" + _URL + rb")", re.IGNORECASE)
#: In scripts: a string literal that is an absolute URL (fetched only if the script does).
_JS_URL = re.compile(rb"""["'`](""" + _URL + rb")", re.IGNORECASE)
_SCRIPT = re.compile(rb"<script\b[^>]*>(.*?)</script>", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class FoundUrl:
    """An absolute URL in a folder's text: where, and whether the page fetches it (an
    HTML resource attribute or CSS) or only a script names it."""

    url: str
    file: str  # the file's path in its folder
    fetched: bool


def absolute_urls(path: str, body: bytes) -> list[FoundUrl]:
    """The absolute http(s) URLs a file's text names (`SCANNED` files; others: none): in
    HTML the attributes a browser fetches from and the CSS and scripts inline, in CSS its
    url() and @import, in scripts every string literal. Navigation links (<a href>) and
    metadata (<link rel=canonical>) are not requests, so not listed."""
    lower = path.lower()
    if not lower.endswith(SCANNED):
        return []
    found: list[FoundUrl] = []
    if lower.endswith((".css",)):
        found += [FoundUrl(m.group(1).decode("latin-1"), path, True) for m in _CSS_URL.finditer(body)]
    elif lower.endswith((".js", ".mjs")):
        found += [FoundUrl(m.group(1).decode("latin-1"), path, False) for m in _JS_URL.finditer(body)]
    else:
        for tag in _HTML_FETCHED.finditer(body):
            attrs = {m.group("name").lower(): m.group("dq") or m.group("sq") or m.group("bare") or b""
                     for m in _ATTR.finditer(tag.group("attrs"))}
            names = set(_FETCH_ATTRS)
            if tag.group("link") and set(attrs.get(b"rel", b"").lower().split()) & _FETCH_RELS:
                names.add(b"href")
            for name in names & set(attrs):
                for url in re.findall(_URL, attrs[name]):
                    found.append(FoundUrl(url.decode("latin-1"), path, True))
            if b"style" in attrs:
                found += [FoundUrl(m.group(1).decode("latin-1"), path, True) for m in _CSS_URL.finditer(attrs[b"style"])]
        found += [FoundUrl(m.group(1).decode("latin-1"), path, True) for m in _CSS_URL.finditer(body)
                  if not _inside_tag(body, m.start())]
        for script in _SCRIPT.finditer(body):
            found += [FoundUrl(m.group(1).decode("latin-1"), path, False) for m in _JS_URL.finditer(script.group(1))]
    return found


def _inside_tag(body: bytes, at: int) -> bool:
    """Whether `at` is inside a tag's attributes (those are read per tag, above)."""
    return body.rfind(b"<", 0, at) > body.rfind(b">", 0, at)


@dataclass(frozen=True)
class ExternalHost:
    """A host other than the site's own that its pages name in absolute URLs: how many
    URLs, the first file naming it, whether any is fetched by the page itself (not only
    named in a script), and the lab host serving it (None: not served)."""

    host: str
    urls: int
    first_file: str
    fetched: bool
    served_as: str | None

    def line(self) -> str:
        """What `site show` and a run's note say about it."""
        how = "fetched by the page" if self.fetched else "named in a script"
        where = f"{self.urls} URL(s), {how}, first in {self.first_file}"
        if self.served_as is not None:
            return f"{self.host}: served as {self.served_as} from its folder ({where})"
        return f"{self.host}: not served ({where})"


#: What the browser sees for a host the lab does not serve (it has no internet).
UNSERVED = ("the lab has no internet: a request to a host not served fails at once, without a response "
            "(direct: name not resolved; through the edge proxy: its tunnel refused), and the page loads "
            "without it; map the host under the entry's origins: to a folder to serve it")


def external_hosts(ref: FolderRef, found: Iterable[FoundUrl]) -> list[ExternalHost]:
    """The hosts other than the site's own (`<name>.test`) that `found` URLs name, in
    order of first mention, each served (an `origins:` host, as its lab host) or not."""
    served = ref.lab_hosts()
    tally: dict[str, list[Any]] = {}
    for url in found:
        host = (urlsplit(url.url).hostname or "").lower()
        if not host or host == ref.host:
            continue
        entry = tally.setdefault(host, [0, url.file, False])
        entry[0] += 1
        entry[2] = entry[2] or url.fetched
    return [ExternalHost(host, count, first, fetched, served.get(host)) for host, (count, first, fetched) in tally.items()]


def relative(path: Path, root: Path) -> str:
    """A file's path in its folder, as URLs name it."""
    return PurePosixPath(*path.relative_to(root).parts).as_posix()


@dataclass(frozen=True)
class FolderSite(Site):
    """A folder site as found, before the copy the lab serves is made: `root` is the
    folder itself and each origin's root its folder; `digest` identifies its content (every
    file's path, bytes and mtime), naming the copy (`lab.sites.materialize`)."""

    ref: FolderRef = field(kw_only=True)
    digest: str = field(kw_only=True)

    def origin_root(self, host: str, version: int = 1) -> Path:
        return self.ref.folders()[host]


def folder_manifest(ref: FolderRef) -> SiteManifest:
    """The manifest a folder site is served with: its host first, its entry `/`."""
    return SiteManifest(name=ref.name, entry=ref.entry, origins=tuple(ref.folders()))
