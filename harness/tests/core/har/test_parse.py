"""Parsing a HAR (pure): one-line errors naming the file and the field for anything
malformed, pages ranked by start, text bodies stored in their declared charset."""

from __future__ import annotations

import json

import pytest

from pagebench.core.har.parse import HarError, parse_har
from tests.core.har.hars import T0, body, entry, har, imported, iso


def _with(change) -> str:
    data = json.loads(har(entry("https://www.example.com/", text="<p>x</p>"),
                          entry("https://www.example.com/a.css", mime="text/css", text="a{}", at=0.1)))
    change(data)
    return json.dumps(data)


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "x.har: not JSON (Expecting property name enclosed in double quotes: line 1 column 2)"),
    (b'{"log": "caf\xe9"}', "x.har: not UTF-8 text (byte 12, 0xE9, at line 1 column 13); a HAR is JSON: save it as "
                             "UTF-8 (or UTF-16/UTF-32 with a byte-order mark)"),
    (b"", "x.har: empty (a HAR is a JSON object with `log`)"),
    (" \n", "x.har: empty (a HAR is a JSON object with `log`)"),
    ("[1, 2]", "x.har: not a HAR file (the top level must be an object with `log`, not a list)"),
    ("{}", "x.har: log: missing"),
    ('{"log": {"entries": {}}}', "x.har: log.entries: must be a list, not an object"),
    ('{"log": {"entries": []}}', "x.har: no entries (log.entries is empty)"),
    (har(entry("data:text/plain,hi", text="hi"), entry("blob:https://a.com/1")),
     "x.har: no entries with an http(s) URL (only data:, blob:)"),
    (_with(lambda d: d["log"]["entries"][1]["response"].pop("status")),
     "x.har: log.entries[1].response.status: missing"),
    (_with(lambda d: d["log"]["entries"][1]["response"].update(status="200")),
     "x.har: log.entries[1].response.status: must be an integer, not a string"),
    (_with(lambda d: d["log"]["entries"][1]["response"].update(status=True)),
     "x.har: log.entries[1].response.status: must be an integer, not a boolean"),
    (_with(lambda d: d["log"]["entries"][0]["request"].pop("url")), "x.har: log.entries[0].request.url: missing"),
    (_with(lambda d: d["log"]["entries"][0]["response"]["headers"].append({"name": "x", "value": 3})),
     "x.har: log.entries[0].response.headers[2].value: must be a string, not a number"),
    (_with(lambda d: d["log"]["entries"][1].update(startedDateTime="yesterday")),
     "x.har: log.entries[1].startedDateTime: not an ISO 8601 date and time ('yesterday')"),
    (_with(lambda d: d["log"]["entries"][1]["response"]["content"].update(encoding="gzip")),
     "x.har: log.entries[1].response.content.encoding: 'gzip': only base64 (or none) is defined"),
    (_with(lambda d: d["log"]["entries"][1]["response"]["content"].update(encoding="base64", text="abc")),
     "x.har: log.entries[1].response.content.text: not valid base64"),
    (_with(lambda d: d["log"]["entries"][1]["request"].update(url="https://a.com:99999/")),
     "x.har: log.entries[1].request.url: Port out of range 0-65535 ('https://a.com:99999/')"),
    (_with(lambda d: d["log"]["entries"][1]["request"].update(url="https://[a.com/")),
     "x.har: log.entries[1].request.url: Invalid IPv6 URL ('https://[a.com/')"),
    (_with(lambda d: d["log"].update(pages=[3])), "x.har: log.pages[0]: must be an object, not a number"),
])
def test_malformed_hars_are_one_line_errors(text, message):
    with pytest.raises(HarError) as caught:
        parse_har(text, "x.har")
    assert str(caught.value) == message


def test_the_first_page_is_the_first_to_start():
    pages = [{"id": "b", "startedDateTime": iso(T0 + 10)}, {"id": "a", "startedDateTime": iso(T0)}]
    site = imported(entry("https://one.example.com/", text="1", pageref="b", at=10),
                    entry("https://two.example.com/", text="2", pageref="a"), pages=pages)
    assert site.manifest.entry == "https://two.example.com.test/"
    assert [e.url for e in site.recording.exchanges] == ["https://two.example.com.test/"]


def test_text_in_a_declared_charset_is_stored_in_it():
    site = imported(entry("https://www.example.com/", mime="text/html; charset=iso-8859-1", text="<p>café €</p>"),
                    entry("https://www.example.com/z.txt", mime="text/plain; charset=iso-8859-1", text="中", at=0.1))
    assert body(site, "https://www.example.com.test/") == "<p>café €</p>".encode("cp1252")
    assert body(site, "https://www.example.com.test/z.txt") == "中".encode()
    z = next(e for e in site.recording.exchanges if e.path == "/z.txt")
    assert z.content_type == "text/plain; charset=utf-8"
    assert any("stored as UTF-8" in w for w in site.warnings)


