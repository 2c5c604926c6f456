"""Per-condition summaries of a run: the one summary every reader shows (the text and HTML
reports, compare, export; the dashboards' SQL is tested against it), and the `report`
JSON contract it gives.

Pure: load rows (`results.rows.LoadRow`) and the plan in; no database. Only measured
loads count (warm-ups are skipped). A load that failed (`ok` false) or was flagged is
left out of the statistics and counted instead, never hidden: `n` + `flagged` + `failed`
= measured loads recorded, and `planned` says how many there should be.

A run measured by several lab machines (`run --shard`, `run --ray`) is one run with the
machine as a stratum: a condition's statistics are over all its machines' loads, and where
they come from two or more, its JSON adds each machine's medians (`machines`) and its
warnings say when one machine's loads differ from the others' beyond noise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from pagebench.analysis import stats
from pagebench.core import encodings, modes
from pagebench.core.devices import DEFAULT_DEVICE
from pagebench.core.quantiles import percentile
from pagebench.core.records import CACHE_STATES, CONDITION_FIELDS, METRICS, Condition, PlannedLoad
from pagebench.results.rows import LoadRow

if TYPE_CHECKING:
    from pagebench.results.store import Store

#: The values every run stored before encodings and devices has: shown nowhere, so its reports stay.
DEFAULTS: dict[str, str] = {"encoding": encodings.IDENTITY.name, "version": "1", "device": DEFAULT_DEVICE}
#: Below this many usable loads a condition's numbers say little: the report says so.
MIN_N = 5
#: A load's machine where it names none (`LoadRow.machine` None): the run's host, which
#: measured every load of a run that was not sharded.
HOST = "(run host)"
#: The metric whose machines are set against each other (`differing_machine`): the one
#: every reader leads with; and how surely one machine must differ to be named.
MACHINE_METRIC = "load_ms"
MACHINE_ALPHA = 0.01


@dataclass(frozen=True)
class Stats:
    """A metric over a condition's usable loads: median, p90, min, max (None: no values)."""

    median: float | None = None
    p90: float | None = None
    min: float | None = None
    max: float | None = None


def describe(values: Iterable[float | None]) -> Stats:
    """Stats of the values that are not None (all None when none are)."""
    present = [value for value in values if value is not None]
    if not present:
        return Stats()
    return Stats(percentile(present, 50), percentile(present, 90), min(present), max(present))


@dataclass(frozen=True)
class MachineSummary:
    """A condition's used loads measured by one lab machine: how many, and each metric's median."""

    n: int
    medians: dict[str, float | None]  # by METRICS name; None: no load has it


@dataclass(frozen=True)
class MachineDifference:
    """A lab machine whose loads of a condition differ from the other machines' beyond
    noise (`ConditionSummary.differing_machine`), in MACHINE_METRIC."""

    machine: str
    median: float
    others_median: float  # of the other machines' loads together
    others: tuple[str, ...]  # the other machines, by name
    p: float  # Mann-Whitney, Holm-adjusted over the machines tested
    tested: int  # machines tested: Holm's family (1 for two machines: their two tests are one)


