"""Grafana (dashboards/): the dashboard JSON is what the dashboards' code makes, well formed,
naming one datasource and every condition field and visual metric of the store; the
provisioning finds it; and the SQL expansion (`grafana.py`) does what Grafana's PostgreSQL
plugin does. Every panel's SQL on a PostgreSQL store that holds real runs:
`test_dashboards_e2e.py`."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import datetime, timezone

import pytest
import yaml

from pagebench.core.records import VISUAL_METRICS
from pagebench.results.schema import conditions
from tests.helpers import REPO
from tests.results.grafana import BOARDS, DASHBOARDS, DATASOURCE, FORMATS, Unexpanded, Value, expand, load, panels, \
    variable_sql, walk


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


# -- the files are the code's -------------------------------------------------------------------

def test_the_provisioned_files_are_the_generated_ones(tmp_path):
    """json/ holds exactly what `dashboards/generate.py` writes, byte for byte: a dashboard
    is changed in its code (dashboards/boards/), never in its file."""
    made = subprocess.run([sys.executable, str(DASHBOARDS / "generate.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    generated = {path.name: path.read_bytes() for path in sorted(tmp_path.glob("*.json"))}
    provisioned = {path.name: path.read_bytes() for path in BOARDS}
    assert list(generated) == list(provisioned)
    differ = [name for name in generated if generated[name] != provisioned[name]]
    assert not differ, f"{', '.join(differ)}: not what the code makes: run `python dashboards/generate.py`"


def test_every_condition_field_is_listed_and_chosen():
    """Each column of `conditions` (a new one: a row of FIELDS in dashboards/boards/conditions.py)
    is a column of the condition tables and, but the mode, a variable of the visual curves."""
    fields = [c.name for c in conditions.columns if c.name not in ("id", "experiment_id", "key", "profile_fields")]
    tables = {(path.stem, panel["title"]): panel["targets"][0]["rawSql"] for path in BOARDS
              for panel in panels(load(path)) if panel["title"] in (
                  "Load time and TTFB by condition: median and 95 % interval", "Connections and requests by condition",
                  "Encodings against identity", "Visual metrics by condition: medians")}
    assert len(tables) == 4
    for where, sql in tables.items():
        listed = re.search(r"^SELECT (c\.\w+(?:, c\.\w+)*),$", sql, re.MULTILINE)
        assert listed and sorted(listed.group(1).replace("c.", "").split(", ")) == sorted(fields), where
    chosen = [v["name"] for v in load(DASHBOARDS / "json" / "visual.json")["templating"]["list"]]
    assert sorted(chosen) == sorted(["run", *(f for f in fields if f != "mode")])


def test_the_visual_dashboard_has_every_visual_metric_and_the_curves():
    board = load(DASHBOARDS / "json" / "visual.json")
    sql = {panel["title"]: panel["targets"][0]["rawSql"] for panel in panels(board)}
    for name in (*VISUAL_METRICS, "lcp_ms"):
        assert f"l.{name}" in sql["Visual metrics by condition: medians"], name
    [curves] = [p for p in panels(board) if p["type"] == "trend"]
    assert "JOIN visual_progress" in curves["targets"][0]["rawSql"] and curves["options"]["xField"] == "ms"


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
