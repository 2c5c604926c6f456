"""A reproduction's stopping rule at a look: the scenario's claims, by their own
measures at the look's level, decide; "can't tell" or no value keeps loading."""

from pagebench.analysis.reproduce import stopping
from pagebench.analysis.reproduce import verdicts as reproduce
from pagebench.analysis.reproduce.claims import CLAIM_BY_KEY
from pagebench.analysis.reproduce.rules import Claim, Rule
from pagebench.analysis.reproduce.measures import Data, cut
from pagebench.analysis.reproduce.scenarios import ERA, SCENARIO_BY_NAME, every_claim_decisive
from pagebench.core.modes import H2, HTTP10
from pagebench.results.store import Store
from tests.analysis.reproduce.loads import data, load
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan

#: A claim of the shape the seeds' have: h2 cuts HTTP/1.0's load time by 40-60 %.
CUT = Claim("test-cut", "000", "§0", "a cut", "words", "half", "000-latency",
            lambda d, v: cut(d, v, {"mode": HTTP10}, {"mode": H2}), Rule(0.4, 0.6, "40-60 %"), "%")
SCENARIO = SCENARIO_BY_NAME["000-latency"]


def loads_of(new: list[float], base: list[float]) -> Data:
    return data({(ERA, ""): [load(HTTP10, ms) for ms in base] + [load(H2, ms) for ms in new]})


def test_the_rule_stops_when_every_claim_is_decisive_and_only_then():
    assert every_claim_decisive(["reproduced", "differs", "demonstrated"])
    assert not every_claim_decisive(["reproduced", "can't tell"])
    assert not every_claim_decisive(["reproduced", "no data"]) and not every_claim_decisive([])


def test_a_clear_cut_settles_at_a_look_one_at_the_edge_of_its_range_does_not():
    level = 1 - 0.05 / 2
    clear = loads_of([500, 505, 498], [1000, 1003, 997])  # a 50 % cut, inside 40-60 %
    assert stopping.settles(SCENARIO, [CUT], clear, ERA, level)
    wrong = loads_of([900, 905, 898], [1000, 1003, 997])  # 10 %: decisively differs
    assert stopping.settles(SCENARIO, [CUT], wrong, ERA, level)
    edge = loads_of([600, 560, 640], [1000, 1003, 997])  # about 40 %: the interval straddles its edge
    assert not stopping.settles(SCENARIO, [CUT], edge, ERA, level)
    assert not stopping.settles(SCENARIO, [CUT, CLAIM_BY_KEY["000-6-small-cut"]], clear, ERA, level)  # no value


def test_the_looks_level_widens_the_interval_the_verdict_is_read_at():
    close = loads_of([600, 590, 595, 585, 580], [1000, 1003, 997, 1001, 999])  # about 41 %
    assert stopping.settles(SCENARIO, [CUT], close, ERA, 0.5)
    assert not stopping.settles(SCENARIO, [CUT], close, ERA, 0.999)
    [narrow] = [r for r in reproduce.evaluate([CUT], {"000-latency": close}, {"000-latency": 0.5}) if r.variant == ERA]
    [wide] = [r for r in reproduce.evaluate([CUT], {"000-latency": close}, {"000-latency": 0.999})
              if r.variant == ERA]
    assert wide.measured.low < narrow.measured.low and (narrow.verdict, wide.verdict) == ("reproduced", "can't tell")


def test_a_stored_scenario_without_its_claims_loads_keeps_loading(tmp_path):
    store = Store(f"sqlite:///{tmp_path / 'x.sqlite'}")
    plan = make_plan(reps=2, warmups=0)
    meta = {**META, reproduce.META_KEY: {"scenario": "004-window", "variant": ERA, "label": "",
                                         "reproduction": "reproduction-1", "seeds": ["004"], "quick": False}}
    store.create_experiment("w", SPEC, meta, plan, PROFILES)
    for planned in plan:
        store.record_loads("w", planned, [fake_load(planned)], started_at=1.0)
    assert not stopping.settled(store, {("004-window", ERA, ""): "w"}, "004-window", ERA, 0.975)
    found = reproduce.stored_reproduction(store)
    assert (found.reproduction, found.seeds, found.quick, found.runs) == (
        "reproduction-1", ["004"], False, {("004-window", ERA, ""): "w"})
    store.close()
