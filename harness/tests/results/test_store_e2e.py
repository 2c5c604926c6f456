"""The results store on PostgreSQL (the session's throwaway server): every test of
`test_store.py` that runs on a database of its own runs here again, on one of this
server's (the `empty_database` fixture gives it, by this file's name), and what only a
PostgreSQL server has: a URL without a driver, a cluster that is not UTF-8."""

from __future__ import annotations

from pagebench.results.store import Store
from tests.helpers import META, PROFILES, SPEC, admin, drop_database, fresh_database, make_plan, needs_root
from tests.results.test_store import (  # collected again here: on PostgreSQL
    test_create_experiment_stores_meta_conditions_and_plan,
    test_plan_must_be_consistent,
    test_an_existing_run_is_refused_unless_exist_ok_with_the_same_plan,
    test_record_load_round_trip,
    test_encodings_and_versions_round_trip,
    test_rows_stored_before_encodings_read_back_with_the_defaults,
    test_unrecorded_requests_round_trip,
    test_loads_stored_before_unrecorded_counts_read_back_null,
    test_devices_round_trip,
    test_conditions_stored_before_devices_read_back_as_desktop,
    test_a_seq_is_recorded_once,
    test_a_load_must_match_the_stored_plan,
    test_a_recorded_load_is_visible_to_another_store_at_once,
    test_unknown_run_names_the_latest_runs,
    test_status_runs_and_link_checks,
    test_concurrent_shards_record_each_planned_load_once,
    test_loads_a_stopping_rule_left_out_are_marked_stopped_early_not_recorded,
    test_a_store_before_stopped_marks_keeps_every_load_and_stops_none,
)

__all__ = [
    "test_create_experiment_stores_meta_conditions_and_plan",
    "test_plan_must_be_consistent",
    "test_an_existing_run_is_refused_unless_exist_ok_with_the_same_plan",
    "test_record_load_round_trip",
    "test_encodings_and_versions_round_trip",
    "test_rows_stored_before_encodings_read_back_with_the_defaults",
    "test_unrecorded_requests_round_trip",
    "test_loads_stored_before_unrecorded_counts_read_back_null",
    "test_devices_round_trip",
    "test_conditions_stored_before_devices_read_back_as_desktop",
    "test_a_seq_is_recorded_once",
    "test_a_load_must_match_the_stored_plan",
    "test_a_recorded_load_is_visible_to_another_store_at_once",
    "test_unknown_run_names_the_latest_runs",
    "test_status_runs_and_link_checks",
    "test_loads_a_stopping_rule_left_out_are_marked_stopped_early_not_recorded",
    "test_a_store_before_stopped_marks_keeps_every_load_and_stops_none",
    "test_concurrent_shards_record_each_planned_load_once",
]

pytestmark = needs_root


def test_a_postgresql_url_without_a_driver_uses_psycopg(postgres_url):
    url = fresh_database(postgres_url, "plain_url")
    plain = url.replace("postgresql+psycopg://", "postgresql://")
    try:
        with Store(plain) as store:
            assert store.engine.dialect.driver == "psycopg" and store.url == plain
            store.create_experiment("r1", SPEC, META, make_plan(), PROFILES)
        with Store(url) as store:
            assert [run.run_id for run in store.runs()] == ["r1"]
    finally:
        drop_database(postgres_url, "plain_url")


def test_a_server_whose_encoding_is_not_utf8_works(postgres_url):
    """A cluster initialised with SQL_ASCII (what `initdb` gives under a C locale) hands
    text over as bytes unless the client says which encoding it speaks."""
    admin(postgres_url, 'DROP DATABASE IF EXISTS "ascii_store" WITH (FORCE)',
           "CREATE DATABASE ascii_store ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
    url = postgres_url.replace("@/postgres?", "@/ascii_store?")
    try:
        with Store(url) as store:
            store.create_experiment("r1", SPEC | {"notes": "é, 日本"}, META, make_plan(), PROFILES)
            assert store.experiment("r1").spec["notes"] == "é, 日本"
            assert [run.run_id for run in store.runs()] == ["r1"]
    finally:
        drop_database(postgres_url, "ascii_store")
