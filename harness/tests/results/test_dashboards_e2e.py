"""Grafana's dashboards on real data: every panel's SQL, expanded as Grafana expands it
(`grafana.py`), runs on a PostgreSQL store that holds real runs and returns rows; the
load variable, the protocol and visual medians, the visual progress curves and the
encodings table agree with the store and its summary. Their JSON and provisioning:
`test_dashboards.py`."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from pagebench.analysis import encoding
from pagebench.analysis.summary import of_run
from pagebench.core import encodings, modes
from pagebench.core.encodings import DCZ, GZIP, IDENTITY
from pagebench.core.modes import H2
from pagebench.core.records import VISUAL_METRICS, Condition
from pagebench.results.schema import experiments, loads, visual_progress
from pagebench.results.store import Store

from tests.helpers import drop_database, fresh_database, needs_root, nothing_left, pagebench, run_id_of, write_spec
from tests.results.grafana import BOARDS, DASHBOARDS, DATASOURCE, Value, expand, load, panels, time_range, \
    variable_sql

pytestmark = needs_root


@dataclass(frozen=True)
class Filled:
    url: str
    runs: list[str]  # oldest first


Curve = tuple[tuple[float, float], ...]


def frames(fcp_ms: float, lcp_ms: float) -> tuple[Curve, dict[str, float | int]]:
    """A load's visual progress curve as its frames would show a small static page (blank
    until the first paint, complete a little after the largest), and the metrics
    `core.measure.visual` takes from such a curve (SpeedIndex: the area above it), with
    no layout shift or long task."""
    last = max(lcp_ms, fcp_ms + 100.0)
    curve = ((0.0, 0.0), (fcp_ms, 0.42), ((fcp_ms + last) / 2, 0.88), (last - 16.7, 0.96), (last, 1.0))
    speed_index = sum((later - ms) * (1 - progress) for (ms, progress), (later, _) in zip(curve, curve[1:]))
    return curve, {"first_visual_change_ms": fcp_ms, "speed_index_ms": speed_index,
                   "visual_complete_85_ms": curve[2][0], "visual_complete_95_ms": curve[3][0],
                   "visual_complete_99_ms": last, "last_visual_change_ms": last, "cls": 0.0, "tbt_ms": 0.0,
                   "long_tasks": 0}


def give_frames(url: str, run_id: str) -> None:
    """The run's loads as visual capture records them, where the run has no curves (a run
    made before capture existed): each ok load's frames from its own paint times, so the
    visual panels read the real runs' conditions and loads. Written with the store's
    tables, as the store writes them (its API only records new loads)."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            ok = conn.execute(sa.select(loads.c.id, loads.c.fcp_ms, loads.c.lcp_ms)
                              .join(experiments, experiments.c.id == loads.c.experiment_id)
                              .where(experiments.c.run_id == run_id, loads.c.ok)).all()
            if conn.execute(sa.select(sa.func.count()).select_from(visual_progress)
                            .where(visual_progress.c.load_id.in_([row.id for row in ok]))).scalar_one():
                return
            for row in ok:
                curve, metrics = frames(row.fcp_ms, row.lcp_ms or row.fcp_ms)
                conn.execute(sa.update(loads).where(loads.c.id == row.id).values(**metrics))
                conn.execute(sa.insert(visual_progress), [
                    {"load_id": row.id, "position": position, "ms": ms, "progress": progress}
                    for position, (ms, progress) in enumerate(curve)])
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def filled(postgres_url, tmp_path_factory) -> Iterator[Filled]:
    """Two real runs through the CLI into a fresh PostgreSQL database: two modes, cold and
    warm, a link check each (about a minute); the newer one's loads with frames."""
    url = fresh_database(postgres_url, "dashboards")
    spec = write_spec(tmp_path_factory.mktemp("dashboards"), name="dashboards", sites=["seed000-small-n5"],
                      modes=["http1.0", "h2"], profiles=[{"name": "r20", "rtt_ms": 20}], cache=["cold", "warm"],
                      repetitions=3, warmup=1, seed=1, timeouts={"link_check": True})
    runs = [run_id_of(pagebench("run", str(spec), "--db", url)) for _ in range(2)]
    assert nothing_left()
    give_frames(url, runs[-1])
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


def test_the_load_variable_is_a_real_load_of_the_run(filled, engine):
    board = load(DASHBOARDS / "json" / "waterfall.json")
    start, end = time_range(board, datetime.now(timezone.utc))
    with engine.connect() as conn:
        values = resolve(board, conn, start, end)
        seqs = {row[0] for row in conn.execute(sa.text(
            "SELECT l.seq FROM loads l JOIN experiments e ON e.id = l.experiment_id WHERE e.run_id = :run"),
            {"run": filled.runs[-1]})}
    assert int(values["load"].value) in seqs


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
        assert Condition(got["site"], modes.parse(got["mode"]), got["topology"], got["profile"], got["cache"],
                         got["tls"], encodings.parse(got["encoding"]), got["version"]) == condition.condition
        assert (got["n"], got["flagged"], got["failed"]) == (condition.n, len(condition.flagged),
                                                              len(condition.failed))
        for metric, name in (("load_ms", "load"), ("ttfb_ms", "TTFB")):
            assert got[f"{name} median"] == pytest.approx(condition.metrics[metric].median, abs=1e-9)
            assert got[f"{name} CI low"] <= got[f"{name} median"] <= got[f"{name} CI high"]
        assert got["load / bound"] == pytest.approx(condition.load_over_bound.median, abs=1e-9)


