"""The runner's sequencing of a throttled device's CPU calibration, against a fake CPU
benchmark (the real one, and the loads it slows: `test_devices_e2e.py`,
`tests/lab/test_emulation_e2e.py`) and a real store: the benchmark timed unthrottled,
the rate chosen from its median, timed again at that rate, the factor said and kept in
the run's meta beside the preset, and every load of the device given that rate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from pagebench.core.devices import Reference
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import parse, resolve_devices
from pagebench.lab.browser import Setup
from pagebench.lab.emulation import Emulation
from pagebench.results.store import Store
from pagebench.runner.prepare import Prepared
from pagebench.runner.run import CALIBRATION_SETUP, HOST_RUNS, THROTTLED_RUNS, Runner
from pagebench.yamlfiles import builtin_devices
from tests.core.spec.test_plan import NONE, site

REFERENCE = Reference(script_ms=140, machine="the reference desktop")


@dataclass
class FakeBenchmark:
    """Script takes `host_ms` unthrottled here; DevTools' rate slows it 10 % more than asked."""

    host_ms: float
    calls: list[tuple[str, float, int]] = field(default_factory=list)

    def times(self, emulation: Emulation, runs: int) -> list[float]:
        self.calls.append((emulation.device.name, emulation.cpu_rate, runs))
        slowed = 1.0 if emulation.cpu_rate == 1.0 else emulation.cpu_rate * 1.1
        return [self.host_ms * slowed + k for k in range(runs)]


@dataclass
class FakeDriver:
    benchmark: FakeBenchmark
    setups: list[Setup] = field(default_factory=list)

    @contextmanager
    def cpu_benchmark(self, setup: Setup) -> Iterator[FakeBenchmark]:
        self.setups.append(setup)
        yield self.benchmark


def _runner(tmp_path, devices: list[str], said: list[str], done: frozenset[int] = frozenset()) -> Runner:
    spec = parse({"sites": ["a"], "modes": ["h2"], "devices": devices, "repetitions": 2, "warmup": 0}, "s")
    rows = resolve_devices(spec, builtin_devices(), "s")
    loads = planner.loads(spec, planner.conditions(spec, ["a"], [NONE]))
    prepared = Prepared(spec, {}, {"a": site()}, {"none": NONE}, loads, [], {}, devices={d.name: d for d in rows},
                        reference=REFERENCE)
    store = Store(f"sqlite:///{tmp_path}/runs.sqlite")
    store.create_experiment("r", {}, {"devices": {d.name: d.fields() for d in rows}}, loads,
                            {"none": NONE.fields()})
    runner = Runner(store, "r", prepared, lambda *_: None, say=said.append)
    runner.plan = planner.run_plan(spec, {"a": site()}, [site()], [NONE], NONE, done, rows)
    return runner


def test_a_throttled_device_is_timed_unthrottled_then_at_the_rate_that_makes_the_reference_slowdown(tmp_path):
    said: list[str] = []
    runner = _runner(tmp_path, ["desktop", "moto-g-power"], said)
    driver = FakeDriver(FakeBenchmark(host_ms=100.0))
    runner._calibrate(driver)  # type: ignore[arg-type]
    rate = 4 * 140 / 102.0  # the median of 100, 101, 102, 103, 104
    assert driver.setups == [CALIBRATION_SETUP]  # a browser of its own, resolving no name
    assert driver.benchmark.calls == [("moto-g-power", 1.0, HOST_RUNS), ("moto-g-power", rate, THROTTLED_RUNS)]
    achieved = (100.0 * rate * 1.1 + 1) / 140
    assert said == [f"moto-g-power: CPU {achieved:.1f}x slower than the reference (DevTools rate {rate:.1f}; "
                    "asked 4x)"]
    devices = runner.store.experiment("r").meta["devices"]
    assert devices["desktop"] == builtin_devices().devices["desktop"].fields()  # nothing to calibrate
    phone = devices["moto-g-power"]
    assert phone["cpu_slowdown"] == 4 and phone["calibration"]["achieved"] == pytest.approx(achieved, abs=1e-3)
    assert phone["calibration"]["host_ms"] == [100.0, 101.0, 102.0, 103.0, 104.0]
    by_device = {step.device.name: runner._emulation(step) for step in runner.plan.steps}
    assert by_device["moto-g-power"].cpu_rate == pytest.approx(rate) and by_device["desktop"].cpu_rate == 1.0


def test_a_run_without_a_throttled_device_left_to_load_times_nothing(tmp_path):
    said: list[str] = []
    driver = FakeDriver(FakeBenchmark(host_ms=100.0))
    _runner(tmp_path, ["desktop"], said)._calibrate(driver)  # type: ignore[arg-type]
    resumed = _runner(tmp_path / "x", ["moto-g-power"], said, done=frozenset({0, 1}))  # its loads all recorded
    resumed._calibrate(driver)  # type: ignore[arg-type]
    assert driver.setups == [] and said == []
    assert "calibration" not in resumed.store.experiment("r").meta["devices"]["moto-g-power"]
