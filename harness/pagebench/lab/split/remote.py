"""The harness's side of a split lab: the router's link and the sites' servers, driven
over the control channel with the interfaces the runner uses natively (`Link`'s
apply/profile/backend/counters/wait_settled; `NginxServer`'s log_offset and
connections_since). The harness is the client: its own namespace is the client side.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pagebench.core.servers.accesslog import ServerLog, parse_both
from pagebench.core.layout import Command
from pagebench.core.profiles import Profile
from pagebench.link.calibration import Hold
from pagebench.core.servers.plan import ServerPlan, binding_rows
from pagebench.lab import tls
from pagebench.lab.servers.apps import AppError
from pagebench.lab.servers.nginx import with_certificate
from pagebench.lab.servers.origins import Offset
from pagebench.lab.split.control import Client, ControlError
from pagebench.lab.split.endpoint import SERVER_SIDE, apply_here
from pagebench.lab.split.local import LocalBed
from pagebench.link.check import PROBE_PORT, Step, probe_link
from pagebench.link.counters import LinkCounters
from pagebench.system import places
from pagebench.system.commands import LabError


def counters_from(data: dict[str, Any]) -> LinkCounters:
    return LinkCounters(**{key: tuple(value) if key == "lateness_hist" else value for key, value in data.items()})


class RemoteLink:
    """The router role's link. `apply` sets all three parts of a profile, as `Link` does
    natively: the router's (delay, rate, queue, firewall), the client's TCP knobs (here,
    in the harness's own namespace) and the server's (by the sites role)."""

    def __init__(self, router: Client, sites: Client, backend: str | None, seed: int) -> None:
        self.router, self.sites = router, sites
        self.backend: str = router.post("/link/open", {"backend": backend, "seed": seed})["backend"]
        self.profile: Profile | None = None
        self.scheduling: str | None = None
        self.holds: dict[str, Hold] = {}  # never calibrated (`calibrate`)

    def apply(self, profile: Profile) -> None:
        self.profile = None  # until all three parts are set
        self.scheduling = self.router.post("/link/apply", {"profile": profile.fields()}).get("scheduling")
        apply_here(profile, SERVER_SIDE)
        self.sites.post("/endpoint/apply", {"profile": profile.fields()})
        self.profile = profile

    def calibrate(self, profile: Profile, hold: Hold) -> bool:
        """Not over the control channel yet: the router role's link keeps the profile's
        holds, and its link check says it was not calibrated."""
        return False

    def counters(self) -> LinkCounters:
        return counters_from(self.router.get("/link/counters")["counters"])

    def wait_settled(self, timeout: float = 2.0) -> None:
        self.router.post("/link/wait_settled", {"timeout": timeout})

    def drained_counters(self, timeout: float = 2.0) -> LinkCounters:
        self.wait_settled(timeout)
        return self.counters()

    def reset(self) -> None:
        self.router.post("/link/reset")
        self.profile = None


class RemoteSites:
    """The sites role's origin servers, serving the harness's own server plan (checked on
    start), and its app sites' health (asked there: the harness cannot reach the apps)."""

    def __init__(self, sites: Client, refs: list[Any], server_plan: ServerPlan, spec_dir: Path) -> None:
        self.client = sites
        self.apps = frozenset(site.name for site in server_plan.sites if site.app is not None)
        answer = sites.post("/sites/start", {"sites": refs, "modes": [m.name for m in server_plan.modes],
                                             "tls": list(server_plan.tls_versions),
                                             "encodings": [e.name for e in server_plan.encodings],
                                             "query": server_plan.query, "spec_dir": str(spec_dir)},
                            timeout=sites.timeout + sum(site.app.ready_timeout_s for site in server_plan.sites
                                                        if site.app is not None))  # it waits for them
        if answer["bindings"] != binding_rows(server_plan):
            sites.post("/sites/stop")
            raise LabError(f"sites {sites.url}: serves a different plan than this harness computed "
                               f"(another pagebench version, or other site files?)")
        if answer["spki"] != tls.spki_list():
            sites.post("/sites/stop")
            raise LabError(f"sites {sites.url}: its TLS leaf key is not this harness's: share the "
                               f"directory {places.data_dir() / 'tls'} between them (compose: the `pki` volume)")
        # The certificate files here name the same hosts with the same key (the edge proxy uses them).
        self.plan = with_certificate(server_plan)
        self.nginx_version: str = answer["nginx_version"]

    def log_offset(self) -> Offset:
        nginx, caddy = self.client.get("/sites/log/offset")["offset"]
        return int(nginx), int(caddy)

    def connections_since(self, offset: Offset, hosts: Any = None, addresses: Any = None) -> ServerLog:
        texts = self.client.get("/sites/log", nginx=offset[0], caddy=offset[1])
        return parse_both((texts["nginx"], texts["caddy"]), hosts, addresses)

    @contextmanager
    def probe_server(self, host: str, port: int = PROBE_PORT) -> Iterator[None]:
        self.client.post("/probe/start", {"host": host, "port": port})
        try:
            yield
        finally:
            self.client.post("/probe/stop")

    def check_alive(self) -> None:
        """The sites role's servers still serve (a crashed nginx there ends the run as here)."""
        if not self.client.get("/health").get("alive"):
            raise LabError(f"sites {self.client.url}: its origin servers exited: the sites are down")

    def check_app(self, site: str, page_statuses: Sequence[int]) -> None:
        """After a load of `site`: its app is still well, asked of the sites role (as
        `OriginServers.check_app`); its one line raised here as the app's error."""
        if site in self.apps:
            error = self.client.post("/apps/check", {"site": site, "statuses": list(page_statuses)}).get("error")
            if error:
                raise AppError(error)

    def stop(self) -> None:
        self.client.post("/sites/stop")


def measure(bed: LocalBed, link: RemoteLink, sites: RemoteSites, profile: Profile, me: str,
            step: Step = lambda _: None) -> dict[str, object]:
    """The link check across the split lab: probe server in the sites role, probe client
    here (the harness is the client, at address `me`)."""
    host = sites.plan.bindings[0].ip

    def client(*args: str) -> object:
        argv: Command = (sys.executable, "-m", "pagebench.link.probe", *args)
        return json.loads(bed.run(argv).stdout)

    with sites.probe_server(host):
        return probe_link(link, profile, host, me, client, step)


def health(client: Client, role: str) -> dict[str, Any]:
    """Is the role there, and is it the role we think?"""
    answer = client.get("/health")
    if answer.get("role") != role:
        raise ControlError(f"{role} {client.url}: answers as {answer.get('role')!r}, not {role!r}")
    return answer
