"""The results store: SQLAlchemy Core tables, migrations, append-only writes.

The schema is a public, versioned interface (the report, Grafana and exports read it):
its history lives in `results/migrations/` and these tables mirror the latest revision.
Writes only ever insert rows, so several writers (shards) can share one PostgreSQL;
a run's status is the latest row of `run_status`. Times are float epoch seconds (UTC).
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from pagebench import REPO_ROOT
from pagebench.core.errors import BAD_INPUT, PagebenchError
from pagebench.core.records import Condition, LoadResult, PlannedLoad, Resource
from pagebench.system.owner import Owner

MIGRATIONS = REPO_ROOT / "results" / "migrations"
#: A run is running, or ended complete, interrupted (a signal) or failed (an error); the
#: last two carry the reason and resume.
STATUSES = ("running", "complete", "interrupted", "failed")
#: `meta` keys that also get a column of their own (all of `meta` is kept as JSON).
META_COLUMNS = ("seed", "backend", "git_commit", "host", "kernel", "chromium_version",
                "nginx_version", "pagebench_version")
_PG_MIGRATION_LOCK = 0x70616765  # advisory lock id: concurrent shards migrate one at a time
_PG_CONNECT_TIMEOUT_S = 10  # an unreachable server is an error in seconds, not minutes
#: How long a write waits for a PostgreSQL server that went away (a restart) to come back.
_PG_RECONNECT_S = 60

T = TypeVar("T")
metadata = sa.MetaData()

experiments = sa.Table(
    "experiments", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("run_id", sa.Text, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("planned", sa.Integer, nullable=False),
    sa.Column("seed", sa.BigInteger),
    sa.Column("backend", sa.Text),
    sa.Column("git_commit", sa.Text),
    sa.Column("host", sa.Text),
    sa.Column("kernel", sa.Text),
    sa.Column("chromium_version", sa.Text),
    sa.Column("nginx_version", sa.Text),
    sa.Column("pagebench_version", sa.Text),
    sa.Column("spec", sa.JSON, nullable=False),
    sa.Column("meta", sa.JSON, nullable=False),
    sa.UniqueConstraint("run_id", name="uq_experiments_run_id"),
)

run_status = sa.Table(
    "run_status", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_run_status_experiment", ondelete="CASCADE"),
              nullable=False),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("status", sa.Text, nullable=False),
    sa.Column("reason", sa.Text),  # interrupted: the signal; failed: the one-line error
    sa.Column("host", sa.Text),  # running: the process running it (host, pid, its kernel start time)
    sa.Column("pid", sa.Integer),
    sa.Column("pid_start", sa.Text),
    sa.CheckConstraint("status IN ('running', 'complete', 'interrupted', 'failed')", name="ck_run_status_status"),
    sa.Index("ix_run_status_experiment_id", "experiment_id"),
)

conditions = sa.Table(
    "conditions", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_conditions_experiment", ondelete="CASCADE"),
              nullable=False),
    sa.Column("key", sa.Text, nullable=False),
    sa.Column("site", sa.Text, nullable=False),
    sa.Column("mode", sa.Text, nullable=False),
    sa.Column("topology", sa.Text, nullable=False),
    sa.Column("profile", sa.Text, nullable=False),
    sa.Column("profile_fields", sa.JSON, nullable=False),
    sa.Column("cache", sa.Text, nullable=False),
    sa.Column("tls", sa.Text, nullable=False),
    sa.Column("encoding", sa.Text, nullable=False, server_default="identity"),
    sa.Column("version", sa.Integer, nullable=False, server_default="1"),  # the site's version loaded
    sa.UniqueConstraint("experiment_id", "key", name="uq_conditions_experiment_key"),
)

planned_loads = sa.Table(
    "planned_loads", metadata,
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_planned_loads_experiment", ondelete="CASCADE"),
              primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("condition_id", sa.Integer,
              sa.ForeignKey("conditions.id", name="fk_planned_loads_condition", ondelete="CASCADE"),
              nullable=False),
    sa.Column("repetition", sa.Integer, nullable=False),
    sa.Column("warmup", sa.Boolean, nullable=False),
)

loads = sa.Table(
    "loads", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_loads_experiment", ondelete="CASCADE"),
              nullable=False),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("condition_id", sa.Integer,
              sa.ForeignKey("conditions.id", name="fk_loads_condition", ondelete="CASCADE"),
              nullable=False),
    sa.Column("repetition", sa.Integer, nullable=False),
    sa.Column("warmup", sa.Boolean, nullable=False),
    sa.Column("started_at", sa.Float, nullable=False),
    sa.Column("recorded_at", sa.Float, nullable=False),
    sa.Column("ok", sa.Boolean, nullable=False),
    sa.Column("flagged", sa.Boolean, nullable=False),
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("ttfb_ms", sa.Float),
    sa.Column("dcl_ms", sa.Float),
    sa.Column("load_ms", sa.Float),
    sa.Column("fcp_ms", sa.Float),
    sa.Column("lcp_ms", sa.Float),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("bytes", sa.BigInteger, nullable=False),
    sa.Column("cache_hits", sa.Integer, nullable=False),
    sa.Column("connections_browser", sa.Integer, nullable=False),
    sa.Column("connections_link", sa.Integer, nullable=False),
    sa.Column("connections_server", sa.Integer, nullable=False),
    sa.Column("flags", sa.JSON, nullable=False),
    sa.Column("errors", sa.JSON, nullable=False),
    sa.Column("notes", sa.JSON, nullable=False),
    sa.Column("link", sa.JSON, nullable=False),
    sa.Column("bound_ms", sa.Float),
    sa.Column("client", sa.Integer, nullable=False, server_default="0"),
    sa.Column("connections_proxy", sa.Integer),
    sa.Column("connections_proxy_reused", sa.Integer),  # a warm pool's, opened by an earlier load
    sa.Column("unrecorded", sa.Integer),  # requests a replayed site's recording lacked; null: not replayed
    sa.UniqueConstraint("experiment_id", "seq", "client", name="uq_loads_experiment_seq_client"),
    sa.ForeignKeyConstraint(["experiment_id", "seq"], ["planned_loads.experiment_id", "planned_loads.seq"],
                            name="fk_loads_planned", ondelete="CASCADE"),
    sa.Index("ix_loads_condition_id", "condition_id"),
)

resources = sa.Table(
    "resources", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("load_id", sa.Integer,
              sa.ForeignKey("loads.id", name="fk_resources_load", ondelete="CASCADE"), nullable=False),
    sa.Column("position", sa.Integer, nullable=False),  # index within the load, 0-based
    sa.Column("url", sa.Text, nullable=False),
    sa.Column("origin", sa.Text, nullable=False),
    sa.Column("protocol", sa.Text, nullable=False),
    sa.Column("connection_id", sa.BigInteger),
    sa.Column("from_cache", sa.Boolean, nullable=False),
    sa.Column("revalidated", sa.Boolean, nullable=False),
    sa.Column("status", sa.Integer, nullable=False),
    sa.Column("resource_type", sa.Text, nullable=False),
    sa.Column("start_ms", sa.Float, nullable=False),
    sa.Column("response_start_ms", sa.Float),
    sa.Column("end_ms", sa.Float),
    sa.Column("transfer_bytes", sa.BigInteger, nullable=False),
    sa.Column("body_bytes", sa.BigInteger, nullable=False),
    sa.Column("timing", sa.JSON, nullable=False),
    sa.Column("encoded_bytes", sa.BigInteger),  # body as sent (encodedBodySize); null: not said
    sa.Column("content_encoding", sa.Text, nullable=False, server_default=""),
    sa.Column("dictionary_offered", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.Column("dictionary_used", sa.Boolean, nullable=False, server_default=sa.false()),
    sa.UniqueConstraint("load_id", "position", name="uq_resources_load_position"),
)

proxy_overheads = sa.Table(
    "proxy_overheads", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_proxy_overheads_experiment", ondelete="CASCADE"),
              nullable=False),
    sa.Column("measured_at", sa.Float, nullable=False),
    sa.Column("site", sa.Text, nullable=False),
    sa.Column("mode", sa.Text, nullable=False),
    sa.Column("tls", sa.Text, nullable=False),
    sa.Column("requests", sa.Integer, nullable=False),
    sa.Column("per_request_ms", sa.Float),  # (median proxied - median direct load) / requests
    sa.Column("direct_ms", sa.JSON, nullable=False),  # load times, direct
    sa.Column("proxy_ms", sa.JSON, nullable=False),  # load times, through the edge proxy
    sa.Column("scheduling", sa.Text),  # the proxy's: "SCHED_FIFO 20" or "normal (...)"
)

link_checks = sa.Table(
    "link_checks", metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("experiment_id", sa.Integer,
              sa.ForeignKey("experiments.id", name="fk_link_checks_experiment", ondelete="CASCADE"),
              nullable=False),
    sa.Column("profile", sa.Text, nullable=False),
    sa.Column("checked_at", sa.Float, nullable=False),
    sa.Column("backend", sa.Text),
    sa.Column("valid", sa.Boolean, nullable=False),
    sa.Column("rtt_median_ms", sa.Float),
    sa.Column("down_mbit", sa.Float),
    sa.Column("up_mbit", sa.Float),
    sa.Column("loss_pct", sa.Float),
    sa.Column("lateness_p99_us", sa.Float),
    sa.Column("result", sa.JSON, nullable=False),
    sa.Index("ix_link_checks_experiment_id", "experiment_id"),
)


class StoreError(PagebenchError):
    """A one-line, user-facing description of a store problem."""


class _Lost(StoreError):
    """The database server went away mid-transaction (PostgreSQL restarting): retried."""


class UnknownRun(StoreError):
    """No run with that id; the message lists the latest known runs."""

    exit_code = BAD_INPUT


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An alembic Config built in code (no alembic.ini): migrations in `results/migrations`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["connection"] = connection
    config.attributes["target_metadata"] = metadata
    return config


def _dumps(value: Any) -> str:
    # NaN/Infinity are not JSON and PostgreSQL refuses them: fail the same way everywhere.
    return json.dumps(value, allow_nan=False)


def _first_line(error: SQLAlchemyError) -> str:
    """The driver's own message, first line (psycopg adds hints on further lines)."""
    return (str(getattr(error, "orig", None) or error).splitlines() or [type(error).__name__])[0]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    # Writers take the write lock up front so the busy timeout applies (no upgrade deadlocks).
    immediate = conn.get_execution_options().get("pagebench_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class Store:
    """One results database. `Store(url)` opens it and migrates it to the latest schema."""

    def __init__(self, url: str) -> None:
        self.url = url
        try:
            parsed = make_url(url)
        except sa.exc.ArgumentError:
            raise StoreError(f"{url!r}: not a database URL (e.g. sqlite:///path/to.db)") from None
        self._shown = parsed.render_as_string(hide_password=True)
        if parsed.drivername == "postgresql":  # SQLAlchemy 2.0 would pick psycopg2; we ship psycopg 3
            parsed = parsed.set(drivername="postgresql+psycopg")
        try:
            if parsed.get_backend_name() == "sqlite":
                if parsed.database and parsed.database != ":memory:" and not parsed.database.startswith("file:"):
                    directory = Path(parsed.database).parent
                    directory.mkdir(parents=True, exist_ok=True)
                    if os.statvfs(directory).f_flag & os.ST_RDONLY:
                        raise StoreError(f"{self._shown}: {directory} is on a read-only filesystem; the store "
                                         "writes there, and SQLite's journal too even to read it")
                self.engine: Engine = sa.create_engine(url, json_serializer=_dumps, connect_args={"timeout": 30})
                sa.event.listen(self.engine, "connect", _sqlite_pragmas)
                sa.event.listen(self.engine, "begin", _sqlite_begin)
            else:
                postgres = parsed.get_backend_name() == "postgresql"
                connect: dict[str, Any] = {}
                if postgres and "connect_timeout" not in parsed.query:
                    connect["connect_timeout"] = _PG_CONNECT_TIMEOUT_S
                if postgres and "client_encoding" not in parsed.query:
                    # A server created with SQL_ASCII would otherwise hand text over as bytes.
                    connect["client_encoding"] = "utf8"
                self.engine = sa.create_engine(parsed, json_serializer=_dumps, pool_pre_ping=True,
                                               connect_args=connect)
        except ImportError as error:
            raise StoreError(f"{self._shown}: database driver {error.name!r} is not installed") from None
        except sa.exc.NoSuchModuleError:
            raise StoreError(f"{self._shown}: unknown database kind {parsed.drivername!r}") from None
        try:
            self._migrate()
        except BaseException:
            self.engine.dispose()
            raise

    @staticmethod
    def default_url() -> str:
        return f"sqlite:///{REPO_ROOT / 'results' / 'pagebench.sqlite'}"

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- schema ------------------------------------------------------------------

    def _migrate(self) -> None:
        try:
            self.engine.connect().close()
        except SQLAlchemyError as error:
            raise StoreError(f"cannot connect to {self._shown}: {_first_line(error)}") from None
        try:
            with self.engine.connect() as conn, conn.execution_options(pagebench_write=True).begin():
                if conn.dialect.name == "postgresql":
                    conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_MIGRATION_LOCK})
                config = alembic_config(conn)
                script = ScriptDirectory.from_config(config)
                for revision in MigrationContext.configure(conn).get_current_heads():
                    try:
                        script.get_revision(revision)
                    except CommandError:
                        raise StoreError(
                            f"{self._shown}: schema revision {revision!r} is newer than this pagebench "
                            f"(knows up to {script.get_current_head()!r}): upgrade pagebench"
                        ) from None
                command.upgrade(config, "head")
        except SQLAlchemyError as error:
            raise StoreError(f"{self._shown}: cannot open the results store: {_first_line(error)}") from None

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """A write transaction; a failure of the database (full disk, read-only file,
        server gone) is one StoreError line. A broken constraint stays IntegrityError:
        the writers tell a duplicate from a bug by it."""
        with self._failures("cannot write"), self.engine.connect() as conn:
            conn.execution_options(pagebench_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self._failures("cannot read"), self.engine.connect() as conn:
            yield conn

    @contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        try:
            yield
        except IntegrityError:
            raise
        except (sa.exc.OperationalError, sa.exc.InterfaceError) as error:
            cls = _Lost if self.engine.dialect.name == "postgresql" else StoreError
            raise cls(f"{self._shown}: {doing}: {_first_line(error)}") from None
        except SQLAlchemyError as error:
            raise StoreError(f"{self._shown}: {doing}: {_first_line(error)}") from None

    def _retrying(self, write: Callable[[], T]) -> T:
        """`write()`, again while a PostgreSQL server is away (up to _PG_RECONNECT_S): a
        restart under a run costs it a pause, not the run."""
        deadline = time.monotonic() + _PG_RECONNECT_S
        while True:
            try:
                return write()
            except _Lost:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)

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
                _dumps(value)
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
            with self._write() as conn:
                experiment_id = conn.execute(sa.insert(experiments).values(
                    run_id=run_id, created_at=now, planned=len(plan), spec=spec, meta=meta, **columns,
                )).inserted_primary_key[0]
                conn.execute(sa.insert(run_status).values(experiment_id=experiment_id, at=now,
                                                          **_status_row("running", None)))
                conn.execute(sa.insert(conditions), [
                    {"experiment_id": experiment_id, "key": key, "site": c.site, "mode": c.mode,
                     "topology": c.topology, "profile": c.profile, "profile_fields": profiles[c.profile],
                     "cache": c.cache, "tls": c.tls, "encoding": c.encoding, "version": c.version}
                    for key, c in unique.items()
                ])
                rows = conn.execute(sa.select(conditions.c.key, conditions.c.id)
                                    .where(conditions.c.experiment_id == experiment_id))
                ids = {key: condition_id for key, condition_id in rows}
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
        self._retrying(lambda: self._set_status(run_id, status, reason))

    def _set_status(self, run_id: str, status: str, reason: str | None) -> None:
        with self._write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            conn.execute(sa.insert(run_status).values(experiment_id=experiment_id, at=time.time(),
                                                      **_status_row(status, reason)))

    def note(self, run_id: str, **values: Any) -> None:
        """Add what the lab reports once it runs (the delay program's scheduling) to the
        run's `meta`."""
        self._retrying(lambda: self._note(run_id, values))

    def _note(self, run_id: str, values: dict[str, Any]) -> None:
        with self._write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            meta = conn.execute(sa.select(experiments.c.meta).where(experiments.c.id == experiment_id)).scalar_one()
            conn.execute(sa.update(experiments).where(experiments.c.id == experiment_id)
                         .values(meta={**meta, **values}))

    def add_link_check(self, run_id: str, profile_name: str, result: dict[str, Any]) -> None:
        """Store a `pagebench link check --json` result taken for this run."""
        measured = result.get("measured") or {}
        with self._write() as conn:
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
        with self._write() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            conn.execute(sa.insert(proxy_overheads).values(experiment_id=experiment_id, measured_at=time.time(),
                                                           **overhead))

    def proxy_overheads(self, run_id: str) -> list[dict[str, Any]]:
        query = sa.select(*[c for c in proxy_overheads.c if c.name not in ("id", "experiment_id")])
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            rows = conn.execute(query.where(proxy_overheads.c.experiment_id == experiment_id)
                                .order_by(proxy_overheads.c.id))
            return [dict(row) for row in rows.mappings()]

    def record_loads(self, run_id: str, planned: PlannedLoad, results: list[LoadResult],
                     started_at: float) -> list[int]:
        """Insert the loads of one planned load (client k is `results[k]`) and their
        resources in one transaction: a seq is done with all its clients or not at all.
        A seq can be recorded once only."""
        return self._retrying(lambda: self._record_loads(run_id, planned, results, started_at))

    def _record_loads(self, run_id: str, planned: PlannedLoad, results: list[LoadResult],
                      started_at: float) -> list[int]:
        ids = []
        try:
            with self._write() as conn:
                experiment_id = self._experiment_id(conn, run_id)
                condition_id = self._planned_condition(conn, run_id, experiment_id, planned)
                for client, result in enumerate(results):
                    load_id = conn.execute(sa.insert(loads).values(
                        experiment_id=experiment_id, seq=planned.seq, condition_id=condition_id,
                        repetition=planned.repetition, warmup=planned.warmup, client=client,
                        started_at=started_at, recorded_at=time.time(), **load_columns(result),
                    )).inserted_primary_key[0]
                    ids.append(load_id)
                    if result.resources:
                        conn.execute(sa.insert(resources), [
                            {"load_id": load_id, "position": position, **resource_columns(resource)}
                            for position, resource in enumerate(result.resources)
                        ])
        except IntegrityError:
            if planned.seq in self.done_seqs(run_id):
                raise StoreError(
                    f"run {run_id!r}: load seq {planned.seq} is already recorded (loads are never replaced)"
                ) from None
            raise
        return ids

    # -- reads ---------------------------------------------------------------------

    def done_seqs(self, run_id: str) -> set[int]:
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            return set(conn.scalars(sa.select(loads.c.seq).where(loads.c.experiment_id == experiment_id)))

    def plan(self, run_id: str) -> list[PlannedLoad]:
        """The stored plan in seq order, as PlannedLoad values."""
        query = (
            sa.select(planned_loads.c.seq, planned_loads.c.repetition, planned_loads.c.warmup,
                      *_condition_columns())
            .join(conditions, conditions.c.id == planned_loads.c.condition_id)
            .order_by(planned_loads.c.seq)
        )
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            rows = conn.execute(query.where(planned_loads.c.experiment_id == experiment_id)).mappings()
            return [PlannedLoad(row["seq"], _condition(row), row["repetition"], bool(row["warmup"])) for row in rows]

    def experiment(self, run_id: str) -> dict[str, Any]:
        """The experiment row (without the internal id) plus `status` and `recorded` (loads)."""
        with self._read() as conn:
            row = conn.execute(self._runs_query().where(experiments.c.run_id == run_id)).mappings().first()
            if row is None:
                raise self._unknown(conn, run_id)
            return _public(row)

    def runs(self) -> list[dict[str, Any]]:
        """Every run, latest first (experiment rows without spec/meta, plus status and recorded)."""
        query = self._runs_query().order_by(experiments.c.created_at.desc(), experiments.c.id.desc())
        with self._read() as conn:
            return [{k: v for k, v in _public(row).items() if k not in ("spec", "meta")}
                    for row in conn.execute(query).mappings()]

    def conditions(self, run_id: str) -> list[dict[str, Any]]:
        """The run's conditions (key, site, mode, topology, profile, profile_fields, cache, tls,
        encoding, version)."""
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            query = (sa.select(*[c for c in conditions.c if c.name not in ("id", "experiment_id")])
                     .where(conditions.c.experiment_id == experiment_id).order_by(conditions.c.id))
            return [dict(row) for row in conn.execute(query).mappings()]

    def loads(self, run_id: str, include_warmup: bool = False) -> list[dict[str, Any]]:
        """Load rows in seq order, each with its condition's fields and key (`condition`)."""
        query = (
            sa.select(*[c for c in loads.c if c.name != "experiment_id"], *_condition_columns())
            .join(conditions, conditions.c.id == loads.c.condition_id)
            .order_by(loads.c.seq, loads.c.client)
        )
        if not include_warmup:
            query = query.where(sa.not_(loads.c.warmup))
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            return [dict(row) for row in conn.execute(query.where(loads.c.experiment_id == experiment_id)).mappings()]

    def resources(self, load_id: int) -> list[dict[str, Any]]:
        query = sa.select(*[c for c in resources.c if c.name != "id"]).where(resources.c.load_id == load_id)
        with self._read() as conn:
            return [dict(row) for row in conn.execute(query.order_by(resources.c.position)).mappings()]

    def run_resources(self, run_id: str) -> list[dict[str, Any]]:
        """Every resource of every load of a run (warm-ups too), with its load's seq and
        client, in one query."""
        query = (sa.select(loads.c.seq, loads.c.client, *[c for c in resources.c if c.name != "id"])
                 .join(loads, loads.c.id == resources.c.load_id)
                 .order_by(loads.c.seq, loads.c.client, resources.c.position))
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            return [dict(row) for row in conn.execute(query.where(loads.c.experiment_id == experiment_id)).mappings()]

    def link_checks(self, run_id: str) -> list[dict[str, Any]]:
        query = sa.select(*[c for c in link_checks.c if c.name not in ("id", "experiment_id")])
        with self._read() as conn:
            experiment_id = self._experiment_id(conn, run_id)
            rows = conn.execute(query.where(link_checks.c.experiment_id == experiment_id).order_by(link_checks.c.id))
            return [dict(row) for row in rows.mappings()]

    # -- helpers -------------------------------------------------------------------

    def _run_ids(self) -> list[str]:
        with self._read() as conn:
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
        return (sa.select(experiments, run_status.c.status, run_status.c.reason.label("status_reason"),
                          run_status.c.host.label("status_host"), run_status.c.pid.label("status_pid"),
                          run_status.c.pid_start.label("status_pid_start"), recorded.label("recorded"))
                .select_from(experiments.join(run_status, run_status.c.id == latest)))


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
    return [conditions.c.key.label("condition"), conditions.c.site, conditions.c.mode, conditions.c.topology,
            conditions.c.profile, conditions.c.cache, conditions.c.tls, conditions.c.encoding, conditions.c.version]


