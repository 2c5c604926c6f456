"""The user's own server processes of a plan's app sites (`core.sites.app`), run in the
lab's server namespace behind nginx and Caddy, and asked between loads whether they are
still well.

Each app runs as `nobody` (uid 65534, as nginx's workers and Chromium do here): a program
the user brings should not run as root, and `nobody` needs no account created or removed;
it can read what others may read (the spec's directory must be readable and searchable by
others) and write nothing of the user's. It runs in the spec's directory, listens on a
port free in the server namespace (`{port}`, 127.0.0.1), and is a session of its own: it
is stopped by its process group, so the workers it forked go with it.

Health, the cheapest honest way: between loads the process must be alive and `ready`
must answer 2xx (one request on loopback, about a millisecond), and the page itself must
not have been a 5xx in the load just made (read from the servers' access log, which the
runner reads anyway). A load is kept only when the check after it passes, so no load after
the app's last good check counts. The watchdog sees an exit during a load at once.

An app given by `url` (the compose lab's sites role: a compose service) is not started
or stopped here (`AppAt`): its name is resolved once when the sites start, so nginx and
Caddy proxy to one address for the whole run, and its health is the same `ready` and
page checks, asked from where the terminators reach it.
"""

from __future__ import annotations

import ctypes
import http.client
import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from pagebench.core.errors import PagebenchError
from pagebench.core.servers.plan import ServerPlan
from pagebench.core.sites.model import Site
from pagebench.system.commands import Bed
from pagebench.system.process import ManagedProcess

NOBODY = 65534
SETPRIV = shutil.which("setpriv") or "/usr/bin/setpriv"
LOOPBACK = "127.0.0.1"
#: How many of the app's last log lines an error quotes.
LAST_LINES = 3
#: How long one health request may take between loads.
HEALTH_TIMEOUT_S = 5.0
CLONE_NEWNET = 0x40000000
NETNS_DIR = Path("/run/netns")

T = TypeVar("T")


class AppError(PagebenchError, RuntimeError):
    """The user's app failed: one line naming it, what happened and its last log lines."""


