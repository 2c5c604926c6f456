"""`pagebench reproduce`'s answer: the catalogue (`claims`) evaluated on stored runs.

`gather` reads the runs of each scenario (which runs: the mapping the CLI kept while it
ran them, or the latest stored ones) into `measures.Data`; `evaluate` gives one `Row` per
claim and variant, with the measured value's interval (95 %, or the level of the
scenario's stopping rule: `levels`), the verdict and, where the
verdict is not "reproduced", the reason in one line; `html` draws the seeds' figures
from the same data. Read-only: it never runs anything.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape
from typing import Any

from rich.markup import escape as escape_markup
from rich.table import Table

from pagebench.analysis.report.page import document, figure, section
from pagebench.analysis.reproduce.rules import Claim
from pagebench.analysis.reproduce import seed000, seed001, seed002, seed004
from pagebench.analysis.reproduce.figures import Figure
from pagebench.analysis.reproduce.measures import Data
from pagebench.analysis.reproduce.scenarios import ERA, SCENARIO_BY_NAME, TODAY
from pagebench.analysis.stats import LEVEL, Interval, confidence
from pagebench.core.errors import PagebenchError
from pagebench.core.spec.model import parse
from pagebench.results.store import Store

#: (scenario, variant, run label) -> run id
RunMap = dict[tuple[str, str, str], str]
#: Claims measured from the resources of a load, not only the load row.
NEEDS_RESOURCES = ("000-transfer", "000-first-image", "000-latency", "000-window", "000-local", "004-window",
                   "001-files", "001-delta")
META_KEY = "reproduce"
#: `reproduce --resume latest`: the reproduction whose last run was made last.
LATEST = "latest"


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
    """Each scenario's measured loads: ok, unflagged, warm-ups excluded. Runs are read in
    natural order of (scenario, variant, label) (C=2 before C=16), whatever order `runs`
    has (a fresh run's plan, or the store's latest first), so the same runs give the same
    Data, down to a profile named alike in both variants (the last read, today's, is kept)."""
    found: dict[str, Data] = {}
    for (scenario, variant, label), run_id in sorted(runs.items(), key=lambda item: _natural(item[0])):
        data = found.setdefault(scenario, Data({}))
        loads = [load for load in store.loads(run_id) if load.ok and not load.flagged]
        if scenario in NEEDS_RESOURCES:
            for resource in store.run_resources(run_id):
                data.resources.setdefault(resource.load_id, []).append(resource)
        data.loads[(variant, label)] = loads
        for condition in store.conditions(run_id):
            data.profiles[condition.condition.profile] = condition.profile_fields
    return found


def _natural(key: tuple[str, ...]) -> list[Any]:
    return [int(part) if part.isdigit() else part for text in key for part in re.split(r"(\d+)", text)]


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


class NothingToResume(PagebenchError):
    """`reproduce --resume`: no such reproduction in the store (one line, what to do)."""


@dataclass(frozen=True)
class Stored:
    """A reproduction found in the store: its id, what it was asked (`seeds`, `quick`) and
    the runs it has made so far."""

    reproduction: str
    seeds: list[str]
    quick: bool
    runs: RunMap


def stored_reproduction(store: Store, wanted: str = LATEST) -> Stored:
    """The runs of reproduction `wanted` (its id from the runs' `reproduce` meta), or of
    the latest one."""
    found: dict[str, Stored] = {}
    for listed in store.runs():  # latest first
        meta = (listed.meta or {}).get(META_KEY) or {}
        reproduction = meta.get("reproduction")
        if not reproduction:
            continue
        entry = found.setdefault(reproduction, Stored(reproduction, list(meta.get("seeds") or []),
                                                      bool(meta.get("quick")), {}))
        entry.runs.setdefault((meta["scenario"], meta["variant"], meta.get("label", "")), listed.run_id)
    if not found:
        raise NothingToResume("reproduce --resume: the store holds no reproduction to resume (runs made before "
                              "reproductions had ids cannot be); run pagebench reproduce")
    if wanted == LATEST:
        return next(iter(found.values()))
    if wanted not in found:
        known = ", ".join(list(found)[:5])
        raise NothingToResume(f"reproduce --resume: no reproduction {wanted!r} in the store; latest: {known}")
    return found[wanted]


def facts(store: Store, runs: RunMap, command: str) -> dict[str, str]:
    """What the answer states about how it was measured, from the runs themselves (so a
    `--reuse` states the measuring, not the re-reading): when, with what, how long (each
    run from its start to its last load, summed), how many loads; a fact that differs
    between runs lists each value, in run order."""
    found = {"command": command}
    listed = sorted((store.experiment(run_id) for run_id in runs.values()), key=lambda r: (r.created_at, r.run_id))
    if not listed:
        return found
    spans, stored = [], 0
    for run in listed:
        loads = store.loads(run.run_id, include_warmup=True)
        stored += len(loads)
        spans.append((run.created_at, max((load.recorded_at for load in loads), default=run.created_at)))
    start, end = (datetime.fromtimestamp(t, timezone.utc) for t in (spans[0][0], max(e for _, e in spans)))
    until = end.strftime("%H:%M" if end.date() == start.date() else "%Y-%m-%d %H:%M")
    found = {"measured": f"{start:%Y-%m-%d %H:%M}-{until} UTC"} | found
    found["wall time"] = f"{sum(e - s for s, e in spans) / 60:.1f} min (each run from its start to its last load)"
    ids = [run.run_id for run in listed]
    found["runs"] = f"{len(ids)} ({', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})"
    found["page loads"] = f"{stored} stored (warm-ups and every client of a load included)"
    for key, name in (("git_commit", "commit"), ("chromium_version", "chromium"), ("nginx_version", "nginx"),
                      ("kernel", "kernel"), ("backend", "link backend")):
        values = list(dict.fromkeys(str(v) for run in listed if (v := getattr(run, key))))
        if values:
            found[name] = ", ".join(values)
    return found


def levels(store: Store, runs: RunMap) -> dict[str, float]:
    """Each scenario's interval level: its runs' stopping rule's (`repetitions: auto`: the
    level every look judged at, so the answer is the last look's), else 95 %."""
    found: dict[str, float] = {}
    for (scenario, _, _), run_id in runs.items():
        rule = parse(store.experiment(run_id).spec, f"run {run_id}").sequential
        level = rule.level if rule is not None else LEVEL.get()
        found[scenario] = max(found.get(scenario, 0.0), level)
    return found


def evaluate(claims: Sequence[Claim], data: Mapping[str, Data], levels: Mapping[str, float] | None = None
             ) -> list[Row]:
    """One row per claim and variant, era first; each claim's interval at its scenario's
    level (`levels`; 95 % where not given)."""
    rows = []
    for claim in claims:
        scenario = SCENARIO_BY_NAME.get(claim.scenario)
        variants = scenario.variants if scenario else (ERA, TODAY)
        with confidence((levels or {}).get(claim.scenario, LEVEL.get())):
            measured = {v: claim.measure(data[claim.scenario], v) if claim.scenario in data else None
                        for v in variants}
        verdicts = {v: verdict(claim, m) for v, m in measured.items()}
        for variant in variants:
            rows.append(Row(claim, variant, measured[variant], verdicts[variant],
                            _reason(claim, variant, measured, verdicts)))
    return rows


def verdict(claim: Claim, measured: Interval | None) -> str:
    """The claim's verdict on its measured interval ("demonstrated" where it cannot fail)."""
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
        return f"the interval straddles {claim.rule.reading or 'the range'}: more {claim.over} would tell"
    # every other variant's value: a controlled variant (one factor set back) shows the cause
    contrast = "".join(f"{other} {show(found, claim.unit)} ({verdicts[other]}); "
                       for other, found in measured.items() if other != variant and found is not None)
    return contrast + claim.why


# The terminal's table -------------------------------------------------------------------

HEADERS = ("seed", "claim", "paper", "condition (paper's / ours)", "variant", "measured (CI)", "falsifier",
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


def html(rows: Sequence[Row], data: Mapping[str, Data], title: str, facts: Mapping[str, str],
         variants: Mapping[tuple[str, str], str]) -> str:
    """The rows and the seeds' figure shapes, self-contained (inline SVG, no script);
    `variants`: what each (seed, variant) is, as run."""
    body = [f"<h1>{escape(title)}</h1>",
            '<dl class="facts">' + "".join(f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in facts.items())
            + "</dl>",
            section("Claims", _table(rows), "claims")]
    drawn = "".join(figure(f.name, f.svg, escape(f.caption), f.legend) for f in figures(data))
    body.append(section("The seeds' figures, measured", drawn or "<p>No scenario data.</p>", "figures"))
    notes = "".join(f"<li>{escape(seed)} {escape(variant)}: {escape(text)}</li>"
                    for (seed, variant), text in variants.items())
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



















