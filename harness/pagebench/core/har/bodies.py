"""Bodies of a synthesized stand-in page (`synth.py`): HTML, CSS and scripts that name
their children the way the original's parents did, padded to the recorded decoded size
and, under a recorded Content-Encoding, made to compress to the recorded transfer size;
media the browser really decodes; scripts that make their requests and do no other work
(a HAR holds no script's CPU time, so none is made up).

Pure and deterministic: the same page gives the same bytes. Children are named by their
original URLs; the import maps the hosts into the lab afterwards (`rewrite.py`), as it
does for saved bodies.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pagebench.core import encodings
from pagebench.core.sites.media import filler, font, gif, jpeg, png
from pagebench.core.sites.model import SiteError

#: How a parent names a child of each kind, by the parent's kind: (where, template).
#: HTML: "head" or "body" (in the order the children started); CSS: "import" (before any
#: rule, as @import must be) or "rule"; JS: statements run after the script's work. `{u}`
#: is the URL as the format quotes it, `{n}` the child's number (font families, classes).
NAMING: dict[str, dict[str, tuple[str, str]]] = {
    "html": {
        "css": ("head", '<link rel="stylesheet" href="{u}">'),
        "js": ("head", '<script src="{u}"></script>'),
        "js async": ("head", '<script async src="{u}"></script>'),
        "js body": ("body", '<script src="{u}"></script>'),
        "font": ("head", '<link rel="preload" as="font" crossorigin href="{u}">'),
        "image": ("body", '<img src="{u}" width="1" height="1" alt="">'),
        "html": ("body", '<iframe src="{u}" width="1" height="1"></iframe>'),
        "other": ("body", "<script>fetch({j}).catch(function(){{}})</script>"),
        "script": ("body", "<script>{js}</script>"),  # an inline script's requests (`JS_NAMING`)
    },
    "css": {
        "css": ("import", "@import url({c});"),
        "font": ("rule", "@font-face{{font-family:pbf{n};src:url({c})}}.pbf{n}{{font-family:pbf{n}}}"),
        "image": ("rule", ".pbi{n}{{background-image:url({c})}}"),
        "other": ("rule", ".pbi{n}{{background-image:url({c})}}"),
    },
}
#: How a script makes a request of each kind.
JS_NAMING: dict[str, str] = {
    "js": 'e=document.createElement("script");e.src={j};document.head.appendChild(e);',
    "css": 'e=document.createElement("link");e.rel="stylesheet";e.href={j};document.head.appendChild(e);',
    "image": "(new Image).src={j};",
    "font": 'new FontFace("pbf{n}","url("+JSON.stringify({j})+")").load().catch(function(){{}});',
    "html": 'e=document.createElement("iframe");e.src={j};document.documentElement.appendChild(e);',
    "other": "fetch({j}).catch(function(){{}});",
}
#: What elements a document carries so that the fonts and background images its
#: stylesheets name are used (a @font-face nobody uses is never fetched).
MARKERS = {"font": '<span class="pbf{n}">Aa</span>', "image": '<div class="pbi{n}"></div>',
           "other": '<div class="pbi{n}"></div>'}
#: Where each text format's padding goes: (before, after) it.
_PAD = {"html": (b"<!--", b"-->\n</body></html>\n"), "css": (b"/*", b"*/\n"), "svg": (b"<!--", b"-->\n"),
        "json": (b'{"pad":"', b'"}\n'), "xml": (b"<x><!--", b"--></x>\n"), "txt": (b"", b"")}
_REPEATED = b"the page loads its resources in order, " * 2  # a 78-byte block that compresses to nothing
_BLOCK = 64


@dataclass(frozen=True)
class Child:
    """A request a body names: its URL, kind (`synth.KINDS`), number and how it is named."""

    url: str
    kind: str
    number: int
    way: str  # "parser", "script" (made by a script: JS_NAMING), "async", "body" (HTML position)
    delay_ms: int = 0  # a script makes it after a timer of this long (`synth.TIMER_MIN_MS`)


@dataclass(frozen=True)
class Made:
    """A body made, and its size when sent under the recorded encoding (None: not encoded)."""

    body: bytes
    sent: int | None = None


def mixed(n: int, fraction: float, seed: str) -> bytes:
    """n bytes of text, `fraction` of them in random blocks (which compress to ~3/4) and
    the rest repeated (which compress to almost nothing): what the transfer size is searched by."""
    out, taken = bytearray(), 0
    blocks = (n + _BLOCK - 1) // _BLOCK
    for i in range(blocks):
        want = round((i + 1) * fraction)
        out += filler(f"{seed}/{i}", _BLOCK) if want > taken else _REPEATED[:_BLOCK]
        taken = want
    return bytes(out[:n])


def fit(skeleton: Callable[[bytes], bytes], room: int, token: str, target: int | None, seed: str) -> Made:
    """`skeleton(padding)` with `room` bytes of padding; with a Content-Encoding `token` and
    a `target` transfer size, the padding's random fraction is searched so the body
    compresses to the target (within 0.5 %) under the lab's compressor of that encoding.
    The compressed size grows about linearly with the fraction, so the search interpolates
    between the fractions that bracket the target (false position, halving where that
    stalls): three to five compressions, br's at quality 11 being the slow ones."""
    encoding = _encoding(token)
    if encoding is None or target is None:
        body = skeleton(mixed(room, 0.5, seed))
        return Made(body, len(encoding.compress(body)) if encoding is not None else None)

    def made(fraction: float) -> Made:
        body = skeleton(mixed(room, fraction, seed))
        return Made(body, len(encoding.compress(body)))

    low, high = (0.0, made(0.0)), (1.0, made(1.0))
    best = min((low[1], high[1]), key=lambda m: abs((m.sent or 0) - target))
    for step in range(8):
        if abs((best.sent or 0) - target) <= max(target // 200, 16) or not (low[1].sent or 0) < target < (
                high[1].sent or 0):
            break
        span = (high[1].sent or 0) - (low[1].sent or 0)
        fraction = low[0] + (high[0] - low[0]) * (target - (low[1].sent or 0)) / span if step % 3 != 2 \
            else (low[0] + high[0]) / 2
        here = made(fraction)
        if abs((here.sent or 0) - target) < abs((best.sent or 0) - target):
            best = here
        low, high = ((fraction, here), high) if (here.sent or 0) < target else (low, (fraction, here))
    return best


