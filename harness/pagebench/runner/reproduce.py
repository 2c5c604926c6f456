"""`pagebench reproduce`'s runs: each scenario's, one after the other, each an ordinary
run (`runner.run`) that says in its meta what it measures, stopped by its scenario's rule.
Across a fleet (`reproduce --ray`), each scenario variant's runs are one part, on one
machine: a variant's stopping rule reads its earlier runs, and its comparisons (era
against today's runs are of other variants) stay within one machine's loads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pagebench.analysis.reproduce import stopping
from pagebench.analysis.reproduce.verdicts import NothingToResume, stored_reproduction
from pagebench.core.spec.model import SpecError
from pagebench.core.records import LoadResult, PlannedLoad
from pagebench.results.store import Store
from pagebench.link.emulator import choose_backend
from pagebench.runner import fleet
from pagebench.runner.environment import environment
from pagebench.runner.prepare import Prepared
from pagebench.runner.run import BY_MACHINE, Progress, new_run_id
from pagebench.runner.runs import resume, start
from pagebench.runner.shards import VERSIONED, check_versions


#: (scenario, variant, run label) of a reproduction, and its run's prepared spec.
Reproduction = list[tuple[tuple[str, str, str], Prepared]]


def new_reproduction_id() -> str:
    return "reproduction-" + new_run_id()


def reproduce(store: Store, runs: Reproduction, progress: Progress,
              created: Callable[[str], None] = lambda _: None, about: dict[str, Any] | None = None,
              reproduction: str | None = None, stored: Mapping[tuple[str, str, str], str] | None = None,
              by_machine: bool = False) -> dict[tuple[str, str, str], str]:
    """`pagebench reproduce`: each scenario's runs one after the other, each an ordinary
    run (its own lab) whose meta says which reproduction, scenario, variant and label it
    measures (and `about`: what the reproduction was asked, for a resume). A run of
    `repetitions: auto` stops by its scenario's rule (`analysis/reproduce/stopping.py`).
    Resuming `reproduction`, its `stored` runs are kept when complete and resumed when
    not; the others are started. Progress counts planned loads across all of them (a
    load stopped early counts as done). `by_machine`: the runs' loads name the machine
    that measured them (a part of a reproduction spread over machines)."""
    reproduction = reproduction or new_reproduction_id()
    total, done_before = sum(len(p.loads) for _, p in runs), 0
    ids: dict[tuple[str, str, str], str] = {}
    for key, prepared in runs:
        scenario, variant, label = key

        def counted(done: int, _total: int, planned: PlannedLoad, result: LoadResult | None, status: str,
                    offset: int = done_before, where: str = " ".join(filter(None, key))) -> None:
            progress(offset + done, total, planned, result, f"{where}: {status}" if status else where)

        def decide(run_id: str, _rounds: int, key: tuple[str, str, str] = key, prepared: Prepared = prepared) -> bool:
            assert prepared.spec.sequential is not None
            return stopping.settled(store, {**ids, key: run_id}, key[0], key[1], prepared.spec.sequential.level)

        run_id = (stored or {}).get(key)
        if run_id is None:
            meta = {"reproduce": {"scenario": scenario, "variant": variant, "label": label,
                                  "reproduction": reproduction, **(about or {})},
                    **({BY_MACHINE: True} if by_machine else {})}
            run_id = start(store, prepared, counted, created=created, meta_extra=meta, decide=decide)
        else:
            created(run_id)
            if store.experiment(run_id).status != "complete":
                resume(store, run_id, counted, decide=decide, prepared=prepared)
            counted(len(prepared.loads), total, prepared.loads[0], None, "kept")
        ids[key] = run_id
        done_before += len(prepared.loads)
    return ids


def variants(runs: Reproduction) -> dict[str, Reproduction]:
    """A reproduction's runs by scenario variant ("000-transfer/era"), each in its order."""
    found: dict[str, Reproduction] = {}
    for key, prepared in runs:
        found.setdefault(f"{key[0]}/{key[1]}", []).append((key, prepared))
    return found


