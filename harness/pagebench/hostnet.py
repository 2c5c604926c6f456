"""What this process's own network namespace has: interfaces, addresses, routes.

The roles of a lab split across containers (router, sites, harness) find their
interfaces by the addresses they were given, not by name: Docker names them eth0,
eth1, ... in an order it does not promise. `parse_*` are pure; the rest asks `ip -j`.
"""

from __future__ import annotations

import ipaddress
import json
from dataclasses import dataclass

from .testbed import TestbedError, run


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
        raise TestbedError(f"no route to {destination}")
    first = routes[0]
    return Route(destination, first["dev"], first.get("gateway"), first.get("prefsrc"))


def addresses() -> list[Address]:
    return parse_addresses(run(("ip", "-j", "addr", "show")).stdout)


def _given(interface: str) -> str:
    if run(("ip", "link", "show", "dev", interface), check=False).returncode != 0:
        raise TestbedError(f"interface {interface}: not in this network namespace")
    return interface


def interface_with(address: str, given: str | None = None) -> str:
    """The interface holding `address` (or `given`, checked to exist)."""
    if given is not None:
        return _given(given)
    for entry in addresses():
        if entry.address == address:
            return entry.interface
    raise TestbedError(f"no interface here holds {address}: give the interface, or add the address "
                       f"(docker-compose.yml fixes each role's addresses)")


def interface_in(network: str, given: str | None = None) -> str:
    """The interface with an address inside `network` (e.g. 198.18.1.0/24), or `given`."""
    if given is not None:
        return _given(given)
    net = ipaddress.ip_network(network)
    for entry in addresses():
        if ipaddress.ip_address(entry.address) in net:
            return entry.interface
    raise TestbedError(f"no interface here has an address in {network}: give the interface")


def route_to(destination: str) -> Route:
    family = "-6" if ":" in destination else "-4"
    result = run(("ip", family, "-j", "route", "get", destination), check=False)
    if result.returncode != 0:
        raise TestbedError(f"no route to {destination} here: add one via the router "
                           f"(ip route add <subnet> via <router address>)")
    return parse_route(destination, result.stdout)


def try_route_to(destination: str) -> Route | None:
    """The route, or None when this namespace has none (e.g. no IPv6)."""
    try:
        return route_to(destination)
    except TestbedError:
        return None