def _encoding(token: str) -> encodings.Encoding | None:
    """The lab's compressor of a recorded Content-Encoding (deflate: gzip's), or None."""
    token = {"deflate": "gzip", "x-gzip": "gzip"}.get(token, token)
    try:
        found = encodings.of_token(token)
    except ValueError:
        return None
    return None if found is encodings.IDENTITY or found.dictionary else found


def _quoted(url: str) -> dict[str, str]:
    return {"u": html.escape(url, quote=True), "j": json.dumps(url),
            "c": '"' + url.replace("\\", "\\\\").replace('"', '\\"') + '"'}


def script_calls(children: Sequence[Child]) -> str:
    """The statements that make a script's requests, in order; those with a delay in a
    timer of that delay."""
    calls = []
    for c in children:
        call = JS_NAMING[c.kind].format(n=c.number, **_quoted(c.url))
        calls.append(f"setTimeout(function(){{var e;{call}}},{c.delay_ms});" if c.delay_ms else call)
    return "".join(calls)


def html_body(children: Sequence[Child], markers: Sequence[Child], size: int, token: str,
              target: int | None, seed: str) -> Made:
    """A document naming `children` in order (head first, then body), carrying `markers`
    (fonts and images its stylesheets name), padded to `size`."""
    head, body = [], []
    inline: list[Child] = []

    def flush() -> None:
        if inline:
            body.append(NAMING["html"]["script"][1].format(js=script_calls(inline)))
            inline.clear()

    for child in children:
        if child.way == "script":
            inline.append(child)
            continue
        flush()
        key = f"js {child.way}" if child.kind == "js" and child.way in ("async", "body") else child.kind
        where, template = NAMING["html"][key]
        (head if where == "head" else body).append(template.format(n=child.number, **_quoted(child.url)))
    flush()
    body += [MARKERS[m.kind].format(n=m.number) for m in markers]
    top = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>stand-in</title>\n' + "\n".join(head)
           + "\n</head><body>\n" + "\n".join(body) + "\n").encode()
    before, after = _PAD["html"]
    room = max(0, size - len(top) - len(before) - len(after))
    return fit(lambda pad: top + before + pad + after, room, token, target, seed)


