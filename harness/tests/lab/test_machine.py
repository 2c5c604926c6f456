"""One measuring command per machine, on a lock file of the test's own: a second refuses,
naming the holder, or waits; a holder killed with SIGKILL releases the machine. The
commands themselves on the machine's lock: `test_machine_e2e.py`."""

from __future__ import annotations

import os
import signal
import time

import pytest

from pagebench.lab.machine import MachineBusy, MachineLock, read_holder
from tests.lab.lockholder import holder


def test_a_second_command_refuses_naming_the_holder(tmp_path):
    path = tmp_path / "lock"
    proc = holder(path)
    try:
        with pytest.raises(MachineBusy) as error:
            MachineLock("shell", path=path).__enter__()
        message = str(error.value)
        assert f"`pagebench run` (pid {proc.pid}, run r-held, since " in message and "--wait" in message
        assert "\n" not in message
    finally:
        proc.kill()
        proc.wait()


def test_sigkill_of_the_holder_releases_the_machine(tmp_path):
    path = tmp_path / "lock"
    proc = holder(path)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with MachineLock("run", path=path) as lock:
        assert read_holder(path).pid == os.getpid() and lock.fd is not None
    assert read_holder(path) is None  # released: no stale record


def test_wait_starts_when_the_holder_ends_and_says_so_while_waiting(tmp_path):
    path = tmp_path / "lock"
    proc = holder(path, seconds=1.5)
    seen = []
    started = time.monotonic()
    with MachineLock("link check", wait=True, waiting=seen.append, path=path):
        waited = time.monotonic() - started
    proc.wait()
    assert waited >= 0.5 and seen and seen[0] is not None and seen[0].pid == proc.pid
