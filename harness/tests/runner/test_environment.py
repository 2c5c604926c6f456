"""The run's record of its code: the checkout's commit, also when another user owns the
checkout (CI's, read by root in a container: git refuses it as "dubious ownership"
unless told), and none (not git's complaint) where there is no commit to read."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pagebench.runner.environment import _commit

NOBODY = 65534


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root (the test command runs as root)")
def test_a_checkout_another_user_owns_gives_its_commit_and_a_folder_without_one_none(tmp_path: Path):
    repo = tmp_path / "checkout"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "f").write_text("one")
    _git(repo, "add", "f")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = _git(repo, "rev-parse", "HEAD")
    for path in [repo, *repo.rglob("*")]:
        os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    refused = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True)
    assert refused.returncode != 0 and "dubious ownership" in refused.stderr  # what git does unasked
    assert _commit(repo) == head
    (repo / "f").write_text("two")
    assert _commit(repo) == f"{head}-dirty"
    assert _commit(tmp_path / "nothing") is None
