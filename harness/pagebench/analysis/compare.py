"""Compare a candidate run with a baseline, condition by condition: the CI regression gate.

Pure: two runs' summaries in (`summary.Summary`), verdicts out. A condition regressed
when its candidate loads are slower with statistical significance (Mann-Whitney U, exact
at small n, Holm-corrected across conditions so a big matrix does not cry wolf) AND its
median grew beyond the threshold with confidence: the one-sided lower bound of the ratio
of medians (bootstrap, at 1 - alpha; a side measured by several lab machines resamples
its machines too, `stats.machines_bootstrap_ci`) is above 1 + threshold. A point estimate just past
the threshold is not enough: on a shared VM a rerun of the same code can land one round
trip slower in half its loads. A condition also regresses when the candidate's median of
any metric breaks an absolute budget (`core/measure/budgets.py`). Flagged, failed and warm-up loads never count.

Every tested verdict also says the smallest slowdown its loads could have shown
(`Verdict.detectable`, see `_detectable`); where none could (too few loads for the exact
test among this many conditions), the verdict is "can't tell", not "ok". Whether the two
runs may be compared at all (same Chromium, kernel, link, conditions) is `comparable`'s.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from pagebench.analysis import stats
from pagebench.analysis.report import ci
from pagebench.analysis.summary import Summary, label, order
from pagebench.core.errors import PagebenchError
from pagebench.core.measure import budgets as budgets_mod
from pagebench.core.measure.budgets import Budget
from pagebench.core.records import METRICS, Condition

#: Fewer usable loads than this on either side: no test, the verdict says so.
MIN_LOADS = 5


class CompareError(PagebenchError, ValueError):
    """Bad input to compare; the message is one line naming what is wrong."""


class Status(enum.Enum):
    """A condition's verdict."""

    OK = "ok"
    REGRESSION = "regression"
    IMPROVEMENT = "improvement"
    CANT_TELL = "can't tell"
    ONLY_IN_BASE = "only in base"
    ONLY_IN_CANDIDATE = "only in candidate"

    def __str__(self) -> str:
        return self.value


#: Verdicts that tested nothing (JUnit: skipped).
UNTESTED = (Status.CANT_TELL, Status.ONLY_IN_BASE, Status.ONLY_IN_CANDIDATE)


@dataclass(frozen=True)
class Verdict:
    """One condition compared: the usable loads' values and medians of each side (from
    the summaries) and what they say."""

    condition: Condition
    base: tuple[float, ...]
    candidate: tuple[float, ...]
    base_median: float | None = None
    candidate_median: float | None = None
    status: Status = Status.OK
    ratio: float | None = None
    ratio_low: float | None = None  # one-sided bounds of the ratio at 1 - alpha
    ratio_high: float | None = None
    p: float | None = None
    p_holm: float | None = None
    delta: float | None = None
    budget: float | None = None
    reasons: tuple[str, ...] = ()
    #: The smallest slowdown these loads could have shown as a regression (a fraction,
    #: `_detectable`); inf: none at all could; None: not tested.
    detectable: float | None = None

    @property
    def name(self) -> str:
        return label(self.condition)

    @property
    def resolution(self) -> str | None:
        """What its n could tell: '5 loads each: slowdowns under 9.3% cannot be told'."""
        if self.detectable is None:
            return None
        n = (f"{len(self.base)} loads each" if len(self.base) == len(self.candidate)
             else f"{len(self.base)}/{len(self.candidate)} loads")
        if math.isinf(self.detectable):
            return f"{n}: no slowdown can be told"
        shown = f"{self.detectable:.0%}" if self.detectable >= 0.1 else f"{self.detectable:.1%}"
        return f"{n}: slowdowns under {shown} cannot be told"


@dataclass(frozen=True)
class Comparison:
    """A whole comparison: its settings and one verdict per condition."""

    metric: str
    threshold: float
    alpha: float
    verdicts: tuple[Verdict, ...]

    @property
    def regressions(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status is Status.REGRESSION]


#: A side of a condition: its values, their median, and its values by machine.
Side = tuple[tuple[float, ...], float | None, stats.ByMachine]


def _side(summary: Summary, metric: str) -> dict[Condition, Side]:
    """Each condition with a usable value of the metric: its values, their median and its
    values by the machine that measured them (what the ratio's interval resamples)."""
    sides = {c.condition: (tuple(float(v) for v in c.values(metric)), c.metrics[metric].median, c.by_machine(metric))
             for c in summary.conditions}
    return {condition: side for condition, side in sides.items() if side[0]}


