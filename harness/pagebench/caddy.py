"""Caddy serving a plan's h3 bindings (HTTP/3 over QUIC), run as our own process in the
server namespace, and its JSON access log read back as per-load request and connection
counts (`servers.ServerLog`, as for nginx).

I/O lives in `CaddyServer` and `caddy_version`; `parse_access_log` is pure. Caddy has no
connection serial: a QUIC connection is identified by the client's (address, UDP port)
at one server address, which `AccessRecord.connection` encodes as one integer.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

from . import REPO_ROOT, caddyconf
from .serverconf import SERVER_ADDRESSES, SERVER_ADDRESSES6, ServerPlan
from .servers import AccessLogReader, AccessRecord, ServerError, with_certificate
from .testbed import Testbed, run, stop_process
from .tls import Authority

#: Built from a pinned release by `harness/bootstrap install` (see CADDY_VERSION there):
#: Debian 12's Caddy 2.6.2 has quic-go 0.29, which drops the second Initial packet of
#: Chromium's two-packet ClientHello (quic-go #3760), so most cold h3 handshakes took 3 RTT.
CADDY = os.environ.get("PAGEBENCH_CADDY", str(REPO_ROOT / ".venv" / "bin" / "caddy"))
TLS_NAMES = {0x0303: "TLSv1.2", 0x0304: "TLSv1.3"}
QUIC_TLS = "TLSv1.3"


# The access log (pure) ------------------------------------------------------------------


def connection_key(remote_ip: str, remote_port: int) -> int:
    """One integer per client (address, port): with the server address, a QUIC connection
    (a client that migrates its port mid-connection would count twice)."""
    return int(ipaddress.ip_address(remote_ip)) << 16 | remote_port


def _server_addr(logger: str, remote_ip: str) -> str | None:
    """The binding's address from its logger name, in the client's address family."""
    prefix = f"{caddyconf.ACCESS_LOGGER}.{caddyconf.LOGGER_PREFIX}"
    suffix = logger.removeprefix(prefix)
    if suffix == logger or not suffix.isdigit() or int(suffix) >= len(SERVER_ADDRESSES):
        return None
    return (SERVER_ADDRESSES6 if ":" in remote_ip else SERVER_ADDRESSES)[int(suffix)]


def _host(authority: str) -> str:
    """Like nginx's $host: lower case, without the port."""
    host = authority.lower()
    if host.startswith("["):
        return host.split("]", 1)[0] + "]"
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _record(entry: dict[str, Any], served: dict[int, int]) -> AccessRecord | None:
    request = entry["request"]
    server_addr = _server_addr(entry["logger"], request["remote_ip"])
    if server_addr is None:
        return None
    protocol, size = request["proto"], int(entry["size"])
    tls = TLS_NAMES.get(int((request.get("tls") or {}).get("version") or 0), "")
    if not tls and protocol.startswith("HTTP/3"):
        tls = QUIC_TLS  # Caddy 2.6 logged version 0 for HTTP/3 (2.11: 0x0304); QUIC v1 is always TLS 1.3
    connection = connection_key(request["remote_ip"], int(request["remote_port"]))
    record = AccessRecord(
        end=float(entry["ts"]), request_time=float(entry["duration"]), server_addr=server_addr,
        connection=connection, connection_requests=served.get(connection, 0) + 1, protocol=protocol, tls=tls,
        status=int(entry["status"]), body_bytes=size, host=_host(request["host"]), uri=request["uri"],
        method=request["method"], bytes_sent=size,  # Caddy logs the body size only
    )
    served[connection] = record.connection_requests
    return record