def css_body(children: Sequence[Child], size: int, token: str, target: int | None, seed: str) -> Made:
    """A stylesheet naming `children`: @import first, then @font-face and background rules."""
    imports = [c for c in children if NAMING["css"].get(c.kind, NAMING["css"]["other"])[0] == "import"]
    rules = [c for c in children if c not in imports]
    text = "".join(NAMING["css"].get(c.kind, NAMING["css"]["other"])[1].format(n=c.number, **_quoted(c.url))
                   + "\n" for c in [*imports, *rules]).encode()
    before, after = _PAD["css"]
    room = max(0, size - len(text) - len(before) - len(after))
    return fit(lambda pad: text + before + pad + after, room, token, target, seed)


def js_body(children: Sequence[Child], size: int, token: str, target: int | None, seed: str) -> Made:
    """A script that makes its requests and nothing else: its padding is a string it
    never reads. It spends no CPU beyond V8's parse (a HAR holds no script's CPU time;
    the loop of 40 iterations per byte it once ran made `modern`'s stand-in 16-28 %
    slower than the real replay in h2, docs/benchmarks.md "Stand-in fidelity")."""
    calls = script_calls(children)

    def skeleton(pad: bytes) -> bytes:
        return b'(function(){var e,d="' + pad + b'";' + calls.encode() + b"})();\n"

    room = max(0, size - len(skeleton(b"")))
    return fit(skeleton, room, token, target, seed)


def text_body(ext: str, size: int, token: str, target: int | None, seed: str) -> Made:
    """JSON, XML, SVG or plain text of `size` bytes."""
    if ext == "svg":
        top = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><rect width="1" height="1"/></svg>\n'
    else:
        top = b""
    before, after = _PAD.get(ext, _PAD["txt"])
    room = max(0, size - len(top) - len(before) - len(after))
    return fit(lambda pad: top + before + pad + after, room, token, target, seed)


#: Media made by `core.sites.media`, by extension: how a body of a byte size is made.
#: Formats with no maker here are served as PNG bytes (Chromium sniffs images): `FALLBACKS`.
_MEDIA: dict[str, Callable[[int, str], bytes]] = {
    "png": lambda size, seed: png(size, 1, 1, seed),
    "jpg": lambda size, seed: jpeg(size, 8, 8, seed),
    "gif": lambda size, seed: gif(size, seed),
    "woff2": lambda size, seed: font("PB Stand-in", "Regular", size, "woff2", seed),
    "woff": lambda size, seed: font("PB Stand-in", "Regular", size, "woff", seed),
    "ttf": lambda size, seed: font("PB Stand-in", "Regular", size, None, seed),
}
#: Extensions made as another's bytes: (stand-in, why).
FALLBACKS = {"webp": "png", "avif": "png", "ico": "png", "otf": "ttf"}
_BINARY = frozenset({"png", "jpg", "gif", "webp", "avif", "ico", "woff2", "woff", "ttf", "otf"})


def media_body(ext: str, size: int, seed: str) -> bytes:
    """A valid image or font of `size` bytes (or the smallest valid one above it); other
    binary types as filler bytes."""
    maker = _MEDIA.get(FALLBACKS.get(ext, ext))
    if maker is None:
        return filler(seed, size)
    for candidate in range(max(size, 1), max(size, 1) + 2048):
        try:
            return maker(candidate, seed)
        except SiteError:
            continue
    raise SiteError(f"{seed}: no valid {ext} of about {size} bytes")


def is_media(ext: str) -> bool:
    return ext in _BINARY
