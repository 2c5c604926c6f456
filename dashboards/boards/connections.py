"""How many connections each protocol mode needs, counted by the browser, the link and the
server."""

from __future__ import annotations

from grafana_foundation_sdk.builders import dashboard
from grafana_foundation_sdk.models import common

from boards.conditions import columns, order
from boards.panels import bars, board as frame, coloured_text, fixed, run_variable, table
from boards.sql import RUN, USABLE, chart_medians

COUNTED = """Connections are counted three ways for every load: **browser**, the distinct CDP connection ids of
the page's requests; **link**, new TCP connections (and UDP flows) the router forwarded; **server**,
the distinct nginx connection serial numbers that served requests. HTTP/1.0 opens one per request;
HTTP/2 one per origin. On cold HTTP/2 loads the link can count more than the browser: Chromium
opens sockets to an origin before ALPN says it speaks h2, and those carry no request (the load's
notes say so)."""

PER_LOAD = chart_medians("""-- Median connections per load, counted three ways, per condition of the chosen run
-- (usable loads only), protocol modes side by side within each profile and cache state.""",
                         [("l.connections_browser", "browser"), ("l.connections_link", "link"),
                          ("l.connections_server", "server")])

BY_CONDITION = f"""-- Per condition of the chosen run (usable loads only): requests and connections per load,
-- counted by the browser (CDP connection ids), the link (new TCP connections at the router)
-- and the server (nginx connection serial numbers), and in the proxy topology by the edge proxy
-- (upstream connections it opened; with a warm pool, those it reused), median and range; and how many loads the link
-- saw more connections than the browser used (sockets opened before ALPN, carrying no request).
WITH {RUN}
SELECT {columns()},
       count(*) AS n,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.requests) AS requests,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.connections_browser) AS browser,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.connections_link) AS link,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.connections_server) AS server,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.connections_proxy) AS "proxy (upstream)",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.connections_proxy_reused) AS "proxy reused (warm pool)",
       min(l.connections_browser) || '–' || max(l.connections_browser) AS "browser range",
       min(l.connections_link) || '–' || max(l.connections_link) AS "link range",
       min(l.connections_server) || '–' || max(l.connections_server) AS "server range",
       count(*) FILTER (WHERE l.connections_link > l.connections_browser) AS "loads: link > browser",
       percentile_cont(0.5) WITHIN GROUP (ORDER BY l.cache_hits) AS "cache hits"
FROM conditions c
JOIN run ON run.id = c.experiment_id
JOIN loads l ON l.condition_id = c.id AND {USABLE}
GROUP BY c.id
ORDER BY {order()}
"""


def board() -> dashboard.Dashboard:
    return frame("pagebench-connections", "pagebench: connections", """\
How many connections each protocol mode needs: per load of the chosen run, counted by the
browser, the link and the server.""", [
        bars("Connections per load, counted three ways", f"""\
Median connections per load for each condition of the chosen run (usable loads: no warm-up,
flagged or failed load).

{COUNTED}""", PER_LOAD, x="condition", height=11, unit="none", values=common.VisibilityMode.ALWAYS)
        .decimals(0)
        .override_by_name("browser", fixed("blue")).override_by_name("link", fixed("orange"))
        .override_by_name("server", fixed("purple")),

        table("Connections and requests by condition", f"""\
Per condition of the chosen run: n usable loads, median requests and connections per load with
their range over the loads, the loads on which the link counted more connections than the browser
used, and median cache hits.

{COUNTED}""", BY_CONDITION, height=9)
        .override_by_name("loads: link > browser", coloured_text([(None, "text"), (1, "orange")])),
    ], variables=[run_variable()])
