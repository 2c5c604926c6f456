"""`report`: a run's summary as JSON or a terminal table, from the store only."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import datetime, timezone
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table

from pagebench.analysis import encoding as encoding_mod
from pagebench.analysis import pages as pages_mod
from pagebench.analysis import summary as summary_mod
from pagebench.analysis.stats import Interval
from pagebench.core import devices
from pagebench.core.records import Condition
from pagebench.core.spec.model import ProxySettings
from pagebench.results.rows import LinkCheckRow, ProxyOverheadRow, RunRow
from pagebench.results.store import Store

LINK_CHECK_FIELDS = ("profile", "checked_at", "backend", "valid", "rtt_median_ms", "down_mbit", "up_mbit",
                     "loss_pct", "lateness_p99_us")


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Report:
    """A run as the reports state it: how it was made, its one summary, its link checks
    and edge-proxy overheads, and each encoding against identity."""

    experiment: RunRow
    summary: summary_mod.Summary
    link_checks: tuple[LinkCheckRow, ...]
    proxy_overheads: tuple[ProxyOverheadRow, ...]
    savings: tuple[encoding_mod.EncodingSaving, ...]  # empty unless the run has several encodings


def read(store: Store, run_id: str) -> Report:
    """What the reports state about a run, from the store."""
    summary = summary_mod.of_run(store, run_id)
    savings = []
    if encoding_mod.several_encodings(c.condition for c in summary.conditions):  # reads every resource: only then
        savings = encoding_mod.savings(encoding_mod.loads_by_condition(summary, store.run_resources(run_id)))
    return Report(store.experiment(run_id), summary, tuple(store.link_checks(run_id)),
                  tuple(store.proxy_overheads(run_id)), tuple(savings))


def report_json(store: Store, run_id: str) -> dict[str, Any]:
    """The summary contract plus how the run was made: metadata, status, link checks, warnings;
    `encodings`: each condition against identity (`encoding.savings`) when the run has
    several encodings, else empty."""
    report = read(store, run_id)
    experiment = report.experiment
    return {
        "run": run_id,
        "created_at": _iso(experiment.created_at),
        "status": experiment.status,
        "reason": experiment.reason,  # interrupted: the signal; failed: the error
        **experiment.environment(),
        "delay_scheduling": experiment.meta.get("delay_scheduling"),  # userspace backend only
        "proxy": proxy_settings(experiment),  # the edge proxy's pool as run; null without the proxy
        "planned": experiment.planned,
        "recorded": experiment.recorded,
        "stopped_early": experiment.stopped,  # planned, not needed: `repetitions: auto` was decisive
        "link_checks": [{**{key: getattr(check, key) for key in LINK_CHECK_FIELDS},
                         "checked_at": _iso(check.checked_at), "problems": list(check.result.get("problems", []))}
                        for check in report.link_checks],
        "proxy_overheads": [_overhead_json(row) for row in report.proxy_overheads],
        "warnings": report.summary.warnings(),
        # each site's kind as the run recorded it ({} before kinds were kept), and an
        # interleaved baseline's twins (twin -> the spec's site; null without one)
        "sites": dict((experiment.meta or {}).get("sites") or {}),
        "baseline": (experiment.meta or {}).get("baseline"),
        # each device: its preset's fields and, when throttled, its `calibration` on this
        # run's host (rate, times, the factor achieved); {} before devices were kept
        "devices": dict((experiment.meta or {}).get("devices") or {}),
        "conditions": report.summary.as_json()["conditions"],
        "encodings": [encoding_mod.as_json(row) for row in report.savings],
        # a corpus run: each mode against the base mode page by page, and across the pages
        "pages": pages_mod.as_json(pages_mod.across(report.summary, experiment.meta or {})),
    }


def _overhead_json(row: ProxyOverheadRow) -> dict[str, Any]:
    values = {f.name: getattr(row, f.name) for f in fields(row) if f.name != "measured_at"}
    return values | {"direct_ms": list(row.direct_ms), "proxy_ms": list(row.proxy_ms),
                     "measured_at": _iso(row.measured_at)}


def proxy_settings(experiment: RunRow) -> dict[str, Any] | None:
    """The edge proxy's settings as the run used them: recorded with it, else (runs from
    before the pool was recorded, every one cold) its spec's with the defaults."""
    recorded = (experiment.meta or {}).get("proxy")
    if recorded is not None:
        return dict(recorded)
    spec = experiment.spec or {}
    topology = spec.get("topology", "direct")
    if "proxy" not in ([topology] if isinstance(topology, str) else topology):
        return None
    try:
        return ProxySettings.model_validate(spec.get("proxy") or {}).model_dump()
    except ValueError:
        return None


