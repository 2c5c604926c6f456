"""Body sizes as read from a HAR (pure): `sizes.SIZE_FIELDS` in order, on the shapes
WebPageTest, Chrome/DevTools and Firefox write; 0, -1 and missing are unknown."""

from __future__ import annotations

from typing import Any

import pytest

from pagebench.core.har.parse import parse_har
from tests.core.har.hars import entry, har


def _one(**change: Any) -> Any:
    """An entry without its body, fields set by path: response__content__size=648."""
    item = entry("https://www.example.com/", text=None)
    item["response"]["content"].pop("size", None)
    for key, value in change.items():
        *where, name = key.split("__")
        target = item
        for part in where:
            target = target[part]
        target[name] = value
    return parse_har(har(item), "x.har").entries[0]


def test_webpagetest_reads_its_own_fields_before_content_size():
    # the HTTP Archive's WebPageTest entry: content.size and bodySize are the bytes sent
    got = _one(response__content__size=648, response__bodySize=648, response__headersSize=376, _bytesIn=648,
               _objectSize=648, _objectSizeUncompressed=1256, _initiator="", _initiator_type="script",
               _initiator_line="", _contentEncoding="gzip", _priority="Highest")
    assert got.size("decoded").bytes == 1256 and got.size("decoded").source == "_objectSizeUncompressed"
    assert got.size("transfer").bytes == 648 and got.size("transfer").source == "bodySize"
    assert got.content_encoding() == "gzip" and got.priority == "Highest" and got.initiator_type == "script"
    assert got.body is None  # not saved: the sizes say there was a body


def test_webpagetest_with_zero_har_sizes_reads_bytes_in_less_the_headers():
    got = _one(response__content__size=0, response__bodySize=-1, response__headersSize=300, _bytesIn=5300,
               _initiator="https://www.example.com/a.css", _initiator_type="parser", _initiator_line="12")
    assert got.size("transfer").bytes == 5000 and got.size("transfer").source == "_bytesIn - headersSize"
    assert got.size("decoded").bytes is None  # unknown, not 0
    assert got.body is None and got.initiator == "https://www.example.com/a.css" and got.initiator_type == "parser"


def test_chrome_devtools_without_content():
    got = _one(response__content__size=20000, response__bodySize=6000, response__headersSize=-1,
               response___transferSize=6400,
               _initiator={"type": "script", "url": "", "lineNumber": 3,
                           "stack": {"callFrames": [{"url": "https://www.example.com/app.js"}]}})
    assert (got.size("decoded").bytes, got.size("transfer").bytes) == (20000, 6000)
    assert got.initiator == "https://www.example.com/app.js" and got.initiator_type == "script"


def test_chrome_transfer_size_less_headers_when_body_size_is_unknown():
    got = _one(response__content__size=20000, response__bodySize=-1, response__headersSize=400,
               response___transferSize=6400)
    assert got.size("transfer").bytes == 6000 and got.size("transfer").source == "_transferSize - headersSize"


def test_firefox_has_no_underscore_fields():
    got = _one(response__content__size=9000, response__content__compression=6000, response__bodySize=-1,
               response__headersSize=-1)
    assert got.size("decoded").bytes == 9000
    assert got.size("transfer").bytes == 3000 and got.size("transfer").source == "content.size - content.compression"
    assert got.initiator is None and got.initiator_type is None


@pytest.mark.parametrize("value", [0, -1, None])
def test_zero_minus_one_and_missing_are_unknown(value):
    change = {} if value is None else {"response__content__size": value, "response__bodySize": value}
    got = _one(**change)
    assert got.size("decoded").bytes is None and got.size("transfer").bytes is None
    assert got.size("decoded").meaning == "unknown"


def test_a_saved_body_gives_its_length():
    got = parse_har(har(entry("https://www.example.com/", text="<p>12345</p>")), "x.har").entries[0]
    assert got.size("decoded").bytes == 12
