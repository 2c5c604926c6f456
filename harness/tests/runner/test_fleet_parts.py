"""A fleet's parts, without a cluster: a reproduction's scenario variants (each one
machine's, its runs in order) and a GCS address refused before Ray is asked."""

from __future__ import annotations

import socket

import pytest

from pagebench.analysis.reproduce import claims as catalogue
from pagebench.core.spec.model import SpecError
from pagebench.runner import reproduce as reproducing
from pagebench.runner.fleet import FleetError, _reachable
from pagebench.runner.prepare import prepare


def _planned(seeds: list[str]) -> reproducing.Reproduction:
    return [((scenario.name, variant, label), prepare(document, "s")) for scenario in catalogue.scenarios_of(seeds)
            for variant in scenario.variants for label, document in scenario.runs(variant, True)]


def test_a_reproductions_parts_are_its_scenario_variants_each_with_its_runs_in_order():
    planned = _planned(["000", "004"])
    parts = reproducing.variants(planned)
    assert [key for part in parts.values() for key, _ in part] == [key for key, _ in planned]  # a partition, in order
    assert [key[2] for key, _ in parts["004-load/era"]] == ["N=1 C=50", "N=8 C=50", "N=8 C=8", "N=8 C=20"]
    assert all({f"{key[0]}/{key[1]}" for key, _ in part} == {name} for name, part in parts.items())
    assert reproducing.part(planned, "000-local/today") == parts["000-local/today"]


def test_an_unknown_scenario_variant_is_refused_naming_those_there_are():
    with pytest.raises(SpecError, match=r"--scenario 002-page/later: not a scenario variant .* 002-page/era, "):
        reproducing.part(_planned(["002"]), "002-page/later")


def test_a_gcs_address_nothing_listens_at_is_refused_at_once():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, not listening: refused
        with pytest.raises(FleetError, match=rf"--ray 127.0.0.1:{port}: cannot join the cluster: Connection refused"):
            _reachable(f"127.0.0.1:{port}")
    with pytest.raises(FleetError, match="not a GCS address"):
        _reachable("head-without-port")
    _reachable("ray://anywhere:10001")  # Ray client addresses: Ray's own to try
