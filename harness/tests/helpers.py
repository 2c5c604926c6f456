"""What the tests share: the CLI runner, spec files, a filled store, stored loads made by
hand, the session's tag and what it left behind, the timing slack and a throwaway
PostgreSQL database.

Imported once per session (as `tests.helpers`): the session tag is chosen here. Tests
take it from the `session_tag` fixture; a pagebench child is given it explicitly in its
environment (`tagged()`, which `pagebench()` uses). Nothing here changes `os.environ`."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from pagebench.core.modes import H2, KEEPALIVE
from pagebench.core.records import Condition, LoadResult, PlannedLoad, Resource
from pagebench.lab import netns
from pagebench.link.counters import LinkCounters
from pagebench.results.rows import LoadRow
from pagebench.results.store import Store
from pagebench.system.places import TAG_ENV

HARNESS = Path(__file__).resolve().parents[1]
#: The checkout the tests run from: its compose file, dashboards, bootstrap and Dockerfiles.
REPO = HARNESS.parent

# The session ------------------------------------------------------------------------

#: This session's tag: the labs it builds, in this process (`new_prefix(session_tag)`) or in
#: a pagebench it starts (`tagged()`), are `pb<tag><hex>`, and so is all `leftovers()` sees.
SESSION_TAG = "t" + secrets.token_hex(2)

#: For tests that build namespaces or run the lab's servers (conftest's `root` fixture
#: fails, naming what to run, where the session is not root).
needs_root = pytest.mark.usefixtures("root")


def program(name: str, package: str) -> str:
    """The path of a program the test command installs (Debian `package`); a test that
    needs it fails, saying how to get it, where it is missing (it never skips)."""
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: run `sudo harness/bootstrap test` (it installs {package})")
    return found


@functools.cache
def compose_command() -> list[str]:
    """`docker compose` where the machine has it, else the Compose v2 the test command
    builds beside this Python (`.venv/bin/docker-compose`)."""
    if subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    built = Path(sys.prefix) / "bin" / "docker-compose"
    if built.exists():
        return [str(built)]
    pytest.fail("no Docker Compose v2: run `sudo harness/bootstrap test`, which builds it")


def is_e2e(path: Path) -> bool:
    """A test file of real parts (`test_<module>_e2e.py`), not a unit test file."""
    return path.name.endswith("_e2e.py")


def tagged(env: Mapping[str, str] | None = None, tag: str = SESSION_TAG) -> dict[str, str]:
    """The environment of a pagebench child of this session: this process's, the
    session's tag (or `tag`, a group of its own) and `env`."""
    return {**os.environ, TAG_ENV: tag, **(env or {})}


def sigint_default() -> None:
    """A child's `preexec_fn` for a test that stops it with SIGINT: a suite started in the
    background (`nohup ... &`, a CI runner) runs with SIGINT ignored, and its children
    inherit that; Python then installs no KeyboardInterrupt handler and the signal is
    lost. Ctrl-C is what such a test means, so the child gets the default back."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def ours(name: str) -> bool:
    return name.startswith(f"pb{SESSION_TAG}")


def leftovers() -> dict[str, list[str]]:
    """What this session left: namespaces, state directories, processes."""
    namespaces = [ns for ns in netns.existing_namespaces() if ours(ns)]
    state = []
    if netns.STATE_ROOT.is_dir():
        state = [p.name for p in netns.STATE_ROOT.iterdir() if ours(p.name)]
    ps = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    processes = [line.strip() for line in ps.splitlines() if f"pb{SESSION_TAG}" in line and "ps -eo" not in line]
    return {"namespaces": namespaces, "state": state, "processes": processes}


def nothing_left() -> bool:
    return not any(leftovers().values())


# Timing in tests. The accuracy targets (delay within 0.5 ms, rate within 3 %) are the
# benchmarks' (rule 4, docs/benchmarks.md). A test checks that the link does what the
# profile asks, in the direction physics allows, with room for a vCPU that stalls.
DELAY_SLACK_MS = 2.0  # a median RTT may sit this far above the configured one, never below
RATE_FLOOR = 0.5  # goodput at least this share of the configured rate, never above it


def probe(ns: str, *args: str, timeout: float = 120) -> str:
    """Run the link probe client inside a namespace; returns its stdout."""
    cmd = ["ip", "netns", "exec", ns, sys.executable, "-m", "pagebench.link.probe", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout).stdout


@contextmanager
def readable_dir() -> Iterator[Path]:
    """A scratch directory nginx's workers and Chromium (user nobody) can read: pytest's
    own are its owner's alone (0700); removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="pagebench-test-"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# The CLI ------------------------------------------------------------------------------


