"""A stand-in page for a HAR without bodies (WebPageTest, browsertime, Firefox, the HTTP
Archive): the same requests, found by the same parents in the same way, with bodies
made to the recorded sizes (`bodies.py`), so a browser loads it as it loaded the original.

Each request's parent (what named it) is read from the HAR where it says: the initiator
(Chrome's `_initiator`, WebPageTest's `_initiator`/`_initiator_type`), or a Referer that
is a recorded stylesheet's URL. Otherwise it is inferred from timing: of the responses
that can name a request of its kind (`CAN_NAME`), the one that ended last before it
started; a Referer that is only an origin (the default cross-origin policy) narrows that
to stylesheets of that origin, or to the document and its scripts. Every inferred parent
is listed in the fidelity report (`fidelity.py`). Redirects keep their chain: the parent
names the first URL, the rest follow Location.

A 304 of a warm capture stands in as its 200. Sizes are read in `sizes.SIZE_FIELDS`'
order; where none is known the size is guessed by kind (`GUESSED_BYTES`), with a warning.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from pagebench.core.har import bodies
from pagebench.core.har.bodies import Child, Made
from pagebench.core.har.levels import dependency_levels
from pagebench.core.har.mime import extension
from pagebench.core.har.parse import HarEntry
from pagebench.core.sites.recording import REDIRECTS

#: A request's kind, by its body's extension (`mime.extension`); anything else is "other".
KINDS = {"html": "html", "css": "css", "js": "js", "png": "image", "jpg": "image", "gif": "image",
         "webp": "image", "avif": "image", "ico": "image", "svg": "image", "woff2": "font", "woff": "font",
         "ttf": "font", "otf": "font"}
#: Which kinds of response can name a request of each kind, in tiers the timing inference
#: prefers in order (a font is a stylesheet's before it is a script's).
CAN_NAME: dict[str, tuple[tuple[str, ...], ...]] = {
    "font": (("css",), ("html", "js")), "image": (("html", "css", "js"),), "css": (("html", "css", "js"),),
    "js": (("html", "js"),), "html": (("html", "js"),), "other": (("html", "js"),)}
#: Sizes guessed for a body whose size the HAR does not give (about the HTTP Archive's
#: median response of each kind).
GUESSED_BYTES = {"html": 30_000, "css": 12_000, "js": 20_000, "image": 10_000, "font": 25_000, "other": 2_000}
#: A request a script made this long (ms) or more after the script's response ended is
#: made after a timer of that gap: the script waited (a timer, an event) before making it.
TIMER_MIN_MS = 50
#: Chrome's and WebPageTest's priorities of a script the parser found that did not block it.
_ASYNC_PRIORITIES = frozenset({"low", "lowest", "verylow", "idle"})
_BODY_PRIORITIES = frozenset({"medium"})


def kind_of(entry: HarEntry) -> str:
    return KINDS.get(extension(entry.mime_type, entry.resource_type), "other")


@dataclass(frozen=True)
class Node:
    """One request of the stand-in: who names it, how, and its sizes."""

    entry: HarEntry
    kind: str
    status: int  # as replayed (a 304 stands in as 200)
    parent: int | None  # the naming entry's index (None: the entry document's chain)
    way: str  # "parser", "script", "async", "body", "redirect", "entry"
    read: str  # where the parent came from: "initiator", "referer", "timing", "redirect", "entry"
    decoded: int | None  # bytes of the body to make (None: none)
    decoded_from: str  # the fields it was read from, or "guessed"
    transfer: int | None  # bytes sent under the recorded encoding (None: unknown or not encoded)
    encoding: str  # the recorded Content-Encoding token ("" none)


@dataclass(frozen=True)
class Synthesis:
    """A stand-in page: the bodies made (entry index -> bytes, original URLs inside),
    statuses changed, dependency levels of the stand-in, and what was inferred."""

    nodes: tuple[Node, ...]
    bodies: dict[int, bytes]
    sent: dict[int, int]  # entry index -> bytes of the made body under its recorded encoding
    levels: dict[int, int]  # of the stand-in (by `levels.dependency_levels` on its parents)
    original_levels: dict[int, int]  # of the original, as the HAR tells them
    warnings: tuple[str, ...]
    fallbacks: tuple[str, ...]  # "https://.../a.webp: made as png bytes"
    timers: int = 0  # requests a script makes after a timer

    @property
    def inferred(self) -> tuple[Node, ...]:
        return tuple(n for n in self.nodes if n.read == "timing")


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{(parts.netloc or '').lower()}"


def _sizes(entry: HarEntry, kind: str, status: int) -> tuple[int | None, str, int | None, str]:
    """(decoded, where from, transfer under the encoding, encoding) of a body to make."""
    if status not in (200, 203) and not 400 <= status <= 599:
        return None, "", None, ""
    encoding = entry.content_encoding()
    decoded, transfer = entry.size("decoded"), entry.size("transfer")
    if decoded.bytes is None and transfer.bytes is not None and not encoding:
        decoded = transfer  # sent as it is
    if decoded.bytes is None and entry.body is not None:
        return len(entry.body), "the saved body", None, encoding  # recorded as empty
    if decoded.bytes is None:
        if status >= 400:
            return None, "", None, ""
        return GUESSED_BYTES[kind], "guessed", None, encoding
    sent = transfer.bytes if encoding and transfer.bytes is not None and transfer.bytes < decoded.bytes else None
    return decoded.bytes, decoded.source or "", sent, encoding


def plan(entries: Sequence[HarEntry], chain: Sequence[HarEntry]) -> list[Node]:
    """The stand-in's requests (`entries`: those to replay, first of each URL, in the
    order they started; `chain`: the entry document and its redirects) and their parents."""
    chain_urls = {e.url for e in chain}
    document = next((e for e in entries if e.url == chain[-1].url), chain[-1])
    nodes: list[Node] = []
    by_url: dict[str, Node] = {}
    redirected: dict[str, Node] = {}  # a redirect's target URL -> the redirect's node

    def node(entry: HarEntry, parent: int | None, way: str, read: str) -> Node:
        kind = kind_of(entry)
        status = 200 if entry.status == 304 else entry.status
        decoded, source, sent, encoding = _sizes(entry, kind, status)
        return Node(entry, kind, status, parent, way, read, decoded, source, sent, encoding)

    for entry in entries:
        if entry.url in by_url:
            continue
        if entry.url in chain_urls:
            made = node(entry, None, "entry", "entry")
        elif entry.url in redirected:
            first = redirected[entry.url]
            made = node(entry, first.parent, "redirect", "redirect")
        else:
            parent, way, read = _parent(entry, nodes, document, by_url)
            made = node(entry, parent, way, read)
        nodes.append(made)
        by_url[entry.url] = made
        if entry.status in REDIRECTS and entry.location():
            redirected.setdefault(entry.location() or "", made if made.way != "redirect"
                                  else redirected.get(entry.url, made))
    return nodes


def _parent(entry: HarEntry, nodes: Sequence[Node], document: HarEntry,
            by_url: dict[str, Node]) -> tuple[int, str, str]:
    """(parent index, way, where from) of a request that is not the document's."""
    kind = kind_of(entry)
    allowed = {k for tier in CAN_NAME[kind] for k in tier}
    named = by_url.get(entry.initiator or "")
    if named is not None and named.kind in allowed and named.status in (200, 203):
        scripted = entry.initiator_type == "script" or named.kind == "js"
        return named.entry.index, "script" if scripted and named.kind != "css" else _parser_way(entry), "initiator"
    referer = (entry.header("referer", response=False) or "").split("#", 1)[0]
    if referer in by_url and by_url[referer].kind == "css" and "css" in allowed:
        return by_url[referer].entry.index, "parser", "referer"
    origin = _origin(referer) if referer else None
    page = referer == document.url or (origin is not None and origin == _origin(document.url)) or not referer
    for tier in CAN_NAME[kind]:
        ended = [n for n in nodes if n.kind in tier and n.status in (200, 203) and n.way != "redirect"
                 and n.entry.ended <= entry.started
                 and (n.kind != "css" or origin is None or _origin(n.entry.url) == origin)
                 and (n.kind == "css" or page)]
        if ended:
            best = max(ended, key=lambda n: (n.entry.ended, n.entry.index))
            if best.entry.index == document.index:
                break
            return best.entry.index, "script" if best.kind == "js" else "parser", "timing"
    return document.index, _parser_way(entry), "timing"


