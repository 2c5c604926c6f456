"""A run's budgets checked, from its summary only: the gate of a single run (`pagebench
run --budget`, a spec's `budgets:`), no baseline needed. Each condition's median of each
budgeted metric against the tightest limit that matches it (`core/measure/budgets.py`);
a condition without a value of the metric does not pass, and a budget that matches no
condition is said, never passed in silence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pagebench.analysis.report import ci
from pagebench.analysis.summary import Summary, label
from pagebench.core.measure import budgets as budgets_mod
from pagebench.core.measure.budgets import Budget, Check


@dataclass(frozen=True)
class Checked:
    """A run's budgets checked: one check per condition and budgeted metric, and the
    budgets that matched nothing."""

    run: str
    checks: tuple[Check, ...]
    unmatched: tuple[Budget, ...]

    @property
    def breached(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]


def check_run(summary: Summary, budgets: Sequence[Budget]) -> Checked:
    """Every condition of the run against the budgets that match it."""
    checks = [check for c in summary.conditions for check in budgets_mod.check(budgets, c.condition, c.medians(), c.n)]
    return Checked(summary.run, tuple(checks),
                   tuple(budgets_mod.unmatched(budgets, [c.condition for c in summary.conditions])))


def _verdict(check: Check) -> str:
    return "ok" if check.passed else "breached"


def lines(checked: Checked) -> list[str]:
    """One line per check, as the run prints them before its last line."""
    return [f"budget {_verdict(c)}: {label(c.condition)}: {c.reason} (n={c.n})" for c in checked.checks]


def warnings(checked: Checked) -> list[str]:
    """One line per budget that matched no condition."""
    return [budgets_mod.unmatched_line(budget, checked.run) for budget in checked.unmatched]


COLUMNS = ("condition", "metric", "n", "median", "budget", "verdict")


def rows(checked: Checked) -> list[list[str]]:
    return [[label(c.condition), c.metric, str(c.n), "—" if c.median is None else f"{c.median:.0f}",
             f"{c.limit:g}", _verdict(c)] for c in checked.checks]


def markdown(checked: Checked) -> str:
    """For a CI summary or a pull-request comment."""
    breached = checked.breached
    head = f"**pagebench run {checked.run}**, budgets: "
    if not checked.checks:
        head += "none checked"
    elif breached:
        head += f"{len(breached)} of {len(checked.checks)} breached: " + ", ".join(
            f"`{c.metric}` in `{label(c.condition)}`" for c in breached)
    else:
        head += f"all {len(checked.checks)} within their limits"
    parts = [head]
    if checked.checks:
        parts.append("\n".join(ci.markdown_table(COLUMNS, rows(checked))))
    if checked.unmatched:
        parts.append("\n".join(f"- warning: {line}" for line in warnings(checked)))
    return "\n\n".join(parts) + "\n"


def junit(checked: Checked) -> str:
    """One test case per check (a breach is a failure), one skipped per budget that matched nothing."""
    cases = [ci.Case(f"{label(c.condition)} {c.metric}", failure=None if c.passed else c.reason,
                     detail=" | ".join(row)) for c, row in zip(checked.checks, rows(checked))]
    cases += [ci.Case(budget.origin, skipped=f"budget {budget.expression} matches no condition")
              for budget in checked.unmatched]
    return ci.junit(f"pagebench run {checked.run} budgets", "pagebench.budgets", cases)
