"""The store's rows: frozen values from a row's columns, and a core record's values as the
columns written; one way and back gives what was recorded (no database here)."""

from __future__ import annotations

import dataclasses

import pytest

from pagebench.core.encodings import DCZ
from pagebench.core.modes import H2
from pagebench.core.records import Condition, PlannedLoad
from pagebench.results import rows
from pagebench.results.rows import LoadRow, load_columns, resource_columns
from pagebench.results.schema import META_COLUMNS, loads, resources
from tests.helpers import META, SPEC, fake_load

CONDITION = Condition("demo", H2, "direct", "3g", "warm", "1.2", DCZ, 2, "moto-g-power")
JOINED = {"site": "demo", "mode": "h2", "topology": "direct", "profile": "3g", "cache": "warm", "tls": "1.2",
          "encoding": "dcz", "version": 2, "device": "moto-g-power"}


def test_a_load_read_back_is_the_load_recorded():
    result = dataclasses.replace(fake_load(PlannedLoad(4, CONDITION, 0, False), flagged=True),
                                 unrecorded=("https://demo.test/x.js",))
    columns = {"id": 7, "experiment_id": 1, "seq": 4, "client": 1, "condition_id": 3, "repetition": 0,
               "warmup": 0, "started_at": 1.5, "recorded_at": 2.5, "har": "r1/4-1.har.gz", "trace": None, "frames": None,
               "machine": "lab-2", **load_columns(result), **JOINED}
    assert set(columns) - set(JOINED) == {c.name for c in loads.c}  # every stored column, and no other
    row = rows.load_of(columns)
    assert isinstance(row, LoadRow) and row.condition == CONDITION
    assert (row.id, row.seq, row.client, row.warmup, row.unrecorded) == (7, 4, 1, False, 1)
    assert (row.har, row.trace, row.machine) == ("r1/4-1.har.gz", None, "lab-2")
    assert row.flags == result.flags and isinstance(row.flags, tuple) and row.flagged is True
    assert row.metric("load_ms") == 1800.0 and row.metric("connections_browser") == 2
    assert row.result(result.resources) == dataclasses.replace(result, unrecorded=None)  # the URLs: a count
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.load_ms = 1.0  # type: ignore[misc]


def test_a_resource_read_back_is_the_resource_recorded():
    for position, resource in enumerate(fake_load(PlannedLoad(0, CONDITION, 0, False)).resources):
        columns = {"id": 99, "load_id": 7, "position": position, **resource_columns(resource)}
        assert set(columns) == {c.name for c in resources.c}
        assert rows.resource_of(columns) == rows.ResourceRow(7, position, resource)


def test_a_run_states_its_environment_and_status():
    columns = {"id": 1, "run_id": "r1", "created_at": 10.0, "planned": 16, "recorded": 3, "stopped": 4,
               "spec": SPEC,
               "meta": META, **{key: META[key] for key in META_COLUMNS}}
    run = rows.run_of(columns, "interrupted", "SIGTERM")
    assert (run.run_id, run.status, run.reason, run.recorded, run.spec) == ("r1", "interrupted", "SIGTERM", 3, SPEC)
    assert (run.stopped, run.settled) == (4, 7)  # stopped early by `repetitions: auto`: done, not recorded
    assert list(run.environment()) == list(META_COLUMNS) and run.environment()["git_commit"] == "875bf20"


def test_link_checks_and_proxy_overheads_name_their_columns():
    check = rows.link_check_of({"id": 1, "experiment_id": 1, "profile": "3g", "checked_at": 5.0, "backend": "netem",
                                "valid": True, "rtt_median_ms": 300.4, "down_mbit": 1.57, "up_mbit": 0.75,
                                "loss_pct": 0.0, "lateness_p99_us": 420.0, "result": {"valid": True}})
    assert (check.profile, check.valid, check.rtt_median_ms, check.result) == ("3g", True, 300.4, {"valid": True})
    overhead = rows.proxy_overhead_of({"id": 1, "experiment_id": 1, "measured_at": 5.0, "site": "demo", "mode": "h2",
                                       "tls": "1.3", "requests": 6, "per_request_ms": 0.4, "direct_ms": [100.0, 101.0],
                                       "proxy_ms": [102.0, 104.0], "scheduling": None})
    assert overhead.direct_ms == (100.0, 101.0) and overhead.proxy_ms == (102.0, 104.0)
    assert (overhead.site, overhead.requests, overhead.per_request_ms) == ("demo", 6, 0.4)
