"""Seed 001's real page history (pure): the archive holds what the rule says, and each
built-in pair serves instance k - 1 as version 1 and instance k as version 2."""

from __future__ import annotations

from importlib import resources

import pytest

from pagebench.core import encodings
from pagebench.core.sites import history
from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.model import SiteError


def test_the_archive_holds_the_last_five_instances_of_each_page():
    found = history.instances()
    assert tuple(found) == history.PAGES
    for page, instances in found.items():
        assert [i.number for i in instances] == list(range(1, history.INSTANCES + 1))
        assert [i.date for i in instances] == sorted(i.date for i in instances), page  # oldest first
        assert all(a.body != b.body for a, b in zip(instances, instances[1:])), page  # each one a change
    assert sum(len(i.body) for listed in found.values() for i in listed) == 2_833_542


def test_the_licence_and_provenance_travel_with_the_data():
    data = resources.files("pagebench.core.sites").joinpath("data")
    assert "Permission to use, copy, modify" in data.joinpath("LICENSE-toybox").read_text()
    assert "cb5b0dee" in data.joinpath("README.md").read_text()


def test_a_pair_serves_one_instance_after_the_one_before():
    site = builtin("seed001-toybox-news-3")
    path = f"{history.HOST}/news.html"
    before, after = history.instances()["news.html"][1:3]
    assert site.manifest.entry == f"https://{history.HOST}/news.html"
    assert site.version(1)[path] == before.body and site.version(2)[path] == after.body
    assert site.manifest.changed == {2: [path]}
    assert site.manifest.dictionaries == {path: encodings.available_dictionary(before.body)}


def test_names_and_content_types():
    names = history.pair_names()
    assert len(names) == len(history.PAGES) * (history.INSTANCES - 1)
    assert history.pair_of("seed001-toybox-release-4") == ("release.txt", 4)
    assert history.pair_of("seed001-a") == ("", 0) and history.pair_of("seed001-toybox-nope-2") == ("", 0)
    assert history.content_type("seed001-toybox-release-2") == "text/plain"
    assert history.content_type("seed001-toybox-faq-5") == "text/html"
    assert history.content_type("seed001-c") == ""


@pytest.mark.parametrize("page,k", [("news.html", 1), ("news.html", 6), ("nope.html", 2)])
def test_a_pair_out_of_range_is_a_one_line_error(page: str, k: int):
    with pytest.raises(SiteError, match="page must be one of"):
        history.pair(page, k)
