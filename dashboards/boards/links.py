"""What the emulated link really did: each link check's configured against measured
numbers, and the RTT error across runs."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard, timeseries
from grafana_foundation_sdk.models import common

from boards.panels import Properties, board as frame, legend, lines, named_colours, run_variable, table, tooltip, \
    unit
from boards.sql import RUN

CHECKED = """A link check measures what the emulated link really does before the run's loads: handshake RTT
from 50 TCP connects (median, p95), steady **goodput** each way by bulk transfer (TCP payload: at
most rate × 1448/1514 of the configured rate), datagram loss, the emulator's release **lateness**
(µs a packet left after its due time) and drops. A check is **invalid** if packets left more than
1 ms late (p99) or the kernel could not hand packets to the emulator; its problems say which.
Empty configured rates mean unlimited."""

PROBLEMS = "coalesce((SELECT string_agg(p, '; ') FROM json_array_elements_text(lc.result->'problems') AS p), '')"

OF_THE_RUN = f"""-- The chosen run's link checks, one per network profile: what the profile configured against
-- what the link measured (result is the `pagebench link check --json` document, a json column).
WITH {RUN}
SELECT lc.profile,
       CASE WHEN lc.valid THEN 'valid' ELSE 'invalid' END AS verdict,
       lc.backend,
       (lc.result->'configured'->>'rtt_ms')::float8 AS "RTT configured",
       lc.rtt_median_ms AS "RTT median",
       (lc.result->'measured'->'rtt_ms'->>'p95')::float8 AS "RTT p95",
       (lc.result->'configured'->>'down_mbit')::float8 AS "down configured",
       lc.down_mbit AS "down goodput",
       -- TCP payload can reach rate x 1448/1514 at most (a full Ethernet frame carries 1448 bytes)
       round((100 * lc.down_mbit / ((lc.result->'configured'->>'down_mbit')::float8 * 1448 / 1514))::numeric, 1)
         AS "down % of ceiling",
       (lc.result->'configured'->>'up_mbit')::float8 AS "up configured",
       lc.up_mbit AS "up goodput",
       round((100 * lc.up_mbit / ((lc.result->'configured'->>'up_mbit')::float8 * 1448 / 1514))::numeric, 1)
         AS "up % of ceiling",
       (lc.result->'configured'->>'loss_pct')::float8 AS "loss configured %",
       lc.loss_pct AS "loss measured %",
       (lc.result->'lateness_us'->>'p50')::float8 AS "lateness p50",
       lc.lateness_p99_us AS "lateness p99",
       (lc.result->'lateness_us'->>'max')::float8 AS "lateness max",
       (SELECT sum(d.value::text::bigint) FROM json_each(lc.result->'drops') AS d) AS drops,
       {PROBLEMS} AS problems,
       to_timestamp(lc.checked_at) AS checked
FROM link_checks lc
JOIN run ON run.id = lc.experiment_id
ORDER BY lc.profile, lc.id
"""

IN_RANGE = f"""-- Every link check in the time range, newest first, with its run.
SELECT to_timestamp(lc.checked_at) AS checked,
       e.run_id AS run,
       lc.profile,
       CASE WHEN lc.valid THEN 'valid' ELSE 'invalid' END AS verdict,
       lc.backend,
       (lc.result->'configured'->>'rtt_ms')::float8 AS "RTT configured",
       lc.rtt_median_ms AS "RTT median",
       (lc.result->'configured'->>'down_mbit')::float8 AS "down configured",
       lc.down_mbit AS "down goodput",
       (lc.result->'configured'->>'loss_pct')::float8 AS "loss configured %",
       lc.loss_pct AS "loss measured %",
       lc.lateness_p99_us AS "lateness p99",
       {PROBLEMS} AS problems
FROM link_checks lc
JOIN experiments e ON e.id = lc.experiment_id
WHERE $__unixEpochFilter(lc.checked_at)
ORDER BY lc.checked_at DESC, lc.id DESC
"""

RTT_ERROR = """-- Measured median RTT minus the configured RTT, per profile, for every link check in the time
-- range (a series per profile: the column named metric names it).
SELECT to_timestamp(lc.checked_at) AS time,
       lc.profile AS metric,
       lc.rtt_median_ms - (lc.result->'configured'->>'rtt_ms')::float8 AS "RTT error"
FROM link_checks lc
WHERE $__unixEpochFilter(lc.checked_at)
  AND lc.rtt_median_ms IS NOT NULL AND lc.result->'configured'->>'rtt_ms' IS NOT NULL
ORDER BY lc.checked_at, lc.id
"""

#: Each column's unit where its table has it: (unit, decimals) by name.
UNITS: dict[str, Properties] = {
    **{name: unit("ms", 2) for name in ("RTT configured", "RTT median", "RTT p95")},
    **{name: unit("Mbits", 2) for name in ("down configured", "down goodput", "up configured", "up goodput")},
    **{name: unit("µs", 0) for name in ("lateness p50", "lateness p99", "lateness max")},
    "checked": unit("dateTimeAsIso"),
}


def _checks(title: str, description: str, sql: str, columns: tuple[str, ...], *, height: int,
            span: int = 24) -> dashboard.Panel:
    """A table of link checks: the verdict in colour, each of `columns` in its unit."""
    panel = table(title, description, sql, height=height, span=span) \
        .override_by_name("verdict", named_colours({"valid": "green", "invalid": "red"}))
    for name in columns:
        panel.override_by_name(name, UNITS[name])
    return panel


def board() -> dashboard.Dashboard:
    return frame("pagebench-links", "pagebench: link checks", """\
What the emulated link really did in each run: configured against measured RTT, goodput and
loss, the emulator's lateness, and whether the link was valid.""", [
        _checks("Link checks of the run", f"""\
The chosen run's link checks, one per network profile: configured against measured RTT,
goodput each way (and as a share of its ceiling), loss, emulator lateness and drops.

{CHECKED}""", OF_THE_RUN, tuple(UNITS), height=7),

        _checks("Every link check in the time range", f"""\
Link checks of all runs in the dashboard's time range, newest first.

{CHECKED}""", IN_RANGE, ("RTT configured", "RTT median", "down configured", "down goodput", "lateness p99",
                         "checked"), height=10, span=16),

        lines(timeseries.Panel(), "RTT error per profile", """\
Measured median handshake RTT minus the configured RTT, per profile, at each link check in the
time range: how exactly the emulator delays (the delay program releases packets within tens of
µs when the machine is quiet).""", RTT_ERROR, height=10, span=8, format="time_series")
        .draw_style(common.GraphDrawStyle.POINTS).unit("ms").decimals(2).line_width(1).span_nulls(False)
        .legend(legend()).tooltip(tooltip()),
    ], variables=[run_variable()])
