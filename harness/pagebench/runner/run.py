"""The measurement loop: the one module that sequences I/O.

A run's plan (`core/spec/plan.py`) says what to do; this module does it, in order, against
the lab (namespaces, link, origin servers, edge proxy), Chromium and the store: the link
checks, the edge proxy's overhead, the CPU calibration of throttled devices, then per
planned load: apply the profile, prime a warm profile, load the page as its device,
read the link and server counters once the link has drained of it (while the next load's
browser starts); then evaluate and commit it while the next load waits for its network to
go idle. Interrupted runs resume from the store.
"""

from __future__ import annotations

import secrets
import statistics
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial

from pagebench.analysis.sequential import run_settled
from pagebench.core import devices as devices_mod
from pagebench.core.measure.bound import fetches_of, lower_bound_ms
from pagebench.core.profiles import Profile
from pagebench.core.records import LoadResult, PlannedLoad, RawLoad
from pagebench.core.spec import plan as planner
from pagebench.core.spec import shard as shard_mod
from pagebench.core.spec.shard import Shard
from pagebench.core.spec.model import SpecError
from pagebench.edge.proxy import EdgeProxy, ProxyError
from pagebench.edge.strategy import Strategy
from pagebench.lab import build, tls
from pagebench.lab.browser import Driver, Setup
from pagebench.lab.build import Origins, Roles
from pagebench.lab.emulation import Emulation
from pagebench.link.calibration import Hold
from pagebench.link.emulator import LinkControl, ceiling_warning
from pagebench.results.artifacts import Evidence
from pagebench.results.store import AlreadyRecorded, Store
from pagebench.runner.environment import machine
from pagebench.runner.measured import Keep, Measured, Reading, read, rest
from pagebench.runner.prepare import Prepared, encoding_costs, plan_run
from pagebench.runner.watchdog import LOAD_GRACE_S, Watchdog, local_checks
from pagebench.system.commands import Bed
from pagebench.system.signals import Interrupted


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


Progress = Callable[[int, int, PlannedLoad, LoadResult | None, str], None]
#: A line the run says that the user keeps (printed, not a progress status): a throttled
#: device's achieved CPU slowdown.
Say = Callable[[str], None]
#: The CPU benchmark's runs per calibration: unthrottled (their median is the host's
#: time), then throttled at the rate chosen from them.
HOST_RUNS = 5
THROTTLED_RUNS = 3
#: The calibration's browser: it resolves no name and trusts no certificate beyond the
#: system's (the benchmark is one page of script, `set_content`: it fetches nothing).
CALIBRATION_SETUP = Setup("MAP * ~NOTFOUND", "")
#: A run's stopping rule (`repetitions: auto`), asked at each look of its schedule: (run
#: id, rounds complete) -> whether its verdicts are decisive (stop). Plain runs use
#: `analysis.sequential.run_settled`; reproductions their scenario's (`reproduce`).
Decide = Callable[[str, int], bool]
#: Why a corpus is refused a split lab: its roles serve one set of sites for the whole run.
SPLIT_BY_PAGE = ("a corpus runs page by page, a lab per page, which the compose lab (--router, --sites) does not "
                 "build: run it natively")


#: A run's meta key: its loads name the machine that measured them (a run a fleet's
#: machines share, or may: a reproduction's part, resumed elsewhere when its machine is lost).
BY_MACHINE = "by_machine"


