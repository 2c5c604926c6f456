"""loads.machine: the lab machine that measured the load (issue 28, shards)

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27

A run split in shards (`run --shard K/N`, `run --ray`) is measured by several machines
into one store; each load names its own (the host name, or $PAGEBENCH_MACHINE), so that
the report can take the machine as a stratum. Loads stored before this revision, and a
one-machine run's, read as measured by the run's `experiments.host`.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({
    "loads": [sa.Column("machine", sa.Text)],
})
