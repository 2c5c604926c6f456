"""One run compared across its conditions: load time and TTFB medians with their 95 %
intervals, and what content encodings save against identity."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard
from grafana_foundation_sdk.models import common

from boards.conditions import ENCODING, but, chart_name, chart_order, columns, full_name, order, twins, varying
from boards.panels import bars, board as frame, coloured_text, decimals, fixed, in_their_colours, invisible, ms, \
    run_variable, table
from boards.sql import EXCLUDED, INTERVAL, RUN, USABLE, chart_medians, median_interval
from pagebench.core import encodings

BY_CONDITION = f"""-- Per condition of the chosen run: n, and the median of load time and TTFB with a
-- distribution-free 95 % interval (order statistics: see the panel's description).
-- Only usable loads count; flagged and failed loads are counted instead.
WITH {RUN},
samples AS (   -- one row per usable load and metric: no warm-up, failed or flagged load
  SELECT l.condition_id, m.metric, m.value
  FROM loads l
  JOIN run ON run.id = l.experiment_id
  CROSS JOIN LATERAL (VALUES ('load', l.load_ms), ('ttfb', l.ttfb_ms), ('load/bound', l.load_ms / nullif(l.bound_ms, 0)))
    AS m(metric, value)
  WHERE {USABLE} AND m.value IS NOT NULL
),
{median_interval(("condition_id", "metric"))},
{EXCLUDED}
SELECT {columns()},
       coalesce(ld.n, 0) AS n,
       ld.median AS "load median",
       ld.ci_low AS "load CI low",
       ld.ci_high AS "load CI high",
       round(100 * ld.coverage, 1) AS "coverage %",
       tt.median AS "TTFB median",
       tt.ci_low AS "TTFB CI low",
       tt.ci_high AS "TTFB CI high",
       lb.median AS "load / bound",
       coalesce(x.flagged, 0) AS flagged,
       coalesce(x.failed, 0) AS failed
FROM conditions c
JOIN run ON run.id = c.experiment_id
LEFT JOIN summary ld ON ld.condition_id = c.id AND ld.metric = 'load'
LEFT JOIN summary tt ON tt.condition_id = c.id AND tt.metric = 'ttfb'
LEFT JOIN summary lb ON lb.condition_id = c.id AND lb.metric = 'load/bound'
LEFT JOIN excluded x ON x.condition_id = c.id
ORDER BY {order()}
"""

MEDIANS = chart_medians("""-- Median TTFB and load time per condition of the chosen run (usable loads only),
-- protocol modes side by side within each profile and cache state.""",
                        [("l.ttfb_ms", "TTFB median"), ("l.load_ms", "load median")])

FLOATING = f"""-- The load time's median and 95 % interval per condition, drawn as a floating bar:
-- an invisible bar up to the interval's low end, then low end -> median, then median -> high end.
WITH {RUN},
{varying()},
samples AS (
  SELECT l.condition_id, l.load_ms AS value
  FROM loads l JOIN run ON run.id = l.experiment_id
  WHERE {USABLE} AND l.load_ms IS NOT NULL
),
{median_interval(("condition_id",))}
SELECT {chart_name()},
       s.ci_low AS "CI low",
       s.median - s.ci_low AS "CI low to median",
       s.ci_high - s.median AS "median to CI high"
FROM summary s
JOIN conditions c ON c.id = s.condition_id
CROSS JOIN varying v
ORDER BY {chart_order()}
"""

#: Per usable load, then per condition: response bytes as sent, 304s, dictionaries.
SENT = f"""WITH {RUN},
per_load AS (  -- each usable load: response bodies as sent (encodedBodySize, else the transfer size), 304s, dictionaries
  SELECT l.id, l.condition_id, l.load_ms,
         coalesce(sum(coalesce(r.encoded_bytes, r.transfer_bytes)) FILTER (WHERE NOT r.from_cache), 0) AS sent,
         count(r.id) FILTER (WHERE r.status = 304) AS not_modified,
         count(r.id) FILTER (WHERE r.dictionary_offered) AS offered,
         count(r.id) FILTER (WHERE r.dictionary_used) AS used
  FROM loads l
  JOIN run ON run.id = l.experiment_id
  LEFT JOIN resources r ON r.load_id = l.id
  WHERE {USABLE}
  GROUP BY l.id, l.condition_id, l.load_ms
),
per_condition AS (
  SELECT condition_id, count(*) AS n,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY sent) AS sent,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY load_ms) AS load_ms,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY not_modified) AS not_modified,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY offered) AS offered,
         percentile_cont(0.5) WITHIN GROUP (ORDER BY used) AS used
  FROM per_load GROUP BY condition_id
)"""

PER_ENCODING = ",\n       ".join(f"max(pc.sent) FILTER (WHERE c.encoding = '{name}') AS {name}"
                                 for name in encodings.NAMES)
BYTES = f"""-- Median response bytes per usable load, one column per encoding, a row per condition without its encoding.
{SENT}
SELECT {full_name(" · ", but(ENCODING))} AS condition,
       {PER_ENCODING}
