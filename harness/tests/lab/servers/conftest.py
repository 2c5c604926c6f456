"""The servers' tests share a scratch directory nginx's workers can read (`data_dir`,
one a module) and, for the replay tests (`test_replay.py`, `test_replay_e2e.py`), the
recorded site written there (`site`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pagebench.lab import sites as sitefiles
from tests.helpers import readable_dir
from tests.lab.servers.recorded import write_recorded_site


@pytest.fixture(scope="module")
def data_dir() -> Iterator[Path]:
    with readable_dir() as path:
        yield path


@pytest.fixture(scope="module")
def site(data_dir: Path) -> sitefiles.Site:
    """A recorded site (`recorded.py`): what the replay tests replay."""
    return write_recorded_site(data_dir / "rec")
