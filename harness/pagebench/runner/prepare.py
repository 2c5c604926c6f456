"""Gathering a run's inputs, the I/O around the pure planner (`core/spec/plan.py`): the
spec's sites read from disk, the profile catalogue and the device table (`prepare`, before anything runs:
nothing written, so a spec is checked without the machine), then the sites written for
the servers (`plan_run`, once the run holds the machine and has loads left)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pagebench.core.devices import DESKTOP, Device, Reference
from pagebench.core.profiles import Profile
from pagebench.core.records import PlannedLoad
from pagebench.core.servers.replay import think_note
from pagebench.core.sites import kinds
from pagebench.core.sites.corpus import CorpusRef
from pagebench.core.sites.folder import ExternalHost, FolderSite
from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.core.spec import model as spec_mod
from pagebench.core.spec import plan as planner
from pagebench.core.spec import shard as shard_mod
from pagebench.core.spec.shard import Shard
from pagebench.core.spec.baseline import twinned
from pagebench.lab import corpus
from pagebench.lab import sites as sitefiles
from pagebench.yamlfiles import builtin_devices, builtin_profiles


@dataclass(frozen=True)
class Prepared:
    """A validated experiment, ready to run: nothing has been started or written yet."""

    spec: spec_mod.Experiment
    document: dict[str, Any]
    sites: dict[str, GeneratedSite | Site]
    profiles: dict[str, Profile]
    loads: list[PlannedLoad]  # the seeded order, stored with the run
    notes: list[str]  # said before the run and stored with it
    #: Each site's kind as the run's meta keeps it (`site_meta`): what the report says of it.
    site_kinds: dict[str, dict[str, Any]]
    #: The spec file's directory, absolute (an app site runs there; a resumed run finds it
    #: in the run's meta, `spec_dir`).
    spec_dir: Path = Path(".")
    #: An interleaved baseline's twins: twin site -> the spec's site (`core.spec.baseline`).
    pairs: dict[str, str] = field(default_factory=dict)
    #: The spec's devices by name, in spec order (`core.devices`).
    devices: dict[str, Device] = field(default_factory=lambda: {DESKTOP.name: DESKTOP})
    #: What their CPU slowdowns are stated against (the device table's).
    reference: Reference | None = None


@dataclass(frozen=True)
class Baseline:
    """A baseline spec (`run --baseline`): its document, its directory (its paths are
    relative to it) and its name in messages."""

    document: dict[str, Any]
    dir: Path
    origin: str


def prepare(document: dict[str, Any], origin: str, spec_dir: Path | None = None,
            baseline: Baseline | None = None, status: Callable[[str], None] = lambda _: None) -> Prepared:
    """Validate everything a run needs (spec, sites, profiles) before touching the machine.
    `spec_dir`: the spec file's directory, which the paths its sites name are relative to
    and where an app site runs; the document kept (and stored with the run) names the paths
    absolute, so that a resumed run, or a split lab's sites role, finds the same folders.
    `baseline`: its sites join the run as twins of the spec's (`core.spec.baseline`).
    `status` hears what takes time before the run: a corpus's pages imported (once, then
    kept: `lab.corpus`)."""
    if spec_dir is not None and isinstance(document.get("sites"), list):
        document = {**document, "sites": [kinds.anchored(entry, spec_dir.absolute()) for entry in document["sites"]]}
    pairs: dict[str, str] = {}
    said: list[str] = []
    if baseline is not None and isinstance(document.get("sites"), list):
        base_sites = baseline.document.get("sites") if isinstance(baseline.document, dict) else None
        twins = twinned(document["sites"], base_sites, baseline.dir.absolute(), baseline.origin)
        document, pairs, said = {**document, "sites": twins.sites}, twins.pairs, twins.notes
    spec = spec_mod.parse(document, origin)
    where = Path(spec_dir if spec_dir is not None else ".").resolve()
    found: dict[str, GeneratedSite | Site] = {}
    site_kinds: dict[str, dict[str, Any]] = {}
    notes = planner.notes(spec) + said
    for index, entry in enumerate(spec.sites):
        try:
            named = _found(entry, where, status, notes)
        except ValueError as error:
            name = entry.get("name") if isinstance(entry, dict) else None
            if baseline is not None and name in pairs:  # the baseline spec's entry, as its twin
                raise spec_mod.SpecError(f"{baseline.origin}: site {pairs[name]} (its twin {name}): {error}") from None
            raise spec_mod.SpecError(f"{origin}: sites[{index}]: {error}") from None
        for kind, site, extra in named:
            if site.name in found:
                raise spec_mod.SpecError(f"{origin}: sites[{index}]: site {site.name} is named twice")
            found[site.name] = site
            planner.check_site(spec, site, origin, index)
            site_kinds[site.name] = site_meta(kind, site) | extra
            if isinstance(site, FolderSite):
                notes += unserved_notes(site.name, sitefiles.external(site))
            if isinstance(site, Site) and (think := think_note(site, spec.resolved_modes)) is not None:
                notes.append(think)
    profiles = spec_mod.resolve_profiles(spec, builtin_profiles(), origin)
    table = builtin_devices()
    devices = spec_mod.resolve_devices(spec, table, origin)
    loads = planner.loads(spec, planner.conditions(spec, list(found), profiles))
    return Prepared(spec, document, found, {p.name: p for p in profiles}, loads, notes, site_kinds, where, pairs,
                    {d.name: d for d in devices}, table.reference)


def _found(entry: str | dict[str, Any], where: Path, status: Callable[[str], None],
           notes: list[str]) -> list[tuple[kinds.SiteKind, GeneratedSite | Site, dict[str, Any]]]:
    """The sites a spec entry names, each with its kind and what the run's meta keeps
    beyond `site_meta`: one, or a corpus's pages (a HAR left out is a note)."""
    for kind, ref in kinds.candidates(entry):
        if isinstance(ref, CorpusRef):
            return [(kind, page.site, {"har": str(page.har), "synthesized": page.synthesized, **page.traits})
                    for page in corpus.pages(ref, status=status, left_out=notes.append)]
    kind, site = sitefiles.found(entry, where)
    return [(kind, site, {})]


