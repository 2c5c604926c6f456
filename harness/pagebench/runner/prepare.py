"""Gathering a run's inputs, the I/O around the pure planner (`core/spec/plan.py`): the
spec's sites read from disk and the profile catalogue (`prepare`, before anything runs:
nothing written, so a spec is checked without the machine), then the sites written for
the servers (`plan_run`, once the run holds the machine and has loads left)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.profiles import Profile
from pagebench.core.records import PlannedLoad
from pagebench.core.sites.model import GeneratedSite, Site
from pagebench.core.spec import model as spec_mod
from pagebench.core.spec import plan as planner
from pagebench.lab import sites as sitefiles
from pagebench.yamlfiles import builtin_profiles


@dataclass(frozen=True)
class Prepared:
    """A validated experiment, ready to run: nothing has been started or written yet."""

    spec: spec_mod.Experiment
    document: dict[str, Any]
    sites: dict[str, GeneratedSite | Site]
    profiles: dict[str, Profile]
    loads: list[PlannedLoad]  # the seeded order, stored with the run
    notes: list[str]  # said before the run and stored with it
    #: The spec file's directory, absolute (an app site runs there; a resumed run finds it
    #: in the run's meta, `spec_dir`).
    spec_dir: Path = Path(".")


def prepare(document: dict[str, Any], origin: str, spec_dir: Path = Path(".")) -> Prepared:
    """Validate everything a run needs (spec, sites, profiles) before touching the machine;
    `spec_dir` is the spec file's directory."""
    spec = spec_mod.parse(document, origin)
    spec_dir = Path(spec_dir).resolve()
    found: dict[str, GeneratedSite | Site] = {}
    for index, entry in enumerate(spec.sites):
        try:
            site = sitefiles.resolve(entry, spec_dir)
        except ValueError as error:
            raise spec_mod.SpecError(f"{origin}: sites[{index}]: {error}") from None
        found[site.name] = site
        planner.check_site(spec, site, origin, index)
    profiles = spec_mod.resolve_profiles(spec, builtin_profiles(), origin)
    loads = planner.loads(spec, planner.conditions(spec, list(found), profiles))
    return Prepared(spec, document, found, {p.name: p for p in profiles}, loads, planner.notes(spec), spec_dir)


def plan_run(prepared: Prepared, done: Iterable[int]) -> planner.RunPlan:
    """The plan of the loads not `done`, the sites on disk first (a generated site is
    written once; a site directory gets its missing precompressed sidecars)."""
    on_disk = [sitefiles.materialize(site) for site in prepared.sites.values()]
    return planner.run_plan(prepared.spec, prepared.sites, on_disk, list(prepared.profiles.values()),
                            builtin_profiles()["none"], frozenset(done))


def encoding_costs(sites: Iterable[Site]) -> dict[str, dict[str, dict[str, float]]]:
    """What each encoding cost to make, per site on disk (seed 001's table 6-4)."""
    return {site.name: sitefiles.encoding_cost(site) for site in sites}
