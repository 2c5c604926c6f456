"""The results store: pagebench's writes and reads on one database (`database`), its
schema (`schema`) brought up to date on open (`migrate`).

Writes only ever insert rows, so several writers (shards) can share one PostgreSQL; a
run's status is the latest row of `run_status`. Reads return frozen rows (`rows`).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection
from sqlalchemy.exc import IntegrityError

from pagebench.core.records import Condition, LoadResult, PlannedLoad
from pagebench.results import migrate, rows
from pagebench.results.artifacts import Artifacts, Evidence, directory_of
from pagebench.results.database import Database, StoreError, dumps
from pagebench.results.rows import (ConditionRow, LinkCheckRow, LoadRow, ProxyOverheadRow, ResourceRow, RunRow,
                                    load_columns, resource_columns)
from pagebench.results.schema import (META_COLUMNS, STATUSES, conditions, experiments, link_checks, loads,
                                      planned_loads, proxy_overheads, resources, run_status,
                                      visual_progress)
from pagebench.system import places
from pagebench.system.owner import Owner

#: The SQLite file of the store unless told (where: `default_path`).
DEFAULT_FILE = "pagebench.sqlite"
Row = TypeVar("Row")


class UnknownRun(StoreError):
    """No run with that id; the message lists the latest known runs."""


class AlreadyRecorded(StoreError):
    """A load whose seq another process recorded first (loads are never replaced)."""


class Store:
    """One results database. `Store(url)` opens it and migrates it to the latest schema;
    `artifacts` is where its loads' evidence is kept (None: an in-memory store keeps none)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._db = Database(url)
        root = directory_of(url)
        self.artifacts = Artifacts(root) if root is not None else None
        self.engine = self._db.engine
        try:
            migrate.upgrade(self.engine, self._db.shown)
        except BaseException:
            self._db.close()
            raise

    @staticmethod
    def default_url() -> str:
        return f"sqlite:///{default_path()}"

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- writes (inserts only) ---------------------------------------------------

    def create_experiment(
        self, run_id: str, spec: dict[str, Any], meta: dict[str, Any], plan: list[PlannedLoad],
        profiles: dict[str, dict[str, Any]], *, exist_ok: bool = False,
    ) -> None:
        """Insert the experiment, its conditions and its plan (status 'running').
        With `exist_ok`, an existing run with the same plan is accepted (shards, resumes)."""
        _check_plan(run_id, plan, profiles)
        for name, value in (("spec", spec), ("meta", meta), ("profiles", profiles)):
            try:
                dumps(value)
            except (TypeError, ValueError) as error:
                raise StoreError(f"run {run_id!r}: {name} is not storable as JSON: {error}") from None
        columns = {key: meta.get(key) for key in META_COLUMNS}
        if columns["seed"] is None:
            columns["seed"] = spec.get("seed")
        now = time.time()
        unique: dict[str, Condition] = {}
        for planned in plan:
            unique.setdefault(planned.condition.key, planned.condition)
        try:
            with self._db.write() as conn:
                experiment_id = conn.execute(sa.insert(experiments).values(
                    run_id=run_id, created_at=now, planned=len(plan), spec=spec, meta=meta, **columns,
                )).inserted_primary_key[0]
                conn.execute(sa.insert(run_status).values(experiment_id=experiment_id, at=now,
                                                          **_status_row("running", None)))
                conn.execute(sa.insert(conditions), [
                    {"experiment_id": experiment_id, "key": key, **c.as_names(),
                     "profile_fields": profiles[c.profile]}
                    for key, c in unique.items()
                ])
                stored = conn.execute(sa.select(conditions.c.key, conditions.c.id)
                                      .where(conditions.c.experiment_id == experiment_id))
                ids = {key: condition_id for key, condition_id in stored}
                if plan:
                    conn.execute(sa.insert(planned_loads), [
                        {"experiment_id": experiment_id, "seq": p.seq, "condition_id": ids[p.condition.key],
                         "repetition": p.repetition, "warmup": p.warmup}
                        for p in plan
                    ])
        except IntegrityError:
            if run_id not in self._run_ids():
                raise
            if not exist_ok:
                raise StoreError(f"run {run_id!r} already exists in the store: resume it or pick another id") from None
            if self.plan(run_id) != sorted(plan, key=lambda p: p.seq):
                raise StoreError(f"run {run_id!r} already exists with a different plan") from None

    def set_status(self, run_id: str, status: str, reason: str | None = None) -> None:
        """A new status row; 'running' records this process as the one running the run."""
        if status not in STATUSES:
            raise StoreError(f"status {status!r}: must be one of {', '.join(STATUSES)}")
        self._db.retrying(lambda: self._set_status(run_id, status, reason))

    def _set_status(self, run_id: str, status: str, reason: str | None) -> None:
        with self._db.write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            conn.execute(sa.insert(run_status).values(experiment_id=experiment_id, at=time.time(),
                                                      **_status_row(status, reason)))

    def note(self, run_id: str, **values: Any) -> None:
        """Add what the lab reports once it runs (the delay program's scheduling) to the
        run's `meta`."""
        self._db.retrying(lambda: self._note(run_id, values))

    def _note(self, run_id: str, values: dict[str, Any]) -> None:
        with self._db.write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            # Locked until the update (PostgreSQL): a fleet's driver and a machine's runner noting
            # the same run at once must not lose each other's keys.
            meta = conn.execute(sa.select(experiments.c.meta).where(experiments.c.id == experiment_id)
                                .with_for_update()).scalar_one()
            conn.execute(sa.update(experiments).where(experiments.c.id == experiment_id)
                         .values(meta={**meta, **values}))

    def add_link_check(self, run_id: str, profile_name: str, result: dict[str, Any]) -> None:
        """Store a `pagebench link check --json` result taken for this run."""
        measured = result.get("measured") or {}
        with self._db.write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            conn.execute(sa.insert(link_checks).values(
                experiment_id=experiment_id, profile=profile_name, checked_at=time.time(),
                backend=result.get("backend"), valid=bool(result.get("valid")),
                rtt_median_ms=(measured.get("rtt_ms") or {}).get("median"),
                down_mbit=measured.get("down_mbit"), up_mbit=measured.get("up_mbit"),
                loss_pct=measured.get("loss_pct"),
                lateness_p99_us=(result.get("lateness_us") or {}).get("p99"),
                result=result,
            ))

    def add_proxy_overhead(self, run_id: str, overhead: dict[str, Any]) -> None:
        """Store the edge proxy's measured cost (`runner.Runner._proxy_overhead`)."""
        with self._db.write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            conn.execute(sa.insert(proxy_overheads).values(experiment_id=experiment_id, measured_at=time.time(),
                                                           **overhead))

    def record_loads(self, run_id: str, planned: PlannedLoad, results: list[LoadResult],
                     started_at: float, evidence: Sequence[Evidence] = (), machine: str | None = None) -> list[int]:
        """Insert the loads of one planned load (client k is `results[k]`, its evidence
        `evidence[k]`, written first into `artifacts`) and their resources in one
        transaction: a seq is done with all its clients or not at all. A seq can be
        recorded once only. `machine`: the lab machine that measured them (a shard's)."""
        kept = [self.artifacts.keep(run_id, planned.seq, client, found) if self.artifacts is not None else {}
                for client, found in enumerate(evidence)]
        kept += [{}] * (len(results) - len(kept))
        return self._db.retrying(lambda: self._record_loads(run_id, planned, results, started_at, kept, machine))

    def _record_loads(self, run_id: str, planned: PlannedLoad, results: list[LoadResult],
                      started_at: float, kept: list[dict[str, str | None]], machine: str | None) -> list[int]:
        ids = []
        try:
            with self._db.write() as conn:
                experiment_id = self._experiment_id(conn, run_id)
                condition_id = self._planned_condition(conn, run_id, experiment_id, planned)
                for client, result in enumerate(results):
                    load_id = conn.execute(sa.insert(loads).values(
                        experiment_id=experiment_id, seq=planned.seq, condition_id=condition_id,
                        repetition=planned.repetition, warmup=planned.warmup, client=client,
                        started_at=started_at, recorded_at=time.time(), machine=machine, **load_columns(result),
                        **kept[client],
                    )).inserted_primary_key[0]
                    ids.append(load_id)
                    if result.resources:
                        conn.execute(sa.insert(resources), [
                            {"load_id": load_id, "position": position, **resource_columns(resource)}
                            for position, resource in enumerate(result.resources)
                        ])
                    if result.visual_progress:
                        conn.execute(sa.insert(visual_progress), [
                            {"load_id": load_id, "position": position, "ms": ms, "progress": progress}
                            for position, (ms, progress) in enumerate(result.visual_progress)
                        ])
        except IntegrityError:
            if planned.seq in self.done_seqs(run_id):
                raise AlreadyRecorded(
                    f"run {run_id!r}: load seq {planned.seq} is already recorded (loads are never replaced)"
                ) from None
            raise
        return ids

    def stop(self, run_id: str, seqs: Sequence[int]) -> None:
        """Mark these planned loads stopped early: a stopping rule found them not needed
        (`repetitions: auto`). A load already recorded cannot be stopped."""
        self._db.retrying(lambda: self._stop(run_id, seqs))

    def _stop(self, run_id: str, seqs: Sequence[int]) -> None:
        with self._db.write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            recorded = set(conn.scalars(sa.select(loads.c.seq).where(loads.c.experiment_id == experiment_id,
                                                                     loads.c.seq.in_(list(seqs)))))
            if recorded:
                raise StoreError(f"run {run_id!r}: load seq {min(recorded)} is recorded: it cannot be stopped early")
            conn.execute(sa.update(planned_loads).where(planned_loads.c.experiment_id == experiment_id,
                                                        planned_loads.c.seq.in_(list(seqs))).values(stopped=True))

    # -- reads -----------------------------------------------------------------------

    def done_by_machine(self, run_id: str) -> dict[str | None, int]:
        """How many planned loads each machine recorded (None: the run's host): a fleet's
        progress, asked every second, so counted by the database."""
        with self._db.read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            query = (sa.select(loads.c.machine, sa.func.count(sa.distinct(loads.c.seq)))
                     .where(loads.c.experiment_id == experiment_id).group_by(loads.c.machine))
            return {machine: count for machine, count in conn.execute(query)}

    def done_seqs(self, run_id: str) -> set[int]:
        with self._db.read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            return set(conn.scalars(sa.select(loads.c.seq).where(loads.c.experiment_id == experiment_id)))

    def stopped_seqs(self, run_id: str) -> set[int]:
        """The planned loads a stopping rule left out (`stop`)."""
        return set(self._run_rows(run_id, sa.select(planned_loads.c.seq).where(planned_loads.c.stopped),
                                  planned_loads.c.experiment_id, lambda row: row["seq"]))

    def plan(self, run_id: str) -> list[PlannedLoad]:
        """The stored plan in seq order, as PlannedLoad values."""
        query = (
            sa.select(planned_loads.c.seq, planned_loads.c.repetition, planned_loads.c.warmup,
                      *_condition_columns())
            .join(conditions, conditions.c.id == planned_loads.c.condition_id)
            .order_by(planned_loads.c.seq)
        )
        return self._run_rows(run_id, query, planned_loads.c.experiment_id, lambda row: PlannedLoad(
            row["seq"], rows.condition_of(row), row["repetition"], bool(row["warmup"])))

    def experiment(self, run_id: str) -> RunRow:
        """The run: its experiment, its status as it is now and its loads recorded."""
        with self._db.read() as conn:
            row = conn.execute(self._runs_query().where(experiments.c.run_id == run_id)).mappings().first()
            if row is None:
                raise self._unknown(conn, run_id)
            return rows.run_of(row, *_effective_status(row))

    def runs(self) -> list[RunRow]:
        """Every run, latest first."""
        query = self._runs_query().order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
        with self._db.read() as conn:
            return [rows.run_of(row, *_effective_status(row)) for row in conn.execute(query).mappings()]

    def conditions(self, run_id: str) -> list[ConditionRow]:
        """The run's conditions, each with its profile's fields."""
        return self._run_rows(run_id, sa.select(conditions).order_by(conditions.c.id), conditions.c.experiment_id,
                              lambda row: ConditionRow(rows.condition_of(row), row["profile_fields"]))

    def loads(self, run_id: str, include_warmup: bool = False) -> list[LoadRow]:
        """The run's loads in seq order (then client), warm-ups only when asked."""
        query = (
            sa.select(loads, *_condition_columns())
            .join(conditions, conditions.c.id == loads.c.condition_id)
            .order_by(loads.c.seq, loads.c.client)
        )
        if not include_warmup:
            query = query.where(sa.not_(loads.c.warmup))
        return self._run_rows(run_id, query, loads.c.experiment_id, rows.load_of)

    def resources(self, load_id: int) -> list[ResourceRow]:
        """One load's resources in request order."""
        query = sa.select(resources).where(resources.c.load_id == load_id).order_by(resources.c.position)
        with self._db.read() as conn:
            return [rows.resource_of(row) for row in conn.execute(query).mappings()]

    def run_visual_progress(self, run_id: str) -> dict[int, tuple[tuple[float, float], ...]]:
        """Each load's visual progress curve (load id -> (ms, completeness) in frame
        order); loads without frames are absent."""
        query = (sa.select(visual_progress.c.load_id, visual_progress.c.ms, visual_progress.c.progress)
                 .join(loads, loads.c.id == visual_progress.c.load_id)
                 .order_by(visual_progress.c.load_id, visual_progress.c.position))
        curves: dict[int, list[tuple[float, float]]] = {}
        for row in self._run_rows(run_id, query, loads.c.experiment_id, dict):
            curves.setdefault(row["load_id"], []).append((row["ms"], row["progress"]))
        return {load_id: tuple(curve) for load_id, curve in curves.items()}

    def run_resources(self, run_id: str) -> list[ResourceRow]:
        """Every resource of every load of a run (warm-ups too) in one query, in the
        loads' order."""
        query = (sa.select(resources).join(loads, loads.c.id == resources.c.load_id)
                 .order_by(loads.c.seq, loads.c.client, resources.c.position))
        return self._run_rows(run_id, query, loads.c.experiment_id, rows.resource_of)

    def link_checks(self, run_id: str) -> list[LinkCheckRow]:
        return self._run_rows(run_id, sa.select(link_checks).order_by(link_checks.c.id),
                              link_checks.c.experiment_id, rows.link_check_of)

    def proxy_overheads(self, run_id: str) -> list[ProxyOverheadRow]:
        return self._run_rows(run_id, sa.select(proxy_overheads).order_by(proxy_overheads.c.id),
                              proxy_overheads.c.experiment_id, rows.proxy_overhead_of)

    # -- helpers -----------------------------------------------------------------------

    def _run_rows(self, run_id: str, query: sa.Select, experiment_id: sa.ColumnElement[int],
                  row_of: Callable[[Any], Row]) -> list[Row]:
        """One run's rows of `query` (`experiment_id`: its column naming the run), each as `row_of` makes it."""
        with self._db.read() as conn:
            found = conn.execute(query.where(experiment_id == self._experiment_id(conn, run_id))).mappings()
            return [row_of(row) for row in found]

    def _run_ids(self) -> list[str]:
        with self._db.read() as conn:
            return list(conn.scalars(sa.select(experiments.c.run_id)))

    def _experiment_id(self, conn: Connection, run_id: str) -> int:
        found = conn.scalar(sa.select(experiments.c.id).where(experiments.c.run_id == run_id))
        if found is None:
            raise self._unknown(conn, run_id)
        return found

    @staticmethod
    def _unknown(conn: Connection, run_id: str, show: int = 5) -> UnknownRun:
        latest = list(conn.scalars(sa.select(experiments.c.run_id)
                                   .order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
                                   .limit(show + 1)))
        if not latest:
            return UnknownRun(f"unknown run {run_id!r}; the store has no runs yet")
        more = ", ..." if len(latest) > show else ""
        return UnknownRun(f"unknown run {run_id!r}; known: {', '.join(latest[:show])}{more}")

    @staticmethod
    def _planned_condition(conn: Connection, run_id: str, experiment_id: int, planned: PlannedLoad) -> int:
        row = conn.execute(
            sa.select(planned_loads.c.condition_id, planned_loads.c.repetition, planned_loads.c.warmup,
                      conditions.c.key)
            .join(conditions, conditions.c.id == planned_loads.c.condition_id)
            .where(planned_loads.c.experiment_id == experiment_id, planned_loads.c.seq == planned.seq)
        ).first()
        if row is None:
            raise StoreError(f"run {run_id!r}: seq {planned.seq} is not in the stored plan")
        if (row.key, row.repetition, bool(row.warmup)) != (planned.condition.key, planned.repetition, planned.warmup):
            raise StoreError(
                f"run {run_id!r}: seq {planned.seq} is planned as {row.key} repetition {row.repetition}"
                f"{' (warm-up)' if row.warmup else ''}, not {planned.condition.key} repetition {planned.repetition}"
            )
        return row.condition_id

    @staticmethod
    def _runs_query() -> sa.Select:
        newer = run_status.alias("newer")
        latest = (sa.select(newer.c.id).where(newer.c.experiment_id == experiments.c.id)
                  .order_by(newer.c.id.desc()).limit(1).correlate(experiments).scalar_subquery())
        recorded = (sa.select(sa.func.count(sa.distinct(loads.c.seq))).select_from(loads)
                    .where(loads.c.experiment_id == experiments.c.id).scalar_subquery())
        stopped = (sa.select(sa.func.count()).select_from(planned_loads)
                   .where(planned_loads.c.experiment_id == experiments.c.id, planned_loads.c.stopped)
                   .scalar_subquery())
        return (sa.select(experiments, run_status.c.status, run_status.c.reason.label("status_reason"),
                          run_status.c.host.label("status_host"), run_status.c.pid.label("status_pid"),
                          run_status.c.pid_start.label("status_pid_start"), recorded.label("recorded"),
                          stopped.label("stopped"))
                .select_from(experiments.join(run_status, run_status.c.id == latest)))


