"""The `pagebench` command line. Parsing and printing only; the work lives elsewhere."""

from __future__ import annotations

import json
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pagebench import yamlfiles
from pagebench.core import modes
from pagebench.core.profiles import Profile, ProfileError, make_profile, resolve

app = typer.Typer(no_args_is_help=True, add_completion=False, help="Page-load benchmarking over an emulated link.")
link_app = typer.Typer(no_args_is_help=True, help="The emulated link: check it, list its profiles.")
app.add_typer(link_app, name="link")
#: Piped output (CI logs, files) gets room for the report's columns instead of 80.
out = Console(width=None if Console().is_terminal else 160)
err = Console(stderr=True)


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print a one-line error and return the Exit to raise."""
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def _profile_from_options(
    profile: str | None, profiles_file: Path | None, overrides: dict[str, object]
) -> Profile:
    catalogue = yamlfiles.builtin_profiles()
    if profiles_file is not None:
        for loaded in yamlfiles.load_profile_file(profiles_file, catalogue):
            catalogue[loaded.name] = loaded
    given = {key: value for key, value in overrides.items() if value is not None}
    if profile is None and not given:
        profile = "none"
    if profile is not None:
        base = resolve(profile, catalogue)
        if not given:
            return base
        fields = {**base.model_dump(exclude_none=True), **given, "source": f"{base.name} with overrides"}
        return make_profile(fields, "options")
    return make_profile({"name": "custom", "source": "command line", **given}, "options")


OPTION_FIELDS = {
    "rtt": "rtt_ms", "jitter": "jitter_ms", "loss": "loss_pct", "down": "down_mbit", "up": "up_mbit",
    "queue_bytes": "queue_bytes", "queue_ms": "queue_ms", "mss": "mss", "initcwnd": "initcwnd",
    "congctl": "congctl",
}


# The link, as options: `link check` and `shell` take the same ones.
ProfileOpt = Annotated[Optional[str], typer.Option(help="Named profile (see `pagebench link profiles`).")]
ProfilesFileOpt = Annotated[Optional[Path], typer.Option("--profiles", help="YAML file of extra profiles.")]
RttOpt = Annotated[Optional[float], typer.Option(help="Round-trip time, ms.")]
JitterOpt = Annotated[Optional[float], typer.Option(help="Jitter per direction, ± ms.")]
LossOpt = Annotated[Optional[float], typer.Option(help="Random loss per direction, %.")]
DownOpt = Annotated[Optional[float], typer.Option(help="Downlink rate, Mbit/s.")]
UpOpt = Annotated[Optional[float], typer.Option(help="Uplink rate, Mbit/s.")]
QueueBytesOpt = Annotated[Optional[int], typer.Option(help="Bottleneck queue, bytes.")]
QueueMsOpt = Annotated[Optional[float], typer.Option(help="Bottleneck queue, ms of the rate.")]
MssOpt = Annotated[Optional[int], typer.Option(help="Clamp TCP MSS, bytes.")]
InitcwndOpt = Annotated[Optional[int], typer.Option(help="Initial congestion window, segments.")]
CongctlOpt = Annotated[Optional[str], typer.Option(help="Congestion control: cubic, reno, bbr.")]
BackendOpt = Annotated[Optional[str], typer.Option(help="netem or userspace (default: netem if the kernel has it).")]
WaitOpt = Annotated[bool, typer.Option("--wait", help=(
    "If another measuring command holds this machine, wait for it instead of refusing."))]


@contextmanager
def _machine(command: str, wait: bool):
    """The machine-wide lock of a measuring command (lab.machine), with a status line while
    it waits; a busy machine without --wait is a one-line error."""
    from pagebench.lab.machine import MachineBusy, MachineLock

    status = err.status("")
    shown: list[bool] = []

    def waiting(holder) -> None:
        if not shown:
            shown.append(True)
            status.start()
        who = holder.describe() if holder else "another pagebench command"
        status.update(f"waiting for this machine: {who} is measuring")

    try:
        lock = MachineLock(command, wait, waiting).__enter__()
    except MachineBusy as error:
        raise fail(str(error), 1) from None
    finally:
        if shown:
            status.stop()
            err.print(f"{command}: the machine is free, starting", highlight=False)
    try:
        yield lock
    finally:
        lock.__exit__(None, None, None)


@link_app.command("check")
def link_check_cmd(
    profile: ProfileOpt = None,
    profiles_file: ProfilesFileOpt = None,
    rtt: RttOpt = None,
    jitter: JitterOpt = None,
    loss: LossOpt = None,
    down: DownOpt = None,
    up: UpOpt = None,
    queue_bytes: QueueBytesOpt = None,
    queue_ms: QueueMsOpt = None,
    mss: MssOpt = None,
    initcwnd: InitcwndOpt = None,
    congctl: CongctlOpt = None,
    backend: BackendOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the emulated loss and jitter.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    wait: WaitOpt = False,
) -> None:
    """Measure the emulated link in a throwaway lab: RTT, goodput, loss, lateness, drops."""
    from pagebench.lab.build import link_check
    from pagebench.system.signals import Interrupted, signals_raise
    from pagebench.system.commands import LabError

    values = locals()
    overrides = {field: values[option] for option, field in OPTION_FIELDS.items()}
    try:
        chosen = _profile_from_options(profile, profiles_file, overrides)
    except ProfileError as error:
        raise fail(str(error)) from None
    try:
        with signals_raise(), _machine("link check", wait), err.status("link check") as status:
            result = link_check(chosen, backend, seed, step=lambda text: status.update(f"link check: {text}"))
    except LabError as error:
        raise fail(str(error), 1) from None
    except (Interrupted, KeyboardInterrupt):
        raise fail("interrupted; the lab was torn down", 130) from None
    if as_json:
        out.print_json(json.dumps(result))
    else:
        _print_check(chosen, result)
    if not result["valid"]:
        raise typer.Exit(1)


def _print_check(profile: Profile, result: dict) -> None:
    m = result["measured"]
    table = Table(title=f"link check: {profile.name} ({profile.describe()}), backend {result['backend']}")
    table.add_column("what")
    table.add_column("configured", justify="right")
    table.add_column("measured", justify="right")
    table.add_row("RTT median / p95 (ms)", f"{profile.rtt_ms:g}",
                  f"{m['rtt_ms']['median']:.2f} / {m['rtt_ms']['p95']:.2f}  (n={m['rtt_ms']['n']})")
    table.add_row("goodput down (Mbit/s)", f"{profile.down_mbit or '∞'}", f"{m['down_mbit']:.2f}")
    table.add_row("goodput up (Mbit/s)", f"{profile.up_mbit or '∞'}", f"{m['up_mbit']:.2f}")
    n = sum(v["sent"] for v in m["loss"].values())
    table.add_row("loss (%)", f"{profile.loss_pct:g}", f"{m['loss_pct']:.3f}  (n={n})")
    late = result["lateness_us"]
    if late["p99"] is not None:
        table.add_row("release lateness p50 / p99 / max (µs)", "≤ 1000 (p99)",
                      f"{late['p50']:.0f} / {late['p99']:.0f} / {late['max']:.0f}")
    table.add_row("drops", "", ", ".join(f"{k} {v}" for k, v in result["drops"].items()))
    out.print(table)
    verdict = "[green]valid[/]" if result["valid"] else "[red]NOT valid: " + "; ".join(result["problems"]) + "[/]"
    out.print(f"link: {verdict}")


@link_app.command("profiles")
def link_profiles_cmd(
    profiles_file: Annotated[Optional[Path], typer.Option("--profiles", help="YAML file of extra profiles.")] = None,
) -> None:
    """List the built-in profiles (and those of a YAML file, sweeps expanded)."""
    try:
        catalogue = yamlfiles.builtin_profiles()
        extra = yamlfiles.load_profile_file(profiles_file, catalogue) if profiles_file else []
    except ProfileError as error:
        raise fail(str(error)) from None
    table = Table(title="network profiles")
    for column in ("name", "link", "source"):
        table.add_column(column)
    for profile in list(catalogue.values()) + extra:
        table.add_row(profile.name, profile.describe(), profile.source or "")
    out.print(table)


@app.command()
def cleanup(
    include_live: Annotated[bool, typer.Option("--include-live", help="Also remove labs of runs still alive.")] = False,
) -> None:
    """Remove what dead runs left behind: pagebench's namespaces (with their rules and
    qdiscs) and the processes inside them. Nothing else is touched."""
    from pagebench.lab.netns import cleanup as do_cleanup, find_leftovers

    removed = do_cleanup(include_live=include_live)
    for leftover in removed:
        out.print(f"removed {leftover.prefix}: {', '.join(leftover.namespaces) or 'state only'}")
    kept = [left for left in find_leftovers() if left.owner_alive]
    for leftover in kept:
        out.print(f"kept {leftover.prefix}: its run is still alive (use --include-live to remove it)")
    if not removed and not kept:
        out.print("nothing to clean")


@app.command()
def doctor() -> None:
    """Check this machine for what pagebench needs; each problem comes with its fix."""
    from pagebench.lab.doctor import diagnose

    missing_required = False
    for finding in diagnose():
        mark = "[green]ok[/]" if finding.ok else ("[red]missing[/]" if finding.required else "[yellow]note[/]")
        fix = f"  → {finding.fix}" if finding.fix and not finding.ok else ""
        out.print(f"{mark:>18}  {finding.name}: {finding.detail}{fix}", highlight=False, soft_wrap=True)
        missing_required |= finding.required and not finding.ok
    raise typer.Exit(1 if missing_required else 0)


def _open_store(db: str | None, must_exist: bool = False, option: str = "--db"):
    """The results store; readers (`must_exist`) refuse a SQLite path with nothing there
    instead of creating an empty database. Any store error is one line naming the option."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from pagebench.results.store import Store, StoreError

    url = db or Store.default_url()
    try:
        parsed = make_url(url)
    except ArgumentError:
        parsed = None  # Store(url) says why
    sqlite_file = parsed.database if parsed is not None and parsed.get_backend_name() == "sqlite" else None
    if must_exist and sqlite_file and not Path(sqlite_file).exists():
        raise fail(f"{url}: no results store there")
    try:
        return Store(url)
    except StoreError as error:
        raise fail(f"{option}: {error}") from None


