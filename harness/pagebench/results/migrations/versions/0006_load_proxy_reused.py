"""loads.connections_proxy_reused: upstream connections a warm edge-proxy pool carried over

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24

With `proxy: {pool: warm}` the edge proxy keeps a condition's upstream connections open
across its loads: a load may open none (`connections_proxy` 0, no SYN at the router) and
still use some, which nginx logs. This column counts those, per load; null outside the
edge-proxy topology and in loads stored before this revision (every one of them cold).
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({"loads": [sa.Column("connections_proxy_reused", sa.Integer)]})
