"""A corpus entry: parsed and anchored (`test_kinds`), and each HAR file's site name."""

from __future__ import annotations

import pytest

from pagebench.core.sites.corpus import is_har, page_name, traits
from pagebench.core.sites.model import SITE_NAME


@pytest.mark.parametrize(("filename", "name"), [
    ("wpt-www.nytimes.com.har.gz", "wpt-www.nytimes.com"),
    ("browsertime-www.wikipedia.org.har", "browsertime-www.wikipedia.org"),
    ("My Page (2024).HAR", "my-page-2024"),
    ("_hidden.har", "hidden"),
    ("ünïcode.har", "n-code"),
    ("!!!.har", "page"),
    ("a" * 100 + ".har", "a" * 80),
])
def test_a_page_is_named_after_its_file_under_the_site_name_rules(filename, name):
    assert page_name(filename) == name
    assert SITE_NAME.match(page_name(filename))


def test_hars_are_told_by_their_suffix_compressed_or_not():
    assert is_har("a.har") and is_har("a.HAR.gz") and not is_har("a.json") and not is_har("a.har.zip")


def test_traits_are_kept_in_the_order_the_report_shows_them():
    assert list(traits(10, 2, 3000, 4).items()) == [("requests", 10), ("origins", 2), ("bytes", 3000), ("depth", 4)]
