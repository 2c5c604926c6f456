"""Hosts renamed into the lab (pure): in text bodies at host boundaries, in escaped and
scheme-relative URLs, with ports and IP literals; SRI and meta CSP taken out of HTML."""

from __future__ import annotations

from tests.core.har.hars import PNG, body, chrome_har, entry, imported


def test_text_bodies_are_rewritten_at_host_boundaries():
    site = imported(*chrome_har())
    html = body(site, "https://www.example.com.test/").decode()
    assert "https://cdn.example.com.test/site.css" in html
    assert "//cdn.example.com.test/app.js" in html
    assert "https://www.example.com.test/about" in html  # http:// becomes https://
    assert "https://cdn.example.com.au/x" in html and "https://mycdn.example.com/x" in html
    assert "https%3A%2F%2Fwww.example.com.test%2F" in html
    assert 'sha384' not in html and "sha256-def" not in html and site.integrity_removed == 2
    assert '<p>integrity = "ours"</p>' in html  # prose, not an attribute of a script or link
    assert "Content-Security-Policy" not in html and "crossorigin" in html
    assert body(site, "https://cdn.example.com.test/site.css") == (
        b"@font-face{src:url(https://fonts.example.com.test/f.woff2)}")
    assert body(site, "https://cdn.example.com.test/app.js") == b'fetch("https:\\/\\/api.example.com.test\\/data.json")'
    assert b"https://img.example.com.test/a.png" in body(site, "https://api.example.com.test/data.json")
    # a query carrying a URL is requested with the rewritten URL: the target is recorded so
    assert site.recording.lookup("www.example.com.test", "/") is not None


def test_ports_and_ip_hosts_get_their_own_lab_hosts():
    page = ("<script src='https://www.example.com:8443/a.js'></script><img src='http://10.1.2.3:8080/i.png'>"
            "<img src='https://www.example.com/b.png'> https://www.example.com:9999/not-recorded")
    site = imported(entry("https://www.example.com/", text=page),
                    entry("https://www.example.com:8443/a.js", mime="text/javascript", text="1", at=0.1),
                    entry("http://10.1.2.3:8080/i.png", mime="image/png", text=PNG, at=0.1))
    assert site.recording.hosts == {"www.example.com": "www.example.com.test",
                                    "www.example.com:8443": "p8443.www.example.com.test",
                                    "10.1.2.3:8080": "p8080.ip-10-1-2-3.test"}
    html = body(site, "https://www.example.com.test/").decode()
    assert "https://p8443.www.example.com.test/a.js" in html
    assert "https://p8080.ip-10-1-2-3.test/i.png" in html
    assert "https://www.example.com.test/b.png" in html
    assert "https://www.example.com:9999/not-recorded" in html  # another origin, not in the HAR
