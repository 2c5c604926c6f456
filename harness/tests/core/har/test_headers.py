"""The replayed response headers (pure): an allow-list, cleaned for the servers'
renderers, URLs mapped into the lab, Expires turned into max-age."""

from __future__ import annotations

from email.utils import formatdate

from tests.core.har.hars import T0, entry, imported


def test_replayed_headers_are_an_allow_list_cleaned_and_mapped():
    date = formatdate(T0, usegmt=True)
    site = imported(
        entry("https://www.example.com/", text="<p>x</p>", headers=[
            ("Link", '<https://cdn.example.com/s.css>; rel="preload"; as="style"'),
            ("link", '<https://cdn.example.com/f.woff2>; rel=preload; as=font; type="font/woff2"; crossorigin'),
            ("Link", '<https://cdn.example.com/m.css>; rel="preload"; media="(min-width: 600px)"'),
            ("Content-Security-Policy", "default-src 'self'"), ("Strict-Transport-Security", "max-age=1"),
            ("Vary", "Accept-Encoding, Origin"), ("Date", date), ("Expires", formatdate(T0 + 3600, usegmt=True)),
            ("X-Odd", "ok"), ("Access-Control-Allow-Headers", "$weird")]),
        entry("https://cdn.example.com/s.css", mime="text/css", text="a{}", at=0.1, headers={
            "Access-Control-Allow-Origin": "https://www.example.com", "Timing-Allow-Origin": "http://www.example.com",
            "Cache-Control": 'public, max-age=60, no-cache="Set-Cookie, X-A", private="y"', "Expires": "0",
            "Vary": "accept-encoding",
            "Cross-Origin-Embedder-Policy": 'require-corp; report-to="coep"'}),
        entry("https://cdn.example.com/f.woff2", mime="font/woff2", text=b"wOF2", at=0.1, headers={"Expires": "-1"}),
    )
    page, css, font = site.recording.exchanges
    assert page.headers == {
        "Link": "<https://cdn.example.com.test/s.css>; rel=preload; as=style, "
                "<https://cdn.example.com.test/f.woff2>; rel=preload; as=font; type=font/woff2; crossorigin",
        "Vary": "Origin", "Cache-Control": "max-age=3600"}
    assert css.headers == {"Access-Control-Allow-Origin": "https://www.example.com.test",
                           "Timing-Allow-Origin": "https://www.example.com.test",
                           "Cache-Control": "public, max-age=60, no-cache, private=y",
                           "Cross-Origin-Embedder-Policy": "require-corp; report-to=coep"}
    assert font.headers == {"Cache-Control": "max-age=0"}  # an invalid Expires: already expired
    assert site.dropped_headers["content-security-policy"] == 1
    assert site.dropped_headers["strict-transport-security"] == 1 and site.dropped_headers["x-odd"] == 1
    assert not {"date", "expires", ":status", "content-type"} & set(site.dropped_headers)
    assert any("m.css" in w and "Link" in w for w in site.warnings)
    assert any("Access-Control-Allow-Headers dropped" in w for w in site.warnings)
    for exchange in site.recording.exchanges:
        for value in exchange.headers.values():
            assert value.isascii() and value.isprintable() and not set(value) & set('"\\$')
