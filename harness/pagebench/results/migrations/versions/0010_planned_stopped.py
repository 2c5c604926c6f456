"""planned_loads.stopped: planned loads a sequential stopping rule left out (issue 26)

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26

A run with `repetitions: auto` plans its cap and loads in rounds until its verdicts are
decisive (`core/spec/sequential.py`); the planned loads it did not need are kept in the
plan and marked stopped early here, so `planned` keeps meaning the plan and a resume
knows they are not owed. False for every load planned before this revision.
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN, not batch mode: on SQLite a batch copy of planned_loads drops the
    # table, and with foreign keys on, that cascades to every recorded load.
    op.add_column("planned_loads", sa.Column("stopped", sa.Boolean, nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("planned_loads") as batch:
        batch.drop_column("stopped")
