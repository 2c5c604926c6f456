"""A process holding the machine lock (`pagebench.lab.machine`) on a path of the caller's,
for the lock's tests (`test_machine.py`, `test_machine_e2e.py`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.helpers import HARNESS

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
