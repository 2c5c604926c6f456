"""A HAR file as entries and pages: HAR 1.1 and 1.2 as Chrome DevTools, Firefox, WebPageTest
(and the HTTP Archive's crawl, made with it), browsertime/sitespeed.io, Playwright
(`record_har`) and mitmproxy (`savehar`) write it, read into a `HarLog` the import
(`importer.py`, `pages.py`) works on.

Parsing is apart from importing so that every malformed file is a one-line `HarError`
naming the file and the field at fault before any site is made. The text is JSON: UTF-8
(a byte-order mark allowed), or UTF-16/UTF-32 as JSON detects them (a byte-order mark,
or the NUL bytes around the first ASCII characters); anything else is refused naming the
first byte that is not, as is JSON cut short (naming where it ends) and a `log.version`
other than 1.1 or 1.2 (none means 1.1, as the HAR spec says). Bodies are decoded here
(base64, or text in its declared charset); without a saved text a body is unknown
(None): sizes of 0 and -1 mean "not recorded", never "empty" (a response that has no
body by HTTP's rules, a HEAD's, a 1xx or a 204, is empty); an empty text for a body
whose `content.size` is more is not saved either, and a shorter one is marked (`cut`).
The sizes themselves are read in one order of preference (`sizes.SIZE_FIELDS`).
HTTP/2 and HTTP/3 pseudo-headers are dropped. Requests that are not http(s) (data:,
blob:, ws:, wss:, chrome-extension:, ...) are kept apart (`HarLog.skipped`) for the
import to count: no server is asked for them.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import urljoin, urlsplit


from pagebench.core.errors import PagebenchError
from pagebench.core.har.sizes import SizeReading, read_size, size_fields


class HarError(PagebenchError, ValueError):
    """One line naming the HAR file and the field at fault."""


#: The HAR versions read (`log.version`; none or "" means 1.1, as the HAR spec says).
VERSIONS = ("1.1", "1.2")


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
    page: int | None = None  # its page's index in `HarLog.pages`; None: no pageref
    resource_type: str | None = None  # Chrome's / Playwright's `_resourceType`
    initiator: str | None = None  # URL of what made the request (parser: its document or
    #                               stylesheet; script: the top frame's script)
    redirect_url: str = ""  # response.redirectURL
    error: str | None = None  # why a request failed (`_error`)
    recoded: bool = False  # a text body not encodable in its declared charset: stored as UTF-8
    cut: bool = False  # the body saved is shorter than its content.size (the tool cut it short)
    attached: str | None = None  # Playwright's `content._file`: the body is outside the HAR
    #: The size fields the HAR gave (`SIZE_FIELDS` names), as read: `sizes()` picks from them.
    size_fields: tuple[tuple[str, float], ...] = ()
    initiator_type: str | None = None  # "parser", "script", "preload", "other" (Chrome, WebPageTest)
    priority: str | None = None  # Chrome's `_priority` ("VeryHigh" ... "VeryLow")
    wait_ms: float | None = None  # timings.wait: request sent to first byte
    rtt_ms: float | None = None  # timings.connect less timings.ssl: the TCP handshake (None: no new connection)
    connection: str | None = None  # HAR 1.2's `connection`: the id of the connection it went on (Chrome)
    encoding_field: str | None = None  # WebPageTest's `_contentEncoding` (its HARs may carry no headers)

    def size(self, kind: str) -> SizeReading:
        """The body's `kind` size ("decoded" or "transfer"), as `sizes.read_size` picks it
        from the fields the HAR gave."""
        return read_size(self.size_fields, kind)

    def content_encoding(self) -> str:
        """The recorded Content-Encoding token, lower case ("" none)."""
        return (self.header("content-encoding") or self.encoding_field or "").strip().lower()

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


@dataclass(frozen=True)
class HarPage:
    """A page of a HAR: one of `log.pages`, or a `pageref` no page lists (title "").
    WebPageTest's pages (`page_<run>_<cached>_<step>`, "Run 1, First View for URL") also
    say their run, whether a repeat view (warm cache), and their step."""

    id: str
    title: str
    run: int | None = None
    repeat: bool | None = None
    step: int | None = None


@dataclass(frozen=True)
class Skipped:
    """A request no server is asked for (data:, blob:, ws:, chrome-extension:, ...)."""

    index: int  # its position in log.entries
    scheme: str  # lower case, without the colon
    page: int | None  # as `HarEntry.page`


@dataclass(frozen=True)
class HarLog:
    """A parsed HAR: its http(s) requests in the order they started, its pages (in the
    order they started; those only named by a `pageref` last) and what was skipped."""

    entries: tuple[HarEntry, ...]
    pages: tuple[HarPage, ...]
    skipped: tuple[Skipped, ...]
    creator: str  # log.creator.name ("" when missing)
    bodies: bool  # whether any response body was saved (text, or Playwright's `_file`)

    def requests(self, page: int | None) -> int:
        """How many of log.entries name this page (None: no page)."""
        return sum(e.page == page for e in self.entries) + sum(s.page == page for s in self.skipped)


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


def parse_har(data: str | bytes, where: str) -> HarLog:
    """A HAR file's requests and pages; a one-line HarError naming `where` and the field at
    fault for anything malformed."""
    text = _text(data, where) if isinstance(data, bytes) else data
    if not text.strip():
        raise HarError(f"{where}: empty (a HAR is a JSON object with `log`)")
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as error:
        if error.msg.startswith("Unterminated string") or error.pos >= len(text.rstrip()):
            raise HarError(f"{where}: {_cut_short(text)}") from None
        raise HarError(f"{where}: not JSON ({error.msg}: line {error.lineno} column {error.colno})") from None
    except RecursionError:
        raise HarError(f"{where}: not JSON (nested too deep)") from None
    read = _Reader(where)
    if not isinstance(raw, dict):
        raise HarError(f"{where}: not a HAR file (the top level must be an object with `log`, not "
                       f"{_json_type(raw)})")
    log = read.get(raw, "log", "", dict)
    version = log.get("version")
    if version is not None and version != "" and version not in VERSIONS:
        shown = repr(version[:20]) if isinstance(version, str) else _json_type(version)
        raise HarError(f"{where}: log.version: {shown} is not a HAR version pagebench reads "
                       f"({' or '.join(VERSIONS)}; none means 1.1)")
    entries = read.get(log, "entries", "log", list)
    if not entries:
        raise HarError(f"{where}: no entries (log.entries is empty)")
    creator = log.get("creator")
    name = creator.get("name") if isinstance(creator, dict) else None
    pages, order = _pages(read, read.get(log, "pages", "log", list, []), entries)
    parsed: list[HarEntry] = []
    skipped: list[Skipped] = []
    for index, item in enumerate(entries):
        got = _entry(read, item, index, order)
        if isinstance(got, HarEntry):
            parsed.append(got)
        else:
            skipped.append(got)
    if not parsed:
        schemes = ", ".join(f"{s}:" for s in dict.fromkeys(s.scheme for s in skipped))
        raise HarError(f"{where}: no entries with an http(s) URL (only {schemes})")
    return HarLog(tuple(sorted(parsed, key=lambda e: (e.started, e.index))), pages, tuple(skipped),
                  name if isinstance(name, str) else "", any(map(_saved, entries)))


def _saved(raw: Any) -> bool:
    """Whether an entry holds its response body (text, or Playwright's `_file` beside it)."""
    response = raw.get("response") if isinstance(raw, dict) else None
    content = response.get("content") if isinstance(response, dict) else None
    return isinstance(content, dict) and any(isinstance(content.get(k), str) for k in ("text", "_file"))


def _text(data: bytes, where: str) -> str:
    """The JSON text of a file: UTF-8, UTF-16 or UTF-32 as JSON detects them (RFC 4627:
    a byte-order mark, or the NUL bytes of the first ASCII characters)."""
    encoding = json.detect_encoding(data)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        shown = encoding.replace("-sig", "").upper()
        if shown != "UTF-8":
            raise HarError(f"{where}: not {shown} text (byte {error.start}); a HAR is JSON: UTF-8, or UTF-16 or "
                           "UTF-32 with a byte-order mark") from None
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise HarError(f"{where}: not UTF-8 text (byte {error.start}, 0x{data[error.start]:02X}, at line {line} "
                       f"column {column}); a HAR is JSON: save it as UTF-8 (or UTF-16/UTF-32 with a "
                       "byte-order mark)") from None


#: Strings (a last one may be unterminated: the file ends inside it) and JSON's structure.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[][{},:]', re.DOTALL)


def _cut_short(text: str) -> str:
    """Where JSON that ends too early ends: the field it was inside, and how many entries
    came whole before it."""
    stack: list[list[Any]] = []  # ["{", key] or ["[", index]
    string = ""
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token[0] == '"':
            string = token
        elif token == ":" and stack and stack[-1][0] == "{":
            try:
                stack[-1][1] = json.loads(string)
            except json.JSONDecodeError:
                stack[-1][1] = string.strip('"')
        elif token in "{[":
            stack.append([token, 0 if token == "[" else None])
        elif token in "}]":
            if stack:
                stack.pop()
        elif token == "," and stack:
            stack[-1][1] = stack[-1][1] + 1 if stack[-1][0] == "[" else None
    path = ""
    for kind, label in stack:
        if kind == "[":
            path += f"[{label}]"
        elif label is not None:
            path += f".{str(label)[:40]}" if path else str(label)[:40]
    lines = text.rstrip().split("\n")
    end = f"line {len(lines)} column {len(lines[-1]) + 1}"
    whole = re.match(r"log\.entries\[(\d+)\]", path)
    inside = f" inside {path}" if path else ""
    done = f" ({whole.group(1)} whole entries before it)" if whole else ""
    return f"JSON cut short: the text ends at {end}{inside}{done}; the file is incomplete (copy or export it again)"


def _pages(read: _Reader, pages: list[Any], entries: list[Any]) -> tuple[tuple[HarPage, ...], dict[str, int]]:
    """The pages, those of `log.pages` in the order they started, then the `pageref`s no
    page lists (in the order the entries name them); and page id -> its index."""
    listed: list[tuple[float, int, HarPage]] = []
    seen: dict[str, int] = {}
    for i, page in enumerate(pages):
        path = f"log.pages[{i}]"
        if not isinstance(page, dict):
            raise read.fail(path, f"must be an object, not {_json_type(page)}")
        ident = read.get(page, "id", path, str)
        if ident in seen:
            raise read.fail(f"{path}.id", f"{ident[:60]!r} is also log.pages[{seen[ident]}]'s: page ids must differ")
        seen[ident] = i
        when = read.get(page, "startedDateTime", path, str, "")
        title = read.get(page, "title", path, str, "")
        listed.append((_when(read, when, f"{path}.startedDateTime") if when else float(i), i,
                       _webpagetest(HarPage(ident, title), page)))
    found = [page for _, _, page in sorted(listed, key=lambda item: item[:2])]
    for entry in entries:
        ref = entry.get("pageref") if isinstance(entry, dict) else None
        if isinstance(ref, str) and ref not in seen:
            seen[ref] = -1
            found.append(HarPage(ref, ""))
    return tuple(found), {page.id: i for i, page in enumerate(found)}


_WPT_ID = re.compile(r"page_(\d+)_([01])(?:_(\d+))?")
_WPT_TITLE = re.compile(r"Run (\d+), (First|Repeat) View\b")


def _webpagetest(page: HarPage, raw: Mapping[str, Any]) -> HarPage:
    """A page with WebPageTest's run, view and step, where its id, title or `_run`/`_cached`
    say them."""
    ident, title = _WPT_ID.fullmatch(page.id), _WPT_TITLE.match(page.title)
    run = raw.get("_run") if isinstance(raw.get("_run"), int) and not isinstance(raw.get("_run"), bool) else None
    cached = raw.get("_cached") if raw.get("_cached") in (0, 1) and not isinstance(raw.get("_cached"), bool) else None
    if ident:
        run = run if run is not None else int(ident.group(1))
        cached = cached if cached is not None else int(ident.group(2))
    if title:
        run = run if run is not None else int(title.group(1))
        cached = cached if cached is not None else int(title.group(2) == "Repeat")
    if run is None:
        return page
    step = int(ident.group(3)) if ident and ident.group(3) else None
    return HarPage(page.id, page.title, run, None if cached is None else bool(cached), step)


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


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


def _entry(read: _Reader, raw: Any, index: int, order: Mapping[str, int]) -> HarEntry | Skipped:
    path = f"log.entries[{index}]"
    if not isinstance(raw, dict):
        raise read.fail(path, f"must be an object, not {_json_type(raw)}")
    pageref = read.get(raw, "pageref", path, str, None)
    page = order.get(pageref) if pageref is not None else None
    request = read.get(raw, "request", path, dict)
    url = read.get(request, "url", f"{path}.request", str).split("#", 1)[0]
    scheme = match.group(1).lower() if (match := _SCHEME.match(url)) else ""
    if scheme not in ("http", "https"):
        return Skipped(index, scheme, page)  # data:, blob:, ws:, chrome-extension:, about: ...
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a bad port
    except ValueError as error:
        raise read.fail(f"{path}.request.url", f"{error} ({url[:80]!r})") from None
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
    body, recoded = _body(read, content, content_path, mime)
    size = content.get("size")
    size = size if isinstance(size, (int, float)) and not isinstance(size, bool) else -1
    if body == b"" and size > 0:
        body = None  # an empty text for a body of `size` bytes: not saved
    fields = size_fields(raw, body)
    if body is None and "text" not in content and (method.upper() == "HEAD" or 100 <= status < 200 or status == 204):
        body = b""  # no body by HTTP's rules (a 304's is its 200's: unknown, for the stand-in to make)
    error = response.get("_error") or raw.get("_error")  # DevTools and mitmproxy: response._error
    return HarEntry(
        index=index, method=method.upper(), url=url, status=status,
        request_headers=_headers(read, request, f"{path}.request"), response_headers=response_headers,
        mime_type=mime, body=body, started=started, time_ms=time_ms,
        page=page,
        resource_type=raw.get("_resourceType") if isinstance(raw.get("_resourceType"), str) else None,
        initiator=_initiator(raw), redirect_url=read.get(response, "redirectURL", f"{path}.response", str, ""),
        error=error if isinstance(error, str) and error else None, recoded=recoded,
        cut=body is not None and not recoded and len(body) < size,
        attached=content.get("_file") if isinstance(content.get("_file"), str) else None,
        size_fields=fields, initiator_type=_initiator_type(raw),
        priority=raw.get("_priority") if isinstance(raw.get("_priority"), str) else None,
        wait_ms=_timing(raw, "wait"), rtt_ms=_rtt(raw), connection=_connection(raw),
        encoding_field=raw.get("_contentEncoding") if isinstance(raw.get("_contentEncoding"), str) else None)


def _timing(raw: Mapping[str, Any], name: str) -> float | None:
    """timings.<name> in ms (None: absent or -1, not applicable)."""
    timings = raw.get("timings")
    value = timings.get(name) if isinstance(timings, dict) else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else None


def _connection(raw: Mapping[str, Any]) -> str | None:
    """The connection id (a string in HAR 1.2; some tools write a number)."""
    value = raw.get("connection")
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        return None
    return str(value)


def _rtt(raw: Mapping[str, Any]) -> float | None:
    """One round trip as the entry recorded it: the TCP handshake (HAR 1.2's connect
    includes the TLS handshake, ssl), when this request opened a connection."""
    connect = _timing(raw, "connect")
    if not connect:
        return None
    rtt = connect - (_timing(raw, "ssl") or 0.0)
    return rtt if rtt > 0 else None


def _initiator_type(raw: Mapping[str, Any]) -> str | None:
    """How a request was made: Chrome's `_initiator.type`, WebPageTest's `_initiator_type`."""
    initiator = raw.get("_initiator")
    kind = initiator.get("type") if isinstance(initiator, dict) else raw.get("_initiator_type")
    return kind.lower() if isinstance(kind, str) and kind else None


def _body(read: _Reader, content: Mapping[str, Any], path: str, mime: str) -> tuple[bytes | None, bool]:
    """The decoded body (None: not saved) and whether a text body had to become UTF-8. A
    body is known only from its text: sizes of 0 and -1 without one mean "not recorded"
    (WebPageTest keeps its sizes in `_bytesIn` and friends), never "empty" (`_entry` makes
    the exception of a response that has no body by HTTP's rules)."""
    text = read.get(content, "text", path, str, None)
    if text is None:
        return None, False
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
