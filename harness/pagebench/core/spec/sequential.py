"""`repetitions: auto`: a sequential stopping rule fixed before the run.

A run with `repetitions: auto` plans `cap` repetitions per condition (the plan, the
store's `planned` and a resume are those of a run of `cap`), loads them in rounds of one
load per condition, and after certain rounds (the `looks`, fixed in advance) asks whether
its verdicts are decisive; when they are, the loads not yet made are marked stopped early.

Why Bonferroni: each look judges an interval at level 1 - alpha / K (K looks, the cap's
included), so the chance that any look errs is at most alpha whatever the dependence
between looks (they share their loads). Alpha-spending boundaries (Pocock, O'Brien-
Fleming) are less conservative, but they assume a normal test statistic; the verdicts
here are percentile-bootstrap intervals of medians of skewed load times, so the bound
that holds for any statistic is the one kept. The price is a slightly wider interval at
every look (98.75 % rather than 95 % with four looks). Pure: numbers in, numbers out.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

#: The rounds at which an unspecified schedule looks (roughly x1.6 each: the interval's
#: width shrinks as 1/sqrt(n), so evenly spaced looks would mostly repeat the last one).
LOOK_ROUNDS = (3, 5, 8, 13, 20, 30, 50, 80, 130, 200, 300, 500, 800)
MAX_REPETITIONS = 100_000
#: The earliest round a look may be after: an interval of one load per condition is a point.
FIRST_LOOK = 2
#: What `repetitions: auto` alone means.
DEFAULT_CAP = 20
#: The words of the one-line error for a `repetitions:` that is neither form.
FORMS = "a number of loads per condition, auto, or auto with settings {cap: N, looks: [..], tolerance: T, alpha: A}"


class Sequential(BaseModel):
    """`repetitions: auto` (or its settings as a mapping): load in rounds up to `cap` per
    condition, looking after the rounds in `looks` (the cap is always the last look);
    `alpha` is the error allowed across all looks; `tolerance` is the generic rule's
    (`pagebench run`: a mode's median within this fraction of the first mode's counts as
    the same; the reproduce scenarios use their claims' own ranges instead)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cap: int = Field(DEFAULT_CAP, ge=1, le=MAX_REPETITIONS)
    looks: tuple[int, ...] = ()
    tolerance: float = Field(0.05, gt=0, lt=1)
    alpha: float = Field(0.05, gt=0, le=0.5)

    @model_validator(mode="after")
    def _schedule(self) -> Sequential:
        if any(look < FIRST_LOOK or look > self.cap for look in self.looks):
            raise ValueError(f"looks: each look is a round from {FIRST_LOOK} (one load has no spread: its interval "
                             f"is a point) to the cap ({self.cap})")
        if list(self.looks) != sorted(set(self.looks)):
            raise ValueError("looks: rounds in increasing order, each once")
        return self

    @property
    def schedule(self) -> tuple[int, ...]:
        """The rounds after which the rule looks, the cap last: `looks`, or LOOK_ROUNDS below the cap."""
        chosen = self.looks or tuple(r for r in LOOK_ROUNDS if r < self.cap)
        return tuple(r for r in chosen if r < self.cap) + (self.cap,)

    @property
    def level(self) -> float:
        """Every look's interval level: 1 - alpha / K (Bonferroni over the K looks)."""
        return 1 - self.alpha / len(self.schedule)

    def looks_at(self, rounds: int) -> bool:
        """Whether the rule looks after `rounds` complete rounds (the cap ends the run anyway)."""
        return rounds in self.schedule[:-1]


def parse_repetitions(value: Any) -> int | Sequential:
    """`repetitions:` as written: a number of loads per condition, `auto`, or auto's
    settings as a mapping; anything else is a ValueError naming what is allowed (the
    spec's one-line error)."""
    if value == "auto":
        return Sequential()
    if isinstance(value, Sequential):
        return value
    if isinstance(value, dict):
        try:
            return Sequential.model_validate(value)
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            if first["type"] == "extra_forbidden":
                raise ValueError(f"{where}: unknown setting; allowed: {', '.join(Sequential.model_fields)}") from None
            message = first["msg"].removeprefix("Value error, ")
            raise ValueError(f"{where}: {message}" if where else message) from None
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= MAX_REPETITIONS:
            raise ValueError(f"{value}: loads per condition run from 1 to {MAX_REPETITIONS}")
        return value
    raise ValueError(f"{value!r}: {FORMS}")
