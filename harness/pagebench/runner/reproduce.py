"""`pagebench reproduce`'s runs: each scenario's, one after the other, each an ordinary
run (`runner.run`) that says in its meta what it measures, stopped by its scenario's rule."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pagebench.analysis.reproduce import stopping
from pagebench.core.records import LoadResult, PlannedLoad
from pagebench.results.store import Store
from pagebench.runner.prepare import Prepared
from pagebench.runner.run import Progress, new_run_id
from pagebench.runner.runs import resume, start


#: (scenario, variant, run label) of a reproduction, and its run's prepared spec.
Reproduction = list[tuple[tuple[str, str, str], Prepared]]


def new_reproduction_id() -> str:
    return "reproduction-" + new_run_id()


def reproduce(store: Store, runs: Reproduction, progress: Progress,
              created: Callable[[str], None] = lambda _: None, about: dict[str, Any] | None = None,
              reproduction: str | None = None, stored: Mapping[tuple[str, str, str], str] | None = None
              ) -> dict[tuple[str, str, str], str]:
    """`pagebench reproduce`: each scenario's runs one after the other, each an ordinary
    run (its own lab) whose meta says which reproduction, scenario, variant and label it
    measures (and `about`: what the reproduction was asked, for a resume). A run of
    `repetitions: auto` stops by its scenario's rule (`analysis/reproduce/stopping.py`).
    Resuming `reproduction`, its `stored` runs are kept when complete and resumed when
    not; the others are started. Progress counts planned loads across all of them (a
    load stopped early counts as done)."""
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
                                  "reproduction": reproduction, **(about or {})}}
            run_id = start(store, prepared, counted, created=created, meta_extra=meta, decide=decide)
        else:
            created(run_id)
            if store.experiment(run_id).status != "complete":
                resume(store, run_id, counted, decide=decide, prepared=prepared)
            counted(len(prepared.loads), total, prepared.loads[0], None, "kept")
        ids[key] = run_id
        done_before += len(prepared.loads)
    return ids