@app.command()
def run(
    spec: Annotated[Optional[Path], typer.Argument(help="Experiment spec (YAML).")] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Finish an interrupted run.")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL (default: SQLite under results/).")] = None,
    router: Annotated[Optional[str], typer.Option(envvar="PAGEBENCH_ROUTER", help=(
        "Control URL of a split lab's router role (`pagebench serve router`); with --sites. "
        "Default: build the lab here."))] = None,
    sites: Annotated[Optional[str], typer.Option(envvar="PAGEBENCH_SITES", help=(
        "Control URL of a split lab's sites role (`pagebench serve sites`); with --router."))] = None,
    wait: WaitOpt = False,
) -> None:
    """Run an experiment: every planned page load, committed as it finishes."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pagebench.runner import run as runner
    from pagebench.core.spec.model import SpecError
    from pagebench.edge.proxy import ProxyError, rt_priority
    from pagebench.lab.build import Roles
    from pagebench.lab.servers.nginx import ServerError
    from pagebench.results.store import StoreError
    from pagebench.system.signals import Interrupted, signals_raise
    from pagebench.system.commands import LabError
    from pagebench.yamlfiles import spec_document

    if (spec is None) == (resume is None):
        raise fail("give a spec file, or --resume RUN (not both)")
    if (router is None) != (sites is None):
        raise fail("--router and --sites go together: give both, or neither to build the lab here")
    roles = Roles(router, sites) if router is not None and sites is not None else None
    prepared = None
    if spec is not None:
        try:
            prepared = runner.prepare(spec_document(spec), str(spec))
        except SpecError as error:
            raise fail(str(error)) from None
        for note in prepared.spec.notes:
            err.print(f"note: {note}", highlight=False, soft_wrap=True)
        if "proxy" in prepared.spec.topologies:
            try:
                rt_priority()  # a bad $PAGEBENCH_PROXY_RT_PRIORITY stops the run before it starts
            except ProxyError as error:
                raise fail(str(error), 1) from None
    store = _open_store(db)
    run_id = resume
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("loads"),
               TimeRemainingColumn())
    created: list[str] = [resume] if resume else []
    kept = "loads so far are kept: pagebench run --resume {}"
    try:
        # The error, if any, is printed after the progress bar's last line: the lock first,
        # the bar inside it.
        with signals_raise(), _machine("run", wait) as lock, \
                Progress(*columns, console=err, transient=False) as bar:
            task = bar.add_task("starting", total=len(prepared.plan) if prepared else None)

            def progress(done, total, planned, result, status):
                c = planned.condition
                label = status or c.label + (
                    f"  [{result.load_ms:.0f} ms]" if result and result.load_ms else "")
                bar.update(task, completed=done, total=total, description=label)

            if prepared is not None:
                def named(new_id: str) -> None:
                    created.append(new_id)
                    lock.note_run(new_id)

                run_id = runner.start(store, prepared, progress, roles, created=named)
            else:
                assert run_id is not None
                lock.note_run(run_id)
                runner.resume(store, run_id, progress, roles)
    except (SpecError, LabError, ServerError, ProxyError, StoreError) as error:
        hint = f"; {kept.format(created[0])}" if created and not isinstance(error, SpecError) else ""
        raise fail(f"{error}{hint}", 1) from None
    except (Interrupted, KeyboardInterrupt):
        raise fail("interrupted" + (f"; {kept.format(created[0])}" if created else ""), 130) from None
    out.print(f"run [bold]{run_id}[/] complete: pagebench report {run_id}")


@app.command()
def reproduce(
    seeds: Annotated[Optional[list[str]], typer.Argument(help="Seeds to answer: 000, 001, 002, 004 "
                                                               "(default: all).")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="Fewer points and repetitions: minutes, wider intervals "
                                                        "(more claims can't tell).")] = False,
    db: Annotated[Optional[str], typer.Option(help="Results store URL (default: SQLite under results/).")] = None,
    html_file: Annotated[Optional[Path], typer.Option("--html", help="Also write the rows and the seeds' figures "
                                                                      "as one self-contained HTML file.")] = None,
    figures_dir: Annotated[Optional[Path], typer.Option("--figures", help="Also write each of the seeds' figures "
                                                                          "as DIR/<name>.svg.")] = None,
    reuse: Annotated[bool, typer.Option("--reuse", help="Answer from the latest stored runs of these scenarios "
                                                        "instead of running them.")] = False,
    wait: WaitOpt = False,
) -> None:
    """Run the seeds' scenarios (era and today) and print paper against measured, one row per
    claim: value with its 95 % interval, verdict, and why where it differs."""
    import time

    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from pagebench.runner import run as runner
    from pagebench.analysis.reproduce import claims as catalogue
    from pagebench.analysis.reproduce import verdicts as answer
    from pagebench.core.spec.model import SpecError
    from pagebench.edge.proxy import ProxyError
    from pagebench.lab.servers.nginx import ServerError
    from pagebench.results.store import StoreError
    from pagebench.system.signals import Interrupted, signals_raise
    from pagebench.system.commands import LabError

    chosen = list(dict.fromkeys(seeds or catalogue.SEEDS))
    unknown = catalogue.unknown_seed(chosen)
    if unknown:
        raise fail(unknown)
    if html_file is not None and not html_file.parent.is_dir():
        raise fail(f"--html {html_file}: no directory {html_file.parent}")
    if figures_dir is not None and not figures_dir.is_dir():
        raise fail(f"--figures {figures_dir}: not a directory")
    scenarios = catalogue.scenarios_of(chosen)
    planned: runner.Reproduction = []
    for scenario in scenarios:
        for variant in scenario.variants:
            for label, document in scenario.runs(variant, quick):
                try:
                    planned.append(((scenario.name, variant, label),
                                    runner.prepare(document, f"scenario {scenario.name} ({variant})")))
                except SpecError as error:
                    raise fail(str(error)) from None
    store = _open_store(db, must_exist=reuse)
    started = time.monotonic()
    created: list[str] = []
    if reuse:
        runs = answer.latest_runs(store, [s.name for s in scenarios])
    else:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("loads"),
                   TimeRemainingColumn())
        try:
            with signals_raise(), _machine("reproduce", wait) as lock, \
                    Progress(*columns, console=err, transient=False) as bar:
                task = bar.add_task("starting", total=sum(len(p.plan) for _, p in planned))

                def progress(done, total, load, result, status):
                    c = load.condition
                    label = f"{status}  {c.label}" + (
                        f"  [{result.load_ms:.0f} ms]" if result and result.load_ms else "")
                    bar.update(task, completed=done, total=total, description=label)

                def named(new_id: str) -> None:
                    created.append(new_id)
                    lock.note_run(new_id)

                runs = runner.reproduce(store, planned, progress, created=named)
        except (SpecError, LabError, ServerError, ProxyError, StoreError) as error:
            kept = f"; runs so far are kept ({', '.join(created)})" if created else ""
            raise fail(f"{error}{kept}", 1) from None
        except (Interrupted, KeyboardInterrupt):
            kept = f"; runs so far are kept ({', '.join(created)})" if created else ""
            raise fail("interrupted" + kept, 130) from None
    data = answer.gather(store, runs)
    rows = answer.evaluate(catalogue.claims_of(chosen), data)
    minutes = (time.monotonic() - started) / 60
    title = f"seeds {', '.join(chosen)}{' (quick)' if quick else ''}: paper against measured"
    out.print(answer.terminal_table(rows, title))
    if html_file is not None:
        facts = answer.facts(store, runs, " ".join(["pagebench reproduce", *chosen] + ["--quick"] * quick), minutes)
        html_file.write_text(answer.html(rows, data, title, facts))
        out.print(f"wrote {html_file}")
    if figures_dir is not None:
        for figure in answer.figures(data):
            (figures_dir / f"{figure.name}.svg").write_text(figure.svg)
        out.print(f"wrote {len(answer.figures(data))} figures to {figures_dir}")
    missing = [r for r in rows if r.verdict == "no data"]
    if missing:
        raise fail(f"{len(missing)} claim row(s) have no data, e.g. {missing[0].claim.key} {missing[0].variant}: "
                   "see pagebench report for their runs", 1)


def _run_id(store, run_id: str) -> str:
    """'latest' is the newest run in the store; any other id is taken as given."""
    if run_id != "latest":
        return run_id
    runs = store.runs()
    if not runs:
        raise fail(f"{store.url}: the store has no runs yet")
    return runs[0]["run_id"]


@app.command()
def report(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    html: Annotated[Optional[Path], typer.Option("--html", help="Also write a self-contained HTML report here.")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL.")] = None,
) -> None:
    """Summarize a stored run: per condition, n, medians and p90s, connections, cache hits."""
    from pagebench.analysis.report.text import report_json, report_table
    from pagebench.results.store import UnknownRun

    store = _open_store(db, must_exist=True)
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
    except UnknownRun as error:
        raise fail(str(error)) from None
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


@app.command()
def compare(
    base_run: Annotated[str, typer.Argument(help="Baseline run id, or 'latest' (in --base-db).")],
    candidate_run: Annotated[str, typer.Argument(help="Candidate run id, or 'latest' (in --db).")],
    db: Annotated[Optional[str], typer.Option(help="Results store URL of the candidate (and base).")] = None,
    base_db: Annotated[Optional[str], typer.Option(help="Results store URL of the baseline (default: --db).")] = None,
    metric: Annotated[str, typer.Option(help="load_ms, ttfb_ms, dcl_ms, fcp_ms, ...")] = "load_ms",
    threshold: Annotated[str, typer.Option(help="Smallest median change that counts, e.g. 5%.")] = "5%",
    alpha: Annotated[float, typer.Option(help="Significance level (Holm-corrected across conditions).")] = 0.05,
    budget: Annotated[Optional[Path], typer.Option(help="YAML of absolute limits: budgets: [{metric, max, site, ...}].")] = None,
    markdown: Annotated[bool, typer.Option("--markdown", help="Print a markdown table (for CI summaries).")] = False,
    junit: Annotated[Optional[Path], typer.Option("--junit", help="Also write JUnit XML here.")] = None,
) -> None:
    """Is the candidate run slower than the baseline? Exit 0 fine, 1 regression, 2 error."""
    from pagebench.analysis import compare as compare_mod
    from pagebench.results.store import UnknownRun

    limit = _threshold(threshold)
    try:
        budgets = yamlfiles.load_budgets(budget) if budget else []
        candidate_store = _open_store(db, must_exist=True)
        base_store = _open_store(base_db, must_exist=True, option="--base-db") if base_db else candidate_store
        base_id, candidate_id = _run_id(base_store, base_run), _run_id(candidate_store, candidate_run)
        result = compare_mod.compare(base_store.loads(base_id), candidate_store.loads(candidate_id),
                                     metric=metric, threshold=limit, alpha=alpha, budgets=budgets)
    except (compare_mod.CompareError, UnknownRun) as error:
        raise fail(str(error)) from None
    if junit is not None:
        try:
            junit.write_text(compare_mod.junit(result))
        except OSError as error:
            raise fail(f"--junit: {junit}: {error.strerror}") from None
    if markdown:
        print(compare_mod.markdown(result), end="")
    else:
        table = Table(title=f"{candidate_id} against {base_id}: {metric}, threshold {limit:.0%}, alpha {alpha:g} (Holm)")
        for column in compare_mod.COLUMNS:
            table.add_column(column, justify="left" if column in ("condition", "verdict") else "right")
        for row, verdict in zip(compare_mod.rows(result), result.verdicts):
            style = {compare_mod.Status.REGRESSION: "red", compare_mod.Status.IMPROVEMENT: "green"}.get(verdict.status)
            table.add_row(*row, style=style)
        out.print(table)
        names = ", ".join(v.name for v in result.regressions)
        out.print(f"[red]regression in {names}[/]" if names else "no regression", highlight=False)
    raise typer.Exit(1 if result.regressions else 0)


@app.command()
def export(
    run_id: Annotated[str, typer.Argument(help="Run id, or 'latest'.")],
    csv_dir: Annotated[Optional[Path], typer.Option("--csv", help="Write loads.csv and resources.csv here.")] = None,
    parquet_dir: Annotated[Optional[Path], typer.Option("--parquet", help="Write loads.parquet and resources.parquet here.")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL.")] = None,
) -> None:
    """A run's loads and resources as flat files (warm-up and flagged loads included, marked)."""
    from pagebench.results import export as export_mod
    from pagebench.results.store import UnknownRun

    if (csv_dir is None) == (parquet_dir is None):
        raise fail("give exactly one of --csv DIR or --parquet DIR")
    store = _open_store(db, must_exist=True)
    run_id = _run_id(store, run_id)
    try:
        if csv_dir is not None:
            written = export_mod.write_csv(store, run_id, csv_dir)
        else:
            written = export_mod.write_parquet(store, run_id, parquet_dir)
    except UnknownRun as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail(f"{error.filename}: {error.strerror}") from None
    for path in written:
        out.print(f"wrote {path}", highlight=False)


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def shell(
    ctx: typer.Context,
    profile: ProfileOpt = None,
    profiles_file: ProfilesFileOpt = None,
    rtt: RttOpt = None,
    jitter: JitterOpt = None,
    loss: LossOpt = None,
    down: DownOpt = None,
    up: UpOpt = None,
    queue_bytes: QueueBytesOpt = None,
    queue_ms: QueueMsOpt = None,
    mss: MssOpt = None,
    initcwnd: InitcwndOpt = None,
    congctl: CongctlOpt = None,
    site: Annotated[Optional[list[str]], typer.Option(help="Site to serve (repeatable).")] = None,
    mode: Annotated[str, typer.Option(help=f"{', '.join(m.name for m in modes.in_topology('direct'))} "
                                           "(the direct topology's modes).")] = modes.DEFAULT_SHELL_MODE.name,
    tls_version: Annotated[str, typer.Option("--tls", help="1.2, 1.3 or none (cleartext HTTP).")] = "1.3",
    backend: BackendOpt = None,
    wait: WaitOpt = False,
) -> None:
    """Run `-- CMD` inside the client namespace of a live lab (sites served, link applied);
    the lab is torn down when CMD exits, and CMD's exit status is returned."""
    from pagebench.lab import sites as sitefiles
    from pagebench.lab.shell import run_shell
    from pagebench.system.signals import Interrupted, signals_raise
    from pagebench.system.commands import LabError

    values = locals()
    overrides = {field: values[option] for option, field in OPTION_FIELDS.items()}
    command = list(ctx.args)
    if not command:
        raise fail("give the command to run after --, e.g. pagebench shell -- curl $PAGEBENCH_URL")
    direct = modes.in_topology("direct")
    chosen_mode = modes.ALIASES.get(mode) or modes.BY_NAME.get(mode)
    if chosen_mode not in direct:
        raise fail(f"--mode: unknown mode {mode!r}; allowed: {', '.join(m.name for m in direct)}")
    if tls_version not in modes.TLS_CHOICES:
        raise fail(f"--tls: must be {', '.join(modes.TLS_CHOICES)}, got {tls_version!r}")
    if tls_version not in chosen_mode.tls_in("direct"):
        raise fail(f"--tls: {chosen_mode.tls_refusal('direct', tls_version)}")
    mode = chosen_mode.name
    try:
        chosen = _profile_from_options(profile, profiles_file, overrides)
        site_list = [sitefiles.resolve(name) for name in (site or ["seed000-small-n20"])]
    except (ProfileError, ValueError) as error:
        raise fail(str(error)) from None
    try:
        with signals_raise(), _machine("shell", wait):
            status = run_shell(command, site_list, mode, tls_version, chosen, backend)
    except LabError as error:
        raise fail(str(error), 1) from None
    except (Interrupted, KeyboardInterrupt):
        raise fail("interrupted; the lab was torn down", 130) from None
    raise typer.Exit(status)


