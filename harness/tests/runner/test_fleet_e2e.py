"""One run across a real local Ray cluster (`run --ray`, `runner.fleet`): a head that only
drives and lab nodes started as Ray nodes of their own on this machine, each with the
`pagebench_lab` resource, its own machine name and lock file (a test's
set-up: the run says its machines share a host). Into a throwaway PostgreSQL: every load
exactly once, the same measured loads as the spec run on one machine, each machine's
loads named; a node with another Chromium build is refused in one line; a node killed
mid-run leaves its loads done and the run completes on the others; the store made
unreachable stops every shard, keeping what was measured; a reproduction runs each
scenario variant on one machine."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from pagebench.analysis.reproduce import claims as catalogue
from pagebench.analysis.reproduce.verdicts import stored_reproduction
from pagebench.runner.fleet import LAB, SHARED
from pagebench.runner.prepare import prepare
from pagebench.results.database import STORE_WAIT_ENV
from pagebench.results.store import Store
from tests.conftest import Postgres
from tests.helpers import HARNESS, admin, drop_database, fresh_database, leftovers, needs_root, nothing_left, pagebench, \
    sigint_default, tagged, write_spec

pytestmark = needs_root
ray_cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the ray extra: sudo harness/bootstrap test")

SPEC = {"name": "fleet", "sites": ["seed000-small-n1"], "modes": ["h2", "keepalive"], "cache": ["cold"],
        "profiles": [{"name": "r10", "rtt_ms": 10, "down_mbit": 50, "up_mbit": 50}],
        "repetitions": 30, "warmup": 1, "seed": 28, "timeouts": {"link_check": False}}  # 60 measured loads
OTHER_CHROMIUM = "/usr/lib/chromium/chromium"  # the full browser: another build of the same version
#: How long each process's writes wait for a lost store: not the minute a user gets.
STORE_WAIT = {STORE_WAIT_ENV: "10"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, session_tag: str) -> Iterator[tuple[object, dict[str, object], Path]]:
    """A head (the driver's: no lab) and three lab nodes: lab-a and lab-b as the head is,
    lab-c with another Chromium build."""
    base = tmp_path_factory.mktemp("fleet")
    cluster = ray_cluster_utils.Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "resources": {LAB: 0}, "include_dashboard": False})
    nodes = {}
    try:
        for name in ("lab-a", "lab-b", "lab-c"):
            # Each run's lab has its state directory under the host's state root, as on any host:
            # a node cleaning up dead labs before its shard (`fleet.run_part`) must see every
            # lab of this host with its owner, so it never takes a live one for dead.
            env = {"PAGEBENCH_MACHINE": name, "PAGEBENCH_LOCK": str(base / f"{name}.lock"),
                   "PAGEBENCH_TAG": session_tag} | STORE_WAIT
            if name == "lab-c":
                env["PAGEBENCH_CHROMIUM"] = OTHER_CHROMIUM
            nodes[name] = cluster.add_node(num_cpus=1, resources={LAB: 1}, env_vars=env)
        cluster.wait_for_nodes()
        yield cluster, nodes, base
    finally:
        cluster.shutdown()
        pagebench("cleanup")


@pytest.fixture
def store_url(postgres: Postgres, session_tag: str, request) -> Iterator[str]:
    name = f"fleet_{session_tag}_{request.node.name[-12:].strip('_').lower()}"
    yield fresh_database(postgres.url, name)
    drop_database(postgres.url, name)


def _driver(spec: Path, address: str, db: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--ray", address, "--db", db],
                            cwd=HARNESS, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=tagged() | STORE_WAIT)


def _finish(proc: subprocess.Popen[str], timeout: float = 600) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(f"the driver did not end: {proc.communicate()[1][-2000:]}") from None


def _loads(db: str) -> tuple[str, list]:
    with Store(db) as store:
        [run] = [row.run_id for row in store.runs()]
        return run, store.loads(run, include_warmup=True)


def _assert_every_load_once(db: str) -> tuple[str, list]:
    """Every planned load recorded exactly once, the measured ones those of the spec run
    on one machine (same seq, condition, repetition)."""
    run, loads = _loads(db)
    with Store(db) as store:
        planned = store.plan(run)
        assert store.experiment(run).status == "complete"
    assert Counter(load.seq for load in loads) == Counter({load.seq: 1 for load in planned})
    one_machine = prepare(SPEC, "s").loads  # the plan of the spec run without shards
    measured = sorted((load.seq, load.condition.key, load.repetition) for load in loads if not load.warmup)
    assert measured == sorted((load.seq, load.condition.key, load.repetition) for load in one_machine
                              if not load.warmup) and len(measured) == 60
    return run, loads


def test_a_run_across_two_lab_machines_loads_each_load_once_and_refuses_another_chromium(cluster, store_url, tmp_path):
    ray_cluster, _, _ = cluster
    proc = _driver(write_spec(tmp_path, **SPEC), ray_cluster.address, store_url)
    _, stderr = _finish(proc)
    assert proc.returncode == 0, stderr[-2000:]
    refused = [line for line in stderr.splitlines() if "lab-c" in line]
    assert len(refused) == 1 and "chromium_version is 'chromium " in refused[0] and "refused" in refused[0], stderr
    run, loads = _assert_every_load_once(store_url)
    by_machine = Counter(load.machine for load in loads if not load.warmup)
    assert by_machine == Counter({"lab-a": 30, "lab-b": 30})  # whole blocks: 15 rounds of 2 conditions each
    with Store(store_url) as store:
        meta = store.experiment(run).meta
    assert meta["shards"] == 2 and SHARED in meta["notes"]
    report = pagebench("report", run, "--db", store_url, "--json")
    assert report.returncode == 0, report.stderr
    strata = [condition["machines"] for condition in json.loads(report.stdout)["conditions"]]
    assert [sorted(machines) for machines in strata] == [["lab-a", "lab-b"]] * 2  # the machine as a stratum
    assert all(0 < machine["n"] <= 15 and machine["medians"]["load_ms"] > 0
               for machines in strata for machine in machines.values())
    assert nothing_left(), leftovers()


def test_ctrl_c_on_the_driver_stops_every_shard_and_resume_finishes_the_run(cluster, store_url, tmp_path):
    ray_cluster, _, _ = cluster
    proc = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(write_spec(tmp_path, **SPEC)), "--ray",
                             ray_cluster.address, "--db", store_url], cwd=HARNESS, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=tagged(), preexec_fn=sigint_default)
    _wait_for(store_url, proc, "SELECT count(DISTINCT machine) FROM loads WHERE NOT warmup", 2)
    proc.send_signal(signal.SIGINT)
    _, stderr = _finish(proc, timeout=300)
    assert proc.returncode == 130, stderr[-2000:]
    run = stderr.strip().splitlines()[-1].split("--resume ")[1].split()[0]
    assert stderr.strip().endswith(f"pagebench run --resume {run} --ray {ray_cluster.address}"), stderr[-500:]
    assert nothing_left(), leftovers()  # every shard took its lab down
    _, kept = _loads(store_url)
    with Store(store_url) as store:
        assert 0 < len({load.seq for load in kept}) < store.experiment(run).planned  # stopped before the end
    resumed = pagebench("run", "--resume", run, "--ray", ray_cluster.address, "--db", store_url)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    _assert_every_load_once(store_url)
    assert nothing_left(), leftovers()


def _wait_for(db: str, proc: subprocess.Popen[str], query: str, at_least: int, timeout: float = 300) -> None:
    """Until the store answers `query` with at least `at_least` (the driver still running)."""
    engine = sa.create_engine(db)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                with engine.connect() as conn:
                    if (conn.execute(sa.text(query)).scalar() or 0) >= at_least:
                        return
            except sa.exc.DBAPIError:
                pass  # the driver is still making the store
            time.sleep(0.5)
        raise AssertionError(f"{query}: not {at_least} in time")
    finally:
        engine.dispose()


def test_the_store_unreachable_stops_every_shard_keeping_the_loads_done(cluster, store_url, postgres, tmp_path):
    ray_cluster, _, _ = cluster
    database = store_url.split("@/")[1].split("?")[0]
    proc = _driver(write_spec(tmp_path, **SPEC), ray_cluster.address, store_url)
    _wait_for(store_url, proc, "SELECT count(DISTINCT machine) FROM loads WHERE NOT warmup", 2)
    # No one connects to it any more, superuser or not: each shard's writes wait for it, then stop.
    admin(postgres.url, f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false',
          f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{database}'")
    try:
        _, stderr = _finish(proc, timeout=400)
    finally:
        admin(postgres.url, f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
    assert proc.returncode == 2, stderr[-2000:]
    error = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and database in error[0] and "shard" in error[0], stderr[-2000:]
    assert "Traceback" not in stderr and nothing_left(), leftovers()  # every shard took its lab down
    run, kept = _loads(store_url)
    assert kept and len({load.seq for load in kept}) == len(kept)  # what was measured stays, each once
    assert stderr.strip().endswith(f"pagebench run --resume {run} --ray {ray_cluster.address}"), stderr[-500:]
    resumed = pagebench("run", "--resume", run, "--ray", ray_cluster.address, "--db", store_url)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    _assert_every_load_once(store_url)


def test_a_reproduction_across_lab_machines_measures_each_scenario_variant_on_one_machine(cluster, store_url):
    ray_cluster, _, _ = cluster
    proc = subprocess.Popen([sys.executable, "-m", "pagebench", "reproduce", "002", "--quick", "--ray",
                             ray_cluster.address, "--db", store_url], cwd=HARNESS, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=tagged())
    stdout, stderr = _finish(proc, timeout=900)
    assert proc.returncode == 0, stderr[-2000:]
    assert "paper against measured" in stdout and "no data" not in stdout, stdout[-2000:]
    refused = [line for line in stderr.splitlines() if "lab-c" in line]
    assert len(refused) == 1 and "refused" in refused[0], stderr[-2000:]
    planned = {(scenario.name, variant, label): prepare(document, "s").loads
               for scenario in catalogue.scenarios_of(["002"]) for variant in scenario.variants
               for label, document in scenario.runs(variant, True)}
    with Store(store_url) as store:
        runs = stored_reproduction(store).runs
        assert set(runs) == set(planned)
        where: dict[tuple[str, str], set[str | None]] = {}
        for key, run in runs.items():
            experiment = store.experiment(run)
            assert experiment.status == "complete" and SHARED in experiment.meta["notes"]
            loads = store.loads(run, include_warmup=True)
            assert sorted(load.seq for load in loads) == [load.seq for load in planned[key]]  # each once
            where.setdefault(key[:2], set()).update(load.machine for load in loads)
    assert all(len(machines) == 1 for machines in where.values()), where  # a variant's runs: one machine's
    assert set().union(*where.values()) == {"lab-a", "lab-b"}
    assert nothing_left(), leftovers()


# Last: it takes lab-b out of the module's cluster.
def test_a_node_lost_mid_run_leaves_its_loads_and_the_rest_complete_on_the_others(cluster, store_url, tmp_path):
    ray_cluster, nodes, _ = cluster
    proc = _driver(write_spec(tmp_path, **SPEC), ray_cluster.address, store_url)
    _wait_for(store_url, proc, "SELECT count(*) FROM loads WHERE machine = 'lab-b'", 8)
    ray_cluster.remove_node(nodes["lab-b"], allow_graceful=False)  # its raylet and workers, killed
    _, stderr = _finish(proc)
    assert proc.returncode == 0, stderr[-2000:]
    lost = [line for line in stderr.splitlines() if "lost" in line]
    assert lost and "lab-b" in lost[0], stderr[-2000:]
    _, loads = _assert_every_load_once(store_url)
    machines = Counter(load.machine for load in loads if not load.warmup)
    assert machines["lab-b"] < 30 and machines["lab-a"] + machines["lab-b"] == 60
    assert nothing_left(), leftovers()  # the lost node's lab: cleaned up before the shard resumed
