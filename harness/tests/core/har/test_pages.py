"""Which page of a HAR is imported (pure): WebPageTest's runs and views and browsertime's
iterations as pages, the default (first view of the first run, else the first page),
`--page` by id, title, a start of a title or number, and the one-line refusals that list
the pages; entries without a pageref in a HAR of one page or of several."""

from __future__ import annotations

import json

import pytest

from pagebench.core.har.importer import import_har
from pagebench.core.har.pages import choose_page, default_page, find_page
from pagebench.core.har.parse import HarError, HarPage, parse_har
from tests.core.har.hars import T0, entry, har, iso
from tests.core.har.shapes import PAGE_URL, browsertime_shape, webpagetest_shape


def _parse(data: dict) -> object:
    return parse_har(json.dumps(data), "wpt.har")


def test_webpagetest_runs_and_views_are_pages_and_the_first_view_of_run_1_is_the_default():
    log = _parse(webpagetest_shape(runs=2, bodies=True))
    assert [(p.id, p.run, p.repeat, p.step) for p in log.pages] == [
        ("page_1_0_1", 1, False, 1), ("page_1_1_1", 1, True, 1), ("page_2_0_1", 2, False, 1),
        ("page_2_1_1", 2, True, 1)]
    assert default_page(log) == 0
    site = import_har(log, "wpt", "wpt.har")
    assert site.page == 0 and site.pages == (
        f'1 page_1_0_1 "Run 1, First View for {PAGE_URL}" (5 requests)',
        f'2 page_1_1_1 "Run 1, Repeat View for {PAGE_URL}" (2 requests)',
        f'3 page_2_0_1 "Run 2, First View for {PAGE_URL}" (5 requests)',
        f'4 page_2_1_1 "Run 2, Repeat View for {PAGE_URL}" (2 requests)')
    assert site.left_out == {"of the HAR's 3 other page(s)": 9}
    assert len(site.recording.exchanges) == 5 and not site.recording.missing  # 3 text bodies WebPageTest saved
    assert site.fidelity is not None and site.fidelity.made == 2  # the image and the font: made (synth.py)


def test_the_default_is_the_first_view_of_the_first_run_whatever_the_order():
    pages = [{"id": "page_2_0_1", "title": "Run 2, First View for x", "startedDateTime": iso(T0)},
             {"id": "page_1_1_1", "title": "Run 1, Repeat View for x", "startedDateTime": iso(T0 + 10)},
             {"id": "page_1_0_1", "title": "Run 1, First View for x", "startedDateTime": iso(T0 + 20)}]
    entries = [entry(f"https://www.example.com/{i}", text="<p>x</p>", at=10 * i, pageref=p["id"])
               for i, p in enumerate(pages)]
    log = parse_har(har(*entries, pages=pages), "x.har")
    assert log.pages[default_page(log)].id == "page_1_0_1"
    assert import_har(log, "mine", "x.har").manifest.entry == "https://www.example.com.test/2"


def test_the_default_skips_a_run_that_loaded_nothing():
    data = webpagetest_shape(runs=2, bodies=True)
    data["log"]["entries"] = [e for e in data["log"]["entries"] if e["pageref"] != "page_1_0_1"]
    log = _parse(data)
    assert log.pages[default_page(log)].id == "page_2_0_1"
    first = {"pages": [{"id": "a", "startedDateTime": iso(T0)}, {"id": "b", "startedDateTime": iso(T0 + 1)}]}
    log = parse_har(har(entry("https://www.example.com/", text="x", pageref="b"), entry("data:,", pageref="a"),
                        **first), "x.har")
    assert default_page(log) == 1


@pytest.mark.parametrize(("page", "ident"), [
    ("page_2_1_1", "page_2_1_1"), (f"Run 2, Repeat View for {PAGE_URL}", "page_2_1_1"), ("4", "page_2_1_1"),
    ("run 1, repeat", "page_1_1_1"), ("1", "page_1_0_1"),
])
def test_a_page_is_named_by_id_title_start_of_title_or_number(page, ident):
    log = _parse(webpagetest_shape(runs=2, bodies=True))
    assert log.pages[find_page(log, page, "wpt.har")].id == ident


def test_a_repeat_view_imports_as_its_own_page():
    site = import_har(_parse(webpagetest_shape(runs=2, bodies=True)), "rv", "wpt.har", "Run 1, Repeat View")
    assert site.page == 1 and site.left_out == {"of the HAR's 3 other page(s)": 12}
    assert site.recording.source == f'wpt.har, page 2 of 4 (page_1_1_1 "Run 1, Repeat View for {PAGE_URL}")'
    assert not site.recording.missing  # the 304 stands in as its 200, its body made (synth.py)
    assert [(e.url, e.status) for e in site.recording.exchanges] == [
        ("https://www.example.com.test/", 200), ("https://cdn.example.com.test/app.js", 200)]


