"""What a claim of a seed is (`Claim`) and the rule that gives its verdict (`Rule`): the
record every row of the table in `claims` is."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.stats import Interval


@dataclass(frozen=True)
class Rule:
    """A verdict range: reproduced when the whole 95 % interval lies in [low, high],
    differs when none of it does, can't tell otherwise. `reading` says how the paper's
    words became the range."""

    low: float = -math.inf
    high: float = math.inf
    reading: str = ""

    def verdict(self, measured: Interval) -> str:
        if self.low <= measured.low and measured.high <= self.high:
            return "reproduced"
        if measured.high < self.low or measured.low > self.high:
            return "differs"
        return "can't tell"

    def falsifier(self, unit: str) -> str:
        """What would have made the row "differs": the whole interval outside the range."""
        def shown(x: float) -> str:
            return f"{x * 100:g} %" if unit == "%" else f"{x:g} {unit}"
        sides = ([f"under {shown(self.low)}"] if math.isfinite(self.low) else []) + (
            [f"over {shown(self.high)}"] if math.isfinite(self.high) else [])
        return "the whole interval " + " or ".join(sides) if sides else "nothing: the range is unbounded"


@dataclass(frozen=True)
class Claim:
    """One claim of a seed: where, in the paper's words, its value, and how it is measured."""

    key: str
    seed: str
    section: str
    claim: str  # a few words
    words: str  # the paper's
    paper: str  # its value as shown
    scenario: str
    measure: Callable[[Data, str], Interval | None]
    rule: Rule
    unit: str  # "%": a fraction shown in per cent; "RTT", "Mbit/s", "x"
    why: str = ""  # the physics that moves it between era and today (the reason line)
    #: The paper's condition for this claim, with where the paper states it ("T1, 70 ms,
    #: 1.544 Mbit/s, MSS 1460 (§3.1)"), and ours as the scenario sets it.
    condition: str = ""
    ours: str = ""
    #: The first line of `words` in the seed's text (../shared/seeds/<seed>_*.txt), checked
    #: by the tests where that text is at hand.
    line: int = 0
    #: Non-empty when the check cannot fail by construction (it measures what pagebench
    #: set, or compares a value with itself): the row says "demonstrated", and why.
    demonstrated: str = ""
    #: What result would have made the row "differs", in the physics' words; the rule's
    #: range is stated beside it (`falsifier`).
    falsifies: str = ""
    #: What the measured interval resamples, so what more of would narrow a "can't tell":
    #: the loads (a higher cap), or, for byte counts (exact per response), the responses.
    over: str = "loads (a higher cap)"

    def falsifier(self) -> str:
        stated = self.rule.falsifier(self.unit)
        return f"{stated} ({self.falsifies})" if self.falsifies else stated
