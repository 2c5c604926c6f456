"""The results store: append-only writes, typed reads, round trips, where it is unless
told; shards writing one run from separate processes. Each test on a database of its own:
SQLite here; `test_store_e2e.py` runs the same tests on PostgreSQL (the session's
throwaway server), and what only PostgreSQL has."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import replace

import pytest
import sqlalchemy as sa
from alembic import command

from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.core.records import Condition, LoadResult, PlannedLoad
from pagebench.results.database import StoreError
from pagebench.results.migrate import alembic_config
from pagebench.results.rows import RunRow
from pagebench.results.store import AlreadyRecorded, Store, UnknownRun, default_path
from pagebench.system import places
from tests.helpers import HARNESS, META, PROFILES, SPEC, fake_load, make_plan
from tests.results.shards import SHARD_PLAN, SHARDS, shard_attempts


def test_the_default_store_is_in_the_checkouts_results_else_the_data_directory(monkeypatch, tmp_path):
    monkeypatch.setattr(places, "checkout", lambda: tmp_path / "repo")
    assert Store.default_url() == f"sqlite:///{tmp_path / 'repo' / 'results' / 'pagebench.sqlite'}"
    monkeypatch.setattr(places, "checkout", lambda: None)
    monkeypatch.setenv(places.DATA_DIR_ENV, str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "pagebench.sqlite"


def test_create_experiment_stores_meta_conditions_and_plan(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    experiment = store.experiment("r1")
    assert isinstance(experiment, RunRow)
    assert experiment.run_id == "r1" and experiment.status == "running" and experiment.reason is None
    assert experiment.planned == len(plan) == 16 and experiment.recorded == 0
    assert (experiment.seed, experiment.backend, experiment.git_commit, experiment.host) == (
        42, "userspace", "875bf20", "bench-1")
    assert experiment.chromium_version == "131.0.6778.33" and experiment.nginx_version == "1.22.1"
    assert experiment.spec == SPEC and experiment.meta == META
    assert experiment.environment() == {key: value for key, value in META.items() if key != "python"}
    conditions = store.conditions("r1")
    assert [c.condition for c in conditions] == list(dict.fromkeys(p.condition for p in plan))
    assert conditions[0].profile_fields == PROFILES["3g"]
    assert store.plan("r1") == plan


def test_plan_must_be_consistent(store):
    plan = make_plan()
    with pytest.raises(StoreError, match="seq 0 twice"):
        store.create_experiment("r1", SPEC, META, plan + [plan[0]], PROFILES)
    with pytest.raises(StoreError, match="profile 'cable', not given in profiles"):
        store.create_experiment("r1", SPEC, META, plan, {"3g": PROFILES["3g"]})
    assert store.runs() == []


def test_an_existing_run_is_refused_unless_exist_ok_with_the_same_plan(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    with pytest.raises(StoreError, match="run 'r1' already exists"):
        store.create_experiment("r1", SPEC, META, plan, PROFILES)
    store.create_experiment("r1", SPEC, META, plan, PROFILES, exist_ok=True)
    with pytest.raises(StoreError, match="different plan"):
        store.create_experiment("r1", SPEC, META, plan[:-1], PROFILES, exist_ok=True)
    assert len(store.runs()) == 1


def test_a_shard_records_its_machine_and_a_seq_twice_is_already_recorded(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    store.record_loads("r1", plan[0], [fake_load(plan[0])], started_at=1.0)  # a one-machine run's load
    for planned, machine in zip(plan[1:4], ("lab-a", "lab-b", "lab-a")):
        store.record_loads("r1", planned, [fake_load(planned)], started_at=1.0, machine=machine)
    assert store.done_by_machine("r1") == {None: 1, "lab-a": 2, "lab-b": 1}
    assert [load.machine for load in store.loads("r1", include_warmup=True)][:4] == [None, "lab-a", "lab-b", "lab-a"]
    with pytest.raises(AlreadyRecorded, match="load seq 2 is already recorded"):
        store.record_loads("r1", plan[2], [fake_load(plan[2])], started_at=2.0, machine="lab-a")
    assert store.done_by_machine("r1")["lab-b"] == 1  # the first kept


def test_record_load_round_trip(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    results = {}
    for planned in plan[:7]:
        results[planned.seq] = fake_load(planned, 1500.0 + 10 * planned.seq, flagged=planned.seq == 5)
        [load_id] = store.record_loads("r1", planned, [results[planned.seq]],
                                       started_at=1_790_000_000.0 + planned.seq)
        assert isinstance(load_id, int)
    assert store.done_seqs("r1") == set(range(7))
    measured = store.loads("r1")
    assert [row.seq for row in measured] == [4, 5, 6]  # seqs 0-3 are the warm-ups
    assert len(store.loads("r1", include_warmup=True)) == 7
    row = measured[1]
    assert row.condition == plan[5].condition and (row.condition.mode.name, row.condition.profile) == ("keepalive", "cable")
    assert (row.repetition, row.warmup, row.flagged, row.started_at, row.client) == (0, False, True, 1_790_000_005.0, 0)
    assert row.flags == ("connections: server 6 != browser 5",)
    assert row.link["lateness_us"] == {"p50": None, "p99": None, "max": None, "n": 0}
    resources = store.resources(row.id)
    assert row.result([r.resource for r in resources]) == results[5]  # what was recorded comes back whole
    assert [(r.load_id, r.position) for r in resources] == [(row.id, position) for position in range(6)]
    assert resources[3].resource.origin == "https://img.demo.test" and resources[3].resource.timing["sslStart"] == 0.9
    assert store.run_resources("r1")[5 * 6:6 * 6] == resources  # seq 5, after seqs 0-4 with six each
    assert store.experiment("r1").recorded == 7


def _encoded_run(store: Store) -> tuple[list[PlannedLoad], LoadResult]:
    """A run of a gzip cold condition and a dcz warm one of version 2, one load of the
    latter recorded, its resources showing every new field."""
    cold = Condition("demo", H2, "direct", "cable", "cold", "1.3", GZIP, 1)
    warm = Condition("demo", H2, "direct", "cable", "warm", "1.3", DCZ, 2)
    plan = [PlannedLoad(0, cold, 0, False), PlannedLoad(1, warm, 0, False)]
    store.create_experiment("enc", SPEC, META, plan, PROFILES)
    result = fake_load(plan[1])
    document, css, js, *images = result.resources
    result = replace(result, resources=(
        replace(document, encoded_bytes=4_012, content_encoding="dcz", dictionary_offered=True, dictionary_used=True),
        replace(css, encoded_bytes=None, revalidated=True),
        replace(js, encoded_bytes=30_118, content_encoding="zstd", dictionary_offered=True),
        *images))
    store.record_loads("enc", plan[1], [result], started_at=1.0)
    return plan, result


def test_encodings_and_versions_round_trip(store):
    plan, result = _encoded_run(store)
    assert store.plan("enc") == plan  # Conditions come back whole
    assert [(c.condition.key, c.condition.encoding.name, c.condition.version) for c in store.conditions("enc")] == [
        ("demo|h2|direct|cable|cold|tls1.3|gzip", "gzip", 1), ("demo|h2|direct|cable|warm|tls1.3|dcz|v2", "dcz", 2)]
    [row] = store.loads("enc")
    assert (row.condition.encoding.name, row.condition.version) == ("dcz", 2)
    stored = [r.resource for r in store.resources(row.id)]
    assert stored == list(result.resources)
    assert [(r.encoded_bytes, r.content_encoding, r.dictionary_offered, r.dictionary_used)
            for r in stored[:4]] == [(4_012, "dcz", True, True), (None, "", False, False),
                                     (30_118, "zstd", True, False), (None, "", False, False)]


def test_rows_stored_before_encodings_read_back_with_the_defaults(url):
    """A store written at revision 0006 (no encodings) opened by this code: its rows are
    all kept, and read as identity, version 1, no encoding, no dictionary."""
    with Store(url) as store:
        plan, _ = _encoded_run(store)
    engine = sa.create_engine(url)  # SQLite without foreign keys: batch mode's table copies cascade nothing
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0006")
            assert "encoding" not in {c["name"] for c in sa.inspect(conn).get_columns("conditions")}
            conn.execute(sa.text("UPDATE conditions SET key = replace(replace(key, '|gzip', ''), '|dcz|v2', '')"))
    finally:
        engine.dispose()
    with Store(url) as store:
        old = [replace(p, condition=replace(p.condition, encoding=IDENTITY, version=1)) for p in plan]
        assert store.plan("enc") == old
        assert [(c.condition.encoding.name, c.condition.version) for c in store.conditions("enc")] == [("identity", 1)] * 2
        [row] = store.loads("enc")
        assert (row.condition.encoding.name, row.condition.version, row.requests) == ("identity", 1, 6)
        stored = [r.resource for r in store.resources(row.id)]
        assert len(stored) == 6 and stored[2].body_bytes == 91_200
        assert {(r.encoded_bytes, r.content_encoding, r.dictionary_offered, r.dictionary_used)
                for r in stored} == {(None, "", False, False)}


def _replayed_run(store: Store) -> list[PlannedLoad]:
    """Two loads of a run: one of a replayed site that met 3 unrecorded requests, one of a
    site that is not replayed (null)."""
    plan = make_plan()
    store.create_experiment("rep", SPEC, META, plan, PROFILES)
    missing = tuple(f"https://demo.test/x{i}.js" for i in range(3))
    store.record_loads("rep", plan[4], [replace(fake_load(plan[4]), unrecorded=missing, flagged=True,
                                                flags=(f"3 request(s) not in the recording: {', '.join(missing)}",))],
                       started_at=1.0)
    store.record_loads("rep", plan[5], [fake_load(plan[5])], started_at=2.0)
    return plan


def test_unrecorded_requests_round_trip(store):
    _replayed_run(store)
    first, second = store.loads("rep")
    assert (first.unrecorded, first.flagged) == (3, True)
    assert first.flags == ("3 request(s) not in the recording: https://demo.test/x0.js, https://demo.test/x1.js, "
                           "https://demo.test/x2.js",)
    assert second.unrecorded is None


def _downgraded(url: str, revision: str, table: str) -> set[str]:
    """Take the store back to `revision` (SQLite without foreign keys: batch mode's table
    copies cascade nothing); the columns `table` has there."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), revision)
            return {c["name"] for c in sa.inspect(conn).get_columns(table)}
    finally:
        engine.dispose()


