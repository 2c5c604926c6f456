"""Child processes: stopped with a grace period, then killed."""

from __future__ import annotations

import subprocess


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