def _condition(row: Any) -> Condition:
    return Condition(row["site"], row["mode"], row["topology"], row["profile"], row["cache"], row["tls"],
                     row["encoding"], row["version"])


def _public(row: Any) -> dict[str, Any]:
    public = {key: value for key, value in row.items() if key != "id" and not key.startswith("status_")}
    public["status"], public["reason"] = _effective_status(row)
    return public


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


def load_columns(result: LoadResult) -> dict[str, Any]:
    """A LoadResult's values as `loads` columns (everything but its resources)."""
    return {
        "ok": result.ok, "flagged": result.flagged, "url": result.url,
        "ttfb_ms": result.ttfb_ms, "dcl_ms": result.dcl_ms, "load_ms": result.load_ms,
        "fcp_ms": result.fcp_ms, "lcp_ms": result.lcp_ms,
        "requests": result.requests, "bytes": result.bytes, "cache_hits": result.cache_hits,
        "connections_browser": result.connections_browser, "connections_link": result.connections_link,
        "connections_server": result.connections_server,
        "flags": list(result.flags), "errors": list(result.errors), "notes": list(result.notes),
        "link": result.link, "bound_ms": result.bound_ms, "connections_proxy": result.connections_proxy,
        "connections_proxy_reused": result.connections_proxy_reused,
        "unrecorded": None if result.unrecorded is None else len(result.unrecorded),
    }


def resource_columns(resource: Resource) -> dict[str, Any]:
    return {
        "url": resource.url, "origin": resource.origin, "protocol": resource.protocol,
        "connection_id": resource.connection_id, "from_cache": resource.from_cache,
        "revalidated": resource.revalidated, "status": resource.status, "resource_type": resource.resource_type,
        "start_ms": resource.start_ms, "response_start_ms": resource.response_start_ms, "end_ms": resource.end_ms,
        "transfer_bytes": resource.transfer_bytes, "body_bytes": resource.body_bytes, "timing": resource.timing,
        "encoded_bytes": resource.encoded_bytes, "content_encoding": resource.content_encoding,
        "dictionary_offered": resource.dictionary_offered, "dictionary_used": resource.dictionary_used,
    }
