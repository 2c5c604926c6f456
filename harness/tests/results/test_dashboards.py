"""Grafana (dashboards/): the provisioning and the dashboard JSON are well formed and name
one datasource, and every panel's SQL runs on a PostgreSQL store that holds real runs.

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
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa
import yaml

from pagebench.analysis import encoding
from pagebench.analysis.summary import of_run
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.core.records import Condition
from pagebench.results.store import Store

from tests.helpers import REPO, drop_database, fresh_database, needs_root, nothing_left, pagebench, run_id_of, write_spec

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


def _macro(name: str, args: list[str], start: datetime, end: datetime) -> str:
    """One macro, as the PostgreSQL plugin's evaluateMacro writes it (no TimescaleDB)."""
    if name in ("__time", "__timeEpoch", "__timeFilter", "__unixEpochFilter") and not args:
        raise Unexpanded(f"${name}: missing time column argument")
    if name == "__time":
        return f'{args[0]} AS "time"'
    if name == "__timeEpoch":
        return f'extract(epoch from {args[0]}) as "time"'
    if name == "__timeFilter":
        return f"{args[0]} BETWEEN '{_rfc3339nano(start)}' AND '{_rfc3339nano(end)}'"
    if name == "__timeFrom":
        return f"'{_rfc3339nano(start)}'"
    if name == "__timeTo":
        return f"'{_rfc3339nano(end)}'"
    if name == "__unixEpochFilter":
        return f"{args[0]} >= {math.floor(start.timestamp())} AND {args[0]} <= {math.floor(end.timestamp())}"
    # $__timeGroup and friends depend on the panel's interval: implement them (faithfully) when used
    raise Unexpanded(f"${name}(...): not a macro this test implements")


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


# -- unit tests of the expansion (Grafana's documented examples) -------------------------------

START = datetime(2017, 4, 21, 5, 1, 17, tzinfo=timezone.utc)
END = datetime(2017, 4, 21, 5, 6, 17, 250000, tzinfo=timezone.utc)


def test_macros_expand_as_the_postgresql_plugin_writes_them():
    assert expand("WHERE $__timeFilter(t)", {}, START, END) == \
        "WHERE t BETWEEN '2017-04-21T05:01:17Z' AND '2017-04-21T05:06:17.25Z'"
    assert expand("$__timeFrom() $__timeTo()", {}, START, END) == "'2017-04-21T05:01:17Z' '2017-04-21T05:06:17.25Z'"
    assert expand("WHERE $__unixEpochFilter( e.created_at )", {}, START, END) == \
        "WHERE e.created_at >= 1492750877 AND e.created_at <= 1492751177"
    assert expand("$__unixEpochFrom() $__unixEpochTo()", {}, START, END) == "1492750877 1492751177"
    assert expand("SELECT $__time(t), $__timeEpoch(t)", {}, START, END) == \
        'SELECT t AS "time", extract(epoch from t) as "time"'
    # the macro's arguments end at the first ')': a function call inside is cut in two
    assert expand("$__timeFilter(to_timestamp(x))", {}, START, END).startswith("to_timestamp(x BETWEEN")


def test_variables_are_quoted_as_the_postgresql_plugin_quotes_them():
    variables = {"run": Value("it's"), "mode": Value(["h2", "http1.0"], multi=True, include_all=True),
                 "cache": Value("cold", multi=True)}
    assert expand("'$run' '${run}' '[[run]]'", variables, START, END) == "'it''s' 'it''s' 'it''s'"
    assert expand("IN ($mode) IN (${cache})", variables, START, END) == "IN ('h2','http1.0') IN ('cold')"
    assert expand("${mode:csv} ${mode:sqlstring} ${run:sqlstring}", variables, START, END) == \
        "h2,http1.0 'h2','http1.0' 'it''s'"


@pytest.mark.parametrize("sql", ["$nope", "${nope}", "[[nope]]", "$__timeGroup(t, '1h')", "$__interval",
                                 "$__nope(x)", "${run:json}", "$__searchFilter"])
def test_anything_unknown_is_refused(sql):
    with pytest.raises(Unexpanded):
        expand(f"SELECT {sql}", {"run": Value("r")}, START, END)


# -- structure ---------------------------------------------------------------------------------

