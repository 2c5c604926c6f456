"""Build and always tear down the client | router | server namespaces of one run.

Every run owns a state directory `/run/pagebench/<prefix>/` recording the owning
process, so `pagebench cleanup` can tell a dead run's leftovers from a live run's lab.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .topology import NAMESPACE_PATTERN, Command, Topology

STATE_ROOT = Path(os.environ.get("PAGEBENCH_STATE_DIR", "/run/pagebench"))
NETNS_DIR = Path("/run/netns")


class TestbedError(RuntimeError):
    """A command that builds or drives the testbed failed (one line: what and why)."""

    __test__ = False  # not a pytest test class


class Interrupted(BaseException):
    """SIGTERM/SIGHUP turned into an exception so `with Testbed(...)` unwinds and tears down."""


def run(cmd: Sequence[str], input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run one command; on failure raise a one-line TestbedError naming it."""
    try:
        result = subprocess.run(list(cmd), input=input, capture_output=True, text=True)
    except FileNotFoundError:
        raise TestbedError(f"{cmd[0]}: not installed (run `pagebench doctor`)") from None
    if check and result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        why = lines[-1] if lines else f"exit status {result.returncode}"
        raise TestbedError(f"`{' '.join(cmd)}` failed: {why}")
    return result


@contextmanager
def signals_raise() -> Iterator[None]:
    """Inside this block SIGTERM and SIGHUP raise `Interrupted` (SIGINT already raises)."""

    def handler(signum: int, _frame: object) -> None:
        raise Interrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _start_time(pid: int) -> str | None:
    """Kernel start time of a process, to tell a live owner from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass
class Owner:
    pid: int
    start: str | None

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), _start_time(os.getpid()))

    def alive(self) -> bool:
        return self.start is not None and _start_time(self.pid) == self.start


class Testbed:
    """Context manager: namespaces up on enter; processes, namespaces and state gone on exit."""

    __test__ = False  # not a pytest test class

    def __init__(self, topology: Topology) -> None:
        self.topology = topology
        self.state_dir = STATE_ROOT / topology.prefix
        self.processes: list[subprocess.Popen[str]] = []

    def __enter__(self) -> Testbed:
        if os.geteuid() != 0:
            raise TestbedError("network namespaces need root (or CAP_NET_ADMIN): run with sudo")
        self.state_dir.mkdir(parents=True, exist_ok=False)
        owner = Owner.me()
        (self.state_dir / "owner.json").write_text(
            json.dumps({"pid": owner.pid, "start": owner.start, "namespaces": list(self.topology.namespaces)})
        )
        try:
            for cmd in self.topology.build_commands():
                run(cmd)
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, cmd: Command, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(cmd, input=input, check=check)

    def exec_argv(self, ns: str, argv: Sequence[str]) -> list[str]:
        return ["ip", "netns", "exec", ns, *argv]

    def spawn(self, argv: Sequence[str], **popen: object) -> subprocess.Popen[str]:
        """Start a long-lived process (already wrapped in `ip netns exec`); stopped on close."""
        proc = subprocess.Popen(list(argv), text=True, start_new_session=True, **popen)  # type: ignore[call-overload]
        self.processes.append(proc)
        return proc

    def close(self) -> None:
        """Stop our processes, then anything else left in our namespaces, then delete them."""
        old = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        try:
            for proc in self.processes:
                stop_process(proc)
            self.processes.clear()
            remove_namespaces(self.topology.namespaces)
            shutil.rmtree(self.state_dir, ignore_errors=True)
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)


def stop_process(proc: subprocess.Popen[str], grace: float = 3.0) -> None:
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def namespace_pids(ns: str) -> list[int]:
    result = run(("ip", "netns", "pids", ns), check=False)
    return [int(pid) for pid in result.stdout.split()]


def kill_namespace_processes(ns: str, grace: float = 2.0) -> None:
    pids = namespace_pids(ns)
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while pids and time.monotonic() < deadline:
        time.sleep(0.05)
        pids = namespace_pids(ns)
    for pid in pids:
        _signal(pid, signal.SIGKILL)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def existing_namespaces() -> list[str]:
    try:
        return sorted(entry.name for entry in NETNS_DIR.iterdir())
    except FileNotFoundError:
        return []


def remove_namespaces(names: Sequence[str]) -> None:
    present = set(existing_namespaces())
    for ns in names:
        if ns in present:
            kill_namespace_processes(ns)
    for ns in names:
        if ns in present:
            run(("ip", "netns", "del", ns), check=False)


def probe_in_throwaway_namespace(*commands: Sequence[str]) -> bool:
    """Do these commands succeed in a fresh namespace? (What the kernel offers, without
    touching anything real; the namespace is removed whatever happens.)"""
    from .topology import new_prefix

    ns = f"{new_prefix()}-probe"
    if run(("ip", "netns", "add", ns), check=False).returncode != 0:
        return False
    try:
        return all(run(("ip", "netns", "exec", ns, *cmd), check=False).returncode == 0 for cmd in commands)
    finally:
        run(("ip", "netns", "del", ns), check=False)


@dataclass(frozen=True)
class Leftover:
    prefix: str
    namespaces: tuple[str, ...]
    owner_alive: bool


def find_leftovers() -> list[Leftover]:
    """pagebench's own namespaces and state directories, grouped by run prefix."""
    by_prefix: dict[str, list[str]] = {}
    for ns in existing_namespaces():
        match = NAMESPACE_PATTERN.match(ns)
        if match:
            by_prefix.setdefault(match.group(1), []).append(ns)
    if STATE_ROOT.is_dir():
        for entry in STATE_ROOT.iterdir():
            by_prefix.setdefault(entry.name, [])
    leftovers = []
    for prefix, namespaces in sorted(by_prefix.items()):
        alive = False
        owner_file = STATE_ROOT / prefix / "owner.json"
        try:
            data = json.loads(owner_file.read_text())
            alive = Owner(int(data["pid"]), data.get("start")).alive()
        except (OSError, ValueError, KeyError):
            alive = False
        leftovers.append(Leftover(prefix, tuple(namespaces), alive))
    return leftovers


def cleanup(include_live: bool = False, prefix: str | None = None) -> list[Leftover]:
    """Remove what dead runs left: their processes, namespaces (with their rules and
    qdiscs) and state. Live runs are kept unless `include_live`."""
    removed = []
    for leftover in find_leftovers():
        if prefix is not None and leftover.prefix != prefix:
            continue
        if leftover.owner_alive and not include_live:
            continue
        remove_namespaces(leftover.namespaces)
        shutil.rmtree(STATE_ROOT / leftover.prefix, ignore_errors=True)
        removed.append(leftover)
    return removed
