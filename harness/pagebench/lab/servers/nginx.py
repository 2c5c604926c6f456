"""nginx for a `ServerPlan`, run as our own process in the server namespace, and its
access log read back per load (`core.accesslog` parses it)."""

from __future__ import annotations

import re
import resource
import shutil
import stat
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from pagebench.core.encodings import IDENTITY, Encoding
from pagebench.core.errors import PagebenchError
from pagebench.core.modes import Mode
from pagebench.core.servers import nginxconf, plan as serverplan
from pagebench.core.servers.accesslog import AccessRecord, ServerLog, parse_nginx_log, summarize
from pagebench.core.servers.nginxreplay import ECHO_MODULE, needs_echo
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.sites.model import Site
from pagebench.lab.tls import Authority
from pagebench.system.commands import Bed, run
from pagebench.system.process import ManagedProcess

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
#: Start-up time allowed per server address, on top of the base timeout (measured: about
#: 3 ms each for nginx on a loaded 2-core machine, under 1 ms for Caddy).
STARTUP_S_PER_ADDRESS = 0.01


class ServerError(PagebenchError, RuntimeError):
    """nginx could not be configured or started (one line: what and why)."""


# Preparation ------------------------------------------------------------------------------


def prepare(sites: Sequence[Site], modes: Iterable[Mode], tls_versions: Iterable[str],
            authority: Authority | None = None, encodings: Iterable[Encoding] = (IDENTITY,)) -> ServerPlan:
    """The plan with its certificate: one leaf (cached) covering every origin."""
    return with_certificate(serverplan.plan(sites, modes, tls_versions, encodings=encodings), authority)


def with_certificate(server_plan: ServerPlan, authority: Authority | None = None) -> ServerPlan:
    """The plan with a leaf naming all its hostnames (issued once, then reused from disk)."""
    if server_plan.leaf is not None:
        return server_plan
    return replace(server_plan, leaf=(authority or Authority()).leaf(server_plan.hostnames))


def check_readable(server_plan: ServerPlan) -> None:
    """nginx's workers run as nobody: every directory above a site's content must be
    searchable by other users, or each request is a 403."""
    checked: set[Path] = set()
    for site in server_plan.sites:
        if site.app is not None:
            continue  # served by its process, not from files
        for host, version in ((h, v) for h in site.origins for v in range(1, site.manifest.versions + 1)):
            root = site.origin_root(host, version)
            for directory in (root, *root.parents):
                if directory in checked:
                    continue
                checked.add(directory)
                try:
                    mode = directory.stat().st_mode
                except OSError:
                    raise ServerError(f"site {site.name}: {directory} is missing") from None
                if not mode & stat.S_IXOTH:
                    raise ServerError(f"site {site.name}: {directory} is not searchable by nginx's workers "
                                      f"(user nobody): chmod o+x {directory}")


def check_echo_module(server_plan: ServerPlan) -> None:
    """A plan whose recorded sites delay responses (server think time) needs nginx's echo module."""
    if needs_echo(server_plan) and not Path(ECHO_MODULE).is_file():
        sites = sorted({s.name for s in server_plan.sites if s.recording is not None and s.recording.server_time})
        raise ServerError(f"site {', '.join(sites)}: server think time needs nginx's echo module ({ECHO_MODULE}, "
                          "apt package libnginx-mod-http-echo): install it, or import the site with --no-server-time")


def version_in(output: str, pattern: str, command: Sequence[str]) -> str:
    """The version `pattern`'s group finds in a server's `command` output, or a ServerError
    quoting what it said instead (nginx and Caddy print theirs differently)."""
    match = re.search(pattern, output)
    if not match:
        raise ServerError(f"`{' '.join(command)}`: no version in {output.strip()!r}")
    return match.group(1)


def nginx_version(nginx: str = NGINX) -> str:
    """e.g. '1.22.1'."""
    result = run((nginx, "-v"))
    return version_in(result.stderr + result.stdout, r"nginx/(\S+)", (nginx, "-v"))


