"""Integration, end to end through the CLI with the results in PostgreSQL (the session's
throwaway server): run, report, compare, export, and kill -9 then resume, as
test_runner.py does with SQLite. What the commands print must agree with the stored rows."""

from __future__ import annotations

import csv
import json
import signal
import statistics
import subprocess
import sys
import time

import pytest

from pagebench.analysis.summary import of_run
from pagebench.results.store import Store

from tests.helpers import HARNESS, drop_database, fresh_database, needs_root, nothing_left, pagebench, run_id_of, write_spec

pytestmark = [pytest.mark.integration, needs_root]


@pytest.fixture(scope="module")
def pg_run(postgres_url, tmp_path_factory):
    """A tiny real run stored in PostgreSQL; `--db` given without `+psycopg`."""
    url = fresh_database(postgres_url, "e2e_run")
    spec = write_spec(tmp_path_factory.mktemp("pg"), name="pg", sites=["seed000-small-n2"], modes=["h2"],
                      profiles=[{"name": "r10", "rtt_ms": 10}], cache=["cold"], repetitions=3, warmup=1,
                      timeouts={"link_check": False})
    run = run_id_of(pagebench("run", str(spec), "--db", url.replace("postgresql+psycopg://", "postgresql://")))
    with Store(url) as store:
        yield url, store, run
    drop_database(postgres_url, "e2e_run")


def test_the_run_is_stored_in_postgresql(pg_run):
    url, store, run = pg_run
    loads = store.loads(run, include_warmup=True)
    assert [(l.seq, l.warmup) for l in loads] == [(0, True), (1, False), (2, False), (3, False)]
    for load in loads:
        assert load.ok is True and load.flagged is False, load.flags
        assert load.condition.mode.name == "h2" and load.condition.profile == "r10" and load.requests >= 3
        assert 0 < load.bound_ms <= load.load_ms
        resources = store.resources(load.id)
        assert len(resources) == load.requests and {r.resource.protocol for r in resources} == {"h2"}
    experiment = store.experiment(run)
    assert (experiment.status, experiment.planned, experiment.recorded) == ("complete", 4, 4)
    assert experiment.spec["profiles"] == [{"name": "r10", "rtt_ms": 10}]
    assert experiment.meta["backend"] == experiment.backend and experiment.chromium_version
    assert nothing_left()


def test_report_and_its_json_agree_with_the_stored_rows(pg_run):
    url, store, run = pg_run
    measured = store.loads(run)
    result = pagebench("report", run, "--json", "--db", url)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert (data["run"], data["status"], data["planned"], data["recorded"]) == (run, "complete", 4, 4)
    assert data["backend"] == store.experiment(run).backend
    assert data["conditions"] == of_run(store, run).as_json()["conditions"]  # the one summary
    [condition] = data["conditions"]
    assert (condition["site"], condition["mode"], condition["profile"], condition["n"]) == (
        "seed000-small-n2", "h2", "r10", 3)
    for metric in ("load_ms", "ttfb_ms", "requests", "bytes"):
        values = [l.metric(metric) for l in measured]
        assert condition["metrics"][metric]["median"] == statistics.median(values), metric
        assert (condition["metrics"][metric]["min"], condition["metrics"][metric]["max"]) == (
            min(values), max(values)), metric
    table = pagebench("report", "latest", "--db", url)
    assert table.returncode == 0, table.stderr
    assert f"run {run}: complete, 4/4 loads" in table.stdout and "r10" in table.stdout


def test_compare_a_run_with_itself(pg_run):
    url, _store, run = pg_run
    result = pagebench("compare", run, run, "--db", url)
    assert result.returncode == 0, result.stderr
    assert "no regression" in result.stdout


def test_export_csv_agrees_with_the_stored_rows(pg_run, tmp_path):
    url, store, run = pg_run
    result = pagebench("export", run, "--csv", str(tmp_path), "--db", url)
    assert result.returncode == 0, result.stderr
    with (tmp_path / "loads.csv").open() as handle:
        exported = list(csv.DictReader(handle))
    stored = store.loads(run, include_warmup=True)
    assert [int(row["seq"]) for row in exported] == [l.seq for l in stored]
    for row, load in zip(exported, stored):
        assert row["run"] == run and row["warmup"] == str(load.warmup) and row["ok"] == "True"
        assert float(row["load_ms"]) == load.load_ms and float(row["started_at"]) == load.started_at
        assert json.loads(row["link"]) == load.link
    with (tmp_path / "resources.csv").open() as handle:
        resources = list(csv.DictReader(handle))
    seq = {load.id: load.seq for load in stored}
    assert [(int(r["seq"]), int(r["position"]), r["url"]) for r in resources] == [
        (seq[r.load_id], r.position, r.resource.url) for r in store.run_resources(run)]


def test_kill9_then_cleanup_and_resume_completes_exactly_the_plan(postgres_url, tmp_path):
    url = fresh_database(postgres_url, "e2e_resume")
    spec = write_spec(tmp_path, name="resume", sites=["seed000-small-n2"], modes=["keepalive", "h2"],
                      profiles=[{"name": "r10", "rtt_ms": 10}], repetitions=6, warmup=0,
                      timeouts={"link_check": False})
    proc = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--db", url],
                            cwd=HARNESS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    store, run = Store(url), None
    try:
        deadline = time.monotonic() + 300
        while run is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
            runs = store.runs()
            if runs and len(store.done_seqs(runs[0].run_id)) >= 3:
                run = runs[0].run_id
        assert run is not None, "the run never recorded 3 loads"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        done_before = store.done_seqs(run)
        assert 3 <= len(done_before) < 12 and store.experiment(run).status == "interrupted"
        assert pagebench("cleanup").returncode == 0
        assert nothing_left()
        result = pagebench("run", "--resume", run, "--db", url)
        assert result.returncode == 0, result.stderr[-2000:]
        loads = store.loads(run, include_warmup=True)
        assert sorted(l.seq for l in loads) == list(range(12))  # each planned load exactly once
        assert {l.seq for l in loads} >= done_before
        assert all(l.ok for l in loads)
        assert store.experiment(run).status == "complete"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        store.close()
        drop_database(postgres_url, "e2e_resume")
    assert nothing_left()


def test_an_unreachable_database_is_one_line_and_starts_nothing(tmp_path):
    spec = write_spec(tmp_path, name="nodb", sites=["seed000-small-n1"], modes=["h2"])
    url = f"postgresql://bench:secret@/results?host={tmp_path}"  # no server listens there
    result = pagebench("run", str(spec), "--db", url)
    assert result.returncode == 2
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: --db: cannot connect to postgresql://bench:***@/results") and "secret" not in line
    assert "No such file or directory" in line
    assert nothing_left()
