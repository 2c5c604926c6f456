"""nginx for a `ServerPlan`, run as our own process in the server namespace, and its
access log read back as per-load request and connection counts.

I/O lives in `NginxServer`, `prepare` and `nginx_version`; `parse_access_log` and
`summarize` are pure. The "server" connection count of a load is the number of
distinct (`$server_addr`, `$connection`) pairs among the requests it logged.
"""

from __future__ import annotations

import re
import shutil
import stat
import subprocess
import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from . import serverconf
from .hostbed import HostBed
from .serverconf import LOG_FIELDS, ServerPlan
from .sites import Site
from .testbed import Testbed, run, stop_process
from .tls import Authority

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


class ServerError(RuntimeError):
    """nginx could not be configured or started (one line: what and why)."""


# The access log (pure) ------------------------------------------------------------------


@dataclass(frozen=True)
class AccessRecord:
    end: float  # $msec: when the request finished, epoch seconds
    request_time: float  # seconds from the first request byte to the last response byte
    server_addr: str
    connection: int  # nginx's connection serial number
    connection_requests: int  # requests so far on that connection (h2: streams)
    protocol: str  # $server_protocol: HTTP/1.1, HTTP/2.0
    tls: str  # $ssl_protocol: TLSv1.2, TLSv1.3
    status: int
    body_bytes: int
    host: str
    uri: str
    method: str
    bytes_sent: int  # headers + body


@dataclass(frozen=True)
class ServerLog:
    records: tuple[AccessRecord, ...]
    malformed: int = 0

    @property
    def requests(self) -> int:
        return len(self.records)

    @property
    def connections(self) -> int:
        """Distinct (server address, $connection) pairs: the server's connection count."""
        return len({(r.server_addr, r.connection) for r in self.records})

    def connections_by_host(self) -> dict[str, int]:
        pairs: dict[str, set[tuple[str, int]]] = {}
        for r in self.records:
            pairs.setdefault(r.host, set()).add((r.server_addr, r.connection))
        return {host: len(seen) for host, seen in sorted(pairs.items())}

    def statuses_for(self, path: str, host: str | None = None) -> tuple[int, ...]:
        """Statuses of the requests for `path` (query string ignored), e.g. (304,) for a
        revalidated page."""
        return tuple(r.status for r in self.records
                     if r.uri.split("?", 1)[0] == path and host in (None, r.host))


def _record(line: str) -> AccessRecord | None:
    parts = line.split("\t")
    if len(parts) != len(LOG_FIELDS):
        return None
    f = dict(zip(LOG_FIELDS, parts))
    try:
        return AccessRecord(
            end=float(f["msec"]), request_time=float(f["request_time"]), server_addr=f["server_addr"],
            connection=int(f["connection"]), connection_requests=int(f["connection_requests"]),
            protocol=f["server_protocol"], tls=f["ssl_protocol"], status=int(f["status"]),
            body_bytes=int(f["body_bytes_sent"]), host=f["host"], uri=f["request_uri"],
            method=f["request_method"], bytes_sent=int(f["bytes_sent"]),
        )
    except ValueError:
        return None


def parse_access_log(text: str) -> tuple[list[AccessRecord], int]:
    """Records from complete lines (a trailing partial line is left for next time),
    and how many lines did not parse."""
    complete = text[: text.rfind("\n") + 1]
    records, malformed = [], 0
    for line in complete.splitlines():
        if not line:
            continue
        record = _record(line)
        if record is None:
            malformed += 1
        else:
            records.append(record)
    return records, malformed


def summarize(records: Iterable[AccessRecord], hosts: Collection[str] | None = None,
              addresses: Collection[str] | None = None, malformed: int = 0) -> ServerLog:
    """Keep the records for these hosts and/or server addresses (None: all)."""
    kept = tuple(r for r in records
                 if (hosts is None or r.host in hosts) and (addresses is None or r.server_addr in addresses))
    return ServerLog(kept, malformed)


# Preparation ------------------------------------------------------------------------------


def prepare(sites: Sequence[Site], modes: Iterable[str], tls_versions: Iterable[str],
            authority: Authority | None = None) -> ServerPlan:
    """The plan with its certificate: one leaf (cached) covering every origin."""
    return with_certificate(serverconf.plan(sites, modes, tls_versions), authority)


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
        for host in site.origins:
            root = site.origin_root(host)
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