@pytest.mark.parametrize(("page", "message"), [
    ("Run 3", f"wpt.har: no page 'Run 3' (an id, a title, or 1-4); the HAR's pages: 1 page_1_0_1 \"Run 1, First "
              f"View for {PAGE_URL}\" (5 requests); 2 page_1_1_1"),
    ("9", "wpt.har: no page '9' (an id, a title, or 1-4)"),
    ("Run 1", "wpt.har: page 'Run 1': the start of the titles of 2 pages; name one by id or number: 1 page_1_0_1 "
              "\"Run 1, First View "
              f"for {PAGE_URL}\" (5 requests); 2 page_1_1_1"),
])
def test_a_page_that_is_not_there_is_one_line_listing_the_pages(page, message):
    with pytest.raises(HarError) as caught:
        import_har(_parse(webpagetest_shape(runs=2, bodies=True)), "x", "wpt.har", page)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


def test_many_pages_are_named_up_to_eight_in_a_refusal():
    log = _parse(webpagetest_shape(runs=6, bodies=True))
    with pytest.raises(HarError, match=r"; 8 page_4_1_1 \"Run 4, Repeat View for \S+\" \(2 requests\); and 4 more$"):
        find_page(log, "nope", "wpt.har")


def test_browsertime_iterations_are_pages_and_the_first_is_the_default():
    log = parse_har(json.dumps(browsertime_shape(runs=3, bodies="html")), "bt.har")
    assert [p.id for p in log.pages] == ["page_1", "page_2", "page_3"]
    assert all(p.run is None and p.title == PAGE_URL for p in log.pages)
    site = import_har(log, "bt", "bt.har")
    assert site.page == 0 and site.left_out == {"of the HAR's 2 other page(s)": 10}
    assert len(site.recording.exchanges) == 5 and not site.recording.missing  # html bodies only: the rest made
    assert site.fidelity is not None and site.fidelity.made == 4
    with pytest.raises(HarError, match=r"bt.har: page 'https://www.example.com/ ': the title of 3 pages; name one "
                                       r"by id or number: 1 page_1 "):
        import_har(log, "bt", "bt.har", PAGE_URL + " ")  # a title three pages share: name it by id or number


def test_entries_without_a_pageref_belong_to_the_one_page_or_are_left_out_among_several():
    one = [{"id": "p", "startedDateTime": iso(T0), "title": "t"}]
    entries = [entry("https://www.example.com/", text="<p>x</p>", pageref="p"),
               entry("https://www.example.com/a.css", mime="text/css", text="a{}", at=0.1),
               entry("data:,x", text="x", at=0.1)]
    site = import_har(parse_har(har(*entries, pages=one), "x.har"), "mine", "x.har")
    assert len(site.recording.exchanges) == 2 and site.pages == ('1 p "t" (1 request)',)
    assert site.left_out == {"data: URLs (inline data: no server is asked)": 1}
    two = one + [{"id": "q", "startedDateTime": iso(T0 + 5), "title": "u"}]
    site = import_har(parse_har(har(*entries, pages=two), "x.har"), "mine", "x.har")
    assert [e.path for e in site.recording.exchanges] == ["/"]
    assert site.left_out == {"name no page (no pageref) in a HAR of 2 pages: whose they are is unknown": 2}


def test_a_har_of_no_pages_is_one_page():
    log = parse_har(har(entry("https://www.example.com/", text="<p>x</p>")), "m.har")
    assert log.pages == () and choose_page(log, "m.har").page is None
    assert choose_page(log, "m.har", "1").entries == log.entries
    with pytest.raises(HarError, match=r"^m.har: page 'x': the HAR lists no pages \(its requests are one page, 1\)$"):
        choose_page(log, "m.har", "x")


def test_a_pageref_no_page_lists_is_a_page_of_its_own_after_the_listed_ones():
    pages = [{"id": "p", "startedDateTime": iso(T0 + 1), "title": "t"}]
    log = parse_har(har(entry("https://www.example.com/", text="<p>x</p>", pageref="p", at=1),
                        entry("https://www.example.com/other", text="<p>y</p>", pageref="ghost"),
                        pages=pages), "x.har")
    assert log.pages == (HarPage("p", "t"), HarPage("ghost", ""))
    assert import_har(log, "mine", "x.har", "ghost").manifest.entry == "https://www.example.com.test/other"


def test_a_page_without_http_requests_is_refused_naming_it():
    pages = [{"id": "p", "startedDateTime": iso(T0), "title": "t"}, {"id": "q", "startedDateTime": iso(T0 + 1)}]
    log = parse_har(har(entry("https://www.example.com/", text="<p>x</p>", pageref="p"),
                        entry("data:,x", text="x", pageref="q", at=1), pages=pages), "x.har")
    with pytest.raises(HarError, match=r"^x.har: page 2 q \(1 request\) has no http\(s\) request; the HAR's pages: "
                                       r"1 p \"t\" \(1 request\); 2 q \(1 request\)$"):
        import_har(log, "mine", "x.har", "q")


def test_page_ids_must_differ():
    pages = [{"id": "p", "startedDateTime": iso(T0)}, {"id": "p", "startedDateTime": iso(T0 + 1)}]
    with pytest.raises(HarError, match=r"^x.har: log.pages\[1\].id: 'p' is also log.pages\[0\]'s: page ids must "
                                       r"differ$"):
        parse_har(har(entry("https://www.example.com/", text="x", pageref="p"), pages=pages), "x.har")
