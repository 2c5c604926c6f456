"""conditions.encoding and conditions.version; resources.encoded_bytes, content_encoding,
dictionary_offered and dictionary_used: content encodings and versioned sites (seed 001)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25

A condition names the Content-Encoding its servers send (`identity`, gzip, br, zstd, or
dcz: a delta against the version the browser holds) and the site version it loads.
Each resource records its body as sent (Resource Timing encodedBodySize; null when the
browser did not say: from the cache, a failed request, or stored before this revision),
the Content-Encoding it arrived with, whether its request offered a dictionary
(Available-Dictionary) and whether the answer used one (dcz). Rows stored before this
revision read back as they were: identity, version 1, no encoding, no dictionary.
"""

import sqlalchemy as sa

from pagebench.results.migrations.columns import added_columns

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

upgrade, downgrade = added_columns({
    "conditions": [
        sa.Column("encoding", sa.Text, nullable=False, server_default="identity"),
        sa.Column("version", sa.Integer, nullable=False, server_default="1"),
    ],
    "resources": [
        sa.Column("encoded_bytes", sa.BigInteger),
        sa.Column("content_encoding", sa.Text, nullable=False, server_default=""),
        sa.Column("dictionary_offered", sa.Boolean, nullable=False, server_default=sa.false()),
        sa.Column("dictionary_used", sa.Boolean, nullable=False, server_default=sa.false()),
    ],
})