serve_app = typer.Typer(no_args_is_help=True, help=(
    "Run one role of a split lab (the compose lab's router and sites containers); "
    "`pagebench run --router URL --sites URL` is the harness."))
app.add_typer(serve_app, name="serve")
ListenOpt = Annotated[str, typer.Option(envvar="PAGEBENCH_LISTEN", help=(
    "Control channel address, ADDR:PORT, on the lab's own control network."))]


def _serve(role: str, make, listen: str) -> None:
    """Serve a role until SIGTERM/SIGINT; whatever it set up is undone on the way out."""
    from pagebench.lab.split.control import parse_listen, serve_until_stopped
    from pagebench.system.signals import Interrupted, signals_raise
    from pagebench.system.commands import LabError

    try:
        parse_listen(listen)
    except ValueError as error:
        raise fail(str(error)) from None
    try:
        with signals_raise(), make() as service:
            serve_until_stopped(listen, service.routes(), lambda text: out.print(f"{role}: {text}", highlight=False))
    except LabError as error:
        raise fail(str(error), 1) from None
    except OSError as error:
        raise fail(f"--listen {listen}: {error.strerror or error}", 1) from None
    except (Interrupted, KeyboardInterrupt):
        err.print(f"{role}: stopped; what it set up is undone", highlight=False)


