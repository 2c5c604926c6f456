"""A site that is an application: the user's own server process, started by the lab on
its server side and reached through the lab's terminators (nginx, Caddy, the edge proxy),
which pass its responses through (`nginxconf.app_body`, `caddyconf.app_routes`).

    sites:
      - name: shop
        app: {command: "gunicorn shop:app -b 127.0.0.1:{port}", ready: /health, ready_timeout_s: 30}
        origins: [shop.test, static.shop.test]   # default: [<name>.test]; all go to this app
        page: /                                  # the page loaded (default /)
        dir: ./server                            # where the command runs (default: the spec's directory)

Pure: the entry parsed and checked (`parse_app`); `lab.servers.apps` runs the command.
`{port}` is where pagebench puts the loopback port the app must listen on (127.0.0.1 in
the server namespace); the command is split as a shell would split it, not run by a shell.

In the compose lab the app is a service of its own that pagebench neither starts nor
stops: `app: {url: http://shop:8000, ready: /health}` names where the sites role reaches
it (exactly one of `command` and `url`; each lab takes one of them, `lab.build`).
"""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pagebench.core.sites.model import SiteManifest, one_line

PORT = "{port}"


def _url_path(value: str) -> str:
    if not value.startswith("/") or any(ord(ch) <= 32 or ord(ch) > 126 for ch in value):
        raise ValueError("must be a path starting with / (printable ASCII, no spaces)")
    return value


#: A request path as the app is asked for it (`ready`, `page`).
UrlPath = Annotated[str, AfterValidator(_url_path)]


class App(BaseModel):
    """`app:` of a site entry: how the user's server is started (`command`) or where it
    already runs (`url`, the compose lab), and how it is known to be ready."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = None
    #: `http://HOST:PORT` of an app run by someone else (a compose service).
    url: str | None = None
    #: A path the app answers 2xx on once it is ready (asked again between loads).
    ready: UrlPath = "/"
    ready_timeout_s: float = Field(30.0, gt=0, le=600)

    @field_validator("command")
    @classmethod
    def _command(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            words = shlex.split(value)
        except ValueError as error:
            raise ValueError(f"cannot split {value!r} ({error})") from None
        if not words:
            raise ValueError("must name a program")
        if PORT not in value:
            raise ValueError(f"must contain {PORT}, where pagebench puts the port the app listens on "
                             "(127.0.0.1), e.g. \"gunicorn shop:app -b 127.0.0.1:{port}\"")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value)
            port = parts.port
        except ValueError as error:
            raise ValueError(f"{value!r}: {error}") from None
        if (parts.scheme != "http" or not parts.hostname or port is None or parts.username is not None
                or parts.path not in ("", "/") or parts.query or parts.fragment):
            raise ValueError(f"{value!r}: want http://HOST:PORT (e.g. http://shop:8000, the app's compose "
                             "service and port; `ready` and `page` are paths on it)")
        return value

    @model_validator(mode="after")
    def _one_way(self) -> App:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of command (pagebench starts the app: the native lab) and "
                             "url (the app runs as a service of its own: the compose lab)")
        return self

    @property
    def host_port(self) -> tuple[str, int]:
        """`url`'s host and port."""
        assert self.url is not None
        parts = urlsplit(self.url)
        assert parts.hostname is not None and parts.port is not None
        return parts.hostname, parts.port

    def argv(self, port: int) -> list[str]:
        """The command's words with the port filled in."""
        assert self.command is not None
        return [word.replace(PORT, str(port)) for word in shlex.split(self.command)]


class AppEntry(BaseModel):
    """A spec's `{name, app, origins, page}` entry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str  # checked with the manifest, as every site's name
    app: App
    origins: tuple[str, ...] | None = Field(None, min_length=1)
    page: UrlPath = "/"
    #: The directory `command` runs in, relative to the spec file (anchored absolute in the
    #: stored spec, `anchored`); None: the spec file's directory.
    dir: str | None = None

    @model_validator(mode="after")
    def _dir_for_command(self) -> AppEntry:
        if self.dir is not None and self.app.command is None:
            raise ValueError("dir: only for an app pagebench starts (command); an app given by url runs elsewhere")
        return self

    def manifest(self) -> SiteManifest:
        """The site as the planner knows every site: its name, page URL and origins."""
        origins = self.origins or (f"{self.name}.test",)
        return SiteManifest(name=self.name, entry=f"https://{origins[0]}{self.page}", origins=origins)


def anchored(entry: Mapping[str, Any], base: Path) -> dict[str, Any]:
    """An app entry with its `dir` made absolute from `base` (the spec file's directory)."""
    out = dict(entry)
    if isinstance(out.get("dir"), str):
        out["dir"] = posixpath.normpath(posixpath.join(base, out["dir"]))
    return out


def parse_app(entry: Mapping[str, Any]) -> AppEntry:
    """A spec's app entry, or a one-line SiteError naming the field at fault."""
    where = f"app site {entry.get('name', '?')}"
    try:
        parsed = AppEntry.model_validate(dict(entry))
        parsed.manifest()  # the origins checked as every site's are
    except ValidationError as error:
        raise one_line(where, error) from None
    return parsed
