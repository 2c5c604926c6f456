"""loads.har, loads.trace: the load's evidence kept beside the store (issue 24)

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

Each measured load's HAR (and, with `run --trace`, its Chrome trace) is written gzip-
compressed into the store's artifact directory (`results.artifacts`); these columns name
the files, relative to that directory (`<run id>/<seq>-<client>.har.gz`). Null: none was
kept (stored before this revision, `run --no-har`, or no trace asked for).
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({"loads": [sa.Column("har", sa.Text), sa.Column("trace", sa.Text)]})