def test_there_are_dashboards_with_unique_uids_and_titles():
    assert len(BOARDS) >= 6, BOARDS
    boards = [load(path) for path in BOARDS]
    for path, board in zip(BOARDS, boards):
        assert "id" not in board or board["id"] is None, path.name  # Grafana assigns ids
        assert board["uid"] and len(board["uid"]) <= 40 and re.fullmatch(r"[\w-]+", board["uid"]), path.name
        assert board["title"] and "pagebench" in board["tags"], path.name
        assert 36 <= board["schemaVersion"] <= 41, path.name
    assert len({b["uid"] for b in boards}) == len(boards)
    assert len({b["title"] for b in boards}) == len(boards)


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_every_datasource_reference_is_the_provisioned_one(path):
    board = load(path)
    found = [(where, value) for where, value in walk(board) if where.endswith(".datasource")]
    assert found
    for where, value in found:
        assert value == DATASOURCE, f"{path.name}{where}: {value!r}"
    assert "__inputs" not in board and "__requires" not in board  # an export for sharing, not provisioning


@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_every_panel_and_variable_has_sql(path):
    board = load(path)
    ids = [panel["id"] for panel in panels(board)]
    assert ids and len(set(ids)) == len(ids)
    for panel in panels(board):
        if panel["type"] == "row":
            continue
        assert panel.get("datasource") == DATASOURCE, panel["title"]
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            assert target.get("rawSql", "").strip(), (panel["title"], target.get("refId"))
            assert target.get("format") in FORMATS and target.get("editorMode") == "code", panel["title"]
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"]), panel["title"]
        assert panel.get("description"), f"{panel['title']}: say what the panel shows"
    for variable in board["templating"]["list"]:
        assert variable["type"] in ("query", "custom", "constant"), variable["name"]
        if variable["type"] == "query":
            assert variable_sql(variable).strip(), variable["name"]
            # provisioned without options: the query must run when the dashboard loads (1), or on
            # every time-range change (2) when it uses the time range
            assert variable["refresh"] == (2 if "$__" in variable_sql(variable) else 1), variable["name"]
    for annotation in board["annotations"]["list"]:
        assert annotation.get("target", {}).get("rawSql", "").strip(), annotation["name"]


def test_links_between_dashboards_name_real_dashboards_and_variables():
    boards = {b["uid"]: b for b in map(load, BOARDS)}
    links = [(path.name, value) for path in BOARDS for where, value in walk(load(path))
             if where.endswith(".url") and isinstance(value, str) and value]
    for name, url in links:
        found = re.match(r"/d/([\w-]+)(?:\?(.*))?$", url)
        assert found and found.group(1) in boards, f"{name}: {url}"
        variables = {v["name"] for v in boards[found.group(1)]["templating"]["list"]}
        for parameter in (found.group(2) or "").split("&"):
            if parameter.startswith("var-"):
                assert parameter[4:].split("=")[0] in variables, f"{name}: {url}"


def test_provisioning_names_the_datasource_and_the_dashboards_folder():
    datasources = yaml.safe_load((DASHBOARDS / "provisioning/datasources/pagebench.yaml").read_text())
    [source] = datasources["datasources"]
    assert {k: source[k] for k in ("name", "uid", "type")} == {"name": "pagebench", **DATASOURCE}
    assert source["url"] == "db:5432" and source["editable"] is False
    assert source["user"] == "$PAGEBENCH_DB_USER"
    assert source["secureJsonData"] == {"password": "$PAGEBENCH_DB_PASSWORD"}
    assert source["jsonData"]["database"] == "$PAGEBENCH_DB_NAME"
    assert (source["jsonData"]["sslmode"], source["jsonData"]["postgresVersion"],
            source["jsonData"]["timescaledb"]) == ("disable", 1500, False)

    providers = yaml.safe_load((DASHBOARDS / "provisioning/dashboards/pagebench.yaml").read_text())
    [provider] = providers["providers"]
    assert provider["type"] == "file" and provider["disableDeletion"] is True
    assert provider["allowUiUpdates"] is False
    folder = provider["options"]["path"]
    # docker-compose.yml mounts dashboards/json there
    grafana = yaml.safe_load((REPO / "docker-compose.yml").read_text())["services"]["grafana"]
    mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in grafana["volumes"]}
    assert (REPO / mounts[folder]).resolve() == (DASHBOARDS / "json").resolve()


