"""`ManagedProcess` with real small children (Python one-liners): started and awaited,
failing in each way a program of the lab can, stopped, and every error naming the
program and ending with what its log says. No root needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pagebench.system.commands import LabError
from pagebench.system.process import ManagedProcess, spawn


def child(tmp_path: Path, code: str, name: str = "toy", **options: Any) -> ManagedProcess:
    return ManagedProcess(name, [sys.executable, "-c", code], tmp_path / f"{name}.log", **options)


def test_ready_in_time_then_stopped(tmp_path: Path):
    flag = tmp_path / "ready"
    toy = child(tmp_path, f"import pathlib, time; time.sleep(0.3); pathlib.Path({str(flag)!r}).touch(); "
                          "print('up', flush=True); time.sleep(60)")
    toy.start(flag.exists, timeout=10)
    assert toy.running and toy.logged("up")
    toy.check_alive()  # alive: nothing to say
    assert toy.stop() is True  # it ended on SIGTERM, within the grace
    assert not toy.running and toy.returncode == -15
    toy.check_alive()  # stopped by us is no death
    assert toy.stop() is True  # again: nothing to do


def test_never_ready_is_a_timeout_naming_the_program_with_its_log_tail(tmp_path: Path):
    toy = child(tmp_path, "import time; print('loading plugins', flush=True); "
                          "print('still loading plugins', flush=True); time.sleep(60)")
    started = time.monotonic()
    with pytest.raises(LabError) as error:
        toy.start(lambda: False, timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 5
    assert str(error.value) == "toy did not start within 0.5 s; last output: still loading plugins"
    assert not toy.running  # stopped on the way out


def test_dying_during_start_up_says_its_status_and_last_words(tmp_path: Path):
    toy = child(tmp_path, "import sys; print('reading toy.conf'); sys.exit('toy.conf: line 3: unknown directive')")
    with pytest.raises(LabError, match=r"^toy exited with status 1; last output: toy.conf: line 3: unknown "
                                       r"directive$"):
        toy.start(lambda: False, timeout=10)


def test_the_programs_own_reason_comes_before_its_last_line(tmp_path: Path):
    def emerg(text: str) -> str | None:
        return next((line.split("] ", 1)[1] for line in text.splitlines() if "[emerg]" in line), None)

    toy = child(tmp_path, "import sys; print('[emerg] bind() failed (98: in use)'); print('exiting'); sys.exit(1)",
                reason=emerg)
    with pytest.raises(LabError, match=r"^toy exited with status 1: bind\(\) failed \(98: in use\)$"):
        toy.start(lambda: False, timeout=10)


def test_no_output_says_so_and_errors_are_the_callers_class(tmp_path: Path):
    class ServerError(RuntimeError):
        pass

    toy = child(tmp_path, "raise SystemExit(4)", error=ServerError)
    with pytest.raises(ServerError, match=r"^toy exited with status 4; no output$"):
        toy.start(lambda: False, timeout=10)


def test_a_probe_that_raises_stops_the_child(tmp_path: Path):
    toy = child(tmp_path, "import time; time.sleep(60)")

    def probe() -> bool:
        raise ValueError("the config it loaded is not ours")

    with pytest.raises(ValueError, match="not ours"):
        toy.start(probe, timeout=10)
    assert not toy.running


def test_one_that_ignores_sigterm_is_killed_after_the_grace(tmp_path: Path):
    toy = child(tmp_path, "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                          "print('ready', flush=True); time.sleep(60)", grace=0.5)
    toy.start(lambda: toy.logged("ready"), timeout=10)
    started = time.monotonic()
    assert toy.stop() is False  # it had to be killed
    assert 0.5 <= time.monotonic() - started < 5
    assert toy.returncode == -9


def test_check_alive_after_death_raises_with_the_tail(tmp_path: Path):
    toy = child(tmp_path, "import time; print('ready', flush=True); time.sleep(0.2); "
                          "print('queue 0: recv: No buffer space available', flush=True); raise SystemExit(2)",
                name="pagebench-delay")
    toy.start(lambda: toy.logged("ready"), timeout=10)
    toy.check_alive("the link is down")
    deadline = time.monotonic() + 10
    while toy.running and time.monotonic() < deadline:
        time.sleep(0.02)
    with pytest.raises(LabError) as error:
        toy.check_alive("the link is down")
    assert str(error.value) == ("pagebench-delay exited with status 2: the link is down; "
                                "last output: queue 0: recv: No buffer space available")
    assert str(toy.fail("it closed its control channel")) == (
        "it closed its control channel; last output: queue 0: recv: No buffer space available")


def test_without_a_probe_started_is_enough_and_env_cwd_and_no_stdin_are_passed(tmp_path: Path):
    toy = child(tmp_path, "import os, sys, time; print(os.environ['TOY'], os.getcwd(), repr(sys.stdin.read()), "
                          "flush=True); time.sleep(60)", env={"TOY": "configured"}, cwd=tmp_path)
    toy.start()
    deadline = time.monotonic() + 10
    while not toy.output() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert toy.output().split() == ["configured", str(tmp_path), "''"]  # stdin: /dev/null, never our terminal
    toy.stop()


class FakeBed:
    """What `ManagedProcess` uses of a bed: where a child starts, and the bed's list."""

    def __init__(self) -> None:
        self.processes: list[ManagedProcess] = []
        self.started: list[list[str]] = []

    def spawn(self, argv: Sequence[str], **popen: Any) -> subprocess.Popen[str]:
        self.started.append(list(argv))
        return spawn(argv, **popen)


def test_through_a_bed_it_starts_there_and_is_listed_until_stopped(tmp_path: Path):
    bed = FakeBed()
    toy = child(tmp_path, "import time; time.sleep(60)", bed=bed)  # type: ignore[arg-type]
    toy.start()
    assert bed.started == [toy.argv] and bed.processes == [toy]
    toy.stop()
    assert bed.processes == []


def _group_alive(pgid: int) -> list[int]:
    """Live (not zombie) processes of a process group."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == pgid and fields[0] not in ("Z", "X"):
                found.append(int(entry.name))
    return found


FORKS = ("import os, time\nif os.fork() == 0:\n    time.sleep(60)\n"
         "print('forked', flush=True)\n{after}")


@pytest.mark.parametrize("after", ["time.sleep(60)", "time.sleep(0.3); os._exit(3)"], ids=["running", "leader-died"])
def test_a_group_is_stopped_whole_also_when_its_leader_died_first(tmp_path: Path, after: str):
    """A server that forks workers (gunicorn): stopping it stops them too, even once the
    leader itself has gone and left them behind."""
    toy = child(tmp_path, FORKS.format(after=after), group=True)
    toy.start(lambda: toy.logged("forked"), timeout=10)
    time.sleep(0.6)
    assert len(_group_alive(toy.pid)) == (2 if after == "time.sleep(60)" else 1)
    toy.stop()
    deadline = time.monotonic() + 2
    while _group_alive(toy.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _group_alive(toy.pid) == []


def test_without_group_only_the_child_itself_is_stopped(tmp_path: Path):
    toy = child(tmp_path, FORKS.format(after="time.sleep(60)"))
    toy.start(lambda: toy.logged("forked"), timeout=10)
    try:
        toy.stop()
        time.sleep(0.1)
        assert len(_group_alive(toy.pid)) == 1  # its forked child, which the next test's kind would leak
    finally:
        os.killpg(toy.pid, signal.SIGKILL)
