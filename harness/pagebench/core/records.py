"""Frozen values that cross module boundaries: what a condition is, what one page load
produced. Pure: no I/O. The store persists exactly these; the report reads them back."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pagebench.core.devices import DEFAULT_DEVICE
from pagebench.core.encodings import IDENTITY, Encoding
from pagebench.core.modes import Mode

CACHE_STATES = ("cold", "warm")
#: A condition's fields, in the order reports name them (`Condition` below).
CONDITION_FIELDS = ("site", "mode", "topology", "profile", "cache", "tls", "encoding", "version", "device")
#: The metrics of a load the report summarizes per condition (median, p90, min, max) and
#: budgets and `compare --metric` may name: fields of `LoadMeasurement` and `LoadResult`.
METRICS = ("load_ms", "ttfb_ms", "dcl_ms", "fcp_ms", "lcp_ms", "first_visual_change_ms", "speed_index_ms",
           "visual_complete_85_ms", "visual_complete_95_ms", "visual_complete_99_ms", "last_visual_change_ms",
           "cls", "tbt_ms", "long_tasks", "inp_ms", "connections_browser", "connections_link",
           "connections_server", "connections_proxy", "connections_proxy_reused", "cache_hits", "requests",
           "bytes")
#: What a person sees (`core.measure.visual`): the frames' metrics, layout shift, main-thread
#: blocking; None where a load has no frames (failed, or stored before them).
VISUAL_METRICS = ("first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms", "visual_complete_95_ms",
                  "visual_complete_99_ms", "last_visual_change_ms", "cls", "tbt_ms", "long_tasks", "inp_ms")


@dataclass(frozen=True)
class Condition:
    """One cell of the experiment matrix: what a load is measured under."""

    site: str
    mode: Mode
    topology: str
    profile: str  # profile name (its fields are stored with the experiment)
    cache: str
    tls: str = "1.3"
    encoding: Encoding = IDENTITY
    #: The site's version this load sees (a warm load primes with version 1 first).
    version: int = 1
    #: The device the browser emulates (a name in the device table, `core.devices`).
    device: str = DEFAULT_DEVICE

    @property
    def key(self) -> str:
        key = f"{self.site}|{self.mode.name}|{self.topology}|{self.profile}|{self.cache}|tls{self.tls}"
        # Only what differs from the defaults: keys of runs stored before encodings and devices stay.
        return key + (f"|{self.encoding.name}" if self.encoding is not IDENTITY else "") + (
            f"|v{self.version}" if self.version != 1 else "") + (
            f"|{self.device}" if self.device != DEFAULT_DEVICE else "")

    def as_names(self) -> dict[str, str | int]:
        """Its fields as the store, the report's JSON and the exports write them: names."""
        return {"site": self.site, "mode": self.mode.name, "topology": self.topology, "profile": self.profile,
                "cache": self.cache, "tls": self.tls, "encoding": self.encoding.name, "version": self.version,
                "device": self.device}

    @property
    def label(self) -> str:
        """Short, for progress lines: what varies in most runs, and encoding/version/device when set."""
        extra = (f" {self.encoding.name}" if self.encoding is not IDENTITY else "") + (
            f" v{self.version}" if self.version != 1 else "") + (
            f" {self.device}" if self.device != DEFAULT_DEVICE else "")
        return f"{self.site} {self.mode.name} {self.profile} {self.cache}{extra}"


@dataclass(frozen=True)
class PlannedLoad:
    """A load in the experiment's seeded order. `seq` is its position: unique per run,
    so resuming can tell exactly which loads are done."""

    seq: int
    condition: Condition
    repetition: int  # 0-based among the measured loads of its condition; -1.. for warm-ups
    warmup: bool


