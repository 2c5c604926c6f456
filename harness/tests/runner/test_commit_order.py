"""The runner commits each load while the next one's browser settles (`Runner._finish`,
the `ready` of `Driver.cold`), once the link has drained of it: sequenced here against a
fake load (or a fake browser, link and servers) and a real store. The real browser and
lab doing it: every e2e run (`test_run_e2e.py`, `test_faults_e2e.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

import pytest

from pagebench.core.records import LoadResult, PlannedLoad, RawLoad
from pagebench.core.servers.accesslog import ServerLog
from pagebench.link.counters import LinkCounters
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import parse, resolve_devices
from pagebench.core.spec.shard import Shard
from pagebench.results.store import AlreadyRecorded, Store
from pagebench.runner.measured import Measured, Reading
from pagebench.runner.prepare import Prepared
from pagebench.runner.run import Keep, Runner
from pagebench.yamlfiles import builtin_devices
from tests.core.spec.test_plan import NONE, SLOW, site
from tests.helpers import fake_load

LOADS = 6


@dataclass
class FakeMeasured:
    planned: PlannedLoad
    raws: list[Any] = field(default_factory=list)
    started: float = 0.0

    def results(self) -> list[LoadResult]:
        return [fake_load(self.planned, 1000.0 + self.planned.seq)]


@dataclass
class FakeLoads:
    """Stands for `Runner._load`: notes what the store holds when each navigation starts;
    a `lost` load's browser dies before its navigation (`ready` called after it); at `fails`,
    the load raises after its navigation (a part of the lab died under it)."""

    store: Store
    lost: frozenset[int] = frozenset()
    fails: int | None = None
    at_navigation: dict[int, set[int]] = field(default_factory=dict)
    planned: list[PlannedLoad] = field(default_factory=list)  # the plan's loads, in its order
    calls: list[int] = field(default_factory=list)

    def __call__(self, _visit: planner.Visit, *_: Any, ready: Any, **__: Any) -> Callable[[], tuple[FakeMeasured, None]]:
        seq = len(self.calls)
        self.calls.append(seq)
        ready()  # before its navigation; for a load lost before it, once it is lost (`Runner._load`)
        if seq not in self.lost:
            self.at_navigation[seq] = self.store.done_seqs("r")
        if seq == self.fails:
            raise RuntimeError("the link's delay program died")
        return lambda: (FakeMeasured(self.planned[seq]), None)


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


def _run(runner: Runner, loads: FakeLoads) -> None:
    loads.planned = [step.planned for step in runner.plan.steps]
    runner._load = loads  # type: ignore[method-assign, assignment]
    runner._loads(runner.plan.steps, SimpleNamespace(profile=NONE), None, None, None)  # type: ignore[arg-type]


def test_each_load_is_committed_before_the_next_navigation_and_the_last_at_the_end(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    loads = FakeLoads(runner.store)
    _run(runner, loads)
    assert loads.at_navigation == {seq: set(range(seq)) for seq in range(LOADS)}
    assert committed == list(range(LOADS)) and runner.store.done_seqs("r") == set(range(LOADS))
    assert [load.load_ms for load in runner.store.loads("r")] == [1000.0 + seq for seq in range(LOADS)]


def test_a_load_lost_before_its_navigation_still_commits_the_one_before_first(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    loads = FakeLoads(runner.store, lost=frozenset({2, 3}))
    _run(runner, loads)
    assert committed == list(range(LOADS))  # in the plan's order, none twice
    assert loads.at_navigation[4] == {0, 1, 2, 3}


def test_a_failure_under_a_load_keeps_every_load_measured_before_it(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    with pytest.raises(RuntimeError, match="delay program died"):
        _run(runner, FakeLoads(runner.store, fails=3))
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
    _run(runner, FakeLoads(runner.store))
    assert said == ["load seq 2: recorded meanwhile by another machine (a lost one's last): theirs is kept"]
    assert committed == [0, 1, 3, 4, 5] and runner.store.done_by_machine("r") == {"lab-a": 5, "lab-b": 1}
    assert [load.load_ms for load in runner.store.loads("r")][2] == 999.0  # theirs


def test_outside_shards_a_load_committed_twice_is_an_error(tmp_path):
    committed: list[int] = []
    runner = _runner(tmp_path, committed)
    lost = runner.plan.steps[2].planned
    runner.store.record_loads("r", lost, [fake_load(lost)], started_at=1.0)
    with pytest.raises(AlreadyRecorded, match="load seq 2 is already recorded"):
        _run(runner, FakeLoads(runner.store))
    assert committed == [0, 1]


@dataclass
class FakeLab:
    """A link, servers and browser that note what happens in what order: each reading of
    the link (after its wait for no packet held) and each load's context and navigation."""

    events: list[str] = field(default_factory=list)
    profile: Any = NONE

    def wait_settled(self) -> None:
        self.events.append("drained")

    def counters(self) -> LinkCounters:
        self.events.append("read")
        return LinkCounters(packets_up=10 * self.events.count("read"))

    def log_offset(self) -> tuple[int, int]:
        return (0, self.events.count("read"))

    def check_alive(self) -> None:
        pass

    def connections_since(self, offset: tuple[int, int]) -> ServerLog:
        self.events.append(f"log since {offset[1]}")
        return ServerLog(())

    def cold(self, _setup: Any, url: str, *_: Any, ready: Any, **__: Any) -> list[RawLoad]:
        self.events.append("context")
        ready()
        self.events.append("navigation")
        return [RawLoad(url=url, started_at=0.0, error=None)]


