"""Imported sites on disk: a HAR file (gzip-compressed too) read and imported, its site
directory written atomically, read back, and never written over what is not the same
imported site (without `replace`) or not a site at all."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from pagebench.core.sites.model import SiteError
from pagebench.lab.imported import read_fidelity, read_har, write_imported
from pagebench.lab.sites import BASE_MTIME, load_site
from tests.core.har.hars import entry, har


def test_a_har_file_is_written_as_a_site_directory_that_reads_back(tmp_path: Path):
    path = tmp_path / "page.har.gz"
    path.write_bytes(gzip.compress(har(entry("https://www.example.com/", text="<p>x</p>")).encode()))
    into = tmp_path / "sites" / "mine"
    site = write_imported(read_har(path, "mine"), into)
    assert site == load_site(into) and site.recording is not None and site.recording.source == str(path)
    page = site.recording.lookup("www.example.com.test", "/")
    body = into / page.host / page.file
    assert body.read_bytes() == b"<p>x</p>" and body.stat().st_mtime == BASE_MTIME
    assert body.with_name(body.name + ".br").exists()  # text bodies get their sidecars
    assert [p.name for p in into.parent.iterdir()] == ["mine"]  # no temporary directory left


def test_only_the_same_imported_site_is_replaced_without_asking(tmp_path: Path):
    page = tmp_path / "page.har"
    page.write_text(har(entry("https://www.example.com/", text="<p>x</p>")))
    into = tmp_path / "mine"
    write_imported(read_har(page, "mine"), into)
    assert write_imported(read_har(page, "mine"), into).name == "mine"  # a re-import
    with pytest.raises(SiteError, match="already holds another site; replace it with --force"):
        write_imported(read_har(page, "other"), into)
    assert write_imported(read_har(page, "other"), into, replace=True).name == "other"
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "notes.txt").write_text("mine")
    with pytest.raises(SiteError, match="exists and is not a site directory; refusing to replace it"):
        write_imported(read_har(page, "mine"), precious, replace=True)
    assert (precious / "notes.txt").read_text() == "mine"


def test_a_stand_in_keeps_its_fidelity_report_beside_it(tmp_path: Path):
    page = tmp_path / "page.har"
    page.write_text(har(entry("https://www.example.com/", text="<p>x</p>")))
    plain = write_imported(read_har(page, "mine"), tmp_path / "mine")
    assert read_fidelity(plain) is None  # not a stand-in
    made = read_har(page, "made", synthesize_all=True)
    site = write_imported(made, tmp_path / "made")
    assert read_fidelity(site) == made.fidelity and made.fidelity is not None and made.fidelity.made == 1
    (site.root / "fidelity.json").write_text("{}")
    with pytest.raises(SiteError, match=r"fidelity.json: not a fidelity report \(\d+ validation errors"):
        read_fidelity(site)
