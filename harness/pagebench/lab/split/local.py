"""The split lab's bed: roles that live in this process's own network namespace (a
container of the compose lab, or a namespace someone else built), and what that
namespace has (interfaces, addresses, routes). Where commands run, nothing else.

`Link`, `NginxServer` and the link check render their commands for a named namespace
(`ip netns exec NS ...`, `tc -n NS ...`, `ip -n NS ...`). `localize` drops that prefix
for the namespaces that are "here", so the command that runs is byte for byte the
native one minus where it runs. A command for a role that is not here is refused,
never run in the wrong place.
"""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from pagebench.core.layout import Command, Layout
from pagebench.lab.netns import STATE_ROOT
from pagebench.system.commands import LabError, run
from pagebench.system.owner import Owner
from pagebench.system.process import ManagedProcess, spawn

ROLES = ("client", "router", "server")


@dataclass(frozen=True)
class LocalLayout(Layout):
    """A Layout whose router and endpoint interfaces are the ones found here (a
    container's eth0, eth1) instead of the native veth names."""

    router_client_if: str = "rc"
    router_server_if: str = "rs"
    endpoint_if: str = "pb0"


def localize(cmd: Sequence[str], here: Collection[str]) -> Command:
    """`cmd` as run in this network namespace, when the namespace it names is here."""
    c = tuple(cmd)
    if c[:3] == ("ip", "netns", "exec") and len(c) > 4:
        ns, rest = c[3], c[4:]
    elif c[:1] in (("ip",), ("tc",)) and len(c) > 3 and c[1] == "-n":
        ns, rest = c[2], (c[0], *c[3:])
    else:
        return c
    if ns not in here:
        raise LabError(f"`{' '.join(c)}`: namespace {ns} is not in this process's network namespace "
                           f"(here: {', '.join(sorted(here)) or 'none'})")
    return rest


class LocalBed:
    """The `Bed` interface (layout, state_dir, run, spawn, exec_argv, processes) for
    the given roles in this network namespace. Creates no namespace; on exit stops its
    processes and removes its state directory."""

    def __init__(self, layout: Layout, roles: Collection[str]) -> None:
        unknown = set(roles) - set(ROLES)
        if unknown:
            raise ValueError(f"roles: {', '.join(sorted(unknown))} unknown; allowed: {', '.join(ROLES)}")
        self.layout = layout
        self.here = frozenset(getattr(layout, role) for role in roles)
        self.state_dir = STATE_ROOT / layout.prefix
        self.processes: list[ManagedProcess] = []

    def __enter__(self) -> LocalBed:
        self.state_dir.mkdir(parents=True, exist_ok=False)
        owner = Owner.me()
        (self.state_dir / "owner.json").write_text(json.dumps({"pid": owner.pid, "start": owner.start,
                                                               "namespaces": []}))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, cmd: Command, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(localize(cmd, self.here), input=input, check=check)

    def exec_argv(self, ns: str, argv: Sequence[str]) -> list[str]:
        return list(localize(("ip", "netns", "exec", ns, *argv), self.here))

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
        """A child here (`ManagedProcess` calls this)."""
        return spawn(localize(argv, self.here), **popen)

    def close(self) -> None:
        for process in list(self.processes):
            process.stop()
        shutil.rmtree(self.state_dir, ignore_errors=True)


# What this namespace has: interfaces, addresses, routes --------------------------------
# The roles find their interfaces by the addresses they were given, not by name: Docker
# names them eth0, eth1, ... in an order it does not promise. `parse_*` are pure.


@dataclass(frozen=True)
class Address:
    interface: str
    address: str
    prefixlen: int

    @property
    def family(self) -> int:
        return ipaddress.ip_address(self.address).version


@dataclass(frozen=True)
class Route:
    """How this namespace reaches one destination (`ip route get`)."""

    destination: str
    interface: str
    gateway: str | None
    source: str | None


def parse_addresses(text: str) -> list[Address]:
    """Every address from `ip -j addr show`."""
    found = []
    for link in json.loads(text or "[]"):
        for info in link.get("addr_info", []):
            if "local" in info:
                found.append(Address(link["ifname"], info["local"], int(info["prefixlen"])))
    return found


def parse_route(destination: str, text: str) -> Route:
    """The first route of `ip -j route get DESTINATION`."""
    routes = json.loads(text or "[]")
    if not routes:
        raise LabError(f"no route to {destination}")
    first = routes[0]
    return Route(destination, first["dev"], first.get("gateway"), first.get("prefsrc"))


def addresses() -> list[Address]:
    return parse_addresses(run(("ip", "-j", "addr", "show")).stdout)


def _given(interface: str) -> str:
    if run(("ip", "link", "show", "dev", interface), check=False).returncode != 0:
        raise LabError(f"interface {interface}: not in this network namespace")
    return interface


def interface_with(address: str, given: str | None = None) -> str:
    """The interface holding `address` (or `given`, checked to exist)."""
    if given is not None:
        return _given(given)
    for entry in addresses():
        if entry.address == address:
            return entry.interface
    raise LabError(f"no interface here holds {address}: give the interface, or add the address "
                       f"(docker-compose.yml fixes each role's addresses)")


def interface_in(network: str, given: str | None = None) -> str:
    """The interface with an address inside `network` (e.g. 198.18.1.0/24), or `given`."""
    if given is not None:
        return _given(given)
    net = ipaddress.ip_network(network)
    for entry in addresses():
        if ipaddress.ip_address(entry.address) in net:
            return entry.interface
    raise LabError(f"no interface here has an address in {network}: give the interface")


def route_to(destination: str) -> Route:
    family = "-6" if ":" in destination else "-4"
    result = run(("ip", family, "-j", "route", "get", destination), check=False)
    if result.returncode != 0:
        raise LabError(f"no route to {destination} here: add one via the router "
                           f"(ip route add <subnet> via <router address>)")
    return parse_route(destination, result.stdout)


def try_route_to(destination: str) -> Route | None:
    """The route, or None when this namespace has none (e.g. no IPv6)."""
    try:
        return route_to(destination)
    except LabError:
        return None
