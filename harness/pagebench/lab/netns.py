"""The native lab's bed: the client | router | server namespaces of one run, built
here and always torn down.

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
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.layout import NAMESPACE_PATTERN, Command, Layout
from pagebench.system.commands import LabError, run
from pagebench.system.owner import Owner
from pagebench.system.process import ManagedProcess, spawn
from pagebench.system.signals import signals_held

STATE_ROOT = Path(os.environ.get("PAGEBENCH_STATE_DIR", "/run/pagebench"))
NETNS_DIR = Path("/run/netns")


class NamespaceBed:
    """Context manager: namespaces up on enter; processes, namespaces and state gone on exit."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.state_dir = STATE_ROOT / layout.prefix
        self.processes: list[ManagedProcess] = []

    def __enter__(self) -> NamespaceBed:
        if os.geteuid() != 0:
            raise LabError("network namespaces need root (or CAP_NET_ADMIN): run with sudo")
        self.state_dir.mkdir(parents=True, exist_ok=False)
        owner = Owner.me()
        (self.state_dir / "owner.json").write_text(
            json.dumps({"pid": owner.pid, "start": owner.start, "namespaces": list(self.layout.namespaces)})
        )
        try:
            for cmd, stdin in self.layout.build_commands():
                run(cmd, input=stdin)
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

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
        """A child, its argv already wrapped in `ip netns exec` (`ManagedProcess` calls this)."""
        return spawn(argv, **popen)

    def close(self) -> None:
        """Stop our processes, then anything else left in our namespaces, then delete them.
        A signal meanwhile waits until all is gone (`signals_held`), then stops the command."""
        with signals_held():
            for process in list(self.processes):
                process.stop()
            remove_namespaces(self.layout.namespaces)
            shutil.rmtree(self.state_dir, ignore_errors=True)


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
