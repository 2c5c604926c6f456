"""The schema's history: bundled with the package, equal at its head to the tables, run on
open, and refusing a database written by a newer pagebench; on SQLite here, on PostgreSQL
in `test_migrate_e2e.py`."""

from __future__ import annotations

from importlib import resources

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from pagebench.results.database import StoreError
from pagebench.results.migrate import MIGRATIONS, alembic_config
from pagebench.results.schema import metadata
from pagebench.results.store import Store
from tests.helpers import HARNESS


def _schema(engine: sa.Engine) -> dict:
    inspector = sa.inspect(engine)
    tables = {}
    for name in sorted(set(inspector.get_table_names()) - {"alembic_version"}):
        tables[name] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(name)],
            "pk": inspector.get_pk_constraint(name)["constrained_columns"],
            "fks": sorted((fk["name"], tuple(fk["constrained_columns"]), fk["referred_table"],
                           tuple(fk["referred_columns"]), fk["options"].get("ondelete"))
                          for fk in inspector.get_foreign_keys(name)),
            "unique": sorted((u["name"], tuple(u["column_names"])) for u in inspector.get_unique_constraints(name)),
            "indexes": sorted((i["name"], tuple(i["column_names"]), bool(i["unique"]))
                              for i in inspector.get_indexes(name)),
            "checks": sorted((c["name"], c["sqltext"]) for c in inspector.get_check_constraints(name)),
        }
    return tables


def test_the_migrations_are_package_data_found_by_importlib_resources():
    assert MIGRATIONS == HARNESS / "pagebench" / "results" / "migrations"
    assert (resources.files("pagebench.results") / "migrations" / "env.py").is_file()
    assert (MIGRATIONS / "script.py.mako").is_file() and (MIGRATIONS / "versions" / "0001_initial.py").is_file()
    pyproject = (HARNESS / "pyproject.toml").read_text()  # a wheel carries them
    assert '"pagebench.results" = ["migrations/README.md", "migrations/*.py", "migrations/script.py.mako",' in pyproject
    assert not (HARNESS.parent / "results" / "migrations").exists()


def test_migration_to_head_matches_the_table_definitions(empty_database):
    migrated = sa.create_engine(empty_database("migrated"))
    created = sa.create_engine(empty_database("created"))
    try:
        with migrated.begin() as conn:
            command.upgrade(alembic_config(conn), "head")
        metadata.create_all(created)
        assert set(_schema(migrated)) == {"experiments", "run_status", "conditions", "planned_loads", "loads",
                                          "resources", "link_checks", "proxy_overheads", "visual_progress"}
        assert _schema(migrated) == _schema(created)
        with migrated.connect() as conn:
            assert compare_metadata(MigrationContext.configure(conn), metadata) == []
            assert MigrationContext.configure(conn).get_current_revision() == "0013"
    finally:
        migrated.dispose()
        created.dispose()


def test_migration_renders_for_postgresql(capsys):
    command.upgrade(alembic_config(url="postgresql+psycopg://u@localhost/db"), "head", sql=True)
    sql = capsys.readouterr().out
    assert "CREATE TABLE loads" in sql and "JSON NOT NULL" in sql and "SERIAL" in sql
    assert "ADD CONSTRAINT uq_loads_experiment_seq_client UNIQUE (experiment_id, seq, client)" in sql


def test_a_schema_newer_than_the_code_is_refused(url):
    Store(url).close()
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0099'")
    engine.dispose()
    with pytest.raises(StoreError) as error:
        Store(url)
    message = str(error.value)
    assert "'0099' is newer than this pagebench" in message and "\n" not in message
