"""One measuring command per machine: a second refuses, naming the holder, or waits; a
holder killed with SIGKILL releases the machine; read-only commands never lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pagebench.lab.machine import LOCK_PATH, MachineBusy, MachineLock, read_holder
from pagebench.results.store import Store
from tests.helpers import HARNESS, needs_root, nothing_left, pagebench, run_id_of, write_spec

HOLD = """
import sys, time
from pagebench.lab.machine import MachineLock
with MachineLock("run", path=sys.argv[1]) as lock:
    lock.note_run("r-held")
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def holder(path: Path, seconds: float = 60) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], cwd=HARNESS,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


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


@needs_root
@pytest.mark.integration
def test_every_measuring_command_refuses_a_busy_machine_and_readers_do_not_lock(tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    proc = holder(LOCK_PATH)
    try:
        spec = write_spec(tmp_path, name="busy", sites=["seed000-small-n1"], modes=["h2"], repetitions=1,
                          warmup=0, timeouts={"link_check": False})
        for args in (["run", str(spec), "--db", db], ["link", "check", "--rtt", "5"],
                     ["shell", "--", "true"]):
            result = pagebench(*args)
            assert result.returncode == 1, (args, result.stderr)
            line = result.stderr.strip().splitlines()[-1]
            assert line.startswith("error: this machine is measuring: `pagebench run`") and f"pid {proc.pid}" in line
        assert not Path(f"{tmp_path}/r.sqlite").exists() or not Store(db).runs()  # nothing started
        store = Store(db)
        store.close()
        assert pagebench("report", "latest", "--db", db).returncode == 2  # a reader: no run, but no lock either
    finally:
        proc.kill()
        proc.wait()
    assert nothing_left()


@needs_root
@pytest.mark.integration
def test_two_runs_one_machine_the_second_refuses_or_waits_and_both_complete(tmp_path):
    spec = write_spec(tmp_path, name="two", sites=["seed000-small-n2"], modes=["h2"], repetitions=4, warmup=0,
                      profiles=[{"name": "r20", "rtt_ms": 20}], timeouts={"link_check": False})
    first_db, second_db = f"sqlite:///{tmp_path}/1.sqlite", f"sqlite:///{tmp_path}/2.sqlite"
    first = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--db", first_db], cwd=HARNESS,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while (held := read_holder()) is None or held.pid != first.pid or held.run_id is None:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.2)
    refused = pagebench("run", str(spec), "--db", second_db)
    assert refused.returncode == 1
    line = refused.stderr.strip().splitlines()[-1]
    assert f"`pagebench run` (pid {first.pid}, run {held.run_id}, since" in line, line
    waited = pagebench("run", str(spec), "--db", second_db, "--wait")
    first_out, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err[-2000:]
    second = run_id_of(waited)
    assert "waiting for this machine" in waited.stderr or "the machine is free" in waited.stderr
    assert Store(second_db).experiment(second).status == "complete"
    first_end = max(load.recorded_at for load in Store(first_db).loads(held.run_id, include_warmup=True))
    assert min(load.started_at for load in Store(second_db).loads(second, include_warmup=True)) > first_end
    assert json.loads(json.dumps(Store(first_db).experiment(held.run_id).status)) == "complete"
    assert nothing_left()
