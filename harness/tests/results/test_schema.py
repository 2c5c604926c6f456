"""The tables: what the store's code names in them is there (their equality with the
migrations' head is test_migrate's)."""

from __future__ import annotations

import sqlalchemy as sa

from pagebench.results.schema import META_COLUMNS, STATUSES, experiments, run_status


def test_meta_columns_and_statuses_are_the_tables():
    assert set(META_COLUMNS) <= {c.name for c in experiments.c}
    [check] = [c for c in run_status.constraints if isinstance(c, sa.CheckConstraint)]
    assert str(check.sqltext) == "status IN (" + ", ".join(f"'{status}'" for status in STATUSES) + ")"
