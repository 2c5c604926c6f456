"""Caddy serving a plan's QUIC bindings (HTTP/3), run as our own process in the server
namespace, and its JSON access log read back per load as nginx's is (`core.accesslog`
parses it). `startup_error` and `ready` read its start-up messages (pure).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from pagebench.core.servers import caddyconf
from pagebench.core.servers.accesslog import AccessRecord, parse_caddy_log
from pagebench.core.servers.plan import ServerPlan
from pagebench.lab.servers.nginx import OriginServer, ServerError, version_in, with_certificate
from pagebench.lab.tls import Authority
from pagebench.system import places
from pagebench.system.commands import Bed, run
from pagebench.system.process import ManagedProcess

#: Built from a pinned release by `harness/bootstrap install` (see CADDY_VERSION there) into
#: the virtualenv's bin/, beside pagebench's Python (else one on PATH; where the bootstrap
#: puts it when there is none, for the message); `$PAGEBENCH_CADDY` names another build.
#: Debian 12's Caddy 2.6.2 has quic-go 0.29, which drops the second Initial packet of
#: Chromium's two-packet ClientHello (quic-go #3760), so most cold h3 handshakes took 3 RTT.
CADDY = os.environ.get("PAGEBENCH_CADDY") or str(places.program("caddy") or Path(sys.prefix) / "bin" / "caddy")


# Start-up messages (pure) --------------------------------------------------------------


def startup_error(text: str) -> str | None:
    """The reason Caddy gave for not starting: its `Error: ...` line, or an error entry."""
    for line in reversed(text.splitlines()):
        if line.startswith("Error: "):
            return line.removeprefix("Error: ").strip()
    for line in reversed(text.splitlines()):
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and entry.get("level") in ("error", "fatal", "panic"):
            return f"{entry.get('msg', '')}: {entry.get('error', '')}".strip(": ")
    return None


def ready(text: str) -> bool:
    """Has Caddy logged that every app (and so every listener) has started?"""
    return any(caddyconf.READY_MESSAGE in line for line in text.splitlines())


# I/O ------------------------------------------------------------------------------------------


def caddy_version(caddy: str = CADDY) -> str:
    """e.g. '2.11.9' (bootstrap stamps its build with the release it pinned)."""
    result = run((caddy, "version"))
    return version_in(result.stdout + result.stderr, r"v?(\d+\.\d+\.\d+\S*)", (caddy, "version"))


class CaddyServer(OriginServer):
    """Context manager: Caddy serving the plan's h3 bindings in the bed's server
    namespace; stopped on exit. The same interface as `nginx.NginxServer` (and, like it,
    it needs only the bed's `layout`, `exec_argv`, `spawn` and `processes`):

        with CaddyServer(bed, plan, bed.state_dir / "caddy") as server:
            offset = server.log_offset()
            ...  # one page load
            log = server.connections_since(offset, hosts=site.origins)
    """

    def __init__(self, bed: Bed, plan: ServerPlan, rundir: Path, caddy: str = CADDY,
                 timeout: float = 10.0, authority: Authority | None = None, tcp: bool = False) -> None:
        super().__init__(bed, plan, rundir, timeout, authority)
        self.caddy = caddy
        self.tcp = tcp  # also h1/h2 on TCP, the same routes: for checks with curl (`caddyconf.render`)
        self.conf_path = self.rundir / "caddy.json"
        self.stderr_path = self.rundir / "stderr.log"

    def argv(self) -> list[str]:
        base = [self.caddy, "run", "--config", str(self.conf_path)]
        return self.bed.exec_argv(self.bed.layout.server, base)

    def environment(self) -> dict[str, str]:
        """Caddy writes its instance id and data under HOME/XDG dirs: keep them in the run dir."""
        home = str(self.rundir / "home")
        return {**os.environ, "HOME": home, "XDG_DATA_HOME": f"{home}/data",
                "XDG_CONFIG_HOME": f"{home}/config", "XDG_CACHE_HOME": f"{home}/cache"}

    def __enter__(self) -> CaddyServer:
        self.plan = with_certificate(self.plan, self.authority)
        self.rundir.mkdir(parents=True, exist_ok=True)
        (self.rundir / "home").mkdir(exist_ok=True)
        self.conf_path.write_text(caddyconf.render(self.plan, self.rundir, tcp=self.tcp, upstreams=self.upstreams))
        process = ManagedProcess("caddy", self.argv(), self.stderr_path, bed=self.bed, env=self.environment(),
                                 error=ServerError, reason=startup_error, grace=5.0)
        self.process = process
        try:
            # READY_MESSAGE comes after its apps started, i.e. every socket is bound.
            process.start(lambda: ready(process.output()), self.timeout)
        except ServerError as error:  # it refused the configuration we wrote: say which
            raise ServerError(f"caddy config {self.conf_path}: {error}") from None
        return self

    @staticmethod
    def parse(text: str) -> tuple[list[AccessRecord], int]:
        return parse_caddy_log(text)

