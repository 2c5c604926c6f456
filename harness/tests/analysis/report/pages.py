"""Reading the HTML report in tests: a page written from a store, its figures and table
rows, a hostile run, and a ReportData made by hand (no store)."""

from __future__ import annotations

import re
from pathlib import Path

from pagebench.analysis.report.gather import ReportData
from pagebench.analysis.summary import summarize
from pagebench.core import modes
from pagebench.core.modes import H2, HTTP10
from pagebench.core.records import Condition, PlannedLoad
from pagebench.analysis.report.html import write_html_report
from pagebench.results.rows import ResourceRow, RunRow
from pagebench.results.schema import META_COLUMNS
from pagebench.results.store import Store
from tests.helpers import CHECK, META, PROFILES, SPEC, fake_load, make_plan, stored_load

HOSTILE = '<script>alert("x")</script>'
FIGURE = re.compile(r'<figure class="chart" data-chart="([^"]+)"[^>]*>(.*?)</figure>', re.S)


def report(store: Store, tmp_path: Path, run_id: str = "r1") -> str:
    path = tmp_path / "report.html"
    write_html_report(store, run_id, path)
    return path.read_text(encoding="utf-8")


def figures(page: str) -> list[tuple[str, str]]:
    """(chart name, its first svg) for every chart figure."""
    found = []
    for name, body in FIGURE.findall(page):
        svg = re.search(r"<svg\b.*?</svg>", body, re.S)
        found.append((name, svg.group(0) if svg else ""))
    return found


def numbers_row(page: str, mode: str) -> str:
    """The conditions table's row of a mode."""
    body = page.split('<table class="numbers">', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    [row] = [row for row in body.split("</tr>")[:-1] if f'<td class="f">{mode}</td>' in row]
    return row


def fill_hostile(store: Store) -> None:
    """A run whose site, profile, host and flags try to break out of the HTML (8 conditions)."""
    profiles = {'cable"&<b>': PROFILES["cable"], "3g": PROFILES["3g"]}
    conditions = [Condition(site, mode, "direct", profile, "cold") for site in (HOSTILE, "plain")
                  for mode in (HTTP10, H2) for profile in profiles]
    plan = [PlannedLoad(rep * len(conditions) + i, c, rep, False) for rep in range(5)
            for i, c in enumerate(conditions)]
    store.create_experiment("r1", SPEC, {**META, "host": "<img src=x onerror=alert(1)>"}, plan, profiles)
    store.add_link_check("r1", "3g", {**CHECK, "problems": ["</table><script>bad()</script>"]})
    for planned in plan:
        store.record_loads("r1", planned, [fake_load(planned, 1500.0 + 10 * planned.seq, flagged=planned.seq == 3)],
                           started_at=1_790_000_000.0 + planned.seq)


def report_data(loads_per_mode: dict[str, int]) -> ReportData:
    """A run of one profile (3g) planned with 5 loads per mode, of which `loads_per_mode`
    are recorded, as the values `gather` would read."""
    plan = make_plan(modes=tuple(map(modes.parse, loads_per_mode)), profiles=("3g",), reps=5, warmups=0)
    loads, resources = [], {}
    for planned in plan:
        if planned.repetition >= loads_per_mode[planned.condition.mode.name]:
            continue
        result = fake_load(planned, (1200.0 if planned.condition.mode is H2 else 2000.0) + 10 * planned.repetition)
        loads.append(stored_load(planned, result))
        resources[loads[-1].id] = [ResourceRow(loads[-1].id, position, resource)
                                   for position, resource in enumerate(result.resources)]
    experiment = RunRow(run_id="r1", created_at=1_790_000_000.0, planned=len(plan), recorded=len(loads),
                        status="complete", reason=None, spec=SPEC, meta=META,
                        **{key: META[key] for key in META_COLUMNS})
    return ReportData("r1", experiment, summarize("r1", loads, plan), {"3g": PROFILES["3g"]}, [], [], resources)
