"""Grafana's part, for the dashboards' tests (`test_dashboards.py`, `test_dashboards_e2e.py`):
the dashboards read, and a panel's SQL made what PostgreSQL receives.

Grafana is not installed here, so this module does what Grafana does to a panel's SQL
before PostgreSQL sees it, in Grafana's own two steps: the browser replaces template
variables (`$run`, `${mode}`, `[[site]]`; SQL quoting rules of the PostgreSQL plugin),
then the server expands the plugin's macros (`$__timeFilter(col)`, ...; the same regular
expression and output formats as its `macros.go`). Anything it does not know is refused,
so no panel reaches the database with a `$` left in it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tests.helpers import REPO

DASHBOARDS = REPO / "dashboards"
BOARDS = sorted((DASHBOARDS / "json").glob("*.json"))
DATASOURCE = {"type": "grafana-postgresql-datasource", "uid": "pagebench"}
FORMATS = {"table", "time_series"}


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def panels(board: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel, including those inside collapsed rows."""
    for panel in board.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every (path, value) of a JSON tree."""
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, f"{path}[{index}]")


# -- Grafana's expansion of a panel's SQL ----------------------------------------------------

class Unexpanded(Exception):
    """A variable or macro this module does not know: the SQL would reach PostgreSQL with it."""


@dataclass(frozen=True)
class Value:
    """A template variable's current value: one string, or several (multi-value, or All)."""
    value: str | list[str]
    multi: bool = False
    include_all: bool = False


# templateSrv's variable syntax: $name, [[name]] or [[name:format]], ${name}, ${name.path}, ${name:format}
VARIABLE = re.compile(r"\$(\w+)|\[\[(\w+?)(?::(\w+))?\]\]|\$\{(\w+)(?:\.([^:^\}]+))?(?::([^\}]+))?\}")
# the PostgreSQL plugin's macro syntax (macros.go): the arguments cannot contain ')'
MACRO = re.compile(r"\$([_a-zA-Z0-9]+)\(([^\)]*)\)")


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def format_value(name: str, variable: Value, fmt: str | None) -> str:
    """A variable's value in SQL text, as Grafana formats it for the PostgreSQL plugin."""
    value = variable.value
    if fmt is None:  # the plugin's interpolateVariable
        if isinstance(value, list):
            return ",".join(_quote(v) for v in value)
        if variable.multi or variable.include_all:
            return _quote(value)
        return value.replace("'", "''")
    values = value if isinstance(value, list) else [value]
    if fmt == "csv" or fmt == "raw":
        return ",".join(values)
    if fmt == "sqlstring":
        return ",".join(_quote(v) for v in values)
    raise Unexpanded(f"${{{name}:{fmt}}}: format {fmt!r} is not one this test implements")


def _rfc3339nano(moment: datetime) -> str:
    """Go's time.RFC3339Nano in UTC: fraction without trailing zeros, 'Z'."""
    moment = moment.astimezone(timezone.utc)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    fraction = f"{moment.microsecond:06d}".rstrip("0")
    return text + (f".{fraction}" if fraction else "") + "Z"


#: The PostgreSQL plugin's macros, as its evaluateMacro writes them (no TimescaleDB): from
#: the macro's first argument (a time column, where it takes one) and the time range.
#: $__timeGroup and friends depend on the panel's interval: add them (faithfully) when used.
_MACROS: dict[str, Callable[[str, datetime, datetime], str]] = {
    "__time": lambda column, start, end: f'{column} AS "time"',
    "__timeEpoch": lambda column, start, end: f'extract(epoch from {column}) as "time"',
    "__timeFilter": lambda column, start, end: f"{column} BETWEEN '{_rfc3339nano(start)}' AND '{_rfc3339nano(end)}'",
    "__timeFrom": lambda _, start, end: f"'{_rfc3339nano(start)}'",
    "__timeTo": lambda _, start, end: f"'{_rfc3339nano(end)}'",
    "__unixEpochFilter": lambda column, start, end: (
        f"{column} >= {math.floor(start.timestamp())} AND {column} <= {math.floor(end.timestamp())}"),
}
_TAKES_A_COLUMN = {"__time", "__timeEpoch", "__timeFilter", "__unixEpochFilter"}


def _macro(name: str, args: list[str], start: datetime, end: datetime) -> str:
    """One macro expanded; one this module does not know is refused."""
    if name not in _MACROS:
        raise Unexpanded(f"${name}(...): not a macro this test implements")
    if name in _TAKES_A_COLUMN and not args:
        raise Unexpanded(f"${name}: missing time column argument")
    return _MACROS[name](args[0] if args else "", start, end)


def expand(sql: str, variables: dict[str, Value], start: datetime, end: datetime) -> str:
    """The SQL Grafana sends to PostgreSQL for a panel, at the time range start..end."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2) or match.group(4)
        fmt = match.group(3) or match.group(6)
        if match.group(5):
            raise Unexpanded(f"{match.group(0)}: variable field paths are not used here")
        if name in variables:
            return format_value(name, variables[name], fmt)
        if name.startswith("__") and match.group(1):
            return match.group(0)  # not a variable: a macro, for the server's step
        raise Unexpanded(f"{match.group(0)}: no such template variable (known: {', '.join(variables) or 'none'})")

    sql = VARIABLE.sub(variable, sql)  # the browser's step (templateSrv.replace)
    # the server's step: sqleng's global substitutions, then the plugin's macros
    for interval in ("$__interval_ms", "$__interval"):
        if interval in sql:
            raise Unexpanded(f"{interval}: depends on the panel's width; not implemented by this test")
    sql = sql.replace("$__unixEpochFrom()", str(math.floor(start.timestamp())))
    sql = sql.replace("$__unixEpochTo()", str(math.floor(end.timestamp())))
    sql = MACRO.sub(lambda m: _macro(m.group(1), [a.strip(" ") for a in m.group(2).split(",")], start, end), sql)
    left = re.search(r"\$\w|\$\{|\[\[", sql)
    if left:
        raise Unexpanded(f"left unexpanded: {sql[left.start():left.start() + 40]!r}")
    return sql


def time_range(board: dict[str, Any], now: datetime) -> tuple[datetime, datetime]:
    """The dashboard's default time range ('now-30d' .. 'now'), relative to now."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}

    def point(text: str) -> datetime:
        found = re.fullmatch(r"now(?:-(\d+)([smhdw]))?", text)
        assert found, f"time range {text!r}: only now and now-N[smhdw] are supported here"
        return now - timedelta(seconds=int(found.group(1) or 0) * units[found.group(2) or "s"])

    return point(board["time"]["from"]), point(board["time"]["to"])


def variable_sql(variable: dict[str, Any]) -> str:
    query = variable.get("query")
    return query if isinstance(query, str) else (query or {}).get("rawSql", "")
