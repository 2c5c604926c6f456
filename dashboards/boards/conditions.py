"""The condition fields (`conditions` columns) as every dashboard uses them, in one table:
what a table lists, how rows are ordered, how a chart names a condition, how a condition's
twin with another encoding is found, what the trend and visual dashboards let you choose.
A new field (a device, migration 0012) is one more row of `FIELDS`: every query, name and
variable that goes over the conditions picks it up."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from pagebench.core import encodings, modes
from pagebench.core.records import CACHE_STATES


class Trend(enum.Enum):
    """How the trend dashboard treats a field: one value chosen (the series' context), a
    series per chosen value, or no variable (named in a series only where not the default)."""

    ONE = "one"
    MANY = "many"
    NAMED = "named"


@dataclass(frozen=True)
class Field:
    """A column of `conditions` as the dashboards show it."""

    name: str
    noun: str  # one value of it, for variables' descriptions: "network profile"
    trend: Trend = Trend.NAMED
    known: tuple[str, ...] = ()  # its catalogue's values in the report's order; others come after, by name
    default: str | None = None  # the value short names leave out (runs before the field had it)
    prefix: str = ""  # how names show a value: 'TLS 1.2', 'v2'
    always_named: bool = False  # in a chart's names even where the run has one value (cold or warm)

    @property
    def column(self) -> str:
        """The column of `conditions c`."""
        return f"c.{self.name}"

    @property
    def shown(self) -> str:
        """The SQL of a value as names show it."""
        return f"'{self.prefix}' || {self.column}" if self.prefix else self.column

    @property
    def order(self) -> str:
        """ORDER BY terms in the report's order (`analysis.summary.order`)."""
        if not self.known:
            return self.column
        listed = ", ".join(f"'{value}'" for value in self.known)
        return f"coalesce(array_position(ARRAY[{listed}], {self.column}), 99), {self.column}"

    @property
    def plural(self) -> str:
        return f"{self.noun[:-1]}ies" if self.noun.endswith("y") else f"{self.noun}s"


SITE = Field("site", "site", Trend.ONE)
MODE = Field("mode", "protocol mode", Trend.MANY, known=modes.NAMES)
PROFILE = Field("profile", "network profile", Trend.ONE)
CACHE = Field("cache", "cache state", Trend.MANY, known=CACHE_STATES, always_named=True)
ENCODING = Field("encoding", "content encoding", Trend.MANY, known=encodings.NAMES, default=encodings.IDENTITY.name)
#: In the report's order (site, mode, profile, cache, tls, topology, version, encoding, device).
FIELDS: tuple[Field, ...] = (
    SITE, MODE, PROFILE, CACHE,
    Field("tls", "TLS version", default="1.3", prefix="TLS "),
    Field("topology", "topology", default="direct"),
    Field("version", "site version", default="1", prefix="v"),
    ENCODING,
    Field("device", "device", Trend.MANY, known=("desktop",), default="desktop"),
)
#: What a chart sets side by side within each group of the other fields.
COMPARED = MODE


def but(*left_out: Field) -> tuple[Field, ...]:
    return tuple(field for field in FIELDS if field not in left_out)


def columns(fields: Sequence[Field] = FIELDS) -> str:
    """A SELECT or GROUP BY list."""
    return ", ".join(field.column for field in fields)


def order(fields: Sequence[Field] = FIELDS) -> str:
    """ORDER BY terms: conditions as the report lists them."""
    return ", ".join(field.order for field in fields)


def full_name(separator: str, fields: Sequence[Field] = FIELDS) -> str:
    """Every field's value, joined."""
    return f"concat_ws('{separator}', {', '.join(field.shown for field in fields)})"


def short_name(fields: Sequence[Field]) -> str:
    """The values joined by spaces, a field with a default only where it differs from it
    (text to append to with ||)."""
    named = " || ' ' || ".join(field.shown for field in fields if field.default is None)
    extra = [f"CASE WHEN {field.column} <> '{field.default}' THEN ' ' || {field.shown} ELSE '' END"
             for field in fields if field.default is not None]
    return "\n         || ".join([named, *extra])


#: The fields a chart names only where the run has several values of them.
VARYING = tuple(field for field in FIELDS if field is not COMPARED and not field.always_named)


def varying() -> str:
    """The CTE `varying` (needs `run`): which fields differ within the run."""
    tests = ",\n         ".join(f"count(DISTINCT {field.column}) > 1 AS {field.name}" for field in VARYING)
    return (f"varying AS (   -- the condition fields that differ within the run: only those go into labels\n"
            f"  SELECT {tests}\n"
            f"  FROM conditions c JOIN run ON run.id = c.experiment_id\n"
            f")")


def chart_name() -> str:
    """A condition's name in a chart (needs `varying v`): the fields that vary within the
    run (and the cache state), then the compared one, e.g. 'warm · h2'."""
    parts = [field.shown if field.always_named else f"CASE WHEN v.{field.name} THEN {field.shown} END"
             for field in but(COMPARED)]
    listed = ",\n                 ".join([*parts, COMPARED.shown])  # aligned under SELECT's concat_ws(
    return f"concat_ws(' · ', {listed}) AS condition"


def chart_order() -> str:
    """ORDER BY for a chart: the report's order with the compared field last, so its values
    stand side by side."""
    return order([*but(COMPARED), COMPARED])


def chart_group() -> str:
    """GROUP BY for a chart's rows, one per condition."""
    return ", ".join(["c.id", *(f"v.{field.name}" for field in VARYING)])


def twins(twin: str, of: str, differing: Field) -> str:
    """Join conditions: `twin` is `of`'s twin in the same run, equal in every field but
    `differing`."""
    return "\n  AND ".join([f"{twin}.experiment_id = {of}.experiment_id",
                            *(f"{twin}.{field.name} = {of}.{field.name}" for field in but(differing))])


def chosen(fields: Sequence[Field]) -> str:
    """WHERE terms: each field equal to its dashboard variable of one value."""
    return " AND ".join(f"{field.column} = '${{{field.name}}}'" for field in fields)


def among(fields: Sequence[Field]) -> str:
    """WHERE terms: each field among the values of its dashboard variable of several."""
    return " AND ".join(f"{field.column} IN (${{{field.name}}})" for field in fields)
