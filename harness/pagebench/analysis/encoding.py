"""What an encoding saves against identity: bytes, the time seed 001 estimates from them,
and the time measured. Pure: Condition/LoadResult/Resource values in, numbers out
(`loads_by_condition` takes them from a run's summary and its stored resources).

The estimate is Mogul et al. 1997's (section 5.4): a response's transfer time shrinks in
proportion to the bytes it no longer sends,

    time saved = T_transfer x bytes_saved / bytes

with T_transfer the identity response's first byte to last byte (Resource.response_start_ms
to end_ms) and bytes its body as sent (encoded_bytes, else transfer_bytes). The paper
writes the same model as a fraction, bytes_saved / bytes x T_low / T_high, of a response
time T_high (request to last byte) where T_low is first byte to last byte: multiplied by
T_high it is the formula above. The paper needed two T because its proxy traces could not
split the request from the first bytes; the browser gives T_low exactly, so this module
implements the time form (`time_saved_ms`) and keeps the fraction (`fraction_saved`) to
show the two agree. Like the paper's, the estimate ignores the encoder's and decoder's CPU
and the round trips a smaller response still waits for: measured minus estimated is what
the model misses.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pagebench.analysis import stats
from pagebench.analysis.summary import Summary, order
from pagebench.core import encodings
from pagebench.core.records import Condition, LoadResult, Resource
from pagebench.results.rows import ResourceRow

BASELINE = encodings.IDENTITY


def sent_bytes(resource: Resource) -> int:
    """A response's body bytes as sent: encodedBodySize, else (not reported) the transfer size."""
    return resource.transfer_bytes if resource.encoded_bytes is None else resource.encoded_bytes


def transfer_ms(resource: Resource) -> float | None:
    """First byte to last byte of a response (T_low), None when either end is missing."""
    if resource.response_start_ms is None or resource.end_ms is None:
        return None
    return max(0.0, resource.end_ms - resource.response_start_ms)


def on_the_wire(resource: Resource) -> bool:
    """Did the response cross the link (not served from the cache, not failed)?"""
    return not resource.from_cache and resource.end_ms is not None


def time_saved_ms(transfer: float, size: float, saved: float) -> float:
    """T_transfer x bytes_saved / bytes (0 for an empty response: nothing to save)."""
    return transfer * saved / size if size > 0 else 0.0


def fraction_saved(t_low: float, t_high: float, size: float, saved: float) -> float:
    """The paper's form: the fraction of the response time T_high saved, bytes_saved / bytes
    x T_low / T_high. Times T_high it is `time_saved_ms(t_low, size, saved)`."""
    return saved / size * t_low / t_high if size > 0 and t_high > 0 else 0.0


@dataclass(frozen=True)
class Baseline:
    """A URL as identity sent it: median transfer time and body bytes over the baseline's loads."""

    transfer_ms: float
    bytes: float


def baseline_of(loads: Iterable[LoadResult]) -> dict[str, Baseline]:
    """Per URL, the medians of its identity responses that crossed the link with a transfer time."""
    times: dict[str, list[float]] = {}
    sizes: dict[str, list[int]] = {}
    for load in loads:
        for resource in load.resources:
            transfer = transfer_ms(resource)
            if on_the_wire(resource) and transfer is not None:
                times.setdefault(resource.url, []).append(transfer)
                sizes.setdefault(resource.url, []).append(sent_bytes(resource))
    return {url: Baseline(statistics.median(times[url]), statistics.median(sizes[url])) for url in times}


@dataclass(frozen=True)
class LoadSaving:
    """One load of an encoding against the baseline, summed over its responses."""

    bytes: int  # body bytes sent (responses on the wire)
    bytes_saved: float  # against the baseline's bytes of the same URLs
    time_saved_ms: float  # estimated
    matched: int  # responses with a baseline for their URL
    unmatched: int  # responses without one (no estimate for them)


def load_saving(load: LoadResult, baseline: Mapping[str, Baseline]) -> LoadSaving:
    """Sum of the per-response estimates of one load. A response whose URL the baseline
    never fetched has no estimate and is counted in `unmatched`."""
    size = matched = unmatched = 0
    saved = time = 0.0
    for resource in load.resources:
        if not on_the_wire(resource):
            continue
        sent = sent_bytes(resource)
        size += sent
        base = baseline.get(resource.url)
        if base is None:
            unmatched += 1
            continue
        matched += 1
        saved += base.bytes - sent
        time += time_saved_ms(base.transfer_ms, base.bytes, base.bytes - sent)
    return LoadSaving(size, saved, time, matched, unmatched)


def load_bytes(load: LoadResult) -> int:
    """Body bytes a load sent over the link."""
    return sum(sent_bytes(r) for r in load.resources if on_the_wire(r))


