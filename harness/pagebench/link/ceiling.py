"""Pure: how fast a link each backend emulates faithfully on a kind of machine, as
measured (`benchmarks/link_ceiling.py`, docs/benchmarks.md "Link ceiling"), and the one
line that says so when a profile asks for more.

Past its ceiling the userspace backend releases packets late (lateness p99 over 1 ms, the
bound `link check` holds a link to), so the link is slower and burstier than its profile.
A profile over the ceiling is warned about, not refused: the ceiling is a bulk transfer's
at full rate, while a page load reaches its link's rate for a few round trips at most, and
every run's own link check (stored with it, `valid` or not) is what says whether that
run's link held; a user may still want to see what happens past it.
"""

from __future__ import annotations

from dataclasses import dataclass

from pagebench.core.profiles import Profile


@dataclass(frozen=True)
class Ceiling:
    """The highest rate (Mbit/s, each way) and packet rate (packets/s through the program)
    at which a backend's release lateness p99 stayed within 1 ms on a kind of machine."""

    backend: str
    machine: str  # `machine_kind`'s name for it
    max_mbit: float
    max_pps: int
    measured: str  # when and how: where the figures come from


#: The one table of measured ceilings. A kind of machine not listed has none known.
CEILINGS: tuple[Ceiling, ...] = (
    # 500 Mbit/s: p99 past 100 ms; 50,000 packets/s the most tried (all within 1 ms)
    Ceiling("userspace", "2-vCPU VM", max_mbit=200, max_pps=50_000,
            measured="2026-11-27 10:29 UTC, benchmarks/link_ceiling.py, RTT 20 ms, 3 repeats of 4 s, "
                     "AMD EPYC VM, kernel 6.18"),
)


def machine_kind(cpus: int, virtual: bool) -> str:
    """A kind of machine as the table names it: its CPU count and whether it is a VM."""
    return f"{cpus}-vCPU VM" if virtual else f"{cpus}-core host"


def ceiling_for(backend: str, machine: str) -> Ceiling | None:
    return next((c for c in CEILINGS if c.backend == backend and c.machine == machine), None)


def over_ceiling(profile: Profile, backend: str, machine: str) -> str | None:
    """One line of warning when the profile asks for more than the backend was measured to
    emulate on this kind of machine; None when within it or when nothing is known."""
    found = ceiling_for(backend, machine)
    if found is None:
        return None
    # An unlimited direction asks for no rate (the machine's own speed): not warned, or
    # every RTT-only profile would be.
    rates = [rate for rate in (profile.down_mbit, profile.up_mbit) if rate is not None]
    if not rates or max(rates) <= found.max_mbit:
        return None
    asked = f"{max(rates):g} Mbit/s"
    return (f"warning: profile {profile.name} asks for {asked}; the {backend} link was measured faithful up to "
            f"{found.max_mbit:g} Mbit/s ({found.max_pps} packets/s) on a {machine} like this one: past it packets "
            f"leave late, and the run's link check says whether this one held (docs/benchmarks.md, Link ceiling)")
