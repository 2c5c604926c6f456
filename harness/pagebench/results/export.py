"""`pagebench export`: a run's loads and resources as flat tables for pandas, R or a
spreadsheet. Two files per format, `loads` and `resources`, joined on (run, seq).
Warm-up loads are included and marked (`warmup`), as flagged ones are (`flagged`): the
reader decides, nothing is dropped. JSON-valued columns (flags, notes, link counters,
timings) are JSON text in both formats.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from pagebench.results.store import Store

JSON_COLUMNS = ("flags", "errors", "notes", "link", "timing")


def _flat(row: dict[str, Any], run_id: str) -> dict[str, Any]:
    flat = {"run": run_id}
    for key, value in row.items():
        if key == "id":
            continue
        flat[key] = json.dumps(value, sort_keys=True) if key in JSON_COLUMNS else value
    return flat


def tables(store: Store, run_id: str) -> dict[str, list[dict[str, Any]]]:
    loads = [_flat(row, run_id) for row in store.loads(run_id, include_warmup=True)]
    resources = [_flat({k: v for k, v in row.items() if k != "load_id"}, run_id)
                 for row in store.run_resources(run_id)]
    return {"loads": loads, "resources": resources}


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
