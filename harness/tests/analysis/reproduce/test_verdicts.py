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
from tests.analysis.reproduce.loads import data, fetched
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan


def test_rows_give_a_reason_where_a_variant_differs():
    site = f"seed000-small-n{scenarios.CLAIM_IMAGES}"
    loads = {(ERA, ""): [fetched(HTTP10, ms, site=site) for ms in (1000, 1001, 999)]
             + [fetched(PIPELINING, ms, site=site) for ms in (400, 401, 399)],
             (TODAY, ""): [fetched(HTTP10, ms, site=site) for ms in (1000, 1001, 999)]
             + [fetched(PIPELINING, ms, site=site) for ms in (700, 701, 699)]}
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
            loads += [fetched(mode, per * n + d, site=f"seed000-small-n{n}") for d in (0, 5, 10)]
    found = {"000-latency": data({(ERA, ""): loads, (TODAY, ""): loads})}
    rows = reproduce.evaluate([CLAIM_BY_KEY["000-6-small-cut"]], found)
    page = reproduce.html(rows, found, "seeds 000", {"command": "pagebench reproduce 000"},
                          {("000", ERA): "cleartext, as run"})
    assert page.startswith("<!DOCTYPE html>") and 'data-chart="fig-6-1"' in page
    assert "<script" not in page and "pagebench reproduce 000" in page and "000 era: cleartext, as run" in page
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
    facts = reproduce.facts(store, runs, "pagebench reproduce 000")
    assert (facts["runs"], facts["commit"], facts["link backend"]) == ("1 (new)", "875bf20", "userspace")
    assert facts["page loads"].startswith(f"{len(plan)} stored") and facts["wall time"].startswith("0.0 min (")
    assert list(facts)[:2] == ["measured", "command"] and facts["measured"].endswith(" UTC")


def test_facts_span_the_runs_and_list_each_value_that_differs(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    plan = make_plan(reps=1, warmups=1)
    runs = {}
    for run_id, variant, commit in (("a", ERA, "5b7198a"), ("b", TODAY, "2f9fb3e"), ("c", "", "5b7198a")):
        meta = {**META, "git_commit": commit,
                reproduce.META_KEY: {"scenario": "000-transfer", "variant": variant or ERA, "label": run_id}}
        store.create_experiment(run_id, SPEC, meta, plan, PROFILES)
        for planned in plan:
            store.record_loads(run_id, planned, [fake_load(planned)], started_at=1.0)
        runs[("000-transfer", variant or ERA, run_id)] = run_id
    facts = reproduce.facts(store, runs, "pagebench reproduce 000")
    assert facts["commit"] == "5b7198a, 2f9fb3e" and facts["nginx"] == "1.22.1"
    assert facts["runs"] == "3 (a, b, c)" and facts["page loads"].startswith(f"{3 * len(plan)} stored")


def test_the_same_runs_gather_the_same_data_whatever_their_order(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    plan = make_plan(reps=1, warmups=0)
    runs = {}
    for variant, size in ((TODAY, 32), (TODAY, 2), (ERA, 16), (TODAY, 16)):
        run_id, label = f"{variant}-{size}", f"C={size}"
        fields = {name: p | {"sack": variant == TODAY} for name, p in PROFILES.items()}  # named alike, not equal
        meta = {**META, reproduce.META_KEY: {"scenario": "004-pool", "variant": variant, "label": label}}
        store.create_experiment(run_id, SPEC, meta, plan, fields)
        for planned in plan:
            store.record_loads(run_id, planned, [fake_load(planned)], started_at=1.0)
        runs[("004-pool", variant, label)] = run_id
    planned = reproduce.gather(store, runs)["004-pool"]
    latest_first = reproduce.gather(store, dict(reversed(runs.items())))["004-pool"]
    assert list(planned.loads) == list(latest_first.loads) == [(ERA, "C=16"), (TODAY, "C=2"), (TODAY, "C=16"),
                                                               (TODAY, "C=32")]
    assert planned.profiles == latest_first.profiles and planned.profiles["3g"]["sack"] is True


def test_cant_tell_says_what_more_of_would_narrow_it():
    """Load times narrow with more loads; the byte rows' exact counts only with more responses."""
    for key, more in (("000-6-small-cut", "more loads (a higher cap) would tell"),
                      ("001-6-delta", "more responses (a longer page history) would tell")):
        claim = CLAIM_BY_KEY[key]
        edge = claim.rule.low if claim.rule.low is not None else claim.rule.high
        straddling = Interval(edge, edge - 0.01, edge + 0.01)
        assert reproduce.verdict(claim, straddling) == "can't tell"
        reason = reproduce._reason(claim, TODAY, {TODAY: straddling}, {TODAY: "can't tell"})
        assert reason.endswith(more), reason
