"""Shards: one run's plan split across lab machines (`run --shard K/N`, `run --ray`).

A block is one measured load of every condition: repetition r of each. Shard K of N takes
the blocks r with r mod N = K - 1, so shards differ by one block at most, and runs them
in the unsharded plan's own (seeded, interleaved) order: the order of a plan never
changes, sharded or not. Each shard warms up on its own machine: the first uses the
plan's warm-ups where they stand; every other shard gets copies of them, numbered after
the plan, run where the originals stand in its order. Pure: which loads, not where.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pagebench.core.records import PlannedLoad
from pagebench.core.spec.model import SpecError

SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@dataclass(frozen=True, order=True)
class Shard:
    """Shard `index` (from 1) of `count`."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise SpecError(f"--shard {self.index}/{self.count}: K/N needs 1 <= K <= N")

    @classmethod
    def parse(cls, text: str) -> Shard:
        """From `K/N` as typed."""
        found = SHARD.match(text)
        if found is None:
            raise SpecError(f"--shard {text!r}: expected K/N, e.g. 1/4 (shard K of N, K from 1)")
        return cls(int(found.group(1)), int(found.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def check(plan: Sequence[PlannedLoad], count: int, sequential: bool) -> None:
    """Whether `plan` can be split in `count` shards: each must have a block to run, and a
    stopping rule (`repetitions: auto`) needs every round in one place."""
    if sequential:
        raise SpecError("--shard: `repetitions: auto` stops on the rounds done so far, which needs every round in "
                        "one run: give repetitions a number to shard the run")
    blocks = 1 + max((load.repetition for load in plan if not load.warmup), default=-1)
    if count > blocks:
        raise SpecError(f"--shard .../{count}: the run has {blocks} block(s) (one load of every condition each); "
                        f"a shard is whole blocks: at most {blocks} shards")


def sharded(plan: Sequence[PlannedLoad], count: int) -> list[PlannedLoad]:
    """The stored plan of a run in `count` shards: `plan` itself (the unsharded order), then
    the warm-ups of shards 2..count, in that order, numbered on from the plan."""
    warmups = [load for load in plan if load.warmup]
    extra = [replace(load, seq=len(plan) + (shard - 2) * len(warmups) + k)
             for shard in range(2, count + 1) for k, load in enumerate(warmups)]
    return [*plan, *extra]


def loads_of(plan: Sequence[PlannedLoad], shard: Shard) -> list[PlannedLoad]:
    """Shard `shard`'s loads of a `sharded` plan, in the order it runs them."""
    warmups = sum(1 for load in plan if load.warmup) // shard.count  # each shard's copies
    base = len(plan) - (shard.count - 1) * warmups  # the unsharded plan's length
    own = [] if shard.index == 1 else list(plan[base + (shard.index - 2) * warmups:][:warmups])
    found, k = [], 0
    for load in plan[:base]:
        if load.warmup:
            found.append(load if shard.index == 1 else own[k])
            k += 1
        elif load.repetition % shard.count == shard.index - 1:
            found.append(load)
    return found


def shard_of(plan: Sequence[PlannedLoad], count: int) -> dict[int, int]:
    """Each seq's shard (from 1) in a `sharded` plan of `count` shards."""
    return {load.seq: index for index in range(1, count + 1) for load in loads_of(plan, Shard(index, count))}
