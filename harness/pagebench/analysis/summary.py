"""Per-condition summaries of a run: the `report` JSON contract.

Pure: takes load rows (dicts, as `Store.loads` returns them) and the plan; no database.
Only measured loads count (warm-ups are skipped). A load that failed (`ok` false) or
was flagged is left out of the statistics and counted instead, never hidden:
`n` + `flagged` + `failed` = measured loads recorded, and `planned` says how many
there should be.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pagebench.core import encodings, modes
from pagebench.core.quantiles import percentile
from pagebench.core.records import CACHE_STATES, Condition, PlannedLoad

CONDITION_FIELDS = ("site", "mode", "topology", "profile", "cache", "tls", "encoding", "version")
#: Fields a run stored before encodings does not have, and their values then: a row
#: without them is identity, version 1, and is shown exactly as it was.
DEFAULTS: dict[str, str] = {"encoding": encodings.IDENTITY, "version": "1"}
METRICS = ("load_ms", "ttfb_ms", "dcl_ms", "fcp_ms", "connections_browser", "connections_link",
           "connections_server", "connections_proxy", "connections_proxy_reused", "cache_hits", "requests",
           "bytes")
STATISTICS = ("median", "p90", "min", "max")
#: Below this many usable loads a condition's numbers say little: the report says so.
MIN_N = 5

Key = tuple[str, ...]


def describe(values: Iterable[float | None]) -> dict[str, float | None]:
    """{median, p90, min, max} of the values that are not None (all None when none are)."""
    present = [value for value in values if value is not None]
    if not present:
        return dict.fromkeys(STATISTICS)
    return {
        "median": percentile(present, 50),
        "p90": percentile(present, 90),
        "min": min(present),
        "max": max(present),
    }


def field(row: Mapping[str, Any], name: str) -> str:
    """A condition field of a row (a load, a summary) as text, its default when absent."""
    value = row.get(name)
    return DEFAULTS[name] if value is None and name in DEFAULTS else str(value)


def key_of(row: Mapping[str, Any]) -> Key:
    """The condition of a row as a tuple of CONDITION_FIELDS (text)."""
    return tuple(field(row, name) for name in CONDITION_FIELDS)


def condition_of(row: Mapping[str, Any]) -> Condition:
    """The Condition of a row (a load or a summary)."""
    return Condition(*(field(row, name) for name in CONDITION_FIELDS[:6]), encoding=field(row, "encoding"),
                     version=int(field(row, "version")))


def is_default(name: str, value: Any) -> bool:
    """Is this the value every run before encodings had (shown nowhere, so old reports stay)?"""
    return name in DEFAULTS and str(value) == DEFAULTS[name]


def shown(name: str, value: Any) -> str:
    """A field's value as the reports show it: versions as `v2`, the rest as they are."""
    return f"v{value}" if name == "version" else str(value)


def _rank(value: str, known: Sequence[str]) -> tuple[int, str]:
    return (known.index(value), "") if value in known else (len(known), value)


def counts(load: Mapping[str, Any]) -> bool:
    """Does a load row count in the statistics? Measured (not a warm-up), not failed, not
    flagged. The ones that do not are counted and shown, never silently dropped."""
    return not load.get("warmup") and bool(load.get("ok", True)) and not load.get("flagged")


def order(condition: Mapping[str, Any]) -> tuple[Any, ...]:
    """Stable report order: site, mode (as the modes table lists them), profile, cache, tls, topology,
    version, encoding (as the encodings table lists them)."""
    return (condition["site"], (modes.rank(condition["mode"]), condition["mode"]), condition["profile"],
            _rank(condition["cache"], CACHE_STATES), condition["tls"], condition["topology"],
            int(field(condition, "version")), _rank(field(condition, "encoding"), encodings.NAMES))


def label(condition: Mapping[str, Any]) -> str:
    """One-line name of a condition, e.g. 'demo h2 direct 3g cold tls1.3', then its encoding
    and version when not identity and 1 ('demo h2 direct 3g warm tls1.3 dcz v2')."""
    extra = [shown(name, field(condition, name)) for name in ("encoding", "version")
             if not is_default(name, field(condition, name))]
    return " ".join([*(str(condition[name]) for name in CONDITION_FIELDS[:5]), modes.tls_label(condition["tls"]),
                     *extra])


def summarize(run_id: str, loads: Iterable[Mapping[str, Any]], plan: Iterable[PlannedLoad]) -> dict[str, Any]:
    """The report contract: {"run", "conditions": [{site, mode, topology, profile, cache,
    tls, encoding, version, planned, n, flagged, failed, metrics: {metric: {median, p90,
    min, max}}}]} (version an int).
    Conditions that are planned but have no loads yet appear with n = 0."""
    planned: dict[Key, int] = {}
    for item in plan:
        key = tuple(str(getattr(item.condition, name)) for name in CONDITION_FIELDS)
        planned[key] = planned.get(key, 0) + (0 if item.warmup else 1)
    used: dict[Key, list[Mapping[str, Any]]] = {key: [] for key in planned}
    flagged: dict[Key, int] = dict.fromkeys(planned, 0)
    failed: dict[Key, int] = dict.fromkeys(planned, 0)
    for load in loads:
        if load.get("warmup"):
            continue
        key = key_of(load)
        used.setdefault(key, [])
        flagged.setdefault(key, 0)
        failed.setdefault(key, 0)
        if counts(load):
            used[key].append(load)
        elif not load.get("ok", True):
            failed[key] += 1
        else:
            flagged[key] += 1
    summaries = []
    for key, rows in used.items():
        condition: dict[str, Any] = dict(zip(CONDITION_FIELDS, key))
        condition["version"] = int(condition["version"])
        summaries.append({
            **condition,
            "planned": planned.get(key, 0),
            "n": len(rows),
            "flagged": flagged[key],
            "failed": failed[key],
            "metrics": {metric: describe(row.get(metric) for row in rows) for metric in METRICS},
            # how much of the load time the protocol and the link explain (bound.py)
            "load_over_bound": describe(row["load_ms"] / row["bound_ms"] for row in rows
                                        if row.get("bound_ms") and row.get("load_ms") is not None),
        })
    summaries.sort(key=order)
    return {"run": run_id, "conditions": summaries}


def warnings(summary: Mapping[str, Any]) -> list[str]:
    """One advisory line per condition whose numbers should not be trusted as they are."""
    lines = []
    for condition in summary["conditions"]:
        reasons = []
        recorded = condition["n"] + condition["flagged"] + condition["failed"]
        if recorded < condition["planned"]:
            reasons.append(f"{recorded} of {condition['planned']} planned loads recorded: resume the run")
        if condition["n"] < MIN_N:
            excluded = condition["flagged"] + condition["failed"]
            why = f" ({excluded} flagged or failed left out)" if excluded else ""
            reasons.append(f"n={condition['n']}{why}: can't tell: n too small (want at least {MIN_N})")
        if reasons:
            lines.append(f"{label(condition)}: " + "; ".join(reasons))
    return lines