class Runner:
    """Runs the remaining loads of one stored run in a fresh lab."""

    plan: planner.RunPlan  # once the run has loads left and its sites are on disk

    def __init__(self, store: Store, run_id: str, prepared: Prepared, progress: Progress,
                 roles: Roles | None = None, keep: Keep = Keep(), decide: Decide | None = None,
                 say: Say = lambda _: None, shard: Shard | None = None) -> None:
        """`shard`: only that shard's loads of a sharded run (`prepared.loads` the whole plan).
        A fleet's loads (of a sharded run, or of a run whose meta says `by_machine`: a
        reproduction's part) are each recorded with this machine's name (`environment.machine`)."""
        self.store = store
        self.shard = shard
        self.machine = machine() if shard is not None or store.experiment(run_id).meta.get(BY_MACHINE) else None
        self.say = say
        self.decide = decide or (lambda run, _rounds: run_settled(store, run))
        self.keep = keep if store.artifacts is not None else replace(keep, har=False, trace=False)  # nowhere to keep it
        self.roles = roles
        self.run_id = run_id
        self.p = prepared
        self.progress = progress
        self._watchdog = Watchdog([])  # the lab's, once it is up
        self._scheduling: str | None = None  # the delay program's, as noted in the store
        self._versions: tuple[str, str | None] | None = None  # pagebench's and Chromium's, for the HARs
        self._done = 0  # loads recorded, for the progress
        self._pending: Callable[[], Reading] | None = None  # the last load's rest (`_measure_last`)
        self._commit: Callable[[], None] | None = None  # the last measured load's commit (`_commit_last`)
        self._page = ""  # page by page: which page the loads are of ("page 3/25"), for the progress
        #: The DevTools CPU rate of each throttled device, once calibrated (at the run's first lab).
        self._rates: dict[str, float] = {}

    def run(self) -> None:
        """The remaining loads; the run ends in a stated state whatever happens: complete,
        interrupted (a signal: its name) or failed (the one-line error)."""
        try:
            self._run()
        except (Interrupted, KeyboardInterrupt) as stop:
            self._end("interrupted", f"signal {stop}" if isinstance(stop, Interrupted) else "signal SIGINT")
            raise
        except Exception as error:
            self._end("failed", _one_line(error))
            raise

    def _end(self, status: str, reason: str) -> None:
        """Best effort: when the store itself is what failed, the error to show is that one."""
        try:
            self.store.set_status(self.run_id, status, reason)
        except Exception:  # noqa: BLE001 - the original error is the one the user must see
            pass

    def _run(self) -> None:
        done = self.store.done_seqs(self.run_id) | self.store.stopped_seqs(self.run_id)
        mine = self.p.loads if self.shard is None else shard_mod.loads_of(self.p.loads, self.shard)
        if all(load.seq in done for load in mine) or self._stopped_at_resume(done):
            self._complete()
            return
        plan = self.plan = plan_run(self.p, done, self.shard)
        if self.roles is not None and plan.spec.by_page:
            raise SpecError(SPLIT_BY_PAGE)
        backend = self.store.experiment(self.run_id).backend
        for profile in self.p.profiles.values():  # once, before the lab: a profile past this machine's link
            if backend is not None and (warning := ceiling_warning(profile, backend)) is not None:
                self.say(warning)
        if self.store.artifacts is not None and (self.keep.har or self.keep.trace):
            self.store.artifacts.prepare(self.run_id)
        if plan.note_encoding_cost:  # seed 001's table 6-4: what compressing cost
            self.store.note(self.run_id, encoding_cost=encoding_costs(plan.on_disk))
        self.store.set_status(self.run_id, "running")
        self._done = len(plan.loads) - len(plan.steps)
        for number, part in enumerate(plan.parts):
            if plan.spec.by_page:
                self._page = f"page {list(plan.sites).index(part.sites[0]) + 1}/{len(plan.sites)}"
                self._status(f"{self._page}: {part.sites[0]}: building its lab")
            self._part(part, first=number == 0)
        self._complete()

    def _complete(self) -> None:
        """The run is complete once every planned load is recorded (or stopped early): a
        shard's end completes it only when the other shards' loads are in too."""
        if self.shard is None or not ({load.seq for load in self.p.loads}
                                      - self.store.done_seqs(self.run_id) - self.store.stopped_seqs(self.run_id)):
            self.store.set_status(self.run_id, "complete")

    def _stopped_at_resume(self, done: set[int]) -> bool:
        """A resumed `repetitions: auto` run whose loads end at a round's end (interrupted
        before its look was asked): ask now, as the uninterrupted run would have."""
        n, loads = len(done), self.p.loads
        if self.p.spec.sequential is None or not 0 < n < len(loads) or done != set(range(n)):
            return False
        following = loads[n]
        if following.warmup or following.repetition == loads[n - 1].repetition:
            return False
        self._done = n
        return self._look(following.repetition)  # repetitions 0 .. r-1 complete: r rounds

    def _look(self, rounds: int) -> bool:
        """After `rounds` complete rounds of a `repetitions: auto` run: at a look of its
        schedule, ask the stopping rule; when decisive, mark every load left stopped early."""
        rule = self.p.spec.sequential
        if rule is None or not rule.looks_at(rounds):
            return False
        self.progress(self._done, len(self.p.loads), self.p.loads[0], None,
                      f"{self._page}look after round {rounds}: are the verdicts decisive?")
        if not self.decide(self.run_id, rounds):
            return False
        done = self.store.done_seqs(self.run_id)
        self.store.stop(self.run_id, [load.seq for load in self.p.loads if load.seq not in done])
        self._done = len(self.p.loads)
        self.progress(self._done, self._done, self.p.loads[0], None, f"decisive after round {rounds}: the rest "
                      "stopped early")
        return True

    def _part(self, part: planner.Part, first: bool) -> None:
        """One lab's loads: the lab built for the part's sites (the link checks and the
        edge proxy's overhead in the first), its loads, the lab taken down."""
        plan, spec = self.plan, self.plan.spec
        backend = self.store.experiment(self.run_id).backend  # as recorded
        # Built here (native), or the router and sites roles of a split lab (compose).
        lab = (build.native(part.servers, backend, spec.seed) if self.roles is None
               else build.split(self.roles, list(spec.sites), part.servers, backend, spec.seed, self.p.spec_dir))
        from playwright.sync_api import sync_playwright

        try:
            with lab as parts, sync_playwright() as pw:
                bed, link, origins = parts.bed, parts.link, parts.origins
                driver = Driver(pw, bed.state_dir / "browser", parts.client_namespace,
                                deterministic=spec.seed if spec.deterministic else None, trace=self.keep.trace,
                                frames=self.keep.frames,
                                click=spec.interaction.click if spec.interaction is not None else None)
                try:
                    # the holds calibrated by this run's stored checks (an earlier part's, a resumed run's)
                    link.holds.update(self._holds())
                    if first:
                        self._link_checks(link, parts.measure)
                        self._calibrate(driver)
                    with self._edge_proxy(bed, origins) as proxy, \
                            Watchdog(local_checks(link, origins, proxy)) as self._watchdog:
                        if first and plan.overhead is not None and not self.store.proxy_overheads(self.run_id):
                            assert proxy is not None
                            self._proxy_overhead(plan.overhead, link, origins, driver, proxy)
                        self._loads(part.steps, link, origins, driver, proxy)
                finally:
                    driver.close()
        except Exception as error:
            # Once the watchdog has fired, Playwright's own complaints on the way out (its
            # driver is gone) are consequences: the part that died is the error.
            if self._watchdog.error is not None and error is not self._watchdog.error:
                raise self._watchdog.error from None
            raise

    def _status(self, status: str) -> None:
        """Progress between loads: the plan's first load stands for the run."""
        self.progress(self._done, len(self.plan.loads), self.plan.loads[0], None, status)

    def _link_checks(self, link: LinkControl, measure: Callable[[Profile], dict[str, object]]) -> None:
        for profile in self.plan.link_checks:
            link.apply(profile)
            self._note_scheduling(link)
            self._status(f"link check: {profile.name}")
            self.store.add_link_check(self.run_id, profile.name, measure(profile))

    def _holds(self) -> dict[str, Hold]:
        """Each profile's hold as its latest stored link check calibrated it
        (`link.calibration`); the link applies it to the loads of that profile."""
        holds = {}
        for check in self.store.link_checks(self.run_id):
            calibration = (check.result or {}).get("calibration")
            if calibration is not None:
                holds[check.profile] = Hold.of(calibration)
        return holds

    def _calibrate(self, driver: Driver) -> None:
        """Each throttled device's DevTools CPU rate for this host (`core.devices`): the
        benchmark timed unthrottled, the rate that makes it slowdown x the reference, then
        timed at that rate; the factor achieved is said and kept in the run's meta."""
        if not self.plan.throttled:
            return
        reference = self.p.reference
        assert reference is not None, "a throttled device comes with its table's reference"
        calibrated = {}
        with driver.cpu_benchmark(CALIBRATION_SETUP) as benchmark:
            for device in self.plan.throttled:
                self._status(f"{device.name}: timing the CPU benchmark")
                host = benchmark.times(Emulation(device), HOST_RUNS)
                rate = devices_mod.cpu_rate(device.cpu_slowdown, reference.script_ms, statistics.median(host))
                throttled = benchmark.times(Emulation(device, rate), THROTTLED_RUNS)
                calibration = devices_mod.calibration(device, reference, host, rate, throttled)
                self._rates[device.name] = calibration.rate
                calibrated[device.name] = calibration
                self.say(calibration.line())
        meta = dict(self.store.experiment(self.run_id).meta.get("devices") or {})
        for name, calibration in calibrated.items():  # a resumed run's: this host's, now
            meta[name] = {**meta.get(name, {}), "calibration": calibration.as_meta()}
        self.store.note(self.run_id, devices=meta)

    def _emulation(self, step: planner.Step) -> Emulation:
        """How the browser is the step's device: its context, at its calibrated CPU rate
        (every throttled device of the loads left was calibrated in the run's first lab)."""
        return Emulation(step.device, self._rates[step.device.name] if step.device.throttled else 1.0)

    def _note_scheduling(self, link: LinkControl) -> None:
        """The delay program's scheduling into the run's record, when it is new (a refused
        real-time priority makes a slower link, and the run must say so)."""
        if link.scheduling is not None and link.scheduling != self._scheduling:
            self._scheduling = link.scheduling
            self.store.note(self.run_id, delay_scheduling=link.scheduling)

    def _bound(self, step: planner.Step, result: LoadResult) -> float | None:
        """The load's analytic lower bound, from what it fetched and the site's dependency levels."""
        if step.bound is None or not result.ok or not result.resources:
            return None  # the bound models a browser's own connections (not the edge proxy's)
        c = step.planned.condition
        fetches = fetches_of(result.resources, self.plan.sites[c.site].level)
        return round(lower_bound_ms(fetches, step.bound, c.mode, c.cache), 3)

    def _edge_proxy(self, bed: Bed, origins: Origins) -> EdgeProxy | nullcontext[None]:
        """The edge proxy when any condition goes through it (one per lab)."""
        if not self.plan.proxied:
            return nullcontext(None)
        assert origins.plan.leaf is not None
        return EdgeProxy(bed, bed.state_dir / "proxy", origins.plan.leaf, tls.ca_path(), clients=self.plan.spec.clients)

    @staticmethod
    def _setup(visit: planner.Visit, proxy: EdgeProxy | None) -> Setup:
        """How Chromium is launched for a visit: its planned host rules (and QUIC), trusting
        the lab's leaf, through the proxy's addresses when proxied."""
        if visit.proxied:
            assert proxy is not None
            return Setup(visit.resolver_rules, tls.spki_list(), proxies=proxy.servers)
        return Setup(visit.resolver_rules, tls.spki_list(), force_quic_on=visit.force_quic_on)

    @staticmethod
    def _configure(visit: planner.Visit, proxy: EdgeProxy | None) -> None:
        """Before a proxied load: the edge proxy's planned strategy, origins and pool."""
        upstream = visit.upstream
        if upstream is None:
            return
        assert proxy is not None
        proxy.configure(Strategy(upstream.mode, upstream.connections, upstream.depth, upstream.cleartext),
                        dict(upstream.addresses), upstream.pool, key=upstream.key)

    def _load(self, visit: planner.Visit, link: LinkControl, origins: Origins, driver: Driver,
              proxy: EdgeProxy | None, warm_profile: str, clients: int,
              emulation: Emulation = Emulation()) -> Callable[[Reading], Measured]:
        """One planned load: every client loads the page at once, as the `emulation`'s
        device. Before its navigation (`Driver.cold`'s `ready`), once its renderer answers:
        the load before's rest (`_measure_last`), whose reading of the link once drained of
        it is this load's reading before; after its `load`, while its network goes idle:
        the load before's commit (`_commit_last`). What is returned measures this load's
        rest (`measured.rest`) given the reading after it."""
        spec, c = self.plan.spec, visit.condition
        setup = self._setup(visit, proxy)
        if visit.upstream is not None:
            self._finish()  # before the edge proxy is set anew: its pool may open connections across the link
        self._configure(visit, proxy)
        before: list[Reading] = []
        failed: list[Exception] = []

        def navigating() -> None:
            before.append(self._measure_last() or read(link, origins))

        def meanwhile() -> None:
            try:
                self._commit_last()
            except Exception as error:  # noqa: BLE001 - raised below, as the run's error, not as the load's
                failed.append(error)

        started = time.time()
        self._watchdog.raise_if_fired()
        with self._watchdog.deadline(spec.timeouts.load_s + LOAD_GRACE_S):
            raws = (driver.cold(setup, visit.url, spec.timeouts.load_s, clients, emulation=emulation,
                                ready=navigating, meanwhile=meanwhile)
                    if c.cache == "cold" else [driver.warm(setup, warm_profile, visit.url, spec.timeouts.load_s,
                                                           emulation=emulation, ready=navigating,
                                                           meanwhile=meanwhile)])
        self._watchdog.raise_if_fired()  # a part died under the load: its error, not the load
        if failed:
            raise failed[0]
        if not before:  # lost before its navigation: nothing of it crossed the link
            navigating()
        self._commit_last()  # the load ended before its idle wait
        return partial(rest, visit, raws, started, before[0], origins=origins, proxy=proxy, query=spec.replay_query)

    def _evidence(self, planned: PlannedLoad, raws: list[RawLoad], results: list[LoadResult]) -> list[Evidence]:
        """What `keep` asks of a measured load (`Keep.evidence`), its HARs naming the run's versions."""
        if self._versions is None:
            run = self.store.experiment(self.run_id)
            self._versions = (run.pagebench_version or "", run.chromium_version)
        return self.keep.evidence(f"{planned.condition.key} seq {planned.seq}", raws, results, *self._versions)

    def _loads(self, steps: tuple[planner.Step, ...], link: LinkControl, origins: Origins, driver: Driver,
               proxy: EdgeProxy | None) -> None:
        plan = self.plan
        total = len(plan.loads)
        prime_errors: dict[str, str | None] = {}
        with ThreadPoolExecutor(1, thread_name_prefix="link-reading") as reader:
            try:
                for step in steps:
                    planned, c = step.planned, step.planned.condition
                    if link.profile != step.profile:
                        self._finish()  # its link reading before the delay program starts anew (its counters from 0)
                        link.apply(step.profile)
                        self._note_scheduling(link)
                    if step.prime is not None:
                        self._finish()
                        self.progress(self._done, total, planned, None, "priming the warm profile"
                                      + (" with version 1" if c.version != 1 else ""))
                        first = step.prime.visit
                        self._configure(first, proxy)
                        raw = driver.prime(self._setup(first, proxy), step.warm_profile, first.url,
                                           plan.spec.timeouts.load_s, dictionaries=step.prime.dictionaries,
                                           emulation=self._emulation(step))
                        prime_errors[c.key] = raw.error
                    rest = self._load(step.visit, link, origins, driver, proxy, step.warm_profile,
                                      plan.spec.clients, self._emulation(step))
                    # the wait for the link to drain (a connection's close takes one to two round
                    # trips) and its reading run while the next load's browser starts
                    reading = reader.submit(read, link, origins)
                    self._pending = partial(self._measured, step, rest, reading, prime_errors.get(c.key))
                    if self._ends_round(planned):
                        self._finish()
                        if self._look(planned.repetition + 1):
                            return
            finally:
                self._finish()  # the last load measured is kept, whatever stopped the loads

    def _finish(self) -> Reading | None:
        """The last load's rest and commit, if not done yet: before anything reads the store
        or crosses the link, and when the loads end however they end. The link's reading
        after it, if a load was pending."""
        after = self._measure_last()
        self._commit_last()
        return after

    def _measure_last(self) -> Reading | None:
        """The last load's rest, if not measured yet (`_measured`); the reading after it."""
        pending, self._pending = self._pending, None
        return pending() if pending is not None else None

    def _commit_last(self) -> None:
        """The last measured load's evaluation and commit (`_record`), if not done yet."""
        commit, self._commit = self._commit, None
        if commit is not None:
            commit()

    def _measured(self, step: planner.Step, rest: Callable[[Reading], Measured], reading: Future[Reading],
                  prime_error: str | None) -> Reading:
        """A load's rest measured (`measured.rest`) with the link's reading after it (which
        it returns), and its commit (`_record`) left to do."""
        after = reading.result()
        self._commit = partial(self._record, step, rest(after), prime_error)
        return after

    def _record(self, step: planner.Step, measured: Measured, prime_error: str | None) -> None:
        """A load evaluated (its visual metrics are most of that), its evidence kept, its rows
        committed."""
        planned = step.planned
        results = [replace(r, bound_ms=self._bound(step, r)) for r in measured.results()]
        if prime_error:  # not warm as its condition says
            results = [replace(r, flagged=True, flags=(*r.flags, f"its warm profile's priming load failed: "
                                                                 f"{prime_error}")) for r in results]
        evidence = [] if planned.warmup else self._evidence(planned, measured.raws, results)
        try:
            self.store.record_loads(self.run_id, planned, results, measured.started, evidence, machine=self.machine)
        except AlreadyRecorded:
            if self.shard is None:
                raise
            # a lost machine's shard, stopping, committed its last load after this one resumed it
            self.say(f"load seq {planned.seq}: recorded meanwhile by another machine (a lost one's last): "
                     f"theirs is kept")
            return
        self._done += 1
        self.progress(self._done, len(self.plan.loads), planned, results[0], self._page)

    def _ends_round(self, planned: PlannedLoad) -> bool:
        """Whether a measured load completes its round (`repetitions: auto`: rounds are
        contiguous in the plan, and loads are made in seq order)."""
        loads = self.p.loads
        return (self.p.spec.sequential is not None and not planned.warmup
                and (planned.seq + 1 == len(loads) or loads[planned.seq + 1].repetition != planned.repetition))

    def _proxy_overhead(self, overhead: planner.Overhead, link: LinkControl, origins: Origins, driver: Driver,
                        proxy: EdgeProxy) -> None:
        """The edge proxy's own cost, stored with the run: (median proxied - median direct)
        / requests over the planned loads, warm-ups left out."""
        link.apply(overhead.profile)
        times: dict[str, list[float]] = {"direct": [], "proxy": []}
        requests = 0
        for measured, visit in overhead.visits:
            topology = visit.condition.topology
            self._status(f"edge-proxy overhead: {topology}")
            result = self._load(visit, link, origins, driver, proxy, "", 1)(read(link, origins)).results()[0]
            if not result.ok or result.load_ms is None:
                raise ProxyError(f"edge-proxy overhead: a {topology} load of {overhead.site} failed: "
                                 f"{'; '.join(result.errors) or 'no load time'}")
            if measured:
                times[topology].append(result.load_ms)
                requests = result.requests
        per_request = (statistics.median(times["proxy"]) - statistics.median(times["direct"])) / max(requests, 1)
        self.store.add_proxy_overhead(self.run_id, {
            "site": overhead.site, "mode": overhead.mode.name, "tls": overhead.tls, "requests": requests,
            "per_request_ms": round(per_request, 3), "direct_ms": times["direct"], "proxy_ms": times["proxy"],
            "scheduling": proxy.scheduling})


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
