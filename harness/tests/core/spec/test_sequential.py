"""`repetitions: auto`: its settings, one-line errors, schedule of looks and per-look
level (Bonferroni), and its plan in rounds of one load per condition."""

import pytest

from pagebench.core.profiles import Profile
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import SpecError, parse
from pagebench.core.spec.sequential import DEFAULT_CAP, Sequential

BASE = {"sites": ["a", "b"], "modes": ["http1.0", "h2"], "cache": ["cold", "warm"], "seed": 7}


def test_auto_alone_and_with_settings():
    spec = parse({**BASE, "repetitions": "auto"}, "s.yaml")
    assert spec.sequential == Sequential() and spec.cap == DEFAULT_CAP
    assert spec.sequential.schedule == (3, 5, 8, 13, 20) and spec.sequential.level == pytest.approx(0.99)
    spec = parse({**BASE, "repetitions": {"cap": 12, "looks": [4, 8], "tolerance": 0.1, "alpha": 0.1}}, "s.yaml")
    assert (spec.cap, spec.sequential.schedule, spec.sequential.tolerance) == (12, (4, 8, 12), 0.1)
    assert spec.sequential.level == pytest.approx(1 - 0.1 / 3)
    assert [r for r in range(1, 13) if spec.sequential.looks_at(r)] == [4, 8]  # the cap ends the run anyway
    assert parse({**BASE, "repetitions": 4}, "s.yaml").sequential is None
    assert Sequential(cap=2).schedule == (2,) and Sequential(cap=5).schedule == (3, 5)


@pytest.mark.parametrize(("value", "needle"), [
    ("many", "repetitions: 'many': a number of loads per condition, auto, or auto with settings {cap: N"),
    (2.5, "repetitions: 2.5: a number of loads per condition, auto"),
    (0, "repetitions: 0: loads per condition run from 1 to 100000"),
    ({"cap": 0}, "repetitions: cap: Input should be greater than or equal to 1"),
    ({"cap": 5, "every": 2}, "repetitions: every: unknown setting; allowed: cap, looks, tolerance, alpha"),
    ({"cap": 5, "looks": [1, 3]}, "repetitions: looks: each look is a round from 2 (one load has no spread"),
    ({"cap": 5, "looks": [6]}, "to the cap (5)"),
    ({"cap": 9, "looks": [5, 3]}, "repetitions: looks: rounds in increasing order, each once"),
    ({"tolerance": 0}, "repetitions: tolerance: Input should be greater than 0"),
    ({"alpha": 0.9}, "repetitions: alpha: Input should be less than or equal to 0.5"),
])
def test_bad_repetitions_are_one_line_errors(value, needle):
    with pytest.raises(SpecError) as caught:
        parse({**BASE, "repetitions": value}, "s.yaml")
    assert "\n" not in str(caught.value) and str(caught.value).startswith("s.yaml: ")
    assert needle in str(caught.value)


def test_a_corpus_is_refused_auto():
    with pytest.raises(SpecError, match="repetitions: auto loads in rounds across the whole matrix, and a corpus"):
        parse({**BASE, "sites": [{"corpus": "/hars"}], "repetitions": "auto"}, "s.yaml")


def test_auto_plans_the_cap_in_rounds_of_one_load_per_condition_in_seeded_orders():
    spec = parse({**BASE, "repetitions": {"cap": 4}, "warmup": 1}, "s.yaml")
    matrix = planner.conditions(spec, ["a", "b"], [Profile(name="none")])
    loads = planner.loads(spec, matrix)
    assert len(loads) == len(matrix) * (4 + 1) and [p.seq for p in loads] == list(range(len(loads)))
    rounds = [loads[k:k + len(matrix)] for k in range(0, len(loads), len(matrix))]
    for repetition, round_ in zip(range(-1, 4), rounds):
        assert {p.condition for p in round_} == set(matrix)  # every condition once per round
        assert {(p.repetition, p.warmup) for p in round_} == {(repetition, repetition < 0)}
    orders = [[matrix.index(p.condition) for p in round_] for round_ in rounds]
    assert len({tuple(order) for order in orders}) > 1  # each round shuffled on its own
    assert planner.loads(spec, matrix) == loads  # same seed, same plan
    again = parse({**BASE, "repetitions": {"cap": 4}, "warmup": 1, "seed": 8}, "s.yaml")
    assert planner.loads(again, matrix) != loads
