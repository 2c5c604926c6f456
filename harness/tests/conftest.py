"""Shared fixtures. Every namespace a test session creates carries the session's own
tag (`pbt<id>...`), and whatever a test leaves behind is removed at the end."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pagebench.core.layout import NAMESPACE_PATTERN, Layout, new_prefix
from pagebench.lab import netns
from tests.helpers import SESSION_TAG, ours


@pytest.fixture(scope="session", autouse=True)
def _sweep_session() -> Iterator[None]:
    yield
    for left in netns.find_leftovers():
        if ours(left.prefix):
            netns.remove_namespaces(left.namespaces)
            netns.cleanup(include_live=True, prefix=left.prefix)


@pytest.fixture
def layout() -> Layout:
    return Layout(new_prefix(), server_ips=2)


assert all(NAMESPACE_PATTERN.match(f"{new_prefix()}-{role}") for role in ("client", "router", "server"))


def _postgres_bin() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl"))
    if not found or not shutil.which("runuser"):
        pytest.fail("PostgreSQL is not installed: run `sudo harness/bootstrap test` (it installs it)")
    return found[-1].parent


@dataclass(frozen=True)
class Postgres:
    """The session's PostgreSQL server: its URL, and a restart (the fault matrix's)."""

    url: str
    bindir: Path
    data: Path

    def restart(self) -> None:
        subprocess.run(["runuser", "-u", "postgres", "--", str(self.bindir / "pg_ctl"), "-D", str(self.data),
                        "-l", str(self.data.parent / "log"), "-m", "fast", "-w", "restart"], check=True, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="session")
def postgres_url(postgres: Postgres) -> str:
    return postgres.url


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
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
        yield Postgres(f"postgresql+psycopg://pagebench@/postgres?host={sock}", bindir, data)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(["runuser", "-u", "postgres", "--", str(bindir / "pg_ctl"), "-D", str(data), "-m",
                            "immediate", "-w", "stop"], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)

