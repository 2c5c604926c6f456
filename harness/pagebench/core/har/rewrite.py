"""A recorded page's hosts renamed into the lab, in URLs and in the bodies that name them.

Every host the page touched becomes a lab host (`recording.lab_host`: `www.example.com`
-> `www.example.com.test`), so the lab's servers answer for it under the lab's TLS
authority. The names are rewritten in text bodies (HTML, CSS, JS, JSON, SVG, XML, text),
in request targets (a query carrying a URL is requested with the rewritten URL) and in the
headers that carry URLs (`headers.py`); `http://` URLs of mapped hosts become `https://`
(the lab serves TLS). In HTML, `integrity` attributes are removed (a rewritten body fails
its SRI hash) and `<meta http-equiv>` Content-Security-Policy is dropped, not rewritten:
hashes of rewritten inline scripts would no longer match, while a policy does not change
what a consistent page loads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core.har.parse import HarError
from pagebench.core.sites.recording import host_key, lab_host

#: Bodies whose hosts are rewritten (by extension, `mime.extension`).
REWRITTEN = frozenset({"html", "css", "js", "json", "svg", "xml", "txt"})
#: An `integrity` attribute of a <script> or <link> (where SRI applies), in group 2.
_INTEGRITY = re.compile(rb"""(<(?:script|link)\b[^>]*?)(\s+integrity\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))""",
                        re.IGNORECASE)
_META_CSP = re.compile(rb"""<meta\b[^>]*\bhttp-equiv\s*=\s*["']?content-security-policy(?:-report-only)?\b[^>]*>""",
                       re.IGNORECASE)


def _lab(url: str) -> tuple[str, str]:
    """(host key, lab host) of a URL; ValueError when the host cannot be a lab name."""
    parts = urlsplit(url)
    scheme = "https" if parts.scheme.lower() in ("https", "wss") else "http"
    return host_key(url), lab_host(parts.hostname or "", parts.port, scheme)


def _forms(url: str) -> list[str]:
    """How a URL's host is written in text: `host`, `host:port`, `[v6]:port`."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    shown = f"[{host}]" if ":" in host else host
    default = 443 if parts.scheme.lower() in ("https", "wss") else 80
    if parts.port not in (None, default):
        return [f"{shown}:{parts.port}"]
    return [f"{shown}:443", f"{shown}:80", shown]


class Rewriter:
    """Original hosts -> lab hosts in text, at host boundaries (`example.com` is not
    rewritten inside `example.com.au` or `myexample.com`); `http://` and JSON-escaped
    `http:\\/\\/` URLs of mapped hosts become `https://`; `%2F`-escaped URLs are rewritten too."""

    def __init__(self, forms: Mapping[str, str]) -> None:  # written form -> lab host
        self.forms = {form.lower().encode(): lab.encode() for form, lab in forms.items()}
        alternatives = b"|".join(re.escape(f) for f in sorted(self.forms, key=len, reverse=True))
        self.pattern = re.compile(
            rb"(?P<scheme>(?<![A-Za-z0-9+.-])https?:)?(?P<slashes>//|\\/\\/)?"
            rb"(?:(?<![A-Za-z0-9.-])|(?<=%2[Ff]))(?P<host>" + alternatives + rb")"
            rb"(?![A-Za-z0-9_-]|\.[A-Za-z0-9]|:[0-9])", re.IGNORECASE) if self.forms else None

    def _sub(self, match: re.Match[bytes]) -> bytes:
        scheme, slashes = match.group("scheme"), match.group("slashes") or b""
        lab = self.forms[match.group("host").lower()]
        if scheme and slashes:
            scheme = b"https:"
        return (scheme or b"") + slashes + lab

    def bytes(self, body: bytes) -> bytes:
        return self.pattern.sub(self._sub, body) if self.pattern else body

    def text(self, value: str) -> str:
        return self.bytes(value.encode("utf-8", "surrogateescape")).decode("utf-8", "surrogateescape")



@dataclass(frozen=True)
class HostMap:
    """A page's hosts in the lab: the name of each, those that cannot have one, and the
    rewriter that writes the lab's names into text."""

    hosts: dict[str, str]  # original host key (`host_key`) -> lab host
    unmappable: dict[str, str]  # original host key -> why it cannot be a lab host
    rewrite: Rewriter


def map_hosts(urls: Iterable[str], source: str) -> HostMap:
    """The hosts of the http(s) URLs among `urls` mapped into the lab, in order; a
    one-line HarError naming `source` when two hosts would be the same lab host."""
    hosts: dict[str, str] = {}
    mapped: dict[str, str] = {}  # lab host -> original host key
    forms: dict[str, str] = {}
    unmappable: dict[str, str] = {}
    for url in urls:
        if urlsplit(url).scheme.lower() not in ("http", "https") or not urlsplit(url).hostname:
            continue
        try:
            key, lab = _lab(url)
        except ValueError as error:
            unmappable[host_key(url)] = str(error)
            continue
        hosts[key] = lab
        if mapped.setdefault(lab, key) != key:
            raise HarError(f"{source}: hosts {mapped[lab]} and {key} would both be the lab host {lab}")
        for form in _forms(url):
            forms.setdefault(form, lab)
    return HostMap(hosts, unmappable, Rewriter(forms))


def rewrite_body(body: bytes, ext: str, rewrite: Rewriter) -> tuple[bytes, int, int]:
    """A body as the lab serves it: hosts mapped in a text body (`REWRITTEN`); in HTML,
    `integrity` attributes and `<meta>` CSP removed. Returns the body and how many
    integrity attributes and meta CSPs were removed."""
    if ext in REWRITTEN:
        body = rewrite.bytes(body)
    integrity = csp = 0
    if ext == "html":
        body, integrity = _INTEGRITY.subn(rb"\1", body)
        body, csp = _META_CSP.subn(b"", body)
    return body, integrity, csp
