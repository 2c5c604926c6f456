"""`report --html`: one run as a single HTML file a person can read at a glance, anywhere.

Everything is inline (CSS, SVG drawn by `charts`), with no script and nothing fetched, so
the file can be mailed, archived or opened offline. `gather` reads what the page shows
from the store; `render` is a pure function of that, its numbers the run's one summary
(`analysis.summary`): statistics skip flagged and failed loads and count them; with one
load a median has no interval (it is shown missing, not as zero width).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pagebench.analysis import pages as pages_mod
from pagebench.analysis.report import evidence, figures, filmstrip, sections
from pagebench.analysis.report.gather import ReportData, gather, views
from pagebench.analysis.report.page import document, section
from pagebench.results.store import Store


def write_html_report(store: Store, run_id: str, path: Path) -> None:
    """Write the run's report to `path` (UTF-8), its evidence linked relative to it. Raises
    UnknownRun for an unknown run."""
    data = gather(store, run_id)
    shown = evidence.shown_loads(views(data.summary, data.profiles, ["mode"]))
    data = replace(data, evidence=evidence.kept(store, shown, path.parent),
                   strips=filmstrip.gather(store, run_id, views(data.summary, data.profiles, ["mode"])))
    path.write_text(render(data), encoding="utf-8")


def render(data: ReportData) -> str:
    """The page, from values only."""
    summary, profiles, overheads = data.summary, data.profiles, data.proxy_overheads
    fields = summary.varying()
    conditions = views(summary, profiles, fields)
    across = pages_mod.across(summary, data.experiment.meta or {})
    body = [
        sections.header(data.experiment, summary),
        section("Warnings", sections.warnings(summary.warnings()), "warnings"),
        section("Conditions", sections.condition_table(conditions, fields) + sections.excluded(summary),
                "conditions"),
        *([section("Machines", sections.machines(conditions), "machines")]
          if any(c.summary.machine_medians() for c in conditions) else []),
        section("Protocols against each other", sections.mode_ratios(conditions), "ratios"),
        *([section("Encodings against identity", sections.encodings_against_identity(data.encodings), "encodings")]
          if data.encodings else []),
        *([section("Pages of the corpus", sections.pages(across), "pages")] if across else []),
        section("Link checks", sections.link_checks(data.link_checks), "link-checks"),
        *([section("Edge-proxy overhead", sections.proxy_overheads(overheads), "proxy-overhead")]
          if overheads else []),
        section("What a person sees", filmstrip.table(conditions, fields)
                + filmstrip.filmstrips(conditions, data.strips), "visual"),
        section("Load time", figures.distribution(conditions), "distributions"),
        section("Load time against round-trip time", figures.against_rtt(conditions, fields, profiles), "rtt"),
        section("Connections", figures.connections(conditions), "connections"),
        section("Waterfalls of the median loads", figures.waterfalls(data.resources, conditions), "waterfalls"),
        section("Evidence: the median and the slowest load", evidence.table(conditions, data.evidence), "evidence"),
    ]
    return document(f"pagebench run {data.run_id}", body)