def _tested(verdict: Verdict, alpha: float, base: stats.ByMachine, candidate: stats.ByMachine) -> Verdict:
    """A verdict with both sides present (`base`, `candidate`: its values by machine): the
    test and the ratio's bounds, or can't tell."""
    ratio = verdict.candidate_median / verdict.base_median if verdict.base_median else None
    if len(verdict.base) < MIN_LOADS or len(verdict.candidate) < MIN_LOADS:
        return replace(verdict, ratio=ratio, status=Status.CANT_TELL, reasons=(
            f"n={len(verdict.base)}/{len(verdict.candidate)}: want {MIN_LOADS} per side",))
    low = high = None
    if verdict.base_median:
        interval = stats.ratio_ci(candidate, base, level=1 - 2 * alpha)
        low, high = interval.low, interval.high
    test = stats.mann_whitney(verdict.candidate, verdict.base)
    return replace(verdict, ratio=ratio, ratio_low=low, ratio_high=high, p=test.p, delta=test.delta)


def _detectable(verdict: Verdict, threshold: float, alpha: float, tested: int) -> float | None:
    """The smallest slowdown s (a fraction) these loads could have shown as a regression:
    had the candidate's loads been, with the spread they measured, 1 + s times the base's
    median, both tests of the gate pass only above s. The rank test (exact p at this n)
    needs s above `stats.detectable_slowdown` at alpha / `tested` (Holm asks that of a
    lone regression among the tested conditions); the ratio's lower bound, which scales
    with the candidate's median, needs (1 + s) * ratio_low / ratio > 1 + threshold.
    inf: no slowdown at all; None: no ratio (a zero median)."""
    if verdict.ratio is None or not verdict.ratio_low or verdict.ratio_low <= 0:
        return None
    rank = stats.detectable_slowdown(verdict.candidate, verdict.base, alpha / tested)
    if rank is None:
        return math.inf
    return max(rank, (1 + threshold) * verdict.ratio / verdict.ratio_low - 1)


def _judged(verdict: Verdict, p_holm: float, threshold: float, alpha: float, tested: int) -> Verdict:
    """A tested verdict after the Holm correction: regression, improvement, ok, or can't
    tell when no slowdown could have shown at its n."""
    verdict = replace(verdict, p_holm=p_holm, detectable=_detectable(verdict, threshold, alpha, tested))
    if p_holm >= alpha or verdict.ratio_low is None or verdict.ratio_high is None or verdict.ratio is None:
        if verdict.detectable is not None and math.isinf(verdict.detectable):
            smallest = stats.smallest_p(len(verdict.candidate), len(verdict.base))
            return replace(verdict, status=Status.CANT_TELL, reasons=verdict.reasons + (
                f"{verdict.resolution}: the exact test's smallest p at this n, {smallest:.2g}, is not below "
                f"alpha {alpha:g}" + (f" / {tested} conditions (Holm)" if tested > 1 else ""),))
        return verdict
    if verdict.ratio_low > 1 + threshold:
        return replace(verdict, status=Status.REGRESSION, reasons=verdict.reasons + (
            f"{verdict.ratio - 1:+.1%}, at least {verdict.ratio_low - 1:+.1%} (beyond {threshold:.0%}), "
            f"p={p_holm:.2g}",))
    if verdict.ratio_high < 1 - threshold:
        return replace(verdict, status=Status.IMPROVEMENT)
    return verdict


def _budgeted(verdict: Verdict, metric: str, budgets: Sequence[Budget], candidate_run: Summary) -> Verdict:
    """A verdict against every budget that matches its condition, each metric's median
    (the candidate's summary has them all) against its tightest limit; `budget` shows the
    compared metric's."""
    found = next((c for c in candidate_run.conditions if c.condition == verdict.condition), None)
    if found is None or not verdict.candidate:
        return verdict
    checks = budgets_mod.check(budgets, verdict.condition, found.medians(), found.n)
    verdict = replace(verdict, budget=next((c.limit for c in checks if c.metric == metric), None))
    breached = tuple(c.reason for c in checks if not c.passed)
    if breached:
        return replace(verdict, status=Status.REGRESSION, reasons=verdict.reasons + breached)
    return verdict