@dataclass(frozen=True)
class Resource:
    """One request of a load, as the browser saw it (times in ms from navigation start)."""

    url: str
    origin: str
    protocol: str  # nextHopProtocol / CDP protocol (http/1.1, h2, h3; the edge proxy: http/1.0 too)
    connection_id: int | None
    from_cache: bool  # served from the disk/memory cache with no network request
    status: int
    resource_type: str
    start_ms: float
    response_start_ms: float | None
    end_ms: float | None
    transfer_bytes: int  # bytes on the wire (headers + body), 0 when from cache
    body_bytes: int  # decoded body size
    timing: dict[str, float] = field(default_factory=dict)  # CDP ResourceTiming phases
    revalidated: bool = False  # 304 Not Modified
    #: Body bytes as sent (Resource Timing encodedBodySize); body_bytes is after decoding.
    #: None when the browser did not say (stored before encodings, or a failed request).
    encoded_bytes: int | None = None
    content_encoding: str = ""  # the Content-Encoding received ("" none)
    #: The request offered a dictionary (Available-Dictionary), and the answer used it (dcz).
    dictionary_offered: bool = False
    dictionary_used: bool = False


@dataclass(frozen=True)
class LoadMeasurement:
    """What one page load measured and how it was judged, as the store keeps it: a
    LoadResult adds the resources it was measured from; the store's `LoadRow` which
    planned load it was and when."""

    ok: bool
    url: str
    ttfb_ms: float | None
    dcl_ms: float | None
    load_ms: float | None
    fcp_ms: float | None
    lcp_ms: float | None
    requests: int
    bytes: int
    cache_hits: int
    connections_browser: int
    connections_link: int
    connections_server: int
    flagged: bool
    flags: tuple[str, ...]
    errors: tuple[str, ...]
    link: dict[str, Any]  # LinkCounters.as_dict() for the load's interval
    #: VISUAL_METRICS (`core.measure.visual`): from the load's frames (times in ms from
    #: navigation start; SpeedIndex the area above its visual progress curve) and its page
    #: (CLS, total blocking time and the long tasks that make it; INP of a scripted interaction).
    first_visual_change_ms: float | None = field(default=None, kw_only=True)
    speed_index_ms: float | None = field(default=None, kw_only=True)
    visual_complete_85_ms: float | None = field(default=None, kw_only=True)
    visual_complete_95_ms: float | None = field(default=None, kw_only=True)
    visual_complete_99_ms: float | None = field(default=None, kw_only=True)
    last_visual_change_ms: float | None = field(default=None, kw_only=True)
    cls: float | None = field(default=None, kw_only=True)
    tbt_ms: float | None = field(default=None, kw_only=True)
    long_tasks: int | None = field(default=None, kw_only=True)
    inp_ms: float | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class LoadResult(LoadMeasurement):
    """One measured page load with its metrics and verdict (`metrics.evaluate`)."""

    resources: tuple[Resource, ...]
    notes: tuple[str, ...] = ()  # explained differences (e.g. an unused preconnected socket)
    bound_ms: float | None = None  # the analytic lower bound of load_ms (bound.py)
    #: Upstream connections the edge proxy opened for this load (proxy topology only).
    connections_proxy: int | None = None
    #: Upstream connections opened before this load (a warm pool) that carried its requests.
    connections_proxy_reused: int | None = None
    #: A replayed site's requests its recording did not have (answered 404 with
    #: `recording.UNRECORDED_HEADER`), their URLs in request order; None: not a replayed site.
    unrecorded: tuple[str, ...] | None = None
    #: Its visual progress curve (`core.measure.visual`): (ms since navigation start,
    #: completeness 0..1) per distinct frame; () when it has no frames.
    visual_progress: tuple[tuple[float, float], ...] = ()


@dataclass
class RawLoad:
    """What the browser saw of one load (`lab.browser`); `metrics.evaluate` turns it into
    a LoadResult."""

    url: str
    started_at: float
    error: str | None
    page: dict[str, Any] = field(default_factory=dict)
    requests: dict[str, dict[str, Any]] = field(default_factory=dict)  # CDP requestId -> merged events
    console_errors: list[str] = field(default_factory=list)
    trace: Any = None  # the Chrome trace recorded during the load, when asked for (`run --trace`)
