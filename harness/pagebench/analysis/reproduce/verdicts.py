"""`pagebench reproduce`'s answer: the catalogue (`claims`) evaluated on stored runs.

`gather` reads the runs of each scenario (which runs: the mapping the CLI kept while it
ran them, or the latest stored ones) into `measures.Data`; `evaluate` gives one `Row` per
claim and variant, with the measured value's 95 % interval, the verdict and, where the
verdict is not "reproduced", the reason in one line; `html` draws the seeds' figures
from the same data. Read-only: it never runs anything.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from rich.markup import escape as escape_markup
from rich.table import Table

from pagebench.analysis.report.page import document, figure, section
from pagebench.analysis.reproduce.claims import Claim
from pagebench.analysis.reproduce import seed000, seed001, seed002, seed004
from pagebench.analysis.reproduce.figures import Figure
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA, SCENARIO_BY_NAME, TODAY, VARIANT_NOTES
from pagebench.analysis.stats import Interval
from pagebench.results.rows import RunRow
from pagebench.results.store import Store

#: (scenario, variant, run label) -> run id
RunMap = dict[tuple[str, str, str], str]
#: Claims measured from the resources of a load, not only the load row.
NEEDS_RESOURCES = ("000-transfer", "000-first-image", "000-latency", "000-window", "000-local", "004-window",
                   "001-files", "001-delta")
META_KEY = "reproduce"


@dataclass(frozen=True)
class Row:
    """One line of the answer: a claim in one variant."""

    claim: Claim
    variant: str
    measured: Interval | None
    verdict: str  # reproduced / demonstrated / differs / can't tell / no data
    reason: str

    def value(self) -> str:
        return "—" if self.measured is None else show(self.measured, self.claim.unit)


def show(value: Interval, unit: str) -> str:
    """`52 % [48, 55]`, `4.02 RTT [3.98, 4.05]`, `2.11 Mbit/s [2.09, 2.12]`."""
    if unit == "%":
        def f(x: float) -> str:
            return "?" if math.isnan(x) else f"{x * 100:.0f}"
        text, low, high, suffix = f(value.estimate), f(value.low), f(value.high), " %"
    else:
        def f(x: float) -> str:
            return "?" if math.isnan(x) else f"{x:.2f}"
        text, low, high, suffix = f(value.estimate), f(value.low), f(value.high), f" {unit}"
    if value.low == value.high == value.estimate:
        return text + suffix
    return f"{text}{suffix} [{low}, {high}]"


def gather(store: Store, runs: RunMap) -> dict[str, Data]:
    """Each scenario's measured loads: ok, unflagged, warm-ups excluded."""
    found: dict[str, Data] = {}
    for (scenario, variant, label), run_id in runs.items():
        data = found.setdefault(scenario, Data({}))
        loads = [load for load in store.loads(run_id) if load.ok and not load.flagged]
        if scenario in NEEDS_RESOURCES:
            for resource in store.run_resources(run_id):
                data.resources.setdefault(resource.load_id, []).append(resource)
        data.loads[(variant, label)] = loads
        for condition in store.conditions(run_id):
            data.profiles[condition.condition.profile] = condition.profile_fields
    return found


def latest_runs(store: Store, scenarios: Iterable[str]) -> RunMap:
    """The latest complete stored run of each scenario, variant and label (from the runs'
    `reproduce` meta), for re-reading a reproduction without running it again."""
    wanted, runs = set(scenarios), {}
    for listed in store.runs():
        if listed.status != "complete":
            continue
        meta = (listed.meta or {}).get(META_KEY)
        if not meta or meta.get("scenario") not in wanted:
            continue
        key = (meta["scenario"], meta["variant"], meta.get("label", ""))
        runs.setdefault(key, listed.run_id)
    return runs


def facts(store: Store, runs: RunMap, command: str, minutes: float) -> dict[str, str]:
    """What the HTML answer states about how it was measured: when, with what, how long."""
    ids = list(runs.values())
    first: RunRow | None = min((store.experiment(i) for i in ids), key=lambda e: e.created_at or 0, default=None)
    when = datetime.fromtimestamp(first.created_at if first is not None else time.time(), timezone.utc)
    found = {"measured": when.strftime("%Y-%m-%d %H:%M UTC"), "command": command,
             "runs": f"{len(ids)} ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})",
             "wall time": f"{minutes:.1f} min"}
    for key, name in (("git_commit", "commit"), ("chromium_version", "chromium"), ("nginx_version", "nginx"),
                      ("kernel", "kernel"), ("backend", "link backend")):
        if first is not None and getattr(first, key):
            found[name] = str(getattr(first, key))
    return found


