"""conditions.device: what the browser emulated (issue 27, devices)

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-28

A condition names the device its loads ran as, from the device table (`core.devices`,
`link/devices.yaml`): viewport, device scale factor, mobile, touch, user agent and a CPU
slowdown calibrated against a reference desktop (the preset's fields and each run's
calibration are in `experiments.meta` `devices`). Conditions stored before this revision
read as `desktop`: the browser as pagebench always ran it.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({
    "conditions": [sa.Column("device", sa.Text, nullable=False, server_default="desktop")],
})