FROM per_condition pc
JOIN conditions c ON c.id = pc.condition_id
GROUP BY {columns(but(ENCODING))}
ORDER BY {order(but(ENCODING))}
"""

AGAINST_IDENTITY = f"""-- Each condition of the chosen run against its identity twin (same everything but the encoding).
{SENT}
SELECT {columns()},
       pc.n,
       pc.sent AS "bytes / load",
       round((100 * (1 - pc.sent / nullif(base.sent, 0)))::numeric, 1) AS "saved vs identity %",
       base.load_ms - pc.load_ms AS "measured saved (ms)",
       pc.offered AS "dictionary offered",
       pc.used AS "dictionary used",
       pc.not_modified AS "304s"
FROM per_condition pc
JOIN conditions c ON c.id = pc.condition_id
LEFT JOIN conditions bc ON {twins("bc", "c", ENCODING)}
  AND bc.encoding = '{encodings.IDENTITY.name}'
LEFT JOIN per_condition base ON base.condition_id = bc.id
ORDER BY {order()}
"""


def board() -> dashboard.Dashboard:
    return frame("pagebench-protocols", "pagebench: protocol comparison", """\
Load time and TTFB of one run by protocol mode × network profile × cache state: medians with a
95 % interval computed in SQL. Flagged, failed and warm-up loads are excluded.""", [
        table("Load time and TTFB by condition: median and 95 % interval", f"""\
The chosen run's conditions (site × mode × profile × cache × TLS × topology): n usable loads, the
median load time (`load` event) and time to first byte, each with its 95 % interval, and the
median of load / analytic lower bound. Warm-up loads never count; flagged and failed loads are left
out and counted in their own columns.

{INTERVAL}""", BY_CONDITION, height=9)
        .override_by_name("load median", ms()).override_by_name("load CI low", ms())
        .override_by_name("load CI high", ms()).override_by_name("TTFB median", ms())
        .override_by_name("TTFB CI low", ms()).override_by_name("TTFB CI high", ms())
        .override_by_name("load / bound", decimals(2))
        .override_by_name("coverage %", coloured_text([(None, "orange"), (95, "text")]))
        .override_by_name("flagged", coloured_text([(None, "text"), (1, "orange")]))
        .override_by_name("failed", coloured_text([(None, "text"), (1, "red")])),

        bars("Median TTFB and load time", """\
Median time to first byte and median load time per condition of the chosen run (usable loads
only), the protocol modes next to each other within each profile and cache state. The interval
of each median is in the table above and, for load time, in the panel to the right.""", MEDIANS,
             x="condition", height=11, span=12, unit="ms")
        .override_by_name("TTFB median", fixed("blue")).override_by_name("load median", fixed("green")),

        bars("Load time: median and 95 % interval", f"""\
A floating bar per condition: it spans the 95 % interval of the median load time, and the
colour changes at the median (an invisible bar fills the space up to the interval's low end;
the tooltip's two values are the distances from the low end to the median and from the median
to the high end). Bars that overlap: the run cannot tell those conditions apart.

{INTERVAL}""", FLOATING, x="condition", height=11, span=12, unit="ms", stacked=True,
             values=common.VisibilityMode.NEVER)
        .override_by_name("CI low", invisible())
        .override_by_name("CI low to median", fixed("light-green"))
        .override_by_name("median to CI high", fixed("dark-green")),

        in_their_colours(bars("Response bytes per load, per encoding", """\
Median response bytes per usable load (bodies as sent: encodedBodySize, else the transfer size;
cache hits send nothing), one bar per content encoding, grouped by the rest of the condition.""",
                              BYTES, x="condition", height=11, unit="decbytes"), encodings.ENCODINGS),

        table("Encodings against identity", """\
Per condition of the chosen run: median response bytes per load, the share saved against the
identity condition that differs only in its encoding, the measured time saved (median identity
load time minus this one), median resources per load that offered a dictionary and used one
(dcz), and 304s. The model's estimate of the time saved (seed 001) is in `pagebench report`.""",
              AGAINST_IDENTITY, height=9),
    ], variables=[run_variable()])
