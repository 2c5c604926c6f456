"""A store's artifact directory: where it is for each kind of store, the evidence a load
keeps written there before its row names it, and the errors when it cannot be."""

from __future__ import annotations

import gzip
import json

import pytest

from pagebench.results.artifacts import ARTIFACTS_ENV, Artifacts, Evidence, directory_of
from pagebench.results.database import StoreError
from pagebench.results.store import Store
from pagebench.system.places import DATA_DIR_ENV
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan


def test_each_kind_of_store_has_its_place(tmp_path, monkeypatch):
    assert directory_of(f"sqlite:///{tmp_path}/runs/ci.sqlite") == tmp_path / "runs" / "ci.artifacts"
    assert directory_of("sqlite:///relative/pagebench.db").as_posix() == "relative/pagebench.artifacts"
    assert directory_of("sqlite://") is None and directory_of("sqlite:///:memory:") is None
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "data"))
    monkeypatch.delenv(ARTIFACTS_ENV, raising=False)
    assert directory_of("postgresql://u:secret@db.lab:5433/bench") == tmp_path / "data" / "artifacts" / "db.lab-5433-bench"
    monkeypatch.setenv(ARTIFACTS_ENV, str(tmp_path / "given"))
    assert directory_of("postgresql://u@db.lab/bench") == tmp_path / "given"
    assert directory_of(f"sqlite:///{tmp_path}/a.sqlite") == tmp_path / "a.artifacts"  # SQLite: always beside


def test_a_load_keeps_its_evidence_and_its_row_names_it(tmp_path):
    plan = make_plan(profiles=("3g",), reps=1, warmups=0)
    with Store(f"sqlite:///{tmp_path}/x.sqlite") as store:
        store.create_experiment("r1", SPEC, META, plan, PROFILES)
        har = {"log": {"version": "1.2", "entries": [{"x": "é"}]}}
        store.record_loads("r1", plan[0], [fake_load(plan[0]), fake_load(plan[0])], 1.0,
                           [Evidence(har=har, trace={"traceEvents": [1]}), Evidence(har=har)])
        store.record_loads("r1", plan[1], [fake_load(plan[1])], 2.0)  # none given
        loads = store.loads("r1")
        assert [(load.seq, load.client, load.har, load.trace) for load in loads] == [
            (0, 0, "r1/0-0.har.gz", "r1/0-0.trace.json.gz"), (0, 1, "r1/0-1.har.gz", None), (1, 0, None, None)]
        assert store.artifacts.read(loads[0].har) == har and store.artifacts.read(loads[2].har) is None
    kept = tmp_path / "x.artifacts" / "r1"
    assert sorted(p.name for p in kept.iterdir()) == ["0-0.har.gz", "0-0.trace.json.gz", "0-1.har.gz"]
    assert json.loads(gzip.decompress((kept / "0-0.trace.json.gz").read_bytes())) == {"traceEvents": [1]}


def test_a_directory_that_cannot_be_made_or_a_damaged_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(StoreError, match=r"cannot keep the loads' evidence in .*file/r1: Not a directory"):
        Artifacts(tmp_path / "file").prepare("r1")
    with pytest.raises(StoreError, match="cannot write"):
        Artifacts(tmp_path / "file").write("r1/0-0.har.gz", {})
    artifacts = Artifacts(tmp_path / "a")
    artifacts.prepare("r1")
    (tmp_path / "a" / "r1" / "0-0.har.gz").write_bytes(b"not gzip")
    with pytest.raises(StoreError, match=r"0-0.har.gz: not a readable gzip-compressed JSON file"):
        artifacts.read("r1/0-0.har.gz")
    with pytest.raises(StoreError, match="cannot name a directory"):
        artifacts.keep("../up", 0, 0, Evidence(har={}))
