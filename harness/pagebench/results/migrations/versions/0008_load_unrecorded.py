"""loads.unrecorded: requests a replayed site's recording did not have (issue 15)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

An imported or recorded site is replayed: its servers answer each request from the
recording, and one the recording lacks with a 404 carrying `X-Pagebench-Replay:
unrecorded`. Such a load still measures the page (the 404 is not an error) but is
flagged, its flag naming the URLs; this column counts them. Null for a site that is not
replayed and for loads stored before this revision.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({"loads": [sa.Column("unrecorded", sa.Integer)]})
