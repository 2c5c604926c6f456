"""The machine lock as the commands take it (the machine's own lock file): every measuring
command refuses a busy machine and readers do not lock; two runs, the second refusing or
waiting, both complete. The lock itself: `test_machine.py`."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from pagebench.lab.machine import LOCK_PATH, read_holder
from pagebench.results.store import Store
from tests.helpers import HARNESS, needs_root, nothing_left, pagebench, run_id_of, tagged, write_spec
from tests.lab.lockholder import holder

pytestmark = needs_root


def test_every_measuring_command_refuses_a_busy_machine_and_readers_do_not_lock(tmp_path):
    db = f"sqlite:///{tmp_path}/r.sqlite"
    proc = holder(LOCK_PATH)
    try:
        spec = write_spec(tmp_path, name="busy", sites=["seed000-small-n1"], modes=["h2"], repetitions=1,
                          warmup=0, timeouts={"link_check": False})
        for args in (["run", str(spec), "--db", db], ["link", "check", "--rtt", "5"],
                     ["shell", "--", "true"]):
            result = pagebench(*args)
            assert result.returncode == 2, (args, result.stderr)
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


def test_two_runs_one_machine_the_second_refuses_or_waits_and_both_complete(tmp_path):
    # The first run must outlast the refused run and the waiter's start (a few seconds of
    # Python start-up on a busy 2-core machine): 10 loads at 50 ms, not 4 at 20 ms.
    spec = write_spec(tmp_path, name="two", sites=["seed000-small-n2"], modes=["h2"], repetitions=10, warmup=0,
                      profiles=[{"name": "r50", "rtt_ms": 50}], timeouts={"link_check": False})
    first_db, second_db = f"sqlite:///{tmp_path}/1.sqlite", f"sqlite:///{tmp_path}/2.sqlite"
    first = subprocess.Popen([sys.executable, "-m", "pagebench", "run", str(spec), "--db", first_db], cwd=HARNESS,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=tagged())
    deadline = time.monotonic() + 60
    while (held := read_holder()) is None or held.pid != first.pid or held.run_id is None:
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.2)
    refused = pagebench("run", str(spec), "--db", second_db)
    assert refused.returncode == 2
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
