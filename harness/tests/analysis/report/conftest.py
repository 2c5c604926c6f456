"""A store of the reports' tests' own (SQLite in tmp_path)."""

from __future__ import annotations

import pytest

from pagebench.results.store import Store


@pytest.fixture
def store(tmp_path):
    with Store(f"sqlite:///{tmp_path / 'x.sqlite'}") as opened:
        yield opened
