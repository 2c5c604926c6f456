"""The schema's history on PostgreSQL (the session's throwaway server): the tests of
`test_migrate.py` that run on a database of their own run here again, on one of this
server's (the `empty_database` fixture gives it, by this file's name)."""

from __future__ import annotations

from tests.helpers import needs_root
from tests.results.test_migrate import (  # collected again here: on PostgreSQL
    test_a_schema_newer_than_the_code_is_refused,
    test_migration_to_head_matches_the_table_definitions,
)

__all__ = ["test_a_schema_newer_than_the_code_is_refused", "test_migration_to_head_matches_the_table_definitions"]

pytestmark = needs_root