def test_visual_medians_are_the_summarys(filled, engine):
    """The visual metrics' medians are the run's summary's, condition by condition and in
    its order, SpeedIndex's interval holds its median, and n counts the loads with frames."""
    board = load(DASHBOARDS / "json" / "visual.json")
    start, end = time_range(board, datetime.now(timezone.utc))
    [table] = [p for p in panels(board) if p["title"] == "Visual metrics by condition: medians"]
    with engine.connect() as conn:
        values = resolve(board, conn, start, end)
        columns, rows = query(conn, expand(table["targets"][0]["rawSql"], values, start, end))
    with Store(filled.url) as store:
        summary = of_run(store, filled.runs[-1])
    assert len(rows) == len(summary.conditions) == 4
    metrics = {"first visual change": "first_visual_change_ms", "SpeedIndex": "speed_index_ms",
               "visually complete 85 %": "visual_complete_85_ms", "visually complete 95 %": "visual_complete_95_ms",
               "visually complete 99 %": "visual_complete_99_ms", "last visual change": "last_visual_change_ms",
               "LCP": "lcp_ms", "CLS": "cls", "TBT": "tbt_ms", "long tasks": "long_tasks", "INP": "inp_ms"}
    assert sorted(metrics.values()) == sorted([*VISUAL_METRICS, "lcp_ms"])
    for row, condition in zip(rows, summary.conditions):
        got = dict(zip(columns, row))
        assert Condition(got["site"], modes.parse(got["mode"]), got["topology"], got["profile"], got["cache"],
                         got["tls"], encodings.parse(got["encoding"]), got["version"]) == condition.condition
        assert got["n"] == len(condition.values("speed_index_ms")) == condition.n > 0
        for name, metric in metrics.items():
            expected = condition.metrics[metric].median
            assert got[name] == (None if expected is None else pytest.approx(expected, abs=1e-9)), name
        assert got["SpeedIndex CI low"] <= got["SpeedIndex"] <= got["SpeedIndex CI high"]


def test_the_curves_are_each_mode_s_median_load(filled, engine):
    """Each mode's column of the curves panel is the stored curve of its median load by
    SpeedIndex in the condition the variables choose, point for point."""
    board = load(DASHBOARDS / "json" / "visual.json")
    start, end = time_range(board, datetime.now(timezone.utc))
    [curves] = [p for p in panels(board) if p["type"] == "trend"]
    with engine.connect() as conn:
        values = resolve(board, conn, start, end)
        columns, rows = query(conn, expand(curves["targets"][0]["rawSql"], values, start, end))
    assert [row[0] for row in rows] == sorted(row[0] for row in rows), "the x values must ascend"
    with Store(filled.url) as store:
        summary = of_run(store, filled.runs[-1])
        stored = store.run_visual_progress(filled.runs[-1])
    chosen = {name: values[name].value for name in values if name != "run"}
    drawn = 0
    for condition in summary.conditions:
        if any(str(getattr(condition.condition, name)) != value for name, value in chosen.items()):
            continue
        by_speed = sorted(condition.used, key=lambda row: (row.speed_index_ms, row.seq, row.client))
        median = by_speed[(len(by_speed) + 1) // 2 - 1]
        mode = columns.index(condition.condition.mode.name)
        assert tuple((row[0], row[mode]) for row in rows if row[mode] is not None) == stored[median.id]
        drawn += 1
    assert drawn == 2  # http1.0 and h2 in the first condition the variables offer


# -- encodings, against a store filled by hand (no browser: a second or two) -------------------

ENCODED_BOARDS = ["protocols.json", "connections.json", "trend.json", "waterfall.json", "visual.json"]


@pytest.fixture(scope="module")
def encoded(postgres_url) -> Iterator[str]:
    """A PostgreSQL store with one run of identity, gzip and dcz loads of a site's version 2,
    each with its frames (recorded by the store's own writes, as a run records them)."""
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
            curve, metrics = frames(load.fcp_ms, load.lcp_ms)
            store.record_loads("enc1", planned, [replace(load, resources=resources, visual_progress=curve, **metrics)],
                               started_at=time_now())
        store.set_status("enc1", "complete")
    yield url.replace("postgresql+psycopg://", "postgresql://")
    drop_database(postgres_url, "dashboards_encodings")


def time_now() -> float:
    return datetime.now(timezone.utc).timestamp()


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
