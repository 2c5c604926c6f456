"""A recorded page as data: what each request of the recording was answered with.

An imported (`pagebench site import-har`) or recorded (`pagebench site record`) site is a
site directory whose manifest names a recording (`site.yaml`: `recording: recording.json`).
Its origins serve nothing by path: every request is looked up here by host and request
target (path and query, as the browser sends them), as Mahimahi's ReplayShell and
WebPageReplay do, and answered with the recorded status, body and headers. A request the
recording does not have is a 404 carrying `UNRECORDED_HEADER`, so a load can count them.

    <site>/site.yaml                     name, entry, origins (lab hosts), recording
    <site>/recording.json                `Recording`: the host mapping and every exchange
    <site>/<lab host>/_replay/0007.css   a body (its extension from its Content-Type, so
                                         the servers' MIME and text rules apply)

Hosts are mapped into the lab's `.test` domain (`lab_host`): `www.example.com` becomes
`www.example.com.test`, which keeps the original's registrable domains apart (the
browser partitions by site) and shows where each origin came from.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from pagebench.core.certs import PERMITTED_DOMAIN, check_hostname
from pagebench.core.quantiles import percentile

#: The file `site.yaml`'s `recording` names by default.
RECORDING_FILE = "recording.json"
#: The directory of the bodies in each origin's content directory.
BODIES_DIR = "_replay"
#: A request the recording does not have is answered 404 with this header (and value).
UNRECORDED_HEADER = "X-Pagebench-Replay"
UNRECORDED_VALUE = "unrecorded"
#: Loose query matching (an option, off by default): a request whose exact target was not
#: recorded gets the first exchange recorded for the same host and path.
QUERY_MATCHING = ("exact", "loose")

_TARGET = re.compile(r"^/[\x21-\x7e]*$")
_FILE = re.compile(rf"^{BODIES_DIR}/[0-9]{{4,6}}(\.[a-z0-9]{{1,8}})?$")
#: Statuses a replay answers: a body (200/203), none (204), a redirect (301-308 with a
#: Location), or an error the page met when recorded (4xx/5xx, body kept when there was one).
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def check_query_matching(value: str) -> str:
    """`value` if it names a way of query matching; else a one-line ValueError listing them."""
    if value not in QUERY_MATCHING:
        raise ValueError(f"{value!r}: must be one of {', '.join(QUERY_MATCHING)}")
    return value


def _matching(pattern: re.Pattern[str], rule: str) -> AfterValidator:
    """A string `pattern` matches; else a one-line ValueError quoting it, saying `rule`."""

    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{value!r}: {rule}")
        return value

    return AfterValidator(check)


#: Path and query, exactly as requested: "/css?family=Roboto".
Target = Annotated[str, _matching(_TARGET, "must start with / and be printable ASCII without spaces")]
#: A body, relative to its host's content directory.
BodyFile = Annotated[str, _matching(_FILE, f"must be {BODIES_DIR}/<number>[.<extension>]")]


class Exchange(BaseModel):
    """One recorded request and its response, hosts already mapped into the lab."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    host: str  # lab host
    target: Target
    status: int = Field(ge=200, le=599)
    file: BodyFile | None = None
    content_type: str | None = None
    #: Response headers replayed as recorded (hosts mapped): caching, CORS, Link, ...;
    #: never those the servers make (Content-Length, Content-Encoding, ETag,
    #: Last-Modified, Date, Connection, Transfer-Encoding) or cookies.
    headers: dict[str, str] = {}
    location: str | None = None  # a redirect's target (mapped)
    level: int = Field(1, ge=0, le=64)  # dependency level: 0 the entry document
    original: str  # the URL as recorded
    #: Server think time the HAR shows (`har.think`: timings.wait less one RTT): the
    #: replay delays the response by it (`Recording.server_time`). None: not known.
    think_ms: float | None = Field(None, ge=0)

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        return check_hostname(value)

    @model_validator(mode="after")
    def _status(self) -> Exchange:
        if self.status in REDIRECTS and not self.location:
            raise ValueError(f"{self.host}{self.target}: a {self.status} needs a location")
        if self.status in (200, 203) and self.file is None:
            raise ValueError(f"{self.host}{self.target}: a {self.status} needs a file")
        return self

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def url(self) -> str:
        return f"https://{self.host}{self.target}"


