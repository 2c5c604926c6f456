"""A HAR file as a site of the lab (`pagebench site import-har`), and the summary numbers
`pagebench site show` prints for any site.

`parse_har` reads HAR 1.2 as Chrome DevTools, WebPageTest, browsertime, Playwright
(`record_har`, content embedded) and mitmproxy (`savehar`) write it; `import_har` turns the
first page of it into an `ImportedSite`: a manifest, a `Recording` (`core/recording.py`)
and the bodies, laid out as `lab.sitefiles.write_imported` writes them:

    site.yaml, recording.json, <lab host>/_replay/0001.css, ...

What the import changes, and why (each is counted in the result for the CLI to say):
- Hosts are mapped into the lab (`recording.lab_host`), in text bodies (HTML, CSS, JS,
  JSON, SVG, XML, text), in request targets (a query carrying a URL is requested with the
  rewritten URL), and in the Location, Link, Access-Control-Allow-Origin and
  Timing-Allow-Origin headers; `http://` URLs of mapped hosts become `https://` (the lab
  serves TLS); an `http://` -> `https://` redirect of the same URL is left out.
- `integrity` attributes are removed from HTML: a rewritten body fails its SRI hash.
- Content-Security-Policy (and -Report-Only, and `<meta http-equiv>` CSP in HTML) is
  dropped, not rewritten: hashes of rewritten inline scripts would no longer match and
  report-uri would point out of the lab, while a policy does not change what a
  consistent page loads.
- Only the response headers in `KEPT_HEADERS` are replayed; what the lab's servers make
  themselves (Content-Length, Content-Encoding, ETag, Last-Modified, Date, ...) and
  everything else (cookies, HSTS, Alt-Svc, Server, Via, CDN noise) is dropped. An
  `Expires` becomes `Cache-Control: max-age` relative to the recorded Date when there is
  no Cache-Control (else it is dropped). `Vary` loses `Accept-Encoding` (the server
  handles encodings). Values must survive the servers' config renderers: printable ASCII
  without `"`, backslash or `$`; quoted tokens are unquoted, and what cannot be is dropped
  with a warning.
- Dependency levels (what the lower bound counts round trips by): 0 for the entry
  document and its redirects; otherwise the level of what made the request + 1, from
  Chrome's `_initiator` (or WebPageTest's), else from the Referer; 1 when neither says
  (see `_levels`: without initiators the levels err low).
- Requests that cannot be replayed are listed (`Recording.missing`) and 404 in the lab:
  failed when recorded, not GET, 304 revalidations, bodies not saved, partial (206)
  responses, WebSockets. data:, blob:, chrome-extension: (any non-HTTP) URLs are skipped
  silently: the browser never asks the network for them.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from pydantic import ValidationError

from pagebench.core.errors import PagebenchError
from pagebench.core.sites.recording import (
    BODIES_DIR,
    RECORDING_FILE,
    REDIRECTS,
    Exchange,
    Recording,
    host_key,
    lab_host,
)
from pagebench.core.sites.model import SITE_NAME, GeneratedSite, Site, SiteManifest, one_line
from pagebench.core.sites.generate import builtin_sites


class HarError(PagebenchError, ValueError):
    """One line naming the HAR file and the field at fault."""


# Parsing ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class HarEntry:
    """One request of a HAR file, as the import needs it (HTTP/2 pseudo-headers removed)."""

    index: int  # its position in log.entries (for messages)
    method: str
    url: str  # without a fragment
    status: int  # 0: failed
    request_headers: tuple[tuple[str, str], ...]
    response_headers: tuple[tuple[str, str], ...]
    mime_type: str  # content.mimeType, else the Content-Type header, else ""
    body: bytes | None  # decoded; None: not saved
    started: float  # seconds since the epoch
    time_ms: float
    page: int | None = None  # which page (0: the first to start); None: no page named
    resource_type: str | None = None  # Chrome's / Playwright's `_resourceType`
    initiator: str | None = None  # URL of what made the request (parser: its document or
    #                               stylesheet; script: the top frame's script)
    redirect_url: str = ""  # response.redirectURL
    error: str | None = None  # why a request failed (`_error`)
    recoded: bool = False  # a text body not encodable in its declared charset: stored as UTF-8
    attached: str | None = None  # Playwright's `content._file`: the body is outside the HAR

    @property
    def ended(self) -> float:
        return self.started + max(self.time_ms, 0.0) / 1000

    def header(self, name: str, response: bool = True) -> str | None:
        """The first value of a header (case-insensitive), or None."""
        for key, value in self.response_headers if response else self.request_headers:
            if key.lower() == name:
                return value
        return None

    def location(self) -> str | None:
        """A redirect's absolute target: the Location header, else redirectURL."""
        target = self.header("location") or self.redirect_url
        return urljoin(self.url, target).split("#", 1)[0] if target else None