def pagebench(*args: str, timeout: float = 900, env: Mapping[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """The CLI, finished: `python -m pagebench ARGS` with the session's tag."""
    return subprocess.run([sys.executable, "-m", "pagebench", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=HARNESS, env=tagged(env))


def write_spec(tmp_path: Path, **fields) -> Path:
    path = tmp_path / "spec.yaml"
    path.write_text(yaml.safe_dump(fields))
    return path


def good_loads(store: Store, run: str, **where: object) -> list[LoadRow]:
    """A run's loads whose condition has these fields, at least one, each ok and unflagged."""
    rows = [row for row in store.loads(run) if all(getattr(row.condition, k) == v for k, v in where.items())]
    assert rows, where
    for row in rows:
        assert row.ok and not row.flagged, (where, row.flags, row.errors)
    return rows


def run_id_of(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr[-3000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("run "))
    return line.split()[1]


# A store filled by hand -----------------------------------------------------------------

PROFILES = {
    "3g": {"rtt_ms": 300.0, "jitter_ms": 0.0, "loss_pct": 0.0, "down_mbit": 1.6, "up_mbit": 0.768,
           "queue_bytes": None, "queue_ms": None, "mss": None, "initcwnd": None, "congctl": "cubic",
           "tcp_rmem": None, "tcp_wmem": None},
    "cable": {"rtt_ms": 28.0, "jitter_ms": 0.0, "loss_pct": 0.0, "down_mbit": 5.0, "up_mbit": 1.0,
              "queue_bytes": None, "queue_ms": None, "mss": None, "initcwnd": None, "congctl": "cubic",
              "tcp_rmem": None, "tcp_wmem": None},
}
META = {
    "seed": 42, "git_commit": "875bf20", "host": "bench-1", "kernel": "6.1.0-18-amd64",
    "chromium_version": "131.0.6778.33", "nginx_version": "1.22.1", "backend": "userspace",
    "pagebench_version": "0.1.0", "python": "3.11.7",
}
SPEC = {"name": "demo", "seed": 42, "sites": ["demo"], "modes": ["keepalive", "h2"],
        "profiles": ["3g", "cable"], "cache": ["cold"], "repetitions": 3, "warmup": 1}

CHECK = {
    "backend": "userspace", "configured": PROFILES["3g"],
    "measured": {"rtt_ms": {"median": 300.4, "p95": 301.0, "n": 50}, "down_mbit": 1.57, "up_mbit": 0.75,
                 "loss_pct": 0.0, "loss": {}},
    "lateness_us": {"p50": 55, "p99": 420, "max": 990}, "drops": {}, "counters": {}, "valid": True, "problems": [],
}
def make_plan(modes=(KEEPALIVE, H2), profiles=("3g", "cable"), cache=("cold",), reps=3, warmups=1):
    """A plan as the spec would expand it: warm-ups first per condition, then interleaved."""
    conditions = [Condition("demo", mode, "direct", profile, state)
                  for mode in modes for profile in profiles for state in cache]
    plan: list[PlannedLoad] = []
    for condition in conditions:
        for w in range(warmups):
            plan.append(PlannedLoad(len(plan), condition, -1 - w, True))
    for rep in range(reps):
        for condition in reversed(conditions) if rep % 2 else conditions:
            plan.append(PlannedLoad(len(plan), condition, rep, False))
    return plan


def fake_load(planned: PlannedLoad, load_ms: float = 1800.0, *, flagged: bool = False, ok: bool = True) -> LoadResult:
    """A realistic page load: one HTML document, CSS, JS and images over two origins."""
    mode = planned.condition.mode
    protocol = "h2" if mode is H2 else "http/1.1"
    warm = planned.condition.cache == "warm"
    resources = []
    for i, (path, kind, size) in enumerate([
        ("/", "Document", 14_210), ("/css/site.css", "Stylesheet", 22_400), ("/js/app.js", "Script", 91_200),
        ("/img/hero.jpg", "Image", 181_004), ("/img/a.png", "Image", 9_120), ("/img/b.png", "Image", 7_311),
    ]):
        origin = "https://demo.test" if i < 3 else "https://img.demo.test"
        cached = warm and i > 0
        start = 0.0 if i == 0 else 320.0 + 40 * i
        resources.append(Resource(
            url=origin + path, origin=origin, protocol=protocol,
            connection_id=None if cached else (11 if (i < 3 or mode is H2) else 20 + i),
            from_cache=cached, status=200, resource_type=kind, start_ms=start,
            response_start_ms=None if cached else start + 310.5, end_ms=start + 400.25,
            transfer_bytes=0 if cached else size + 310, body_bytes=size,
            timing={} if cached else {"dnsStart": -1.0, "connectStart": 0.4, "sslStart": 0.9,
                                      "sendStart": 301.2, "receiveHeadersEnd": 310.5},
        ))
    connections = 2 if mode is H2 else 5
    counters = LinkCounters(tcp_conns=connections, packets_up=212, bytes_up=18_044, packets_down=301,
                            bytes_down=341_877)
    return LoadResult(
        ok=ok, url="https://demo.test/", ttfb_ms=None if not ok else 312.4, dcl_ms=load_ms - 250.0,
        load_ms=None if not ok else load_ms, fcp_ms=load_ms - 300.0, lcp_ms=load_ms - 120.0,
        requests=len(resources), bytes=sum(r.transfer_bytes for r in resources),
        cache_hits=sum(r.from_cache for r in resources), connections_browser=connections,
        connections_link=connections, connections_server=connections + (1 if flagged else 0),
        flagged=flagged, flags=(f"connections: server {connections + 1} != browser {connections}",) if flagged else (),
        errors=() if ok else ("net::ERR_CONNECTION_RESET",), link=counters.as_dict(),
        resources=tuple(resources), notes=("preconnected socket unused",) if mode is KEEPALIVE else (),
    )


def fill(store: Store, run_id: str = "r1", reps: int = 6, record: int | None = None) -> list:
    """A run with 4 conditions; warm-ups slow, h2 faster, one flagged load."""
    plan = make_plan(reps=reps)
    store.create_experiment(run_id, SPEC, META, plan, PROFILES)
    store.add_link_check(run_id, "3g", CHECK)
    for planned in plan[:record]:
        base = 1200.0 if planned.condition.mode is H2 else 2000.0
        load_ms = 9000.0 if planned.warmup else base + 10 * planned.repetition
        result = fake_load(planned, load_ms, flagged=planned.seq == 6)
        store.record_loads(run_id, planned, [result], started_at=1_790_000_000.0 + planned.seq)
    return plan


def fill_sharded(store: Store, run_id: str = "r1", reps: int = 20, slower: float = 1.1) -> list:
    """A run of keepalive and h2 on 3g measured in two shards, as `run --shard K/2` splits
    it: lab-a the even repetitions, lab-b the odd ones, `slower` times lab-a's times."""
    plan = make_plan(profiles=("3g",), reps=reps, warmups=0)
    store.create_experiment(run_id, SPEC, META, plan, PROFILES)
    for planned in plan:
        odd = planned.repetition % 2
        base = 1200.0 if planned.condition.mode is H2 else 2000.0
        load_ms = base * (slower if odd else 1.0) + 10 * planned.repetition
        store.record_loads(run_id, planned, [fake_load(planned, load_ms)], started_at=1_790_000_000.0 + planned.seq,
                           machine="lab-b" if odd else "lab-a")
    return plan


# Stored loads made by hand (no store) ----------------------------------------------------

_load_ids = itertools.count(1)


def load_row(condition: Condition, load_ms: float | None = 1000.0, **fields: Any) -> LoadRow:
    """A load as `Store.loads` returns it: the fields a test names, plausible values for
    the rest (a fresh id each)."""
    values: dict[str, Any] = dict(
        id=next(_load_ids), seq=0, client=0, condition=condition, condition_id=1, repetition=0, warmup=False,
        started_at=0.0, recorded_at=0.0, ok=True, flagged=False, url="https://demo.test/", ttfb_ms=300.0,
        dcl_ms=None, load_ms=load_ms, fcp_ms=900.0, lcp_ms=None, requests=6, bytes=325_000, cache_hits=0,
        connections_browser=1, connections_link=1, connections_server=1, connections_proxy=None,
        connections_proxy_reused=None, flags=(), errors=(), notes=(), link={}, bound_ms=None, unrecorded=None)
    return LoadRow(**values | fields)


def stored_load(planned: PlannedLoad, result: LoadResult, **fields: Any) -> LoadRow:
    """What the store gives back for `result` recorded as `planned` (the unrecorded URLs as a count)."""
    recorded = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
                if f.name not in ("resources", "unrecorded", "visual_progress")}  # what a LoadRow keeps of it
    return load_row(planned.condition, **recorded | {
        "seq": planned.seq, "repetition": planned.repetition, "warmup": planned.warmup,
        "unrecorded": None if result.unrecorded is None else len(result.unrecorded)} | fields)


# A throwaway PostgreSQL database (on the session's server: conftest's postgres_url) -------


def admin(admin_url: str, *statements: str) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        for statement in statements:
            conn.execute(sa.text(statement))
    engine.dispose()


def fresh_database(admin_url: str, name: str) -> str:
    """An empty database on the session's server (dropped first if a rerun left it)."""
    admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"')
    return admin_url.replace("@/postgres?", f"@/{name}?")


def drop_database(admin_url: str, name: str) -> None:
    """Drop a database of the session's server, closing whatever still uses it."""
    admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# The example app (examples/shop) ----------------------------------------------------------

SHOP = REPO / "examples" / "shop"
#: regressions.yaml: name -> {what, file, old, new}, the one-line edits a team could ship.
SHOP_REGRESSIONS: dict[str, dict[str, str]] = yaml.safe_load((SHOP / "regressions.yaml").read_text())


def shop_copy(dest: Path, regression: str | None = None) -> Path:
    """examples/shop copied into `dest` (made once, then edited in place) as it is, or with
    one of regressions.yaml's edits: `None` reverts the copy to the original."""
    shutil.copytree(SHOP, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".venv"))
    for edit in SHOP_REGRESSIONS.values():
        (dest / edit["file"]).write_text((SHOP / edit["file"]).read_text())
    if regression is not None:
        edit = SHOP_REGRESSIONS[regression]
        original = (SHOP / edit["file"]).read_text()
        assert original.count(edit["old"]) == 1, f"regressions.yaml {regression}: {edit['old']!r} not once in {edit['file']}"
        (dest / edit["file"]).write_text(original.replace(edit["old"], edit["new"]))
    return dest


def with_venv_path(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment whose PATH starts with this Python's bin directory (the test command's
    .venv/bin), where the example app's `gunicorn` is installed."""
    base = {**os.environ, **(env or {})}
    return {**base, "PATH": f"{Path(sys.prefix) / 'bin'}:{base.get('PATH', os.defpath)}"}
