"""A recorded body's extension from its Content-Type (pure): what the servers' MIME and
sidecar rules and the measurements go by."""

from __future__ import annotations

import pytest

from pagebench.core.har.mime import extension


@pytest.mark.parametrize(("mime", "ext"), [
    ("text/html; charset=utf-8", "html"), ("application/xhtml+xml", "html"), ("TEXT/CSS", "css"),
    ("application/x-javascript", "js"), ("text/ecmascript", "js"), ("application/ld+json", "json"),
    ("image/svg+xml", "svg"), ("application/atom+xml", "xml"), ("image/jpeg", "jpg"),
    ("image/vnd.microsoft.icon", "ico"), ("font/woff2", "woff2"), ("application/font-woff", "woff"),
    ("application/x-font-truetype", "ttf"), ("application/octet-stream", "bin"),
])
def test_extension_follows_the_content_type(mime: str, ext: str):
    assert extension(mime) == ext


def test_without_a_content_type_chromes_resource_type_says():
    assert extension("", "script") == "js" and extension("", "stylesheet") == "css"
    assert extension("", None) == "bin"
    assert extension("application/octet-stream", "script") == "bin"  # a Content-Type, even unknown, wins
