"""One load, resource by resource: its waterfall, timings, verdict and counts."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard
from grafana_foundation_sdk.models import common, dashboard as model

from boards.conditions import SITE, but, full_name, short_name
from boards.panels import bars, board as frame, colours, fixed, invisible, ms, run_variable, stats, table, thresholds, \
    unit, variable

LOADS = f"""-- Every load of the chosen run in seq order: its condition, verdict and load time.
SELECT l.seq AS __value,
       l.seq || '  ' || {short_name(but(SITE))}
         || CASE WHEN l.warmup THEN ' warm-up' ELSE '' END
         || CASE WHEN NOT l.ok THEN ' FAILED' WHEN l.flagged THEN ' flagged' ELSE '' END
         || coalesce('  ' || round(l.load_ms) || ' ms', '') AS __text
FROM loads l
JOIN experiments e ON e.id = l.experiment_id
JOIN conditions c ON c.id = l.condition_id
WHERE e.run_id = '$run'
ORDER BY l.seq"""

#: The CTE `chosen`: the load of the dashboard's variables.
CHOSEN = """WITH chosen AS (
  SELECT l.*
  FROM loads l JOIN experiments e ON e.id = l.experiment_id
  WHERE e.run_id = '$run' AND l.seq = $load
)"""

CONNECT = """CASE WHEN (r.timing->>'connectStart')::float8 >= 0
              THEN (r.timing->>'connectEnd')::float8 - (r.timing->>'connectStart')::float8 ELSE 0 END"""

TIMINGS = f"""-- The chosen load's timings (ms after navigation start) and its analytic lower bound.
{CHOSEN}
SELECT ttfb_ms AS "TTFB", fcp_ms AS "FCP", dcl_ms AS "DCL", lcp_ms AS "LCP", load_ms AS load, bound_ms AS bound
FROM chosen
"""

THE_LOAD = f"""-- The chosen load as field / value rows: its condition, verdict (with the flags that made it),
-- notes, what it fetched, its connections counted three ways and the link's counters.
{CHOSEN},
listed AS (    -- the JSON arrays flags, errors and notes as text
  SELECT (SELECT string_agg(f, '; ') FROM json_array_elements_text(chosen.flags) AS f) AS flags,
         (SELECT string_agg(f, '; ') FROM json_array_elements_text(chosen.errors) AS f) AS errors,
         (SELECT string_agg(f, '; ') FROM json_array_elements_text(chosen.notes) AS f) AS notes
  FROM chosen
)
SELECT v.field, v.value
FROM chosen l
JOIN conditions c ON c.id = l.condition_id
CROSS JOIN listed
CROSS JOIN LATERAL (VALUES
  (1, 'condition', {full_name(" ")}),
  (2, 'repetition', CASE WHEN l.warmup THEN 'warm-up (never counted)' ELSE l.repetition::text END),
  (3, 'verdict', CASE WHEN NOT l.ok THEN 'failed' WHEN l.flagged THEN 'flagged' ELSE 'usable' END),
  (4, 'flags', coalesce(listed.flags, '')),
  (5, 'errors', coalesce(listed.errors, '')),
  (6, 'notes', coalesce(listed.notes, '')),
  (7, 'started (UTC)', to_char(to_timestamp(l.started_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')),
  (8, 'URL', l.url),
  (9, 'requests / cache hits', l.requests || ' / ' || l.cache_hits),
  (10, 'bytes (transferred)', l.bytes::text),
  (11, 'connections browser / link / server',
       l.connections_browser || ' / ' || l.connections_link || ' / ' || l.connections_server),
  (12, 'link packets up / down', (l.link->>'packets_up') || ' / ' || (l.link->>'packets_down')),
  (13, 'link drops queue / loss / nfqueue',
       ((l.link->>'drops_queue_up')::bigint + (l.link->>'drops_queue_down')::bigint) || ' / '
       || ((l.link->>'drops_loss_up')::bigint + (l.link->>'drops_loss_down')::bigint) || ' / '
       || (l.link->>'drops_nfqueue')),
  (14, 'emulator lateness p99 (µs)', l.link->'lateness_us'->>'p99')
) AS v(ord, field, value)
ORDER BY v.ord
"""

WATERFALL = f"""-- One bar per resource of the chosen load, in start order, stacked from: an invisible offset up
-- to the request's start, connect (TCP + TLS; only on a new connection), waiting (to the first
-- byte) and receiving (first to last byte). Times are ms after navigation start.
{CHOSEN},
phases AS (
  SELECT r.position, r.url, r.from_cache, r.start_ms,
         coalesce(r.response_start_ms, r.end_ms, r.start_ms) AS first_byte_ms,
         coalesce(r.end_ms, r.response_start_ms, r.start_ms) AS end_ms,
         {CONNECT} AS connect_ms
  FROM resources r JOIN chosen ON chosen.id = r.load_id
)
SELECT lpad(position::text, 3) || '  ' || regexp_replace(url, '^[a-z]+://', '')
         || CASE WHEN from_cache THEN '  (cache)' ELSE '' END AS resource,
       start_ms AS start,
       least(connect_ms, greatest(first_byte_ms - start_ms, 0)) AS connect,
       greatest(first_byte_ms - start_ms - connect_ms, 0) AS waiting,
       greatest(end_ms - first_byte_ms, 0) AS receiving
FROM phases
ORDER BY start_ms, position
"""

RESOURCES = f"""-- Every resource of the chosen load in start order: where it came from, on which protocol and
-- connection, and its times (ms after navigation start; connect and TLS from CDP's timing).
{CHOSEN}
SELECT r.position AS "#",
       r.url,
       r.resource_type AS type,
       r.status,
       r.protocol,
       r.connection_id AS connection,
       r.from_cache AS "from cache",
       r.revalidated,
       r.start_ms AS start,
       r.response_start_ms AS "first byte",
       r.end_ms AS "end",
       r.end_ms - r.start_ms AS duration,
       {CONNECT} AS connect,
       CASE WHEN (r.timing->>'sslStart')::float8 >= 0
            THEN (r.timing->>'sslEnd')::float8 - (r.timing->>'sslStart')::float8 END AS "TLS",
       r.transfer_bytes AS transferred,
       r.body_bytes AS body,
       r.encoded_bytes AS "body sent",
       r.content_encoding AS "content encoding",
       r.dictionary_offered AS "dictionary offered",
       r.dictionary_used AS "dictionary used"
FROM resources r JOIN chosen ON chosen.id = r.load_id
ORDER BY r.start_ms, r.position
"""


def _resources() -> dashboard.Panel:
    """The resource table: times in ms (the duration as a bar), sizes in bytes."""
    panel = table("Resources", """\
Every resource of the chosen load in the order the requests started: type, status, protocol and
browser connection id, whether it came from the disk cache (or was revalidated), its start,
first byte and end in ms after navigation start, the connect and TLS handshake times of a new
connection (CDP timing), and bytes transferred and decoded.""", RESOURCES, height=12)
    for name in ("start", "first byte", "end", "connect", "TLS"):
        panel.override_by_name(name, ms())
    return panel.override_by_name("duration", [*ms(), model.DynamicConfigValue(
        id_val="custom.cellOptions", value=common.TableBarGaugeCellOptions(
            mode=common.BarGaugeDisplayMode.BASIC, value_display_mode=common.BarGaugeValueMode.TEXT)),
        model.DynamicConfigValue(id_val="color", value=model.FieldColor(mode=model.FieldColorModeId.CONTINUOUS_GR_YL_RD))]) \
        .override_by_name("transferred", unit("bytes")).override_by_name("body", unit("bytes"))


def board() -> dashboard.Dashboard:
    return frame("pagebench-waterfall", "pagebench: load waterfall", """\
One load of one run, resource by resource: a waterfall of when each request started, connected,
waited and received, with the load's timings, verdict, notes and connection counts.""", [
        stats("Timings", """\
The chosen load's navigation timings in ms after navigation start: time to first byte, first
contentful paint, DOMContentLoaded, largest contentful paint, the `load` event, and the load's
analytic lower bound (round trips, handshakes, slow start and bytes over the link: no load can
beat it).""", TIMINGS, height=5, span=12)
        .unit("ms").decimals(1).thresholds(thresholds([(None, "text")]))
        .color_scheme(colours(model.FieldColorModeId.FIXED).fixed_color("text")),

        table("The load", """\
The chosen load: its condition, verdict (a flagged load broke a promise of its condition; the
flags say which), the notes that explain counts that legitimately differ, what it fetched, its
connections counted by the browser, the link and the server, and the link's counters.""", THE_LOAD,
              height=10, span=12, header=False)
        .override_by_name("field", [model.DynamicConfigValue(id_val="custom.width", value=260)]),

        bars("Waterfall", """\
One bar per resource, in the order the requests started, drawn by Grafana's built-in **bar chart**:
horizontal bars with stacking, where each row's first stacked value is an invisible offset that
moves the bar to the request's start, then the visible phases: **connect** (TCP and TLS
handshakes, only when the request opened a new connection: CDP's connectStart..connectEnd),
**waiting** (from the request's start to its first byte: queueing, sending, the server's time,
and the round trip) and **receiving** (first to last byte). Start, first byte and end come from the
page's Resource Timing, ms after navigation start. Resources read from the disk cache are marked
(cache). The resource table below has the raw numbers.""", WATERFALL, x="resource", height=16, unit="ms",
             stacked=True, values=common.VisibilityMode.NEVER, bar_width=0.8, label_length=80)
        .decimals(1)
        .override_by_name("start", invisible())
        .override_by_name("connect", fixed("orange"))
        .override_by_name("waiting", fixed("blue"))
        .override_by_name("receiving", fixed("green")),

        _resources(),
    ], variables=[run_variable(), variable(
        "load", "One load of the run, by its seq (the order the run made its loads in).", LOADS, label="load (seq)")])
