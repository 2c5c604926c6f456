"""How this machine produces a run (stored with it): the code's commit and the versions of
the kernel, Chromium, nginx, Caddy and the Python packages that measure."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any

from pagebench.lab.browser import CHROMIUM
from pagebench.lab.servers.caddy import CADDY
from pagebench.lab.servers.nginx import nginx_version
from pagebench.system import places


def _command_output(argv: list[str]) -> str:
    """The first line a command prints when it succeeds; "" when it fails (its complaint
    is not the answer: git's "dubious ownership" is no commit)."""
    try:
        result = subprocess.run(argv, capture_output=True, text=True, timeout=20)
    except OSError:
        return ""
    text = (result.stdout or result.stderr).strip()
    return text.splitlines()[0] if result.returncode == 0 and text else ""


def _commit(repo: Path | None) -> str | None:
    """The checkout's commit, `-dirty` when a tracked file differs from it."""
    if repo is None:
        return None
    # Only read: a checkout another user owns (CI's, run as root in a container) is asked too.
    git = ["git", "-c", "safe.directory=*", "-C", str(repo)]
    commit = _command_output([*git, "rev-parse", "HEAD"])
    if not commit:
        return None
    dirty = _command_output([*git, "status", "--porcelain", "--untracked-files=no"])
    return commit + ("-dirty" if dirty else "")


#: Names this lab machine in the loads it measures for a sharded run (default: the host's
#: name): machines of a fleet may share one (containers), and a test's nodes share a host.
MACHINE_ENV = "PAGEBENCH_MACHINE"


def machine() -> str:
    """This lab machine's name as a sharded run's loads record it."""
    return os.environ.get(MACHINE_ENV) or platform.node()


def environment() -> dict[str, Any]:
    """How this run is produced: versions and the code's commit (None when pagebench runs
    from a wheel: no checkout to ask)."""
    from importlib.metadata import version

    return {
        "git_commit": _commit(places.checkout()),
        "host": platform.node(),
        "kernel": platform.release(),
        # which build as well as which version: "chromium-headless-shell 156.0.8078.79"
        "chromium_version": f"{Path(CHROMIUM).name} {_command_output([CHROMIUM, '--version']).removeprefix('Chromium ')}",
        "nginx_version": nginx_version(),
        "caddy_version": _command_output([CADDY, "version"]).split(" ")[0] or None,  # h3's server
        "pagebench_version": version("pagebench"),
        "playwright_version": version("playwright"),
        "python_version": platform.python_version(),
    }
