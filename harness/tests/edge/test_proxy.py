"""The edge proxy's options refused before anything starts, through `pagebench run`: a bad
proxy spec, a bad real-time priority. The proxy in a real lab: `test_proxy_e2e.py`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pagebench.edge.proxy import RT_PRIORITY_ENV
from tests.helpers import nothing_left, pagebench, tagged, write_spec


@pytest.mark.parametrize("fields, needle", [
    ({"proxy": {"depth": 0}}, "proxy.depth: Input should be greater than or equal to 1"),
    ({"topology": "direct", "modes": ["pipelining"]}, "pipelining needs the edge-proxy topology"),
    ({"modes": ["h3"]}, "h3 through the proxy"),
])
def test_bad_proxy_specs_are_one_line_errors(tmp_path, fields, needle):
    spec = write_spec(tmp_path, **{"sites": ["seed000-small-n20"], "modes": ["pipelining"], "topology": "proxy",
                                   **fields})
    result = pagebench("run", str(spec), "--db", f"sqlite:///{tmp_path}/x.sqlite")
    assert result.returncode == 2
    assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not Path(tmp_path / "x.sqlite").exists()


def test_a_bad_proxy_priority_stops_the_run_before_it_starts(tmp_path):
    spec = write_spec(tmp_path, sites=["seed000-small-n20"], modes=["h2"], topology="proxy")
    db = f"sqlite:///{tmp_path}/x.sqlite"
    result = subprocess.run([sys.executable, "-m", "pagebench", "run", str(spec), "--db", db], capture_output=True,
                            text=True, timeout=120, env=tagged({RT_PRIORITY_ENV: "60"}))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"error: {RT_PRIORITY_ENV}='60': use 0 (normal scheduling) or 1..49 (SCHED_FIFO below the delay program's 50)"]
    assert not (tmp_path / "x.sqlite").exists() and nothing_left()
