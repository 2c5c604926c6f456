"""The sites role of a split lab (`pagebench serve sites`): serves the test sites from
the network namespace it runs in, as the harness asks over the control channel.

The harness sends the spec's site references, modes and TLS versions, not files: sites
are generated deterministically (or read from the same directory in the image), so
this role builds the very same `ServerPlan` the harness computes, and answers with its
bindings so the harness can check they agree. It adds the plan's server addresses to
its interface (and removes the ones it added when it stops), runs nginx for the plan,
serves the access log since an offset, applies the server side's TCP knobs, and runs
the link check's probe server. Site paths are read relative to the spec's directory,
which must be at the same path here as in the harness (compose mounts it in both). An
app site given by `url` (a compose service) is resolved and proxied to from here, and
its health is asked here after each load (`/apps/check`): the harness cannot reach it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pagebench.core import encodings, layout, modes
from pagebench.core.servers import plan as serverplan
from pagebench.core.layout import MAX_SERVER_IPS, Layout, unsegmented
from pagebench.core.profiles import make_profile
from pagebench.lab import sites as sitefiles, tls
from pagebench.lab.servers.apps import AppError
from pagebench.lab.servers.nginx import nginx_version
from pagebench.lab.servers.origins import OriginServers
from pagebench.lab.split.endpoint import CLIENT_SIDE, apply_here
from pagebench.lab.split.local import LocalBed, addresses, interface_in
from pagebench.lab.split.role import Role, route
from pagebench.link.check import serve_probe
from pagebench.system.process import ManagedProcess
from pagebench.system.places import run_prefix

SERVER_NETWORK = "198.18.1.0/24"


def address_batch(server_plan: serverplan.ServerPlan, dev: str, present: set[str], verb: str = "add") -> str:
    """`ip -batch` lines adding (or deleting) each of the plan's server addresses not in `present`."""
    wanted = (address for b in server_plan.bindings for address in (b.ip, b.ip6) if address not in present)
    return layout.address_batch(wanted, dev, verb)


class SitesService(Role):
    """Origin servers, probe server and added addresses are gone on exit."""

    def __init__(self, interface: str | None = None) -> None:
        self.interface = interface_in(SERVER_NETWORK, interface)
        self.bed = LocalBed(Layout(run_prefix(), server_ips=MAX_SERVER_IPS), roles=("server",))
        self.origins: OriginServers | None = None
        self.added = ""  # `ip -batch` lines deleting the addresses added
        self.probe: ManagedProcess | None = None

    def set_up(self) -> None:
        self.bed.run(unsegmented(self.interface))  # the server's end of the link

    def tear_down(self) -> None:
        self._stop_probe()
        self._stop_sites()

    def _stop_sites(self) -> None:
        if self.origins is not None:
            self.origins.stop()
            self.origins = None
        if self.added:
            self.bed.run(("ip", "-force", "-batch", "-"), input=self.added, check=False)
        self.added = ""

    def _stop_probe(self) -> None:
        if self.probe is not None:
            self.probe.stop()
            self.probe = None

    def _origins(self) -> OriginServers:
        return self.needs(self.origins, "sites served", "POST /sites/start")

    # Endpoints

    @route("GET /health")
    def health(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"role": "sites", "interface": self.interface, "serving": self.origins is not None,
                "alive": self.origins is not None and self.origins.alive()}

    @route("POST /sites/start")
    def start(self, args: dict[str, Any]) -> dict[str, Any]:
        """Serve these sites (spec references) under these modes and TLS versions."""
        self._stop_sites()
        spec_dir = Path(args.get("spec_dir", "."))
        missing = "" if spec_dir.is_dir() else (f" (the spec's directory {spec_dir} is not in the sites role: "
                                                "mount it at the same path as in the harness)")
        found = []
        for index, ref in enumerate(args["sites"]):
            try:
                found.append(sitefiles.materialize(sitefiles.resolve(ref, spec_dir)))
            except ValueError as error:
                raise ValueError(f"sites[{index}]: {error}{missing}") from None
        # the control channel carries names: here they become the vocabulary's rows
        server_plan = serverplan.plan(found, [modes.parse(name) for name in args["modes"]], args["tls"],
                                      encodings=[encodings.parse(name) for name in
                                                 args.get("encodings", [encodings.IDENTITY.name])],
                                      query=args.get("query", "exact"))
        present = {entry.address for entry in addresses()}
        self.added = address_batch(server_plan, self.interface, present, "del")  # the undo, first
        self.bed.run(("ip", "-batch", "-"), input=address_batch(server_plan, self.interface, present))
        origins = OriginServers(self.bed, server_plan, self.bed.state_dir)
        origins.__enter__()
        self.origins = origins
        return {"bindings": serverplan.binding_rows(server_plan), "spki": tls.spki_list(), "nginx_version": nginx_version()}

    @route("POST /apps/check")
    def check_app(self, args: dict[str, Any]) -> dict[str, Any]:
        """After a load of an app site: its health (`OriginServers.check_app`); a failure
        is the answer's `error`, the app's one line, not the endpoint's."""
        try:
            self._origins().check_app(str(args["site"]), [int(s) for s in args.get("statuses", [])])
        except AppError as error:
            return {"error": str(error)}
        return {}

    @route("POST /sites/stop")
    def stop(self, _: dict[str, Any]) -> dict[str, Any]:
        self._stop_sites()
        return {}

    @route("GET /sites/log/offset")
    def log_offset(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"offset": list(self._origins().log_offset())}

    @route("GET /sites/log")
    def log(self, args: dict[str, Any]) -> dict[str, Any]:
        nginx, caddy = self._origins().log_since((int(args.get("nginx", 0)), int(args.get("caddy", 0))))
        return {"nginx": nginx, "caddy": caddy}

    @route("POST /endpoint/apply")
    def endpoint(self, args: dict[str, Any]) -> dict[str, Any]:
        """The server side's TCP knobs for a profile (the harness sets the client's)."""
        apply_here(make_profile(args["profile"], "control: profile"), CLIENT_SIDE)
        return {}

    @route("POST /probe/start")
    def probe_start(self, args: dict[str, Any]) -> dict[str, Any]:
        """The link check's probe server on one of the served addresses (nothing else: the
        arguments become a command line)."""
        host, port = str(args.get("host")), args.get("port")
        served = {b.ip for b in self._origins().plan.bindings}
        if host not in served:
            raise ValueError(f"host {host!r}: not one of the served addresses")
        if not isinstance(port, int) or not 1024 <= port < 65536:
            raise ValueError(f"port {port!r}: want an unprivileged port number")
        self._stop_probe()
        self.probe = serve_probe(self.bed, host, port)
        return {}

    @route("POST /probe/stop")
    def probe_stop(self, _: dict[str, Any]) -> dict[str, Any]:
        self._stop_probe()
        return {}
