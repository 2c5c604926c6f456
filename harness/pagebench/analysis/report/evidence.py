"""The report's links to the loads' evidence (their HARs and traces in the store's artifact
directory, `results.artifacts`): for each condition its median and its slowest usable load.

A link is relative to the page's own directory, so a report written beside the store
(`report RUN --html results/run.html` for `results/pagebench.sqlite`) links
`pagebench.artifacts/<run>/<seq>-<client>.har.gz`, and keeps working wherever the store,
its artifact directory and the page are moved together. A load whose file was never kept
(stored before HARs were, `run --no-har`) or is gone says so instead.
`kept` reads which files exist; the rest is pure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from pathlib import Path

from pagebench.analysis.report.gather import ConditionView, median_load
from pagebench.analysis.report.page import cell
from pagebench.analysis.report.text import ms
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store

NOTHING_KEPT = "no evidence kept"


@dataclass(frozen=True)
class Kept:
    """A load's evidence as links from the page (None: not there)."""

    har: str | None = None
    trace: str | None = None


def worst_load(view: ConditionView) -> LoadRow:
    """The slowest usable load (the later one of equal times)."""
    return max(view.used, key=lambda row: (row.load_ms or 0.0, row.seq))


def shown_loads(conditions: Iterable[ConditionView]) -> list[LoadRow]:
    """The loads whose evidence a report links: each condition's median and worst."""
    return [load for c in conditions if c.used for load in (median_load(c), worst_load(c))]


def kept(store: Store, loads: Iterable[LoadRow], page_dir: Path) -> dict[int, Kept]:
    """Each load's files that exist, as links relative to `page_dir` (where the page is)."""
    if store.artifacts is None:
        return {}
    found = {}
    for load in loads:
        paths = [store.artifacts.path(name) for name in (load.har, load.trace)]
        found[load.id] = Kept(*(None if path is None else _relative(path, page_dir) for path in paths))
    return found


def _relative(path: Path, page_dir: Path) -> str:
    return Path(os.path.relpath(path.resolve(), page_dir.resolve())).as_posix()


def links(load: LoadRow, evidence: Mapping[int, Kept]) -> str:
    """`HAR · trace` links for a load, or NOTHING_KEPT."""
    found = evidence.get(load.id) or Kept()
    parts = [f'<a href="{escape(href)}" download>{name}</a>'
             for name, href in (("HAR", found.har), ("trace", found.trace)) if href is not None]
    return " · ".join(parts) if parts else f'<span class="note">{NOTHING_KEPT}</span>'


def table(conditions: Sequence[ConditionView], evidence: Mapping[int, Kept]) -> str:
    """Per condition: its median and its slowest usable load, each with its evidence."""
    rows = []
    for c in conditions:
        if not c.used:
            continue
        median, worst = median_load(c), worst_load(c)
        rows.append(f'<tr><td class="f">{cell(c.label)}</td><td>{c.summary.n}</td>'
                    f"<td>{median.seq}</td><td>{ms(median.load_ms)}</td><td>{links(median, evidence)}</td>"
                    f"<td>{worst.seq}</td><td>{ms(worst.load_ms)}</td><td>{links(worst, evidence)}</td></tr>")
    if not rows:
        return '<p class="note">No usable load: no evidence to show.</p>'
    return ('<div class="scroll"><table class="numbers"><thead><tr><th rowspan="2">condition</th>'
            '<th rowspan="2">n</th><th colspan="3">median load</th><th colspan="3">slowest load</th></tr>'
            "<tr><th>seq</th><th>ms</th><th>evidence</th><th>seq</th><th>ms</th><th>evidence</th></tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>'
            '<p class="note">Each link is the load\'s file in the store\'s artifact directory, relative to this '
            "page: it works while the page, the store and its <code>.artifacts</code> directory stay side by side. "
            "HARs are gzip-compressed (HAR 1.2; <code>pagebench export RUN --har DIR</code> writes them "
            "uncompressed for Chrome DevTools' Network panel, Import HAR); a trace opens in DevTools' Performance "
            "panel. Loads recorded before pagebench kept HARs, or with <code>run --no-har</code>, have "
            f"{NOTHING_KEPT}.</p>")
