"""initial schema: experiments, run status, conditions, plan, loads, resources, link checks

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Portable SQLAlchemy Core types only (SQLite and PostgreSQL). Times are float epoch
seconds (UTC). Frozen history: never edit after release; add a revision instead.
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def _experiment_fk(table: str) -> sa.ForeignKey:
    return sa.ForeignKey("experiments.id", name=f"fk_{table}_experiment", ondelete="CASCADE")


def upgrade() -> None:
    op.create_table(
        "experiments",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_id", sa.Text, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("planned", sa.Integer, nullable=False),
        sa.Column("seed", sa.BigInteger),
        sa.Column("backend", sa.Text),
        sa.Column("git_commit", sa.Text),
        sa.Column("host", sa.Text),
        sa.Column("kernel", sa.Text),
        sa.Column("chromium_version", sa.Text),
        sa.Column("nginx_version", sa.Text),
        sa.Column("pagebench_version", sa.Text),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("meta", sa.JSON, nullable=False),
        sa.UniqueConstraint("run_id", name="uq_experiments_run_id"),
    )
    op.create_table(
        "run_status",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, _experiment_fk("run_status"), nullable=False),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("status", sa.Text, nullable=False),
        sa.CheckConstraint("status IN ('running', 'complete', 'interrupted')", name="ck_run_status_status"),
    )
    op.create_index("ix_run_status_experiment_id", "run_status", ["experiment_id"])
    op.create_table(
        "conditions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, _experiment_fk("conditions"), nullable=False),
        sa.Column("key", sa.Text, nullable=False),
        sa.Column("site", sa.Text, nullable=False),
        sa.Column("mode", sa.Text, nullable=False),
        sa.Column("topology", sa.Text, nullable=False),
        sa.Column("profile", sa.Text, nullable=False),
        sa.Column("profile_fields", sa.JSON, nullable=False),
        sa.Column("cache", sa.Text, nullable=False),
        sa.Column("tls", sa.Text, nullable=False),
        sa.UniqueConstraint("experiment_id", "key", name="uq_conditions_experiment_key"),
    )
    op.create_table(
        "planned_loads",
        sa.Column("experiment_id", sa.Integer, _experiment_fk("planned_loads"), primary_key=True),
        sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("condition_id", sa.Integer,
                  sa.ForeignKey("conditions.id", name="fk_planned_loads_condition", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("repetition", sa.Integer, nullable=False),
        sa.Column("warmup", sa.Boolean, nullable=False),
    )
    op.create_table(
        "loads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, _experiment_fk("loads"), nullable=False),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("condition_id", sa.Integer,
                  sa.ForeignKey("conditions.id", name="fk_loads_condition", ondelete="CASCADE"), nullable=False),
        sa.Column("repetition", sa.Integer, nullable=False),
        sa.Column("warmup", sa.Boolean, nullable=False),
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("recorded_at", sa.Float, nullable=False),
        sa.Column("ok", sa.Boolean, nullable=False),
        sa.Column("flagged", sa.Boolean, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("ttfb_ms", sa.Float),
        sa.Column("dcl_ms", sa.Float),
        sa.Column("load_ms", sa.Float),
        sa.Column("fcp_ms", sa.Float),
        sa.Column("lcp_ms", sa.Float),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("bytes", sa.BigInteger, nullable=False),
        sa.Column("cache_hits", sa.Integer, nullable=False),
        sa.Column("connections_browser", sa.Integer, nullable=False),
        sa.Column("connections_link", sa.Integer, nullable=False),
        sa.Column("connections_server", sa.Integer, nullable=False),
        sa.Column("flags", sa.JSON, nullable=False),
        sa.Column("errors", sa.JSON, nullable=False),
        sa.Column("notes", sa.JSON, nullable=False),
        sa.Column("link", sa.JSON, nullable=False),
        sa.UniqueConstraint("experiment_id", "seq", name="uq_loads_experiment_seq"),
        sa.ForeignKeyConstraint(["experiment_id", "seq"], ["planned_loads.experiment_id", "planned_loads.seq"],
                                name="fk_loads_planned", ondelete="CASCADE"),
    )
    op.create_index("ix_loads_condition_id", "loads", ["condition_id"])
    op.create_table(
        "resources",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("load_id", sa.Integer,
                  sa.ForeignKey("loads.id", name="fk_resources_load", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("origin", sa.Text, nullable=False),
        sa.Column("protocol", sa.Text, nullable=False),
        sa.Column("connection_id", sa.BigInteger),
        sa.Column("from_cache", sa.Boolean, nullable=False),
        sa.Column("revalidated", sa.Boolean, nullable=False),
        sa.Column("status", sa.Integer, nullable=False),
        sa.Column("resource_type", sa.Text, nullable=False),
        sa.Column("start_ms", sa.Float, nullable=False),
        sa.Column("response_start_ms", sa.Float),
        sa.Column("end_ms", sa.Float),
        sa.Column("transfer_bytes", sa.BigInteger, nullable=False),
        sa.Column("body_bytes", sa.BigInteger, nullable=False),
        sa.Column("timing", sa.JSON, nullable=False),
        sa.UniqueConstraint("load_id", "position", name="uq_resources_load_position"),
    )
    op.create_table(
        "link_checks",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer, _experiment_fk("link_checks"), nullable=False),
        sa.Column("profile", sa.Text, nullable=False),
        sa.Column("checked_at", sa.Float, nullable=False),
        sa.Column("backend", sa.Text),
        sa.Column("valid", sa.Boolean, nullable=False),
        sa.Column("rtt_median_ms", sa.Float),
        sa.Column("down_mbit", sa.Float),
        sa.Column("up_mbit", sa.Float),
        sa.Column("loss_pct", sa.Float),
        sa.Column("lateness_p99_us", sa.Float),
        sa.Column("result", sa.JSON, nullable=False),
    )
    op.create_index("ix_link_checks_experiment_id", "link_checks", ["experiment_id"])


def downgrade() -> None:
    for table in ("link_checks", "resources", "loads", "planned_loads", "conditions", "run_status", "experiments"):
        op.drop_table(table)
