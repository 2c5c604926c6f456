"""`pagebench export`: a run as flat tables for pandas, R or a spreadsheet, from the store
only (and its measured loads' HARs, for DevTools and other HAR viewers). `loads` and `resources` hold the raw samples, joined on (run, seq, client), in the
store's own columns (`results.schema`); `conditions` is the run's one summary
(`summary`), a row per condition, as the reports state it.

Warm-up loads are included and marked (`warmup`), as flagged ones are (`flagged`): the
reader decides, nothing is dropped. JSON-valued columns (flags, notes, link counters,
timings) are JSON text in both formats.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pagebench.analysis.summary import ConditionSummary, summarize
from pagebench.results import schema
from pagebench.results.rows import LoadRow, ResourceRow
from pagebench.results.store import Store

JSON_COLUMNS = ("flags", "errors", "notes", "link", "timing")
#: The stored columns each table repeats (the store's internal ids left out).
LOAD_COLUMNS = tuple(c.name for c in schema.loads.c if c.name not in ("id", "experiment_id"))
RESOURCE_COLUMNS = tuple(c.name for c in schema.resources.c if c.name not in ("id", "load_id"))


def _cell(name: str, value: Any) -> Any:
    return json.dumps(value, sort_keys=True) if name in JSON_COLUMNS else value


def _load(row: LoadRow, run_id: str) -> dict[str, Any]:
    return {"run": run_id, **{name: _cell(name, getattr(row, name)) for name in LOAD_COLUMNS},
            "condition": row.condition.key, **row.condition.as_names()}


def _resource(row: ResourceRow, load: LoadRow, run_id: str) -> dict[str, Any]:
    values = {name: row.position if name == "position" else _cell(name, getattr(row.resource, name))
              for name in RESOURCE_COLUMNS}
    return {"run": run_id, "seq": load.seq, "client": load.client, **values}


def _condition(summary: ConditionSummary, run_id: str) -> dict[str, Any]:
    """A condition's summary, its statistics as `<metric>_<statistic>` columns (a sharded
    run's medians per machine left out: the same columns for every run; `loads` names each
    load's machine)."""
    found = summary.as_json()
    found.pop("machines", None)
    stats = {f"{metric}_{name}": value for metric, described in found.pop("metrics").items()
             for name, value in described.items()}
    bound = {f"load_over_bound_{name}": value for name, value in found.pop("load_over_bound").items()}
    return {"run": run_id, **found, **stats, **bound}


def tables(store: Store, run_id: str) -> dict[str, list[dict[str, Any]]]:
    """The run's tables by name: loads, resources, conditions."""
    loads = store.loads(run_id, include_warmup=True)
    by_id = {load.id: load for load in loads}
    summary = summarize(run_id, loads, store.plan(run_id))
    return {"loads": [_load(row, run_id) for row in loads],
            "resources": [_resource(row, by_id[row.load_id], run_id) for row in store.run_resources(run_id)],
            "conditions": [_condition(condition, run_id) for condition in summary.conditions]}


def write_csv(store: Store, run_id: str, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in tables(store, run_id).items():
        path = directory / f"{name}.csv"
        with path.open("w", newline="") as handle:
            if rows:
                writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
        written.append(path)
    return written


def write_parquet(store: Store, run_id: str, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in tables(store, run_id).items():
        path = directory / f"{name}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), path)
        written.append(path)
    return written


@dataclass(frozen=True)
class HarExport:
    """What `write_hars` wrote, and the measured loads that kept no HAR (their seqs)."""

    written: list[Path]
    missing: list[int]


def har_name(load: LoadRow) -> str:
    """A load's HAR file name: its condition and seq (and client, when several loaded at once)."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", load.condition.key.replace("|", "_"))
    return f"{name}-seq{load.seq}" + (f"-client{load.client}" if load.client else "") + ".har"


def write_hars(store: Store, run_id: str, directory: Path) -> HarExport:
    """Each measured load's HAR, uncompressed, one file per load (`har_name`)."""
    loads = store.loads(run_id)
    directory.mkdir(parents=True, exist_ok=True)
    written, missing = [], []
    for load in loads:
        document = store.artifacts.read(load.har) if store.artifacts is not None else None
        if document is None:
            missing.append(load.seq)
            continue
        path = directory / har_name(load)
        path.write_text(json.dumps(document, indent=1))
        written.append(path)
    return HarExport(written, missing)