@serve_app.command("router")
def serve_router(
    listen: ListenOpt,
    client_if: Annotated[Optional[str], typer.Option(
        help="Interface toward the client (default: the one holding 198.18.0.1).")] = None,
    server_if: Annotated[Optional[str], typer.Option(
        help="Interface toward the sites (default: the one holding 198.18.1.1).")] = None,
) -> None:
    """The router role: own the emulated link of this network namespace, as the harness asks."""
    from pagebench.lab.split.router import RouterService

    _serve("router", lambda: RouterService(client_if, server_if), listen)


@serve_app.command("sites")
def serve_sites(
    listen: ListenOpt,
    interface: Annotated[Optional[str], typer.Option(
        help="Interface the server addresses go on (default: the one with an address in 198.18.1.0/24).")] = None,
) -> None:
    """The sites role: serve the test sites the harness asks for, from this network namespace."""
    from pagebench.lab.split.sites import SitesService

    _serve("sites", lambda: SitesService(interface), listen)


# `pagebench site ...`: your own page in the lab ---------------------------------------------

site_app = typer.Typer(no_args_is_help=True, help=(
    "Your own page in the lab: import a HAR, record a live page, show what a site holds."))
app.add_typer(site_app, name="site")
#: How many of the requests a recording lacks `site import-har` lists (recording.json has all).
SHOWN_MISSING = 5


