"""One measuring command per machine: `run`, `shell` and `link check` hold a machine-wide
lock for their whole life, because two measurements on one machine share its cores and
each silently skews the other's timings. Read-only commands (`report`, `compare`,
`export`) never take it.

The lock is `flock` on one file (`$PAGEBENCH_LOCK`, else beside the run state directory),
so the kernel releases it when its holder dies, however it dies: a killed run never
blocks the next. The holder writes who it is into the file (pid, command, run id, since
when), for the one-line message a second command gets.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pagebench.lab.netns import STATE_ROOT
from pagebench.system.commands import LabError

LOCK_PATH = Path(os.environ.get("PAGEBENCH_LOCK") or STATE_ROOT.parent / "pagebench.lock")
POLL_S = 0.5


@dataclass(frozen=True)
class Holder:
    """Who holds the machine, as it wrote itself into the lock file."""

    pid: int
    command: str
    since: float
    run_id: str | None = None

    def describe(self) -> str:
        when = datetime.fromtimestamp(self.since, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        run = f", run {self.run_id}" if self.run_id else ""
        return f"`pagebench {self.command}` (pid {self.pid}{run}, since {when})"


class MachineBusy(LabError):
    """Another measuring command holds the machine (one line naming it)."""


def read_holder(path: Path = LOCK_PATH) -> Holder | None:
    """The holder's record, or None when there is none (or it is being rewritten)."""
    try:
        data = json.loads(path.read_text())
        return Holder(int(data["pid"]), str(data["command"]), float(data["since"]), data.get("run_id"))
    except (OSError, ValueError, KeyError, TypeError):
        return None


class MachineLock:
    """Context manager: the machine for one measuring command.

        with MachineLock("run", wait=False) as lock:
            lock.note_run(run_id)   # once the run has an id
    """

    def __init__(self, command: str, wait: bool = False, waiting: Callable[[Holder | None], None] = lambda _: None,
                 path: Path = LOCK_PATH) -> None:
        self.command, self.wait, self.waiting, self.path = command, wait, waiting, Path(path)
        self.fd: int | None = None
        self.since = 0.0

    def __enter__(self) -> MachineLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    holder = read_holder(self.path)
                    if not self.wait:
                        who = holder.describe() if holder else "another pagebench command"
                        raise MachineBusy(f"this machine is measuring: {who} holds {self.path}; one measurement "
                                          f"at a time keeps timings honest (wait with --wait)") from None
                    self.waiting(holder)
                    time.sleep(POLL_S)
        except BaseException:
            os.close(fd)
            raise
        self.fd, self.since = fd, time.time()
        self._write(None)
        return self

    def note_run(self, run_id: str) -> None:
        """Name the run this command measures in the lock's record."""
        self._write(run_id)

    def _write(self, run_id: str | None) -> None:
        assert self.fd is not None
        record = json.dumps({"pid": os.getpid(), "command": self.command, "since": self.since, "run_id": run_id})
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, record.encode(), 0)

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.ftruncate(self.fd, 0)  # no stale record for the next reader
            os.close(self.fd)  # closing releases the lock
            self.fd = None