def _parser_way(entry: HarEntry) -> str:
    """How the document's parser finds a script: in the head, async, or late in the body."""
    priority = (entry.priority or "").replace(" ", "").lower()
    if priority in _ASYNC_PRIORITIES:
        return "async"
    return "body" if priority in _BODY_PRIORITIES else "parser"


def synthesize(entries: Sequence[HarEntry], chain: Sequence[HarEntry],
               made: Callable[[Node], bool]) -> Synthesis:
    """The stand-in of a page: `entries` to replay (first of each URL), the document's
    `chain`, and `made(node)`: whether a node's body is made (else its saved one is kept)."""
    nodes = plan(entries, chain)
    by_index = {n.entry.index: n for n in nodes}
    children: dict[int, list[Node]] = {}
    for n in nodes:
        if n.parent is not None and n.way != "redirect":
            children.setdefault(n.parent, []).append(n)
    number = {n.entry.index: i for i, n in enumerate(nodes)}

    first_in_body: dict[int, float] = {}  # a document -> when the first thing its body names started
    for n in nodes:
        if n.parent is not None and n.kind in ("image", "html") and n.way not in ("script", "redirect") \
                and by_index[n.parent].kind == "html":
            first_in_body.setdefault(n.parent, n.entry.started)

    def child(n: Node) -> Child:
        way = n.way
        if n.kind == "js" and way == "parser" and n.entry.started > first_in_body.get(n.parent or -1, n.entry.started):
            way = "body"  # found by the parser after the body's first image: not in the head
        delay = 0
        if way == "script" and n.parent is not None and by_index[n.parent].kind == "js":
            gap = (n.entry.started - by_index[n.parent].entry.ended) * 1000
            delay = round(gap) if gap >= TIMER_MIN_MS else 0
        return Child(n.entry.url, n.kind, number[n.entry.index], way, delay)

    def document_of(n: Node) -> int:
        while n.kind != "html" and n.parent is not None:
            n = by_index[n.parent]
        return n.entry.index if n.kind == "html" else document

    document = next(n.entry.index for n in reversed(nodes) if n.way == "entry")
    markers: dict[int, list[Child]] = {}
    for n in nodes:
        parent = by_index.get(n.parent) if n.parent is not None else None
        if parent is not None and parent.kind == "css" and n.kind in bodies.MARKERS and n.way != "redirect":
            markers.setdefault(document_of(parent), []).append(child(n))

    out: dict[int, bytes] = {}
    sent: dict[int, int] = {}
    warnings: list[str] = []
    fallbacks: list[str] = []
    guessed = timers = 0
    for n in nodes:
        if n.decoded is None or not made(n):
            continue
        if n.decoded_from == "guessed":
            guessed += 1
        ext = extension(n.entry.mime_type, n.entry.resource_type)
        seed = f"stand-in/{n.entry.url}"
        named = [child(c) for c in children.get(n.entry.index, [])]
        timers += sum(1 for c in named if c.delay_ms)
        result: Made
        if n.kind == "html" and n.status in (200, 203):
            result = bodies.html_body(named, markers.get(n.entry.index, []), n.decoded, n.encoding, n.transfer, seed)
        elif n.kind == "css":
            result = bodies.css_body(named, n.decoded, n.encoding, n.transfer, seed)
        elif n.kind == "js":
            result = bodies.js_body(named, n.decoded, n.encoding, n.transfer, seed)
        elif bodies.is_media(ext):
            result = Made(bodies.media_body(ext, n.decoded, seed))
            if ext in bodies.FALLBACKS:
                fallbacks.append(f"{n.entry.url}: made as {bodies.FALLBACKS[ext]} bytes")
        else:
            result = bodies.text_body(ext, n.decoded, n.encoding, n.transfer, seed)
        out[n.entry.index] = result.body
        if result.sent is not None:
            sent[n.entry.index] = result.sent
    if guessed:
        sizes = ", ".join(f"{kind} {size:,} B" for kind, size in GUESSED_BYTES.items())
        warnings.append(f"{guessed} body size(s) not in the HAR: guessed by kind ({sizes})")
    chain = [n.entry for n in nodes if n.way == "entry"]
    return Synthesis(tuple(nodes), out, sent, _levels(nodes, chain), dependency_levels(list(entries), chain),
                     tuple(warnings), tuple(fallbacks), timers)


def _levels(nodes: Sequence[Node], chain: Sequence[HarEntry]) -> dict[int, int]:
    """The stand-in's dependency levels: `levels.dependency_levels` on its requests with
    each one's initiator set to the parent that names it (a redirect's target: the first
    URL's parent, as Chrome records it)."""
    by_index = {n.entry.index: n for n in nodes}
    standing = [dataclasses.replace(n.entry, initiator=by_index[n.parent].entry.url if n.parent is not None
                                    else None) for n in nodes]
    return dependency_levels(standing, list(chain))