def test_a_loads_link_reading_after_it_waits_for_the_next_context_and_is_the_next_ones_before(tmp_path):
    runner = _runner(tmp_path, [])
    runner._setup = lambda _visit, _proxy: None  # type: ignore[method-assign, assignment, return-value]
    lab = FakeLab()
    first, second = (step.visit for step in runner.plan.steps[:2])
    rest = runner._load(first, lab, lab, lab, None, "", 1)  # type: ignore[arg-type]
    lab.events.append("load 1 ends")
    later: list[tuple[Measured, Reading]] = []
    runner._load(second, lab, lab, lab, None, "", 1,  # type: ignore[arg-type]
                 ready=lambda: later.append(rest()) or later[0][1])
    assert lab.events == ["context", "drained", "read", "navigation", "load 1 ends",
                          "context", "drained", "read", "log since 1", "navigation"]  # one reading between loads
    measured, after = later[0]
    assert measured.link.counters["packets_up"] == 10 and after.offset == (0, 2)  # 20 - 10: the first's own


def test_a_load_lost_before_its_navigation_still_reads_the_link_and_finishes_the_one_before(tmp_path):
    runner = _runner(tmp_path, [])
    runner._setup = lambda _visit, _proxy: None  # type: ignore[method-assign, assignment, return-value]
    lab = FakeLab()
    lab.cold = lambda *_, **__: [RawLoad(url="u", started_at=0.0, error="browser lost")]  # type: ignore[method-assign]
    finished: list[str] = []
    rest = runner._load(runner.plan.steps[0].visit, lab, lab, lab, None, "", 1,  # type: ignore[arg-type]
                        ready=lambda: finished.append("the one before") or None)
    assert finished == ["the one before"] and lab.events == ["drained", "read"]
    assert rest()[0].raws[0].error == "browser lost"


def test_a_load_is_finished_before_the_link_changes_profile(tmp_path):
    """A new profile restarts the delay program, its counters from 0: the load before is
    read and committed on the old one."""
    runner = _runner(tmp_path, [])
    steps = tuple(replace(step, profile=SLOW) if step.planned.seq % 2 else step for step in runner.plan.steps)
    applied: list[bool] = []
    link = SimpleNamespace(profile=NONE)

    def apply(profile: Any) -> None:
        applied.append(runner._pending is None)
        link.profile = profile

    link.apply = apply
    runner._note_scheduling = lambda _link: None  # type: ignore[method-assign]
    loads = FakeLoads(runner.store, planned=[step.planned for step in steps])
    runner._load = loads  # type: ignore[method-assign, assignment]
    runner._loads(steps, link, None, None, None)  # type: ignore[arg-type]
    assert applied == [True] * (LOADS - 1) and runner.store.done_seqs("r") == set(range(LOADS))