def parse_access_log(text: str) -> tuple[list[AccessRecord], int]:
    """Records from complete JSON lines (a trailing partial line is left for next time),
    and how many lines did not parse. `connection_requests` counts within `text`;
    `bytes_sent` is the body size (Caddy does not log header bytes)."""
    complete = text[: text.rfind("\n") + 1]
    records, malformed, served = [], 0, {}
    for line in complete.splitlines():
        if not line.strip():
            continue
        try:
            record = _record(json.loads(line), served)
        except (ValueError, KeyError, TypeError, AttributeError):
            record = None
        if record is None:
            malformed += 1
        else:
            records.append(record)
    return records, malformed


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
    match = re.search(r"v?(\d+\.\d+\.\d+\S*)", result.stdout + result.stderr)
    if not match:
        raise ServerError(f"`{caddy} version`: no version in {(result.stdout + result.stderr).strip()!r}")
    return match.group(1)


class CaddyServer(AccessLogReader):
    """Context manager: Caddy serving the plan's h3 bindings in the testbed's server
    namespace; stopped on exit. The same interface as `servers.NginxServer` (and, like it,
    it needs only the bed's `topology`, `exec_argv` and `spawn`):

        with CaddyServer(bed, plan, bed.state_dir / "caddy") as server:
            offset = server.log_offset()
            ...  # one page load
            log = server.connections_since(offset, hosts=site.origins)
    """

    def __init__(self, testbed: Testbed, plan: ServerPlan, rundir: Path, caddy: str = CADDY,
                 timeout: float = 10.0, authority: Authority | None = None) -> None:
        if plan.ip_count > testbed.topology.server_ips:
            raise ServerError(f"plan needs {plan.ip_count} server IPs, the topology has "
                              f"{testbed.topology.server_ips}: Topology(prefix, server_ips={plan.ip_count})")
        self.testbed, self.plan, self.rundir = testbed, plan, Path(rundir)
        self.authority = authority
        self.caddy, self.timeout = caddy, timeout
        self.conf_path = self.rundir / "caddy.json"
        self.access_log = self.rundir / "access.log"
        self.stderr_path = self.rundir / "stderr.log"
        self.process: subprocess.Popen[str] | None = None

    def argv(self) -> list[str]:
        base = [self.caddy, "run", "--config", str(self.conf_path)]
        return self.testbed.exec_argv(self.testbed.topology.server, base)

    def environment(self) -> dict[str, str]:
        """Caddy writes its instance id and data under HOME/XDG dirs: keep them in the run dir."""
        home = str(self.rundir / "home")
        return {**os.environ, "HOME": home, "XDG_DATA_HOME": f"{home}/data",
                "XDG_CONFIG_HOME": f"{home}/config", "XDG_CACHE_HOME": f"{home}/cache"}

    def __enter__(self) -> CaddyServer:
        self.plan = with_certificate(self.plan, self.authority)
        self.rundir.mkdir(parents=True, exist_ok=True)
        (self.rundir / "home").mkdir(exist_ok=True)
        self.conf_path.write_text(caddyconf.render(self.plan, self.rundir))
        try:
            with open(self.stderr_path, "w") as stderr:
                self.process = self.testbed.spawn(self.argv(), stdout=stderr, stderr=subprocess.STDOUT,
                                                  env=self.environment())
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _wait_ready(self) -> None:
        """Caddy logs READY_MESSAGE after its apps started, i.e. every socket is bound."""
        assert self.process is not None
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            text = _read(self.stderr_path)
            if self.process.poll() is not None:
                why = startup_error(text) or f"exit status {self.process.returncode}"
                raise ServerError(f"caddy config {self.conf_path}: {why}")
            if ready(text):
                return
            time.sleep(0.02)
        why = startup_error(_read(self.stderr_path)) or "no ready message"
        raise ServerError(f"caddy config {self.conf_path}: not serving within {self.timeout:g} s: {why}")

    def stop(self) -> None:
        """SIGTERM (Caddy stops its servers), SIGKILL after a grace."""
        if self.process is not None:
            stop_process(self.process, grace=5.0)
            self.process = None

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @staticmethod
    def parse(text: str) -> tuple[list[AccessRecord], int]:
        return parse_access_log(text)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""
