"""Shared fixtures. Every namespace a test session creates carries the session's own
tag (`pbt<id>...`), and whatever a test leaves behind is removed at the end."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Iterator

import pytest

from pagebench import testbed as testbed_mod
from pagebench.topology import NAMESPACE_PATTERN, Topology, new_prefix

SESSION_TAG = "t" + secrets.token_hex(2)
os.environ["PAGEBENCH_TAG"] = SESSION_TAG  # inherited by the CLIs the tests start


def ours(name: str) -> bool:
    return name.startswith(f"pb{SESSION_TAG}")


def leftovers() -> dict[str, list[str]]:
    """What this session left: namespaces, state directories, processes."""
    namespaces = [ns for ns in testbed_mod.existing_namespaces() if ours(ns)]
    state = []
    if testbed_mod.STATE_ROOT.is_dir():
        state = [p.name for p in testbed_mod.STATE_ROOT.iterdir() if ours(p.name)]
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    processes = [line.strip() for line in ps.splitlines() if f"pb{SESSION_TAG}" in line and "ps -eo" not in line]
    return {"namespaces": namespaces, "state": state, "processes": processes}


def nothing_left() -> bool:
    return not any(leftovers().values())


@pytest.fixture(scope="session", autouse=True)
def _sweep_session() -> Iterator[None]:
    yield
    for left in testbed_mod.find_leftovers():
        if ours(left.prefix):
            testbed_mod.remove_namespaces(left.namespaces)
            testbed_mod.cleanup(include_live=True, prefix=left.prefix)


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="builds network namespaces: run as root")


@pytest.fixture
def topology() -> Topology:
    return Topology(new_prefix(), server_ips=2)


def probe(ns: str, *args: str, timeout: float = 120) -> str:
    """Run the link probe client inside a namespace; returns its stdout."""
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "pagebench.link.probe", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout).stdout


assert all(NAMESPACE_PATTERN.match(f"{new_prefix()}-{role}") for role in ("client", "router", "server"))
