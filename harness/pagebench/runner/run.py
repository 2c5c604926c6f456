"""The measurement loop: the one module that sequences I/O.

spec -> lab (namespaces, link, origin servers, edge proxy, Chromium) -> per planned load: apply the profile,
load the page, read the link and server counters, evaluate, commit. A link check per
profile runs first and is stored with the run. Interrupted runs resume from the store.
"""

from __future__ import annotations

import hashlib
import logging
import os
import platform
import secrets
import signal
import statistics
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pagebench.core import encodings, modes
from pagebench.core.servers import plan as serverplan
from pagebench.core.spec import model as spec_mod
from pagebench.core.measure.bound import Link as BoundLink
from pagebench.core.measure.bound import fetches_of, lower_bound_ms
from pagebench.core.measure.metrics import LinkView, ProxyView, ServerView, evaluate
from pagebench.core.profiles import Profile
from pagebench.core.sites.recording import Recording
from pagebench.core.records import Condition, LoadResult, PlannedLoad
from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.edge.proxy import EdgeProxy, ProxyError, ProxyStats
from pagebench.edge.strategy import Strategy
from pagebench.lab import build, sites as sitefiles, tls
from pagebench.lab.browser import CHROMIUM, Driver, Setup
from pagebench.lab.build import Origins, Roles
from pagebench.lab.servers.caddy import CADDY
from pagebench.lab.split.remote import RemoteSites
from pagebench.lab.servers.nginx import nginx_version
from pagebench.link.counters import LinkCounters
from pagebench.link.emulator import LinkControl, choose_backend
from pagebench.link.plan import SPIN_US
from pagebench.results.store import Store
from pagebench.system import places
from pagebench.system.commands import Bed, LabError
from pagebench.system.signals import Interrupted
from pagebench.yamlfiles import builtin_profiles


@dataclass(frozen=True)
class Prepared:
    """A validated experiment, ready to run: nothing has been started yet."""

    spec: spec_mod.Experiment
    document: dict[str, Any]
    sites: dict[str, GeneratedSite | Site]
    profiles: dict[str, Profile]
    plan: list[PlannedLoad]


def prepare(document: dict[str, Any], origin: str) -> Prepared:
    """Validate everything a run needs (spec, sites, profiles) before touching the machine."""
    spec = spec_mod.parse(document, origin)
    found: dict[str, GeneratedSite | Site] = {}
    for index, entry in enumerate(spec.sites):
        try:
            site = sitefiles.resolve(entry)
        except ValueError as error:
            raise spec_mod.SpecError(f"{origin}: sites[{index}]: {error}") from None
        found[site.name] = site
        _check_versions(spec, site, origin, index)
    profiles = spec_mod.resolve_profiles(spec, builtin_profiles(), origin)
    matrix = spec_mod.conditions(spec, list(found), profiles)
    return Prepared(spec, document, found, {p.name: p for p in profiles}, spec_mod.plan(spec, matrix))


def _check_versions(spec: spec_mod.Experiment, site: GeneratedSite | Site, origin: str, index: int) -> None:
    """What a spec's `version` and `encoding: dcz` ask of a site it names."""
    versions = site.manifest.versions
    beyond = [v for v in spec.version if v > versions]
    if beyond:
        raise spec_mod.SpecError(f"{origin}: version: {beyond[0]}: site {site.name} (sites[{index}]) has "
                                 + (f"versions 1-{versions}" if versions > 1 else "one version (1)"))
    if "dcz" in spec.encoding and versions == 1:
        raise spec_mod.SpecError(f"{origin}: encoding: dcz needs a site with versions (a delta is made against "
                                 f"the one the browser holds); site {site.name} (sites[{index}]) has one: generate "
                                 "it with `versions: [0.01]`, or use seed001-a..d")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _command_output(argv: list[str]) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except OSError:
        return ""
    return (result.stdout or result.stderr).strip().splitlines()[0] if (result.stdout or result.stderr) else ""


