"""Budgets: absolute limits on a metric's median, per condition. One model for every place
a budget is written (a spec's `budgets:`, a `--budget` file or expression of `run` and
`compare`) and the one check of a condition's medians against them.

Pure: parsed documents and strings in, values out. A budget's unset fields match every
condition; where several budgets of one metric match, the tightest counts.

    load_ms<=1500                         # every condition
    lcp_ms<=1200@mode=h2,profile=cable    # the conditions whose mode is h2 and profile cable
    tbt_ms<=300@device=moto-g-power       # the conditions loaded as that device
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from pagebench.core import encodings, modes
from pagebench.core.encodings import Encoding
from pagebench.core.errors import PagebenchError
from pagebench.core.messages import shown
from pagebench.core.modes import Mode
from pagebench.core.records import CONDITION_FIELDS, METRICS, Condition

#: The one inline form: METRIC<=MAX, then optionally @FIELD=VALUE,FIELD=VALUE.
SYNTAX = "METRIC<=MAX[@FIELD=VALUE,...], e.g. load_ms<=1500@mode=h2,profile=cable"


class BudgetError(PagebenchError, ValueError):
    """A budget that cannot be read: one line naming where it was written and what is allowed."""


class Budget(BaseModel):
    """An absolute limit on a metric's median, for the conditions it matches (unset fields match all)."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    metric: str = "load_ms"
    max: float = Field(gt=0)
    site: str | None = None
    mode: Mode | None = None
    topology: str | None = None
    profile: str | None = None
    cache: str | None = None
    tls: str | None = None
    encoding: Encoding | None = None
    version: int | None = None
    device: str | None = None
    #: Where it was written ("spec.yaml: budgets.1", "--budget 'load_ms<=1'"), for messages.
    _origin: str = PrivateAttr("")

    @field_validator("metric")
    @classmethod
    def _metric(cls, value: str) -> str:
        if value not in METRICS:
            raise ValueError(f"unknown metric {value!r}; allowed: {', '.join(METRICS)}")
        return value

    @field_validator("mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Mode | None:
        return None if value is None else modes.parse(str(value))

    @field_validator("encoding", mode="before")
    @classmethod
    def _encoding(cls, value: Any) -> Encoding | None:
        return None if value is None else encodings.parse(str(value))

    @property
    def origin(self) -> str:
        return self._origin or self.expression

    def written_at(self, origin: str) -> Budget:
        """This budget, saying where it was written."""
        self._origin = origin  # a private attribute: the budget's value stays frozen
        return self

    def matches(self, condition: Condition) -> bool:
        """Does this budget apply to the condition (every set field equal)?"""
        return all(getattr(self, name) is None or str(getattr(self, name)) == str(getattr(condition, name))
                   for name in CONDITION_FIELDS)

    @property
    def expression(self) -> str:
        """The budget in the inline form (`parse_expression` reads it back)."""
        where = ",".join(f"{name}={getattr(self, name)}" for name in CONDITION_FIELDS
                         if getattr(self, name) is not None)
        return f"{self.metric}<={self.max:g}" + (f"@{where}" if where else "")


def _one_line(origin: str, error: ValidationError, prefix: str = "") -> BudgetError:
    first = error.errors()[0]
    where = ".".join([prefix] * bool(prefix) + [shown(part) for part in first["loc"]])
    message = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = f"unknown field; allowed: {', '.join(Budget.model_fields)}"
    return BudgetError(f"{origin}: {where}: {message}" if where else f"{origin}: {message}")


def parse_budgets(document: Any, origin: str) -> list[Budget]:
    """A budget file, `budgets: [{metric: load_ms, max: 2500, site: modern, mode: h2}, ...]`;
    an error names `origin` (the file) and the field."""
    if not isinstance(document, dict) or set(document) != {"budgets"} or not isinstance(document["budgets"], list):
        raise BudgetError(f"{origin}: expected `budgets:` and a list of {{metric, max, site, mode, ...}}")
    found = []
    for index, entry in enumerate(document["budgets"]):
        try:
            found.append(Budget.model_validate(entry).written_at(f"{origin}: budgets.{index}"))
        except ValidationError as error:
            raise _one_line(origin, error, f"budgets.{index}") from None
    return found


def parse_expression(text: str, origin: str = "--budget") -> Budget:
    """`load_ms<=1500@mode=h2,profile=cable`; an error names `origin` and the expression."""
    where = f"{origin} {text!r}"
    head, _, matching = text.partition("@")
    metric, sep, limit = head.partition("<=")
    fields: dict[str, Any] = {"metric": metric.strip(), "max": limit.strip()}
    pairs = [pair.partition("=") for pair in matching.split(",")] if matching else []
    if not sep or not fields["metric"] or any(not eq or not name.strip() for name, eq, _ in pairs):
        raise BudgetError(f"{where}: want {SYNTAX}")
    for name, _, value in pairs:
        if name.strip() not in CONDITION_FIELDS:
            raise BudgetError(f"{where}: unknown field {name.strip()!r}; allowed: {', '.join(CONDITION_FIELDS)}")
        if name.strip() in fields:
            raise BudgetError(f"{where}: {name.strip()} given twice")
        fields[name.strip()] = value.strip()
    try:
        return Budget.model_validate(fields).written_at(where)
    except ValidationError as error:
        raise _one_line(where, error) from None


@dataclass(frozen=True)
class Check:
    """One metric of one condition against the tightest budget of that metric that matches it."""

    condition: Condition
    metric: str
    limit: float
    median: float | None  # over the condition's usable loads; None: no load gave the metric
    n: int  # usable loads

    @property
    def passed(self) -> bool:
        return self.median is not None and self.median <= self.limit

    @property
    def reason(self) -> str:
        """Why it failed, or what it checked."""
        if self.median is None:
            return f"{self.metric}: no value in {self.n} usable load{'s' * (self.n != 1)}, budget {self.limit:g}"
        over = "over" if self.median > self.limit else "within"
        return f"{self.metric} median {self.median:.0f} {over} the budget {self.limit:g}"


def check(budgets: Iterable[Budget], condition: Condition, medians: Mapping[str, float | None], n: int) -> list[Check]:
    """A condition's medians (by metric) against the budgets that match it, one check per
    metric (the tightest limit), in the report's metric order."""
    limits: dict[str, float] = {}
    for budget in budgets:
        if budget.matches(condition):
            limits[budget.metric] = min(budget.max, limits.get(budget.metric, budget.max))
    return [Check(condition, metric, limits[metric], medians.get(metric), n) for metric in METRICS if metric in limits]


def unmatched(budgets: Iterable[Budget], conditions: Sequence[Condition]) -> list[Budget]:
    """The budgets that match none of the conditions (a typo, or a condition not run): said, not passed."""
    return [budget for budget in budgets if not any(budget.matches(c) for c in conditions)]


def unmatched_line(budget: Budget, run: str) -> str:
    """The warning for a budget that matched no condition of `run`."""
    return f"{budget.origin}: budget {budget.expression} matches no condition of run {run}"