@pytest.mark.parametrize(("version", "message"), [
    ("2.0", "x.har: log.version: '2.0' is not a HAR version pagebench reads (1.1 or 1.2; none means 1.1)"),
    ("1.3", "x.har: log.version: '1.3' is not a HAR version pagebench reads (1.1 or 1.2; none means 1.1)"),
    (1.2, "x.har: log.version: a number is not a HAR version pagebench reads (1.1 or 1.2; none means 1.1)"),
])
def test_a_har_of_another_version_is_refused(version, message):
    with pytest.raises(HarError) as caught:
        parse_har(_with(lambda d: d["log"].update(version=version)), "x.har")
    assert str(caught.value) == message


@pytest.mark.parametrize("version", ["1.1", "1.2", "", None])
def test_har_1_1_1_2_and_no_version_are_read(version):
    text = _with(lambda d: d["log"].pop("version") if version is None else d["log"].update(version=version))
    assert [e.url for e in parse_har(text, "x.har").entries] == ["https://www.example.com/",
                                                                  "https://www.example.com/a.css"]


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf_8_16_and_32_text_is_read(encoding):
    """UTF-16 and UTF-32 with a byte-order mark (`utf-16`, `utf-32`: Windows tools write
    them), or without, as JSON's first characters reveal."""
    text = _with(lambda d: d["log"]["entries"][0]["response"]["content"].update(text="<p>café 中</p>"))
    assert parse_har(text.encode(encoding), "x.har") == parse_har(text, "x.har")
    assert parse_har(text.encode(encoding), "x.har").entries[0].body == "<p>café 中</p>".encode()


def test_text_in_another_encoding_is_refused_naming_the_byte():
    text = _with(lambda d: d["log"]["entries"][0]["response"]["content"].update(text="\n<p>café</p>"))
    latin1 = json.dumps(json.loads(text), indent=1, ensure_ascii=False).encode("latin-1")
    at = latin1.index(b"\xe9")
    line = latin1[:at].count(b"\n") + 1
    column = at - latin1[:at].rindex(b"\n")
    with pytest.raises(HarError) as caught:
        parse_har(latin1, "x.har")
    assert str(caught.value) == (f"x.har: not UTF-8 text (byte {at}, 0xE9, at line {line} column {column}); a HAR is "
                                 "JSON: save it as UTF-8 (or UTF-16/UTF-32 with a byte-order mark)")
    with pytest.raises(HarError, match=r"^x.har: not UTF-16 text \(byte 6\); a HAR is JSON: UTF-8, or UTF-16 or "
                                       r"UTF-32 with a byte-order mark$"):
        parse_har("{}".encode("utf-16") + b"\x00\xd8\x00\x00", "x.har")  # a lone surrogate


TEXT = _with(lambda d: d["log"]["entries"][1]["response"]["content"].update(text='a{content: "}{[\\"x"}'))


@pytest.mark.parametrize(("cut", "inside"), [
    (TEXT.index('"a{content'), "log.entries[1].response.content.text (1 whole entries before it)"),  # in a string
    (TEXT.index('"a{content') + 15, "log.entries[1].response.content.text (1 whole entries before it)"),
    (TEXT.index('"entries"') + 4, "log"),  # in a key
    (TEXT.index('"entries"') + 12, "log.entries[0] (0 whole entries before it)"),
    (TEXT.index('"startedDateTime"', TEXT.index('"startedDateTime"') + 1),
     "log.entries[1] (1 whole entries before it)"),  # at the start of the second entry
    (len(TEXT) - 1, "log"),
])
def test_json_cut_short_says_where_it_ends(cut, inside):
    text = TEXT[:cut]
    with pytest.raises(HarError) as caught:
        parse_har(text, "x.har")
    assert str(caught.value) == (f"x.har: JSON cut short: the text ends at line 1 column {len(text.rstrip()) + 1} "
                                 f"inside {inside}; the file is incomplete (copy or export it again)")


def test_non_http_entries_are_kept_apart_with_their_page():
    pages = [{"id": "p", "startedDateTime": iso(T0)}]
    log = parse_har(har(entry("https://www.example.com/", text="x", pageref="p"),
                        entry("data:,x", pageref="p"), entry("WSS://a.example.com/s", 101, pageref="p"),
                        entry("chrome-extension://abc/x.js"), entry("/relative", at=1), pages=pages), "x.har")
    assert [(s.index, s.scheme, s.page) for s in log.skipped] == [
        (1, "data", 0), (2, "wss", 0), (3, "chrome-extension", None), (4, "", None)]
    assert log.requests(0) == 3 and log.creator == "test" and log.bodies
