"""A corpus's pages on disk: its HARs found, each imported once into the cache (a bodiless
HAR as a stand-in), read back from it, made again when the HAR changes, and a HAR that
cannot be imported left out with a note naming it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pagebench.core.sites.corpus import CorpusRef
from pagebench.core.sites.model import SiteError
from pagebench.lab import corpus

HARS = Path(__file__).parents[1] / "fixtures" / "hars"
SMALL = ("firefox-www.wikipedia.org.har", "wpt-www.sitespeed.io.har", "chrome-example.com.har")


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    hars = tmp_path / "hars"
    hars.mkdir()
    for name in SMALL:
        shutil.copy(HARS / name, hars / name)
    (hars / "notes.txt").write_text("not a HAR")
    return hars


def test_every_har_is_a_page_imported_once_then_read_from_the_cache(folder: Path, tmp_path: Path):
    said: list[str] = []
    found = corpus.pages(CorpusRef(str(folder)), tmp_path / "data", said.append)
    assert [page.site.name for page in found] == ["chrome-example.com", "firefox-www.wikipedia.org",
                                                  "wpt-www.sitespeed.io"]
    assert said == [f"corpus: importing page {k}/3: {name}" for k, name in enumerate(sorted(SMALL), 1)]
    wiki = found[1]
    assert wiki.har == folder / "firefox-www.wikipedia.org.har"
    assert wiki.synthesized  # Firefox saved no bodies: a stand-in page
    assert wiki.traits["requests"] == len(wiki.site.recording.exchanges) and wiki.traits["origins"] >= 1
    assert wiki.traits["bytes"] > 10_000 and wiki.traits["depth"] >= 1
    assert wiki.site.root.parent == tmp_path / "data" / "sites" / ".corpus"
    again: list[str] = []
    assert [p.site.root for p in corpus.pages(CorpusRef(str(folder)), tmp_path / "data", again.append)] == [
        p.site.root for p in found]
    assert again == []  # nothing imported the second time
    # the glob names the same pages; a changed HAR is imported again, its old import removed
    (folder / "chrome-example.com.har").write_text((folder / "chrome-example.com.har").read_text().replace(
        '"Example Domain"', '"Example Domain changed"', 1) + "\n")
    changed = corpus.pages(CorpusRef(str(folder / "*.har")), tmp_path / "data", again.append)
    assert again == ["corpus: importing page 1/3: chrome-example.com.har"]
    assert changed[0].site.root != found[0].site.root and not found[0].site.root.exists()
    # without the servers' think time: another import, which says so in its recording
    wiki = corpus.pages(CorpusRef(str(folder), server_time=False), tmp_path / "data")[1]
    assert wiki.site.root != found[1].site.root and wiki.site.recording.server_time is False
    assert found[1].site.recording.server_time is True


def test_a_har_that_cannot_be_imported_is_left_out_with_a_note_naming_it(folder: Path, tmp_path: Path):
    (folder / "broken.har").write_text('{"log": {"version": "1.2", "entries": [')
    notes: list[str] = []
    found = corpus.pages(CorpusRef(str(folder)), tmp_path / "data", left_out=notes.append)
    assert len(found) == 3 and len(notes) == 1
    assert notes[0].startswith(f"corpus: {folder / 'broken.har'}: left out: ") and "\n" not in notes[0]


@pytest.mark.parametrize(("setup", "message"), [
    (lambda d: None, "corpus: {d}/*.json: matches nothing"),
    (lambda d: (d / "x.json").write_text("{}"), "corpus: {d}/*.json: matches 1 file(s), none a .har or .har.gz"),
])
def test_a_glob_without_hars_is_one_line(tmp_path: Path, setup, message):
    setup(tmp_path)
    with pytest.raises(SiteError) as error:
        corpus.pages(CorpusRef(str(tmp_path / "*.json")), tmp_path / "data")
    assert str(error.value) == message.format(d=tmp_path)


def test_a_directory_without_hars_two_files_of_one_name_or_none_importable_are_one_line(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SiteError, match=r"^corpus: .*/empty: no \*\.har or \*\.har\.gz files in it$"):
        corpus.pages(CorpusRef(str(empty)), tmp_path / "data")
    twice = tmp_path / "twice"
    twice.mkdir()
    shutil.copy(HARS / "chrome-example.com.har", twice / "Page.har")
    shutil.copy(HARS / "chrome-example.com.har", twice / "page.har")
    with pytest.raises(SiteError, match=r"are both page page \(a page is named after its file\); rename one$"):
        corpus.pages(CorpusRef(str(twice)), tmp_path / "data")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "a.har").write_text("not json")
    with pytest.raises(SiteError, match=r"none of its 1 HAR\(s\) could be imported \(the notes say why\)$"):
        corpus.pages(CorpusRef(str(bad)), tmp_path / "data")