@dataclass(frozen=True)
class EncodingSaving:
    """One condition against its identity baseline (same everything but the encoding).
    Intervals are medians with 95 % bootstrap intervals over loads; None with a `reason`
    when there is nothing to compare. The baseline's own row has no savings."""

    condition: Condition
    baseline: Condition | None  # None for a baseline itself
    n: int  # usable loads of this condition
    n_baseline: int
    bytes: stats.Interval | None  # body bytes sent per load
    bytes_saved: stats.Interval | None  # per load, against the baseline's same URLs
    saved_pct: stats.Interval | None  # 100 x (1 - median bytes / median baseline bytes)
    estimated_ms: stats.Interval | None  # per load, the model's time saved
    measured_ms: stats.Interval | None  # median baseline load_ms - median load_ms
    dictionary_offered: float | None  # resources per load (median)
    dictionary_used: float | None
    revalidated: float | None  # 304s per load (median)
    unmatched: int = 0  # responses (all loads) with no baseline for their URL
    reason: str | None = None  # why there is no estimate

    @property
    def is_baseline(self) -> bool:
        return self.condition.encoding == BASELINE


def baseline_condition(condition: Condition) -> Condition:
    """The condition an encoding is compared with: the same one, identity."""
    return dataclasses.replace(condition, encoding=BASELINE)


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _ci(values: Sequence[float]) -> stats.Interval | None:
    return stats.median_ci(values) if values else None


def saving(condition: Condition, loads: Sequence[LoadResult],
           baseline_loads: Sequence[LoadResult] | None) -> EncodingSaving:
    """One condition's row (see EncodingSaving); `baseline_loads` None: no identity condition."""
    sizes = [load_bytes(load) for load in loads]
    offered = [sum(r.dictionary_offered for r in load.resources) for load in loads]
    used = [sum(r.dictionary_used for r in load.resources) for load in loads]
    revalidated = [sum(r.revalidated or r.status == 304 for r in load.resources) for load in loads]
    row = EncodingSaving(condition, None, len(loads), 0, _ci(sizes), None, None, None, None,
                         _median(offered), _median(used), _median(revalidated))
    if condition.encoding == BASELINE:
        return dataclasses.replace(row, n_baseline=len(loads))
    base = baseline_condition(condition)
    row = dataclasses.replace(row, baseline=base)
    if baseline_loads is None:
        return dataclasses.replace(row, reason=f"no identity condition to compare with ({_name(base)})")
    row = dataclasses.replace(row, n_baseline=len(baseline_loads))
    if not loads or not baseline_loads:
        which = "this condition" if not loads else "its identity condition"
        return dataclasses.replace(row, reason=f"no usable load of {which}")
    by_url = baseline_of(baseline_loads)
    savings = [load_saving(load, by_url) for load in loads]
    base_sizes = [load_bytes(load) for load in baseline_loads]
    base_ms = [load.load_ms for load in baseline_loads if load.load_ms is not None]
    times = [load.load_ms for load in loads if load.load_ms is not None]
    pct = None
    if statistics.median(base_sizes) > 0:
        pct = stats.bootstrap_ci(lambda b, e: 100 * (1 - e / b) if b else float("nan"), [base_sizes, sizes])
    measured = stats.bootstrap_ci(lambda b, e: b - e, [base_ms, times]) if base_ms and times else None
    return dataclasses.replace(
        row, bytes_saved=_ci([s.bytes_saved for s in savings]), saved_pct=pct,
        estimated_ms=_ci([s.time_saved_ms for s in savings]), measured_ms=measured,
        unmatched=sum(s.unmatched for s in savings),
        reason=None if by_url else "the identity loads have no response with a transfer time")


def _name(condition: Condition) -> str:
    return condition.key.replace("|", " ")


def savings(loads: Mapping[Condition, Sequence[LoadResult]]) -> list[EncodingSaving]:
    """Every condition's row, each encoding paired with identity by everything else, in
    report order (identity first within its group)."""
    rows = [saving(condition, group, loads.get(baseline_condition(condition)))
            for condition, group in loads.items()]
    return sorted(rows, key=lambda row: order(row.condition))


def several_encodings(conditions: Iterable[Condition]) -> bool:
    """Does a run compare encodings (more than one among its conditions)?"""
    return len({condition.encoding for condition in conditions}) > 1


# -- from a run's summary -------------------------------------------------------------


def loads_by_condition(summary: Summary, resources: Iterable[ResourceRow]) -> dict[Condition, list[LoadResult]]:
    """The used loads (measured, ok, not flagged) of each condition of the summary that has
    some, as LoadResults with their resources (`Store.run_resources` rows)."""
    by_load: dict[int, list[Resource]] = {}
    for row in resources:
        by_load.setdefault(row.load_id, []).append(row.resource)
    return {c.condition: [load.result(by_load.get(load.id, [])) for load in c.used]
            for c in summary.conditions if c.used}


def grouped(rows: Iterable[EncodingSaving]) -> list[tuple[Condition, list[EncodingSaving]]]:
    """Rows by their group (the identity condition they are compared with), in order."""
    groups: dict[Condition, list[EncodingSaving]] = {}
    for row in rows:
        groups.setdefault(baseline_condition(row.condition), []).append(row)
    return list(groups.items())


def as_json(row: EncodingSaving) -> dict[str, Any]:
    """A row as the report's JSON: the condition's fields, intervals as {estimate, low, high}."""
    values = dataclasses.asdict(row)
    values.pop("condition")
    baseline = row.baseline.key if row.baseline is not None else None
    return {**row.condition.as_names(), **values, "baseline": baseline}
