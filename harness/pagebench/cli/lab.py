"""The lab on this machine: `shell` (a command inside a live lab), `doctor` (what this
machine lacks) and `cleanup` (what dead runs left)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from pagebench.cli.common import WaitOpt, command, fail, machine, out, reported
from pagebench.cli.linkoptions import BackendOpt, ProfileOpt, ProfilesFileOpt, link_options, profile_from_options
from pagebench.core import modes
from pagebench.link.plan import check_backend

lab_app = typer.Typer()


@command(lab_app)
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


@command(lab_app)
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


@command(lab_app, context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@link_options
def shell(
    ctx: typer.Context,
    *,
    profile: ProfileOpt = None,
    profiles_file: ProfilesFileOpt = None,
    knobs: dict[str, Any],
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
    from pagebench.system.signals import signals_raise

    argv = list(ctx.args)
    if not argv:
        raise fail("give the command to run after --, e.g. pagebench shell -- curl $PAGEBENCH_URL")
    direct = modes.in_topology("direct")
    unknown = f"--mode: unknown mode {mode!r}; allowed: {', '.join(m.name for m in direct)}"
    try:
        chosen_mode = modes.parse(mode)
    except ValueError:
        raise fail(unknown) from None
    if chosen_mode not in direct:
        raise fail(unknown)
    if tls_version not in modes.TLS_CHOICES:
        raise fail(f"--tls: must be {', '.join(modes.TLS_CHOICES)}, got {tls_version!r}")
    if tls_version not in chosen_mode.tls_in("direct"):
        raise fail(f"--tls: {chosen_mode.tls_refusal('direct', tls_version)}")
    chosen = profile_from_options(profile, profiles_file, knobs)
    check_backend(backend)
    site_list = [sitefiles.resolve(name) for name in (site or ["seed000-small-n20"])]
    with reported(interrupted="interrupted; the lab was torn down"), signals_raise(), machine("shell", wait):
        status = run_shell(argv, site_list, chosen_mode, tls_version, chosen, backend)
    raise typer.Exit(status)
