"""Opening a results database (an SQLite file, or a PostgreSQL server) and talking to it
in transactions whose failures are one line a person can act on.

Writers and readers share one database: SQLite in WAL mode with writers taking the lock
up front, PostgreSQL with a write retried while a restarting server is away (a restart
under a run costs it a pause, not the run).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from pagebench.core.errors import PagebenchError

_PG_CONNECT_TIMEOUT_S = 10  # an unreachable server is an error in seconds, not minutes
#: How long a write waits for a PostgreSQL server that went away (a restart) to come back
#: ($PAGEBENCH_STORE_WAIT_S, else a minute), as each process opening the store finds it.
STORE_WAIT_ENV = "PAGEBENCH_STORE_WAIT_S"
_PG_RECONNECT_S = 60.0


def store_wait_s() -> float:
    """The reconnect window: $PAGEBENCH_STORE_WAIT_S seconds, else _PG_RECONNECT_S."""
    value = os.environ.get(STORE_WAIT_ENV, "").strip()
    if not value:
        return _PG_RECONNECT_S
    try:
        seconds = float(value)
        if not 0 <= seconds < float("inf"):  # also refuses nan
            raise ValueError(value)
    except ValueError:
        raise StoreError(f"{STORE_WAIT_ENV}={value!r}: want a number of seconds >= 0") from None
    return seconds


#: How long a SQLite writer waits for another's lock before the store says it is locked.
SQLITE_BUSY_S = 30.0

T = TypeVar("T")


class StoreError(PagebenchError):
    """A one-line, user-facing description of a store problem."""


class _Lost(StoreError):
    """The database server went away mid-transaction (PostgreSQL restarting): retried."""


def dumps(value: Any) -> str:
    """JSON as the store writes it. NaN/Infinity are not JSON and PostgreSQL refuses
    them: fail the same way everywhere."""
    return json.dumps(value, allow_nan=False)


def first_line(error: SQLAlchemyError) -> str:
    """The driver's own message, first line (psycopg adds hints on further lines)."""
    return (str(getattr(error, "orig", None) or error).splitlines() or [type(error).__name__])[0]


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    dbapi_connection.isolation_level = None  # we emit BEGIN ourselves (see _sqlite_begin)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    # Two processes turning a new file to WAL at once can deadlock on its lock, and SQLite
    # then answers "database is locked" at once, without its busy timeout: try again (the
    # other's switch ends in milliseconds; after it the pragma changes nothing).
    deadline = time.monotonic() + SQLITE_BUSY_S
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            break
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)
    cursor.close()


def _sqlite_begin(conn: Connection) -> None:
    # Writers take the write lock up front so the busy timeout applies (no upgrade deadlocks).
    immediate = conn.get_execution_options().get("pagebench_write", False)
    conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


class Database:
    """One database by URL: `shown` names it in errors (no password), `engine` is its
    SQLAlchemy engine, `write`/`read` are its transactions."""

    def __init__(self, url: str) -> None:
        try:
            parsed = make_url(url)
        except sa.exc.ArgumentError:
            raise StoreError(f"{url!r}: not a database URL (e.g. sqlite:///path/to.db)") from None
        self.shown = parsed.render_as_string(hide_password=True)
        self.wait_s = store_wait_s()  # a bad setting is an error now, not at the first lost write
        if parsed.drivername == "postgresql":  # SQLAlchemy 2.0 would pick psycopg2; we ship psycopg 3
            parsed = parsed.set(drivername="postgresql+psycopg")
        try:
            if parsed.get_backend_name() == "sqlite":
                self.engine: Engine = self._sqlite(url, parsed.database)
            else:
                self.engine = self._server(parsed)
        except ImportError as error:
            raise StoreError(f"{self.shown}: database driver {error.name!r} is not installed") from None
        except sa.exc.NoSuchModuleError:
            raise StoreError(f"{self.shown}: unknown database kind {parsed.drivername!r}") from None
        try:
            self.engine.connect().close()
        except SQLAlchemyError as error:
            self.engine.dispose()
            raise StoreError(f"cannot connect to {self.shown}: {first_line(error)}") from None

    def _sqlite(self, url: str, database: str | None) -> Engine:
        if database and database != ":memory:" and not database.startswith("file:"):
            directory = Path(database).parent
            directory.mkdir(parents=True, exist_ok=True)
            if os.statvfs(directory).f_flag & os.ST_RDONLY:
                raise StoreError(f"{self.shown}: {directory} is on a read-only filesystem; the store "
                                 "writes there, and SQLite's journal too even to read it")
        engine = sa.create_engine(url, json_serializer=dumps, connect_args={"timeout": SQLITE_BUSY_S})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        sa.event.listen(engine, "begin", _sqlite_begin)
        return engine

    @staticmethod
    def _server(parsed: sa.URL) -> Engine:
        postgres = parsed.get_backend_name() == "postgresql"
        connect: dict[str, Any] = {}
        if postgres and "connect_timeout" not in parsed.query:
            connect["connect_timeout"] = _PG_CONNECT_TIMEOUT_S
        if postgres and "client_encoding" not in parsed.query:
            # A server created with SQL_ASCII would otherwise hand text over as bytes.
            connect["client_encoding"] = "utf8"
        return sa.create_engine(parsed, json_serializer=dumps, pool_pre_ping=True, connect_args=connect)

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """A write transaction; a failure of the database (full disk, read-only file,
        server gone) is one StoreError line. A broken constraint stays IntegrityError:
        the writers tell a duplicate from a bug by it."""
        with self._failures("cannot write"), self.engine.connect() as conn:
            conn.execution_options(pagebench_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def read(self) -> Iterator[Connection]:
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
            raise cls(f"{self.shown}: {doing}: {first_line(error)}") from None
        except SQLAlchemyError as error:
            raise StoreError(f"{self.shown}: {doing}: {first_line(error)}") from None

    def retrying(self, write: Callable[[], T]) -> T:
        """`write()`, again while a PostgreSQL server is away (up to `wait_s`)."""
        deadline = time.monotonic() + self.wait_s
        while True:
            try:
                return write()
            except _Lost:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
