"""docker-compose.yml validated by Compose itself (`docker compose config`: the Compose
Specification's schema as the Compose the lab runs with bundles it, and interpolation),
the Compose the test command provides. What the file says is read in
`test_compose_file.py`; the lab runs in `tests/lab/split/test_compose_e2e.py`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from tests.helpers import REPO, compose_command

COMPOSE_FILE = REPO / "docker-compose.yml"


def config(path: Path) -> subprocess.CompletedProcess[str]:
    """`compose -f PATH config --quiet` for the checkout (its relative paths resolve there),
    with none of the variables a user may set (the file must stand without them)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("GRAFANA_ADMIN_PASSWORD", "PAGEBENCH_SPEC")}
    return subprocess.run([*compose_command(), "--project-directory", str(REPO), "-f", str(path), "config", "--quiet"],
                          capture_output=True, text=True, timeout=60, env=environ, cwd=REPO)


def test_compose_accepts_the_compose_file():
    result = config(COMPOSE_FILE)
    assert result.returncode == 0, result.stderr


def test_compose_refuses_the_file_with_a_key_it_does_not_know(tmp_path: Path):
    """The check is live: the same file with one key the specification lacks is refused,
    by name."""
    broken = yaml.safe_load(COMPOSE_FILE.read_text())
    broken["services"]["db"]["restart_after"] = "never"
    copy = tmp_path / "docker-compose.yml"
    copy.write_text(yaml.safe_dump(broken))
    result = config(copy)
    assert result.returncode != 0
    assert "services.db additional properties 'restart_after' not allowed" in result.stderr, result.stderr
