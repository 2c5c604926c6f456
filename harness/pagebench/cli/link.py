"""`pagebench link ...`: the emulated link measured in a throwaway lab, its profiles, and the
devices beside them (what the browser is, as a profile is what the link is)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.table import Table

from pagebench import yamlfiles
from pagebench.cli.common import WaitOpt, command, err, machine, out, reported
from pagebench.cli.linkoptions import BackendOpt, ProfileOpt, ProfilesFileOpt, link_options, profile_from_options
from pagebench.core.profiles import Profile
from pagebench.link.plan import check_backend

link_app = typer.Typer(no_args_is_help=True, help="The emulated link: check it, list its profiles and devices.")


@command(link_app, "check")
@link_options
def link_check_cmd(
    *,
    profile: ProfileOpt = None,
    profiles_file: ProfilesFileOpt = None,
    knobs: dict[str, Any],
    backend: BackendOpt = None,
    seed: Annotated[int, typer.Option(help="Seed of the emulated loss and jitter.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    wait: WaitOpt = False,
) -> None:
    """Measure the emulated link in a throwaway lab: RTT, goodput, loss, lateness, drops."""
    from pagebench.lab.build import link_check
    from pagebench.link.emulator import ceiling_warning, choose_backend
    from pagebench.system.signals import signals_raise

    chosen = profile_from_options(profile, profiles_file, knobs)
    check_backend(backend)
    with reported(interrupted="interrupted; the lab was torn down"), signals_raise(), \
            machine("link check", wait), err.status("link check") as status:
        if (warning := ceiling_warning(chosen, choose_backend(backend))) is not None:
            err.print(warning, highlight=False, soft_wrap=True)
        result = link_check(chosen, backend, seed, step=lambda text: status.update(f"link check: {text}"))
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
    tcp = m.get("tcp_rtt_ms")
    if tcp:
        table.add_row("RTT, TCP's own: median / p95 / min (ms)", f"{profile.rtt_ms:g}",
                      f"{tcp['median']:.3f} / {tcp['p95']:.3f} / {tcp['min']:.3f}  (n={tcp['n']})")
    table.add_row("connect() median / p95 (ms)", f"{profile.rtt_ms:g}",
                  f"{m['rtt_ms']['median']:.2f} / {m['rtt_ms']['p95']:.2f}  (n={m['rtt_ms']['n']})")
    if result.get("calibration"):
        cal = result["calibration"]
        table.add_row("hold calibrated (µs)", "", f"{cal['offset_us']} off the round trip, {cal['cold_us']} off "
                      f"a cold release (fastest handshake idle +{cal['idle_floor_us']:.0f}, busy "
                      f"+{cal['busy_floor_us']:.0f} before)"
                      + (f"; {cal['given_back_us']} given back, the link having measured faster than its profile"
                         if cal.get("given_back_us") else ""))
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


@command(link_app, "profiles")
def link_profiles_cmd(
    profiles_file: Annotated[Optional[Path], typer.Option("--profiles", help="YAML file of extra profiles.")] = None,
) -> None:
    """List the built-in profiles (and those of a YAML file, sweeps expanded)."""
    catalogue = yamlfiles.builtin_profiles()
    extra = yamlfiles.load_profile_file(profiles_file, catalogue) if profiles_file else []
    table = Table(title="network profiles")
    for column in ("name", "link", "source"):
        table.add_column(column)
    for profile in list(catalogue.values()) + extra:
        table.add_row(profile.name, profile.describe(), profile.source or "")
    out.print(table)


@command(link_app, "devices")
def link_devices_cmd() -> None:
    """List the built-in devices a spec's `devices:` may name, and what their CPU slowdowns
    are stated against."""
    found = yamlfiles.builtin_devices()
    reference = found.reference
    table = Table(title="devices", caption=f"CPU slowdowns against {reference.machine}: the benchmark page in "
                                           f"{reference.script_ms:g} ms unthrottled", caption_justify="left")
    for column in ("name", "device", "source"):
        table.add_column(column)
    for device in found.devices.values():
        table.add_row(device.name, device.describe(), device.source or "")
    out.print(table)
