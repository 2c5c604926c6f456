"""The commands that read the store only: `report`, `compare` (the regression gate) and
`export`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.table import Table

from pagebench import yamlfiles
from pagebench.cli.common import command, err, fail, open_store, out
from pagebench.core.errors import CHECK_FAILED

results_app = typer.Typer()


def _run_id(store, run_id: str) -> str:
    """'latest' is the newest run in the store; any other id is taken as given."""
    if run_id != "latest":
        return run_id
    runs = store.runs()
    if not runs:
        raise fail(f"{store.url}: the store has no runs yet")
    return runs[0].run_id


@command(results_app)
def report(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    html: Annotated[Optional[Path], typer.Option("--html", help="Also write a self-contained HTML report here.")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL.")] = None,
) -> None:
    """Summarize a stored run: per condition, n, medians and p90s, connections, cache hits."""
    from pagebench.analysis.report.text import report_json, report_table

    store = open_store(db, must_exist=True)
    run_id = _run_id(store, run_id)
    try:
        if html is not None:
            from pagebench.analysis.report.html import write_html_report

            write_html_report(store, run_id, html)
            err.print(f"wrote {html}")
        if as_json:
            out.print_json(json.dumps(report_json(store, run_id)))
        else:
            out.print(report_table(store, run_id))
    except OSError as error:
        raise fail(f"--html: {html}: {error.strerror}") from None


def _threshold(text: str) -> float:
    """'5%' or '5' (percent) as a fraction."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        raise fail(f"--threshold: want a percentage like 5%, got {text!r}") from None
    if not 0 <= value < 1000:
        raise fail(f"--threshold: want 0% to 1000%, got {text!r}")
    return value / 100


@command(results_app, interrupted="interrupted")
def compare(
    base_run: Annotated[str, typer.Argument(help=(
        "Baseline run id, or 'latest' (in --base-db); alone, a run with an interleaved baseline "
        "(`run --baseline`), its baseline's sites against its own."))],
    candidate_run: Annotated[Optional[str], typer.Argument(help="Candidate run id, or 'latest' (in --db).")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL of the candidate (and base).")] = None,
    base_db: Annotated[Optional[str], typer.Option(help="Results store URL of the baseline (default: --db).")] = None,
    metric: Annotated[str, typer.Option(help="load_ms, ttfb_ms, dcl_ms, fcp_ms, ...")] = "load_ms",
    threshold: Annotated[str, typer.Option(help="Smallest median change that counts, e.g. 5%.")] = "5%",
    alpha: Annotated[float, typer.Option(help="Significance level (Holm-corrected across conditions).")] = 0.05,
    budget: Annotated[Optional[list[str]], typer.Option("--budget", help=(
        "An absolute limit on the candidate's median of any metric, per matching condition: "
        "METRIC<=MAX[@FIELD=VALUE,...] (e.g. 'ttfb_ms<=200@mode=h2') or a YAML file of "
        "budgets: [{metric, max, site, ...}]. Repeatable."))] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a markdown table (for CI summaries).")] = False,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write JUnit XML here.")] = None,
    allow_different: Annotated[Optional[str], typer.Option(
        "--allow-different", metavar="KINDS",
        help="Compare runs that differ in these, comma-separated: chromium, kernel, backend, link-check, "
             "conditions (refused otherwise).")] = None,
    html: Annotated[Optional[Path], typer.Option("--html", help=(
        "Also write an HTML page here: the verdicts and each condition's median loads as waterfalls side by side."
    ))] = None,
) -> None:
    """Is the candidate run slower than the baseline, or over a budget? Exit 0 fine, 1 a
    regression or a budget breached, 2 an error (runs not measured alike included: same
    Chromium, kernel, link backend and conditions, link checks passed), 130 interrupted.
    Given one run measured with `run --baseline`, its baseline's sites against its own (one
    run: measured alike by construction)."""
    from pagebench.analysis import comparable
    from pagebench.analysis import compare as compare_mod
    from pagebench.analysis.summary import halves, of_run
    from pagebench.core.measure.budgets import unmatched, unmatched_line

    limit = _threshold(threshold)
    allowed = comparable.parse_allowed(allow_different)
    budgets = yamlfiles.budget_options(budget or [])
    candidate_store = open_store(db, must_exist=True)
    if candidate_run is None:
        if base_db:
            raise fail("--base-db: only with two runs (one run holds its interleaved baseline)")
        base_store = candidate_store
        base_id = candidate_id = _run_id(candidate_store, base_run)
        pairs = candidate_store.experiment(candidate_id).meta.get("baseline")
        if not pairs:
            raise fail(f"run {candidate_id}: measured without --baseline: give a baseline run and a candidate run")
        base_summary, candidate_summary = halves(of_run(candidate_store, candidate_id), pairs)
    else:
        base_store = open_store(base_db, must_exist=True, option="--base-db") if base_db else candidate_store
        base_id, candidate_id = _run_id(base_store, base_run), _run_id(candidate_store, candidate_run)
        for difference in comparable.check(comparable.of_run(base_store, base_id),
                                           comparable.of_run(candidate_store, candidate_id), allowed):
            err.print(f"warning: compared across a difference (--allow-different {difference.kind}): {difference}",
                      highlight=False, markup=False, soft_wrap=True)
        base_summary, candidate_summary = of_run(base_store, base_id), of_run(candidate_store, candidate_id)
    for side, summary in (("base", base_summary), ("candidate", candidate_summary)):
        for line in summary.machine_warnings():
            err.print(f"warning: {side} run {summary.run}: {line}", highlight=False, markup=False, soft_wrap=True)
    result = compare_mod.compare(base_summary, candidate_summary,
                                 metric=metric, threshold=limit, alpha=alpha, budgets=budgets)
    for unused in unmatched(budgets, [v.condition for v in result.verdicts if v.candidate]):
        err.print(f"warning: {unmatched_line(unused, candidate_id)}", highlight=False, soft_wrap=True, markup=False)
    if junit is not None:
        try:
            junit.write_text(compare_mod.junit(result))
        except OSError as error:
            raise fail(f"--junit: {junit}: {error.strerror}") from None
    if html is not None:
        from pagebench.analysis.report.comparison import write_comparison

        try:
            write_comparison(html, result, (base_store, base_summary), (candidate_store, candidate_summary))
        except OSError as error:
            raise fail(f"--html: {html}: {error.strerror}") from None
        err.print(f"wrote {html}", highlight=False)
    if markdown:
        print(compare_mod.markdown(result), end="")
    else:
        against = "its interleaved baseline" if candidate_run is None else base_id
        table = Table(title=f"{candidate_id} against {against}: {metric}, threshold {limit:.0%}, alpha {alpha:g} (Holm)")
        for column in compare_mod.COLUMNS:
            table.add_column(column, justify="left" if column in ("condition", "resolution", "verdict") else "right")
        for row, verdict in zip(compare_mod.rows(result), result.verdicts):
            style = {compare_mod.Status.REGRESSION: "red", compare_mod.Status.IMPROVEMENT: "green"}.get(verdict.status)
            table.add_row(*row, style=style)
        out.print(table)
        names = ", ".join(v.name for v in result.regressions)
        out.print(f"[red]regression in {names}[/]" if names else "no regression", highlight=False)
    raise typer.Exit(CHECK_FAILED if result.regressions else 0)


