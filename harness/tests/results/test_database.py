"""Opening a database: SQLite's pragmas and directories, PostgreSQL's driver, and every
failure one line; a write retried while a PostgreSQL server is away."""

from __future__ import annotations

import multiprocessing
import sqlite3
from typing import Any

import pytest

from pagebench.results import database
from pagebench.results.database import Database, StoreError


def test_open_creates_parent_dirs_uses_wal_and_foreign_keys(tmp_path):
    url = f"sqlite:///{tmp_path / 'nested' / 'dir' / 'pb.sqlite'}"
    db = Database(url)
    try:
        with db.read() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
    finally:
        db.close()
    assert (tmp_path / "nested" / "dir" / "pb.sqlite").is_file()
    Database(url).close()  # reopening is a no-op


def test_bad_urls_give_one_line_errors():
    with pytest.raises(StoreError, match="'nonsense': not a database URL"):
        Database("nonsense")
    with pytest.raises(StoreError, match="unknown database kind 'foo'"):
        Database("foo://x")


def test_an_unreachable_server_is_a_one_line_error(tmp_path):
    for url, reason in [
        ("postgresql://bench:secret@127.0.0.1:1/results", "Connection refused"),
        (f"postgresql+psycopg://bench@/results?host={tmp_path}", "No such file or directory"),
    ]:
        with pytest.raises(StoreError) as error:
            Database(url)
        message = str(error.value)
        assert message.startswith("cannot connect to postgresql") and reason in message, message
        assert "\n" not in message and "secret" not in message


def test_a_write_is_retried_while_the_server_is_away(tmp_path):
    db = Database(f"sqlite:///{tmp_path}/s.db")
    attempts = []

    def write() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise database._Lost("postgresql://x: cannot write: server closed the connection")
        return "written"

    assert db.retrying(write) == "written" and len(attempts) == 3
    db.wait_s = -1  # past the deadline: the error stands

    def lost() -> str:
        raise database._Lost("postgresql://x: cannot write: server closed the connection")

    with pytest.raises(StoreError, match="server closed"):
        db.retrying(lost)


@pytest.mark.parametrize("value, seconds", [("", 60.0), ("15", 15.0), (" 0.5 ", 0.5), ("0", 0.0)])
def test_the_store_wait_is_a_minute_unless_set(monkeypatch, tmp_path, value, seconds):
    monkeypatch.setenv(database.STORE_WAIT_ENV, value)
    assert Database(f"sqlite:///{tmp_path}/s.db").wait_s == seconds


@pytest.mark.parametrize("value", ["soon", "-1", "inf", "nan"])
def test_a_bad_store_wait_is_a_one_line_error_on_opening(monkeypatch, tmp_path, value):
    monkeypatch.setenv(database.STORE_WAIT_ENV, value)
    with pytest.raises(StoreError) as error:
        Database(f"sqlite:///{tmp_path}/s.db")
    assert str(error.value) == f"PAGEBENCH_STORE_WAIT_S={value!r}: want a number of seconds >= 0"
    assert not (tmp_path / "s.db").exists()  # nothing opened


def _switch_and_write(path: str, barrier: Any, answers: Any) -> None:
    connection = sqlite3.connect(path, timeout=30)  # the store's busy timeout
    barrier.wait()
    try:
        database._sqlite_pragmas(connection, None)  # what every new store connection runs
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("CREATE TABLE IF NOT EXISTS shard (x)")
        connection.execute("COMMIT")
        answers.put("ok")
    except sqlite3.OperationalError as error:
        answers.put(str(error))


def test_shards_opening_a_new_sqlite_file_at_once_all_get_it(tmp_path):
    """Two connections turning a new file to WAL at once deadlock, and SQLite answers
    "database is locked" at once, past its busy timeout (1 trial in 8 here before the
    store retried the switch): a run's shards open one new store together."""
    context = multiprocessing.get_context("fork")
    for trial in range(60):
        barrier, answers = context.Barrier(3), context.Queue()
        shards = [context.Process(target=_switch_and_write, args=(str(tmp_path / f"t{trial}.sqlite"), barrier, answers))
                  for _ in range(3)]
        for shard in shards:
            shard.start()
        for shard in shards:
            shard.join(60)
        assert [answers.get(timeout=5) for _ in shards] == ["ok"] * 3, trial
