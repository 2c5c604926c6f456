"""A site directory pagebench cannot write (a read-only bind mount: root): named, with the
file it could not write, in one line. Sites on disk otherwise: `test_sites.py`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from pagebench.core.sites.model import SiteError
from pagebench.lab import sites as sitefiles
from tests.helpers import needs_root

pytestmark = needs_root

MANIFEST = {"name": "mine", "entry": "https://www.mine.test/index.html", "origins": ["www.mine.test", "img.mine.test"]}


def test_materialize_names_a_site_directory_it_cannot_write(tmp_path: Path):
    root = tmp_path / "ro"
    (root / "www.mine.test").mkdir(parents=True)
    (root / "img.mine.test").mkdir()
    (root / "site.yaml").write_text(yaml.safe_dump(MANIFEST))
    (root / "www.mine.test" / "index.html").write_bytes(b"<!DOCTYPE html><p>hi</p>\n")
    site = sitefiles.load_site(root)
    subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(root)], check=True, capture_output=True)
    try:
        with pytest.raises(SiteError) as error:
            sitefiles.materialize(site)
    finally:
        subprocess.run(["umount", str(root)], check=True)
    message = str(error.value)
    assert message.startswith(f"{root / 'www.mine.test'}: cannot write the precompressed index.html.gz")
    assert "Read-only file system" in message and "\n" not in message