def compare(base_run: Summary, candidate_run: Summary, metric: str = "load_ms", threshold: float = 0.05,
            alpha: float = 0.05, budgets: Sequence[Budget] = ()) -> Comparison:
    """Every condition of either run, compared (see the module docstring)."""
    if metric not in METRICS:
        raise CompareError(f"--metric: unknown metric {metric!r}; allowed: {', '.join(METRICS)}")
    if not 0 < alpha < 1:
        raise CompareError(f"--alpha: must be between 0 and 1, got {alpha}")
    if threshold < 0:
        raise CompareError(f"--threshold: must not be negative, got {threshold:.0%}")
    base, candidate = _side(base_run, metric), _side(candidate_run, metric)
    if not set(base) & set(candidate):
        raise CompareError("no condition of the candidate run matches one of the base run (site, mode, topology, "
                           "profile, cache, TLS, encoding, version and device must all be equal)")
    verdicts = []
    for condition in sorted(set(base) | set(candidate), key=order):
        (base_values, base_median, base_machines), (candidate_values, candidate_median, candidate_machines) = (
            side.get(condition, ((), None, {})) for side in (base, candidate))
        verdict = Verdict(condition, base_values, candidate_values, base_median, candidate_median)
        if not verdict.candidate:
            verdict = replace(verdict, status=Status.ONLY_IN_BASE)
        elif not verdict.base:
            verdict = replace(verdict, status=Status.ONLY_IN_CANDIDATE)
        else:
            verdict = _tested(verdict, alpha, base_machines, candidate_machines)
        verdicts.append(verdict)
    tested = [i for i, v in enumerate(verdicts) if v.p is not None]
    for i, adjusted in zip(tested, stats.holm([verdicts[i].p for i in tested if verdicts[i].p is not None])):
        verdicts[i] = _judged(verdicts[i], adjusted, threshold, alpha, len(tested))
    return Comparison(metric, threshold, alpha, tuple(_budgeted(v, metric, budgets, candidate_run) for v in verdicts))


# Rendering ---------------------------------------------------------------------------

COLUMNS = ("condition", "n base/cand", "base median", "cand median", "change (bounds)", "p (Holm)",
           "Cliff's δ", "resolution", "budget", "verdict")


def rows(comparison: Comparison) -> list[list[str]]:
    """The comparison as table rows (the terminal table, markdown and JUnit share them)."""
    def num(value: float | None, fmt: str) -> str:
        return "—" if value is None else format(value, fmt)

    out = []
    for v in comparison.verdicts:
        change = "—" if v.ratio is None else f"{v.ratio - 1:+.1%}"
        if v.ratio_low is not None and v.ratio_high is not None:
            change += f" ({v.ratio_low - 1:+.1%}, {v.ratio_high - 1:+.1%})"
        verdict = str(v.status) + (f": {'; '.join(v.reasons)}" if v.reasons and v.status is not Status.OK else "")
        out.append([v.name, f"{len(v.base)}/{len(v.candidate)}", num(v.base_median, ".0f"),
                    num(v.candidate_median, ".0f"), change, num(v.p_holm, ".2g"),
                    num(v.delta, "+.2f"), v.resolution or "—", num(v.budget, "g"), verdict])
    return out


def markdown(comparison: Comparison) -> str:
    """For a CI summary or a pull-request comment."""
    regressions = comparison.regressions
    head = (f"**pagebench compare** ({comparison.metric}, threshold {comparison.threshold:.0%}, "
            f"alpha {comparison.alpha:g}, Holm-corrected): ")
    head += (f"{len(regressions)} regression{'s' if len(regressions) != 1 else ''}: "
             + ", ".join(f"`{v.name}`" for v in regressions)) if regressions else "no regression"
    return "\n".join([head, "", *ci.markdown_table(COLUMNS, rows(comparison))]) + "\n"


def junit(comparison: Comparison) -> str:
    """One test case per condition; a regression is a failure."""
    return ci.junit(f"pagebench compare {comparison.metric}", "pagebench.compare", [
        ci.Case(v.name, failure="; ".join(v.reasons) if v.status is Status.REGRESSION else None,
                skipped="; ".join((str(v.status), *v.reasons)) if v.status in UNTESTED else None, detail=" | ".join(row))
        for v, row in zip(comparison.verdicts, rows(comparison))])
