"""Commands and processes on this machine: the I/O primitives that `link`, `edge` and
`lab` share, and the `Bed` interface they run their commands through.

A bed is where a lab's commands run. Natively it is `lab.netns.NamespaceBed` (the three
namespaces built here); in a split lab it is `lab.split.local.LocalBed` (a role's own
network namespace). Code above this layer renders commands for a named namespace and
lets the bed decide how to run them, so the same link and servers work in both.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pagebench.core.layout import Command, Layout, new_prefix


class LabError(RuntimeError):
    """A command that builds or drives the lab failed (one line: what and why)."""


class Interrupted(BaseException):
    """SIGTERM/SIGHUP turned into an exception, so `with` blocks unwind and tear down."""


class Bed(Protocol):
    """Where a lab's commands and processes run (see the module docstring)."""

    layout: Layout
    state_dir: Path
    processes: list[subprocess.Popen[str]]

    def run(self, cmd: Command, input: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]: ...

    def exec_argv(self, ns: str, argv: Sequence[str]) -> list[str]: ...

    def spawn(self, argv: Sequence[str], **popen: object) -> subprocess.Popen[str]: ...


def run(cmd: Sequence[str], input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run one command; on failure raise a one-line LabError naming it."""
    try:
        result = subprocess.run(list(cmd), input=input, capture_output=True, text=True)
    except FileNotFoundError:
        raise LabError(f"{cmd[0]}: not installed (run `pagebench doctor`)") from None
    if check and result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        why = lines[-1] if lines else f"exit status {result.returncode}"
        raise LabError(f"`{' '.join(cmd)}` failed: {why}")
    return result


def stop_process(proc: subprocess.Popen[str], grace: float = 3.0) -> None:
    """SIGTERM, then SIGKILL after `grace` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


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


def probe_in_throwaway_namespace(*commands: Sequence[str]) -> bool:
    """Do these commands succeed in a fresh namespace? (What the kernel offers, without
    touching anything real; the namespace is removed whatever happens.)"""
    ns = f"{new_prefix()}-probe"
    if run(("ip", "netns", "add", ns), check=False).returncode != 0:
        return False
    try:
        return all(run(("ip", "netns", "exec", ns, *cmd), check=False).returncode == 0 for cmd in commands)
    finally:
        run(("ip", "netns", "del", ns), check=False)


def _start_time(pid: int) -> str | None:
    """Kernel start time of a process, to tell a live owner from a reused pid."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


@dataclass(frozen=True)
class Owner:
    """A process, told apart from a later one that reuses its pid by its kernel start time."""

    pid: int
    start: str | None

    @classmethod
    def me(cls) -> Owner:
        return cls(os.getpid(), _start_time(os.getpid()))

    def alive(self) -> bool:
        return self.start is not None and _start_time(self.pid) == self.start