# -- against real data -------------------------------------------------------------------------

@dataclass(frozen=True)
class Filled:
    url: str
    runs: list[str]  # oldest first


@pytest.fixture(scope="module")
def filled(postgres_url, tmp_path_factory) -> Iterator[Filled]:
    """Two real runs through the CLI into a fresh PostgreSQL database: two modes, cold and
    warm, a link check each (about a minute)."""
    url = fresh_database(postgres_url, "dashboards")
    spec = write_spec(tmp_path_factory.mktemp("dashboards"), name="dashboards", sites=["seed000-small-n5"],
                      modes=["http1.0", "h2"], profiles=[{"name": "r20", "rtt_ms": 20}], cache=["cold", "warm"],
                      repetitions=3, warmup=1, seed=1, timeouts={"link_check": True})
    runs = [run_id_of(pagebench("run", str(spec), "--db", url)) for _ in range(2)]
    assert nothing_left()
    yield Filled(url, runs)
    drop_database(postgres_url, "dashboards")


def query(conn: sa.Connection, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run SQL as Grafana does: the text as is, no placeholders (a '%' is just a '%')."""
    cursor = conn.connection.dbapi_connection.cursor()
    try:
        cursor.execute(sql)
        return [column.name for column in cursor.description], cursor.fetchall()
    finally:
        cursor.close()


def resolve(board: dict[str, Any], conn: sa.Connection, start: datetime, end: datetime) -> dict[str, Value]:
    """Each variable's default, as Grafana picks it on a first visit: a query variable's first
    option (all options when it has 'All'), in the order the variables are defined."""
    values: dict[str, Value] = {}
    for variable in board["templating"]["list"]:
        name, multi, include_all = variable["name"], variable.get("multi", False), variable.get("includeAll", False)
        if variable["type"] == "query":
            assert variable.get("datasource") == DATASOURCE, name
            columns, rows = query(conn, expand(variable_sql(variable), values, start, end))
            assert rows, f"variable {name}: its query returned no rows"
            index = columns.index("__value") if "__value" in columns else 0
            options = [str(row[index]) for row in rows]
        elif variable["type"] == "custom":
            options = [o.split(" : ")[-1].strip() for o in re.split(r"(?<!\\),", variable["query"])]
        else:
            options = [variable["query"]]
        current = (variable.get("current") or {}).get("value")
        chosen = [current] if isinstance(current, str) else current or []
        if include_all:
            value: str | list[str] = options
        elif chosen and all(c in options for c in chosen):  # a saved choice Grafana still offers
            value = current
        else:
            value = [options[0]] if multi else options[0]
        values[name] = Value(value, multi, include_all)
    return values


@pytest.fixture(scope="module")
def engine(filled) -> Iterator[sa.Engine]:
    engine = sa.create_engine(filled.url)
    yield engine
    engine.dispose()


def run_target(conn: sa.Connection, where: str, target: dict[str, Any], values: dict[str, Value],
               start: datetime, end: datetime, timed: bool = False) -> list[str]:
    """Expand and run one query; it must return rows, with a time column in time order for a
    time series or an annotation (`timed`). Returns its column names."""
    sql = expand(target["rawSql"], values, start, end)
    try:
        columns, rows = query(conn, sql)
    except psycopg.Error as error:
        pytest.fail(f"{where}: {error}\n{sql}")
    assert rows, f"{where}: no rows\n{sql}"
    assert len(set(columns)) == len(columns), f"{where}: duplicate column names {columns}"
    if timed or target["format"] == "time_series":
        assert "time" in columns, f"{where}: a time series needs a 'time' column"
        times = [row[columns.index("time")] for row in rows]
        assert times == sorted(times), f"{where}: rows must come in time order"
    return columns


@needs_root
@pytest.mark.integration
@pytest.mark.parametrize("path", BOARDS, ids=lambda p: p.stem)
def test_every_query_runs_on_real_runs_and_returns_rows(path, filled, engine):
    board = load(path)
    start, end = time_range(board, datetime.now(timezone.utc))
    with engine.connect() as conn:
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")  # all a Grafana user needs
        values = resolve(board, conn, start, end)
        if "run" in values:
            assert values["run"].value == filled.runs[-1], "the run variable defaults to the newest run"
        for annotation in board["annotations"]["list"]:
            where = f"{path.name}: annotation {annotation['name']!r}"
            run_target(conn, where, annotation["target"], values, start, end, timed=True)
        for panel in panels(board):
            fields: set[str] = set()
            for target in panel.get("targets", []):
                where = f"{path.name}: panel {panel['title']!r} {target['refId']}"
                fields |= set(run_target(conn, where, target, values, start, end))
            x_field = panel["options"].get("xField")
            assert x_field is None or x_field in fields, f"{panel['title']}: xField {x_field!r} not in {fields}"
            for override in panel["fieldConfig"]["overrides"]:
                if override["matcher"]["id"] == "byName":
                    assert override["matcher"]["options"] in fields, \
                        f"{panel['title']}: an override for {override['matcher']['options']!r}, not a column"


@needs_root
@pytest.mark.integration
def test_the_load_variable_is_a_real_load_of_the_run(filled, engine):
    board = load(DASHBOARDS / "json" / "waterfall.json")
    start, end = time_range(board, datetime.now(timezone.utc))
    with engine.connect() as conn:
        values = resolve(board, conn, start, end)
        seqs = {row[0] for row in conn.execute(sa.text(
            "SELECT l.seq FROM loads l JOIN experiments e ON e.id = l.experiment_id WHERE e.run_id = :run"),
            {"run": filled.runs[-1]})}
    assert int(values["load"].value) in seqs


@needs_root
@pytest.mark.integration
def test_protocol_medians_are_the_summarys(filled, engine):
    """The protocol comparison's numbers are the run's one summary's (what `pagebench
    report` shows), condition by condition and in its order, and each 95 % interval holds
    its median."""
    board = load(DASHBOARDS / "json" / "protocols.json")
    start, end = time_range(board, datetime.now(timezone.utc))
    [table] = [p for p in panels(board) if p["title"].startswith("Load time and TTFB by condition")]
    with engine.connect() as conn:
        values = resolve(board, conn, start, end)
        columns, rows = query(conn, expand(table["targets"][0]["rawSql"], values, start, end))
    with Store(filled.url) as store:
        summary = of_run(store, filled.runs[-1])
    assert len(rows) == len(summary.conditions) == 4
    for row, condition in zip(rows, summary.conditions):
        got = dict(zip(columns, row))
        assert Condition(got["site"], got["mode"], got["topology"], got["profile"], got["cache"], got["tls"],
                         got["encoding"], got["version"]) == condition.condition
        assert (got["n"], got["flagged"], got["failed"]) == (condition.n, len(condition.flagged),
                                                              len(condition.failed))
        for metric, name in (("load_ms", "load"), ("ttfb_ms", "TTFB")):
            assert got[f"{name} median"] == pytest.approx(condition.metrics[metric].median, abs=1e-9)
            assert got[f"{name} CI low"] <= got[f"{name} median"] <= got[f"{name} CI high"]
        assert got["load / bound"] == pytest.approx(condition.load_over_bound.median, abs=1e-9)


# -- encodings, against a store filled by hand (no browser: a second or two) -------------------

ENCODED_BOARDS = ["protocols.json", "connections.json", "trend.json", "waterfall.json"]


@pytest.fixture(scope="module")
def encoded(postgres_url) -> Iterator[str]:
    """A PostgreSQL store with one run of identity, gzip and dcz loads of a site's version 2
    (recorded by the store's own writes, as a run records them)."""
    from dataclasses import replace

    from pagebench.core.records import PlannedLoad
    from tests.helpers import META, PROFILES, SPEC, fake_load

    url = fresh_database(postgres_url, "dashboards_encodings")
    base = Condition("demo", H2, "direct", "3g", "warm", encoding=IDENTITY, version=2)
    conditions = [base, replace(base, encoding=GZIP), replace(base, encoding=DCZ)]
    plan = [PlannedLoad(seq, conditions[seq % 3], seq // 3, False) for seq in range(15)]
    share = {"identity": 1.0, "gzip": 0.25, "dcz": 0.05}
    with Store(url) as store:
        store.create_experiment("enc1", {**SPEC, "encoding": ["identity", "gzip", "dcz"]}, META, plan,
                                {"3g": PROFILES["3g"]})
        for planned in plan:
            name = planned.condition.encoding.name
            load = fake_load(replace(planned, condition=replace(planned.condition, cache="cold")),
                             {"identity": 1800.0, "gzip": 1500.0, "dcz": 1400.0}[name] + planned.repetition)
            resources = tuple(replace(r, encoded_bytes=round(r.body_bytes * (share[name] if i < 3 else 1.0)),
                                      content_encoding="" if name == "identity" or i >= 3 else name,
                                      dictionary_offered=name == "dcz" and 0 < i < 3,
                                      dictionary_used=name == "dcz" and i == 1)
                              for i, r in enumerate(load.resources))
            store.record_loads("enc1", planned, [replace(load, resources=resources)], started_at=time_now())
        store.set_status("enc1", "complete")
    yield url.replace("postgresql+psycopg://", "postgresql://")
    drop_database(postgres_url, "dashboards_encodings")


def time_now() -> float:
    return datetime.now(timezone.utc).timestamp()


@needs_root
@pytest.mark.parametrize("name", ENCODED_BOARDS)
def test_the_queries_run_on_a_run_of_several_encodings(name, encoded):
    board = load(DASHBOARDS / "json" / name)
    engine = sa.create_engine(encoded.replace("postgresql://", "postgresql+psycopg://"))
    start, end = time_range(board, datetime.now(timezone.utc))
    try:
        with engine.connect() as conn:
            values = resolve(board, conn, start, end)
            for panel in panels(board):
                for target in panel.get("targets", []):
                    run_target(conn, f"{name}: panel {panel['title']!r}", target, values, start, end)
    finally:
        engine.dispose()


@needs_root
def test_the_encodings_table_sets_each_encoding_against_identity(encoded):
    board = load(DASHBOARDS / "json" / "protocols.json")
    [table] = [p for p in panels(board) if p["title"] == "Encodings against identity"]
    [bars] = [p for p in panels(board) if p["title"].startswith("Response bytes per load")]
    engine = sa.create_engine(encoded.replace("postgresql://", "postgresql+psycopg://"))
    start, end = time_range(board, datetime.now(timezone.utc))
    try:
        with engine.connect() as conn:
            values = resolve(board, conn, start, end)
            columns, rows = query(conn, expand(table["targets"][0]["rawSql"], values, start, end))
            bar_columns, bar_rows = query(conn, expand(bars["targets"][0]["rawSql"], values, start, end))
    finally:
        engine.dispose()
    got = {row[columns.index("encoding")]: dict(zip(columns, row)) for row in rows}
    assert list(got) == ["identity", "gzip", "dcz"] and all(r["version"] == 2 for r in got.values())
    with Store(encoded) as store:  # the numbers the report states
        summary = of_run(store, "enc1")
        savings = {row.condition.encoding.name: row
                   for row in encoding.savings(encoding.loads_by_condition(summary, store.run_resources("enc1")))}
    for name, row in got.items():
        saving = savings[name]
        assert (row["n"], row["bytes / load"]) == (saving.n, saving.bytes.estimate)
        assert (row["dictionary offered"], row["dictionary used"], row["304s"]) == (
            saving.dictionary_offered, saving.dictionary_used, saving.revalidated)
        if not saving.is_baseline:
            assert float(row["saved vs identity %"]) == pytest.approx(saving.saved_pct.estimate, abs=0.05)
            assert row["measured saved (ms)"] == pytest.approx(saving.measured_ms.estimate)
    text, images = 14_210 + 22_400 + 91_200, 181_004 + 9_120 + 7_311
    assert got["identity"]["bytes / load"] == text + images
    assert got["gzip"]["bytes / load"] == pytest.approx(text / 4 + images, abs=2)
    assert float(got["gzip"]["saved vs identity %"]) == pytest.approx(100 * 0.75 * text / (text + images), abs=0.1)
    assert got["gzip"]["measured saved (ms)"] == pytest.approx(300.0)
    assert float(got["identity"]["saved vs identity %"]) == 0.0
    assert (got["dcz"]["dictionary offered"], got["dcz"]["dictionary used"], got["dcz"]["304s"]) == (2, 1, 0)
    [bar] = bar_rows
    row = dict(zip(bar_columns, bar))
    assert row["identity"] == text + images and row["br"] is None and row["dcz"] < row["gzip"] < row["identity"]
