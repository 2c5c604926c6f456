"""Test sites as data: a manifest (`site.yaml`) plus one content directory per origin.

    <data dir>/sites/<name>/site.yaml          name, entry, origins, headers (per path glob)
    <data dir>/sites/<name>/<origin host>/...  what that origin serves (its nginx root)
    <data dir>/sites/<name>/.digest            sha256 of the generated content

Every site is served with the same rules (`nginxconf` and `caddyconf` render them): HTML
`Cache-Control: no-cache` (nginx's ETag/Last-Modified then turn warm loads into a 304
revalidation), everything else `Cache-Control: max-age=86400`, and every response
`Timing-Allow-Origin: *` and `Access-Control-Allow-Origin: *` (cross-origin fonts need
CORS). Every page has `<link rel="icon" href="data:,">` (no favicon request).

`Site` is a site on disk (`lab.sites` reads and writes them); `GeneratedSite` is one as
values before it is written (`builtin.py` and `generate.py` make the built-in and
generated ones).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pagebench.core.certs import check_hostname
from pagebench.core.errors import PagebenchError
from pagebench.core.messages import shown
from pagebench.core.sites.recording import Recording

if TYPE_CHECKING:
    from pagebench.core.sites.app import App


class SiteError(PagebenchError, ValueError):
    """One line naming the site (or file) and the field at fault."""


# The manifest ----------------------------------------------------------------------

#: A site's name (built-in, generated, imported or recorded).
SITE_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")
_GLOB = re.compile(r"^/[A-Za-z0-9._/*?-]*$")
_HEADER = re.compile(r"^[A-Za-z0-9-]+$")
_VALUE = re.compile(r'^[\x20-\x7e]*$')


class SiteManifest(BaseModel):
    """`site.yaml`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    entry: str  # https://<first origin>/<path>
    origins: tuple[str, ...] = Field(min_length=1)
    headers: dict[str, dict[str, str]] = {}  # path glob -> response headers
    #: Versions of the content (1: the site as it is). Version k > 1 lives in `v<k>/<host>/`.
    versions: int = Field(1, ge=1, le=20)
    #: "host/path" of every text file of version 1 -> its `Available-Dictionary` value (the
    #: sf-binary SHA-256 of its body): the dictionaries a delta (dcz) is made against.
    dictionaries: dict[str, str] = {}
    #: version -> "host/path" of the text files that differ from version 1 (a warm load of
    #: that version must receive each of them as a delta; the rest are 304s).
    changed: dict[int, list[str]] = {}
    #: An imported or recorded site: the file (in the site directory) of its `Recording`;
    #: its origins then answer every request from it, not by path (`recording.py`).
    recording: str | None = None

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not SITE_NAME.match(value):
            raise ValueError(f"must match {SITE_NAME.pattern}")
        return value

    @field_validator("origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        hosts = tuple(check_hostname(host) for host in value)
        if len(set(hosts)) != len(hosts):
            raise ValueError("must not repeat a host")
        return hosts

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, dict[str, str]]) -> dict[str, dict[str, str]]:
        for glob, headers in value.items():
            if not _GLOB.match(glob):
                raise ValueError(f"{glob!r}: a path glob must start with / and use only A-Z a-z 0-9 . _ / * ? -")
            for name, text in headers.items():
                if not _HEADER.match(name):
                    raise ValueError(f"{glob}: header name {name!r} is not a token")
                if not _VALUE.match(text) or any(ch in text for ch in '"\\$'):
                    raise ValueError(f"{glob}: {name}: value must be printable ASCII without \" \\ $")
        return value

    @model_validator(mode="after")
    def _versions(self) -> SiteManifest:
        for version, paths in self.changed.items():
            if not 2 <= version <= self.versions:
                raise ValueError(f"changed: version {version} is not one of the later versions 2..{self.versions}")
            unknown = [p for p in paths if p not in self.dictionaries]
            if unknown:
                raise ValueError(f"changed: {unknown[0]} (version {version}) is not a text file of version 1 "
                                 "(dictionaries)")
        return self

    @model_validator(mode="after")
    def _entry(self) -> SiteManifest:
        url = urlsplit(self.entry)
        if url.scheme != "https" or url.hostname != self.origins[0] or url.port or not url.path.startswith("/"):
            raise ValueError(f"entry {self.entry!r}: must be https://{self.origins[0]}/<path> (the first origin)")
        return self