def ensure_open_files(wanted: int, least: int) -> None:
    """nginx's master opens every listening socket itself and its worker accepts under the
    limit both inherit from us: raise our soft RLIMIT_NOFILE toward `wanted` within the hard
    limit (a soft limit of 1024 is common), or, if the hard one is below `least`, say which
    limit to raise."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ceiling = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if hard != resource.RLIM_INFINITY and hard < least:
        raise ServerError(f"nginx needs at least {least} open files for this plan's listening sockets, and the "
                          f"hard limit is {hard}: raise it (ulimit -Hn {wanted}, or LimitNOFILE= of the service)")
    if soft != resource.RLIM_INFINITY and soft < ceiling:
        resource.setrlimit(resource.RLIMIT_NOFILE, (ceiling, hard))


def _emerg(text: str) -> str | None:
    for line in text.splitlines():
        if "[emerg]" in line or "[alert]" in line or "[crit]" in line:
            return line.split("] ", 1)[-1].strip()
    return None


# The server -------------------------------------------------------------------------------


class OriginServer:
    """What nginx's server and Caddy's (`caddy`) share: a plan that fits the bed, a run
    directory, the process, stopped on exit, and its access log read back per load (where
    it ends now, and the requests logged after)."""

    def __init__(self, bed: Bed, plan: ServerPlan, rundir: Path, timeout: float, authority: Authority | None) -> None:
        if plan.ip_count > bed.layout.server_ips:
            raise ServerError(f"plan needs {plan.ip_count} server IPs, the topology has "
                              f"{bed.layout.server_ips}: Layout(prefix, server_ips={plan.ip_count})")
        self.bed, self.plan, self.rundir = bed, plan, Path(rundir)
        # start-up grows with the addresses bound (about 3 ms each, docs/architecture.md)
        self.authority, self.timeout = authority, timeout + STARTUP_S_PER_ADDRESS * plan.ip_count
        self.access_log = self.rundir / "access.log"
        self.process: ManagedProcess | None = None
        #: App site -> the `host:port` of its process (`apps.AppServers`), set before entering.
        self.upstreams: dict[str, str] = {}

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        """SIGTERM (nginx's master stops its workers, Caddy its servers), SIGKILL after a grace."""
        if self.process is not None:
            self.process.stop()

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    def check_alive(self) -> None:
        """A server that died (killed, crashed) ends the run: its loads would measure nothing."""
        if self.process is not None:
            self.process.check_alive("the sites are down")

    @staticmethod
    def parse(text: str) -> tuple[list[AccessRecord], int]:
        return parse_nginx_log(text)

    def log_offset(self) -> int:
        """Where the access log ends now; pass it to `connections_since` after a load."""
        try:
            return self.access_log.stat().st_size
        except FileNotFoundError:
            return 0

    def log_since(self, offset: int) -> str:
        """The access log's text after `offset` (what `connections_since` parses; the
        sites role serves it to a harness elsewhere)."""
        try:
            with open(self.access_log, "rb") as handle:
                handle.seek(offset)
                return handle.read().decode("utf-8", "replace")
        except FileNotFoundError:
            return ""

    def connections_since(self, offset: int, hosts: Collection[str] | None = None,
                          addresses: Collection[str] | None = None) -> ServerLog:
        """Requests logged after `offset` (complete lines only), for these hosts/addresses."""
        records, malformed = self.parse(self.log_since(offset))
        return summarize(records, hosts, addresses, malformed)


class NginxServer(OriginServer):
    """Context manager: nginx serving `plan` in the bed's server namespace; stopped on exit.

        with NginxServer(bed, plan, bed.state_dir / "nginx") as server:
            offset = server.log_offset()
            ...  # one page load
            log = server.connections_since(offset, hosts=site.origins)
    """

    def __init__(self, bed: Bed, plan: ServerPlan, rundir: Path, nginx: str = NGINX,
                 timeout: float = 10.0, authority: Authority | None = None) -> None:
        super().__init__(bed, plan, rundir, timeout, authority)
        self.nginx = nginx
        self.conf_path = self.rundir / "nginx.conf"
        self.error_log = self.rundir / "error.log"
        self.pid_path = self.rundir / "nginx.pid"

    def argv(self, *extra: str) -> list[str]:
        base = [self.nginx, "-p", str(self.rundir), "-c", str(self.conf_path), "-e", "stderr", *extra]
        return self.bed.exec_argv(self.bed.layout.server, base)

    def __enter__(self) -> NginxServer:
        self.plan = with_certificate(self.plan, self.authority)
        check_readable(self.plan)
        self.rundir.mkdir(parents=True, exist_ok=True)
        self.pid_path.unlink(missing_ok=True)
        ensure_open_files(*nginxconf.open_files(self.plan))
        check_echo_module(self.plan)
        self.conf_path.write_text(nginxconf.render(self.plan, self.rundir, upstreams=self.upstreams))
        test = self.bed.run(self.argv("-t", "-q"), check=False)
        if test.returncode != 0:
            why = _emerg(test.stderr) or (test.stderr.strip().splitlines() or ["exit status"])[-1]
            raise ServerError(f"nginx config {self.conf_path}: {why}")
        # Its start-up errors go to stderr (`-e stderr`), later ones to its error log.
        self.process = ManagedProcess("nginx", self.argv(), self.rundir / "stderr.log", bed=self.bed,
                                      error=ServerError, reason=lambda text: _emerg(text + _read(self.error_log)),
                                      grace=5.0)
        self.process.start(self._ready, self.timeout)
        return self

    def _ready(self) -> bool:
        """nginx writes its pid file after it has bound every listening socket."""
        assert self.process is not None
        try:
            if int(self.pid_path.read_text().strip()) != self.process.pid:
                return False
        except (OSError, ValueError):
            return False
        why = _emerg(_read(self.error_log))
        if why:
            raise ServerError(f"nginx: {why}")
        return True


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""

