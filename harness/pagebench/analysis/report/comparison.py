"""`compare --html`: a comparison as one self-contained page: the verdicts, then each
condition's median loads of the two runs as waterfalls side by side on one time axis
(regressions first), each linked to its HAR, so a "+12 %" shows which request moved.

`gather` reads each run's median loads and their resources from its store; `render` is
pure. Links to the HARs are relative to the page (`evidence.kept`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from pagebench.analysis import compare as compare_mod
from pagebench.analysis.compare import Comparison, Status, Verdict
from pagebench.analysis.report import evidence
from pagebench.analysis.report.evidence import Kept
from pagebench.analysis.report.figures import load_waterfall, waterfall_end
from pagebench.analysis.report.gather import median_load, views
from pagebench.analysis.report.page import cell, document, figure, section
from pagebench.analysis.report.text import ms
from pagebench.analysis.summary import Summary
from pagebench.core.records import Condition
from pagebench.results.rows import LoadRow, ResourceRow
from pagebench.results.store import Store

#: Each side's waterfall is drawn this wide: two fit the page's width, side by side.
HALF = 720


@dataclass(frozen=True)
class Side:
    """One run of a comparison: each condition's median load, its resources, its evidence."""

    run_id: str
    medians: Mapping[Condition, LoadRow]
    resources: Mapping[int, Sequence[ResourceRow]]
    evidence: Mapping[int, Kept]


def gather(store: Store, summary: Summary, page_dir: Path) -> Side:
    """A side's median load of every condition with a usable load (its summary: a run, or
    half of one with an interleaved baseline), its resources from the store."""
    medians = {view.condition: median_load(view) for view in views(summary, {}, ["mode"]) if view.used}
    return Side(summary.run, medians, {load.id: store.resources(load.id) for load in medians.values()},
                evidence.kept(store, medians.values(), page_dir))


def write_comparison(path: Path, comparison: Comparison, base: tuple[Store, Summary],
                     candidate: tuple[Store, Summary]) -> None:
    """The comparison's page at `path` (UTF-8)."""
    sides = [gather(store, summary, path.parent) for store, summary in (base, candidate)]
    path.write_text(render(comparison, *sides), encoding="utf-8")


def render(comparison: Comparison, base: Side, candidate: Side) -> str:
    regressions = comparison.regressions
    verdict = (f'<p class="bad">Regression in {escape(", ".join(v.name for v in regressions))}.</p>' if regressions
               else '<p class="ok">No regression.</p>')
    against = ("against its interleaved baseline" if base.run_id == candidate.run_id
               else f'against <span class="run">{cell(base.run_id)}</span>')
    head = (f'<header><h1>pagebench compare <span class="run">{cell(candidate.run_id)}</span> {against}</h1>'
            f'<p class="lede">{escape(comparison.metric)}, threshold {comparison.threshold:.0%}, alpha '
            f"{comparison.alpha:g} (Holm-corrected across conditions).</p>{verdict}</header>")
    ordered = sorted(comparison.verdicts, key=lambda v: v.status is not Status.REGRESSION)
    pairs = [_pair(v, base, candidate) for v in ordered]
    missing = [v.name for v in ordered if v.condition not in base.medians or v.condition not in candidate.medians]
    note = (f'<p class="note">No pair for {escape(", ".join(missing))}: a side has no usable load.</p>'
            if missing else "")
    body = [head, section("Verdicts", _table(comparison), "verdicts"),
            section("Median loads side by side", _about() + "".join(p for p in pairs if p) + note, "waterfalls")]
    return document(f"pagebench compare {candidate.run_id} against {base.run_id}", body)


def _table(comparison: Comparison) -> str:
    rows = []
    for v, row in zip(comparison.verdicts, compare_mod.rows(comparison)):
        style = {Status.REGRESSION: ' class="bad"', Status.IMPROVEMENT: ' class="ok"'}.get(v.status, "")
        rows.append(f"<tr{style}>" + "".join(f'<td class="f">{cell(text)}</td>' if i in (0, len(row) - 1)
                                             else f"<td>{cell(text)}</td>" for i, text in enumerate(row)) + "</tr>")
    head = "".join(f"<th>{escape(column)}</th>" for column in compare_mod.COLUMNS)
    return (f'<div class="scroll"><table class="numbers"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _about() -> str:
    return ('<p class="note">Each condition\'s median load (by load time) of the base run on the left and of the '
            "candidate on the right, on one time axis: light while waiting for the first byte, solid while "
            "receiving; colours and #numbers are each load's own connections, grey rows used none. The HAR "
            "links open in any HAR viewer (<code>pagebench export RUN --har DIR</code> writes them uncompressed "
            "for Chrome DevTools).</p>")


def _pair(verdict: Verdict, base: Side, candidate: Side) -> str:
    if verdict.condition not in base.medians or verdict.condition not in candidate.medians:
        return ""
    loads = [(side, side.medians[verdict.condition]) for side in (base, candidate)]
    until = max(waterfall_end(load, side.resources[load.id]) for side, load in loads)
    halves = []
    for (side, load), which in zip(loads, ("base", "candidate")):
        svg, key, requests, connections = load_waterfall(load, side.resources[load.id], until, HALF)
        caption = (f"{which} <span class=\"run\">{cell(side.run_id)}</span>: load seq {load.seq}, "
                   f"{ms(load.load_ms)} ms, {requests} requests over {connections} connections. "
                   f"{evidence.links(load, side.evidence)}")
        halves.append(figure("waterfall", svg, caption, key, f"{verdict.name} {which}"))
    status = f'<span class="{"bad" if verdict.status is Status.REGRESSION else "note"}">{escape(str(verdict.status))}</span>'
    return f'<h3>{escape(verdict.name)}: {status}</h3><div class="pair">{"".join(halves)}</div>'
