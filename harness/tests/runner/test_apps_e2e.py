"""App sites in real runs (`pagebench run`, real nginx, Caddy, edge proxy, Chromium): the
user's own server process (`shopapp.py`, standard library only) loaded in every mode and
topology with its own responses, and each way it can fail (it crashes mid-run, never gets
ready, answers 500 for its page, its command is not found): one line naming the app and
its last log lines, the error's exit code, the run marked failed with the loads before
kept, and no process of the app left."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pagebench.results.store import Store
from tests.helpers import needs_root, nothing_left, pagebench, readable_dir, run_id_of, write_spec

pytestmark = needs_root
APP = Path(__file__).with_name("shopapp.py")
ORIGINS = ["shop.test", "static.shop.test"]


@pytest.fixture
def spec_dir() -> Iterator[Path]:
    """A directory the app (user nobody) can read, holding the app and its spec."""
    with readable_dir() as path:
        shutil.copy(APP, path / "shopapp.py")
        yield path


def _spec(directory: Path, *flags: str, command: str | None = None, **fields) -> Path:
    app = {"command": command or f"{sys.executable} shopapp.py {{port}} {' '.join(flags)}".strip(),
           "ready": "/health", "ready_timeout_s": 5}
    settings = {"name": "apps", "seed": 3, "sites": [{"name": "shop", "app": app, "origins": ORIGINS}],
                "modes": ["keepalive"], "profiles": [{"name": "lan", "rtt_ms": 4}], "cache": ["cold"],
                "repetitions": 1, "warmup": 0, "timeouts": {"link_check": False}} | fields
    return write_spec(directory, **settings)


def _no_app_left() -> bool:
    ps = subprocess.run(["pgrep", "-af", "shopapp.py"], capture_output=True, text=True).stdout
    return not ps.strip()


def test_an_app_loads_in_every_mode_and_topology_with_its_own_responses(spec_dir, tmp_path):
    db = f"sqlite:///{tmp_path}/apps.sqlite"
    spec = _spec(spec_dir, "--worker", modes=["http1.0", "keepalive", "h2", "h3", "pipelining"],
                 topology=["direct", "proxy"], cache=["cold", "warm"])
    run_id = run_id_of(pagebench("run", str(spec), "--db", db))
    store = Store(db)
    run = store.experiment(run_id)
    assert run.status == "complete" and run.meta["spec_dir"] == str(spec_dir)
    loads = store.loads(run_id)
    seen = {(l.condition.mode.name, l.condition.topology, l.condition.cache) for l in loads}
    assert {("pipelining", "proxy", "cold"), ("h3", "direct", "warm"), ("http1.0", "direct", "cold"),
            ("h2", "proxy", "cold")} <= seen
    for load in loads:
        c = load.condition
        assert load.ok and not load.flags, (c.label, load.flags)
        assert load.requests == 3, c.label
        if c.cache == "cold":
            by_url = {row.resource.url: row.resource for row in store.resources(load.id)}
            script = by_url["https://shop.test/app.js"]
            assert script.content_encoding == "gzip"  # the app's own compression, passed through
            assert "https://static.shop.test/logo.svg" in by_url
            if c.topology == "direct":
                assert {r.protocol for r in by_url.values()} == {c.mode.browser_protocol}, c.label
    assert _no_app_left() and nothing_left()


def _failed(spec: Path, db: str) -> tuple[subprocess.CompletedProcess[str], str]:
    result = pagebench("run", str(spec), "--db", db)
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr[-2000:]
    assert result.returncode == 2, result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert _no_app_left(), subprocess.run(["pgrep", "-af", "shopapp.py"], capture_output=True, text=True).stdout
    assert nothing_left()
    return result, lines[0]


def _stored(db: str):
    store = Store(db)
    run = store.runs()[0]
    return run, store.loads(run.run_id)


def test_an_app_that_crashes_mid_run_stops_it_and_keeps_the_loads_before(spec_dir, tmp_path):
    db = f"sqlite:///{tmp_path}/crash.sqlite"
    _, line = _failed(_spec(spec_dir, "--crash-after", "2", "--worker", repetitions=4), db)
    assert line.startswith("error: app shop exited with status 3") and "crashing at page request 3" in line
    run, loads = _stored(db)
    assert run.status == "failed" and run.reason.startswith("app shop exited")
    assert len(loads) == 2 and all(l.ok for l in loads)  # none after its last good check


def test_an_app_that_never_gets_ready_is_one_line_with_its_log(spec_dir, tmp_path):
    db = f"sqlite:///{tmp_path}/ready.sqlite"
    _, line = _failed(_spec(spec_dir, "--never-ready"), db)
    assert "app shop: /health did not answer 2xx within 5 s (last: 503)" in line
    assert "GET /health HTTP/1.1\" 503" in line  # its own log's last lines
    run, loads = _stored(db)
    assert run.status == "failed" and not loads


def test_an_app_answering_500_for_its_page_fails_the_run_without_that_load(spec_dir, tmp_path):
    db = f"sqlite:///{tmp_path}/page.sqlite"
    _, line = _failed(_spec(spec_dir, "--fail-page", repetitions=2), db)
    assert line.startswith("error: app shop answered 500 for the page https://shop.test/")
    assert "\"GET / HTTP/1.1\" 500" in line
    run, loads = _stored(db)
    assert run.status == "failed" and "answered 500" in run.reason and not loads


def test_an_app_command_that_is_not_found_is_one_line(spec_dir, tmp_path):
    db = f"sqlite:///{tmp_path}/missing.sqlite"
    _, line = _failed(_spec(spec_dir, command="no-such-server-program --port {port}"), db)
    assert line.startswith("error: app shop: command: no-such-server-program: not found on PATH")
    run, loads = _stored(db)
    assert run.status == "failed" and not loads
