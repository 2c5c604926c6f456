"""The response headers a recorded exchange replays, cleaned so the lab's servers can
render them.

Only the headers in `KEPT_HEADERS` are replayed: they change how a page loads (caching,
CORS, preloads, timing visibility, cross-origin isolation). What the lab's servers make
themselves (Content-Length, Content-Encoding, ETag, Last-Modified, Date, ...) is dropped
without a word, everything else (cookies, HSTS, Alt-Svc, Server, Via, CDN noise,
Content-Security-Policy, whose report-uri would leave the lab) is dropped and counted.
An `Expires` becomes `Cache-Control: max-age` relative to the recorded Date when there is
no Cache-Control; `Vary` loses `Accept-Encoding` (the servers handle encodings). Values
must survive the servers' config renderers: printable ASCII without `"`, backslash or
`$`; quoted tokens are unquoted, and what cannot be is dropped with a warning.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from email.utils import parsedate_to_datetime

from pagebench.core.har.parse import HarEntry
from pagebench.core.har.rewrite import Rewriter

#: The response headers replayed (lower case -> the spelling written), because they change
#: how a page loads: caching, CORS, preloads, timing visibility, service-worker scope,
#: cross-origin isolation, MIME sniffing.
KEPT_HEADERS = {name.lower(): name for name in (
    "Cache-Control", "Pragma", "Vary", "Access-Control-Allow-Origin", "Access-Control-Allow-Credentials",
    "Access-Control-Allow-Methods", "Access-Control-Allow-Headers", "Access-Control-Expose-Headers",
    "Access-Control-Max-Age", "Timing-Allow-Origin", "Link", "Service-Worker-Allowed",
    "Cross-Origin-Resource-Policy", "Cross-Origin-Opener-Policy", "Cross-Origin-Embedder-Policy",
    "X-Content-Type-Options")}
#: Made by the lab's servers themselves (or carried elsewhere: Content-Type, Location, Expires):
#: dropped without a word.
SERVER_MADE = frozenset({"content-length", "content-encoding", "transfer-encoding", "etag", "last-modified",
                         "date", "age", "connection", "keep-alive", "accept-ranges", "content-type", "location",
                         "expires", "status"})
_MAPPED = frozenset({"link", "access-control-allow-origin", "timing-allow-origin"})
_TOKEN = re.compile(r"[!#%&'*+.^_`|~0-9A-Za-z/:=?@()-]*")
_SAFE = re.compile(r"[\x20-\x7e]*")


def clean(value: str) -> str | None:
    """A value the servers can render: quoted strings unquoted where they hold no space,
    comma, semicolon or quote; None if a `"`, backslash, `$` or non-printable remains."""
    value = re.sub(r'"([^"\\\s,;$]*)"', lambda m: m.group(1) if _TOKEN.fullmatch(m.group(1)) else m.group(0),
                   value.strip())
    if not _SAFE.fullmatch(value) or any(ch in value for ch in '"\\$'):
        return None
    return value


def _link(value: str, rewrite: Rewriter, warn: Callable[[str], None], url: str) -> str | None:
    """A Link header, hosts mapped; a link-value that cannot be rendered is left out."""
    kept = []
    for item in re.findall(r'<[^>]*>(?:[^,"]|"[^"]*")*', rewrite.text(value)):
        cleaned = clean(item)
        if cleaned is None:
            warn(f"{url}: Link {item.strip()[:80]!r} left out (a quoted value the servers cannot render)")
        else:
            kept.append(cleaned)
    return ", ".join(kept) or None


def replayed_headers(entry: HarEntry, rewrite: Rewriter, warn: Callable[[str], None],
                      dropped: Counter[str]) -> dict[str, str]:
    """The response headers an exchange replays (`KEPT_HEADERS`), cleaned and mapped."""
    values: dict[str, list[str]] = {}
    for name, value in entry.response_headers:
        key = name.lower()
        if key in KEPT_HEADERS:
            values.setdefault(key, []).append(value)
        elif key not in SERVER_MADE:
            dropped[key] += 1
    out: dict[str, str] = {}
    for key, parts in values.items():
        value = ", ".join(part.strip() for part in parts if part.strip())
        if key == "cache-control":  # no-cache="Set-Cookie, X" -> no-cache (stricter, renderable)
            value = re.sub(r'=\s*"[^"]*[\s,;\\$][^"]*"', "", value)
        if key == "vary":
            value = ", ".join(t for t in (s.strip() for s in value.split(",")) if t and t.lower() != "accept-encoding")
        if key == "link":
            cleaned = _link(value, rewrite, warn, entry.url)
        else:
            cleaned = clean(rewrite.text(value) if key in _MAPPED else value)
            if cleaned is None and value:
                warn(f"{entry.url}: {KEPT_HEADERS[key]} dropped (its value has a quote, backslash, $ or "
                     "non-ASCII character the servers cannot render)")
        if cleaned:
            out[KEPT_HEADERS[key]] = cleaned
    expires = entry.header("expires")
    if expires is not None and "Cache-Control" not in out:
        out["Cache-Control"] = f"max-age={_max_age(expires, entry.header('date'), entry.started)}"
    return out


def _max_age(expires: str, date: str | None, started: float) -> int:
    """Expires as seconds after the recorded Date (the request's start without one); an
    invalid Expires means already expired (RFC 9111 5.3)."""
    try:
        until = parsedate_to_datetime(expires).timestamp()
    except (TypeError, ValueError, IndexError):
        return 0
    now = started
    if date:
        try:
            now = parsedate_to_datetime(date).timestamp()
        except (TypeError, ValueError, IndexError):
            pass
    return max(0, int(until - now))


def content_type(entry: HarEntry, warn: Callable[[str], None]) -> str | None:
    """The Content-Type an exchange replays (None: none, or one the servers cannot render)."""
    value = entry.header("content-type") or entry.mime_type
    if not value or value == "x-unknown":
        return None
    if entry.recoded:
        value = re.sub(r"charset\s*=\s*\"?[^;\"]*\"?", "charset=utf-8", value, flags=re.IGNORECASE)
        warn(f"{entry.url}: its text does not fit its declared charset; stored as UTF-8")
    cleaned = clean(value)
    if cleaned is None:
        warn(f"{entry.url}: Content-Type {value[:60]!r} dropped (the servers cannot render it)")
    return cleaned