@command(results_app)
def export(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")],
    csv_dir: Annotated[Optional[Path], typer.Option("--csv", help="Write loads.csv, resources.csv, conditions.csv here.")] = None,
    parquet_dir: Annotated[Optional[Path], typer.Option("--parquet", help="Write loads, resources and conditions as .parquet here.")] = None,
    har_dir: Annotated[Optional[Path], typer.Option("--har", help="Write each measured load's HAR here (one .har per load).")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL.")] = None,
) -> None:
    """A run's loads and resources as flat files (warm-up and flagged loads included, marked),
    and its summary, a row per condition; or its measured loads' HARs."""
    from pagebench.analysis import export as export_mod

    if sum(option is not None for option in (csv_dir, parquet_dir, har_dir)) != 1:
        raise fail("give exactly one of --csv DIR, --parquet DIR or --har DIR")
    store = open_store(db, must_exist=True)
    run_id = _run_id(store, run_id)
    missing: list[int] = []
    try:
        if csv_dir is not None:
            written = export_mod.write_csv(store, run_id, csv_dir)
        elif parquet_dir is not None:
            written = export_mod.write_parquet(store, run_id, parquet_dir)
        else:
            assert har_dir is not None
            hars = export_mod.write_hars(store, run_id, har_dir)
            written, missing = hars.written, hars.missing
    except OSError as error:
        raise fail(f"{error.filename}: {error.strerror}") from None
    for path in written:
        out.print(f"wrote {path}", highlight=False)
    if missing:
        err.print(f"{len(missing)} measured load(s) kept no HAR (seq {', '.join(map(str, missing[:10]))}"
                  f"{', ...' if len(missing) > 10 else ''}): recorded before HARs were kept, with --no-har, "
                  f"or their files are gone from {store.artifacts.root if store.artifacts else 'the store'}",
                  highlight=False)
