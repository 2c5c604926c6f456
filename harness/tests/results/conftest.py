"""Databases for the store's tests: each test on one of its own, SQLite and PostgreSQL
(the session's throwaway server) alike."""

from __future__ import annotations

import itertools

import pytest

from tests.helpers import drop_database, fresh_database

BACKENDS = ["sqlite", "postgresql"]

_database_numbers = itertools.count()


@pytest.fixture(params=BACKENDS)
def empty_database(request, tmp_path):
    """Makes empty databases of the back end the test runs on: SQLite files in tmp_path,
    or databases on the session's PostgreSQL server (dropped when the test ends)."""
    if request.param == "sqlite":
        yield lambda name: f"sqlite:///{tmp_path / name}.sqlite"
        return
    admin = request.getfixturevalue("postgres_url")
    made: list[str] = []

    def make(name: str) -> str:
        made.append(f"{name}_{next(_database_numbers)}")
        return fresh_database(admin, made[-1])

    yield make
    for name in made:
        drop_database(admin, name)


@pytest.fixture
def url(empty_database):
    return empty_database("pb")
