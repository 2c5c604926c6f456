"""`report`: a run's summary as JSON or a terminal table, from the store only."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from rich.table import Table

from pagebench.analysis import summary as summary_mod
from pagebench.core.spec import ProxySettings
from pagebench.results.store import META_COLUMNS, Store

LINK_CHECK_FIELDS = ("profile", "checked_at", "backend", "valid", "rtt_median_ms", "down_mbit", "up_mbit",
                     "loss_pct", "lateness_p99_us")


def _iso(epoch: float | None) -> str | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def report_json(store: Store, run_id: str) -> dict[str, Any]:
    """The summary contract plus how the run was made: metadata, status, link checks, warnings."""
    experiment = store.experiment(run_id)
    summary = summary_mod.summarize(run_id, store.loads(run_id), store.plan(run_id))
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
    }


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


def report_table(store: Store, run_id: str) -> Table:
    """One row per condition: n, load and TTFB (median, p90), connections, cache, size.
    Warnings (incomplete conditions, n too small) are the table's caption."""
    data = report_json(store, run_id)
    versions = ", ".join(f"{name} {data[key]}" for name, key in
                         (("backend", "backend"), ("delay program", "delay_scheduling"), ("chromium", "chromium_version"),
                          ("nginx", "nginx_version"))
                         if data[key])
    # Columns that are the same for every condition go into the title, once.
    fields = ("site", "mode", "topology", "profile", "cache", "tls")
    varying = [f for f in fields if len({str(c[f]) for c in data["conditions"]}) > 1] or ["mode"]
    constant = [f"{f} {data['conditions'][0][f]}" for f in fields if f not in varying and data["conditions"]]
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
            *(str(condition[field]) for field in varying), n,
            ms(m["load_ms"]["median"]), ms(m["load_ms"]["p90"]),
            ms(m["ttfb_ms"]["median"]), ms(m["ttfb_ms"]["p90"]),
            _ratio(condition["load_over_bound"]["median"]), connections, _count(m["cache_hits"]["median"]), _count(m["requests"]["median"]),
            human_bytes(m["bytes"]["median"]),
        )
    return table