@site_app.command("import-har")
def site_import_har(
    har: Annotated[Path, typer.Argument(help=(
        "The HAR file, .har or gzip-compressed .har.gz (Chrome DevTools, WebPageTest, browsertime, "
        "Playwright with content embedded, mitmproxy's savehar)."))],
    name: Annotated[str, typer.Option("--name", help="The site's name, as experiment specs name it.")],
    into: Annotated[Optional[Path], typer.Option("--into", help=(
        "The site directory to write (default: <data dir>/sites/NAME, where specs find it by name)."))] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace another site directory already at --into.")] = False,
) -> None:
    """Import the first page of a HAR as a site: every recorded response is replayed, in every
    protocol mode, by the lab's servers; a request the HAR lacks is a 404, counted per load."""
    from pagebench.analysis.report.text import human_bytes
    from pagebench.core.har.importer import HarError
    from pagebench.core.sites.model import SiteError
    from pagebench.lab import sites as sitefiles

    try:
        imported = sitefiles.read_har(har, name)
        site = sitefiles.write_imported(imported, into if into is not None else sitefiles.sites_dir() / name,
                                        replace=force)
    except (HarError, SiteError) as error:
        raise fail(str(error), 1) from None
    recording = imported.recording

    def say(text: str) -> None:
        out.print(escape(text), highlight=False, soft_wrap=True)

    say(f"imported {site.name} from {har} into {site.root}")
    say(f"  entry: {site.entry}")
    width = max(len(original) for original in recording.hosts)
    for number, (original, lab) in enumerate(recording.hosts.items()):
        say(f"  {'hosts:' if number == 0 else '':<6} {original:<{width}} -> {lab}")
    say(f"  {len(recording.exchanges)} request(s), {human_bytes(imported.total_bytes)} of bodies, "
        f"{len(site.origins)} origin(s)")
    if recording.missing:
        say(f"  {len(recording.missing)} request(s) will 404 (the HAR cannot replay them):")
        for line in recording.missing[:SHOWN_MISSING]:
            say(f"    {line if len(line) <= 160 else line[:157] + '...'}")
        if len(recording.missing) > SHOWN_MISSING:
            say(f"    and {len(recording.missing) - SHOWN_MISSING} more (all in {site.root / 'recording.json'})")
    if imported.integrity_removed:
        say(f"  {imported.integrity_removed} integrity attribute(s) removed from HTML (rewritten bodies "
            "would fail their SRI hashes)")
    if imported.dropped_headers:
        shown = ", ".join(f"{name} ({count})" for name, count in list(imported.dropped_headers.items())[:8])
        more = len(imported.dropped_headers) - 8
        say(f"  dropped headers: {shown}" + (f" and {more} more" if more > 0 else ""))
    for warning in imported.warnings:
        say(f"  warning: {warning}")