def _commit(repo: Path | None) -> str | None:
    """The checkout's commit, `-dirty` when a tracked file differs from it."""
    if repo is None:
        return None
    commit = _command_output(["git", "-C", str(repo), "rev-parse", "HEAD"])
    dirty = _command_output(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"])
    return commit + ("-dirty" if dirty else "")


def environment() -> dict[str, Any]:
    """How this run is produced: versions and the code's commit (None when pagebench runs
    from a wheel: no checkout to ask)."""
    from importlib.metadata import version

    return {
        "git_commit": _commit(places.checkout()),
        "host": platform.node(),
        "kernel": platform.release(),
        # which build as well as which version: "chromium-headless-shell 156.0.8078.79"
        "chromium_version": f"{Path(CHROMIUM).name} {_command_output([CHROMIUM, '--version']).removeprefix('Chromium ')}",
        "nginx_version": nginx_version(),
        "caddy_version": _command_output([CADDY, "version"]).split(" ")[0] or None,  # h3's server
        "pagebench_version": version("pagebench"),
        "playwright_version": version("playwright"),
        "python_version": platform.python_version(),
    }


#: Load pairs (direct, proxied) behind the stored edge-proxy overhead.
OVERHEAD_LOADS = 5

Progress = Callable[[int, int, PlannedLoad, LoadResult | None, str], None]


class Runner:
    """Runs the remaining loads of one stored run in a fresh lab."""

    def __init__(self, store: Store, run_id: str, prepared: Prepared, progress: Progress,
                 roles: Roles | None = None) -> None:
        self.store = store
        self.roles = roles
        self.run_id = run_id
        self.p = prepared
        self.progress = progress
        self._watchdog = _Watchdog([])  # the lab's, once it is up
        self._scheduling: str | None = None  # the delay program's, as noted in the store

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
        done = self.store.done_seqs(self.run_id)
        remaining = [load for load in self.p.plan if load.seq not in done]
        if not remaining:
            self.store.set_status(self.run_id, "complete")
            return
        spec = self.p.spec
        site_list = [sitefiles.materialize(site) for site in self.p.sites.values()]
        if spec.encoding != [encodings.IDENTITY]:  # seed 001's table 6-4: what compressing cost
            self.store.note(self.run_id, encoding_cost={s.name: sitefiles.encoding_cost(s) for s in site_list})
        server_plan = serverplan.plan(site_list, spec_mod.origin_modes(spec), spec.tls, encodings=spec.encoding,
                                      query=spec.replay_query)
        backend = self.store.experiment(self.run_id).backend  # as recorded
        # Built here (native), or the router and sites roles of a split lab (compose).
        lab = (build.native(server_plan, backend, spec.seed) if self.roles is None
               else build.split(self.roles, list(spec.sites), server_plan, backend, spec.seed))
        self.store.set_status(self.run_id, "running")
        from playwright.sync_api import sync_playwright

        try:
            with lab as parts, sync_playwright() as pw:
                bed, link, origins = parts.bed, parts.link, parts.origins
                driver = Driver(pw, bed.state_dir / "browser", parts.client_namespace,
                                deterministic=spec.seed if spec.deterministic else None)
                try:
                    if spec.timeouts.link_check:
                        self._link_checks(link, parts.measure)
                    with self._edge_proxy(bed, origins) as proxy, \
                            _Watchdog(_local_checks(link, origins, proxy)) as self._watchdog:
                        if proxy is not None and not self.store.proxy_overheads(self.run_id):
                            self._proxy_overhead(link, origins, driver, server_plan, proxy)
                        self._loads(remaining, len(self.p.plan) - len(remaining), link, origins, driver,
                                    server_plan, proxy)
                finally:
                    driver.close()
        except Exception as error:
            # Once the watchdog has fired, Playwright's own complaints on the way out (its
            # driver is gone) are consequences: the part that died is the error.
            if self._watchdog.error is not None and error is not self._watchdog.error:
                raise self._watchdog.error from None
            raise
        self.store.set_status(self.run_id, "complete")

    def _link_checks(self, link: LinkControl, measure: Callable[[Profile], dict[str, object]]) -> None:
        for profile in self.p.profiles.values():
            link.apply(profile)
            self._note_scheduling(link)
            self.progress(0, len(self.p.plan), self.p.plan[0], None, f"link check: {profile.name}")
            self.store.add_link_check(self.run_id, profile.name, measure(profile))

    def _note_scheduling(self, link: LinkControl) -> None:
        """The delay program's scheduling into the run's record, when it is new (a refused
        real-time priority makes a slower link, and the run must say so)."""
        if link.scheduling is not None and link.scheduling != self._scheduling:
            self._scheduling = link.scheduling
            self.store.note(self.run_id, delay_scheduling=link.scheduling)

    def _bound(self, c: Condition, profile: Profile, result: LoadResult) -> float | None:
        """The load's analytic lower bound, from what it fetched and the site's dependency levels."""
        if not result.ok or not result.resources or c.topology != "direct":
            return None  # the bound models a browser's own connections (not the edge proxy's)
        link = BoundLink(profile.rtt_ms, profile.down_mbit, profile.mss, profile.initcwnd, profile.timestamps,
                         tls=c.tls != modes.CLEARTEXT)
        fetches = fetches_of(result.resources, self.p.sites[c.site].level)
        return round(lower_bound_ms(fetches, link, c.mode, c.cache), 3)

    def _recording(self, name: str) -> Recording | None:
        """What a site is replayed from (an imported or recorded site), if it is."""
        site = self.p.sites[name]
        return site.recording if isinstance(site, Site) else None

    def _edge_proxy(self, bed: Bed, origins: Origins) -> EdgeProxy | nullcontext[None]:
        """The edge proxy when any condition goes through it (one for the whole run)."""
        if "proxy" not in self.p.spec.topologies:
            return nullcontext(None)
        assert origins.plan.leaf is not None
        return EdgeProxy(bed, bed.state_dir / "proxy", origins.plan.leaf, tls.ca_path(), clients=self.p.spec.clients)

    def _setup(self, c: Condition, server_plan: serverplan.ServerPlan, proxy: EdgeProxy | None) -> Setup:
        """How Chromium is launched for a condition. Through the proxy every name but the
        proxy's fails to resolve, so nothing can bypass it; direct, only the condition's
        origins resolve (Chromium never sends a DNS query out of the lab; it otherwise tries
        the host's resolver, delaying cold loads by up to a round trip). The site's version
        is the condition's: priming passes a condition of version 1."""
        spki = tls.spki_list()
        if c.topology == "proxy":
            assert proxy is not None
            return Setup("MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", spki, proxies=proxy.servers)
        cell = dict(site=c.site, encoding=c.encoding, version=c.version)
        rules = server_plan.host_resolver_rules(c.mode, c.tls, block_others=True, **cell)
        if modes.get(c.mode).quic:  # QUIC from the first request: no TCP, no Alt-Svc discovery
            return Setup(rules, spki, force_quic_on=server_plan.force_quic_on(c.mode, c.tls, **cell))
        return Setup(rules, spki)

    def _strategy(self, c: Condition, server_plan: serverplan.ServerPlan, proxy: EdgeProxy | None,
                  pool: str | None = None) -> None:
        """Before a proxied load: the mode's strategy and the condition's origins, with the
        spec's pool unless `pool` says otherwise: cold closes every upstream connection from
        before, warm keeps this condition's open since its earlier loads (one pool per
        condition: none serves another profile's or cache state's loads)."""
        if c.topology != "proxy":
            return
        assert proxy is not None
        settings = self.p.spec.proxy_settings
        bindings = server_plan.select(modes.get(c.mode).origin, c.tls, c.site, encoding=c.encoding,
                                      version=c.version)
        proxy.configure(Strategy(c.mode, settings.connections, settings.depth, c.tls == modes.CLEARTEXT),
                        {b.origin: b.ip for b in bindings}, pool or settings.pool, key=c.key)

    def _load(self, c: Condition, link: LinkControl, origins: Origins, driver: Driver,
              server_plan: serverplan.ServerPlan, proxy: EdgeProxy | None, warm_profile: str,
              clients: int, pool: str | None = None) -> tuple[list[LoadResult], float]:
        """One planned load: every client loads the page at once; counters read around it."""
        spec = self.p.spec
        setup = self._setup(c, server_plan, proxy)
        url = serverplan.browser_url(self.p.sites[c.site].entry, c.tls, c.topology)
        self._strategy(c, server_plan, proxy, pool)
        link.wait_settled()
        before, offset = link.counters(), origins.log_offset()
        started = time.time()
        self._watchdog.raise_if_fired()
        with self._watchdog.deadline(spec.timeouts.load_s + LOAD_GRACE_S):
            raws = (driver.cold(setup, url, spec.timeouts.load_s, clients) if c.cache == "cold"
                    else [driver.warm(setup, warm_profile, url, spec.timeouts.load_s)])
        self._watchdog.raise_if_fired()  # a part died under the load: its error, not the load
        link.wait_settled()
        delta = link.counters() - before  # raises if the delay program died: the link is down
        origins.check_alive()  # a load measured against dead servers is not kept
        if proxy is not None:
            proxy.check_alive()
        log = origins.connections_since(offset)
        stats = proxy.stats() if c.topology == "proxy" and proxy is not None else None
        document_path = url.split("/", 3)[3] if url.count("/") >= 3 else ""
        server = ServerView(log.connections, log.requests, log.statuses_for("/" + document_path), log.not_modified(),
                            log.tls_seen())
        site = self.p.sites[c.site].manifest
        # A warm load of a later version: its changed files must come anew (as deltas, in dcz)
        changed = frozenset(site.changed.get(c.version, ())) if c.cache == "warm" else frozenset()
        results = []
        for client, raw in enumerate(raws):
            view = None if stats is None else _proxy_view(stats, client)
            results.append(evaluate(c, raw, _link_view(delta), server, view, expect_delta=changed,
                                    versioned=site.versions > 1, recording=self._recording(c.site),
                                    query=self.p.spec.replay_query))
        return results, started

    def _loads(self, remaining: list[PlannedLoad], done: int, link: LinkControl, origins: Origins,
               driver: Driver, server_plan: serverplan.ServerPlan, proxy: EdgeProxy | None) -> None:
        spec, primed = self.p.spec, set()
        prime_errors: dict[str, str | None] = {}
        for planned in remaining:
            c = planned.condition
            profile = self.p.profiles[c.profile]
            if link.profile != profile:
                link.apply(profile)
                self._note_scheduling(link)
            warm_profile = hashlib.sha1(c.key.encode()).hexdigest()[:12]
            # A later version's warm load changes the profile's cache (it now holds that
            # version): each one starts again from a profile primed with version 1.
            if c.cache == "warm" and (c.key not in primed or c.version != 1):
                self.progress(done, len(self.p.plan), planned, None, "priming the warm profile"
                              + (" with version 1" if c.version != 1 else ""))
                first = replace(c, version=1)
                self._strategy(first, server_plan, proxy)
                raw = driver.prime(self._setup(first, server_plan, proxy), warm_profile,
                                   serverplan.browser_url(self.p.sites[c.site].entry, c.tls, c.topology),
                                   spec.timeouts.load_s, dictionaries=encodings.get(c.encoding).dictionary)
                primed.add(c.key)
                prime_errors[c.key] = raw.error
            results, started = self._load(c, link, origins, driver, server_plan, proxy, warm_profile, spec.clients)
            results = [replace(r, bound_ms=self._bound(c, profile, r)) for r in results]
            if prime_errors.get(c.key):  # not warm as its condition says
                results = [replace(r, flagged=True, flags=(*r.flags, f"its warm profile's priming load failed: "
                                                                     f"{prime_errors[c.key]}")) for r in results]
            self.store.record_loads(self.run_id, planned, results, started)
            done += 1
            self.progress(done, len(self.p.plan), planned, results[0], "")

    def _proxy_overhead(self, link: LinkControl, origins: Origins, driver: Driver,
                        server_plan: serverplan.ServerPlan, proxy: EdgeProxy) -> None:
        """The edge proxy's own cost, stored with the run: the first site cold with no added
        delay, direct and through the proxy alternately (one warm-up each), in the same
        origin mode both ways; (median proxied - median direct) / requests."""
        spec = self.p.spec
        proxied = [m for m in map(modes.get, spec.resolved_modes) if m.runs_in("proxy")]
        # the same origin mode and TLS both ways: the browser cannot speak h2 in cleartext
        mode, tls_version = next(((m, t) for m in [*(m for m in modes.OVERHEAD_PREFERENCE if m in proxied), *proxied]
                                  for t in spec.tls if t in modes.get(m.origin).tls_in("direct")),
                                 (proxied[0], spec.tls[0]))
        site = next(iter(self.p.sites))
        link.apply(builtin_profiles()["none"])
        times: dict[str, list[float]] = {"direct": [], "proxy": []}
        requests = 0
        for index in range(-1, OVERHEAD_LOADS):
            for topology in ("direct", "proxy"):
                self.progress(0, len(self.p.plan), self.p.plan[0], None, f"edge-proxy overhead: {topology}")
                c = Condition(site, mode.origin if topology == "direct" else mode.name, topology,
                              "none", "cold", tls_version, spec.encoding[0])
                # cold even with a warm pool: the proxy's cost per request, handshakes included
                results, _ = self._load(c, link, origins, driver, server_plan, proxy, "", 1, pool="cold")
                result = results[0]
                if not result.ok or result.load_ms is None:
                    raise ProxyError(f"edge-proxy overhead: a {topology} load of {site} failed: "
                                       f"{'; '.join(result.errors) or 'no load time'}")
                if index >= 0:
                    times[topology].append(result.load_ms)
                    requests = result.requests
        per_request = (statistics.median(times["proxy"]) - statistics.median(times["direct"])) / max(requests, 1)
        self.store.add_proxy_overhead(self.run_id, {
            "site": site, "mode": mode.name, "tls": tls_version, "requests": requests,
            "per_request_ms": round(per_request, 3), "direct_ms": times["direct"], "proxy_ms": times["proxy"],
            "scheduling": proxy.scheduling})


#: How long past its own timeout a load may take before the run gives up on the browser.
LOAD_GRACE_S = 30.0


class _Watchdog:
    """Watches the lab's local processes while loads run. When one dies (the delay
    program, nginx, Caddy, the edge proxy), or a load overruns its deadline (a browser
    Playwright did not see die), the load in flight must end now, not at its timeout:
    the watchdog kills this process's Playwright driver, so every pending browser call
    fails at once, and the runner raises the watchdog's one-line error (`raise_if_fired`).
    (A signal handler raising the error was tried: Playwright's event loop swallows what
    is raised inside it.)"""

    PERIOD_S = 0.25

    def __init__(self, checks: list[Callable[[], None]]) -> None:
        self.checks = checks
        self.error: Exception | None = None
        self.until: float | None = None  # a load's hard deadline (monotonic)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="pagebench-watchdog", daemon=True)

    def __enter__(self) -> _Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """The block must end within `seconds` (then the run fails, one line)."""
        self.until = time.monotonic() + seconds
        try:
            yield
        finally:
            self.until = None

    def raise_if_fired(self) -> None:
        if self.error is not None:
            raise self.error

    def _watch(self) -> None:
        while not self._stop.wait(self.PERIOD_S):
            until = self.until
            if until is not None and time.monotonic() > until:
                self._fire(LabError(f"the browser stopped answering: a load ran {LOAD_GRACE_S:g} s past its "
                                    "timeout (its process killed or crashed?)"))
                return
            for check in self.checks:
                try:
                    check()
                except Exception as error:  # noqa: BLE001 - the part's own one-line error, raised by the runner
                    self._fire(error)
                    return

    def _fire(self, error: Exception) -> None:
        self.error = error
        # The driver's pending futures die with it, unread: asyncio would log each one (with a
        # traceback) at exit, after the one line that says what happened.
        logging.getLogger("asyncio").disabled = True
        for pid in _playwright_drivers():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _playwright_drivers() -> list[int]:
    """This process's children that run Playwright's driver."""
    me, found = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if parent == me and b"playwright" in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _local_checks(link: LinkControl, origins: Origins, proxy: EdgeProxy | None) -> list[Callable[[], None]]:
    """What the watchdog can ask without a network call: processes of this machine."""
    checks: list[Callable[[], None]] = []
    for part in (link, origins, proxy):
        check = getattr(part, "check_alive", None)
        if check is not None and not isinstance(part, RemoteSites):
            checks.append(check)
    return checks


def _one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def _link_view(counters: LinkCounters) -> LinkView:
    return LinkView(counters.tcp_conns, counters.udp_flows, counters.as_dict())


def _proxy_view(stats: ProxyStats, client: int) -> ProxyView:
    return ProxyView(stats.connection_count, len(stats.exchanges), stats.for_client(client).exchanges,
                     len(stats.reused))


def start(store: Store, prepared: Prepared, progress: Progress, roles: Roles | None = None,
          created: Callable[[str], None] = lambda _: None, meta_extra: dict[str, Any] | None = None) -> str:
    """Create the run in the store (`created` hears its id), then run it (in a split lab's
    `roles`, else natively). Returns the run id."""
    run_id = new_run_id()
    backend = choose_backend(prepared.spec.backend)
    meta = environment() | {"seed": prepared.spec.seed, "notes": prepared.spec.notes, "backend": backend,
                            "delay_spin_us": SPIN_US if backend == "userspace" else None} | (meta_extra or {})
    if "proxy" in prepared.spec.topologies:  # as run, defaults included (the report shows it)
        meta["proxy"] = prepared.spec.proxy_settings.model_dump()
    # what recorded sites' servers and every page were given (defaults included)
    meta |= {"replay_query": prepared.spec.replay_query, "deterministic": prepared.spec.deterministic}
    store.create_experiment(run_id, prepared.document, meta, prepared.plan,
                            {name: p.fields() for name, p in prepared.profiles.items()})
    created(run_id)
    Runner(store, run_id, prepared, progress, roles).run()
    return run_id


def resume(store: Store, run_id: str, progress: Progress, roles: Roles | None = None) -> None:
    """Finish a stored run: exactly the planned loads that are not yet recorded."""
    experiment = store.experiment(run_id)
    prepared = prepare(experiment.spec, f"run {run_id}")
    stored = store.plan(run_id)
    if [(p.seq, p.condition.key, p.repetition) for p in stored] != [
        (p.seq, p.condition.key, p.repetition) for p in prepared.plan
    ]:
        raise spec_mod.SpecError(f"run {run_id}: its stored plan no longer matches its spec; cannot resume")
    Runner(store, run_id, prepared, progress, roles).run()


#: (scenario, variant, run label) of a reproduction, and its run's prepared spec.
Reproduction = list[tuple[tuple[str, str, str], Prepared]]


def reproduce(store: Store, runs: Reproduction, progress: Progress,
              created: Callable[[str], None] = lambda _: None) -> dict[tuple[str, str, str], str]:
    """`pagebench reproduce`: each scenario's runs one after the other, each an ordinary
    run (its own lab) whose meta says which scenario, variant and label it measures.
    Progress counts loads across all of them."""
    total, done_before, ids = sum(len(p.plan) for _, p in runs), 0, {}
    for (scenario, variant, label), prepared in runs:
        def counted(done: int, _total: int, planned: PlannedLoad, result: LoadResult | None, status: str,
                    offset: int = done_before) -> None:
            where = " ".join(filter(None, (scenario, variant, label)))
            progress(offset + done, total, planned, result, f"{where}: {status}" if status else where)

        ids[(scenario, variant, label)] = start(
            store, prepared, counted, created=created,
            meta_extra={"reproduce": {"scenario": scenario, "variant": variant, "label": label}})
        done_before += len(prepared.plan)
    return ids
