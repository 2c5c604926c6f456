"""The plan of a run: from a validated spec, its sites and its profiles, everything a run
will do, decided before anything runs, so that it is tested without a lab and the runner
(`runner/run.py`) only sequences it against the lab, the browser, the link and the store.

    conditions, loads    the matrix and its seeded, interleaved order (stored with the run;
                         a resume checks the stored order against this one); `rounds` with
                         `repetitions: auto`
    notes, check_site    what a spec skips and what it asks of its sites, said before a run
    run_meta             what the run's record says of its spec
    run_plan             the RunPlan: link checks, server plan, the edge-proxy overhead's
                         loads, and each remaining load with its priming and browser inputs

Pure: no clock, process, file or socket; the sites come as values (read and written by
`runner/prepare.py`).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pagebench.core import encodings, modes
from pagebench.core.devices import DESKTOP, Device
from pagebench.core.measure.bound import Link as BoundLink
from pagebench.core.modes import Mode
from pagebench.core.profiles import Profile
from pagebench.core.records import Condition, PlannedLoad
from pagebench.core.servers import plan as serverplan
from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.core.sites.recording import Recording
from pagebench.core.spec import shard as shard_mod
from pagebench.core.spec.model import Experiment, SpecError
from pagebench.core.spec.shard import Shard

#: Load pairs (direct, proxied) behind the stored edge-proxy overhead (each after a warm-up pair).
OVERHEAD_LOADS = 5
#: The browser's host rules through the edge proxy: every name but the proxy's fails to
#: resolve, so nothing can bypass it.
PROXIED_RULES = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def origin_modes(spec: Experiment) -> list[Mode]:
    """The modes the origin servers must serve for this spec (pipelining is served by
    keep-alive's bindings)."""
    return list(dict.fromkeys(mode.origin for mode in spec.resolved_modes))


def notes(spec: Experiment) -> list[str]:
    """What the run tells the user about its spec (an alias used, what the matrix skips and
    why), printed before the run and stored with it."""
    said = list(spec.alias_notes)
    for mode in spec.resolved_modes:
        for topology in filter(mode.runs_in, spec.topologies):
            skipped = [tls for tls in spec.tls if tls not in mode.tls_in(topology)]
            if skipped:
                said.append(f"tls {', '.join(skipped)}: skipped for {mode.name} {topology} ({mode.tls_reason()})")
    for delta in (e for e in spec.resolved_encodings if e.dictionary):
        if modes.CLEARTEXT in spec.tls:
            said.append(f"encoding {delta}: skipped for tls none (browsers keep compression dictionaries for "
                        "secure origins only)")
        if "cold" in spec.cache:
            said.append(f"encoding {delta} with cache cold: a cold browser holds no dictionary, so every "
                        f"resource is answered with {delta.fallback} (its fallback)")
    return said + _pool_notes(spec)


def _pool_notes(spec: Experiment) -> list[str]:
    """What a warm pool does not keep, said before the run and stored with it."""
    if spec.proxy_settings.pool != "warm" or "proxy" not in spec.topologies:
        return []
    said = [("proxy.pool warm: the edge proxy's upstream connections stay open across a condition's loads "
             "(warm-ups open them; the origin closes those idle past its keepalive_timeout, 75 s, and they "
             "are opened again); the browser's own connections and direct loads start new every load; the "
             "origin's TCP restarts slow start after an idle pause (Linux tcp_slow_start_after_idle), so a "
             "warm pool saves the handshakes, not the congestion window")]
    said += [f"proxy.pool warm: {mode.name} opens a connection per request, which the origin closes after its "
             f"answer: its warm pool keeps nothing (every proxied {mode.name} load opens its own, as with cold)"
             for mode in spec.resolved_modes if mode.connection_per_request and mode.runs_in("proxy")]
    return said


def check_site(spec: Experiment, site: GeneratedSite | Site, origin: str, index: int) -> None:
    """What a spec's `version` and `encoding: dcz` ask of a site it names (`sites[index]`):
    a one-line SpecError before anything runs, not a failed load."""
    if isinstance(site, Site) and site.app is not None:
        compressed = [e.name for e in spec.resolved_encodings if e is not encodings.IDENTITY]
        if compressed:
            raise SpecError(f"{origin}: encoding: {compressed[0]}: site {site.name} (sites[{index}]) is an app, "
                            "which compresses as it does itself (the browser's Accept-Encoding reaches it "
                            "unchanged): leave encoding out, or identity")
        if any(v != 1 for v in spec.version):
            raise SpecError(f"{origin}: version: site {site.name} (sites[{index}]) is an app: it serves one "
                            "version, its own (leave version out)")
    versions = site.manifest.versions
    beyond = [v for v in spec.version if v > versions]
    if beyond:
        raise SpecError(f"{origin}: version: {beyond[0]}: site {site.name} (sites[{index}]) has "
                        + (f"versions 1-{versions}" if versions > 1 else "one version (1)"))
    delta = next((e for e in spec.resolved_encodings if e.dictionary), None)
    if delta is not None and versions == 1:
        raise SpecError(f"{origin}: encoding: {delta} needs a site with versions (a delta is made against "
                        f"the one the browser holds); site {site.name} (sites[{index}]) has one: generate "
                        "it with `versions: [0.01]`, or use seed001-a..d")


def conditions(spec: Experiment, site_names: list[str], profiles: list[Profile]) -> list[Condition]:
    """The matrix, in a stable order (what the report lists). Devices vary fastest: a spec
    naming none (desktop) has the matrix, and so the seeded order, of a run before devices."""
    return [
        Condition(site, mode, topology, profile.name, cache, tls, encoding, version, device)
        for site in site_names
        for mode in spec.resolved_modes
        for topology in spec.topologies if mode.runs_in(topology)
        for profile in profiles
        for cache in spec.cache
        for tls in spec.tls if tls in mode.tls_in(topology)
        for encoding in spec.resolved_encodings if not (encoding.dictionary and tls == modes.CLEARTEXT)
        for version in spec.version
        for device in spec.devices
    ]


def loads(spec: Experiment, matrix: list[Condition]) -> list[PlannedLoad]:
    """Every load, warm-ups first within each condition, interleaved across conditions
    in a seeded random order so slow drifts (thermal, background) hit all alike; page by
    page (`Experiment.by_page`), across each site's conditions, one site after another.
    Stored runs resume against this order: it must never change for a given spec.
    With `repetitions: auto`, in rounds instead (`rounds`)."""
    if spec.sequential is not None:
        return rounds(spec, matrix)
    slots: list[tuple[Condition, int]] = []
    for condition in matrix:
        slots += [(condition, rep) for rep in range(-spec.warmup, spec.cap)]
    if spec.by_page:  # page by page: each site's loads together, shuffled among themselves
        rng = random.Random(spec.seed)
        pages: dict[str, list[tuple[Condition, int]]] = {}
        for slot in slots:
            pages.setdefault(slot[0].site, []).append(slot)
        slots = []
        for page in pages.values():
            rng.shuffle(page)
            slots += page
    else:
        random.Random(spec.seed).shuffle(slots)
    # Within a condition, keep warm-ups before measured loads: renumber in order of appearance.
    counters: dict[Condition, int] = {}
    planned = []
    for seq, (condition, _) in enumerate(slots):
        index = counters.get(condition, -spec.warmup)
        counters[condition] = index + 1
        planned.append(PlannedLoad(seq=seq, condition=condition, repetition=index, warmup=index < 0))
    return planned


def rounds(spec: Experiment, matrix: list[Condition]) -> list[PlannedLoad]:
    """`repetitions: auto`'s order: round r holds repetition r of every condition, in a
    seeded order of its own, warm-up rounds first, up to the cap; so that after any round
    every condition has as many loads as the others, and the loads a stopping rule leaves
    out are whole rounds at the end of the plan."""
    rng = random.Random(spec.seed)
    planned: list[PlannedLoad] = []
    for repetition in range(-spec.warmup, spec.cap):
        order = list(matrix)
        rng.shuffle(order)
        planned += [PlannedLoad(seq=len(planned) + k, condition=c, repetition=repetition, warmup=repetition < 0)
                    for k, c in enumerate(order)]
    return planned


def run_meta(spec: Experiment, link: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """The run's record of how it was produced, less the machine's versions: the seed and
    notes, the `link` backend (the machine's choice), the caller's `extra` (a
    reproduction's scenario), then the proxy and page settings as run, defaults included
    (the report shows them). Key order is that of runs stored before the planner."""
    meta = {"seed": spec.seed, "notes": notes(spec), **link, **extra}
    if "proxy" in spec.topologies:
        meta["proxy"] = spec.proxy_settings.model_dump()
    return meta | {"replay_query": spec.replay_query, "deterministic": spec.deterministic}


@dataclass(frozen=True)
class Upstream:
    """The edge proxy's configuration before a proxied load: the mode's strategy (connections,
    pipelining depth, cleartext across the link), the condition's origin addresses, and its
    pool (`key`: warm keeps one pool per condition, so none serves another's loads)."""

    mode: Mode
    connections: int
    depth: int
    cleartext: bool
    addresses: tuple[tuple[str, str], ...]  # (origin host, server IPv4)
    pool: str
    key: str


@dataclass(frozen=True)
class Visit:
    """How the browser loads one condition's page, and what that load is judged against.
    Direct, only the condition's origins resolve (Chromium never sends a DNS query out of
    the lab; it otherwise tries the host's resolver, delaying cold loads by up to a round
    trip); through the edge proxy (`proxied`), only the proxy's addresses, which the
    runner knows once the proxy is up."""

    condition: Condition
    url: str
    resolver_rules: str
    proxied: bool
    force_quic_on: str  # QUIC from the first request: no TCP, no Alt-Svc discovery ("" for TCP modes)
    upstream: Upstream | None  # proxied loads only
    document_path: str  # the page's path, whose statuses the server log gives
    #: "host/path" of the files changed since version 1: a warm load must fetch them anew.
    expect_delta: frozenset[str]
    versioned: bool
    recording: Recording | None  # a replayed site's (its error statuses are excused)
    app: bool = False  # an app site: its caching and compression are its own


@dataclass(frozen=True)
class Prime:
    """Before a warm load: fill its persistent profile with one load of version 1 (and the
    compression dictionaries the page announces, for dcz)."""

    visit: Visit
    dictionaries: bool


@dataclass(frozen=True)
class Step:
    """One planned load as the runner performs it."""

    planned: PlannedLoad
    profile: Profile
    device: Device  # what the browser emulates, its priming load too (`lab.emulation`)
    visit: Visit
    warm_profile: str  # the persistent browser profile of the condition (warm loads)
    prime: Prime | None
    bound: BoundLink | None  # the link of the load's analytic bound; None: the edge proxy's loads


@dataclass(frozen=True)
class Overhead:
    """The edge proxy's own cost: the first site cold over the unshaped link, direct and
    through the proxy alternately in the same origin mode and TLS both ways (the browser
    cannot speak h2 in cleartext), the first pair a warm-up."""

    site: str
    mode: Mode
    tls: str
    profile: Profile
    visits: tuple[tuple[bool, Visit], ...]  # (measured, visit), in order


@dataclass(frozen=True)
class Part:
    """The loads one lab runs, with the servers it serves: the whole run in one part, or
    page by page (`Experiment.by_page`) a part per site, so that the addresses a lab needs
    are one page's, never the corpus's."""

    sites: tuple[str, ...]
    servers: serverplan.ServerPlan  # these sites on disk, under every origin mode and TLS version
    steps: tuple[Step, ...]  # the loads not yet done, in order


@dataclass(frozen=True)
class RunPlan:
    """Everything a run does, in order: the link checks, the edge-proxy overhead (stored
    once per run), then every remaining load, part by part (a lab each)."""

    spec: Experiment
    sites: Mapping[str, GeneratedSite | Site]  # as resolved: their dependency levels bound a load
    loads: tuple[PlannedLoad, ...]  # the whole seeded order
    link_checks: tuple[Profile, ...]
    on_disk: tuple[Site, ...]  # every site as written for the servers
    overhead: Overhead | None  # when any condition goes through the edge proxy (in the first part's lab)
    parts: tuple[Part, ...]  # the labs with loads left, in order
    note_encoding_cost: bool  # seed 001's table 6-4: what compressing cost

    @property
    def throttled(self) -> tuple[Device, ...]:
        """The devices of the loads left whose CPU is slowed: what the run calibrates first."""
        return tuple(dict.fromkeys(step.device for step in self.steps if step.device.throttled))

    @property
    def proxied(self) -> bool:
        """Whether the run needs the edge proxy (one per lab)."""
        return "proxy" in self.spec.topologies

    @property
    def steps(self) -> tuple[Step, ...]:
        """The loads not yet done, across the parts."""
        return tuple(step for part in self.parts for step in part.steps)


def run_plan(spec: Experiment, sites: Mapping[str, GeneratedSite | Site], on_disk: Sequence[Site],
             profiles: Sequence[Profile], unshaped: Profile, done: frozenset[int] = frozenset(),
             devices: Sequence[Device] = (DESKTOP,), shard: Shard | None = None) -> RunPlan:
    """The plan of a run whose loads `done` are recorded: `sites` as the spec resolved them
    (in spec order), `on_disk` the same sites written for the servers, `unshaped` the
    catalogue's profile without impairment (the overhead's link), `devices` the spec's
    (`resolve_devices`); `shard`: that shard's loads only, in its order (`core.spec.shard`)."""
    by_name = {profile.name: profile for profile in profiles}
    unknown = [name for name in spec.devices if name not in {device.name for device in devices}]
    if unknown:
        raise SpecError(f"devices: {unknown[0]!r} is not among the devices given to the planner")
    planned = loads(spec, conditions(spec, list(sites), list(profiles)))
    if shard is not None:
        planned = shard_mod.loads_of(shard_mod.sharded(planned, shard.count), shard)
    written = dict(zip(sites, on_disk))
    groups = [[name] for name in sites] if spec.by_page else [list(sites)]
    parts: list[Part] = []
    for group in groups:
        servers = serverplan.plan([written[name] for name in group], origin_modes(spec), spec.tls,
                                  encodings=spec.resolved_encodings, query=spec.replay_query)
        steps = _steps(spec, sites, servers, by_name, {device.name: device for device in devices},
                       [load for load in planned if load.condition.site in group and load.seq not in done])
        if steps or not parts and group is groups[-1]:
            parts.append(Part(tuple(group), servers, tuple(steps)))
    first = parts[0]
    return RunPlan(spec, sites, tuple(planned), tuple(profiles) if spec.timeouts.link_check else (),
                   tuple(on_disk), _overhead(spec, {name: sites[name] for name in first.sites}, first.servers,
                                             unshaped), tuple(parts),
                   spec.resolved_encodings != (encodings.IDENTITY,))


def _steps(spec: Experiment, sites: Mapping[str, GeneratedSite | Site], servers: serverplan.ServerPlan,
           by_name: Mapping[str, Profile], devices: Mapping[str, Device],
           remaining: Sequence[PlannedLoad]) -> list[Step]:
    """The steps of the `remaining` loads against one lab's `servers`."""
    visits: dict[Condition, Visit] = {}

    def visit(c: Condition) -> Visit:
        if c not in visits:
            visits[c] = _visit(spec, sites[c.site], servers, c)
        return visits[c]

    steps: list[Step] = []
    primed: set[str] = set()
    for load in remaining:
        c = load.condition
        prime = None
        # A later version's warm load changes the profile's cache (it now holds that
        # version): each one starts again from a profile primed with version 1.
        if c.cache == "warm" and (c.key not in primed or c.version != 1):
            prime = Prime(visit(replace(c, version=1)), c.encoding.dictionary)
            primed.add(c.key)
        profile = by_name[c.profile]
        bound = (BoundLink(profile.rtt_ms, profile.down_mbit, profile.mss, profile.initcwnd, profile.timestamps,
                           tls=c.tls != modes.CLEARTEXT) if c.topology == "direct" else None)
        # The warm profile is the condition's (its key names the device): never shared across devices.
        steps.append(Step(load, profile, devices[c.device], visit(c), hashlib.sha1(c.key.encode()).hexdigest()[:12],
                          prime, bound))
    return steps


def _overhead(spec: Experiment, sites: Mapping[str, GeneratedSite | Site], servers: serverplan.ServerPlan,
              unshaped: Profile) -> Overhead | None:
    """What the edge-proxy overhead loads: the preferred proxied mode (h2, keep-alive,
    HTTP/1.0, then the spec's) with the first of the spec's TLS versions its origin mode
    serves directly."""
    if "proxy" not in spec.topologies:
        return None
    proxied = [m for m in spec.resolved_modes if m.runs_in("proxy")]
    mode, tls = next(((m, t) for m in [*(m for m in modes.OVERHEAD_PREFERENCE if m in proxied), *proxied]
                      for t in spec.tls if t in m.origin.tls_in("direct")),
                     (proxied[0], spec.tls[0]))
    site = next(iter(sites))
    pair = []
    for topology in ("direct", "proxy"):
        c = Condition(site, mode.origin if topology == "direct" else mode, topology, unshaped.name, "cold",
                      tls, spec.resolved_encodings[0])
        found = _visit(spec, sites[site], servers, c)
        # cold even with a warm pool: the proxy's cost per request, handshakes included
        pair.append(found if found.upstream is None else replace(found, upstream=replace(found.upstream, pool="cold")))
    return Overhead(site, mode, tls, unshaped,
                    tuple((index >= 0, v) for index in range(-1, OVERHEAD_LOADS) for v in pair))


def _visit(spec: Experiment, site: GeneratedSite | Site, servers: serverplan.ServerPlan, c: Condition) -> Visit:
    url = serverplan.browser_url(site.entry, c.tls, c.topology)
    upstream, quic = None, ""
    if c.topology == "proxy":
        rules = PROXIED_RULES
        settings = spec.proxy_settings
        bindings = servers.select(c.mode.origin, c.tls, c.site, encoding=c.encoding, version=c.version)
        upstream = Upstream(c.mode, settings.connections, settings.depth, c.tls == modes.CLEARTEXT,
                            tuple((b.origin, b.ip) for b in bindings), settings.pool, c.key)
    else:
        rules = servers.host_resolver_rules(c.mode, c.tls, c.site, True, encoding=c.encoding, version=c.version)
        if c.mode.quic:
            quic = servers.force_quic_on(c.mode, c.tls, c.site, encoding=c.encoding, version=c.version)
    document = url.split("/", 3)[3] if url.count("/") >= 3 else ""
    # A warm load of a later version: its changed files must come anew (as deltas, in dcz)
    changed = frozenset(site.manifest.changed.get(c.version, ())) if c.cache == "warm" else frozenset()
    return Visit(c, url, rules, c.topology == "proxy", quic, upstream, "/" + document, changed,
                 site.manifest.versions > 1, site.recording if isinstance(site, Site) else None,
                 isinstance(site, Site) and site.app is not None)
