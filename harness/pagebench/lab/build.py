"""The lab a run measures in: built here (three namespaces, the native default), or the
router and sites roles of a split lab reached over the control channel (the compose
lab: `run --router URL --sites URL`). Either way the runner gets the same parts; only
where they live differs. `link_check` builds a throwaway native lab to measure a link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.layout import Layout, unsegmented
from pagebench.core.profiles import Profile
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab.netns import NamespaceBed
from pagebench.lab.servers.origins import OriginServers
from pagebench.lab.split.control import Client, ControlError
from pagebench.lab.split.endpoint import SERVER_SIDE, through_router
from pagebench.lab.split.local import LocalBed
from pagebench.lab.split.remote import RemoteLink, RemoteSites, health
from pagebench.lab.split.remote import measure as split_measure
from pagebench.link.check import Step, measure
from pagebench.link.emulator import Link, LinkControl
from pagebench.system.commands import LabError
from pagebench.system.places import run_prefix


@dataclass(frozen=True)
class Roles:
    """Control URLs of a split lab's router and sites."""

    router: str
    sites: str


#: The origin servers as the runner uses them: log offsets and connection counts.
Origins = OriginServers | RemoteSites


@dataclass(frozen=True)
class Lab:
    """The parts of a lab as the runner uses them."""

    bed: NamespaceBed | LocalBed  # state directory, and where the client side's processes run
    link: LinkControl
    origins: Origins  # nginx, and Caddy for h3
    client_namespace: str | None  # Chromium's (None: the harness's own)
    measure: Callable[[Profile], dict[str, object]]  # the link check of an applied profile


def _apps_given_by(server_plan: ServerPlan, way: str) -> list[str]:
    """The plan's app sites given by `way` (`command` or `url`)."""
    return [site.name for site in server_plan.sites if site.app is not None and getattr(site.app, way) is not None]


@contextmanager
def native(server_plan: ServerPlan, backend: str | None, seed: int) -> Iterator[Lab]:
    """Namespaces, link and origin servers built here; all gone on exit."""
    if apps := _apps_given_by(server_plan, "url"):
        raise LabError(f"site {apps[0]}: app url: the native lab starts the app itself and reaches no other "
                       "host: give app: command: (url: is for the compose lab, run --router --sites)")
    layout = Layout(run_prefix(), server_ips=server_plan.ip_count)
    with NamespaceBed(layout) as bed:
        link = Link(bed, backend, seed)
        with OriginServers(bed, server_plan, bed.state_dir) as origins:
            yield Lab(bed, link, origins, layout.client, lambda profile: measure(bed, link, profile))


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
def split(roles: Roles, site_refs: list[Any], server_plan: ServerPlan, backend: str | None,
          seed: int, spec_dir: Path) -> Iterator[Lab]:
    """The harness as the client of a lab whose router and sites run elsewhere: the link
    reset and the sites stopped on exit. The sites role reads the spec's sites relative to
    `spec_dir`, at the same path there (compose mounts it in both)."""
    if apps := _apps_given_by(server_plan, "command"):
        raise LabError(f"site {apps[0]}: app command: the compose lab does not start programs in its sites "
                       "container: run the app as a compose service and give app: url: http://SERVICE:PORT "
                       "(docs/apps.md)")
    router, sites = Client(roles.router, "router"), Client(roles.sites, "sites")
    health(router, "router")
    health(sites, "sites")
    with LocalBed(Layout(run_prefix()), roles=("client",)) as bed:
        route = through_router(SERVER_SIDE[0])
        assert route is not None  # IPv4 is required
        bed.run(unsegmented(route.interface))  # the client's end of the link
        link = RemoteLink(router, sites, backend, seed)
        with _undo_on_exit(link.reset):
            remote_sites = RemoteSites(sites, site_refs, server_plan, spec_dir)
            with _undo_on_exit(remote_sites.stop):
                me = route.source or Layout.client_ip
                yield Lab(bed, link, remote_sites, None,
                          lambda profile: split_measure(bed, link, remote_sites, profile, me))


def link_check(
    profile: Profile, backend: str | None = None, seed: int = 1, prefix: str | None = None,
    step: Step = lambda _: None,
) -> dict[str, object]:
    """Build a throwaway native lab, apply the profile, measure, tear down."""
    with NamespaceBed(Layout(prefix or run_prefix())) as bed:
        step("building the lab")
        link = Link(bed, backend, seed)
        link.apply(profile)
        return measure(bed, link, profile, step)
