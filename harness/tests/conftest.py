"""Shared fixtures, and the rules of the suite's layout (the tests mirror the package):

- `test_<module>.py` needs nothing but Python and files: no root, no namespaces, no
  servers, no browser, no database server. `test_<module>_e2e.py` runs real parts, and
  every test in it is marked `integration` here, by its file's name: `-m "not
  integration"` selects exactly the unit tests. A unit test that asks for a real part
  (root, PostgreSQL, a lab) is a collection error, not a test that runs somewhere only.
- Every namespace a session creates carries the session's tag (`pbt<id>...`, the
  `session_tag` fixture; the CLIs the tests start get it in their environment, from
  `tests.helpers`), and whatever a test leaves behind is removed at the end.

The markers are declared in `harness/pyproject.toml`; pytest started from the
repository's root does not read that file, and gets them from here."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from pagebench.core.layout import Layout, new_prefix
from pagebench.lab import netns
from pagebench.results.artifacts import ARTIFACTS_ENV
from tests.helpers import HARNESS, SESSION_TAG, is_e2e, ours

PYPROJECT = HARNESS / "pyproject.toml"

#: What a unit test may not ask for: each needs root or a server.
REAL_PARTS = frozenset({"root", "postgres", "postgres_url", "layout"})

ROOT_HINT = "run `sudo harness/bootstrap test`, or only the unit tests: -m 'not integration'"


def pytest_configure(config: pytest.Config) -> None:
    """`harness/pyproject.toml`'s markers, where pytest did not read that file (started from
    the repository's root, it finds no configuration)."""
    if config.inipath == PYPROJECT:
        return
    for line in tomllib.loads(PYPROJECT.read_text())["tool"]["pytest"]["ini_options"]["markers"]:
        config.addinivalue_line("markers", line)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The marker follows the file's name; a unit file that needs a real part is an error."""
    misfiled = []
    for item in items:
        if is_e2e(item.path):
            item.add_marker(pytest.mark.integration)
            continue
        if item.get_closest_marker("integration") is not None:
            misfiled.append(f"{item.nodeid}: marked integration")
        needs = REAL_PARTS & set(getattr(item, "fixturenames", ()))
        if needs:
            misfiled.append(f"{item.nodeid}: uses {', '.join(sorted(needs))}")
    if misfiled:
        raise pytest.UsageError("a test_<module>.py needs nothing but Python and files; move these to its "
                                "test_<module>_e2e.py:\n  " + "\n  ".join(misfiled))


@pytest.fixture(scope="session")
def session_tag() -> str:
    """This session's tag: its labs are `pb<tag><hex>` (`new_prefix(session_tag)`)."""
    return SESSION_TAG


@pytest.fixture(scope="session")
def root() -> None:
    """For a test that builds namespaces or runs the lab's servers: it needs root."""
    if os.geteuid() != 0:
        pytest.fail(f"needs root (it builds network namespaces): {ROOT_HINT}")


@pytest.fixture(scope="session", autouse=True)
def _sweep_session() -> Iterator[None]:
    yield
    if os.geteuid() != 0:  # a session without root built nothing
        return
    for left in netns.find_leftovers():
        if ours(left.prefix):
            netns.remove_namespaces(left.namespaces)
            netns.cleanup(include_live=True, prefix=left.prefix)


@pytest.fixture
def layout(root: None, session_tag: str) -> Layout:
    return Layout(new_prefix(session_tag), server_ips=2)


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
def postgres(root: None, session_tag: str) -> Iterator[Postgres]:
    """A throwaway PostgreSQL server for this session: its own cluster in a temp dir, run
    as the `postgres` user (it refuses root; root starts it), reachable on a unix socket
    only, fsync off; stopped and deleted at the end, whatever the tests did."""
    bindir = _postgres_bin()
    # Not `pb<tag>`: the server's command line shows this path and it is not a leftover (nothing_left).
    base = Path(tempfile.mkdtemp(prefix=f"pagebench-pg-{session_tag}-"))
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
        # The loads' evidence of its stores (`results.artifacts`) goes with it, not under /var/lib.
        os.environ[ARTIFACTS_ENV] = str(base / "artifacts")
        yield Postgres(f"postgresql+psycopg://pagebench@/postgres?host={sock}", bindir, data)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(["runuser", "-u", "postgres", "--", str(bindir / "pg_ctl"), "-D", str(data), "-m",
                            "immediate", "-w", "stop"], capture_output=True)
        os.environ.pop(ARTIFACTS_ENV, None)
        shutil.rmtree(base, ignore_errors=True)