@site_app.command("show")
def site_show(
    site: Annotated[str, typer.Argument(help="A built-in site's name, an imported site's name, or a site directory.")],
) -> None:
    """What a site holds: origins (with the hosts they were recorded as), requests, bytes by
    type and the dependency levels (the lower bound's round trips)."""
    from pagebench.analysis.report.text import human_bytes
    from pagebench.core.har.importer import describe
    from pagebench.core.sites.model import Site, SiteError
    from pagebench.lab import sites as sitefiles

    try:
        if "/" in site:
            found = sitefiles.load_site(Path(site))
        else:
            try:
                found = sitefiles.resolve(site)
            except SiteError:
                if not (Path(site) / "site.yaml").is_file():
                    raise
                found = sitefiles.load_site(Path(site))
        summary = describe(found, sitefiles.file_sizes(found) if isinstance(found, Site) else None)
    except SiteError as error:
        raise fail(str(error), 1) from None
    where = f" in {found.root}" if isinstance(found, Site) else ""
    out.print(escape(f"{summary.name} ({summary.kind}{where}): {summary.entry}"), highlight=False, soft_wrap=True)
    if summary.source:
        out.print(escape(f"recorded from {summary.source}"), highlight=False, soft_wrap=True)
    out.print(f"{summary.requests} request(s), {human_bytes(summary.bytes)}, {len(summary.origins)} origin(s), "
              f"dependency depth {summary.depth}", highlight=False)
    recorded = any(origin.original for origin in summary.origins)
    table = Table(title="origins")
    for column in ("origin", *(("recorded as",) if recorded else ()), "requests", "bytes"):
        table.add_column(column, justify="right" if column in ("requests", "bytes") else "left")
    for origin in summary.origins:
        table.add_row(escape(origin.name), *((escape(origin.original or ""),) if recorded else ()),
                      str(origin.requests), human_bytes(origin.bytes))
    out.print(table)
    table = Table(title="types")
    for column in ("type", "requests", "bytes"):
        table.add_column(column, justify="left" if column == "type" else "right")
    for share in summary.types:
        table.add_row(share.name, str(share.requests), human_bytes(share.bytes))
    out.print(table)
    most = max((n for _, n in summary.levels), default=1)
    out.print("dependency levels (0: the page; each level needs one before it):", highlight=False)
    for level, count in summary.levels:
        out.print(f"  {level:>2}  {count:>5}  {'#' * max(1, round(40 * count / most))}", highlight=False)
    if summary.missing:
        out.print(f"{len(summary.missing)} request(s) the recording lacks will 404", highlight=False)


