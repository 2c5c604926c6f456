"""The present-day page (pure): seventy requests over ten origins, blocking head
resources, cross-origin fonts, later waves, realistically compressible text."""

from __future__ import annotations

import gzip
import re

from pagebench.core.sites.builtin import builtin
from tests.core.sites.decoders import check_media


def _origin(path: str) -> str:
    return path.split("/", 1)[0]


def test_modern_is_seventy_requests_over_ten_origins_and_two_megabytes():
    site = builtin("modern")
    assert len(site.manifest.origins) == 10
    assert {_origin(p) for p in site.files} == set(site.manifest.origins)
    assert 65 <= site.requests <= 75
    assert 1_900_000 <= site.total_bytes <= 2_150_000
    for path, body in site.files.items():
        check_media(path, body)
    kinds = {p.rsplit(".", 1)[-1] for p in site.files}
    assert {"html", "css", "js", "woff", "ttf", "png", "jpg", "gif", "svg"} <= kinds


def test_modern_has_blocking_head_resources_cross_origin_fonts_and_late_waves():
    site = builtin("modern")
    html = site.files["www.modern.test/index.html"].decode()
    head = html.split("</head>")[0]
    assert '<link rel="stylesheet" href="//static.modern.test/css/main.css">' in head
    assert '<script src="//cdn.modern.test/lib/framework.js"></script>' in head  # sync: no async/defer
    css = site.files["static.modern.test/css/main.css"].decode()
    fonts = re.findall(r"url\((//[^)]+)\)", css)
    assert len(fonts) == 4 and all(u.startswith("//fonts.modern.test/") for u in fonts)
    # second wave: app.js -> late.js -> thumbs + ads.js -> ad images (third wave)
    late = site.files["static.modern.test/js/late.js"].decode()
    assert "//static.modern.test/js/late.js" in site.files["static.modern.test/js/app.js"].decode()
    thumbs = [p for p in site.files if p.startswith("thumbs.")]
    assert len(thumbs) == 12
    for path in thumbs:
        assert f"//{path}" in late and f"//{path}" not in html
    assert "//ads.modern.test/ads.js" in late
    assert "//ads.modern.test/creative/1.png" in site.files["ads.modern.test/ads.js"].decode()


def _gzip_ratio(body: bytes) -> float:
    return len(gzip.compress(body, 9)) / len(body)


def test_modern_text_is_realistically_compressible_at_exact_sizes():
    site = builtin("modern")
    sizes = {"www.modern.test/index.html": 48_000, "static.modern.test/css/main.css": 72_000,
             "static.modern.test/js/app.js": 160_000, "cdn.modern.test/lib/framework.js": 240_000,
             "img.modern.test/logo.svg": 6_000, "analytics.modern.test/collect.gif": 43}
    assert {path: len(site.files[path]) for path in sizes} == sizes
    assert site.total_bytes == 2_030_055  # as before the text became realistic
    text = b"".join(body for path, body in site.files.items() if path.endswith((".html", ".css", ".js")))
    assert 0.25 <= _gzip_ratio(text) <= 0.42
    assert _gzip_ratio(site.files["static.modern.test/css/main.css"]) < 0.35