def stored_runs(store: Store, reproduction: str) -> dict[tuple[str, str, str], str]:
    """The runs reproduction `reproduction` has made so far (none yet: empty)."""
    try:
        return stored_reproduction(store, reproduction).runs
    except NothingToResume:
        return {}


def versions_of(store: Store, runs: Mapping[tuple[str, str, str], str]) -> dict[str, Any] | None:
    """The versions a reproduction measured with (its first run's): None before its first run."""
    if not runs:
        return None
    first = min((store.experiment(run_id) for run_id in runs.values()), key=lambda run: (run.created_at, run.run_id))
    return {name: getattr(first, name) for name in VERSIONED}


def joined(store: Store, reproduction: str, allow_mixed: bool, backend: str | None) -> dict[tuple[str, str, str], str]:
    """The runs so far of the reproduction this machine measures a part of (`reproduce
    --scenario`); refused (SpecError) if its versions differ from those the reproduction
    measured with, unless `allow_mixed`."""
    runs = stored_runs(store, reproduction)
    stored = versions_of(store, runs)
    if stored is not None:
        check_versions(f"in reproduction {reproduction}", stored, environment() | {"backend": choose_backend(backend)},
                       allow_mixed)
    return runs


def on_fleet(store: Store, db: str, runs: Reproduction, address: str, argv: tuple[str, ...], reproduction: str | None,
             allow_mixed: bool, show: Callable[[fleet.Status], None], say: Callable[[str], None]) -> str:
    """`reproduce --ray`: each scenario variant with runs left (all of them, or those of
    `reproduction` not yet complete) as a part on one accepted lab machine of the cluster,
    `pagebench reproduce ARGV --scenario S/V` there, the largest first; its id."""
    reproduction = reproduction or new_reproduction_id()
    backend = runs[0][1].spec.backend
    ray = fleet.connect(address)
    stored = versions_of(store, stored_runs(store, reproduction))
    where = f"in reproduction {reproduction}" if stored else "on the driver"
    nodes = fleet.lab_machines(ray, backend, where, stored or environment() | {"backend": choose_backend(backend)},
                               allow_mixed, say)
    by_variant = variants(runs)
    made = stored_runs(store, reproduction)
    left = [name for name, group in by_variant.items()
            if not all(key in made and store.experiment(made[key]).status == "complete" for key, _ in group)]
    left.sort(key=lambda name: -sum(len(prepared.loads) for _, prepared in by_variant[name]))
    options = (*argv, "--db", db, "--reproduction", reproduction, *(["--allow-mixed"] if allow_mixed else []))
    parts = [fleet.Part(name, (*options, "--scenario", name)) for name in left]
    total = sum(len(prepared.loads) for _, prepared in runs)
    say(f"reproduction {reproduction}: {len(parts)} scenario variant(s) on {len(nodes)} lab machine(s): "
        + ", ".join(node.label for node in nodes) + (f" ({fleet.SHARED})" if fleet.shared(nodes) else ""))

    def progress() -> fleet.Status:
        status = fleet.Status(0, total)
        for run_id in stored_runs(store, reproduction).values():
            experiment = store.experiment(run_id)
            if fleet.shared(nodes):
                fleet.note_shared(store, run_id)
            for name, count in store.done_by_machine(run_id).items():
                status.by_machine[name or "?"] = status.by_machine.get(name or "?", 0) + count
            status.done += experiment.planned if experiment.status == "complete" else len(
                store.done_seqs(run_id) | store.stopped_seqs(run_id))
        return status

    fleet.drive(ray, parts, nodes, progress, show, say, f"--resume {reproduction} --ray")
    progress()  # the runs made since the last look noted too
    return reproduction


def part(runs: Reproduction, name: str) -> Reproduction:
    """The runs of scenario variant `name` ("000-transfer/era"), or a SpecError naming those there are."""
    found = variants(runs)
    if name not in found:
        raise SpecError(f"--scenario {name}: not a scenario variant of these seeds: one of {', '.join(found)}")
    return found[name]
