"""Integration, end to end through the CLI with the results in PostgreSQL (the session's
throwaway server): run, report, compare, export, and kill -9 then resume, as
`tests/runner` does with SQLite. What the commands print must agree with the stored rows."""

from __future__ import annotations

import csv
import json
import os
import statistics
from pathlib import Path

import pytest

from pagebench.analysis.summary import of_run
from pagebench.results.artifacts import ARTIFACTS_ENV
from pagebench.results.store import Store

from tests.helpers import drop_database, fresh_database, needs_root, nothing_left, pagebench, run_id_of, write_spec
from tests.runner.runs import assert_killed_reads_as_interrupted, assert_resumed_exactly_the_plan, kill_cleanup_resume

pytestmark = needs_root


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


def test_the_loads_evidence_is_kept_where_the_user_said(pg_run):
    """PostgreSQL has no "beside the store": $PAGEBENCH_ARTIFACTS (the session's, conftest)."""
    _, store, run = pg_run
    assert store.artifacts is not None and store.artifacts.root == Path(os.environ[ARTIFACTS_ENV])
    loads = store.loads(run)
    assert len(loads) == 3 and all(store.artifacts.read(load.har)["log"]["entries"] for load in loads)


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
    """What `tests/runner` checks of a run killed with SIGKILL (`runs.kill_cleanup_resume`),
    with the store in PostgreSQL."""
    url = fresh_database(postgres_url, "e2e_resume")
    try:
        killed = kill_cleanup_resume(tmp_path, url)
    finally:
        drop_database(postgres_url, "e2e_resume")
    assert_killed_reads_as_interrupted(killed)
    assert_resumed_exactly_the_plan(killed)
