"""A sharded run's joining (`run --shard K/N`): which run the shards of one experiment
share, and whether this machine may measure for it. The plan's split itself is pure
(`core.spec.shard`); the fleet that runs the shards, `runner.fleet`."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pagebench.core.spec.model import SpecError
from pagebench.results.store import Store
from pagebench.runner.environment import machine
from pagebench.runner.prepare import Prepared

#: What every machine of a sharded run must share with the run's first (its stored
#: versions) for their loads to be one sample: the browser build, the kernel (its TCP),
#: pagebench, and the link's backend.
VERSIONED = ("chromium_version", "kernel", "pagebench_version", "backend")


def run_id_of(prepared: Prepared, count: int) -> str:
    """The run the shards of one experiment join without `--run`: named by its spec (as
    stored), seed and shard count, so each machine finds the same one."""
    key = json.dumps([prepared.document, prepared.spec.seed, count], sort_keys=True, default=str)
    return f"shards-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def check_versions(where: str, stored: dict[str, Any], here: dict[str, Any], allow_mixed: bool) -> list[str]:
    """A machine's differences (`here`, its `machine` name among them, else this one's)
    from the versions `stored` `where` ("in run R", "on the driver"), one line each;
    refused (SpecError, before anything is measured) unless `allow_mixed`."""
    found = [f"{name} is {here.get(name)!r} here, {stored.get(name)!r} {where}"
             for name in VERSIONED if here.get(name) != stored.get(name)]
    if found and not allow_mixed:
        raise SpecError(f"machine {here.get('machine') or machine()}: {found[0]}: refused (its loads would not be "
                        f"one sample with the others'; --allow-mixed measures anyway)")
    return found


def joined(store: Store, run_id: str, here: dict[str, Any], allow_mixed: bool) -> None:
    """This machine joins the stored sharded run `run_id` if its versions match (or are
    allowed to differ: then the run's meta keeps the difference under `mixed`)."""
    experiment = store.experiment(run_id)
    stored = {name: getattr(experiment, name) for name in VERSIONED}
    mixed = check_versions(f"in run {run_id}", stored, here, allow_mixed)
    if mixed:
        store.note(run_id, mixed={**experiment.meta.get("mixed", {}), machine(): mixed})
