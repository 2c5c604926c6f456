"""The runner's e2e tests share one killed run (`runs.py`): SIGKILL after three loads,
`cleanup`, `--resume`, made once a session for the two tests that read it."""

from __future__ import annotations

import pytest

from tests.runner.runs import KilledRun, kill_cleanup_resume


@pytest.fixture(scope="session")
def killed_run(root: None, tmp_path_factory: pytest.TempPathFactory) -> KilledRun:
    return kill_cleanup_resume(tmp_path_factory.mktemp("killed"))
