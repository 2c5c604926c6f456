"""Databases for the store's tests, each test on one of its own: SQLite in a unit file
(`test_store.py`), the session's throwaway PostgreSQL server in its e2e file
(`test_store_e2e.py`, which runs the same tests there). The file decides, as it decides
the `integration` marker."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest

from pagebench.results.store import Store
from tests.helpers import drop_database, fresh_database, is_e2e

_database_numbers = itertools.count()


@pytest.fixture
def empty_database(request: pytest.FixtureRequest, tmp_path) -> Iterator[Callable[[str], str]]:
    """Makes empty databases: SQLite files in tmp_path for a unit test, databases on the
    session's PostgreSQL server for an e2e test (dropped when the test ends)."""
    if not is_e2e(request.node.path):
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


@pytest.fixture
def store(url):
    with Store(url) as opened:
        yield opened
