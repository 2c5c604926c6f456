"""The measuring commands: `run` (an experiment, or the rest of an interrupted one, and
its budgets checked) and `reproduce` (the seeds' scenarios, answered claim by claim)."""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from pagebench.cli.common import WaitOpt, command, err, fail, machine, open_store, out, reported
from pagebench.core.errors import CHECK_FAILED

if TYPE_CHECKING:
    from collections.abc import Callable

    from rich.progress import Progress, TaskID

    from pagebench.runner.fleet import Status
    from pagebench.runner.reproduce import Reproduction

    from pagebench.analysis.reproduce.export import Export
    from pagebench.core.measure.budgets import Budget
    from pagebench.core.spec.shard import Shard
    from pagebench.results.store import Store

run_app = typer.Typer()


def _bar() -> Progress:
    """A measuring command's progress bar: loads done of planned, on stderr, kept at the end
    (an error is printed after its last line)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("loads"),
                    TimeRemainingColumn(), console=err, transient=False)


@command(run_app)
def run(
    spec: Annotated[Optional[Path], typer.Argument(help="Experiment spec (YAML).")] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", help="Finish an interrupted run.")] = None,
    db: Annotated[Optional[str], typer.Option(help="Results store URL (default: SQLite under results/).")] = None,
    router: Annotated[Optional[str], typer.Option(envvar="PAGEBENCH_ROUTER", help=(
        "Control URL of a split lab's router role (`pagebench serve router`); with --sites. "
        "Default: build the lab here."))] = None,
    sites: Annotated[Optional[str], typer.Option(envvar="PAGEBENCH_SITES", help=(
        "Control URL of a split lab's sites role (`pagebench serve sites`); with --router."))] = None,
    budget: Annotated[Optional[list[str]], typer.Option("--budget", help=(
        "A limit on each matching condition's median, checked when the run completes (exit 1 if "
        "breached): METRIC<=MAX[@FIELD=VALUE,...], e.g. 'lcp_ms<=1200@mode=h2,profile=cable', or a "
        "YAML file of budgets: [{metric, max, site, mode, ...}]. Repeatable; adds to the spec's budgets:."))] = None,
    junit: Annotated[Optional[Path], typer.Option("--junit", help=(
        "Also write the budget checks as JUnit XML here."))] = None,
    markdown: Annotated[Optional[Path], typer.Option("--markdown", help=(
        "Also write the budget checks as a markdown table here (for a CI summary)."))] = None,
    baseline: Annotated[Optional[Path], typer.Option("--baseline", help=(
        "A baseline's spec, e.g. the default branch's checkout of this one: its folder and app sites "
        "are measured in this run beside this spec's (same name), load by load in one seeded order, "
        "so host drift hits both alike; then `pagebench compare RUN`."))] = None,
    wait: WaitOpt = False,
    har: Annotated[bool, typer.Option("--har/--no-har", help=(
        "Keep each measured load's HAR in the store's artifact directory (SQLite X.sqlite: X.artifacts/)."))] = True,
    frames: Annotated[bool, typer.Option("--frames/--no-frames", help=(
        "Capture each measured load's frames (screenshots) for its visual metrics (SpeedIndex, visual "
        "completeness) and keep those that changed the screen there (the filmstrip)."))] = True,
    trace: Annotated[bool, typer.Option("--trace", help=(
        "Also keep each measured load's Chrome trace there (tracing costs the browser CPU: the loads are slower)."
    ))] = False,
    shard: Annotated[Optional[str], typer.Option("--shard", help=(
        "Run shard K of N (K/N, K from 1) of the experiment: whole blocks of its plan (one load of every "
        "condition each), with warm-ups of its own. The shards of one experiment share one run in one store "
        "(PostgreSQL across machines): named by the spec, its seed and N, or --run. With --resume: that "
        "shard's loads left."))] = None,
    run_name: Annotated[Optional[str], typer.Option("--run", help=(
        "With --shard: the id of the run the shards share (created by the first to start)."))] = None,
    ray_address: Annotated[Optional[str], typer.Option("--ray", metavar="ADDRESS", help=(
        "Run across the lab machines of a Ray cluster (its GCS host:port, or ray://...): one shard per machine "
        "offering the pagebench_lab resource, each run there into the shared store (--db: PostgreSQL that "
        "every machine reaches). This machine only drives: it takes no lab and no machine lock. With --resume: "
        "the run's shards left."))] = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help=(
        "With --shard or --ray: measure even if this machine's Chromium, kernel, pagebench or link backend differ from "
        "the run's (the difference is kept in its meta)."))] = False,
) -> None:
    """Run an experiment: every planned page load, committed as it finishes, then its budgets
    checked. Exit 0 done, 1 a budget breached, 2 an error, 130 interrupted."""
    from pagebench.runner import run as runner
    from pagebench.runner import runs
    from pagebench.runner.measured import Keep
    from pagebench.runner.prepare import Baseline, prepare
    from pagebench.core.spec.model import SpecError
    from pagebench.edge.proxy import rt_priority
    from pagebench.lab.build import Roles
    from pagebench.system.signals import signals_raise
    from pagebench.yamlfiles import budget_options, spec_document

    if (spec is None) == (resume is None):
        raise fail("give a spec file, or --resume RUN (not both)")
    if baseline is not None and resume is not None:
        raise fail("--baseline: not with --resume (a resumed run keeps the baseline it was started with)")
    if (router is None) != (sites is None):
        raise fail("--router and --sites go together: give both, or neither to build the lab here")
    roles = Roles(router, sites) if router is not None and sites is not None else None
    if run_name is not None and (shard is None and ray_address is None or resume is not None):
        raise fail("--run: names the run the shards of an experiment share: with --shard or --ray, and a spec")
    if ray_address is not None and (shard is not None or roles is not None):
        raise fail("--ray: splits the run in shards itself and builds each lab on its machine: not with "
                   + ("--shard" if shard is not None else "--router/--sites"))
    one = None if shard is None else _shard(shard)
    for path, option in ((junit, "--junit"), (markdown, "--markdown")):
        if path is not None and not path.parent.is_dir():
            raise fail(f"{option} {path}: no directory {path.parent}")
    budgets = budget_options(budget or [])
    prepared = None
    if spec is not None:
        base = None if baseline is None else Baseline(spec_document(baseline), baseline.parent, str(baseline))
        prepared = prepare(spec_document(spec), str(spec), spec.parent, base,
                           status=lambda line: err.print(line, highlight=False, soft_wrap=True))
        if roles is not None and prepared.spec.by_page:
            raise fail(runner.SPLIT_BY_PAGE)
        for note in prepared.notes:
            err.print(f"note: {note}", highlight=False, soft_wrap=True)
        if "proxy" in prepared.spec.topologies:
            rt_priority()  # a bad $PAGEBENCH_PROXY_RT_PRIORITY stops the run before it starts
        if one is not None:
            from pagebench.core.spec import shard as shard_mod

            shard_mod.check(prepared.loads, one.count, prepared.spec.sequential is not None)
    store = open_store(db)
    run_id = resume
    created: list[str] = [resume] if resume else []

    def kept(error: BaseException) -> str | None:
        """How to finish a run that stopped: its loads so far are kept (not so for a bad spec)."""
        if not created or isinstance(error, SpecError):
            return None
        more = f" --shard {one}" if one is not None else f" --ray {ray_address}" if ray_address is not None else ""
        return f"loads so far are kept: pagebench run --resume {created[0]}{more}"

    # The error, if any, is printed after the progress bar's last line: the lock first,
    # the bar inside it. A fleet's driver measures nothing here: no lock.
    with reported(hint=kept, interrupted="interrupted"), signals_raise(), \
            (machine("run", wait) if ray_address is None else nullcontext()) as lock, _bar() as bar:
        task = bar.add_task("starting", total=len(prepared.loads) if prepared else None)

        def progress(done, total, planned, result, status):
            # A status alone between loads; after a load, its condition (after the page, by page).
            c = planned.condition
            label = status if result is None else (f"{status}: " if status else "") + c.label + (
                f"  [{result.load_ms:.0f} ms]" if result.load_ms else "")
            bar.update(task, completed=done, total=total, description=label)

        say, show = _say, _fleet_show(bar, task)

        def named(new_id: str) -> None:
            created.append(new_id)
            if lock is not None:
                lock.note_run(new_id)

        if ray_address is not None:
            from pagebench.runner import fleet

            if prepared is not None:
                run_id = fleet.start(store, store.url, prepared, ray_address, run_name, allow_mixed, show, say, named)
            else:
                assert run_id is not None
                fleet.resume(store, store.url, run_id, ray_address, allow_mixed, show, say)
        elif prepared is not None:
            run_id = runs.start(store, prepared, progress, roles, created=named,
                                  keep=Keep(har, trace, frames), say=say, shard=one, run_id=run_name,
                                  allow_mixed=allow_mixed)
        else:
            assert run_id is not None
            lock.note_run(run_id)
            runs.resume(store, run_id, progress, roles, Keep(har, trace, frames), say=say, shard=one,
                          allow_mixed=allow_mixed)
    breached = _gate(store, run_id, budgets, junit, markdown)
    then = f"pagebench compare {run_id}" if store.experiment(run_id).meta.get("baseline") else f"pagebench report {run_id}"
    out.print(f"run [bold]{run_id}[/] complete: {then}")
    raise typer.Exit(CHECK_FAILED if breached else 0)


def _say(line: str) -> None:
    """A line kept above the progress bar (a throttled device's achieved CPU slowdown, a fleet's machines)."""
    err.print(line, highlight=False, soft_wrap=True)


def _fleet_show(bar: Progress, task: TaskID) -> Callable[[Status], None]:
    """A fleet's progress: its loads, all machines together, and each machine's (and what it runs)."""
    def show(status: Status) -> None:
        machines = ", ".join(f"{name} {count}" + (f" ({status.doing[name]})" if name in status.doing else "")
                             for name, count in sorted(status.by_machine.items()))
        bar.update(task, completed=status.done, total=status.total, description=f"fleet: {machines or 'starting'}")

    return show


def _shard(text: str) -> Shard:
    """`--shard K/N` as typed, or its one-line error."""
    from pagebench.core.spec.model import SpecError
    from pagebench.core.spec.shard import Shard

    try:
        return Shard.parse(text)
    except SpecError as error:
        raise fail(str(error)) from None


def _gate(store: Store, run_id: str, extra: list[Budget], junit: Path | None, markdown: Path | None) -> bool:
    """A complete run against its spec's budgets and the `--budget` ones: a line per check
    on stdout (before the run's last line), a warning per budget that matched nothing, the
    JUnit and markdown files. True if a budget was breached."""
    from pagebench.analysis import budgets as gate
    from pagebench.analysis.summary import of_run, without_twins
    from pagebench.core.spec.model import parse

    experiment = store.experiment(run_id)
    spec = parse(experiment.spec, f"run {run_id}")
    summary = without_twins(of_run(store, run_id), experiment.meta.get("baseline") or {})
    checked = gate.check_run(summary, [*spec.budgets, *extra])
    for check, line in zip(checked.checks, gate.lines(checked)):
        out.print(line, markup=False, highlight=False, soft_wrap=True, style=None if check.passed else "red")
    for line in gate.warnings(checked):
        err.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)
    for path, option, text in ((junit, "--junit", gate.junit), (markdown, "--markdown", gate.markdown)):
        if path is None:
            continue
        try:
            path.write_text(text(checked))
        except OSError as error:
            raise fail(f"{option}: {path}: {error.strerror}; the run is complete: pagebench report {run_id}") from None
    return bool(checked.breached)


@command(run_app)
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
    export_file: Annotated[Optional[Path], typer.Option("--export", help=(
        "Also write what the answer needs (each scenario's loads, the profiles, the runs' facts) as one "
        "xz-compressed file, e.g. docs/reproductions-export.json.xz: `--from` answers from it."))] = None,
    sources: Annotated[Optional[list[Path]], typer.Option("--from", help=(
        "Answer from an export (`--export`) instead of running or reading a store: no lab, no store. "
        "Repeated: each later export's scenarios replace the earlier's (a seed run again); with --export, "
        "the merged export is written."))] = None,
    markdown: Annotated[Optional[Path], typer.Option("--markdown", help=(
        "With --from or --export: write this doc (e.g. docs/reproductions.md) from its template DOC.in and "
        "the export, and its figures into DOC's name without .md (docs/reproductions/)."))] = None,
    resume: Annotated[Optional[str], typer.Option("--resume", metavar="ID|latest", help=(
        "Continue an interrupted reproduction (its seeds and --quick as it was started): complete runs kept, "
        "an interrupted one resumed, the rest started. 'latest': the last one made."))] = None,
    wait: WaitOpt = False,
    ray_address: Annotated[Optional[str], typer.Option("--ray", metavar="ADDRESS", help=(
        "Run across the lab machines of a Ray cluster (its GCS host:port, or ray://...): each scenario variant's "
        "runs on one machine offering the pagebench_lab resource, into the shared store (--db: PostgreSQL that "
        "every machine reaches). This machine only drives. With --resume: the reproduction's runs left."))] = None,
    scenario: Annotated[Optional[str], typer.Option("--scenario", metavar="SCENARIO/VARIANT", help=(
        "With --reproduction: only this scenario variant's runs (e.g. 000-transfer/era), into that reproduction, "
        "here: one machine's part of a reproduction spread by hand (--ray does it for you)."))] = None,
    reproduction_id: Annotated[Optional[str], typer.Option("--reproduction", metavar="ID", help=(
        "With --scenario: the reproduction the part belongs to (created by the first part to start)."))] = None,
    allow_mixed: Annotated[bool, typer.Option("--allow-mixed", help=(
        "With --ray or --scenario: measure even if a machine's Chromium, kernel, pagebench or link backend differ "
        "from the reproduction's."))] = False,
) -> None:
    """Run the seeds' scenarios (era and today) and print paper against measured, one row per
    claim: value with its interval, verdict, and why where it differs. Scenarios load with
    `repetitions: auto`: each stops when its claims' verdicts are decisive (or at its cap)."""
    from pagebench.analysis.reproduce import claims as catalogue
    from pagebench.analysis.reproduce import doc as page
    from pagebench.analysis.reproduce import export as exported
    from pagebench.analysis.reproduce import verdicts as answer

    source = sources[-1] if sources else None
    if (scenario is None) != (reproduction_id is None):
        raise fail("--scenario and --reproduction go together: a part of a reproduction names both")
    if scenario is not None:
        given = [name for name, on in (("--resume", resume is not None), ("--reuse", reuse), ("--ray", ray_address),
                                        ("--from", sources), ("--export", export_file), ("--html", html_file),
                                        ("--figures", figures_dir), ("--markdown", markdown)) if on]
        if given:
            raise fail(f"--scenario: measures one part of a reproduction: not with {given[0]}")
        _part(seeds, quick, db, scenario, reproduction_id, allow_mixed, wait)
        return
    if ray_address is not None and (reuse or sources):
        raise fail(f"--ray: runs the scenarios: not with {'--reuse' if reuse else '--from'}")
    if source is not None:
        given = [name for name, on in (("seeds", bool(seeds)), ("--quick", quick), ("--db", db is not None),
                                        ("--reuse", reuse), ("--resume", resume is not None)) if on]
        if given:
            raise fail(f"--from: not with {given[0]} (the export says which seeds and runs it holds)")
        if len(sources or ()) > 1 and markdown is not None and export_file is None:
            raise fail("--markdown: from several --from exports, needs --export FILE (the doc is generated from "
                       "one export: the merged one)")
    if markdown is not None and source is None and export_file is None:
        raise fail("--markdown: needs --from EXPORT or --export FILE (the doc is generated from an export)")
    for path, option in ((html_file, "--html"), (export_file, "--export"), (markdown, "--markdown")):
        if path is not None and not path.parent.is_dir():
            raise fail(f"{option} {path}: no directory {path.parent}")
    if figures_dir is not None and not figures_dir.is_dir():
        raise fail(f"--figures {figures_dir}: not a directory")
    if markdown is not None and not page.paths(markdown)[0].is_file():
        raise fail(f"--markdown {markdown}: no template {page.paths(markdown)[0]}")
    if sources:
        with reported(about="--from"):
            found = exported.read(sources[0])
            for later in sources[1:]:
                found = exported.merge(found, exported.read(later))
    else:
        found = _reproduced(seeds, quick, db, reuse, resume, wait, ray_address, allow_mixed)
    if export_file is not None:  # the answer is the export's, as the doc from it will be
        try:
            size = exported.write(export_file, found)
        except OSError as error:
            kept = ("the exports are unchanged" if sources
                    else "the runs are kept: pagebench reproduce --reuse --export FILE")
            raise fail(f"--export {export_file}: {error.strerror or error}; {kept}") from None
        out.print(f"wrote {export_file} ({size / 1024:.0f} KiB)")
        source, found = export_file, exported.read(export_file)
    rows = answer.evaluate(catalogue.claims_of(found.seeds), found.data, found.levels)
    title = f"seeds {', '.join(found.seeds)}{' (quick)' if found.quick else ''}: paper against measured"
    out.print(answer.terminal_table(rows, title))
    if markdown is not None:
        assert source is not None
        with reported(about="--markdown"):
            generated = page.generate(markdown, source)
        try:
            written, removed = page.write(markdown, generated)
        except OSError as error:
            raise fail(f"--markdown {markdown}: {error.strerror or error}") from None
        out.print(f"wrote {markdown} and {len(written) - 1} figures from {source}"
                  + (f"; removed {len(removed)} it no longer draws: {', '.join(p.name for p in removed)}"
                     if removed else ""))
    if html_file is not None:
        html_file.write_text(answer.html(rows, found.data, title, found.facts, found.variants))
        out.print(f"wrote {html_file}")
    if figures_dir is not None:
        drawn = answer.figures(found.data)
        for figure in drawn:
            (figures_dir / f"{figure.name}.svg").write_text(figure.svg)
        out.print(f"wrote {len(drawn)} figures to {figures_dir}")
    missing = [r for r in rows if r.verdict == "no data"]
    if missing:
        raise fail(f"{len(missing)} claim row(s) have no data, e.g. {missing[0].claim.key} {missing[0].variant}: "
                   "see pagebench report for their runs", 1)


def _planned(seeds: list[str], quick: bool) -> Reproduction:
    """The runs of the seeds' scenarios, each variant's in order, prepared."""
    from pagebench.analysis.reproduce import claims as catalogue
    from pagebench.runner.prepare import prepare

    planned = []
    for scenario in catalogue.scenarios_of(seeds):
        for variant in scenario.variants:
            for label, document in scenario.runs(variant, quick):
                planned.append(((scenario.name, variant, label),
                                prepare(document, f"scenario {scenario.name} ({variant})")))
    return planned


def _seeds(seeds: list[str] | None) -> list[str]:
    """The seeds asked (default: all), each once, or the one-line error of an unknown one."""
    from pagebench.analysis.reproduce import claims as catalogue

    chosen = list(dict.fromkeys(seeds or catalogue.SEEDS))
    unknown = catalogue.unknown_seed(chosen)
    if unknown:
        raise fail(unknown)
    return chosen


def _part(seeds: list[str] | None, quick: bool, db: str | None, scenario: str, reproduction: str,
          allow_mixed: bool, wait: bool) -> None:
    """`reproduce --scenario S/V --reproduction ID`: that scenario variant's runs of the
    reproduction, here (its complete runs kept, an interrupted one resumed); no answer:
    the reproduction's whole is answered by `--resume ID` or `--reuse` once every part is in."""
    from pagebench.core.spec.model import SpecError
    from pagebench.runner import reproduce as reproducing
    from pagebench.system.signals import signals_raise

    chosen = _seeds(seeds)
    store = open_store(db)
    created: list[str] = []
    with reported(hint=lambda _: (f"runs so far are kept ({', '.join(created)}): run the same command again"
                                  if created else None), interrupted="interrupted"):
        try:
            runs = reproducing.part(_planned(chosen, quick), scenario)
            stored = reproducing.joined(store, reproduction, allow_mixed, runs[0][1].spec.backend)
        except SpecError as error:
            raise fail(str(error)) from None
        with signals_raise(), machine("reproduce", wait) as lock, _bar() as bar:
            task = bar.add_task("starting", total=sum(len(p.loads) for _, p in runs))

            def progress(done, total, load, result, status):
                bar.update(task, completed=done, total=total, description=status)

            def named(new_id: str) -> None:
                created.append(new_id)
                lock.note_run(new_id)

            reproducing.reproduce(store, runs, progress, created=named, about={"seeds": chosen, "quick": quick},
                                  reproduction=reproduction, stored=stored, by_machine=True)
    out.print(f"reproduction {reproduction}: {scenario} measured ({', '.join(created)})")


def _reproduced(seeds: list[str] | None, quick: bool, db: str | None, reuse: bool, resume: str | None,
                wait: bool, ray_address: str | None = None, allow_mixed: bool = False) -> Export:
    """Run the chosen seeds' scenarios (here, or on the lab machines of a Ray cluster: `ray_address`),
    or, `reuse`, find their latest stored runs, and read what the answer needs from the store."""
    from pagebench.analysis.reproduce import claims as catalogue
    from pagebench.analysis.reproduce import verdicts as answer
    from pagebench.analysis.reproduce.export import Export
    from pagebench.analysis.reproduce.scenarios import VARIANT_NOTES
    from pagebench.runner import reproduce as reproducing
    from pagebench.system.signals import signals_raise

    store_ = None
    previous = None
    if resume is not None:
        if reuse or seeds or quick:
            raise fail("--resume: a reproduction resumes with its own seeds and --quick (leave them out), "
                       "and runs (not with --reuse)")
        store_ = open_store(db, must_exist=True)
        try:
            previous = answer.stored_reproduction(store_, resume)
        except answer.NothingToResume as error:
            raise fail(str(error)) from None
        seeds, quick = previous.seeds, previous.quick
    chosen = _seeds(seeds)
    scenarios = catalogue.scenarios_of(chosen)
    planned = _planned(chosen, quick)
    store = store_ or open_store(db, must_exist=reuse)
    if previous is not None and len(previous.runs) == len(planned) and all(
            store.experiment(run).status == "complete" for run in previous.runs.values()):
        raise fail(f"reproduce --resume: reproduction {previous.reproduction} is complete: nothing to resume "
                   "(pagebench reproduce --reuse answers from the latest runs)")
    created: list[str] = []
    if reuse:
        runs = answer.latest_runs(store, [s.name for s in scenarios])
    elif ray_address is not None:
        reproduction = previous.reproduction if previous else reproducing.new_reproduction_id()

        def resumable(_: BaseException) -> str | None:
            return (f"runs so far are kept: pagebench reproduce --resume {reproduction} --ray {ray_address}"
                    if reproducing.stored_runs(store, reproduction) else None)

        with reported(hint=resumable, interrupted="interrupted"), signals_raise(), _bar() as bar:
            task = bar.add_task("starting", total=sum(len(p.loads) for _, p in planned))
            reproducing.on_fleet(store, store.url, planned, ray_address, ("reproduce", *chosen, *["--quick"] * quick),
                                 reproduction, allow_mixed, _fleet_show(bar, task), _say)
        runs = reproducing.stored_runs(store, reproduction)
    else:
        def kept(_: BaseException) -> str | None:
            return (f"runs so far are kept ({', '.join(created)}): pagebench reproduce --resume latest"
                    if created else None)

        with reported(hint=kept, interrupted="interrupted"), signals_raise(), \
                machine("reproduce", wait) as lock, _bar() as bar:
            task = bar.add_task("starting", total=sum(len(p.loads) for _, p in planned))

            def progress(done, total, load, result, status):
                c = load.condition
                label = f"{status}  {c.label}" + (
                    f"  [{result.load_ms:.0f} ms]" if result and result.load_ms else "")
                bar.update(task, completed=done, total=total, description=label)

            def named(new_id: str) -> None:
                created.append(new_id)
                lock.note_run(new_id)

            runs = reproducing.reproduce(store, planned, progress, created=named, about={"seeds": chosen, "quick": quick},
                                    reproduction=previous.reproduction if previous else None,
                                    stored=previous.runs if previous else None)
    command = " ".join(["pagebench reproduce", *chosen] + ["--quick"] * quick)
    return Export(tuple(chosen), quick, answer.gather(store, runs), runs, answer.facts(store, runs, command),
                  {key: note for key, note in VARIANT_NOTES.items() if key[0] in chosen}, answer.levels(store, runs))