@dataclass(frozen=True)
class ConditionSummary:
    """One condition of a run: its loads sorted into used, flagged and failed (each in
    load order), and the statistics of the used ones."""

    condition: Condition
    planned: int  # measured loads planned (warm-ups not counted)
    used: tuple[LoadRow, ...]  # ok and not flagged: what the statistics are made of
    flagged: tuple[LoadRow, ...]  # ok but flagged: left out, counted
    failed: tuple[LoadRow, ...]  # not ok: left out, counted
    metrics: dict[str, Stats]  # by METRICS name
    load_over_bound: Stats  # how much of the load time the protocol and the link explain (bound.py)

    @property
    def n(self) -> int:
        return len(self.used)

    def medians(self) -> dict[str, float | None]:
        """Each metric's median over the used loads (None: none has it): what budgets check."""
        return {metric: stats.median for metric, stats in self.metrics.items()}

    def values(self, metric: str) -> list[float]:
        """A metric's values over the used loads that have it, in load order."""
        return [value for row in self.used if (value := row.metric(metric)) is not None]

    def machines(self) -> dict[str, tuple[LoadRow, ...]]:
        """The used loads by the lab machine that measured them (HOST: the run's host), by
        machine name, each in load order."""
        found: dict[str, list[LoadRow]] = {}
        for row in self.used:
            found.setdefault(row.machine or HOST, []).append(row)
        return {name: tuple(found[name]) for name in sorted(found)}

    def by_machine(self, metric: str) -> dict[str, list[float]]:
        """A metric's values over the used loads that have it, by machine (`machines`; one
        machine: `values`): what the intervals resample (`stats.machines_bootstrap_ci`)."""
        found = {name: [value for row in rows if (value := row.metric(metric)) is not None]
                 for name, rows in self.machines().items()}
        return {name: values for name, values in found.items() if values}

    def machine_medians(self) -> dict[str, MachineSummary]:
        """Each machine's n and medians where two or more machines measured the used loads;
        {} where one did (every run that was not sharded)."""
        machines = self.machines()
        if len(machines) < 2:
            return {}
        return {name: MachineSummary(len(rows), {metric: describe(row.metric(metric) for row in rows).median
                                                 for metric in METRICS})
                for name, rows in machines.items()}

    def differing_machine(self) -> MachineDifference | None:
        """The machine whose MACHINE_METRIC differs from the other machines' beyond noise,
        if one does: each machine's loads against the rest's (Mann-Whitney) where both have
        at least MIN_N, Holm-corrected over the machines tested, below MACHINE_ALPHA. Of two
        machines the two tests are one (the same samples, swapped): no correction. The most
        different alone is named (the smallest p, then the median farthest from the rest's,
        so of two the slower): with one machine off, another against a rest that holds it
        can cross alpha too."""
        values = self.by_machine(MACHINE_METRIC)
        tested: dict[str, tuple[float, float, float]] = {}  # machine: its median, the rest's, p
        for name, mine in values.items():
            rest = [value for other, theirs in values.items() if other != name for value in theirs]
            if len(mine) >= MIN_N and len(rest) >= MIN_N:
                tested[name] = (percentile(mine, 50), percentile(rest, 50), stats.mann_whitney(mine, rest).p)
        family = 1 if len(values) == 2 else len(tested)
        found = [p for *_, p in tested.values()]
        adjusted = dict(zip(tested, found if family == 1 else stats.holm(found)))
        flagged = [name for name in tested if adjusted[name] < MACHINE_ALPHA]
        if not flagged:
            return None

        def distance(name: str) -> float:
            median, others, _ = tested[name]
            return abs(median / others - 1) if others else math.inf

        name = min(flagged, key=lambda name: (adjusted[name], -distance(name)))
        median, others, _ = tested[name]
        return MachineDifference(name, median, others, tuple(other for other in values if other != name),
                                 adjusted[name], family)

    def machine_warning(self) -> str | None:
        """The line saying which machine differs (`differing_machine`), if one does."""
        found = self.differing_machine()
        if found is None:
            return None
        against = f"{found.others[0]}'s" if len(found.others) == 1 else "the others'"
        holm = f", Holm over {found.tested} machines" if found.tested > 1 else ""
        return (f"{label(self.condition)}: machine {found.machine}'s {MACHINE_METRIC} differs from {against} "
                f"(median {found.median:.0f} vs {found.others_median:.0f} ms, p = {found.p:.2g}{holm}): "
                "its loads may not be one sample with theirs")

    def as_json(self) -> dict[str, Any]:
        """The contract's condition: {site, mode, topology, profile, cache, tls, encoding,
        version, device, planned, n, flagged, failed, metrics: {metric: {median, p90, min, max}},
        machines, load_over_bound} (version an int, flagged and failed counts). `machines`
        only where two or more lab machines measured the used loads (a sharded run):
        {machine: {n, medians: {metric: median}}} (`machine_medians`); absent otherwise."""
        machines = self.machine_medians()
        return {**self.condition.as_names(), "planned": self.planned, "n": self.n, "flagged": len(self.flagged),
                "failed": len(self.failed),
                "metrics": {name: asdict(described) for name, described in self.metrics.items()},
                **({"machines": {name: asdict(machine) for name, machine in machines.items()}} if machines else {}),
                "load_over_bound": asdict(self.load_over_bound)}


@dataclass(frozen=True)
class Summary:
    """A run's conditions in report order, planned ones without loads yet included (n = 0)."""

    run: str
    conditions: tuple[ConditionSummary, ...]

    def as_json(self) -> dict[str, Any]:
        """The report contract: {"run", "conditions": [...]} (ConditionSummary.as_json)."""
        return {"run": self.run, "conditions": [c.as_json() for c in self.conditions]}

    def varying(self) -> list[str]:
        """The condition fields with more than one value in the run (the mode when none
        has): what names a condition in the reports' tables and charts."""
        return [f for f in CONDITION_FIELDS
                if len({str(getattr(c.condition, f)) for c in self.conditions}) > 1] or ["mode"]

    def constant(self) -> list[str]:
        """'field value' of the fields every condition shares (defaults left out), that
        the reports state once."""
        if not self.conditions:
            return []
        first, varying = self.conditions[0].condition, self.varying()
        return [f"{f} {getattr(first, f)}" for f in CONDITION_FIELDS
                if f not in varying and not is_default(f, getattr(first, f))]

    def warnings(self) -> list[str]:
        """One advisory line per condition whose numbers should not be trusted as they are."""
        lines = []
        for c in self.conditions:
            reasons = []
            recorded = c.n + len(c.flagged) + len(c.failed)
            if recorded < c.planned:
                reasons.append(f"{recorded} of {c.planned} planned loads recorded: resume the run")
            if c.n < MIN_N:
                excluded = len(c.flagged) + len(c.failed)
                why = f" ({excluded} flagged or failed left out)" if excluded else ""
                reasons.append(f"n={c.n}{why}: can't tell: n too small (want at least {MIN_N})")
            if reasons:
                lines.append(f"{label(c.condition)}: " + "; ".join(reasons))
        return lines + self.machine_warnings()

    def machine_warnings(self) -> list[str]:
        """One line per condition where a lab machine's loads differ from the other
        machines' beyond noise (`ConditionSummary.differing_machine`)."""
        return [line for c in self.conditions if (line := c.machine_warning()) is not None]


