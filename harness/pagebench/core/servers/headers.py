"""What every served response carries, whichever server sends it (nginx and Caddy must
answer alike): Cache-Control by path (HTML revalidated, the rest fresh for a day), the
common headers, the type by extension, a site's own header rules by path glob, and the
file a directory URL serves."""

from __future__ import annotations

import re
from collections.abc import Sequence

HTML_CACHE_CONTROL = "no-cache"
STATIC_CACHE_CONTROL = "max-age=86400"
#: Sent with every response besides its Cache-Control (HTML or static, above): cross-origin
#: resource timing (else sizes and protocols read as 0 and ""), and CORS for fonts.
COMMON_HEADERS = (("Timing-Allow-Origin", "*"), ("Access-Control-Allow-Origin", "*"))
MIME_TYPES = (
    ("text/html", "html htm"), ("text/css", "css"), ("text/javascript", "js mjs"),
    ("application/json", "json"), ("text/plain", "txt"), ("image/png", "png"), ("image/jpeg", "jpg jpeg"),
    ("image/gif", "gif"), ("image/svg+xml", "svg"), ("image/webp", "webp"), ("image/avif", "avif"),
    ("image/x-icon", "ico"), ("font/woff", "woff"), ("font/woff2", "woff2"), ("font/ttf", "ttf"),
    ("font/otf", "otf"),
)
#: What a directory URL serves (nginx's default `index`, Caddy's `index_names`).
INDEX = "index.html"


def glob_regex(glob: str) -> str:
    """A site's path glob as an anchored nginx (PCRE) regex: `*` stays within one path
    segment, `**` crosses segments, `?` is one character."""
    out, i = ["^"], 0
    while i < len(glob):
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        ch = glob[i]
        out.append("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out) + "$"


def merged(base: Sequence[tuple[str, str]], rule: dict[str, str]) -> list[tuple[str, str]]:
    """`base` with a site rule's headers replacing same-named ones (any case), the rule's last."""
    override = {name.lower() for name in rule}
    return [(n, v) for n, v in base if n.lower() not in override] + list(rule.items())
