"""The router role of a split lab (`pagebench serve router`): owns the emulated link of
the network namespace it runs in and changes it when the harness asks over the control
channel. The link is the native `Link`, its commands run here (`local.LocalBed`).

When it stops (normally, on SIGTERM or SIGINT) it leaves the namespace as it found it:
no delay program, no root qdiscs on its two interfaces, and the firewall tables the link
rewrites (raw, mangle, filter) put back as they were.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from pagebench.lab.split.local import LocalBed, LocalLayout, interface_with, try_route_to
from pagebench.lab.split.role import Role, route
from pagebench.link.emulator import Link
from pagebench.lab.split.endpoint import PROC_SYS, set_sysctl
from pagebench.core.profiles import make_profile
from pagebench.core.layout import ORIGIN_NETWORK, ORIGIN_NETWORK6, Layout, origin_address, origin_address6, unsegmented
from pagebench.system.commands import LabError
from pagebench.system.places import run_prefix

#: The tables the link's rule sets replace, with their built-in chains (both families).
TABLES = {
    "raw": ("PREROUTING", "OUTPUT"),
    "mangle": ("PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"),
    "filter": ("INPUT", "FORWARD", "OUTPUT"),
}
FORWARDING = ("net.ipv4.ip_forward", "net.ipv6.conf.all.forwarding")


def restore_document(saved: str) -> str:
    """An iptables-restore document putting back the tables the link rewrites as `saved`
    (`iptables-save` from before) had them; a table it lacks gets empty ACCEPT chains."""
    sections = {m.group(1): m.group(0) for m in re.finditer(r"^\*(\w+)\n.*?^COMMIT\n", saved, re.M | re.S)}
    parts = []
    for table, chains in TABLES.items():
        parts.append(sections.get(table) or "\n".join(
            [f"*{table}", *(f":{chain} ACCEPT [0:0]" for chain in chains), "COMMIT"]) + "\n")
    return "".join(parts)


def check_origin_routes(server_if: str) -> None:
    """The origins' range is routed, not on the server side's subnet: the router must reach
    it through the sites' address on its server interface (compose adds the route)."""
    for network, probe, required in ((ORIGIN_NETWORK, origin_address(0), True),
                                     (ORIGIN_NETWORK6, origin_address6(0), False)):
        found = try_route_to(probe)
        if found is None and not required:
            continue  # no IPv6 here: nothing of the lab travels over it
        if found is None or found.interface != server_if or found.gateway is None:
            via = "no route" if found is None else f"a route via {found.gateway or 'no gateway'} dev {found.interface}"
            raise LabError(f"origins {network}: the router has {via}, not via the sites' address on {server_if}: "
                           f"ip route add {network} via <the sites' address on the server side>")


class RouterService(Role):
    """Checks the namespace can route, finds the two link interfaces by the router's
    addresses, and restores everything on exit."""

    def __init__(self, client_if: str | None = None, server_if: str | None = None) -> None:
        self.layout = LocalLayout(
            run_prefix(),
            router_client_if=interface_with(Layout.router_client_ip, client_if),
            router_server_if=interface_with(Layout.router_server_ip, server_if),
        )
        self.bed = LocalBed(self.layout, roles=("router",))
        self.link: Link | None = None
        self.saved: dict[str, str] = {}

    def set_up(self) -> None:
        check_origin_routes(self.layout.router_server_if)  # before anything here changes
        for name in FORWARDING:
            if (PROC_SYS / name.replace(".", "/")).exists():
                set_sysctl(name, "1", "the router")
        for dev in (self.layout.router_client_if, self.layout.router_server_if):
            self.bed.run(unsegmented(dev))
        self.saved = {tool: self.bed.run((f"{tool}-save",)).stdout for tool in ("iptables", "ip6tables")}

    def tear_down(self) -> None:
        self.reset()

    def reset(self) -> None:
        if self.link is not None:
            self.link.reset()
        for tool, saved in self.saved.items():
            self.bed.run((f"{tool}-restore",), input=restore_document(saved), check=False)

    # Endpoints

    def _link(self) -> Link:
        return self.needs(self.link, "link", "POST /link/open")

    @route("GET /health")
    def health(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"role": "router", "client_if": self.layout.router_client_if,
                "server_if": self.layout.router_server_if,
                "backend": self.link.backend if self.link else None}

    @route("POST /link/open")
    def open(self, args: dict[str, Any]) -> dict[str, Any]:
        """A link with the run's backend (as recorded; None: this kernel's best) and seed."""
        self.reset()
        self.link = Link(self.bed, args.get("backend"), int(args.get("seed", 1)), endpoints=False)
        return {"backend": self.link.backend}

    @route("POST /link/apply")
    def apply(self, args: dict[str, Any]) -> dict[str, Any]:
        profile = make_profile(args["profile"], "control: profile")
        link = self._link()
        link.apply(profile)
        return {"backend": link.backend, "profile": profile.name, "notes": link.plan.notes if link.plan else [],
                "scheduling": link.scheduling}

    @route("GET /link/counters")
    def counters(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"counters": dataclasses.asdict(self._link().counters())}

    @route("POST /link/wait_settled")
    def wait_settled(self, args: dict[str, Any]) -> dict[str, Any]:
        self._link().wait_settled(float(args.get("timeout", 2.0)))
        return {}

    @route("POST /link/reset")
    def reset_link(self, _: dict[str, Any]) -> dict[str, Any]:
        self.reset()
        return {}
