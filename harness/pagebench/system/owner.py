"""A process that owns something (a run, the machine lock), told apart from a later one
that reuses its pid."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


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
