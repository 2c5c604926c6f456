"""The origin servers of a lab: nginx for HTTP/1.x and HTTP/2, and Caddy beside it when
the plan has h3 cells, with the app sites' own processes behind them (`apps`). Started and
stopped together, and read as one access log: every binding has its own server address,
so the two logs never count a connection twice.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from pagebench.core.servers.accesslog import ServerLog, parse_both
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab.servers.apps import AppServers
from pagebench.lab.servers.caddy import CaddyServer
from pagebench.lab.servers.nginx import NginxServer, ServerError
from pagebench.system.commands import Bed

#: A position in both access logs: (nginx, caddy).
Offset = tuple[int, int]


class OriginServers:
    """Context manager, with `NginxServer`'s log interface over both servers.

        with OriginServers(bed, plan, bed.state_dir) as origins:
            offset = origins.log_offset()
            ...  # one page load
            log = origins.connections_since(offset)
    """

    def __init__(self, bed: Bed, plan: ServerPlan, rundir: Path) -> None:
        self.apps = AppServers(bed, plan, Path(rundir) / "apps")
        self.nginx = NginxServer(bed, plan, Path(rundir) / "nginx")
        self.caddy = (CaddyServer(bed, plan, Path(rundir) / "caddy")
                      if plan.served_by("caddy") else None)

    @property
    def plan(self) -> ServerPlan:
        """The plan with its certificate (once started)."""
        return self.nginx.plan

    def __enter__(self) -> OriginServers:
        self.apps.start()  # first: the terminators' configuration names their ports
        try:
            self.nginx.upstreams = self.apps.upstreams
            self.nginx.__enter__()
            if self.caddy is not None:
                self.caddy.plan = self.nginx.plan  # the same leaf
                self.caddy.upstreams = self.apps.upstreams
                self.caddy.__enter__()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def check_alive(self) -> None:
        self.nginx.check_alive()
        if self.caddy is not None:
            self.caddy.check_alive()
        self.apps.check_alive()

    def check_app(self, site: str, page_statuses: Sequence[int]) -> None:
        """After a load of `site`: its app is still well (`apps.AppServer.check_health`)."""
        self.apps.check(site, page_statuses)

    def alive(self) -> bool:
        try:
            self.check_alive()
        except ServerError:
            return False
        return True

    def stop(self) -> None:
        if self.caddy is not None:
            self.caddy.stop()
        self.nginx.stop()
        self.apps.stop()

    def log_offset(self) -> Offset:
        return (self.nginx.log_offset(), self.caddy.log_offset() if self.caddy is not None else 0)

    def log_since(self, offset: Offset) -> tuple[str, str]:
        """Both logs' text after `offset` (what `parse` reads back)."""
        return (self.nginx.log_since(offset[0]), self.caddy.log_since(offset[1]) if self.caddy is not None else "")

    def connections_since(self, offset: Offset, hosts: Collection[str] | None = None,
                          addresses: Collection[str] | None = None) -> ServerLog:
        return parse_both(self.log_since(offset), hosts, addresses)


