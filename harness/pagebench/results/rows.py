"""The store's rows as readers get them: frozen values (a load with its Condition, its
metrics and flags; a resource as the Resource recorded; a run; its link checks and edge
proxy overheads), so a reader names what it reads and a misspelt field fails where it is
written, not as a None deep in a report. And the other way: a core record's values as the
columns written.

Pure: mappings in (a database row's, or any), values out. Columns an older store lacks
read as their migration's defaults (`server_default`), so an old store reads the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from pagebench.core import encodings, modes
from pagebench.core.modes import Mode
from pagebench.core.records import VISUAL_METRICS, Condition, LoadMeasurement, LoadResult, Resource
from pagebench.results.database import StoreError
from pagebench.results.schema import META_COLUMNS

T = TypeVar("T")

Row = Mapping[str, Any]


@dataclass(frozen=True)
class RunRow:
    """A run: its `experiments` row (spec, meta, the environment's columns), its status as
    it is now (see `Store.experiment`) and how many planned loads are recorded."""

    run_id: str
    created_at: float
    planned: int
    recorded: int  # distinct seqs with a load
    status: str  # schema.STATUSES
    reason: str | None  # interrupted: the signal; failed: the error
    spec: dict[str, Any]
    meta: dict[str, Any]
    seed: int | None
    backend: str | None
    git_commit: str | None
    host: str | None
    kernel: str | None
    chromium_version: str | None
    nginx_version: str | None
    pagebench_version: str | None

    #: Planned loads a stopping rule left out (`repetitions: auto`): not owed, never loaded.
    stopped: int = 0

    @property
    def settled(self) -> int:
        """Planned loads that are done: recorded, or stopped early (what a progress counts)."""
        return self.recorded + self.stopped

    def environment(self) -> dict[str, Any]:
        """The `meta` keys with columns of their own (schema.META_COLUMNS), in that order."""
        return {key: getattr(self, key) for key in META_COLUMNS}


@dataclass(frozen=True)
class ConditionRow:
    """A condition of a run with the fields of its profile as the run used them."""

    condition: Condition
    profile_fields: dict[str, Any]


@dataclass(frozen=True, kw_only=True)
class LoadRow(LoadMeasurement):
    """One stored load: what it measured and its verdict (ok; flagged, and why), which
    planned load it was (seq, client, repetition, warm-up) of which Condition, and when."""

    id: int
    seq: int
    client: int  # 0.. among the clients loading the page at once
    condition: Condition
    condition_id: int
    repetition: int
    warmup: bool
    started_at: float
    recorded_at: float
    notes: tuple[str, ...]
    bound_ms: float | None
    connections_proxy: int | None
    connections_proxy_reused: int | None
    unrecorded: int | None  # requests a replayed site's recording lacked; None: not replayed
    #: Its evidence, relative to the store's artifact directory (`Store.artifacts`); None: none kept.
    har: str | None = None
    trace: str | None = None
    frames: str | None = None
    #: The lab machine that measured it (`run --shard`); None: the run's host (`RunRow.host`).
    machine: str | None = None

    def metric(self, name: str) -> float | None:
        """A metric by its name (`analysis.summary.METRICS`, a compare's `--metric`); counts
        stay ints (the report's JSON shows them so)."""
        value: float | None = getattr(self, name)
        return value

    def result(self, resources: Sequence[Resource]) -> LoadResult:
        """The LoadResult recorded, with its resources (the unrecorded URLs are stored as
        a count only: None)."""
        kept = {f.name: getattr(self, f.name) for f in fields(LoadResult)
                if f.name not in ("resources", "unrecorded", "visual_progress")}
        return LoadResult(**kept, resources=tuple(resources))


@dataclass(frozen=True)
class ResourceRow:
    """One request of a stored load, at its position (0-based, in request order)."""

    load_id: int
    position: int
    resource: Resource


@dataclass(frozen=True)
class LinkCheckRow:
    """A link check stored with a run: the headline numbers, and the whole `result`."""

    profile: str
    checked_at: float
    backend: str | None
    valid: bool
    rtt_median_ms: float | None
    down_mbit: float | None
    up_mbit: float | None
    loss_pct: float | None
    lateness_p99_us: float | None
    result: dict[str, Any]  # `pagebench link check --json`


@dataclass(frozen=True)
class ProxyOverheadRow:
    """The edge proxy's measured cost: load times direct and through it, per request."""

    measured_at: float
    site: str
    mode: Mode
    tls: str
    requests: int
    per_request_ms: float | None  # (median proxied - median direct) / requests
    direct_ms: tuple[float, ...]
    proxy_ms: tuple[float, ...]
    scheduling: str | None  # the proxy's: "SCHED_FIFO 20" or "normal (...)"


# -- from a row's columns --------------------------------------------------------------


def condition_of(row: Row) -> Condition:
    """The Condition of a row joined with `conditions`: the stored names become the
    vocabulary's rows here, once."""
    return Condition(row["site"], _known(modes.parse, row["mode"]), row["topology"], row["profile"], row["cache"],
                     row["tls"], _known(encodings.parse, row["encoding"]), row["version"], row["device"])


def _known(parse: Callable[[str], T], name: str) -> T:
    """A stored name as its row; one a newer pagebench stored is a one-line StoreError."""
    try:
        return parse(name)
    except ValueError as error:
        raise StoreError(f"the store holds {error}: it was written by a newer pagebench (upgrade pagebench)") from None


def run_of(row: Row, status: str, reason: str | None) -> RunRow:
    """A run from its `experiments` columns and the status it has now."""
    return RunRow(
        run_id=row["run_id"], created_at=row["created_at"], planned=row["planned"], recorded=row["recorded"],
        stopped=row["stopped"], status=status, reason=reason, spec=row["spec"], meta=row["meta"],
        **{key: row[key] for key in META_COLUMNS})


def load_of(row: Row) -> LoadRow:
    """A load from its `loads` columns joined with its condition's."""
    values = {f.name: row[f.name] for f in fields(LoadRow) if f.name != "condition"}
    return LoadRow(**values | {
        "condition": condition_of(row), "warmup": bool(row["warmup"]), "ok": bool(row["ok"]),
        "flagged": bool(row["flagged"]), "flags": tuple(row["flags"]), "errors": tuple(row["errors"]),
        "notes": tuple(row["notes"])})


def resource_of(row: Row) -> ResourceRow:
    """A resource from its `resources` columns."""
    return ResourceRow(row["load_id"], row["position"], Resource(
        url=row["url"], origin=row["origin"], protocol=row["protocol"], connection_id=row["connection_id"],
        from_cache=bool(row["from_cache"]), status=row["status"], resource_type=row["resource_type"],
        start_ms=row["start_ms"], response_start_ms=row["response_start_ms"], end_ms=row["end_ms"],
        transfer_bytes=row["transfer_bytes"], body_bytes=row["body_bytes"], timing=row["timing"],
        revalidated=bool(row["revalidated"]), encoded_bytes=row["encoded_bytes"],
        content_encoding=row["content_encoding"], dictionary_offered=bool(row["dictionary_offered"]),
        dictionary_used=bool(row["dictionary_used"])))


def link_check_of(row: Row) -> LinkCheckRow:
    return LinkCheckRow(**{name: row[name] for name in LinkCheckRow.__dataclass_fields__})


def proxy_overhead_of(row: Row) -> ProxyOverheadRow:
    values = {name: row[name] for name in ProxyOverheadRow.__dataclass_fields__}
    return ProxyOverheadRow(**values | {"mode": _known(modes.parse, row["mode"]), "direct_ms": tuple(row["direct_ms"]),
                                        "proxy_ms": tuple(row["proxy_ms"])})


# -- to a row's columns ----------------------------------------------------------------


def load_columns(result: LoadResult) -> dict[str, Any]:
    """A LoadResult's values as `loads` columns (everything but its resources)."""
    return {
        "ok": result.ok, "flagged": result.flagged, "url": result.url,
        "ttfb_ms": result.ttfb_ms, "dcl_ms": result.dcl_ms, "load_ms": result.load_ms,
        "fcp_ms": result.fcp_ms, "lcp_ms": result.lcp_ms,
        "requests": result.requests, "bytes": result.bytes, "cache_hits": result.cache_hits,
        "connections_browser": result.connections_browser, "connections_link": result.connections_link,
        "connections_server": result.connections_server,
        "flags": list(result.flags), "errors": list(result.errors), "notes": list(result.notes),
        "link": result.link, "bound_ms": result.bound_ms, "connections_proxy": result.connections_proxy,
        "connections_proxy_reused": result.connections_proxy_reused,
        "unrecorded": None if result.unrecorded is None else len(result.unrecorded),
    } | {name: getattr(result, name) for name in VISUAL_METRICS}


def resource_columns(resource: Resource) -> dict[str, Any]:
    """A Resource's values as `resources` columns."""
    return {
        "url": resource.url, "origin": resource.origin, "protocol": resource.protocol,
        "connection_id": resource.connection_id, "from_cache": resource.from_cache,
        "revalidated": resource.revalidated, "status": resource.status, "resource_type": resource.resource_type,
        "start_ms": resource.start_ms, "response_start_ms": resource.response_start_ms, "end_ms": resource.end_ms,
        "transfer_bytes": resource.transfer_bytes, "body_bytes": resource.body_bytes, "timing": resource.timing,
        "encoded_bytes": resource.encoded_bytes, "content_encoding": resource.content_encoding,
        "dictionary_offered": resource.dictionary_offered, "dictionary_used": resource.dictionary_used,
    }