def proxy_line(settings: dict[str, Any]) -> str:
    """The pool a proxied comparison ran with, as the reports state it."""
    pool = settings.get("pool", "cold")
    how = ("upstream connections kept open across each condition's loads" if pool == "warm"
           else "every load opens its upstream connections")
    return (f"edge proxy: pool {pool} ({how}), up to {settings['connections']} connections per origin, "
            f"depth {settings['depth']}")


def site_lines(experiment: RunRow) -> list[str]:
    """What each site of the run was, as its meta recorded it (its kind's summary from the
    kinds table, and where a site of one's own was; a corpus page, its HAR): runs stored
    before kinds were kept have none."""
    return [(f"site {name}: a corpus page{' (a stand-in)' if info.get('synthesized') else ''}, from {info['har']}"
             if info.get("kind") == "corpus" else f"site {name}: {info.get('kind')} ({info.get('summary')})"
             + (f", from {info['path']}" if info.get("path") else ""))
            for name, info in ((experiment.meta or {}).get("sites") or {}).items()]


def device_lines(experiment: RunRow) -> list[str]:
    """What each device of the run was and, when throttled, the CPU slowdown it achieved
    (its meta `devices`): none for a run of the default device alone, or stored before devices."""
    return devices.device_lines((experiment.meta or {}).get("devices") or {})


def ms(value: float | None) -> str:
    """A time in ms as the reports print it: whole from 100 ms up, one decimal below."""
    if value is None:
        return "–"
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.1f}"


def _count(value: float | None) -> str:
    return "–" if value is None else f"{value:g}"


def human_bytes(value: float | None) -> str:
    """Bytes in binary units: '812 B', '14.2 KiB', '1.31 MiB'."""
    if value is None:
        return "–"
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(value) >= size:
            scaled = value / size
            return f"{scaled:.2f} {unit}" if scaled < 10 else f"{scaled:.1f} {unit}"
    return f"{value:.0f} B"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def overhead_line(row: ProxyOverheadRow) -> str:
    """The edge proxy's measured cost, as the report states it beside the results."""
    per = row.per_request_ms
    return (f"edge-proxy overhead: {'–' if per is None else f'{per:.1f}'} ms per request ({row.site}, "
            f"{row.mode}, {row.requests} requests; median of {len(row.proxy_ms)} proxied against "
            f"{len(row.direct_ms)} direct cold loads with no added delay; proxy scheduled "
            f"{row.scheduling or 'as not recorded'})")


