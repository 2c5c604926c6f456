"""proxy_overheads.scheduling: how the edge proxy was scheduled when its cost was measured

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

"SCHED_FIFO 20", or "normal (...)" where real-time priority was refused: the cost per
request differs by about half between the two (docs/benchmarks.md). Nullable: costs
measured before this revision do not say.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({"proxy_overheads": [sa.Column("scheduling", sa.Text)]})
