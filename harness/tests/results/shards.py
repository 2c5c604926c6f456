"""Shards of one run, each a separate process writing into one store at once (the store's
concurrency tests, `test_store.py` on SQLite, `test_store_e2e.py` on PostgreSQL, run
`shard_main` in each shard's process)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from pagebench.core.records import PlannedLoad
from pagebench.results.database import StoreError
from pagebench.results.store import Store
from tests.helpers import META, PROFILES, SPEC, fake_load, make_plan

SHARDS = 3
SHARD_PLAN = make_plan(reps=11)  # 4 warm-ups + 44 loads
CONTESTED = range(9)  # every shard records these, at the same moment, in the same order


def shard_attempts(index: int) -> list[PlannedLoad]:
    """Shard `index`'s loads: the contested ones, its own slice, then the first three of
    the next shard's slice again (late duplicates, racing or not)."""
    def own(i: int) -> list[PlannedLoad]:
        return [p for p in SHARD_PLAN if p.seq not in CONTESTED and p.seq % SHARDS == i]
    return [SHARD_PLAN[seq] for seq in CONTESTED] + own(index) + own((index + 1) % SHARDS)[:3]


def _barrier(workdir: Path, phase: str, index: int) -> None:
    (workdir / f"{phase}.{index}").touch()
    deadline = time.monotonic() + 60
    while len(list(workdir.glob(f"{phase}.*"))) < SHARDS:
        assert time.monotonic() < deadline, f"shards never all reached {phase!r}"
        time.sleep(0.001)


def shard_main(url: str, index_text: str, workdir_text: str) -> None:
    """One shard (run in its own process): open the store and create the run together with
    the others, then record its loads; prints which seqs it recorded and which were refused."""
    index, workdir = int(index_text), Path(workdir_text)
    _barrier(workdir, "started", index)
    store = Store(url)  # the shards migrate the empty database at once
    _barrier(workdir, "opened", index)
    store.create_experiment("shared", SPEC, META, SHARD_PLAN, PROFILES, exist_ok=True)
    _barrier(workdir, "created", index)
    recorded, refused = [], []
    for planned in shard_attempts(index):
        try:
            store.record_loads("shared", planned, [fake_load(planned)], started_at=float(index))
            recorded.append(planned.seq)
        except StoreError as error:
            assert "is already recorded" in str(error), error
            refused.append(planned.seq)
    store.close()
    print(json.dumps({"recorded": recorded, "refused": refused}))
