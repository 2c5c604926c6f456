"""A child process started, awaited, checked, stopped and reported on by one class.

nginx, Caddy, the edge proxy, mitmdump, the delay program and the link check's probe
server are all run the same way: output to a log file, started in a session of their
own (a Ctrl-C in the terminal reaches us, and we stop them), ready when a probe the
caller gives says so, stopped with SIGTERM and a grace period, then SIGKILL. Every error
says which program and ends with the reason from its log, since the log itself is
usually gone with the lab's state directory by the time anyone reads the error.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pagebench.system.commands import Bed, LabError

POLL_S = 0.02


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
    """Start a child in a session of its own: a Ctrl-C in the terminal reaches only us,
    and we stop it (a bed's `spawn` comes here, after deciding where the child runs)."""
    return subprocess.Popen(list(argv), text=True, start_new_session=True, **popen)  # type: ignore[call-overload]


class ManagedProcess:
    """One long-lived child, its stdout and stderr in `log`.

        nginx = ManagedProcess("nginx", argv, rundir / "stderr.log", bed=bed, error=ServerError)
        nginx.start(ready=lambda: pid_file.exists(), timeout=10)
        ...
        nginx.check_alive("the sites are down")  # raises once it has died
        nginx.stop()

    Through a `bed`, the bed decides where it runs and stops it on close if no one did.
    Errors are the caller's own class (`error`), one line: what happened, then `reason`
    (the program's own words found in its log text, e.g. nginx's [emerg] line) or else
    the log's last line. With `group`, stopping it signals its whole process group (the
    session it was started in): a server that forks workers (gunicorn) leaves none behind,
    also when the leader died first.
    """

    def __init__(self, name: str, argv: Sequence[str], log: Path, *, bed: Bed | None = None,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None,
                 error: Callable[[str], Exception] = LabError,
                 reason: Callable[[str], str | None] | None = None, grace: float = 3.0,
                 group: bool = False) -> None:
        self.name, self.argv, self.log = name, list(argv), Path(log)
        self.bed, self.env, self.cwd = bed, env, cwd
        self.error, self.reason, self.grace, self.group = error, reason, grace, group
        self.popen: subprocess.Popen[str] | None = None
        self._stopped = False
        self._group_gone = False

    def start(self, ready: Callable[[], bool] | None = None, timeout: float = 10.0) -> None:
        """Start it and poll `ready` until it is true (none: started is enough). It is
        stopped again whatever goes wrong, `ready` raising included."""
        with open(self.log, "w") as log:
            launch = spawn if self.bed is None else self.bed.spawn
            self.popen = launch(self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=self.env, cwd=self.cwd)
        if self.bed is not None:
            self.bed.processes.append(self)
        try:
            deadline = time.monotonic() + timeout
            while ready is not None:
                if self.popen.poll() is not None:
                    raise self.fail(f"{self.name} exited with status {self.popen.returncode}")
                if ready():
                    return
                if time.monotonic() > deadline:
                    raise self.fail(f"{self.name} did not start within {timeout:g} s")
                time.sleep(POLL_S)
        except BaseException:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        assert self.popen is not None, "not started"
        return self.popen.pid

    @property
    def returncode(self) -> int | None:
        return None if self.popen is None else self.popen.poll()

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def check_alive(self, consequence: str = "") -> None:
        """Raise if it died after it started (stopping it ourselves is no death);
        `consequence` says what that means for the run, e.g. "the link is down"."""
        if self.popen is None or self._stopped or self.popen.poll() is None:
            return
        head = f"{self.name} exited with status {self.popen.returncode}"
        raise self.fail(f"{head}: {consequence}" if consequence else head)

    def stop(self, sig: int = signal.SIGTERM, grace: float | None = None) -> bool:
        """Send `sig` (SIGTERM: every program here shuts down cleanly on it), wait
        `grace` seconds, then SIGKILL. True when it ended by itself. Safe to repeat."""
        self._stopped = True
        clean = True
        if self.popen is not None and self.popen.poll() is None:
            self._signal(sig)
            try:
                self.popen.wait(self.grace if grace is None else grace)
            except subprocess.TimeoutExpired:
                self._signal(signal.SIGKILL)
                self.popen.wait()
                clean = False
        if self.group and self.popen is not None and not self._group_gone:
            self._signal(signal.SIGKILL)  # what the leader left behind (its group outlives it)
            self._group_gone = True
        if self.bed is not None and self in self.bed.processes:
            self.bed.processes.remove(self)
        return clean

    def _signal(self, sig: int) -> None:
        assert self.popen is not None
        if not self.group:
            self.popen.send_signal(sig)
            return
        try:
            os.killpg(self.popen.pid, sig)  # its own session (`spawn`): its pid is the group's id
        except ProcessLookupError:
            pass

    def output(self) -> str:
        """What it has written so far."""
        try:
            return self.log.read_text(errors="replace")
        except OSError:
            return ""

    def logged(self, line: str) -> bool:
        """Has it written this line? (A probe for programs that say "ready".)"""
        return line in (text.strip() for text in self.output().splitlines())

    def fail(self, head: str) -> Exception:
        """The caller's error: `head`, then the reason from the log, else its last line."""
        text = self.output()
        found = self.reason(text) if self.reason is not None else None
        if found:
            return self.error(f"{head}: {found}")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return self.error(f"{head}; last output: {lines[-1]}" if lines else f"{head}; no output")
