"""loads.bound_ms: the analytic lower bound of each load's time (pagebench.bound)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Nullable: loads recorded before this revision have no bound.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({"loads": [sa.Column("bound_ms", sa.Float)]})