class _Reader:
    """Typed access to the decoded JSON, every error naming `where` and the field."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, path: str, message: str) -> HarError:
        return HarError(f"{self.where}: {path}: {message}")

    def get(self, obj: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...],
            default: Any = ..., name: str = "") -> Any:
        here = f"{path}.{key}" if path else key
        if key not in obj or obj[key] is None:
            if default is ...:
                raise self.fail(here, "missing")
            return default
        value = obj[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            raise self.fail(here, f"must be {name or _KIND_NAMES.get(kinds[0], kinds[0].__name__)}, "
                                  f"not {_json_type(value)}")
        return value


_KIND_NAMES = {dict: "an object", list: "a list", str: "a string", int: "an integer", float: "a number"}


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), type(value).__name__)


def parse_har(text: str | bytes, where: str) -> list[HarEntry]:
    """The HTTP(S) and WebSocket requests of a HAR file, in the order they started; a
    one-line HarError naming `where` and the field at fault for anything malformed."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise HarError(f"{where}: not UTF-8 (byte {error.start})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise HarError(f"{where}: not JSON ({error.msg}: line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise HarError(f"{where}: not JSON (nested too deep)") from None
    read = _Reader(where)
    if not isinstance(data, dict):
        raise HarError(f"{where}: not a HAR file (the top level must be an object with `log`, not "
                       f"{_json_type(data)})")
    log = read.get(data, "log", "", dict)
    entries = read.get(log, "entries", "log", list)
    pages = read.get(log, "pages", "log", list, [])
    order = _page_order(read, pages)
    parsed: list[HarEntry] = []
    for index, raw in enumerate(entries):
        entry = _entry(read, raw, index, order)
        if entry is not None:
            parsed.append(entry)
    if not entries:
        raise HarError(f"{where}: no entries (log.entries is empty)")
    if not parsed:
        raise HarError(f"{where}: no entries with an http(s) URL")
    return sorted(parsed, key=lambda e: (e.started, e.index))


def _page_order(read: _Reader, pages: list[Any]) -> dict[str, int]:
    """page id -> its rank by start (0: the first page)."""
    started: list[tuple[float, int, str]] = []
    for i, page in enumerate(pages):
        path = f"log.pages[{i}]"
        if not isinstance(page, dict):
            raise read.fail(path, f"must be an object, not {_json_type(page)}")
        ident = read.get(page, "id", path, str)
        when = read.get(page, "startedDateTime", path, str, "")
        started.append((_when(read, when, f"{path}.startedDateTime") if when else float(i), i, ident))
    return {ident: rank for rank, (_, _, ident) in enumerate(sorted(started))}


def _when(read: _Reader, text: str, path: str) -> float:
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise read.fail(path, f"not an ISO 8601 date and time ({text[:40]!r})") from None


def _headers(read: _Reader, obj: Mapping[str, Any], path: str) -> tuple[tuple[str, str], ...]:
    out = []
    for i, item in enumerate(read.get(obj, "headers", path, list, [])):
        here = f"{path}.headers[{i}]"
        if not isinstance(item, dict):
            raise read.fail(here, f"must be an object with name and value, not {_json_type(item)}")
        name = read.get(item, "name", here, str)
        value = read.get(item, "value", here, str, "")
        if not name.startswith(":"):  # HTTP/2 and HTTP/3 pseudo-headers
            out.append((name, value))
    return tuple(out)


_SCHEMES = ("http", "https", "ws", "wss")


def _entry(read: _Reader, raw: Any, index: int, order: Mapping[str, int]) -> HarEntry | None:
    path = f"log.entries[{index}]"
    if not isinstance(raw, dict):
        raise read.fail(path, f"must be an object, not {_json_type(raw)}")
    request = read.get(raw, "request", path, dict)
    url = read.get(request, "url", f"{path}.request", str).split("#", 1)[0]
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as error:
        raise read.fail(f"{path}.request.url", f"{error} ({url[:80]!r})") from None
    if parts.scheme.lower() not in _SCHEMES:
        return None  # data:, blob:, chrome-extension:, about: never reach the network
    if not parts.hostname:
        raise read.fail(f"{path}.request.url", f"no host ({url[:80]!r})")
    method = read.get(request, "method", f"{path}.request", str)
    response = read.get(raw, "response", path, dict)
    status = read.get(response, "status", f"{path}.response", int)
    started = _when(read, read.get(raw, "startedDateTime", path, str), f"{path}.startedDateTime")
    time_ms = float(read.get(raw, "time", path, (int, float), 0.0))
    response_headers = _headers(read, response, f"{path}.response")
    content = read.get(response, "content", f"{path}.response", dict, {})
    content_path = f"{path}.response.content"
    mime = read.get(content, "mimeType", content_path, str, "")
    if not mime or mime == "x-unknown":
        mime = next((v for k, v in response_headers if k.lower() == "content-type"), "")
    body, recoded = _body(read, content, content_path, mime, response)
    pageref = read.get(raw, "pageref", path, str, None)
    error = response.get("_error") or raw.get("_error")  # DevTools and mitmproxy: response._error
    return HarEntry(
        index=index, method=method.upper(), url=url, status=status,
        request_headers=_headers(read, request, f"{path}.request"), response_headers=response_headers,
        mime_type=mime, body=body, started=started, time_ms=time_ms,
        page=order.get(pageref) if pageref is not None else None,
        resource_type=raw.get("_resourceType") if isinstance(raw.get("_resourceType"), str) else None,
        initiator=_initiator(raw), redirect_url=read.get(response, "redirectURL", f"{path}.response", str, ""),
        error=error if isinstance(error, str) and error else None, recoded=recoded,
        attached=content.get("_file") if isinstance(content.get("_file"), str) else None)


def _body(read: _Reader, content: Mapping[str, Any], path: str, mime: str,
          response: Mapping[str, Any]) -> tuple[bytes | None, bool]:
    """The decoded body (None: not saved) and whether a text body had to become UTF-8."""
    text = read.get(content, "text", path, str, None)
    if text is None:
        size = read.get(content, "size", path, (int, float), -1)
        body_size = read.get(response, "bodySize", path.rsplit(".", 1)[0], (int, float), -1)
        return (None if size > 0 or body_size > 0 else b""), False
    encoding = read.get(content, "encoding", path, str, "")
    if encoding == "base64":
        try:
            return base64.b64decode(text, validate=False), False
        except (binascii.Error, ValueError):
            raise read.fail(f"{path}.text", "not valid base64") from None
    if encoding:
        raise read.fail(f"{path}.encoding", f"{encoding!r}: only base64 (or none) is defined")
    charset = _charset(mime)
    if charset and charset != "utf-8":
        try:
            return text.encode(charset), False
        except (LookupError, UnicodeEncodeError):
            return text.encode("utf-8", "replace"), True
    try:  # mitmproxy's savehar keeps undecodable bytes as surrogate escapes
        return text.encode("utf-8", "surrogateescape"), False
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace"), True


def _charset(mime: str) -> str | None:
    match = re.search(r"charset\s*=\s*\"?([A-Za-z0-9._:-]+)", mime, re.IGNORECASE)
    if not match:
        return None
    try:
        name = codecs.lookup(match.group(1)).name
    except LookupError:
        return match.group(1).lower()
    return "cp1252" if name in ("latin-1", "iso8859-1", "ascii") else name  # as browsers decode them


def _initiator(raw: Mapping[str, Any]) -> str | None:
    """The URL that made a request: Chrome's `_initiator` ({type, url, stack}: the url, else
    the top frame of the script stack), or WebPageTest's and chrome-har's string."""
    initiator = raw.get("_initiator")
    if isinstance(initiator, str):
        return initiator.split("#", 1)[0] or None
    if not isinstance(initiator, dict):
        return None
    if isinstance(initiator.get("url"), str) and initiator["url"]:
        return initiator["url"].split("#", 1)[0]
    stack = initiator.get("stack")
    while isinstance(stack, dict):
        for frame in stack.get("callFrames") or []:
            if isinstance(frame, dict) and isinstance(frame.get("url"), str) and frame["url"]:
                return frame["url"].split("#", 1)[0]
        stack = stack.get("parent")
    return None


# Hosts -----------------------------------------------------------------------------------


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


class _Rewriter:
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


# Headers ---------------------------------------------------------------------------------

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


def _clean(value: str) -> str | None:
    """A value the servers can render: quoted strings unquoted where they hold no space,
    comma, semicolon or quote; None if a `"`, backslash, `$` or non-printable remains."""
    value = re.sub(r'"([^"\\\s,;$]*)"', lambda m: m.group(1) if _TOKEN.fullmatch(m.group(1)) else m.group(0),
                   value.strip())
    if not _SAFE.fullmatch(value) or any(ch in value for ch in '"\\$'):
        return None
    return value


def _link(value: str, rewrite: _Rewriter, warn: Callable[[str], None], url: str) -> str | None:
    """A Link header, hosts mapped; a link-value that cannot be rendered is left out."""
    kept = []
    for item in re.findall(r'<[^>]*>(?:[^,"]|"[^"]*")*', rewrite.text(value)):
        cleaned = _clean(item)
        if cleaned is None:
            warn(f"{url}: Link {item.strip()[:80]!r} left out (a quoted value the servers cannot render)")
        else:
            kept.append(cleaned)
    return ", ".join(kept) or None


def _replayed_headers(entry: HarEntry, rewrite: _Rewriter, warn: Callable[[str], None],
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
            cleaned = _clean(rewrite.text(value) if key in _MAPPED else value)
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


# Bodies ----------------------------------------------------------------------------------

_EXTENSIONS = (  # (pattern of a MIME type, extension)
    (r"text/html|application/xhtml\+xml", "html"), (r"text/css", "css"),
    (r"(text|application)/(x-)?(java|ecma)script|text/jscript|application/x-javascript", "js"),
    (r"application/([a-z0-9.+-]*\+)?json|text/json", "json"), (r"image/svg\+xml", "svg"),
    (r"text/plain", "txt"), (r"(application|text)/([a-z0-9.+-]*\+)?xml", "xml"), (r"image/png", "png"),
    (r"image/jpe?g|image/pjpeg", "jpg"), (r"image/gif", "gif"), (r"image/webp", "webp"), (r"image/avif", "avif"),
    (r"image/(x-icon|vnd\.microsoft\.icon)", "ico"), (r"font/woff2|application/font-woff2", "woff2"),
    (r"font/woff|application/(x-)?font-woff", "woff"),
    (r"font/(ttf|sfnt)|application/(x-)?font-(ttf|truetype|sfnt)", "ttf"),
    (r"font/otf|application/(x-)?font-(otf|opentype)", "otf"), (r"video/mp4", "mp4"), (r"video/webm", "webm"),
)
_BY_RESOURCE_TYPE = {"document": "html", "stylesheet": "css", "script": "js"}
#: Bodies whose hosts are rewritten.
REWRITTEN = frozenset({"html", "css", "js", "json", "svg", "xml", "txt"})
#: An `integrity` attribute of a <script> or <link> (where SRI applies), in group 2.
_INTEGRITY = re.compile(rb"""(<(?:script|link)\b[^>]*?)(\s+integrity\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))""",
                        re.IGNORECASE)
_META_CSP = re.compile(rb"""<meta\b[^>]*\bhttp-equiv\s*=\s*["']?content-security-policy(?:-report-only)?\b[^>]*>""",
                       re.IGNORECASE)


def extension(mime: str, resource_type: str | None = None) -> str:
    """The body file's extension for a Content-Type (`bin` when unknown), so the servers'
    MIME and text (sidecar) rules apply to it."""
    essence = mime.split(";", 1)[0].strip().lower()
    for pattern, ext in _EXTENSIONS:
        if re.fullmatch(pattern, essence):
            return ext
    if not essence and resource_type in _BY_RESOURCE_TYPE:
        return _BY_RESOURCE_TYPE[resource_type]
    return "bin"


def _content_type(entry: HarEntry, warn: Callable[[str], None]) -> str | None:
    value = entry.header("content-type") or entry.mime_type
    if not value or value == "x-unknown":
        return None
    if entry.recoded:
        value = re.sub(r"charset\s*=\s*\"?[^;\"]*\"?", "charset=utf-8", value, flags=re.IGNORECASE)
        warn(f"{entry.url}: its text does not fit its declared charset; stored as UTF-8")
    cleaned = _clean(value)
    if cleaned is None:
        warn(f"{entry.url}: Content-Type {value[:60]!r} dropped (the servers cannot render it)")
    return cleaned


# The import --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportedSite:
    """A HAR's first page as a site directory's contents, and what the import changed."""

    manifest: SiteManifest  # recording: RECORDING_FILE
    recording: Recording
    files: Mapping[str, bytes] = field(repr=False)  # "<lab host>/_replay/0001.css" -> body
    integrity_removed: int = 0  # SRI attributes taken out of HTML
    dropped_headers: Mapping[str, int] = field(default_factory=dict)  # lower-case name -> responses
    warnings: tuple[str, ...] = ()

    @property
    def total_bytes(self) -> int:
        return sum(len(body) for body in self.files.values())


def _reserved(name: str) -> bool:
    """Names that mean a built-in or generated site to `sitefiles.resolve`."""
    return name in builtin_sites() or name.startswith(("gen-", "seed000-", "seed001-"))


def check_name(name: str) -> None:
    """A name an imported or recorded site may take, or a one-line HarError (`site record`
    asks before it spends a load)."""
    if not SITE_NAME.match(name):
        raise HarError(f"name {name!r}: must be 1-80 lower-case letters, digits, '.', '_' or '-', "
                       "starting with a letter or digit")
    if _reserved(name):
        raise HarError(f"name {name!r}: taken by a built-in or generated site; choose another")


def _why_missing(entry: HarEntry) -> str | None:
    """Why a request cannot be replayed (None: it can)."""
    if entry.status == 0 or entry.error:
        return f"failed when recorded ({entry.error or 'no response'})"
    if urlsplit(entry.url).scheme.lower() in ("ws", "wss") or entry.status == 101:
        return "a WebSocket, not replayed"
    if entry.method != "GET":
        return f"a {entry.method}: only GET requests are replayed"
    if entry.status == 304:
        return "revalidated when recorded, no body"
    if entry.status == 206:
        return "a partial (206) response: range requests are not replayed"
    if entry.status in REDIRECTS:
        return None if entry.location() else f"a {entry.status} without a Location"
    if entry.status not in (200, 203, 204) and not 400 <= entry.status <= 599:
        return f"status {entry.status} is not replayed"
    if entry.body is None and entry.status in (200, 203):
        if entry.attached:
            return f"body in a separate file ({entry.attached}); record with the content embedded"
        return "no body saved"
    return None


def _first_page(entries: list[HarEntry]) -> tuple[list[HarEntry], int]:
    """The first page's requests (and those of no page), and how many others there were."""
    pages = [e.page for e in entries if e.page is not None]
    first = min(pages) if pages else None
    chosen = [e for e in entries if e.page is None or e.page == first]
    return chosen, len(entries) - len(chosen)


def _is_html(entry: HarEntry) -> bool:
    return extension(entry.mime_type, entry.resource_type) == "html"


def _entry_chain(entries: list[HarEntry], where: str) -> list[HarEntry]:
    """The entry document's requests: the first request whose redirects (followed through
    the recorded requests) end at an HTML response, and that chain."""
    by_url: dict[str, list[HarEntry]] = {}
    for entry in entries:
        by_url.setdefault(entry.url, []).append(entry)
    for start in entries:
        if start.method != "GET" or urlsplit(start.url).scheme.lower() not in ("http", "https"):
            continue
        chain, entry = [start], start
        while entry.status in REDIRECTS and entry.location() and len(chain) < 20:
            seen = {e.index for e in chain}
            later = [e for e in by_url.get(entry.location() or "", []) if e.started >= entry.started
                     and e.index not in seen]
            if not later:
                break
            entry = later[0]
            chain.append(entry)
        if entry.status in (200, 203) and _is_html(entry):
            if entry.body is None:
                raise HarError(f"{where}: the page {entry.url}: no body saved (export the HAR with content)")
            return chain
    raise HarError(f"{where}: no HTML document among the first page's requests")


def _levels(entries: list[HarEntry], chain: list[HarEntry]) -> dict[int, int]:
    """Dependency level of each request (by index), in the order they started:
    - 0: the entry document and its redirects;
    - with an initiator (Chrome's `_initiator`: the document or stylesheet that parsed it,
      or the script at the top of the stack; WebPageTest's URL): the level of the first
      request of that URL + 1 (a document's parser -> 1, a stylesheet's font -> 2, ...);
    - without one, the Referer: a recorded URL's level + 1; an origin alone (the usual
      cross-origin Referer) means a stylesheet or document of that origin: the lowest level
      of those finished before this request started, + 1; no Referer (or no match): 1.
    Script-inserted requests without an initiator carry the document as Referer and get 1:
    the levels err low, so a lower bound made from them stays a bound."""
    levels: dict[int, int] = {e.index: 0 for e in chain}
    by_url: dict[str, int] = {e.url: 0 for e in chain}
    done: list[HarEntry] = []
    for entry in entries:
        if entry.index not in levels:
            level = 1
            if entry.initiator is not None and entry.initiator in by_url:
                level = by_url[entry.initiator] + 1
            else:
                referer = (entry.header("referer", response=False) or "").split("#", 1)[0]
                if referer in by_url:
                    level = by_url[referer] + 1
                elif referer:
                    origin = referer.rstrip("/")
                    parents = [levels[e.index] for e in done if e.url.startswith(origin + "/")
                               and e.ended <= entry.started
                               and extension(e.mime_type, e.resource_type) in ("css", "html")]
                    level = min(parents) + 1 if parents else 1
            levels[entry.index] = min(level, 64)
        by_url.setdefault(entry.url, levels[entry.index])
        done.append(entry)
    return levels


def _ascii(text: str) -> str:
    """Non-ASCII, control characters and spaces percent-encoded (as a browser sends them)."""
    return "".join(c if "\x21" <= c <= "\x7e" else "".join(f"%{b:02X}" for b in c.encode("utf-8", "replace"))
                   for c in text)


def _target(url: str) -> str:
    """Path and query as sent."""
    parts = urlsplit(url)
    return _ascii((parts.path or "/") + (f"?{parts.query}" if parts.query else ""))


def _http(url: str) -> str:
    """A WebSocket URL as the HTTP(S) URL of its origin's host (ws: -> http:, wss: -> https:)."""
    scheme, sep, rest = url.partition(":")
    return {"ws": "http", "wss": "https"}.get(scheme.lower(), scheme) + sep + rest


def import_har(entries: Iterable[HarEntry], name: str, source: str) -> ImportedSite:
    """The first page of a parsed HAR as a site called `name` (`source`: the HAR's name,
    recorded, and named in errors). Of requests for the same (lab host, target) the first
    that can be replayed is kept; the rest of `_why_missing`'s cases are listed as missing."""
    check_name(name)
    chosen, others = _first_page(sorted(entries, key=lambda e: (e.started, e.index)))
    warnings: list[str] = []

    def warn(text: str) -> None:
        if text not in warnings:
            warnings.append(text)

    if others:
        warn(f"{others} request(s) of later pages not imported (a site is the first page)")
    chain = _entry_chain(chosen, source)
    levels = _levels(chosen, chain)

    hosts: dict[str, str] = {}  # original host key -> lab host
    mapped: dict[str, str] = {}  # lab host -> original host key
    forms: dict[str, str] = {}
    unmappable: dict[str, str] = {}
    for url in [_http(e.url) for e in chosen] + [loc for e in chosen if (loc := e.location())]:
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
    rewrite = _Rewriter(forms)

    missing: dict[tuple[str, str], str] = {}
    chosen_ex: dict[tuple[str, str], Exchange] = {}
    dropped: Counter[str] = Counter()
    files: dict[str, bytes] = {}
    stored: dict[tuple[str, bytes], str] = {}  # (host, sha256) -> file
    integrity = 0
    for entry in chosen:
        key = host_key(_http(entry.url))
        if key in unmappable:
            missing.setdefault(("", entry.url), f"{_ascii(entry.url)}: its host cannot be served in the lab "
                                                f"({unmappable[key]})")
            continue
        host, target = hosts[key], rewrite.text(_target(entry.url))
        slot = (host, target)
        if slot in chosen_ex:
            continue
        why = _why_missing(entry)
        if why is not None:
            missing.setdefault(slot, f"{_ascii(entry.url)}: {why}")
            continue
        location = None
        if entry.status in REDIRECTS:
            location = _clean(rewrite.text(_ascii(entry.location() or "")))
            if not location:
                missing.setdefault(slot, f"{_ascii(entry.url)}: a {entry.status} whose Location cannot be "
                                         "rendered")
                continue
            if location == f"https://{host}{target}":
                continue  # http -> https of the same URL: the lab serves TLS already
        ext = extension(entry.mime_type, entry.resource_type)
        file = None
        body = entry.body or b""
        if entry.status in (200, 203) or (entry.status >= 400 and body):
            if ext in REWRITTEN:
                body = rewrite.bytes(body)
            if ext == "html":
                body, removed = _INTEGRITY.subn(rb"\1", body)
                integrity += removed
                body, csp = _META_CSP.subn(b"", body)
                if csp:
                    dropped["content-security-policy (meta)"] += csp
            digest = hashlib.sha256(body).digest()
            file = stored.get((host, digest))
            if file is None:
                file = f"{BODIES_DIR}/{len(stored) + 1:04d}.{ext}"
                stored[(host, digest)] = file
                files[f"{host}/{file}"] = body
        try:
            exchange = Exchange(host=host, target=target, status=entry.status, file=file,
                                content_type=_content_type(entry, warn) if file else None,
                                headers=_replayed_headers(entry, rewrite, warn, dropped),
                                location=location, level=levels[entry.index], original=entry.url)
        except ValidationError as error:
            raise HarError(str(one_line(f"{source}: log.entries[{entry.index}]", error))) from None
        chosen_ex[slot] = exchange
        missing.pop(slot, None)

    exchanges = tuple(chosen_ex.values())
    first = chain[0]
    entry_host = hosts[host_key(_http(first.url))]
    origins = [entry_host] + [lab for lab in dict.fromkeys(hosts.values()) if lab != entry_host]
    try:
        recording = Recording(source=source, hosts=hosts, exchanges=exchanges, missing=tuple(missing.values()))
        manifest = SiteManifest(name=name, entry=f"https://{entry_host}{rewrite.text(_target(first.url))}",
                                origins=tuple(origins), recording=RECORDING_FILE)
    except ValidationError as error:
        raise HarError(str(one_line(source, error))) from None
    return ImportedSite(manifest, recording, files, integrity, dict(dropped.most_common()), tuple(warnings))


# Summaries (`pagebench site show`) ---------------------------------------------------------


@dataclass(frozen=True)
class Share:
    """Requests and bytes of one origin or one kind of resource."""

    name: str
    requests: int
    bytes: int
    original: str | None = None  # an origin's host as recorded


@dataclass(frozen=True)
class SiteSummary:
    """What `pagebench site show` prints about a site."""

    name: str
    entry: str
    kind: str  # "built-in", "recorded" (imported or recorded: it has a recording), "directory"
    origins: tuple[Share, ...]
    types: tuple[Share, ...]  # by kind: html, css, js, font, image, ... most bytes first
    levels: tuple[tuple[int, int], ...]  # (dependency level, requests)
    source: str | None = None  # the HAR or URL recorded
    missing: tuple[str, ...] = ()  # requests the recording lacks (they 404)

    @property
    def requests(self) -> int:
        return sum(o.requests for o in self.origins)

    @property
    def bytes(self) -> int:
        return sum(o.bytes for o in self.origins)

    @property
    def depth(self) -> int:
        return max((level for level, _ in self.levels), default=0)


_KINDS = {"html": "html", "htm": "html", "css": "css", "js": "js", "mjs": "js", "json": "json", "xml": "xml",
          "txt": "text", "svg": "image", "png": "image", "jpg": "image", "jpeg": "image", "gif": "image",
          "webp": "image", "avif": "image", "ico": "image", "woff": "font", "woff2": "font", "ttf": "font",
          "otf": "font", "mp4": "media", "webm": "media"}
_SIDECAR = re.compile(r"\.(gz|br|zst|dcz)$")


def _kind(path: str) -> str:
    return _KINDS.get(path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else "", "other")


def describe(site: GeneratedSite | Site, sizes: Mapping[str, int] | None = None) -> SiteSummary:
    """The summary numbers of a site. A generated site carries its files; a site on disk
    needs `sizes`, "<host>/<path>" -> bytes of its files (no sidecars), which
    `lab.sitefiles.file_sizes` reads. A recorded site counts each exchange once (redirects
    and bodiless answers as their own kinds); other sites count each file as one request."""
    rows: list[tuple[str, str, int, int]] = []  # host, kind, bytes, level
    recording = site.recording if isinstance(site, Site) else None
    if recording is not None:
        sizes = sizes or {}
        for ex in recording.exchanges:
            kind = _kind(ex.file) if ex.file else ("redirect" if ex.status in REDIRECTS else "no body")
            if ex.status >= 400:
                kind = "error"
            rows.append((ex.host, kind, sizes.get(f"{ex.host}/{ex.file}", 0) if ex.file else 0, ex.level))
    else:
        files = {k: len(v) for k, v in site.files.items()} if isinstance(site, GeneratedSite) else dict(sizes or {})
        entry = urlsplit(site.entry)
        page = f"{entry.hostname}{entry.path}" + ("index.html" if entry.path.endswith("/") else "")
        for path, size in sorted(files.items()):
            if isinstance(site, Site) and _SIDECAR.search(path) and _SIDECAR.sub("", path) in files:
                continue
            level = 0 if path == page else site.level(path)
            rows.append((path.split("/", 1)[0], _kind(path), size, level))

    def shares(key: Callable[[tuple[str, str, int, int]], str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for row in rows:
            tally = out.setdefault(key(row), [0, 0])
            tally[0] += 1
            tally[1] += row[2]
        return out

    originals = {lab: original for original, lab in reversed(list(recording.hosts.items()))} if recording else {}
    by_host = shares(lambda r: r[0])
    origins = tuple(Share(h, *by_host.get(h, [0, 0]), original=originals.get(h)) for h in site.origins)
    types = tuple(sorted((Share(k, n, b) for k, (n, b) in shares(lambda r: r[1]).items()),
                         key=lambda s: (-s.bytes, s.name)))
    levels = tuple(sorted(Counter(r[3] for r in rows).items()))
    kind = "built-in" if isinstance(site, GeneratedSite) else ("recorded" if recording else "directory")
    return SiteSummary(site.name, site.entry, kind, origins, types, levels,
                       recording.source if recording else None, recording.missing if recording else ())