def report_table(store: Store, run_id: str) -> RenderableType:
    """One row per condition: n, load and TTFB (median, p90), connections, cache, size.
    Warnings (incomplete conditions, n too small, a machine that differs) are the table's
    caption. A run measured by several lab machines gets a table of each machine's medians;
    a run with several encodings, one of each encoding against identity."""
    report = read(store, run_id)
    experiment, summary = report.experiment, report.summary
    versions = ", ".join(f"{name} {value}" for name, value in
                         (("backend", experiment.backend), ("delay program", experiment.meta.get("delay_scheduling")),
                          ("chromium", experiment.chromium_version), ("nginx", experiment.nginx_version))
                         if value)
    # Columns that are the same for every condition go into the title, once.
    varying, constant = summary.varying(), summary.constant()
    proxy = proxy_settings(experiment)
    state = experiment.status + (f" ({experiment.reason})" if experiment.reason else "")
    table = Table(title=f"run {run_id}: {state}, {experiment.recorded}/{experiment.planned} loads"
                        + (f", {experiment.stopped} stopped early" if experiment.stopped else "")
                        + (f" ({versions})" if versions else "")
                        + (f"\n{', '.join(constant)}" if constant else "")
                        + (f"\n{proxy_line(proxy)}" if proxy else ""),
                  caption="\n".join(site_lines(experiment) + device_lines(experiment)
                                    + [f"warning: {line}" for line in summary.warnings()]
                                    + [overhead_line(row) for row in report.proxy_overheads]) or None,
                  caption_justify="left")
    for field in varying:
        table.add_column(field, no_wrap=True)
    table.add_column("n", justify="right")
    # (column, metric, statistic); SpeedIndex where loads had frames (not a run stored before
    # them, or `run --no-frames`)
    timed = [("load median", "load_ms", "median"), ("load p90", "load_ms", "p90"), ("TTFB median", "ttfb_ms", "median"),
             ("TTFB p90", "ttfb_ms", "p90"), ("LCP median", "lcp_ms", "median")]
    if any(c.metrics["speed_index_ms"].median is not None for c in summary.conditions):
        timed.append(("SpeedIndex median", "speed_index_ms", "median"))
    for column, _, _ in timed:
        table.add_column(f"{column} (ms)", justify="right")
    table.add_column("load /\nbound", justify="right")
    proxied = any(c.condition.topology == "proxy" for c in summary.conditions)
    ways: tuple[str, ...] = ("browser", "proxy", "link", "server") if proxied else ("browser", "link", "server")
    if proxied and (proxy or {}).get("pool") == "warm":  # opened by the proxy apart from reused
        ways = ("browser", "proxy", "proxy_reused", "link", "server")
    table.add_column("connections\n" + "/".join(way.removeprefix("proxy_") for way in ways), justify="right")
    for column in ("cache hits", "requests", "bytes"):
        table.add_column(column, justify="right")
    for condition in summary.conditions:
        m = condition.metrics
        n = str(condition.n)
        if condition.flagged:
            n += f" (+{len(condition.flagged)} flagged)"
        if condition.failed:
            n += f" (+{len(condition.failed)} failed)"
        connections = "/".join(_count(m[f"connections_{way}"].median) for way in ways)
        table.add_row(
            *(summary_mod.shown(field, getattr(condition.condition, field)) for field in varying), n,
            *(ms(getattr(m[metric], statistic)) for _, metric, statistic in timed),
            _ratio(condition.load_over_bound.median), connections, _count(m["cache_hits"].median),
            _count(m["requests"].median), human_bytes(m["bytes"].median),
        )
    pages = pages_mod.across(summary, experiment.meta or {})
    sharded = any(c.machine_medians() for c in summary.conditions)
    extra = ([machines_table(summary, varying)] if sharded else []) + (
        [encoding_table(list(report.savings), varying)] if report.savings else []) + (
        [pages_table(pages)] if pages else [])
    return Group(table, *extra) if extra else table


def machines_table(summary: summary_mod.Summary, varying: list[str]) -> Table:
    """A sharded run's conditions machine by machine: each machine's n, its load median
    against the condition's (all machines'), its TTFB median; conditions one machine
    measured are left out."""
    table = Table(title="machines: each condition's medians per lab machine",
                  caption=f"a machine whose {summary_mod.MACHINE_METRIC} differs from the others' beyond noise is "
                          "named in the warnings", caption_justify="left")
    table.add_column("condition", no_wrap=True)
    table.add_column("machine", no_wrap=True)
    for column in ("n", "load median (ms)", "against all", "TTFB median (ms)"):
        table.add_column(column, justify="right")
    for condition in summary.conditions:
        machines, overall = condition.machine_medians(), condition.metrics["load_ms"].median
        name = " ".join(summary_mod.shown(f, getattr(condition.condition, f)) for f in varying)
        for i, (machine, its) in enumerate(machines.items()):
            load = its.medians["load_ms"]
            table.add_row(name if i == 0 else "", machine, str(its.n), ms(load),
                          "–" if load is None or not overall else f"{load / overall - 1:+.1%}",
                          ms(its.medians["ttfb_ms"]), end_section=i == len(machines) - 1)
    return table


