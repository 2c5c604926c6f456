"""Alembic environment of the pagebench results store.

Run programmatically: `pagebench.results.migrate.alembic_config(connection)` builds the
Config in code (no alembic.ini) and `Store(url)` upgrades to head on open. With no connection
given, `sqlalchemy.url` is used; offline mode (`upgrade(config, "head", sql=True)`)
prints the SQL for a DBA.
"""

from alembic import context
from sqlalchemy import create_engine

config = context.config


def _migrate(connection) -> None:
    # SQLite cannot ALTER most things: later revisions use batch mode there.
    context.configure(
        connection=connection,
        target_metadata=config.attributes.get("target_metadata"),  # for autogenerate only
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run() -> None:
    if context.is_offline_mode():
        context.configure(url=config.get_main_option("sqlalchemy.url"), literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        _migrate(connection)
        return
    engine = create_engine(config.get_main_option("sqlalchemy.url"))
    try:
        with engine.begin() as connection:
            _migrate(connection)
    finally:
        engine.dispose()


run()
