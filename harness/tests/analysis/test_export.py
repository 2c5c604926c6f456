"""`pagebench export`: loads and resources of a stored run as CSV and Parquet, nothing
dropped, in the store's columns; and the run's one summary, a row per condition."""

from __future__ import annotations

import csv
import json

import pyarrow.parquet as pq
import pytest

from pagebench.analysis.summary import of_run
from pagebench.results.artifacts import Evidence
from pagebench.results.store import Store
from pagebench.analysis.export import tables
from tests.helpers import META, PROFILES, SPEC, fake_load, fill, fill_sharded, make_plan, pagebench

#: The columns as exports have always had them (a public interface, like the store's).
LOADS = ["run", "seq", "condition_id", "repetition", "warmup", "started_at", "recorded_at", "ok", "flagged", "url",
         "ttfb_ms", "dcl_ms", "load_ms", "fcp_ms", "lcp_ms", "requests", "bytes", "cache_hits",
         "connections_browser", "connections_link", "connections_server", "flags", "errors", "notes", "link",
         "bound_ms", "client", "connections_proxy", "connections_proxy_reused", "unrecorded", "har", "trace",
         "first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms", "visual_complete_95_ms",
         "visual_complete_99_ms", "last_visual_change_ms", "cls", "tbt_ms", "long_tasks", "inp_ms", "frames",
         "machine", "condition", "site",
         "mode", "topology", "profile", "cache", "tls", "encoding", "version", "device"]
RESOURCES = ["run", "seq", "client", "position", "url", "origin", "protocol", "connection_id", "from_cache",
             "revalidated", "status", "resource_type", "start_ms", "response_start_ms", "end_ms", "transfer_bytes",
             "body_bytes", "timing", "encoded_bytes", "content_encoding", "dictionary_offered", "dictionary_used"]


def _csv(path) -> list[dict[str, str]]:
    with open(path) as handle:
        return list(csv.DictReader(handle))