@site_app.command("record")
def site_record(
    url: Annotated[str, typer.Argument(help="The page to record (http:// or https://).")],
    name: Annotated[str, typer.Option("--name", help="The site's name, as experiment specs name it.")],
    into: Annotated[Optional[Path], typer.Option("--into", help=(
        "The site directory to write (default: <data dir>/sites/NAME, where specs find it by name)."))] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace another site directory already at --into.")] = False,
    timeout: Annotated[float, typer.Option("--timeout", min=1.0, help=(
        "Seconds for the load: to `load`, then until the network is quiet (what came by then is "
        "recorded)."))] = 30.0,  # record.DEFAULT_TIMEOUT_S (not imported here: it loads Playwright)
    resolve: Annotated[Optional[list[str]], typer.Option("--resolve", help=(
        "HOST=IP: connect to IP for HOST (repeatable), e.g. a staging server under its public name; "
        "the certificate is still checked for HOST."))] = None,
    upstream_ca: Annotated[Optional[Path], typer.Option("--upstream-ca", exists=True, dir_okay=False, help=(
        "PEM file of CA certificates trusted besides the system's when checking the site's."))] = None,
) -> None:
    """Record a live page: one cold load in Chromium through mitmproxy (which checks the
    site's certificates), written as a site the way `site import-har` writes one."""
    from pagebench.analysis.report.text import human_bytes
    from pagebench.core.har.importer import HarError
    from pagebench.core.sites.model import SiteError
    from pagebench.lab import sites as sitefiles
    from pagebench.lab.record.mitmdump import RecordError
    from pagebench.lab.record.recorder import parse_resolve, record_site
    from pagebench.system.signals import Interrupted, signals_raise

    try:
        mapping = parse_resolve(resolve or [])
    except RecordError as error:
        raise fail(str(error)) from None
    try:
        with signals_raise(), err.status(escape(f"recording {url}")) as status:
            recorded = record_site(url, name, into if into is not None else sitefiles.sites_dir() / name,
                                   replace=force, timeout_s=timeout, resolve=mapping, extra_ca=upstream_ca,
                                   step=lambda text: status.update(escape(text)))
    except (RecordError, HarError, SiteError) as error:
        raise fail(str(error), 1) from None
    except (Interrupted, KeyboardInterrupt):
        raise fail("interrupted; nothing was written, mitmproxy and Chromium are stopped", 130) from None
    site, imported = recorded.site, recorded.imported

    def say(text: str) -> None:
        out.print(escape(text), highlight=False, soft_wrap=True)

    say(f"recorded {site.name} from {url} into {site.root}")
    say(f"  entry: {site.entry}")
    width = max(len(original) for original in imported.recording.hosts)
    for number, (original, lab) in enumerate(imported.recording.hosts.items()):
        say(f"  {'hosts:' if number == 0 else '':<6} {original:<{width}} -> {lab}")
    say(f"  {len(imported.recording.exchanges)} request(s), {human_bytes(imported.total_bytes)} of bodies, "
        f"{len(site.origins)} origin(s)")
    missing = imported.recording.missing
    if missing:
        say(f"  {len(missing)} request(s) will 404 (not replayable as recorded):")
        for line in missing[:SHOWN_MISSING]:
            say(f"    {line if len(line) <= 160 else line[:157] + '...'}")
        if len(missing) > SHOWN_MISSING:
            say(f"    and {len(missing) - SHOWN_MISSING} more (all in {site.root / 'recording.json'})")
    for note in (*recorded.notes, *imported.warnings):
        say(f"  warning: {note}")


def main() -> None:
    app()