def pages_table(rows: list[pages_mod.ModeAcross]) -> Table:
    """A corpus run's pages: each page's traits, and each mode's median load and its ratio
    to the base mode's with the verdict; the caption, each mode across the pages."""
    table = Table(title="pages: each mode's median load against the base mode's", caption="\n".join(
        row.line() for row in rows), caption_justify="left")
    grouped = any(row.group for row in rows)
    if grouped:
        table.add_column("group", no_wrap=True)
    for column in ("page", "requests", "origins", "bytes", "modes", "median load (ms)", "ratio [95 % CI]", "verdict"):
        table.add_column(column, justify="left" if column in ("page", "modes", "verdict") else "right")
    for row in rows:
        for page in row.pages:
            ratio = page.ratio
            table.add_row(*([", ".join(v for _, v in row.group)] if grouped else []), page.page,
                          _count(page.traits.get("requests")), _count(page.traits.get("origins")),
                          human_bytes(page.traits.get("bytes")), f"{row.mode} / {row.base}",
                          f"{ms(page.mode_ms)} / {ms(page.base_ms)}",
                          "–" if ratio is None else f"{ratio.estimate:.2f} [{ratio.low:.2f}, {ratio.high:.2f}]",
                          page.verdict)
    return table


def interval_text(value: Interval | None, show: Any, n: int) -> str:
    """'80.0 (75.1–84.2)': an estimate with its interval (none below two loads), or '–'."""
    if value is None:
        return "–"
    text = show(value.estimate)
    return text if n < 2 else f"{text} ({show(value.low)}–{show(value.high)})"


def percent(value: float) -> str:
    return f"{value:.1f} %"


def group_label(condition: Condition, varying: list[str]) -> str:
    """A group of encodings named by the fields that vary in the run (the encoding aside)."""
    fields = [f for f in varying if f != "encoding"] or ["mode"]
    return " ".join(summary_mod.shown(f, getattr(condition, f)) for f in fields)


def encoding_table(rows: list[encoding_mod.EncodingSaving], varying: list[str]) -> Table:
    """Per group (same site, mode, topology, profile, cache, TLS, version), each encoding
    against identity: bytes per load, saved, time saved measured and estimated (seed 001's
    model), dictionary use and 304s; medians per load with 95 % bootstrap intervals."""
    table = Table(title="encodings against identity (medians per load, 95 % bootstrap intervals)",
                  caption="estimated: seed 001's model, each response's identity transfer time (first to last "
                          "byte) x the share of its bytes saved; measured: median identity load time - median "
                          "load time" + "".join(f"\n{summary_mod.label(row.condition)}: {row.reason}"
                                                for row in rows if row.reason),
                  caption_justify="left")
    for column in ("condition", "encoding"):
        table.add_column(column, no_wrap=True)
    for column in ("n", "bytes / load", "saved vs identity", "measured saved (ms)", "estimated saved (ms)",
                   "dictionary\noffered/used", "304s"):
        table.add_column(column, justify="right")
    for baseline, members in encoding_mod.grouped(rows):
        for row in members:
            table.add_row(
                group_label(baseline, varying), row.condition.encoding.name, str(row.n),
                "–" if row.bytes is None else human_bytes(row.bytes.estimate),
                "baseline" if row.is_baseline else interval_text(row.saved_pct, percent, row.n),
                "" if row.is_baseline else interval_text(row.measured_ms, ms, min(row.n, row.n_baseline)),
                "" if row.is_baseline else interval_text(row.estimated_ms, ms, row.n),
                f"{_count(row.dictionary_offered)}/{_count(row.dictionary_used)}", _count(row.revalidated))
        table.add_section()
    return table