def evaluate(claims: Sequence[Claim], data: Mapping[str, Data]) -> list[Row]:
    """One row per claim and variant, era first."""
    rows = []
    for claim in claims:
        scenario = SCENARIO_BY_NAME.get(claim.scenario)
        variants = scenario.variants if scenario else (ERA, TODAY)
        measured = {v: claim.measure(data[claim.scenario], v) if claim.scenario in data else None for v in variants}
        verdicts = {v: _verdict(claim, m) for v, m in measured.items()}
        for variant in variants:
            rows.append(Row(claim, variant, measured[variant], verdicts[variant],
                            _reason(claim, variant, measured, verdicts)))
    return rows


def _verdict(claim: Claim, measured: Interval | None) -> str:
    if measured is None:
        return "no data"
    if math.isnan(measured.low) or math.isnan(measured.high):
        return "can't tell"
    found = claim.rule.verdict(measured)
    return "demonstrated" if found == "reproduced" and claim.demonstrated else found


def _reason(claim: Claim, variant: str, measured: Mapping[str, Interval | None], verdicts: Mapping[str, str]) -> str:
    verdict = verdicts[variant]
    if verdict == "reproduced":
        return ""
    if verdict == "demonstrated":
        return claim.demonstrated
    if verdict == "no data":
        return "no usable loads (failed or flagged): see pagebench report"
    if verdict == "can't tell":
        return f"the interval straddles {claim.rule.reading or 'the range'}: more repetitions would tell"
    # every other variant's value: a controlled variant (one factor set back) shows the cause
    contrast = "".join(f"{other} {show(found, claim.unit)} ({verdicts[other]}); "
                       for other, found in measured.items() if other != variant and found is not None)
    return contrast + claim.why


# The terminal's table -------------------------------------------------------------------

HEADERS = ("seed", "claim", "paper", "condition (paper's / ours)", "variant", "measured (95 % CI)", "falsifier",
           "verdict", "why")
VERDICT_COLUMN = HEADERS.index("verdict")


def table_rows(rows: Sequence[Row]) -> list[list[str]]:
    return [[f"{r.claim.seed} {r.claim.section}", r.claim.claim, r.claim.paper,
             f"{r.claim.condition or '?'} / {r.claim.ours or '?'}", r.variant, r.value(), r.claim.falsifier(),
             r.verdict, r.reason] for r in rows]


def markdown(rows: Sequence[Row]) -> str:
    """The rows as a Markdown table (docs/reproductions.md)."""
    lines = ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |" for cells in table_rows(rows)]
    return "\n".join(lines) + "\n"


VERDICT_STYLES = {"reproduced": "green", "demonstrated": "blue", "differs": "yellow", "can't tell": "cyan",
                  "no data": "red"}


def terminal_table(rows: Sequence[Row], title: str) -> Table:
    """The rows for the terminal, verdicts coloured."""
    table = Table(title=title, show_lines=False)
    for header in HEADERS:
        table.add_column(header, overflow="fold", no_wrap=header in ("variant", "verdict"))
    for row, cells in zip(rows, table_rows(rows)):
        style = VERDICT_STYLES.get(row.verdict)
        cells[VERDICT_COLUMN] = f"[{style}]{cells[VERDICT_COLUMN]}[/]" if style else cells[VERDICT_COLUMN]
        table.add_row(*(escape_markup(c) if i != VERDICT_COLUMN else c for i, c in enumerate(cells)))
    return table


# The HTML answer --------------------------------------------------------------------------


def html(rows: Sequence[Row], data: Mapping[str, Data], title: str, facts: Mapping[str, str]) -> str:
    """The rows and the seeds' figure shapes, self-contained (inline SVG, no script)."""
    body = [f"<h1>{escape(title)}</h1>",
            '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts.items())
            + "</dl>",
            section("Claims", _table(rows), "claims")]
    drawn = "".join(figure(f.name, f.svg, escape(f.caption), f.legend) for f in figures(data))
    body.append(section("The seeds' figures, measured", drawn or "<p>No scenario data.</p>", "figures"))
    notes = "".join(f"<li>{escape(seed)} {escape(variant)}: {escape(text)}</li>"
                    for (seed, variant), text in VARIANT_NOTES.items())
    body.append(section("Variants", f"<ul>{notes}</ul>", "variants"))
    return document(title, body, viewport=False)




def figures(data: Mapping[str, Data]) -> list[Figure]:
    """Every figure the scenarios' data can draw (`--html` embeds them, `--figures` writes
    each as an SVG file)."""
    return [figure for seed in (seed000, seed002, seed004, seed001) for figure in seed.figures(data)]


def _table(rows: Sequence[Row]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in HEADERS)
    lines = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in table_rows(rows))
    return f'<table class="conditions"><thead><tr>{head}</tr></thead><tbody>{lines}</tbody></table>'



