def test_loads_stored_before_unrecorded_counts_read_back_null(url):
    """A store at revision 0007 opened by this code: upgraded in place, its loads kept,
    their count null (nothing said), and new loads store theirs."""
    with Store(url) as store:
        plan = _replayed_run(store)
    assert "unrecorded" not in _downgraded(url, "0007", "loads")
    with Store(url) as store:
        assert [(row.seq, row.unrecorded, row.requests) for row in store.loads("rep")] == [
            (4, None, 6), (5, None, 6)]
        store.record_loads("rep", plan[6], [replace(fake_load(plan[6]), unrecorded=())], started_at=3.0)
        assert store.loads("rep")[-1].unrecorded == 0


def _device_run(store: Store) -> list[PlannedLoad]:
    """A run of one condition as desktop and as moto-g-power, a load of each recorded."""
    desktop = Condition("demo", H2, "direct", "cable", "cold")
    phone = replace(desktop, device="moto-g-power")
    plan = [PlannedLoad(0, desktop, 0, False), PlannedLoad(1, phone, 0, False)]
    store.create_experiment("dev", SPEC, META, plan, PROFILES)
    for planned in plan:
        store.record_loads("dev", planned, [fake_load(planned)], started_at=1.0)
    return plan


def test_devices_round_trip(store):
    plan = _device_run(store)
    assert store.plan("dev") == plan
    assert [(c.condition.key, c.condition.device) for c in store.conditions("dev")] == [
        ("demo|h2|direct|cable|cold|tls1.3", "desktop"), ("demo|h2|direct|cable|cold|tls1.3|moto-g-power", "moto-g-power")]
    assert [row.condition.device for row in store.loads("dev")] == ["desktop", "moto-g-power"]


