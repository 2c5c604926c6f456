"""The endpoints' half of a profile (their TCP knobs), applied by an endpoint in its own
network namespace: the harness for the client side, the sites role for the server side.

Natively `plan.endpoint_commands` sets the same values from outside, on the default
route; here the route to the far side's subnet carries them, and it must go through
the router (a container's default route goes to Docker's gateway instead).
`route_command` is pure; the values are `link.plan`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pagebench.lab.split.local import Route, try_route_to
from pagebench.core.profiles import Profile
from pagebench.system.commands import LabError, run
from pagebench.core.layout import ORIGIN_NETWORK, ORIGIN_NETWORK6, Command, Layout, origin_address, origin_address6
from pagebench.link.plan import route_options, sysctl_values

PROC_SYS = Path("/proc/sys")


@dataclass(frozen=True)
class FarSide:
    """A subnet behind the router and the router's address toward it."""

    network: str
    probe: str  # an address in the network, to ask the kernel how it is reached
    router: str
    required: bool = True


#: What the client reaches through the router (the origins' range), and what the server does.
SERVER_SIDE = (FarSide(ORIGIN_NETWORK, origin_address(0), Layout.router_client_ip),
               FarSide(ORIGIN_NETWORK6, origin_address6(0), Layout.router_client_ip6, required=False))
CLIENT_SIDE = (FarSide("198.18.0.0/24", "198.18.0.2", Layout.router_server_ip),
               FarSide("2001:2::/64", "2001:2::2", Layout.router_server_ip6, required=False))


def route_command(side: FarSide, route: Route, profile: Profile) -> Command:
    family = "-6" if ":" in side.network else "-4"
    return ("ip", family, "route", "replace", side.network, "via", side.router, "dev", route.interface,
            *route_options(profile))


def set_sysctl(name: str, value: str, who: str) -> None:
    """Write it; where /proc/sys is read-only (a container), accept it if it already holds
    the value and say where to set it otherwise."""
    path = PROC_SYS / name.replace(".", "/")
    try:
        path.write_text(value)
        return
    except OSError as error:
        why = error.strerror
    have = " ".join(path.read_text().split())
    if have != value:
        raise LabError(f"sysctl {name}: is {have!r}, {who} needs {value!r}, and it cannot be "
                           f"set here ({why}): set it where the container is made (compose `sysctls:`)")


def through_router(side: FarSide) -> Route | None:
    """How this endpoint reaches the far side: through the router, or a one-line error
    (None: an optional family this namespace does not have)."""
    route = try_route_to(side.probe)
    if route is None and not side.required:
        return None  # e.g. no IPv6 here: nothing of the lab travels over it
    if route is None or route.gateway != side.router:
        via = "no route" if route is None else f"a route via {route.gateway or route.interface}"
        raise LabError(f"{side.network}: this endpoint has {via}, not via the router {side.router}: "
                           f"ip route add {side.network} via {side.router}")
    return route


def apply_here(profile: Profile, far: Sequence[FarSide]) -> None:
    """Set this endpoint's TCP knobs for `profile` on its routes to the far side."""
    for name, value in sysctl_values(profile).items():
        set_sysctl(name, value, f"profile {profile.name}")
    for side in far:
        route = through_router(side)
        if route is not None:
            run(route_command(side, route, profile))