def nginx_version(nginx: str = NGINX) -> str:
    """e.g. '1.22.1'."""
    result = run((nginx, "-v"))
    match = re.search(r"nginx/(\S+)", result.stderr + result.stdout)
    if not match:
        raise ServerError(f"`{nginx} -v`: no version in {(result.stderr + result.stdout).strip()!r}")
    return match.group(1)


def _emerg(text: str) -> str | None:
    for line in text.splitlines():
        if "[emerg]" in line or "[alert]" in line or "[crit]" in line:
            return line.split("] ", 1)[-1].strip()
    return None


# The server -------------------------------------------------------------------------------


class AccessLogReader:
    """An origin server's access log read back per load (nginx's here; Caddy's in `caddy`):
    where it ends now, and the requests logged after that."""

    access_log: Path

    @staticmethod
    def parse(text: str) -> tuple[list[AccessRecord], int]:
        return parse_access_log(text)

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


class NginxServer(AccessLogReader):
    """Context manager: nginx serving `plan` in the testbed's server namespace; stopped on exit.

        with NginxServer(bed, plan, bed.state_dir / "nginx") as server:
            offset = server.log_offset()
            ...  # one page load
            log = server.connections_since(offset, hosts=site.origins)
    """

    def __init__(self, testbed: Testbed | HostBed, plan: ServerPlan, rundir: Path, nginx: str = NGINX,
                 timeout: float = 10.0, authority: Authority | None = None) -> None:
        if plan.ip_count > testbed.topology.server_ips:
            raise ServerError(f"plan needs {plan.ip_count} server IPs, the topology has "
                              f"{testbed.topology.server_ips}: Topology(prefix, server_ips={plan.ip_count})")
        self.testbed, self.plan, self.rundir = testbed, plan, Path(rundir)
        self.authority = authority
        self.nginx, self.timeout = nginx, timeout
        self.conf_path = self.rundir / "nginx.conf"
        self.access_log = self.rundir / "access.log"
        self.error_log = self.rundir / "error.log"
        self.pid_path = self.rundir / "nginx.pid"
        self.process: subprocess.Popen[str] | None = None

    def argv(self, *extra: str) -> list[str]:
        base = [self.nginx, "-p", str(self.rundir), "-c", str(self.conf_path), "-e", "stderr", *extra]
        return self.testbed.exec_argv(self.testbed.topology.server, base)

    def __enter__(self) -> NginxServer:
        self.plan = with_certificate(self.plan, self.authority)
        check_readable(self.plan)
        self.rundir.mkdir(parents=True, exist_ok=True)
        self.pid_path.unlink(missing_ok=True)
        self.conf_path.write_text(self.plan.conf(self.rundir))
        test = self.testbed.run(self.argv("-t", "-q"), check=False)
        if test.returncode != 0:
            why = _emerg(test.stderr) or (test.stderr.strip().splitlines() or ["exit status"])[-1]
            raise ServerError(f"nginx config {self.conf_path}: {why}")
        try:
            with open(self.rundir / "stderr.log", "w") as stderr:
                self.process = self.testbed.spawn(self.argv(), stdout=subprocess.DEVNULL, stderr=stderr)
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_ready(self) -> None:
        """nginx writes its pid file after it has bound every listening socket."""
        assert self.process is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"nginx exited with status {self.process.returncode}: {self._why()}")
            if self._pid_file() == self.process.pid:
                why = _emerg(_read(self.error_log))
                if why:
                    raise ServerError(f"nginx: {why}")
                return
            time.sleep(0.02)
        raise ServerError(f"nginx did not start within {self.timeout:g} s: {self._why()}")

    def _pid_file(self) -> int | None:
        try:
            return int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return None

    def _why(self) -> str:
        text = _read(self.rundir / "stderr.log") + _read(self.error_log)
        return _emerg(text) or (text.strip().splitlines() or ["no message"])[-1]

    def stop(self) -> None:
        """Fast shutdown (SIGTERM: the master stops its workers), SIGKILL after a grace."""
        if self.process is not None:
            stop_process(self.process, grace=5.0)
            self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""

