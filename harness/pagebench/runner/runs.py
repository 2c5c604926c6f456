"""A run begun, joined or resumed: created in the store (its plan, meta and this machine's
versions), then its loads left measured by a `Runner` (`runner.run`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pagebench.core.sites.model import Site
from pagebench.core.spec import plan as planner
from pagebench.core.spec.model import SpecError
from pagebench.core.spec.shard import Shard
from pagebench.lab.build import Roles
from pagebench.link.emulator import choose_backend
from pagebench.link.plan import SPIN_US, check_backend_profile
from pagebench.results.store import Store
from pagebench.runner import shards
from pagebench.runner.environment import environment
from pagebench.runner.prepare import Prepared, prepare, sharded
from pagebench.runner.measured import Keep
from pagebench.runner.run import Decide, Progress, Runner, Say, new_run_id


def create(store: Store, prepared: Prepared, meta_extra: dict[str, Any] | None = None, run_id: str | None = None,
           exist_ok: bool = False) -> tuple[str, dict[str, Any]]:
    """The run in the store, planned (`exist_ok`: or joined, when stored with the same plan);
    its id and meta (this machine's versions among them)."""
    run_id = run_id or new_run_id()
    backend = choose_backend(prepared.spec.backend)
    for profile in prepared.profiles.values():
        check_backend_profile(backend, profile)  # before the run is created
    link = {"backend": backend, "delay_spin_us": SPIN_US if backend == "userspace" else None}
    apps = any(isinstance(site, Site) and site.app is not None for site in prepared.sites.values())
    extra = ((meta_extra or {}) | ({"spec_dir": str(prepared.spec_dir)} if apps else {})
             | ({"baseline": prepared.pairs} if prepared.pairs else {}))
    meta = environment() | planner.run_meta(prepared.spec, link, extra) | {"sites": prepared.site_kinds} | {
        "devices": {name: device.fields() for name, device in prepared.devices.items()}}
    store.create_experiment(run_id, prepared.document, meta, prepared.loads,
                            {name: p.fields() for name, p in prepared.profiles.items()}, exist_ok=exist_ok)
    return run_id, meta


def start(store: Store, prepared: Prepared, progress: Progress, roles: Roles | None = None,
          created: Callable[[str], None] = lambda _: None, meta_extra: dict[str, Any] | None = None,
          keep: Keep = Keep(), decide: Decide | None = None, say: Say = lambda _: None,
          shard: Shard | None = None, run_id: str | None = None, allow_mixed: bool = False) -> str:
    """Create the run in the store (`created` hears its id), then run it (in a split lab's
    `roles`, else natively). Returns the run id. `decide`: its stopping rule when
    `repetitions: auto` (default: the generic one, `analysis.sequential`); `say`: hears
    the lines to keep (a throttled device's calibration). `shard`: only that shard's loads,
    in the run the experiment's shards share (`run_id`, else `shards.run_id_of`: created by
    the first to come), refused if this machine's versions differ from the run's (unless
    `allow_mixed`)."""
    if shard is not None:
        prepared = sharded(prepared, shard.count)
        run_id = run_id or shards.run_id_of(prepared, shard.count)
        meta_extra = (meta_extra or {}) | {"shards": shard.count}
    run_id, meta = create(store, prepared, meta_extra, run_id, exist_ok=shard is not None)
    if shard is not None:
        shards.joined(store, run_id, meta, allow_mixed)
    created(run_id)
    Runner(store, run_id, prepared, progress, roles, keep, decide, say, shard).run()
    return run_id


def resume(store: Store, run_id: str, progress: Progress, roles: Roles | None = None, keep: Keep = Keep(),
           decide: Decide | None = None, prepared: Prepared | None = None, say: Say = lambda _: None,
           shard: Shard | None = None, allow_mixed: bool = False) -> None:
    """Finish a stored run: exactly the planned loads that are not yet recorded (nor
    stopped early); of a sharded run, those of `shard` (its machine checked as `start`
    does). `prepared`: its spec as the caller prepared it (a reproduction's).
    Its throttled devices are calibrated again: the host may not be the one it started on."""
    experiment = store.experiment(run_id)
    count = experiment.meta.get("shards")
    if (shard is None) != (count is None) or shard is not None and shard.count != count:
        raise SpecError(f"run {run_id}: " + (f"split in {count} shards: resume one with --shard K/{count}"
                                             if count else "not a sharded run: resume it without --shard"))
    if prepared is None:
        prepared = prepare(experiment.spec, f"run {run_id}", Path(experiment.meta.get("spec_dir", ".")))
    if shard is not None:
        prepared = sharded(prepared, shard.count)
        backend = choose_backend(prepared.spec.backend)
        shards.joined(store, run_id, environment() | {"backend": backend}, allow_mixed)
    stored = store.plan(run_id)
    if [(p.seq, p.condition.key, p.repetition) for p in stored] != [
        (p.seq, p.condition.key, p.repetition) for p in prepared.loads
    ]:
        raise SpecError(f"run {run_id}: its stored plan no longer matches its spec; cannot resume")
    Runner(store, run_id, prepared, progress, roles, keep, decide, say, shard).run()
