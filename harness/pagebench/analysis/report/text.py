"""`report`: a run's summary as JSON or a terminal table, from the store only."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime, timezone
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table

from pagebench.analysis import encoding as encoding_mod
from pagebench.analysis import summary as summary_mod
from pagebench.analysis.stats import Interval
from pagebench.core.records import Condition
from pagebench.core.spec.model import ProxySettings
from pagebench.results.store import META_COLUMNS, Store

LINK_CHECK_FIELDS = ("profile", "checked_at", "backend", "valid", "rtt_median_ms", "down_mbit", "up_mbit",
                     "loss_pct", "lateness_p99_us")


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def report_json(store: Store, run_id: str) -> dict[str, Any]:
    """The summary contract plus how the run was made: metadata, status, link checks, warnings;
    `encodings`: each condition against identity (`encoding.savings`) when the run has
    several encodings, else empty."""
    return _report(store, run_id)[0]


def _report(store: Store, run_id: str) -> tuple[dict[str, Any], list[encoding_mod.EncodingSaving]]:
    experiment = store.experiment(run_id)
    loads, plan = store.loads(run_id), store.plan(run_id)
    summary = summary_mod.summarize(run_id, loads, plan)
    savings = []
    if encoding_mod.several_encodings(item.condition for item in plan):  # reads every resource: only then
        savings = encoding_mod.savings(encoding_mod.loads_by_condition(loads, store.run_resources(run_id)))
    checks = [
        {**{key: check[key] for key in LINK_CHECK_FIELDS}, "checked_at": _iso(check["checked_at"]),
         "problems": list(check["result"].get("problems", []))}
        for check in store.link_checks(run_id)
    ]
    return {
        "run": run_id,
        "created_at": _iso(experiment["created_at"]),
        "status": experiment["status"],
        "reason": experiment.get("reason"),  # interrupted: the signal; failed: the error
        **{key: experiment[key] for key in META_COLUMNS},
        "delay_scheduling": experiment["meta"].get("delay_scheduling"),  # userspace backend only
        "proxy": proxy_settings(experiment),  # the edge proxy's pool as run; null without the proxy
        "planned": experiment["planned"],
        "recorded": experiment["recorded"],
        "link_checks": checks,
        "proxy_overheads": [{key: value for key, value in row.items() if key != "measured_at"}
                            | {"measured_at": _iso(row["measured_at"])} for row in store.proxy_overheads(run_id)],
        "warnings": summary_mod.warnings(summary),
        "conditions": summary["conditions"],
        "encodings": [encoding_mod.as_json(row) for row in savings],
    }, savings


def proxy_settings(experiment: dict[str, Any]) -> dict[str, Any] | None:
    """The edge proxy's settings as the run used them: recorded with it, else (runs from
    before the pool was recorded, every one cold) its spec's with the defaults."""
    recorded = (experiment.get("meta") or {}).get("proxy")
    if recorded is not None:
        return dict(recorded)
    spec = experiment.get("spec") or {}
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


def overhead_line(row: dict[str, Any]) -> str:
    """The edge proxy's measured cost, as the report states it beside the results."""
    per = row["per_request_ms"]
    return (f"edge-proxy overhead: {'–' if per is None else f'{per:.1f}'} ms per request ({row['site']}, "
            f"{row['mode']}, {row['requests']} requests; median of {len(row['proxy_ms'])} proxied against "
            f"{len(row['direct_ms'])} direct cold loads with no added delay; proxy scheduled "
            f"{row.get('scheduling') or 'as not recorded'})")


def report_table(store: Store, run_id: str) -> RenderableType:
    """One row per condition: n, load and TTFB (median, p90), connections, cache, size.
    Warnings (incomplete conditions, n too small) are the table's caption. A run with
    several encodings gets a second table: each encoding against identity."""
    data, savings = _report(store, run_id)
    versions = ", ".join(f"{name} {data[key]}" for name, key in
                         (("backend", "backend"), ("delay program", "delay_scheduling"), ("chromium", "chromium_version"),
                          ("nginx", "nginx_version"))
                         if data[key])
    # Columns that are the same for every condition go into the title, once.
    fields = summary_mod.CONDITION_FIELDS
    varying = [f for f in fields if len({str(c[f]) for c in data["conditions"]}) > 1] or ["mode"]
    constant = [f"{f} {data['conditions'][0][f]}" for f in fields if f not in varying and data["conditions"]
                and not summary_mod.is_default(f, data["conditions"][0][f])]
    state = data["status"] + (f" ({data['reason']})" if data.get("reason") else "")
    table = Table(title=f"run {run_id}: {state}, {data['recorded']}/{data['planned']} loads"
                        + (f" ({versions})" if versions else "")
                        + (f"\n{', '.join(constant)}" if constant else "")
                        + (f"\n{proxy_line(data['proxy'])}" if data["proxy"] else ""),
                  caption="\n".join([f"warning: {line}" for line in data["warnings"]]
                                    + [overhead_line(row) for row in data["proxy_overheads"]]) or None,
                  caption_justify="left")
    for field in varying:
        table.add_column(field, no_wrap=True)
    table.add_column("n", justify="right")
    for column in ("load median", "load p90", "TTFB median", "TTFB p90"):
        table.add_column(f"{column} (ms)", justify="right")
    table.add_column("load /\nbound", justify="right")
    proxied = any(c["topology"] == "proxy" for c in data["conditions"])
    ways: tuple[str, ...] = ("browser", "proxy", "link", "server") if proxied else ("browser", "link", "server")
    if proxied and (data["proxy"] or {}).get("pool") == "warm":  # opened by the proxy apart from reused
        ways = ("browser", "proxy", "proxy_reused", "link", "server")
    table.add_column("connections\n" + "/".join(way.removeprefix("proxy_") for way in ways), justify="right")
    for column in ("cache hits", "requests", "bytes"):
        table.add_column(column, justify="right")
    for condition in data["conditions"]:
        m = condition["metrics"]
        n = str(condition["n"])
        if condition["flagged"]:
            n += f" (+{condition['flagged']} flagged)"
        if condition["failed"]:
            n += f" (+{condition['failed']} failed)"
        connections = "/".join(_count(m[f"connections_{way}"]["median"]) for way in ways)
        table.add_row(
            *(summary_mod.shown(field, condition[field]) for field in varying), n,
            ms(m["load_ms"]["median"]), ms(m["load_ms"]["p90"]),
            ms(m["ttfb_ms"]["median"]), ms(m["ttfb_ms"]["p90"]),
            _ratio(condition["load_over_bound"]["median"]), connections, _count(m["cache_hits"]["median"]), _count(m["requests"]["median"]),
            human_bytes(m["bytes"]["median"]),
        )
    if not savings:
        return table
    return Group(table, encoding_table(savings, varying))


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
                          "load time" + "".join(f"\n{summary_mod.label(asdict(row.condition))}: {row.reason}"
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
                group_label(baseline, varying), row.condition.encoding, str(row.n),
                "–" if row.bytes is None else human_bytes(row.bytes.estimate),
                "baseline" if row.is_baseline else interval_text(row.saved_pct, percent, row.n),
                "" if row.is_baseline else interval_text(row.measured_ms, ms, min(row.n, row.n_baseline)),
                "" if row.is_baseline else interval_text(row.estimated_ms, ms, row.n),
                f"{_count(row.dictionary_offered)}/{_count(row.dictionary_used)}", _count(row.revalidated))
        table.add_section()
    return table