def summarize(run_id: str, loads: Iterable[LoadRow], plan: Iterable[PlannedLoad] = ()) -> Summary:
    """Every condition planned or loaded, its measured loads sorted and described."""
    planned: dict[Condition, int] = {}
    for item in plan:
        planned[item.condition] = planned.get(item.condition, 0) + (0 if item.warmup else 1)
    sorted_loads: dict[Condition, tuple[list[LoadRow], list[LoadRow], list[LoadRow]]] = {
        condition: ([], [], []) for condition in planned}
    for load in loads:
        if load.warmup:
            continue
        used, flagged, failed = sorted_loads.setdefault(load.condition, ([], [], []))
        (used if load.ok and not load.flagged else failed if not load.ok else flagged).append(load)
    summaries = [
        ConditionSummary(
            condition, planned.get(condition, 0), tuple(used), tuple(flagged), tuple(failed),
            {metric: describe(row.metric(metric) for row in used) for metric in METRICS},
            describe(row.load_ms / row.bound_ms for row in used if row.bound_ms and row.load_ms is not None))
        for condition, (used, flagged, failed) in sorted_loads.items()]
    return Summary(run_id, tuple(sorted(summaries, key=lambda c: order(c.condition))))


def of_run(store: Store, run_id: str) -> Summary:
    """The summary of a stored run: its measured loads against its plan, less the loads
    a stopping rule left out (`repetitions: auto`: stopped early, not owed)."""
    stopped = store.stopped_seqs(run_id)
    return summarize(run_id, store.loads(run_id), [p for p in store.plan(run_id) if p.seq not in stopped])


def halves(summary: Summary, pairs: Mapping[str, str]) -> tuple[Summary, Summary]:
    """A run with an interleaved baseline (`run --baseline`; `pairs`: twin site -> the
    spec's site, the run's meta `baseline`) as two summaries to compare: the twins'
    conditions under the names of the sites they stand for, and those sites' own. Sites
    without a twin are in neither."""
    base = tuple(replace(c, condition=replace(c.condition, site=pairs[c.condition.site]))
                 for c in summary.conditions if c.condition.site in pairs)
    own = tuple(c for c in summary.conditions if c.condition.site in pairs.values())
    return Summary(summary.run, base), Summary(summary.run, own)


def without_twins(summary: Summary, pairs: Mapping[str, str]) -> Summary:
    """The run's own conditions: what its budgets are checked against (a baseline's
    twins measure the baseline, not the change)."""
    return Summary(summary.run, tuple(c for c in summary.conditions if c.condition.site not in pairs))


def is_default(name: str, value: Any) -> bool:
    """Is this the value every run before encodings and devices had (shown nowhere, so old reports stay)?"""
    return name in DEFAULTS and str(value) == DEFAULTS[name]


def shown(name: str, value: Any) -> str:
    """A field's value as the reports show it: versions as `v2`, the rest as they are."""
    return f"v{value}" if name == "version" else str(value)


def _rank(value: str, known: Sequence[str]) -> tuple[int, str]:
    return (known.index(value), "") if value in known else (len(known), value)


def order(condition: Condition) -> tuple[Any, ...]:
    """Stable report order: site, mode (as the modes table lists them), profile, cache, tls, topology,
    version, encoding (as the encodings table lists them), device (desktop first)."""
    return (condition.site, modes.rank(condition.mode), condition.profile,
            _rank(condition.cache, CACHE_STATES), condition.tls, condition.topology, condition.version,
            encodings.ENCODINGS.index(condition.encoding), _rank(condition.device, (DEFAULT_DEVICE,)))


def label(condition: Condition) -> str:
    """One-line name of a condition, e.g. 'demo h2 direct 3g cold tls1.3', then its encoding,
    version and device when not identity, 1 and desktop ('demo h2 direct 3g warm tls1.3 dcz v2
    moto-g-power')."""
    extra = [shown(name, getattr(condition, name)) for name in ("encoding", "version", "device")
             if not is_default(name, getattr(condition, name))]
    return " ".join([*(str(getattr(condition, name)) for name in CONDITION_FIELDS[:5]),
                     modes.tls_label(condition.tls), *extra])