class Recording(BaseModel):
    """`recording.json`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str  # the HAR file or the URL recorded
    hosts: dict[str, str]  # original host (with :port when not the default) -> lab host
    exchanges: tuple[Exchange, ...] = Field(min_length=1)
    #: What the source lacked, one line each ("<url>: failed when recorded (...)"): those requests 404.
    missing: tuple[str, ...] = ()
    #: Whether the replay delays each response by its `think_ms` (`site import-har
    #: --no-server-time`: False, the think times kept but not applied).
    server_time: bool = True

    @model_validator(mode="after")
    def _unique(self) -> Recording:
        seen: set[tuple[str, str]] = set()
        for exchange in self.exchanges:
            key = (exchange.host, exchange.target)
            if key in seen:
                raise ValueError(f"exchanges: {exchange.url} is recorded twice")
            seen.add(key)
        return self

    def delay_ms(self, exchange: Exchange) -> float:
        """How long a replay waits before answering `exchange` (0: at once)."""
        return (exchange.think_ms or 0.0) if self.server_time else 0.0

    def think_line(self) -> str | None:
        """What `site show` and the import say of the think times (None: none recorded)."""
        times = sorted(e.think_ms for e in self.exchanges if e.think_ms is not None)
        if not times:
            return None
        median = percentile(times, 50)
        state = "on: each response is delayed by it" if self.server_time else "off (--no-server-time): kept, not applied"
        return (f"server think time (HAR wait less one RTT) of {len(times)} response(s): total {sum(times):,.0f} ms, "
                f"median {median:,.1f} ms, max {times[-1]:,.0f} ms; {state}")

    def lookup(self, host: str, target: str, query: str = "exact") -> Exchange | None:
        """The exchange a request is answered with (None: a 404)."""
        for exchange in self.exchanges:
            if exchange.host == host and exchange.target == target:
                return exchange
        if query == "loose":
            return self.loose().get((host, target.split("?", 1)[0]))
        return None

    def loose(self) -> dict[tuple[str, str], Exchange]:
        """(host, path) -> the first exchange recorded for it: what loose matching answers
        a request whose exact query was not recorded."""
        first: dict[tuple[str, str], Exchange] = {}
        for exchange in self.exchanges:
            first.setdefault((exchange.host, exchange.path), exchange)
        return first

    def level(self, host_path: str) -> int:
        """Dependency level of "host/path" (the lowest of its queries; 1 if unknown)."""
        levels = [e.level for e in self.exchanges if f"{e.host}{e.path}" == host_path]
        return min(levels) if levels else 1


_PORT_LABEL = "p{port}"


def lab_host(origin_host: str, port: int | None = None, scheme: str = "https") -> str:
    """The lab host standing in for an original host: `<host>.test` (`www.modern.test`
    recorded from the lab itself: `www.modern.test.test`); a non-default port
    becomes a label in front (`p8443.<host>.test`); an IPv4 literal `ip-1-2-3-4.test`, an
    IPv6 one its eight groups in full (`[2001:db8::1]`: `ip6-2001-0db8-0000-...-0001.test`,
    so that no two addresses share a name). A ValueError when it cannot be a lab host."""
    host = origin_host.lower().rstrip(".").strip("[]")
    if re.fullmatch(r"[0-9.]+", host):
        host = "ip-" + host.replace(".", "-")
    elif ":" in host:
        try:
            host = "ip6-" + ipaddress.IPv6Address(host).exploded.replace(":", "-")
        except ValueError:
            raise ValueError(f"host {origin_host!r}: not an IPv6 address") from None
    default = 443 if scheme == "https" else 80
    name = f"{host}.{PERMITTED_DOMAIN}"  # always: an imported lab site stays apart from the lab's own
    if port is not None and port != default:
        name = f"{_PORT_LABEL.format(port=port)}.{name}"
    return check_hostname(name)


def host_key(url: str) -> str:
    """The `Recording.hosts` key of a URL: its host, with `:port` when not the default."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    default = 443 if parts.scheme == "https" else 80
    return host if parts.port in (None, default) else f"{host}:{parts.port}"
