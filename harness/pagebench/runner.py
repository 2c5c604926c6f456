"""The measurement loop: the one module that sequences I/O.

spec -> lab (namespaces, link, nginx, Chromium) -> per planned load: apply the profile,
load the page, read the link and server counters, evaluate, commit. A link check per
profile runs first and is stored with the run. Interrupted runs resume from the store.
"""

from __future__ import annotations

import hashlib
import platform
import secrets
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from . import serverconf, sites as sites_mod, spec as spec_mod, tls
from .bound import Link as BoundLink, fetches_of, lower_bound_ms
from .browser import CHROMIUM, Driver, Setup
from .link.check import measure as link_measure
from .link.emulator import Link, choose_backend
from .link.plan import SPIN_US
from .metrics import ServerView, evaluate
from .profiles import Profile, builtin_profiles
from .records import Condition, LoadResult, PlannedLoad
from .servers import NginxServer, nginx_version
from .store import Store
from .testbed import Testbed
from .topology import Topology, new_prefix

from . import REPO_ROOT as REPO


@dataclass(frozen=True)
class Prepared:
    """A validated experiment, ready to run: nothing has been started yet."""

    spec: spec_mod.Experiment
    document: dict[str, Any]
    sites: dict[str, sites_mod.GeneratedSite | sites_mod.Site]
    profiles: dict[str, Profile]
    plan: list[PlannedLoad]


def prepare(document: dict[str, Any], origin: str) -> Prepared:
    """Validate everything a run needs (spec, sites, profiles) before touching the machine."""
    spec = spec_mod.parse(document, origin)
    found: dict[str, sites_mod.Site] = {}
    for index, entry in enumerate(spec.sites):
        try:
            site = sites_mod.resolve(entry)
        except ValueError as error:
            raise spec_mod.SpecError(f"{origin}: sites[{index}]: {error}") from None
        found[site.name] = site
    profiles = spec_mod.resolve_profiles(spec, builtin_profiles(), origin)
    matrix = spec_mod.conditions(spec, list(found), profiles)
    return Prepared(spec, document, found, {p.name: p for p in profiles}, spec_mod.plan(spec, matrix))


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _command_output(argv: list[str]) -> str:
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except OSError:
        return ""
    return (result.stdout or result.stderr).strip().splitlines()[0] if (result.stdout or result.stderr) else ""


