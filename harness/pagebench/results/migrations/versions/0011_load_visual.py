"""loads: what a person sees (issue 27): visual metrics, layout shift, blocking, frames

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

Each measured load's frames (screenshots from navigation start on) give its first and last
visual change, SpeedIndex and the times it reached 85/95/99 % visual completeness; its page
gives CLS, total blocking time with its long tasks, and INP when the spec scripts an
interaction (`core.measure.visual`). `frames` names the frames' file in the store's
artifact directory, like `har` and `trace`. Null for every load stored before this revision.
`visual_progress` keeps each load's visual progress curve (a row per distinct frame), what
the report's filmstrip and the dashboards draw without reading the frames.
"""

import sqlalchemy as sa
from alembic import op

from pagebench.results.migrations.columns import added_columns

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

add_columns, drop_columns = added_columns({"loads": [
    *[sa.Column(name, sa.Float) for name in ("first_visual_change_ms", "speed_index_ms", "visual_complete_85_ms",
                                             "visual_complete_95_ms", "visual_complete_99_ms",
                                             "last_visual_change_ms", "cls", "tbt_ms")],
    sa.Column("long_tasks", sa.Integer), sa.Column("inp_ms", sa.Float), sa.Column("frames", sa.Text)]})


def upgrade() -> None:
    add_columns()
    op.create_table(
        "visual_progress",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("load_id", sa.Integer,
                  sa.ForeignKey("loads.id", name="fk_visual_progress_load", ondelete="CASCADE"), nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("ms", sa.Float, nullable=False),
        sa.Column("progress", sa.Float, nullable=False),
        sa.UniqueConstraint("load_id", "position", name="uq_visual_progress_load_position"),
    )


def downgrade() -> None:
    op.drop_table("visual_progress")
    drop_columns()
