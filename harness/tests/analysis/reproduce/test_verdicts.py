"""`pagebench reproduce`'s answer: a row per claim and variant with its reason, the
seeds' figures, and which stored runs it reads (a store filled by hand, no lab)."""

from __future__ import annotations

import math

from pagebench.analysis.reproduce import scenarios
from pagebench.analysis.reproduce import verdicts as reproduce
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.scenarios import ERA, TODAY
from pagebench.analysis.stats import Interval
from pagebench.core.modes import HTTP10, PIPELINING
from pagebench.results.store import Store
from tests.analysis.reproduce.loads import data, load
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan


def test_rows_give_a_reason_where_a_variant_differs():
    site = f"seed000-small-n{scenarios.CLAIM_IMAGES}"
    loads = {(ERA, ""): [load(HTTP10, ms, site=site) for ms in (1000, 1001, 999)]
             + [load(PIPELINING, ms, site=site) for ms in (400, 401, 399)],
             (TODAY, ""): [load(HTTP10, ms, site=site) for ms in (1000, 1001, 999)]
             + [load(PIPELINING, ms, site=site) for ms in (700, 701, 699)]}
    rows = reproduce.evaluate([CLAIM_BY_KEY["000-6-small-cut"], CLAIM_BY_KEY["001-5-gzip-html"]],
                              {"000-latency": data(loads)})
    era, today, *unmeasured = rows
    assert (era.variant, era.verdict, era.reason) == (ERA, "reproduced", "")
    assert today.verdict == "differs" and today.reason.startswith("era 60 % [")
    assert "TLS" in today.reason
    assert [r.verdict for r in unmeasured] == ["no data"]  # 001-delta runs today only
    assert reproduce.show(Interval(0.524, 0.48, 0.551), "%") == "52 % [48, 55]"
    assert reproduce.show(Interval(4.018, 3.981, 4.05), "RTT") == "4.02 RTT [3.98, 4.05]"


def test_the_html_answer_draws_the_seeds_figure_shapes():
    loads = []
    for n in scenarios.IMAGE_COUNTS:
        for mode, per in ((HTTP10, 200), (PIPELINING, 80)):
            loads += [load(mode, per * n + d, site=f"seed000-small-n{n}") for d in (0, 5, 10)]
    found = {"000-latency": data({(ERA, ""): loads, (TODAY, ""): loads})}
    rows = reproduce.evaluate([CLAIM_BY_KEY["000-6-small-cut"]], found)
    page = reproduce.html(rows, found, "seeds 000", {"command": "pagebench reproduce 000"})
    assert page.startswith("<!DOCTYPE html>") and 'data-chart="fig-6-1"' in page
    assert "<script" not in page and "pagebench reproduce 000" in page
    assert not math.isnan(rows[0].measured.estimate)


def test_the_latest_complete_runs_of_each_scenario_are_read(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    plan = make_plan(reps=2, warmups=0)
    for run_id, variant, status in (("old", ERA, "complete"), ("new", ERA, "complete"), ("broken", TODAY, "failed")):
        meta = {**META, reproduce.META_KEY: {"scenario": "000-transfer", "variant": variant, "label": ""}}
        store.create_experiment(run_id, SPEC, meta, plan, PROFILES)
        for planned in plan:
            store.record_loads(run_id, planned, [fake_load(planned, flagged=planned.seq == 1)], started_at=1.0)
        store.set_status(run_id, status)
    runs = reproduce.latest_runs(store, ["000-transfer", "002-page"])
    assert runs == {("000-transfer", ERA, ""): "new"}  # the newest complete one; a failed run is not read
    found = reproduce.gather(store, runs)["000-transfer"]
    [loads] = found.loads.values()
    assert [load.seq for load in loads] == [0, 2, 3, 4, 5, 6, 7]  # ok and not flagged, in load order
    assert [r.position for r in found.resources_of(loads[0])] == list(range(6))  # this scenario reads resources
    assert found.profiles == PROFILES
    facts = reproduce.facts(store, runs, "pagebench reproduce 000", 1.5)
    assert (facts["runs"], facts["commit"], facts["link backend"], facts["wall time"]) == (
        "1 (new)", "875bf20", "userspace", "1.5 min")