class _Described:
    """Name, page URL and origins, read from the manifest (on disk or generated)."""

    manifest: SiteManifest

    @property
    def name(self) -> str:
        return self.manifest.name

    @property
    def entry(self) -> str:
        return self.manifest.entry

    @property
    def origins(self) -> tuple[str, ...]:
        return self.manifest.origins

    def level(self, host_path: str) -> int:
        """Dependency level of a fetched file ("host/path"): 1, found in the HTML, unless
        the site knows better (generated sites do)."""
        return 1


@dataclass(frozen=True)
class Site(_Described):
    """A site on disk: its manifest and the directory holding it (and, for an imported
    or recorded site, its recording). An app site (`app`) serves no files: `root` is the
    directory its process runs in (the spec's)."""

    manifest: SiteManifest
    root: Path
    recording: Recording | None = field(default=None, repr=False)
    app: App | None = None

    def level(self, host_path: str) -> int:
        """Dependency level of a fetched file: the recording's (from the HAR's initiators
        or timings), else 1 (found in the HTML)."""
        return self.recording.level(host_path) if self.recording is not None else 1

    def origin_root(self, host: str, version: int = 1) -> Path:
        """The directory an origin serves (its nginx root) in one version of the site."""
        return self.root / host if version == 1 else self.root / f"v{version}" / host


def one_line(where: str, error: ValidationError) -> SiteError:
    """pydantic's report as one line naming the field."""
    first = error.errors()[0]
    loc = ".".join(shown(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    else:
        message = first["msg"].removeprefix("Value error, ")
    return SiteError(f"{where}: {loc}: {message}" if loc else f"{where}: {message}")


def entry_error(error: ValidationError, kind: str, model: type[BaseModel]) -> SiteError:
    """A spec entry's validation error as one line naming the field: an unknown key with
    the keys `model` allows (`kind`: "a folder site"), else what is wrong with the value."""
    first = error.errors()[0]
    loc = ".".join(shown(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        return SiteError(f"{loc}: unknown field; {kind} takes {', '.join(model.model_fields)}")
    return SiteError(f"{loc}: " + ("required" if first["type"] == "missing"
                                   else first["msg"].removeprefix("Value error, ")))


def parse_manifest(text: str, where: str = "site.yaml") -> SiteManifest:
    """A `site.yaml` text as a manifest, or a one-line SiteError naming `where`."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SiteError(f"{where}: not YAML ({str(error).splitlines()[0]})") from None
    try:
        return SiteManifest.model_validate(data)
    except ValidationError as error:
        raise one_line(where, error) from None


def manifest_yaml(manifest: SiteManifest) -> str:
    """The manifest as `site.yaml` text."""
    return yaml.safe_dump(manifest.model_dump(mode="json"), sort_keys=False)


# Generated content (pure) ------------------------------------------------------------


@dataclass(frozen=True)
class GeneratedSite(_Described):
    """A site as values, before it is written: its manifest and every file's bytes."""

    manifest: SiteManifest
    files: Mapping[str, bytes] = field(repr=False)  # "<host>/<path>" -> body
    #: Dependency level of the files found only by fetching another (CSS -> font: 2,
    #: script-inserted: 1 + its script's); unlisted files are found in the HTML (1).
    levels: Mapping[str, int] = field(default_factory=dict, repr=False)
    #: Versions 2..N, each every file of the site (`manifest.changed` lists the text files
    #: that differ from `files`, version 1; the rest are the same bytes).
    later: tuple[Mapping[str, bytes], ...] = field(default=(), repr=False)

    def level(self, host_path: str) -> int:
        """Dependency level of a generated file ("host/path")."""
        return self.levels.get(host_path, 1)

    def version(self, number: int) -> Mapping[str, bytes]:
        """Every file of one version (1: `files`)."""
        if not 1 <= number <= 1 + len(self.later):
            raise SiteError(f"{self.name}: version {number}: the site has versions 1-{1 + len(self.later)}")
        return self.files if number == 1 else self.later[number - 2]

    @property
    def requests(self) -> int:
        """Every generated file is fetched by one cold load."""
        return len(self.files)

    @property
    def total_bytes(self) -> int:
        return sum(len(body) for body in self.files.values())

    def digest(self) -> str:
        """A hash of the manifest and every file: whether a written copy is current."""
        h = hashlib.sha256(manifest_yaml(self.manifest).encode())
        for path in sorted(self.files):
            h.update(f"\0{path}\0{len(self.files[path])}\0".encode())
            h.update(hashlib.sha256(self.files[path]).digest())
        for number, files in enumerate(self.later, 2):
            for path in sorted(files):
                body = files[path]
                same = body is self.files.get(path) or body == self.files.get(path)
                h.update(f"\0v{number}\0{path}\0{len(body)}\0".encode())
                h.update(b"=" if same else hashlib.sha256(body).digest())
        return h.hexdigest()


