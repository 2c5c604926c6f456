"""`pagebench export`: loads and resources of a stored run as CSV and Parquet, nothing dropped."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq

from pagebench.results.store import Store
from tests.helpers import fill, pagebench


def test_csv_and_parquet_hold_every_load_and_resource(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    store = Store(url)
    fill(store, "r1")
    loads, resources = store.loads("r1", include_warmup=True), store.run_resources("r1")
    assert any(l["warmup"] for l in loads) and any(l["flagged"] for l in loads)

    result = pagebench("export", "r1", "--csv", str(tmp_path / "csv"), "--db", url)
    assert result.returncode == 0, result.stderr
    with open(tmp_path / "csv" / "loads.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(r["seq"]) for r in rows] == [l["seq"] for l in loads]
    assert {r["run"] for r in rows} == {"r1"}
    assert [json.loads(r["flags"]) for r in rows] == [l["flags"] for l in loads]
    with open(tmp_path / "csv" / "resources.csv") as handle:
        assert len(list(csv.DictReader(handle))) == len(resources)

    result = pagebench("export", "latest", "--parquet", str(tmp_path / "pq"), "--db", url)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(tmp_path / "pq" / "loads.parquet")
    assert table.num_rows == len(loads) and table.column("load_ms").to_pylist() == [l["load_ms"] for l in loads]
    assert pq.read_table(tmp_path / "pq" / "resources.parquet").num_rows == len(resources)


def test_bad_export_arguments_are_one_line_errors(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    fill(Store(url), "r1")
    both = pagebench("export", "r1", "--csv", str(tmp_path / "a"), "--parquet", str(tmp_path / "b"), "--db", url)
    assert both.returncode == 2 and both.stderr.strip() == "error: give exactly one of --csv DIR or --parquet DIR"
    unknown = pagebench("export", "r9", "--csv", str(tmp_path / "a"), "--db", url)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown run 'r9'")
    missing = pagebench("export", "r1", "--csv", str(tmp_path / "a"), "--db", f"sqlite:///{tmp_path}/none.sqlite")
    assert missing.returncode == 2 and "no results store there" in missing.stderr
    assert not (tmp_path / "none.sqlite").exists()
