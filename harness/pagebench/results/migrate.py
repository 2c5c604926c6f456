"""The schema's history, run on open: Alembic revisions bundled with the package
(`pagebench/results/migrations/`, package data, so an installed wheel carries them),
configured in code (no alembic.ini). `migrations/README.md` says how to add a revision.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from pagebench.results.database import StoreError, first_line
from pagebench.results.schema import metadata

#: Alembic needs a directory: the package is installed as files (a wheel or editable), not zipped.
MIGRATIONS = Path(str(resources.files("pagebench.results") / "migrations"))
_PG_MIGRATION_LOCK = 0x70616765  # advisory lock id: concurrent shards migrate one at a time


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Config:
    """An Alembic Config on the bundled migrations: run on `connection`, or (offline, the
    SQL for a DBA, or drafting a revision) on `url`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS).replace("%", "%%"))
    if url is not None:
        config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.attributes["connection"] = connection
    config.attributes["target_metadata"] = metadata
    return config


def upgrade(engine: Engine, shown: str) -> None:
    """Bring the database to the newest revision, one writer at a time; refuse one whose
    revision this pagebench does not know (written by a newer one)."""
    try:
        with engine.connect() as conn, conn.execution_options(pagebench_write=True).begin():
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:id)"), {"id": _PG_MIGRATION_LOCK})
            config = alembic_config(conn)
            script = ScriptDirectory.from_config(config)
            for revision in MigrationContext.configure(conn).get_current_heads():
                try:
                    script.get_revision(revision)
                except CommandError:
                    raise StoreError(
                        f"{shown}: schema revision {revision!r} is newer than this pagebench "
                        f"(knows up to {script.get_current_head()!r}): upgrade pagebench"
                    ) from None
            command.upgrade(config, "head")
    except SQLAlchemyError as error:
        raise StoreError(f"{shown}: cannot open the results store: {first_line(error)}") from None
