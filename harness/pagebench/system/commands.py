"""Commands on this machine, and the `Bed` interface a lab's commands run through.

A bed is where a lab's commands run. Natively it is `lab.netns.NamespaceBed` (the three
namespaces built here); in a split lab it is `lab.split.local.LocalBed` (a role's own
network namespace). Code above this layer renders commands for a named namespace and
lets the bed decide how to run them, so the same link and servers work in both.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pagebench.core.errors import PagebenchError
from pagebench.core.layout import Command, Layout
from pagebench.system.places import run_prefix

if TYPE_CHECKING:
    from pagebench.system.process import ManagedProcess


class LabError(PagebenchError, RuntimeError):
    """A command that builds or drives the lab failed (one line: what and why)."""


class Bed(Protocol):
    """Where a lab's commands and processes run (see the module docstring)."""

    layout: Layout
    state_dir: Path
    #: started here and not stopped yet (`ManagedProcess` keeps this); stopped on close
    processes: list[ManagedProcess]

    def run(self, cmd: Command, input: str | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]: ...

    def exec_argv(self, ns: str, argv: Sequence[str]) -> list[str]: ...

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
        """How a child starts in this bed (`ManagedProcess` calls it)."""
        ...


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


def probe_in_throwaway_namespace(*commands: Sequence[str]) -> bool:
    """Do these commands succeed in a fresh namespace? (What the kernel offers, without
    touching anything real; the namespace is removed whatever happens.)"""
    ns = f"{run_prefix()}-probe"
    if run(("ip", "netns", "add", ns), check=False).returncode != 0:
        return False
    try:
        return all(run(("ip", "netns", "exec", ns, *cmd), check=False).returncode == 0 for cmd in commands)
    finally:
        run(("ip", "netns", "del", ns), check=False)
