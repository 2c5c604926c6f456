"""loads.bound_ms: the analytic lower bound of each load's time (pagebench.bound)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Nullable: loads recorded before this revision have no bound.
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("bound_ms", sa.Float))


def downgrade() -> None:
    with op.batch_alter_table("loads") as batch:
        batch.drop_column("bound_ms")
