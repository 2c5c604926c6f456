"""Runs a test starts and watches: `pagebench run` started as from a terminal, waited for
until it has recorded some loads (read-only, as it writes), read back from its store; and
a run killed with SIGKILL mid-way, then cleaned up and resumed, with what must hold of
it. With SQLite the kill -9 tests of the runner (`test_run_e2e.py`) and of the fault
matrix (`test_faults_e2e.py`) read the same run, made once a session (`conftest.py`'s
`killed_run`); `tests/results/test_postgres_e2e.py` makes its own in PostgreSQL."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
import sqlalchemy as sa

from pagebench.results.store import Store
from tests.helpers import HARNESS, leftovers, pagebench, sigint_default, tagged, write_spec

#: 12 loads of about a second each: a fault lands after the third.
SPEC = dict(name="faults", sites=["seed000-small-n2"], modes=["keepalive", "h2"],
            profiles=[{"name": "r10", "rtt_ms": 10}], repetitions=6, warmup=0, timeouts={"link_check": False})
PLANNED = 12


def start_run(spec: Path, db: str) -> subprocess.Popen[str]:
    """`pagebench run` as from a terminal: tagged with the session, and Ctrl-C (SIGINT)
    reaching it however the suite was started (in the background it inherits SIGINT
    ignored, and Python then never raises KeyboardInterrupt)."""
    return subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db], cwd=HARNESS,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tagged(),
                            preexec_fn=sigint_default)


def _not_there_yet(error: sa.exc.DBAPIError) -> bool:
    """What a store that the run is still making answers (then ask again): SQLite's `no such
    table` or `database is locked`, PostgreSQL's undefined table."""
    return isinstance(error, sa.exc.OperationalError) or isinstance(error.orig, psycopg.errors.UndefinedTable)


def wait_for_loads(db: str, count: int, proc: subprocess.Popen[str], timeout: float = 240) -> str:
    """The run's id once it has recorded `count` loads."""
    deadline = time.monotonic() + timeout
    engine = sa.create_engine(db)  # read-only queries: no migration, no write lock on the runner's store
    try:
        while time.monotonic() < deadline:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            try:
                with engine.connect() as conn:
                    found = conn.execute(sa.text(
                        "SELECT e.run_id, count(DISTINCT l.seq) FROM experiments e "
                        "LEFT JOIN loads l ON l.experiment_id = e.id GROUP BY e.run_id")).first()
            except sa.exc.DBAPIError as error:
                if not _not_there_yet(error):
                    raise
                found = None
            if found is not None and found[1] >= count:
                return str(found[0])
            time.sleep(0.2)
    finally:
        engine.dispose()
    raise AssertionError(f"the run never recorded {count} loads")


@dataclass(frozen=True)
class Stored:
    """A run as its store reads: the seqs of its loads (warm-ups too), the loads missing
    some of their resources (half written), those that failed, its status and why."""

    seqs: list[int]
    half_written: list[int]
    failed: list[int]
    status: str
    reason: str | None


def stored(db: str, run: str) -> Stored:
    with Store(db) as store:
        loads = store.loads(run, include_warmup=True)
        half = [load.seq for load in loads if len(store.resources(load.id)) != load.requests]
        experiment = store.experiment(run)
        return Stored([load.seq for load in loads], half, [load.seq for load in loads if not load.ok],
                      experiment.status, experiment.reason)


@dataclass(frozen=True)
class KilledRun:
    """What each step left: the kill (SIGKILL after 3 loads), `report`, `cleanup`, `--resume`."""

    db: str
    run: str
    killed: Stored
    report: subprocess.CompletedProcess[str]
    cleanup: subprocess.CompletedProcess[str]
    left_after_cleanup: dict[str, list[str]]
    resume: subprocess.CompletedProcess[str]
    resumed: Stored
    left_after_resume: dict[str, list[str]]


def kill_cleanup_resume(directory: Path, db: str | None = None) -> KilledRun:
    """SPEC run into `db` (else SQLite in `directory`), killed with SIGKILL once it has
    recorded three loads; then `report`, `cleanup`, `run --resume`: what each left."""
    db = db or f"sqlite:///{directory}/k.sqlite"
    proc = start_run(write_spec(directory, **SPEC), db)
    try:
        run = wait_for_loads(db, 3, proc)
        proc.send_signal(signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()  # (not communicate: the lab's processes it left may hold its pipes)
    killed = stored(db, run)
    report = pagebench("report", run, "--db", db)
    cleanup = pagebench("cleanup")
    left_after_cleanup = leftovers()
    resume = pagebench("run", "--resume", run, "--db", db)
    return KilledRun(db, run, killed, report, cleanup, left_after_cleanup, resume, stored(db, run), leftovers())


def assert_killed_reads_as_interrupted(killed: KilledRun) -> None:
    """After SIGKILL: the loads recorded so far, none half-written (each has its
    resources); the run reads as interrupted, its process gone, in the store and in
    `report`; `cleanup` removes the lab it left."""
    before = killed.killed
    assert 3 <= len(before.seqs) < PLANNED and before.half_written == [], before
    assert before.status == "interrupted" and "is gone" in (before.reason or ""), before
    assert killed.report.returncode == 0 and "interrupted" in killed.report.stdout, killed.report.stderr[-2000:]
    assert killed.cleanup.returncode == 0, killed.cleanup.stderr[-2000:]
    assert not any(killed.left_after_cleanup.values()), killed.left_after_cleanup


def assert_resumed_exactly_the_plan(killed: KilledRun) -> None:
    """`run --resume` of the killed run: each planned load exactly once (those recorded
    before the kill kept), all of them good, the run complete, nothing left."""
    assert killed.resume.returncode == 0, killed.resume.stderr[-2000:]
    after = killed.resumed
    assert sorted(after.seqs) == list(range(PLANNED)) and set(killed.killed.seqs) <= set(after.seqs), after
    assert after.half_written == [] and after.failed == [] and after.status == "complete", after
    assert not any(killed.left_after_resume.values()), killed.left_after_resume
