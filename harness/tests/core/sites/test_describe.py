"""The summary `site show` prints (pure): of a built-in site from its files, of an
imported one from its recording and the sizes on disk."""

from __future__ import annotations

from pathlib import Path

from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.describe import describe
from pagebench.core.sites.model import Site
from tests.core.har.hars import PAGES, chrome_har, imported


def test_describe_a_built_in_site():
    generated = builtin("modern")
    summary = describe(generated)
    assert summary.requests == len(generated.files)
    assert summary.bytes == generated.total_bytes
    assert summary.depth == max(generated.levels.values()) and dict(summary.levels)[0] == 1
    assert sum(s.requests for s in summary.types) == summary.requests
    assert [o.name for o in summary.origins] == list(generated.origins)


def test_describe_an_imported_site():
    site = imported(*chrome_har(), pages=PAGES)
    on_disk = Site(site.manifest, Path("/nowhere"), site.recording)
    summary = describe(on_disk, {path: len(b) for path, b in site.files.items()})
    assert summary.source == 'x.har, page 1 of 2 (page_1 "x")'
    assert summary.requests == len(site.recording.exchanges) and summary.bytes == site.total_bytes
    assert {o.name: o.original for o in summary.origins}["cdn.example.com.test"] == "cdn.example.com"
    assert summary.depth == 3 and dict(summary.levels) == {0: 1, 1: 2, 2: 2, 3: 1}
    assert {s.name for s in summary.types} == {"html", "css", "js", "font", "json", "image"}