def unserved_notes(name: str, hosts: Iterable[ExternalHost]) -> list[str]:
    """What a run says before its loads about the hosts a folder site names that the lab
    does not serve: one line per host the page fetches, one for those only its scripts
    name (a bundle names many it never requests; `site show` lists each)."""
    unserved = [host for host in hosts if host.served_as is None]
    notes = [f"site {name}: {host.line()}: requests to it fail at once (the lab has no internet)"
             for host in unserved if host.fetched]
    named = [host.host for host in unserved if not host.fetched]
    if named:
        shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
        notes.append(f"site {name}: {len(named)} host(s) only its scripts name are not served ({shown}; "
                     f"`pagebench site show` lists them): a request a script makes to one fails at once")
    return notes


def site_meta(kind: kinds.SiteKind, site: GeneratedSite | Site) -> dict[str, Any]:
    """What the run's meta keeps of a site: its kind, the kind's summary (the report's
    words) and, for a site of one's own, where it was."""
    where = {"path": str(site.root)} if isinstance(site, Site) else {}
    if isinstance(site, FolderSite):
        where["digest"] = site.digest
    return {"kind": kind.name, "summary": kind.summary, **where}


def plan_run(prepared: Prepared, done: Iterable[int], shard: Shard | None = None) -> planner.RunPlan:
    """The plan of the loads not `done` (of `shard`, when one), the sites on disk first (a
    generated site is written once; a site directory gets its missing precompressed sidecars)."""
    on_disk = [sitefiles.materialize(site) for site in prepared.sites.values()]
    return planner.run_plan(prepared.spec, prepared.sites, on_disk, list(prepared.profiles.values()),
                            builtin_profiles()["none"], frozenset(done), tuple(prepared.devices.values()), shard)


def sharded(prepared: Prepared, count: int) -> Prepared:
    """The run in `count` shards: its stored plan holds every shard's warm-ups (`core.spec.shard`)."""
    shard_mod.check(prepared.loads, count, prepared.spec.sequential is not None)
    return replace(prepared, loads=shard_mod.sharded(prepared.loads, count))


def encoding_costs(sites: Iterable[Site]) -> dict[str, dict[str, dict[str, float]]]:
    """What each encoding cost to make, per site on disk (seed 001's table 6-4)."""
    return {site.name: sitefiles.encoding_cost(site) for site in sites}
