"""Joining a sharded run (`runner.shards`): the run the shards share is named by the spec,
seed and shard count; a machine whose versions differ from the run's is refused with one
line before it measures, unless allowed (then the run says so)."""

from __future__ import annotations

import pytest

from pagebench.core.spec.model import SpecError
from pagebench.runner.environment import MACHINE_ENV
from pagebench.runner.prepare import prepare
from pagebench.runner.shards import check_versions, run_id_of

HEAD = {"chromium_version": "chromium-headless-shell 156.0.8078.79", "kernel": "6.1.0-41-amd64",
        "pagebench_version": "0.37.0", "backend": "userspace"}


def _prepared(seed: int = 1):
    return prepare({"sites": ["seed000-small-n1"], "modes": ["h2"], "repetitions": 4, "seed": seed}, "s")


def test_the_shards_of_one_experiment_name_one_run():
    assert run_id_of(_prepared(), 2) == run_id_of(_prepared(), 2)
    assert len({run_id_of(_prepared(), 2), run_id_of(_prepared(), 3), run_id_of(_prepared(seed=2), 2)}) == 3


def test_a_machine_with_another_chromium_is_refused_in_one_line(monkeypatch):
    monkeypatch.setenv(MACHINE_ENV, "lab-7")
    here = HEAD | {"chromium_version": "chromium 156.0.8078.79"}
    with pytest.raises(SpecError) as refused:
        check_versions("in run r", HEAD, here, allow_mixed=False)
    assert str(refused.value) == (
        "machine lab-7: chromium_version is 'chromium 156.0.8078.79' here, 'chromium-headless-shell 156.0.8078.79' "
        "in run r: refused (its loads would not be one sample with the others'; --allow-mixed measures anyway)")
    assert check_versions("in run r", HEAD, here, allow_mixed=True) == [
        "chromium_version is 'chromium 156.0.8078.79' here, 'chromium-headless-shell 156.0.8078.79' in run r"]
    assert check_versions("in run r", HEAD, HEAD | {"git_commit": "other"}, allow_mixed=False) == []  # not a version
