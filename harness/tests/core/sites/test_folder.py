"""A folder site's entry and the absolute URLs of its pages (pure): which URLs the page
fetches, which only a script names, which are not requests at all; each other host
served (mapped under `origins:`) or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.sites.folder import FolderRef, FoundUrl, absolute_urls, external_hosts, folder_manifest

PAGE = b"""<!DOCTYPE html><html><head>
<link rel="stylesheet" href="https://cdn.example.com/a.css">
<link rel=canonical href="https://docs.example.org/">
<link rel="alternate" type="application/rss+xml" href="https://docs.example.org/feed.xml">
<link rel="preconnect" href='https://fonts.gstatic.com'>
<style>body { background: url("https://img.example.net/bg.png") }</style>
<script src="https://cdn.example.com/lib.js" defer></script>
</head><body>
<a href="https://github.com/acme/docs">source</a>
<img src=https://img.example.net/a.png srcset="https://img.example.net/a2.png 2x, /local.png 3x">
<div style="background-image:url(https://img.example.net/c.png)"></div>
<svg xmlns="http://www.w3.org/2000/svg"></svg>
<script>fetch('https://api.example.com/v1/items?x=1'); var local = "/not/absolute";</script>
</body></html>"""


def _urls(found: list[FoundUrl]) -> list[tuple[str, bool]]:
    return sorted((f.url, f.fetched) for f in found)


def test_html_lists_what_the_page_fetches_and_what_its_scripts_name_not_links():
    assert _urls(absolute_urls("guide/index.html", PAGE)) == [
        ("https://api.example.com/v1/items?x=1", False),
        ("https://cdn.example.com/a.css", True),
        ("https://cdn.example.com/lib.js", True),
        ("https://fonts.gstatic.com", True),
        ("https://img.example.net/a.png", True),
        ("https://img.example.net/a2.png", True),
        ("https://img.example.net/bg.png", True),
        ("https://img.example.net/c.png", True),
    ]
    assert {f.file for f in absolute_urls("guide/index.html", PAGE)} == {"guide/index.html"}


def test_css_and_scripts_are_scanned_by_their_extension_and_other_files_not():
    css = b"@import 'https://fonts.example.com/css2?family=X';\n.a{background:url( https://img.example.net/x.svg )}"
    assert _urls(absolute_urls("s/site.css", css)) == [("https://fonts.example.com/css2?family=X", True),
                                                     ("https://img.example.net/x.svg", True)]
    js = b'const u = `https://api.example.com/q`; import("./chunk.js"); const n = "http://www.w3.org/2000/svg";'
    assert _urls(absolute_urls("app.mjs", js)) == [("http://www.w3.org/2000/svg", False),
                                                 ("https://api.example.com/q", False)]
    assert absolute_urls("data.json", b'{"u": "https://api.example.com/"}') == []
    assert absolute_urls("logo.png", b"https://cdn.example.com/") == []


def test_each_other_host_is_served_when_the_entry_maps_it_and_counted_once():
    ref = FolderRef("docs", Path("/srv/site"), (("cdn.example.com", Path("/srv/cdn")),))
    found = absolute_urls("index.html", PAGE) + [FoundUrl("https://docs.test/x.css", "a.css", True)]
    hosts = {h.host: h for h in external_hosts(ref, found)}
    assert list(hosts) == ["cdn.example.com", "fonts.gstatic.com", "img.example.net", "api.example.com"]
    assert hosts["cdn.example.com"].served_as == "cdn.example.com.test" and hosts["cdn.example.com"].urls == 2
    assert hosts["img.example.net"].served_as is None and hosts["img.example.net"].urls == 4
    assert hosts["api.example.com"].fetched is False and hosts["img.example.net"].fetched is True
    assert hosts["cdn.example.com"].line() == ("cdn.example.com: served as cdn.example.com.test from its folder "
                                               "(2 URL(s), fetched by the page, first in index.html)")
    assert hosts["api.example.com"].line() == ("api.example.com: not served (1 URL(s), named in a script, "
                                               "first in index.html)")


@pytest.mark.parametrize("origins", [(), (("cdn.example.com", Path("c")), ("img.example.net", Path("i")))])
def test_the_manifest_serves_the_folder_as_name_dot_test_first_then_each_mapped_host(origins):
    ref = FolderRef("docs.v2", Path("site"), origins)
    manifest = folder_manifest(ref)
    assert manifest.entry == "https://docs.v2.test/"
    assert manifest.origins == ("docs.v2.test", *(f"{host}.test" for host, _ in origins))
    assert ref.folders() == {"docs.v2.test": Path("site"), **{f"{h}.test": p for h, p in origins}}
