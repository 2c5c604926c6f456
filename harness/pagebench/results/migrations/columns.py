"""Revisions that only add columns, said once: the upgrade adds them in batch mode (so
SQLite can) and the downgrade drops them again, last added first.

Frozen with the revisions in `versions/` that use it: what it emits is their history, so
never change it; a new kind of step gets a helper of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

Step = Callable[[], None]


def added_columns(tables: Mapping[str, Sequence[sa.Column[Any]]]) -> tuple[Step, Step]:
    """A revision's (upgrade, downgrade) adding each table's columns, the tables in order.
    Alembic copies a column already used by an earlier run, so both may run again."""

    def upgrade() -> None:
        for table, columns in tables.items():
            with op.batch_alter_table(table) as batch:
                for column in columns:
                    batch.add_column(column)

    def downgrade() -> None:
        for table, columns in reversed(list(tables.items())):
            with op.batch_alter_table(table) as batch:
                for column in reversed(columns):
                    batch.drop_column(column.name)

    return upgrade, downgrade