def test_conditions_stored_before_devices_read_back_as_desktop(url):
    """A store at revision 0011 opened by this code: upgraded in place, its conditions
    desktop (their keys never named a device), and a device's condition stored after."""
    with Store(url) as store:
        plan = _device_run(store)
    assert "device" not in _downgraded(url, "0011", "conditions")
    with Store(url) as store:  # the downgrade forgot devices: both conditions read as desktop
        rows = store.loads("dev")
        assert [row.condition.device for row in rows] == ["desktop", "desktop"]
        assert rows[0].condition == plan[0].condition
        later = [PlannedLoad(0, replace(plan[0].condition, site="later", device="moto-g-power"), 0, False)]
        store.create_experiment("dev2", SPEC, META, later, PROFILES)
        assert [c.condition.device for c in store.conditions("dev2")] == ["moto-g-power"]


def test_a_seq_is_recorded_once(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    store.record_loads("r1", plan[4], [fake_load(plan[4])], started_at=1.0)
    with pytest.raises(StoreError, match="load seq 4 is already recorded"):
        store.record_loads("r1", plan[4], [fake_load(plan[4], 999.0)], started_at=2.0)
    assert len(store.loads("r1")) == 1 and store.loads("r1")[0].load_ms == 1800.0
    with store.engine.connect() as conn:  # the refused load left no resources behind
        assert conn.exec_driver_sql("SELECT count(*) FROM resources").scalar() == 6


def test_a_load_must_match_the_stored_plan(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    stray = PlannedLoad(99, plan[4].condition, 7, False)
    with pytest.raises(StoreError, match="seq 99 is not in the stored plan"):
        store.record_loads("r1", stray, [fake_load(stray)], started_at=1.0)
    wrong = PlannedLoad(4, plan[5].condition, 0, False)
    expected = f"seq 4 is planned as {plan[4].condition.key} repetition 0, not {plan[5].condition.key}"
    with pytest.raises(StoreError, match=re.escape(expected)):
        store.record_loads("r1", wrong, [fake_load(wrong)], started_at=1.0)
    assert store.done_seqs("r1") == set()


def test_a_recorded_load_is_visible_to_another_store_at_once(url):
    plan = make_plan()
    writer = Store(url)
    reader = Store(url)
    try:
        writer.create_experiment("r1", SPEC, META, plan, PROFILES)
        assert reader.done_seqs("r1") == set()
        writer.record_loads("r1", plan[4], [fake_load(plan[4])], started_at=1.0)
        assert reader.done_seqs("r1") == {4}
        assert reader.loads("r1")[0].requests == 6
    finally:
        writer.close()
        reader.close()


def test_unknown_run_names_the_latest_runs(store):
    with pytest.raises(UnknownRun, match="the store has no runs yet"):
        store.experiment("nope")
    for i in range(7):
        store.create_experiment(f"run-{i}", SPEC, META, make_plan(reps=1), PROFILES)
    with pytest.raises(StoreError) as error:
        store.done_seqs("nope")
    assert str(error.value) == "unknown run 'nope'; known: run-6, run-5, run-4, run-3, run-2, ..."


def test_status_runs_and_link_checks(store):
    store.create_experiment("a", SPEC, META, make_plan(reps=1), PROFILES)
    store.create_experiment("b", SPEC, {**META, "backend": "netem"}, make_plan(reps=1), PROFILES)
    store.set_status("a", "interrupted")
    store.set_status("a", "running")
    store.set_status("b", "complete")
    with pytest.raises(StoreError, match="must be one of running, complete, interrupted"):
        store.set_status("a", "done")
    runs = store.runs()
    assert [(r.run_id, r.status, r.backend) for r in runs] == [
        ("b", "complete", "netem"), ("a", "running", "userspace")]
    assert runs[1] == store.experiment("a")
    check = {
        "backend": "userspace", "configured": PROFILES["3g"],
        "measured": {"rtt_ms": {"median": 300.412, "p95": 301.2, "n": 50}, "down_mbit": 1.571,
                     "up_mbit": 0.755, "loss_pct": 0.0, "loss": {}},
        "lateness_us": {"p50": 61, "p99": 412, "max": 980}, "drops": {}, "counters": {},
        "valid": True, "problems": [],
    }
    store.add_link_check("a", "3g", check)
    [stored] = store.link_checks("a")
    assert (stored.profile, stored.backend, stored.valid, stored.rtt_median_ms, stored.down_mbit,
            stored.up_mbit, stored.loss_pct, stored.lateness_p99_us) == (
        "3g", "userspace", True, 300.412, 1.571, 0.755, 0.0, 412.0)
    assert stored.result == check
    assert store.link_checks("b") == []


# -- shards: separate processes writing one run at once -------------------------------

def test_concurrent_shards_record_each_planned_load_once(url, tmp_path):
    code = "import sys; from tests.results.shards import shard_main; shard_main(*sys.argv[1:])"
    shards = [subprocess.Popen([sys.executable, "-c", code, url, str(i), str(tmp_path)], cwd=HARNESS,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for i in range(SHARDS)]
    ended = [shard.communicate(timeout=120) for shard in shards]
    failures = [f"shard {i}: {stderr[-1500:]}" for i, (shard, (_, stderr)) in enumerate(zip(shards, ended))
                if shard.returncode != 0]
    assert not failures, "\n".join(failures)
    outcomes = [json.loads(stdout) for stdout, _stderr in ended]
    attempts = [[p.seq for p in shard_attempts(i)] for i in range(SHARDS)]
    for seq in range(len(SHARD_PLAN)):
        winners = [i for i, outcome in enumerate(outcomes) if seq in outcome["recorded"]]
        assert len(winners) == 1, (seq, outcomes)
        tries = sum(a.count(seq) for a in attempts)
        assert sum(outcome["refused"].count(seq) for outcome in outcomes) == tries - 1, (seq, outcomes)

    with Store(url) as store:
        loads = store.loads("shared", include_warmup=True)
        assert [row.seq for row in loads] == list(range(len(SHARD_PLAN)))  # each planned load once
        for row in loads:  # the stored load is the one its winner wrote
            assert row.seq in outcomes[int(row.started_at)]["recorded"]
        assert store.experiment("shared").recorded == store.experiment("shared").planned == len(SHARD_PLAN)
        assert store.plan("shared") == SHARD_PLAN
        # The shard that created it left it 'running' and is gone: a run nobody runs is not running.
        assert store.runs()[0].status == "interrupted" and "is gone" in (store.runs()[0].reason or "")
        with store.engine.connect() as conn:  # one experiment, one "running", no refused load's resources
            counts = {table: conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar()
                      for table in ("experiments", "run_status", "conditions", "planned_loads", "resources")}
        assert counts == {"experiments": 1, "run_status": 1, "conditions": 4, "planned_loads": len(SHARD_PLAN),
                          "resources": 6 * len(SHARD_PLAN)}


def test_loads_a_stopping_rule_left_out_are_marked_stopped_early_not_recorded(store):
    plan = make_plan()
    store.create_experiment("auto", SPEC, META, plan, PROFILES)
    store.record_loads("auto", plan[4], [fake_load(plan[4])], started_at=1.0)
    store.stop("auto", [p.seq for p in plan[10:]])
    run = store.experiment("auto")
    assert (run.planned, run.recorded, run.stopped, run.settled) == (16, 1, 6, 7)
    assert store.stopped_seqs("auto") == set(range(10, 16)) and store.done_seqs("auto") == {4}
    assert store.plan("auto") == plan  # the plan stays the plan
    with pytest.raises(StoreError, match="load seq 4 is recorded: it cannot be stopped early"):
        store.stop("auto", [3, 4])
    assert store.stopped_seqs("auto") == set(range(10, 16))


def test_a_store_before_stopped_marks_keeps_every_load_and_stops_none(url):
    """A store at revision 0009 opened by this code: the new column is added in place
    (not by copying planned_loads, which would cascade to its loads), nothing stopped."""
    with Store(url) as store:
        plan = make_plan()
        store.create_experiment("old", SPEC, META, plan, PROFILES)
        store.record_loads("old", plan[4], [fake_load(plan[4])], started_at=1.0)
    assert "stopped" not in _downgraded(url, "0009", "planned_loads")
    with Store(url) as store:  # upgraded with foreign keys on: the loads must survive
        run = store.experiment("old")
        assert (run.recorded, run.stopped) == (1, 0) and store.stopped_seqs("old") == set()
        assert [load.seq for load in store.loads("old")] == [4]


def test_a_load_s_visual_progress_curve_is_stored_in_frame_order(store):
    plan = make_plan()
    store.create_experiment("r1", SPEC, META, plan, PROFILES)
    curve = ((120.0, 0.0), (480.5, 0.4), (1210.0, 1.0))
    [with_frames] = store.record_loads("r1", plan[0], [replace(fake_load(plan[0]), visual_progress=curve)], 1.0)
    store.record_loads("r1", plan[1], [fake_load(plan[1])], 2.0)  # no frames: no curve
    assert store.run_visual_progress("r1") == {with_frames: curve}
