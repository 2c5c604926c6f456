"""The lab a run measures in: built here (three namespaces, the native default), or the
router and sites roles of a split lab reached over the control channel (the compose
lab: `--router URL --sites URL`, or $PAGEBENCH_ROUTER and $PAGEBENCH_SITES). Either
way the runner gets the same parts; only where they live differs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import serverconf
from .control import Client, ControlError
from .hostbed import HostBed
from .link.check import measure as native_measure
from .link.emulator import Link, LinkControl
from .link.endpoint import SERVER_SIDE, through_router
from .profiles import Profile
from .remote import RemoteLink, RemoteSites, health, measure as split_measure
from .origins import OriginServers
from .testbed import Testbed, TestbedError
from .topology import Topology, new_prefix

ROUTER_ENV, SITES_ENV = "PAGEBENCH_ROUTER", "PAGEBENCH_SITES"


@dataclass(frozen=True)
class Roles:
    """Control URLs of a split lab's router and sites."""

    router: str
    sites: str


#: The origin servers as the runner uses them: log offsets and connection counts.
Origins = OriginServers | RemoteSites


@dataclass(frozen=True)
class Lab:
    bed: Testbed | HostBed  # state directory, and where the client side's processes run
    link: LinkControl
    origins: Origins  # nginx, and Caddy for h3
    client_namespace: str | None  # Chromium's (None: the harness's own)
    measure: Callable[[Profile], dict[str, object]]  # the link check of an applied profile


def from_environment() -> Roles | None:
    """The split lab named by $PAGEBENCH_ROUTER and $PAGEBENCH_SITES (None: build it here)."""
    router, sites = os.environ.get(ROUTER_ENV), os.environ.get(SITES_ENV)
    if not router and not sites:
        return None
    if not router or not sites:
        raise TestbedError("--router and --sites ($PAGEBENCH_ROUTER, $PAGEBENCH_SITES) go together: give both")
    return Roles(router, sites)


@contextmanager
def native(server_plan: serverconf.ServerPlan, backend: str | None, seed: int) -> Iterator[Lab]:
    """Namespaces, link and origin servers built here; all gone on exit."""
    topology = Topology(new_prefix(), server_ips=server_plan.ip_count)
    with Testbed(topology) as bed:
        link = Link(bed, backend, seed)
        with OriginServers(bed, server_plan, bed.state_dir) as origins:
            yield Lab(bed, link, origins, topology.client, lambda profile: native_measure(bed, link, profile))


@contextmanager
def _undo_on_exit(undo: Callable[[], Any]) -> Iterator[None]:
    """Run `undo` however the block ends; if the block failed, its error is the one to
    report (a role that crashed cannot be undone either)."""
    try:
        yield
    except BaseException:
        try:
            undo()
        except ControlError:
            pass
        raise
    undo()


@contextmanager
def split(roles: Roles, site_refs: list[Any], server_plan: serverconf.ServerPlan, backend: str | None,
          seed: int) -> Iterator[Lab]:
    """The harness as the client of a lab whose router and sites run elsewhere: the link
    reset and the sites stopped on exit."""
    router, sites = Client(roles.router, "router"), Client(roles.sites, "sites")
    health(router, "router")
    health(sites, "sites")
    with HostBed(Topology(new_prefix()), roles=("client",)) as bed:
        route = through_router(SERVER_SIDE[0])
        assert route is not None  # IPv4 is required
        # One skb must be one wire packet, on the client's end too.
        bed.run(("ethtool", "-K", route.interface, "tso", "off", "gso", "off", "gro", "off"))
        link = RemoteLink(router, sites, backend, seed)
        with _undo_on_exit(link.reset):
            remote_sites = RemoteSites(sites, site_refs, server_plan)
            with _undo_on_exit(remote_sites.stop):
                me = route.source or Topology.client_ip
                yield Lab(bed, link, remote_sites, None,
                          lambda profile: split_measure(bed, link, remote_sites, profile, me))
