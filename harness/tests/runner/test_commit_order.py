"""The runner reads the link for each load once it has drained of it, while the next
load's browser starts (a thread: `Runner._loads`), measures the load's rest before the
next navigation (`Driver.cold`'s `ready`) and commits it while the next load waits for its
network to go idle (`meanwhile`): sequenced here against a fake browser, link and servers
and a real store. The real browser and lab doing it: every e2e run (`test_run_e2e.py`,
`test_faults_e2e.py`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from pagebench.core.records import LoadResult, PlannedLoad, RawLoad
from pagebench.core.servers.accesslog import ServerLog
from pagebench.link.counters import LinkCounters
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import parse, resolve_devices
from pagebench.core.spec.shard import Shard
from pagebench.results.store import AlreadyRecorded, Store
from pagebench.runner import run as run_mod
from pagebench.runner.prepare import Prepared
from pagebench.runner.measured import Keep, Reading
from pagebench.runner.run import Runner
from pagebench.yamlfiles import builtin_devices
from tests.core.spec.test_plan import NONE, SLOW, site
from tests.helpers import fake_load

LOADS = 6


@dataclass
class FakeMeasured:
    planned: PlannedLoad
    raws: list[Any] = field(default_factory=list)
    started: float = 0.0
    before: Reading | None = None
    after: Reading | None = None

    def results(self) -> list[LoadResult]:
        return [fake_load(self.planned, 1000.0 + self.planned.seq)]


@dataclass
class FakeLab:
    """A link, servers and browser (`Driver.cold`) that note what happens in what order
    and what the store holds at each load's navigation and at the end of its idle wait. A
    `lost` load's browser dies before its navigation; at `fails`, the load raises after
    its navigation (a part of the lab died under it)."""

    store: Store | None = None
    lost: frozenset[int] = frozenset()
    fails: int | None = None
    profile: Any = NONE
    events: list[str] = field(default_factory=list)
    at_navigation: dict[int, set[int]] = field(default_factory=dict)
    after_idle: dict[int, set[int]] = field(default_factory=dict)
    loads: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note(self, event: str) -> None:
        with self.lock:
            self.events.append(event)

    def wait_settled(self) -> None:
        self.note("drained")

    def counters(self) -> LinkCounters:
        self.note("read")
        return LinkCounters(packets_up=10 * self.events.count("read"))

    def drained_counters(self) -> LinkCounters:
        self.wait_settled()
        return self.counters()

    def log_offset(self) -> tuple[int, int]:
        return (0, self.events.count("read"))

    def check_alive(self) -> None:
        pass

    def connections_since(self, offset: tuple[int, int]) -> ServerLog:
        self.note(f"log since {offset[1]}")
        return ServerLog(())

    def cold(self, _setup: Any, url: str, *_: Any, ready: Any, meanwhile: Any, **__: Any) -> list[RawLoad]:
        seq, self.loads = self.loads, self.loads + 1
        if seq in self.lost:
            return [RawLoad(url=url, started_at=0.0, error="browser lost")]
        self.note(f"context {seq}")
        ready()
        self.note(f"navigation {seq}")
        if self.store is not None:
            self.at_navigation[seq] = self.store.done_seqs("r")
        if seq == self.fails:
            raise RuntimeError("the link's delay program died")
        meanwhile()
        if self.store is not None:
            self.after_idle[seq] = self.store.done_seqs("r")
        self.note(f"closed {seq}")
        return [RawLoad(url=url, started_at=0.0, error=None)]


def _runner(tmp_path, committed: list[int], said: list[str] | None = None, shard: Shard | None = None) -> Runner:
    spec = parse({"sites": ["a"], "modes": ["h2"], "repetitions": LOADS, "warmup": 0}, "s")
    rows = resolve_devices(spec, builtin_devices(), "s")
    loads = planner.loads(spec, planner.conditions(spec, ["a"], [NONE]))
    prepared = Prepared(spec, {}, {"a": site()}, {"none": NONE}, loads, [], {}, devices={d.name: d for d in rows})
    store = Store(f"sqlite:///{tmp_path}/runs.sqlite")
    store.create_experiment("r", {}, {}, loads, {"none": NONE.fields()})
    progress = (lambda _done, _total, planned, result, _status:
                committed.append(planned.seq) if result is not None else None)
    runner = Runner(store, "r", prepared, progress, keep=Keep(har=False, frames=False),
                    say=(said if said is not None else []).append, shard=shard)
    runner.plan = planner.run_plan(spec, {"a": site()}, [site()], [NONE], NONE, frozenset(), rows)
    runner._bound = lambda _step, _result: None  # type: ignore[method-assign]
    return runner


def _run(runner: Runner, lab: FakeLab, steps: tuple[planner.Step, ...] | None = None,
         measured: list[FakeMeasured] | None = None) -> None:
    """The runner's loads against `lab`, each load's rest a FakeMeasured of its planned load."""
    steps = steps if steps is not None else runner.plan.steps
    planned = iter(step.planned for step in steps)  # each load's rest is measured once, in the plan's order

    def rest(_visit: planner.Visit, raws: list[RawLoad], started: float, before: Reading, after: Reading,
             **_: Any) -> FakeMeasured:
        found = FakeMeasured(next(planned), raws, started, before, after)
        (measured if measured is not None else []).append(found)
        return found

    runner._setup = lambda _visit, _proxy: None  # type: ignore[method-assign, assignment, return-value]
    original, run_mod.rest = run_mod.rest, rest  # type: ignore[assignment]
    try:
        runner._loads(steps, lab, lab, lab, None)  # type: ignore[arg-type]
    finally:
        run_mod.rest = original


def test_each_load_is_committed_while_the_next_waits_for_idle_and_the_last_at_the_end(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    lab = FakeLab(runner.store)
    _run(runner, lab)
    assert lab.at_navigation == {seq: set(range(seq - 1)) for seq in range(LOADS)}  # the one before: not yet
    assert lab.after_idle == {seq: set(range(seq)) for seq in range(LOADS)}  # now it is
    assert committed == list(range(LOADS)) and runner.store.done_seqs("r") == set(range(LOADS))
    assert [load.load_ms for load in runner.store.loads("r")] == [1000.0 + seq for seq in range(LOADS)]


def test_one_reading_between_loads_after_the_load_ends_and_before_the_next_navigation(tmp_path):
    runner = _runner(tmp_path, [])
    lab = FakeLab()
    measured: list[FakeMeasured] = []
    _run(runner, lab, measured=measured)
    events = lab.events
    assert events.count("read") == LOADS + 1 and events.count("drained") == LOADS + 1
    reads = [k for k, event in enumerate(events) if event == "read"]
    for seq in range(LOADS):  # each reading after it: after it closed, before the next navigation
        assert events.index(f"closed {seq}") < reads[seq + 1]
        if seq + 1 < LOADS:
            assert reads[seq + 1] < events.index(f"navigation {seq + 1}")
    for first, second in zip(measured, measured[1:]):
        assert first.after == second.before  # the reading after a load is the next one's before
    assert [m.after.offset[1] - m.before.offset[1] for m in measured] == [1] * LOADS  # type: ignore[union-attr]


def test_a_load_lost_before_its_navigation_still_reads_and_commits_the_one_before_first(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    lab = FakeLab(runner.store, lost=frozenset({2, 3}))
    _run(runner, lab)
    assert committed == list(range(LOADS))  # in the plan's order, none twice
    assert lab.at_navigation[4] == {0, 1, 2}  # 3, lost, is read before and committed in 4's idle wait
    assert lab.events.count("read") == LOADS + 1


def test_a_failure_under_a_load_keeps_every_load_measured_before_it(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    with pytest.raises(RuntimeError, match="delay program died"):
        _run(runner, FakeLab(runner.store, fails=3))
    assert runner.store.done_seqs("r") == {0, 1, 2} and committed == [0, 1, 2]


def test_a_shard_keeps_a_load_another_machine_committed_first_and_says_so(tmp_path, monkeypatch):
    """A lost machine's shard, stopping, may commit its last load after another machine
    resumed the shard: that seq is kept as theirs, said, and the shard goes on."""
    monkeypatch.setenv("PAGEBENCH_MACHINE", "lab-a")
    committed: list[int] = []
    said: list[str] = []
    runner = _runner(tmp_path, committed, said, shard=Shard(1, 1))
    lost = runner.plan.steps[2].planned
    runner.store.record_loads("r", lost, [fake_load(lost, 999.0)], started_at=1.0, machine="lab-b")
    _run(runner, FakeLab(runner.store))
    assert said == ["load seq 2: recorded meanwhile by another machine (a lost one's last): theirs is kept"]
    assert committed == [0, 1, 3, 4, 5] and runner.store.done_by_machine("r") == {"lab-a": 5, "lab-b": 1}
    assert [load.load_ms for load in runner.store.loads("r")][2] == 999.0  # theirs


def test_a_commit_failing_in_the_next_loads_idle_wait_is_the_runs_error_not_that_loads(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    lost = runner.plan.steps[2].planned
    runner.store.record_loads("r", lost, [fake_load(lost)], started_at=1.0)
    lab = FakeLab(runner.store)
    with pytest.raises(AlreadyRecorded, match="load seq 2 is already recorded"):
        _run(runner, lab)
    assert committed == [0, 1] and "closed 3" in lab.events  # load 3 itself ended as it would


def test_a_load_is_finished_before_the_link_changes_profile(tmp_path):
    """A new profile restarts the delay program, its counters from 0: the load before is
    read and committed on the old one."""
    runner = _runner(tmp_path, [])
    steps = tuple(replace(step, profile=SLOW) if step.planned.seq % 2 else step for step in runner.plan.steps)
    applied: list[bool] = []
    lab = FakeLab(runner.store)

    def apply(profile: Any) -> None:
        applied.append(runner._pending is None and runner._commit is None)
        lab.profile = profile

    lab.apply = apply  # type: ignore[attr-defined]
    runner._note_scheduling = lambda _link: None  # type: ignore[method-assign]
    _run(runner, lab, steps)
    assert applied == [True] * (LOADS - 1) and runner.store.done_seqs("r") == set(range(LOADS))