def last_lines(text: str, count: int = LAST_LINES) -> str | None:
    """The log's last `count` non-empty lines as one line (None: it wrote nothing)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return " | ".join(lines[-count:]) if lines else None


def in_namespace(ns: str, call: Callable[[], T]) -> T:
    """`call()` in a thread that has entered network namespace `ns` (sockets it opens live
    there): the harness asks a server on the namespace's loopback without a subprocess."""
    result: list[T] = []
    failure: list[BaseException] = []

    def enter() -> None:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            fd = os.open(NETNS_DIR / ns, os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {ns}: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
            result.append(call())
        except BaseException as error:  # noqa: BLE001 - handed to the caller's thread
            failure.append(error)

    thread = threading.Thread(target=enter, name=f"pagebench-netns-{ns}", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]


def free_port(ns: str) -> int:
    """A TCP port free on the namespace's loopback now (the kernel's choice)."""
    def bind() -> int:
        with socket.socket() as sock:
            sock.bind((LOOPBACK, 0))
            return int(sock.getsockname()[1])
    return in_namespace(ns, bind)


def status_at(address: str, port: int, path: str, host: str, timeout: float = HEALTH_TIMEOUT_S) -> int | str:
    """The status a GET of `path` (Host: `host`) gets from the app at `address`, or why
    there was none."""
    connection = http.client.HTTPConnection(address, port, timeout=timeout)
    try:
        connection.request("GET", path, headers={"Host": host})
        response = connection.getresponse()
        response.read()
        return response.status
    except (OSError, http.client.HTTPException) as error:
        return f"no answer ({error or type(error).__name__})"
    finally:
        connection.close()


def status_of(ns: str, port: int, path: str, host: str, timeout: float = HEALTH_TIMEOUT_S) -> int | str:
    """`status_at` the app on the loopback of namespace `ns`."""
    return in_namespace(ns, lambda: status_at(LOOPBACK, port, path, host, timeout))


def _ok(status: int | str) -> bool:
    return isinstance(status, int) and 200 <= status < 300


def resolve(host: str, port: int) -> str:
    """`host` as one address, IPv4 first (the lab's server side always has it): resolved
    once, so every terminator proxies to the same app for the whole run."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise AppError(f"cannot resolve {host} ({error.strerror})") from None
    found.sort(key=lambda entry: entry[0] != socket.AF_INET)
    return str(found[0][4][0])


class AppServer:
    """One app site's process, started by `start` and stopped by `stop` (also by the bed)."""

    def __init__(self, bed: Bed, site: Site, rundir: Path) -> None:
        assert site.app is not None
        self.bed, self.site, self.app = bed, site, site.app
        self.rundir = Path(rundir)
        self.name = f"app {site.name}"
        self.port = 0
        self.process: ManagedProcess | None = None

    @property
    def address(self) -> str:
        """Where nginx and Caddy reach it: `127.0.0.1:port`."""
        return f"{LOOPBACK}:{self.port}"

    def start(self) -> None:
        """Start it and wait until `ready` answers 2xx; a one-line AppError otherwise."""
        ns = self.bed.layout.server
        self.port = free_port(ns)
        argv = self.app.argv(self.port)
        home = self.rundir / f"{self.site.name}-home"
        home.mkdir(parents=True, exist_ok=True)
        os.chown(home, NOBODY, NOBODY)
        env = {**os.environ, "HOME": str(home)}
        self._check_program(argv[0], env.get("PATH", os.defpath))
        command = [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--", *argv]
        self.process = ManagedProcess(self.name, self.bed.exec_argv(ns, command), self.rundir / f"{self.site.name}.log",
                                      bed=self.bed, env=env, cwd=self.site.root, error=AppError, reason=last_lines,
                                      grace=5.0, group=True)
        process = self.process
        deadline = time.monotonic() + self.app.ready_timeout_s

        def ready() -> bool:
            status = status_of(ns, self.port, self.app.ready, self.site.origins[0], timeout=1.0)
            if _ok(status):
                return True
            if time.monotonic() > deadline:
                raise process.fail(f"{self.name}: {self.app.ready} did not answer 2xx within "
                                   f"{self.app.ready_timeout_s:g} s (last: {status})")
            return False

        process.start(ready, self.app.ready_timeout_s + HEALTH_TIMEOUT_S)

    def _check_program(self, program: str, path: str) -> None:
        """The command's program is there (`which`, or a path from the spec's directory)."""
        found = (shutil.which(program, path=path) if "/" not in program
                 else (program if os.access(self.site.root / program, os.X_OK) else None))
        if found is None:
            where = ("on PATH (name it by its path, e.g. .venv/bin/gunicorn)" if "/" not in program
                     else f"in {self.site.root}")
            raise AppError(f"{self.name}: command: {program}: not found {where}")

    def check_alive(self) -> None:
        """Raise once its process has exited."""
        if self.process is not None:
            self.process.check_alive("the app is down")

    def check_health(self, page_statuses: Iterable[int] = ()) -> None:
        """Alive, the page not answered 5xx (`page_statuses`, from the load just made), and
        `ready` answering 2xx; else a one-line AppError with its last log lines."""
        assert self.process is not None
        self.check_alive()
        failed = sorted({s for s in page_statuses if s >= 500})
        if failed:
            raise self.process.fail(f"{self.name} answered {failed[0]} for the page {self.site.entry}")
        status = status_of(self.bed.layout.server, self.port, self.app.ready, self.site.origins[0])
        if not _ok(status):
            raise self.process.fail(f"{self.name} stopped answering {self.app.ready} with 2xx ({status})")

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()


class AppAt:
    """An app site given by `url`: someone else's process (a compose service), reached
    from here. `start` resolves its name and waits for `ready`; `stop` leaves it be."""

    #: How often `start` asks `ready` while the app comes up.
    POLL_S = 0.2

    def __init__(self, site: Site, lab_addresses: Collection[str]) -> None:
        assert site.app is not None and site.app.url is not None
        self.site, self.app = site, site.app
        self.name = f"app {site.name}"
        self.host, self.port = site.app.host_port
        self.ip = ""
        self.lab_addresses = frozenset(lab_addresses)

    @property
    def address(self) -> str:
        """Where nginx and Caddy reach it: `ip:port` (`[ip6]:port`)."""
        return f"[{self.ip}]:{self.port}" if ":" in self.ip else f"{self.ip}:{self.port}"

    def _where(self) -> str:
        return f"{self.app.url}{self.app.ready}"

    def _theirs(self) -> str:
        return f"(the app runs on its own: see its log, e.g. `docker compose logs {self.host}`)"

    def start(self) -> None:
        """Resolve it (once) and wait until `ready` answers 2xx; a one-line AppError otherwise."""
        try:
            self.ip = resolve(self.host, self.port)
        except AppError as error:
            raise AppError(f"{self.name}: url {self.app.url}: {error}: is its service up, on the lab's "
                           "server-side network?") from None
        if self.ip in self.lab_addresses:
            raise AppError(f"{self.name}: url {self.app.url}: {self.host} is {self.ip}, one of the lab's own "
                           "origin addresses: give the app an address outside them (docker-compose.yml)")
        deadline = time.monotonic() + self.app.ready_timeout_s
        while not _ok(status := status_at(self.ip, self.port, self.app.ready, self.site.origins[0], timeout=1.0)):
            if time.monotonic() > deadline:
                raise AppError(f"{self.name}: {self._where()} did not answer 2xx within "
                               f"{self.app.ready_timeout_s:g} s (last: {status}) {self._theirs()}")
            time.sleep(self.POLL_S)

    def check_alive(self) -> None:
        """Not pagebench's process: its health is `check_health`'s after each load."""

    def check_health(self, page_statuses: Iterable[int] = ()) -> None:
        """The page not answered 5xx in the load just made, and `ready` answering 2xx."""
        failed = sorted({s for s in page_statuses if s >= 500})
        if failed:
            raise AppError(f"{self.name} answered {failed[0]} for the page {self.site.entry} {self._theirs()}")
        status = status_at(self.ip, self.port, self.app.ready, self.site.origins[0])
        if not _ok(status):
            raise AppError(f"{self.name} stopped answering {self._where()} with 2xx ({status}) {self._theirs()}")

    def stop(self) -> None:
        """Not pagebench's to stop."""


class AppServers:
    """Every app site of a plan: started together (before the servers that front them),
    stopped together."""

    def __init__(self, bed: Bed, plan: ServerPlan, rundir: Path) -> None:
        lab = {address for b in plan.bindings for address in (b.ip, b.ip6)}
        self.apps: dict[str, AppServer | AppAt] = {
            site.name: AppServer(bed, site, rundir) if site.app.command is not None else AppAt(site, lab)
            for site in plan.sites if site.app is not None}

    def start(self) -> None:
        try:
            for app in self.apps.values():
                app.start()
        except BaseException:
            self.stop()
            raise

    @property
    def upstreams(self) -> dict[str, str]:
        """Site name -> the `host:port` its terminators proxy to."""
        return {name: app.address for name, app in self.apps.items()}

    def check_alive(self) -> None:
        for app in self.apps.values():
            app.check_alive()

    def check(self, site: str, page_statuses: Sequence[int]) -> None:
        """After a load of `site`: its app's health (no-op for other kinds of site)."""
        if site in self.apps:
            self.apps[site].check_health(page_statuses)

    def stop(self) -> None:
        for app in self.apps.values():
            app.stop()
