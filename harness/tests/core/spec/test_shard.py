"""Shards of a plan (`core.spec.shard`): for all K, a partition of the sharded plan, balanced
to within one block, the measured loads exactly the unsharded plan's, each shard in the
plan's own order and warmed up before it measures."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import SpecError, parse
from pagebench.core.spec.shard import Shard, check, loads_of, shard_of, sharded
from tests.core.spec.test_plan import NONE, SLOW


def _plan(modes: list[str], repetitions: int, warmup: int, seed: int, profiles=(NONE,)):
    spec = parse({"sites": ["a", "b"], "modes": modes, "cache": ["cold", "warm"], "repetitions": repetitions,
                  "warmup": warmup, "seed": seed}, "s")
    matrix = planner.conditions(spec, ["a", "b"], list(profiles))
    return planner.loads(spec, matrix), len(matrix)


@settings(max_examples=60, deadline=None)
@given(modes=st.lists(st.sampled_from(["keepalive", "h2", "http1.0"]), min_size=1, max_size=3, unique=True),
       repetitions=st.integers(1, 9), warmup=st.integers(0, 2), seed=st.integers(0, 2**32),
       data=st.data())
def test_the_shards_partition_the_plan_in_whole_blocks(modes, repetitions, warmup, seed, data):
    plan, conditions = _plan(modes, repetitions, warmup, seed)
    count = data.draw(st.integers(1, repetitions))
    check(plan, count, sequential=False)
    whole = sharded(plan, count)
    assert whole[:len(plan)] == plan  # the unsharded order is kept as it is
    shards = [loads_of(whole, Shard(k, count)) for k in range(1, count + 1)]
    seqs = Counter(load.seq for shard in shards for load in shard)
    assert sorted(seqs) == [load.seq for load in whole] and set(seqs.values()) == {1}  # a partition
    measured = [[load for load in shard if not load.warmup] for shard in shards]
    sizes = [len(m) for m in measured]
    assert max(sizes) - min(sizes) <= conditions and all(size % conditions == 0 for size in sizes)  # whole blocks
    assert sorted((l.seq, l.condition, l.repetition) for m in measured for l in m) == sorted(
        (l.seq, l.condition, l.repetition) for l in plan if not l.warmup)  # the one-machine run's loads
    order = {load.seq: k for k, load in enumerate(plan)}
    for shard in measured:
        assert [order[load.seq] for load in shard] == sorted(order[load.seq] for load in shard)
    for shard in shards:  # each condition warmed up `warmup` times on its machine before it measures
        for condition in {load.condition for load in shard}:
            mine = [load for load in shard if load.condition == condition]
            assert [load.warmup for load in mine] == [True] * warmup + [False] * (len(mine) - warmup)
    assert shard_of(whole, count) == {load.seq: k + 1 for k, shard in enumerate(shards) for load in shard}


def test_one_shard_is_the_unsharded_plan():
    plan, _ = _plan(["keepalive", "h2"], 5, 1, 7)
    assert sharded(plan, 1) == plan and loads_of(plan, Shard(1, 1)) == plan


def test_shards_are_refused_where_a_block_would_be_missing_or_rounds_must_stay_together():
    plan, _ = _plan(["h2"], 3, 1, 7)
    with pytest.raises(SpecError, match="3 block.*at most 3 shards"):
        check(plan, 4, sequential=False)
    with pytest.raises(SpecError, match="repetitions: auto"):
        check(plan, 2, sequential=True)


@pytest.mark.parametrize("text, message", [("3/2", "1 <= K <= N"), ("0/2", "1 <= K <= N"), ("2", "expected K/N"),
                                           ("a/b", "expected K/N")])
def test_a_bad_shard_is_one_line_naming_it(text, message):
    with pytest.raises(SpecError, match=message):
        Shard.parse(text)


def test_a_shard_reads_as_typed():
    assert Shard.parse(" 2 / 4 ") == Shard(2, 4) and str(Shard(2, 4)) == "2/4"


def test_profiles_cross_the_blocks_too():
    plan, conditions = _plan(["h2"], 4, 0, 3, profiles=(NONE, SLOW))
    shards = [loads_of(sharded(plan, 2), Shard(k, 2)) for k in (1, 2)]
    assert [len(s) for s in shards] == [2 * conditions, 2 * conditions]
