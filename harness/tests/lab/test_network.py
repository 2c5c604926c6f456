"""The browser driver, pure: what a page's Link header announces. Real Chromium (the
wrapper, priming with dictionaries, a delta) is `test_browser_e2e.py`'s; deterministic
pages and replayed loads are `test_browser_replay.py`'s."""

from __future__ import annotations

from pagebench.lab.network import dictionary_links

PAGE = "https://www.s.test/"


def test_dictionary_links_reads_every_announced_dictionary():
    headers = {"LINK": '<https://www.s.test/a.css.pbdict>; rel="compression-dictionary", '
                       '</b.js.pbdict>; rel=compression-dictionary\n<https://www.s.test/x.css>; rel=preload; as=style'}
    assert dictionary_links(headers, PAGE) == ["https://www.s.test/a.css.pbdict", "https://www.s.test/b.js.pbdict"]
    assert dictionary_links({"content-type": "text/html"}, PAGE) == []
