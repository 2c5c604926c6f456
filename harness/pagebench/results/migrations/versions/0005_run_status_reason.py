"""run_status: 'failed' beside 'interrupted', with the reason, and who ran the run

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23

A run ends complete, interrupted (by a signal: the reason names it) or failed (the
reason is the one-line error). A 'running' row records the process that runs it (host,
pid and the kernel's start time of that pid), so a reader can tell a run still going
from one whose process was killed (`Store.experiment` reports that one as interrupted).
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

OLD = "status IN ('running', 'complete', 'interrupted')"
NEW = "status IN ('running', 'complete', 'interrupted', 'failed')"


def upgrade() -> None:
    with op.batch_alter_table("run_status") as batch:
        batch.drop_constraint("ck_run_status_status", type_="check")
        batch.create_check_constraint("ck_run_status_status", NEW)
        batch.add_column(sa.Column("reason", sa.Text))
        batch.add_column(sa.Column("host", sa.Text))
        batch.add_column(sa.Column("pid", sa.Integer))
        batch.add_column(sa.Column("pid_start", sa.Text))


def downgrade() -> None:
    op.execute("UPDATE run_status SET status = 'interrupted' WHERE status = 'failed'")
    with op.batch_alter_table("run_status") as batch:
        batch.drop_column("pid_start")
        batch.drop_column("pid")
        batch.drop_column("host")
        batch.drop_column("reason")
        batch.drop_constraint("ck_run_status_status", type_="check")
        batch.create_check_constraint("ck_run_status_status", OLD)