def environment() -> dict[str, Any]:
    """How this run is produced: versions and the code's commit."""
    from importlib.metadata import version

    commit = _command_output(["git", "-C", str(REPO), "rev-parse", "HEAD"])
    dirty = _command_output(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"])
    return {
        "git_commit": commit + ("-dirty" if dirty else ""),
        "host": platform.node(),
        "kernel": platform.release(),
        # which build as well as which version: "chromium-headless-shell 156.0.8078.79"
        "chromium_version": f"{Path(CHROMIUM).name} {_command_output([CHROMIUM, '--version']).removeprefix('Chromium ')}",
        "nginx_version": nginx_version(),
        "pagebench_version": version("pagebench"),
        "playwright_version": version("playwright"),
        "python_version": platform.python_version(),
    }


Progress = Callable[[int, int, PlannedLoad, LoadResult | None, str], None]


class Runner:
    """Runs the remaining loads of one stored run in a fresh lab."""

    def __init__(self, store: Store, run_id: str, prepared: Prepared, progress: Progress) -> None:
        self.store = store
        self.run_id = run_id
        self.p = prepared
        self.progress = progress

    def run(self) -> None:
        done = self.store.done_seqs(self.run_id)
        remaining = [load for load in self.p.plan if load.seq not in done]
        if not remaining:
            self.store.set_status(self.run_id, "complete")
            return
        spec = self.p.spec
        site_list = [sites_mod.materialize(site) for site in self.p.sites.values()]
        server_plan = serverconf.plan(site_list, spec.resolved_modes, spec.tls)
        topology = Topology(new_prefix(), server_ips=server_plan.ip_count)
        self.store.set_status(self.run_id, "running")
        from playwright.sync_api import sync_playwright

        with Testbed(topology) as bed, sync_playwright() as pw:
            link = Link(bed, self.store.experiment(self.run_id)["backend"], spec.seed)  # as recorded
            with NginxServer(bed, server_plan, bed.state_dir / "nginx") as nginx:
                driver = Driver(pw, bed.state_dir / "browser", topology.client)
                try:
                    if spec.timeouts.link_check:
                        self._link_checks(bed, link)
                    self._loads(remaining, len(self.p.plan) - len(remaining), link, nginx, driver, server_plan)
                finally:
                    driver.close()
        self.store.set_status(self.run_id, "complete")

    def _link_checks(self, bed: Testbed, link: Link) -> None:
        for profile in self.p.profiles.values():
            link.apply(profile)
            self.progress(0, len(self.p.plan), self.p.plan[0], None, f"link check: {profile.name}")
            self.store.add_link_check(self.run_id, profile.name, link_measure(bed, link, profile))

    def _bound(self, c: Condition, profile: Profile, result: LoadResult) -> float | None:
        """The load's analytic lower bound, from what it fetched and the site's dependency levels."""
        if not result.ok or not result.resources:
            return None
        link = BoundLink(profile.rtt_ms, profile.down_mbit, profile.mss, profile.initcwnd)
        fetches = fetches_of(result.resources, self.p.sites[c.site].level)
        return round(lower_bound_ms(fetches, link, c.mode, c.cache), 3)

    def _loads(self, remaining: list[PlannedLoad], done: int, link: Link, nginx: NginxServer,
               driver: Driver, server_plan: serverconf.ServerPlan) -> None:
        spec, primed = self.p.spec, set()
        spki = tls.spki_list()
        for planned in remaining:
            c = planned.condition
            profile = self.p.profiles[c.profile]
            if link.profile != profile:
                link.apply(profile)
            # Every other name fails at once: Chromium never sends a DNS query out of the lab
            # (it otherwise tries the host's resolver, delaying cold loads by up to a round trip).
            setup = Setup(server_plan.host_resolver_rules(c.mode, c.tls, site=c.site, block_others=True), spki)
            url = self.p.sites[c.site].entry
            warm_profile = hashlib.sha1(c.key.encode()).hexdigest()[:12]
            if c.cache == "warm" and c.key not in primed:
                self.progress(done, len(self.p.plan), planned, None, "priming the warm profile")
                driver.prime(setup, warm_profile, url, spec.timeouts.load_s)
                primed.add(c.key)
            link.wait_settled()
            before, offset = link.counters(), nginx.log_offset()
            started = time.time()
            raw = (driver.cold(setup, url, spec.timeouts.load_s) if c.cache == "cold"
                   else driver.warm(setup, warm_profile, url, spec.timeouts.load_s))
            link.wait_settled()
            delta = link.counters() - before
            log = nginx.connections_since(offset)
            document_path = url.split("/", 3)[3] if url.count("/") >= 3 else ""
            server = ServerView(log.connections, log.requests, log.statuses_for("/" + document_path))
            result = evaluate(c, raw, delta, server)
            result = replace(result, bound_ms=self._bound(c, profile, result))
            self.store.record_load(self.run_id, planned, result, started)
            done += 1
            self.progress(done, len(self.p.plan), planned, result, "")


def start(store: Store, prepared: Prepared, progress: Progress) -> str:
    """Create the run in the store, then run it. Returns the run id."""
    run_id = new_run_id()
    backend = choose_backend(prepared.spec.backend)
    meta = environment() | {"seed": prepared.spec.seed, "notes": prepared.spec.notes, "backend": backend,
                            "delay_spin_us": SPIN_US if backend == "userspace" else None}
    store.create_experiment(run_id, prepared.document, meta, prepared.plan,
                            {name: p.fields() for name, p in prepared.profiles.items()})
    Runner(store, run_id, prepared, progress).run()
    return run_id


def resume(store: Store, run_id: str, progress: Progress) -> None:
    """Finish a stored run: exactly the planned loads that are not yet recorded."""
    experiment = store.experiment(run_id)
    prepared = prepare(experiment["spec"], f"run {run_id}")
    stored = store.plan(run_id)
    if [(p.seq, p.condition.key, p.repetition) for p in stored] != [
        (p.seq, p.condition.key, p.repetition) for p in prepared.plan
    ]:
        raise spec_mod.SpecError(f"run {run_id}: its stored plan no longer matches its spec; cannot resume")
    Runner(store, run_id, prepared, progress).run()