def default_path() -> Path:
    """Where the store is unless told: `results/` of the checkout pagebench runs from
    (an editable install), else the data directory (an installed wheel has no checkout)."""
    checkout = places.checkout()
    return (checkout / "results" if checkout is not None else places.data_dir()) / DEFAULT_FILE


def _check_plan(run_id: str, plan: list[PlannedLoad], profiles: dict[str, dict[str, Any]]) -> None:
    seen: set[int] = set()
    for planned in plan:
        if planned.seq in seen:
            raise StoreError(f"run {run_id!r}: plan has seq {planned.seq} twice")
        seen.add(planned.seq)
        if planned.condition.profile not in profiles:
            raise StoreError(
                f"run {run_id!r}: condition {planned.condition.key} uses profile "
                f"{planned.condition.profile!r}, not given in profiles (given: {', '.join(sorted(profiles)) or 'none'})"
            )


def _condition_columns() -> list[sa.ColumnElement[Any]]:
    return [conditions.c.site, conditions.c.mode, conditions.c.topology, conditions.c.profile, conditions.c.cache,
            conditions.c.tls, conditions.c.encoding, conditions.c.version, conditions.c.device]


def _status_row(status: str, reason: str | None) -> dict[str, Any]:
    if status != "running":
        return {"status": status, "reason": reason}
    me = Owner.me()
    return {"status": status, "reason": reason, "host": platform.node(), "pid": me.pid, "pid_start": me.start}


def _effective_status(row: Any) -> tuple[str, str | None]:
    """The run's status as it is: a run 'running' on this host whose process is gone was
    interrupted (a SIGKILL, a crash or a reboot leaves no one to say so)."""
    status, reason = row["status"], row["status_reason"]
    pid = row["status_pid"]
    if status == "running" and pid is not None and row["status_host"] == platform.node() \
            and not Owner(int(pid), row["status_pid_start"]).alive():
        return "interrupted", (f"the process running it (pid {pid}) is gone: killed, or the machine restarted; "
                               "resume it")
    return status, reason
