"""Shared fixtures. Every namespace a test session creates carries the session's own
tag (`pbt<id>...`), and whatever a test leaves behind is removed at the end."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

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


# Timing in tests. The accuracy targets (delay within 0.5 ms, rate within 3 %) are the
# benchmarks' (rule 4, docs/benchmarks.md). A test checks that the link does what the
# profile asks, in the direction physics allows, with room for a vCPU that stalls.
DELAY_SLACK_MS = 2.0  # a median RTT may sit this far above the configured one, never below
RATE_FLOOR = 0.5  # goodput at least this share of the configured rate, never above it

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="builds network namespaces: run as root")


@pytest.fixture
def topology() -> Topology:
    return Topology(new_prefix(), server_ips=2)


def probe(ns: str, *args: str, timeout: float = 120) -> str:
    """Run the link probe client inside a namespace; returns its stdout."""
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "pagebench.link.probe", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout).stdout


assert all(NAMESPACE_PATTERN.match(f"{new_prefix()}-{role}") for role in ("client", "router", "server"))


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found or not shutil.which("runuser"):
        pytest.fail("PostgreSQL is not installed: run `sudo harness/bootstrap test` (it installs it)")
    return found[-1].parent


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """A throwaway PostgreSQL server for this session: its own cluster in a temp dir, run
    as the `postgres` user (it refuses root), reachable on a unix socket only, fsync off;
    stopped and deleted at the end, whatever the tests did."""
    if os.geteuid() != 0:
        pytest.skip("starts a PostgreSQL cluster as the postgres user: run as root")
    bindir = _postgres_bin()
    # Not `pb<tag>`: the server's command line shows this path and it is not a leftover (nothing_left).
    base = Path(tempfile.mkdtemp(prefix=f"pagebench-pg-{SESSION_TAG}-"))
    shutil.chown(base, "postgres", "postgres")
    base.chmod(0o755)
    data, sock = base / "data", base / "sock"

    def as_postgres(*argv: str) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", *argv], check=True, capture_output=True, text=True)

    try:
        as_postgres("mkdir", str(sock))
        as_postgres(str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "pagebench", "--no-sync")
        as_postgres(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "start", "-o",
                    f"-k {sock} -c listen_addresses='' -c fsync=off -c full_page_writes=off")
        yield f"postgresql+psycopg://pagebench@/postgres?host={sock}"
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(["runuser", "-u", "postgres", "--", str(bindir / "pg_ctl"), "-D", str(data), "-m",
                            "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def _admin(admin_url: str, *statements: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        for statement in statements:
            conn.execute(sa.text(statement))
    engine.dispose()


def fresh_database(admin_url: str, name: str) -> str:
    """An empty database on the session's server (dropped first if a rerun left it)."""
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return admin_url.replace("@/postgres?", f"@/{name}?")


def drop_database(admin_url: str, name: str) -> None:
    """Drop a database of the session's server, closing whatever still uses it."""
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
