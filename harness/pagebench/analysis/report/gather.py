"""What the HTML report shows, read from the store once (`gather`), and the run's one
summary seen as the page sees it (`views`): each condition with its loads that have a load
time, its median's bootstrap interval (a sharded run's: its machines resampled too) and the
profile's RTT.

`gather` reads one query per table plus one per condition for the waterfall of its median
load, so large runs stay fast; everything after it is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pagebench.analysis import encoding as encoding_mod
from pagebench.analysis import stats
from pagebench.analysis.summary import ConditionSummary, Summary, of_run, shown
from pagebench.core.records import Condition
from pagebench.results.rows import LinkCheckRow, LoadRow, ProxyOverheadRow, ResourceRow, RunRow
from pagebench.results.store import Store

#: A median's interval needs at least this many loads.
MIN_FOR_INTERVAL = 2


@dataclass(frozen=True)
class ReportData:
    """Everything the page shows, as values read from the store."""

    run_id: str
    experiment: RunRow
    summary: Summary
    profiles: Mapping[str, Mapping[str, Any]]  # profile name -> its fields
    link_checks: Sequence[LinkCheckRow]
    proxy_overheads: Sequence[ProxyOverheadRow]
    resources: Mapping[int, Sequence[ResourceRow]]  # load id -> its resources, for each median load
    #: Each condition against identity (`encoding.savings`), when the run has several encodings.
    encodings: Sequence[encoding_mod.EncodingSaving] = ()
    #: Load id -> its evidence as links from the page (`evidence.kept`), for the loads it links.
    evidence: Mapping[int, Any] = field(default_factory=dict)
    #: Load id -> its frames and progress curve (`filmstrip.gather`), for each median-SpeedIndex load.
    strips: Mapping[int, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ConditionView:
    """A condition's summary with what the page adds to it."""

    summary: ConditionSummary
    label: str  # the fields that vary in the run
    used: tuple[LoadRow, ...]  # the summary's used loads that have a load time
    flagged: tuple[LoadRow, ...]  # its flagged ones that have one (drawn apart, left out)
    ci: stats.Interval | None  # of the median load time; None below MIN_FOR_INTERVAL loads
    iqr: float | None
    rtt_ms: float | None  # the profile's

    @property
    def condition(self) -> Condition:
        return self.summary.condition

    @property
    def median(self) -> float | None:
        """The median load time: the summary's."""
        return self.summary.metrics["load_ms"].median

    @property
    def bound_ratio(self) -> float | None:
        return self.summary.load_over_bound.median


def gather(store: Store, run_id: str) -> ReportData:
    """What `html.render` needs, read from the store."""
    summary = of_run(store, run_id)
    profiles = {row.condition.profile: row.profile_fields for row in store.conditions(run_id)}
    medians = [median_load(view) for view in views(summary, profiles, ["mode"]) if view.used]
    savings: list[encoding_mod.EncodingSaving] = []
    if encoding_mod.several_encodings(c.condition for c in summary.conditions):  # reads every resource: only then
        savings = encoding_mod.savings(encoding_mod.loads_by_condition(summary, store.run_resources(run_id)))
    return ReportData(run_id, store.experiment(run_id), summary, profiles, store.link_checks(run_id),
                      store.proxy_overheads(run_id), {load.id: store.resources(load.id) for load in medians},
                      savings)


def views(summary: Summary, profiles: Mapping[str, Mapping[str, Any]], fields: Sequence[str]) -> list[ConditionView]:
    """Each condition of the summary as the page shows it, labelled by `fields`."""
    found = []
    for c in summary.conditions:
        used = tuple(row for row in c.used if row.load_ms is not None)
        times = [row.load_ms for row in used if row.load_ms is not None]
        rtt = (profiles.get(c.condition.profile) or {}).get("rtt_ms")
        found.append(ConditionView(
            summary=c,
            label=" ".join(shown(f, getattr(c.condition, f)) for f in fields),
            used=used,
            flagged=tuple(row for row in c.flagged if row.load_ms is not None),
            ci=stats.median_ci(c.by_machine("load_ms")) if len(times) >= MIN_FOR_INTERVAL else None,
            iqr=stats.iqr(times) if times else None,
            rtt_ms=None if rtt is None else float(rtt),
        ))
    return found


def median_load(view: ConditionView) -> LoadRow:
    """The load whose time is the median (the lower of the middle two for even n)."""
    ordered = sorted(view.used, key=lambda row: (row.load_ms, row.seq))
    return ordered[(len(ordered) - 1) // 2]
