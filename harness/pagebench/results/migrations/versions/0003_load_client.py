"""loads.client and loads.connections_proxy: several clients per planned load
(aggregation) and the edge proxy's own count of upstream connections; proxy_overheads:
the edge proxy's cost per request, measured with each run that uses it

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

A planned load now records one row per client that loaded the page at that moment
(client 0 alone unless the spec asks for more), so (experiment, seq) is unique per
client. `connections_proxy` is null outside the edge-proxy topology.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "proxy_overheads",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("experiment_id", sa.Integer,
                  sa.ForeignKey("experiments.id", name="fk_proxy_overheads_experiment", ondelete="CASCADE"),
                  nullable=False),
        sa.Column("measured_at", sa.Float, nullable=False),
        sa.Column("site", sa.Text, nullable=False),
        sa.Column("mode", sa.Text, nullable=False),
        sa.Column("tls", sa.Text, nullable=False),
        sa.Column("requests", sa.Integer, nullable=False),
        sa.Column("per_request_ms", sa.Float),
        sa.Column("direct_ms", sa.JSON, nullable=False),
        sa.Column("proxy_ms", sa.JSON, nullable=False),
    )
    with op.batch_alter_table("loads") as batch:
        batch.add_column(sa.Column("client", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("connections_proxy", sa.Integer))
        batch.drop_constraint("uq_loads_experiment_seq", type_="unique")
        batch.create_unique_constraint("uq_loads_experiment_seq_client", ["experiment_id", "seq", "client"])


def downgrade() -> None:
    op.drop_table("proxy_overheads")
    op.execute("DELETE FROM loads WHERE client > 0")  # one row per seq again: client 0's
    with op.batch_alter_table("loads") as batch:
        batch.drop_constraint("uq_loads_experiment_seq_client", type_="unique")
        batch.create_unique_constraint("uq_loads_experiment_seq", ["experiment_id", "seq"])
        batch.drop_column("connections_proxy")
        batch.drop_column("client")