def test_csv_and_parquet_hold_every_load_and_resource(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    store = Store(url)
    fill(store, "r1")
    loads, resources = store.loads("r1", include_warmup=True), store.run_resources("r1")
    assert any(l.warmup for l in loads) and any(l.flagged for l in loads)

    result = pagebench("export", "r1", "--csv", str(tmp_path / "csv"), "--db", url)
    assert result.returncode == 0, result.stderr
    rows = _csv(tmp_path / "csv" / "loads.csv")
    assert list(rows[0]) == LOADS
    assert [int(r["seq"]) for r in rows] == [l.seq for l in loads]
    assert {r["run"] for r in rows} == {"r1"}
    assert [json.loads(r["flags"]) for r in rows] == [list(l.flags) for l in loads]
    assert [r["condition"] for r in rows] == [l.condition.key for l in loads]
    exported = _csv(tmp_path / "csv" / "resources.csv")
    assert len(exported) == len(resources) and list(exported[0]) == RESOURCES
    assert (exported[7]["seq"], exported[7]["position"], exported[7]["url"]) == (
        "1", "1", resources[7].resource.url)  # the second load's second request

    result = pagebench("export", "latest", "--parquet", str(tmp_path / "pq"), "--db", url)
    assert result.returncode == 0, result.stderr
    table = pq.read_table(tmp_path / "pq" / "loads.parquet")
    assert table.num_rows == len(loads) and table.column("load_ms").to_pylist() == [l.load_ms for l in loads]
    assert table.column_names == LOADS
    assert pq.read_table(tmp_path / "pq" / "resources.parquet").num_rows == len(resources)


def test_the_conditions_table_is_the_runs_summary(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    store = Store(url)
    fill(store, "r1", record=12)  # some conditions short of their planned loads
    summary = of_run(store, "r1")
    result = pagebench("export", "r1", "--parquet", str(tmp_path / "pq"), "--db", url)
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout and "conditions.parquet" in result.stdout
    rows = pq.read_table(tmp_path / "pq" / "conditions.parquet").to_pylist()
    assert len(rows) == len(summary.conditions) == 4
    for row, condition in zip(rows, summary.conditions):
        assert (row["run"], row["mode"], row["profile"], row["version"]) == (
            "r1", condition.condition.mode.name, condition.condition.profile, 1)
        assert (row["planned"], row["n"], row["flagged"], row["failed"]) == (
            condition.planned, condition.n, len(condition.flagged), len(condition.failed))
        assert row["load_ms_median"] == condition.metrics["load_ms"].median
        assert row["load_ms_p90"] == pytest.approx(condition.metrics["load_ms"].p90)
        assert row["connections_link_max"] == condition.metrics["connections_link"].max
        assert row["load_over_bound_median"] is None  # fill() records no bound
    assert pagebench("export", "r1", "--csv", str(tmp_path / "csv"), "--db", url).returncode == 0
    header = list(_csv(tmp_path / "csv" / "conditions.csv")[0])
    assert header[:14] == ["run", "site", "mode", "topology", "profile", "cache", "tls", "encoding", "version",
                           "device", "planned", "n", "flagged", "failed"]
    assert header[14:18] == ["load_ms_median", "load_ms_p90", "load_ms_min", "load_ms_max"]


def test_a_sharded_runs_conditions_have_the_same_columns_and_its_loads_their_machine(tmp_path):
    with Store(f"sqlite:///{tmp_path}/x.sqlite") as store:
        fill(store, "one")
        fill_sharded(store, "two")
        one, two = tables(store, "one"), tables(store, "two")
    assert list(two["conditions"][0]) == list(one["conditions"][0])  # no `machines`: the report's JSON has them
    assert {row["machine"] for row in one["loads"]} == {None}
    assert [row["machine"] for row in two["loads"]][:4] == ["lab-a", "lab-a", "lab-b", "lab-b"]


def test_bad_export_arguments_are_one_line_errors(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    fill(Store(url), "r1")
    both = pagebench("export", "r1", "--csv", str(tmp_path / "a"), "--parquet", str(tmp_path / "b"), "--db", url)
    assert both.returncode == 2 and both.stderr.strip() == "error: give exactly one of --csv DIR, --parquet DIR or --har DIR"
    unknown = pagebench("export", "r9", "--csv", str(tmp_path / "a"), "--db", url)
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown run 'r9'")
    missing = pagebench("export", "r1", "--csv", str(tmp_path / "a"), "--db", f"sqlite:///{tmp_path}/none.sqlite")
    assert missing.returncode == 2 and "no results store there" in missing.stderr
    assert not (tmp_path / "none.sqlite").exists()


def test_har_export_writes_each_measured_load_kept_and_names_those_without(tmp_path):
    url = f"sqlite:///{tmp_path}/x.sqlite"
    plan = make_plan(profiles=("3g",), reps=2, warmups=1)
    with Store(url) as store:
        store.create_experiment("r1", SPEC, META, plan, PROFILES)
        for planned in plan:
            kept = [] if planned.seq == 3 else [Evidence(har={"log": {"version": "1.2", "_seq": planned.seq}})]
            store.record_loads("r1", planned, [fake_load(planned)], 1.0, kept)
    result = pagebench("export", "r1", "--har", str(tmp_path / "hars"), "--db", url)
    assert result.returncode == 0, result.stderr
    measured = [p for p in plan if not p.warmup and p.seq != 3]
    names = {f"demo_{p.condition.mode.name}_direct_3g_cold_tls1.3-seq{p.seq}.har": p.seq for p in measured}
    assert sorted(p.name for p in (tmp_path / "hars").iterdir()) == sorted(names)  # no warm-up, no seq 3
    for name, seq in names.items():
        assert json.loads((tmp_path / "hars" / name).read_text())["log"]["_seq"] == seq  # uncompressed
    assert "1 measured load(s) kept no HAR (seq 3)" in result.stderr
    both = pagebench("export", "r1", "--har", str(tmp_path / "h"), "--csv", str(tmp_path / "c"), "--db", url)
    assert both.returncode == 2 and "give exactly one of --csv DIR, --parquet DIR or --har DIR" in both.stderr
