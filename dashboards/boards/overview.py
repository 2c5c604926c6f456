"""Every run in the store: status, loads planned and recorded, how it was produced."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard
from grafana_foundation_sdk.models import common, dashboard as model

from boards.panels import bars, board as frame, coloured, coloured_text, colours, fixed, named_colours, stats, \
    table, thresholds, unit
from boards.sdk import DataLink

COUNTS = """count(l.id) FILTER (WHERE NOT l.warmup AND l.ok AND NOT l.flagged) AS usable,
       count(l.id) FILTER (WHERE NOT l.warmup AND l.ok AND l.flagged) AS flagged,
       count(l.id) FILTER (WHERE NOT l.warmup AND NOT l.ok) AS failed"""

IN_RANGE = """-- Runs created in the time range (created_at is float epoch seconds) and what their loads came to.
SELECT count(DISTINCT e.id) AS runs,
       count(l.id) FILTER (WHERE NOT l.warmup) AS "measured loads",
       """ + COUNTS + """
FROM experiments e
LEFT JOIN loads l ON l.experiment_id = e.id
WHERE $__unixEpochFilter(e.created_at)
"""

RUNS = """-- One row per run in the time range, newest first.
SELECT to_timestamp(e.created_at) AS created,
       e.run_id AS run,
       e.spec->>'name' AS experiment,
       (SELECT rs.status FROM run_status rs
        WHERE rs.experiment_id = e.id ORDER BY rs.id DESC LIMIT 1) AS status,
       e.planned,
       count(l.id) AS recorded,
       """ + COUNTS + """,
       count(l.id) FILTER (WHERE l.warmup) AS "warm-up",
       (SELECT count(*) FROM conditions c WHERE c.experiment_id = e.id) AS conditions,
       max(l.recorded_at) - e.created_at AS duration,
       (SELECT CASE WHEN count(*) = 0 THEN 'not checked'
                    WHEN bool_and(lc.valid) THEN 'valid' ELSE 'invalid' END
        FROM link_checks lc WHERE lc.experiment_id = e.id) AS link,
       e.git_commit AS commit,
       e.backend,
       e.chromium_version AS chromium,
       e.nginx_version AS nginx,
       e.kernel,
       e.pagebench_version AS pagebench,
       e.host,
       e.seed
FROM experiments e
LEFT JOIN loads l ON l.experiment_id = e.id
WHERE $__unixEpochFilter(e.created_at)
GROUP BY e.id
ORDER BY e.created_at DESC, e.id DESC
"""

LOADS = """-- Loads per run in the time range, oldest first, split by what became of them.
SELECT e.run_id AS run,
       """ + COUNTS + """,
       count(l.id) FILTER (WHERE l.warmup) AS "warm-up",
       greatest(e.planned - count(l.id), 0) AS "not recorded"
FROM experiments e
LEFT JOIN loads l ON l.experiment_id = e.id
WHERE $__unixEpochFilter(e.created_at)
GROUP BY e.id
ORDER BY e.created_at, e.id
"""


def board() -> dashboard.Dashboard:
    return frame("pagebench-overview", "pagebench: experiments overview", """\
Every run in the results store: status, loads planned and recorded, how the run was produced
(commit, link backend, Chromium, nginx, kernel), and its flagged and failed loads.""", [
        stats("In this time range", """\
Runs created in the dashboard's time range and their measured loads (warm-ups not counted).
A measured load is usable, flagged (it broke a promise of its condition: see the load's flags)
or failed; flagged and failed loads are left out of every statistic, never hidden.""", IN_RANGE, height=4)
        .decimals(0).color_scheme(colours(model.FieldColorModeId.THRESHOLDS)).thresholds(thresholds([(None, "blue")]))
        .override_by_name("flagged", coloured([(None, "green"), (1, "orange")]))
        .override_by_name("failed", coloured([(None, "green"), (1, "red")])),

        table("Runs", """\
Every run created in the time range, newest first. `status` is the run's latest `run_status` row
(running, complete, interrupted or failed: `pagebench run --resume RUN` finishes an interrupted or
failed run). `recorded` counts every stored load, warm-ups included, against `planned`; usable +
flagged + failed are the measured loads. `link` is the run's link checks: valid only if every
profile's check was. Click a run to open it on the protocol comparison dashboard.""", RUNS, height=12)
        .override_by_name("created", unit("dateTimeAsIso"))
        .override_by_name("duration", unit("s", 0))
        .override_by_name("run", [model.DynamicConfigValue(id_val="links", value=[DataLink(
            "protocol comparison of this run", "/d/pagebench-protocols?var-run=${__value.raw}&${__url_time_range}")])])
        .override_by_name("status", named_colours(
            {"complete": "green", "running": "blue", "interrupted": "orange", "failed": "red"}))
        .override_by_name("link", named_colours({"valid": "green", "invalid": "red", "not checked": "text"}))
        .override_by_name("flagged", coloured_text([(None, "text"), (1, "orange")]))
        .override_by_name("failed", coloured_text([(None, "text"), (1, "red")])),

        bars("Loads per run", """\
Each run's loads, oldest run first: usable, flagged, failed, warm-up, and planned loads not
(yet) recorded (a running or interrupted run).""", LOADS, x="run", height=9, stacked=True,
             values=common.VisibilityMode.NEVER, horizontal=False)
        .override_by_name("usable", fixed("green"))
        .override_by_name("flagged", fixed("orange"))
        .override_by_name("failed", fixed("red"))
        .override_by_name("warm-up", fixed("blue"))
        .override_by_name("not recorded", fixed("text")),
    ])
