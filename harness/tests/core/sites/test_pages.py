"""What generated pages are made of (pure): the HTML frame padded to an exact size with
prose, and a manifest whose entry is on the first origin."""

from __future__ import annotations

import pytest

from pagebench.core.sites.model import SiteError
from pagebench.core.sites.pages import html_page, manifest


def test_a_page_is_padded_to_exactly_its_size_with_prose_in_its_body():
    bare = html_page("t", ['<link rel="stylesheet" href="/a.css">'], ["<p>hi</p>"])
    page = html_page("t", ['<link rel="stylesheet" href="/a.css">'], ["<p>hi</p>"], 5_000, "t")
    assert len(page) == 5_000 and page.startswith(bare.removesuffix(b"</body>\n</html>\n"))
    assert b'<link rel="icon" href="data:,">' in page and page.endswith(b"</body>\n</html>\n")
    assert page == html_page("t", ['<link rel="stylesheet" href="/a.css">'], ["<p>hi</p>"], 5_000, "t")
    with pytest.raises(SiteError, match=r"^html_bytes: at least \d+ for this page \(got 100\)$"):
        html_page("t", [], [], 100)


def test_a_manifest_enters_on_the_first_origin():
    made = manifest("mine", ["www.mine.test", "img.mine.test"])
    assert made.entry == "https://www.mine.test/" and made.origins == ("www.mine.test", "img.mine.test")
