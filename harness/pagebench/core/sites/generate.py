"""The built-in and generated test sites, as values (`sites.GeneratedSite`).

Generators are pure and deterministic (`GeneratedSite`: manifest + {path: bytes});
`lab.sitefiles.resolve` turns what a spec names into a site and `materialize` puts it
on disk, world-readable (nginx workers run as
nobody), only when it is missing or its content changed. Images are valid (Chromium decodes them) and of
EXACT byte sizes: PNG padded with a tEXt chunk, baseline JPEG padded with COM segments,
GIF padded with a comment extension. Fonts are built with fontTools (TTF; WOFF padded
with its private-data block). Links across origins are scheme-relative (`//host/path`), so
one page serves over TLS and over cleartext HTTP (`tls: none`).

Built-in sites (requests = files fetched by one cold load, bytes = response bodies):

- `seed000-small-n{N}`, `seed000-large-n{N}`, N = 1..40 (Padmanabhan & Mogul 1994,
  figures 6-1/6-2): one origin `www.seed000.test`; `/` (HTML) with N inline PNGs of
  exactly 2544 (small, 64x48) or 45566 (large, 320x240) bytes, each distinct
  (`/img/small-01.png` ...). N + 1 requests.
- `seed001-a` .. `seed001-d` (Mogul, Douglis, Feldmann & Krishnamurthy 1997, table
  6-3): one origin `www.seed001.test`, one HTML page `/` and nothing else, of exactly
  17,545 (A), 6,017 (B), 374,144 (C) and 97,125 (D) bytes, compressing as the seed's did
  (gzip -9 within 15 % of its 6,177, 2,033, 39,200 and 10,223 bytes): A and B are
  w3.org-like prose pages with link lists, C and D SPEC CPU95 results (per system, tables
  of run times and ratios, a configuration table). Versions 2, 3, 4 edit 0.1 %, 1 % and
  10 % of the page's bytes, scattered (`with_versions`); 1 request.
- `seed002` (the 2013 SPDY testbed report, Appendix A): the report's page rebuilt
  over two origins. `www.seed002.test`: `/` (HTML), `/img/soe.gif` (6250 B),
  `/img/a_flores.jpg` (1,184,000 B), `/img/mypic_afs.jpg` (1,046,000 B) and the "Picture
  by Nikon!" photo `/img/nikon.jpg` (sized so the page totals 9,400,000 B);
  `images.seed002.test` stands in for Google's `/images/srpr/logo11w.png` (14,022 B,
  538x190). 6 requests, 9.4 MB: the report measured 9.32-9.79 MB per load on the wire.
  Photo sizes are a reconstruction: the report gives the HTML and per-load totals only.
- `modern`: a present-day page, 69 requests, ~2.03 MB, 10 origins (`*.modern.test`):
    www        /index.html 48,000 (head: 2 CSS, 3 sync JS, 1 async JS)
    static     css/main.css 72,000 and css/theme.css 18,000 (render-blocking, head);
               js/app.js 160,000 (sync, head; inserts js/late.js); js/late.js 42,000
               (2nd wave: inserts the 12 thumbs and ads.js); js/vendor.js 95,000 (defer)
    cdn        lib/polyfill.js 28,000 and lib/framework.js 240,000 (sync, head);
               lib/carousel.js 36,000 (async)
    fonts      sans-regular.woff ~34,000, sans-bold.woff ~32,000, serif-italic.woff
               ~27,000, icons.ttf ~16,000: @font-face in static's main.css (CORS)
    img        logo.svg 6,000; hero.jpg 260,000 (1600x900); p/01..24 product images,
               9,000 + 700 i bytes, jpg/png alternating; banner.png 48,000
    social     icons/s1..s6.svg 1,200 + 240 i; widget.js 31,000 (defer)
    media      posters/v1..v4.jpg 30,000 each
    analytics  a.js 22,000 (async, head; inserts collect.gif); collect.gif 43
    thumbs     t/01..12.jpg, 8,000 + 1,000 i bytes (2nd wave, inserted by late.js)
    ads        ads.js 38,000 (2nd wave); creative/1..3.png 25,000 each (3rd wave)
  Everything that is fetched delays the load event (no lazy images, no fetch()).
- `generate: {images, image_bytes, origins, css, js, late, html_bytes}` (`GenParams`):
  a page on `www.gen.test` (origin 1) with `images` PNGs of `image_bytes` spread
  round-robin over `origins` origins (`www.gen.test`, `o2.gen.test`, ...); `css`
  stylesheets (10,000 B) and `js` sync scripts (20,000 B) in the head on origin 1;
  `late` more images inserted by `/late.js` (continuing the round-robin); HTML padded
  to `html_bytes` when given. `versions: [0.01, 0.1]` adds versions 2, 3, ... (at most
  19 more) editing that fraction of the bytes of the chosen text files (`edit: one` in
  one run, or `scattered`, the default; `changed: 0.5` of the HTML, CSS and JS files,
  the HTML always; the rest byte-identical). Named from its parameters:
  `gen-i20-b2544-o1[-c1][-j1][-l5][-h30000][-v0.01_0.1[-eone][-x0.25]]` (a long list of
  versions as `-v<count>x<hash>`).

Text is realistic (`versions`): HTML is padded with paragraphs of English-like prose,
CSS and JS with rules and functions that are never used and comments of prose, so every
encoding compresses them about as it does real pages (gzip -9: HTML and JS ~0.35-0.4,
CSS ~0.25), at the same exact sizes.
"""

from __future__ import annotations

import hashlib
import io
import random
import re
import struct
import zlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pagebench.core import encodings
from pagebench.core.sites import text as versions
from pagebench.core.sites.model import GeneratedSite, SiteError, SiteManifest, one_line


_B64 = bytes(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[i % 64] for i in range(256))


def filler(seed: str, n: int) -> bytes:
    """n deterministic bytes from [A-Za-z0-9+/]: safe inside comments of every format."""
    return hashlib.shake_256(seed.encode()).digest(n).translate(_B64) if n > 0 else b""


def colour(seed: str) -> tuple[int, int, int]:
    """A deterministic RGB colour for a seed."""
    r, g, b = hashlib.sha256(seed.encode()).digest()[:3]
    return r, g, b


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png(size: int, width: int, height: int, seed: str) -> bytes:
    """A flat-coloured RGB PNG of exactly `size` bytes (tEXt padding before IDAT)."""
    head = b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    row = b"\x00" + bytes(colour(seed)) * width
    tail = _png_chunk(b"IDAT", zlib.compress(row * height, 9)) + _png_chunk(b"IEND", b"")
    need = size - len(head) - len(tail)
    if need == 0:
        return head + tail
    if need < 14:
        raise SiteError(f"image_bytes: {size} is too small for a valid {width}x{height} PNG "
                        f"(at least {len(head) + len(tail) + 14})")
    if need < 20:  # tEXt with a short keyword and no text
        return head + _png_chunk(b"tEXt", b"Comment"[: need - 13] + b"\0") + tail
    return head + _png_chunk(b"tEXt", b"Comment\0" + filler(seed, need - 20)) + tail


class _BitWriter:
    def __init__(self) -> None:
        self.acc, self.bits, self.out = 0, 0, bytearray()

    def put(self, value: int, length: int) -> None:
        self.acc, self.bits = (self.acc << length) | value, self.bits + length
        while self.bits >= 8:
            self.bits -= 8
            byte = (self.acc >> self.bits) & 0xFF
            self.out += b"\xff\x00" if byte == 0xFF else bytes([byte])
        self.acc &= (1 << self.bits) - 1

    def flush(self) -> bytes:
        if self.bits:
            self.put((1 << (8 - self.bits)) - 1, 8 - self.bits)
        return bytes(self.out)


def _jpeg_segment(marker: int, data: bytes) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", len(data) + 2) + data


def jpeg(size: int, width: int, height: int, seed: str) -> bytes:
    """A flat grey baseline JPEG of exactly `size` bytes (COM segments as padding).
    One component, DC quantiser 8, so the first block's DC difference is the grey
    level minus 128 and every other block repeats it (2 bits per 8x8 block)."""
    dc = colour(seed)[0] - 128
    cat = abs(dc).bit_length()
    bits = _BitWriter()
    for block in range(((width + 7) // 8) * ((height + 7) // 8)):
        if block == 0 and cat:
            bits.put(0b10, 2)  # DC symbol `cat`, then its value bits
            bits.put(dc if dc > 0 else dc + (1 << cat) - 1, cat)
        else:
            bits.put(0, 1)  # DC difference 0
        bits.put(0, 1)  # AC: end of block
    symbols = bytes([0, cat]) if cat else b"\0"
    head = b"\xff\xd8" + _jpeg_segment(0xE0, b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0")
    tail = (
        _jpeg_segment(0xDB, b"\0" + bytes([8] + [1] * 63))
        + _jpeg_segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
        + _jpeg_segment(0xC4, b"\x00" + bytes([1, len(symbols) - 1] + [0] * 14) + symbols)
        + _jpeg_segment(0xC4, b"\x10" + bytes([1] + [0] * 15) + b"\0")
        + _jpeg_segment(0xDA, b"\x01\x01\x00\x00\x3f\x00") + bits.flush() + b"\xff\xd9"
    )
    need = size - len(head) - len(tail)
    if need < 0 or 0 < need < 4:
        raise SiteError(f"image_bytes: {size} is too small for a valid {width}x{height} JPEG "
                        f"(at least {len(head) + len(tail) + 4})")
    pads = []
    while need > 0:
        take = min(need, 65537)  # marker + length + at most 65533 bytes
        if 0 < need - take < 4:
            take -= 4
        pads.append(_jpeg_segment(0xFE, filler(f"{seed}/{len(pads)}", take - 4)))
        need -= take
    return head + b"".join(pads) + tail


def gif(size: int, seed: str) -> bytes:
    """A 1x1 GIF89a of exactly `size` bytes (comment extension as padding)."""
    head = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0x80, 0, 0) + bytes(colour(seed)) + b"\xff\xff\xff"
    image = b"\x2c" + struct.pack("<HHHHB", 0, 0, 1, 1, 0) + b"\x02\x02\x44\x01\x00" + b"\x3b"
    need = size - len(head) - len(image)
    if need == 0:
        return head + image
    if need < 3 or need == 4:
        raise SiteError(f"gif: {size} bytes cannot be padded (base {len(head) + len(image)})")
    data, blocks, rest = filler(seed, need), [], need - 3
    while rest > 0:
        n = min(255, rest - 1)
        if rest - (n + 1) == 1:
            n -= 1
        blocks.append(bytes([n]) + data[:n])
        rest -= n + 1
    return head + b"\x21\xfe" + b"".join(blocks) + b"\0" + image


def svg(size: int, width: int, height: int, seed: str) -> bytes:
    """An SVG rectangle of exactly `size` bytes (comment padding)."""
    r, g, b = colour(seed)
    body = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}"><rect width="{width}" height="{height}" '
            f'fill="#{r:02x}{g:02x}{b:02x}"/></svg>\n').encode()
    return padded(body, size, b"<!--", b"-->\n", seed)


def padded(body: bytes, size: int, open_: bytes, close: bytes, seed: str) -> bytes:
    """`body` followed by a comment of prose that brings it to exactly `size` bytes."""
    room = size - len(body) - len(open_) - len(close)
    if size == len(body):
        return body
    if room < 0:
        raise SiteError(f"{seed}: {size} bytes is less than its content ({len(body) + len(open_) + len(close)})")
    return body + open_ + versions.prose(seed, room) + close


def text_file(body: str, size: int, seed: str, css: bool = False) -> bytes:
    """JavaScript (or CSS) padded to exactly `size` bytes with realistic code: functions
    never called (rules that match nothing) and comments of prose, which compress as
    real code does."""
    room = size - len(body.encode())
    if room < 0:
        raise SiteError(f"{seed}: {size} bytes is less than its content ({len(body.encode())})")
    return body.encode() + (versions.css_text if css else versions.js_text)(seed, room)


FONT_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:;!?-'&"


FONT_TIMESTAMP = 3_850_070_400  # 2026-01-01T00:00:00Z in seconds since 1904 (the font epoch)


def font(family: str, style: str, size: int, flavor: str | None, seed: str) -> bytes:
    """A small valid TrueType font (rectangle glyphs), `flavor` None (TTF) or "woff",
    padded to about `size` bytes (WOFF private data; TTF a long name-table description)."""
    from fontTools.fontBuilder import FontBuilder
    from fontTools.pens.ttGlyphPen import TTGlyphPen
    from fontTools.ttLib.sfnt import WOFFFlavorData

    def build(pad: int) -> bytes:
        fb = FontBuilder(1000, isTTF=True)
        order = [".notdef", "space"] + [f"u{ord(ch):04X}" for ch in FONT_CHARS]
        fb.setupGlyphOrder(order)
        fb.setupCharacterMap({32: "space", **{ord(ch): f"u{ord(ch):04X}" for ch in FONT_CHARS}})
        glyphs = {}
        for i, name in enumerate(order):
            pen = TTGlyphPen(None)
            if name != "space":
                right = 150 + (i * 37 + len(seed)) % 350
                pen.moveTo((50, 0)), pen.lineTo((50, 700)), pen.lineTo((right, 700)), pen.lineTo((right, 0))
                pen.closePath()
            glyphs[name] = pen.glyph()
        fb.setupGlyf(glyphs)
        fb.setupHorizontalMetrics({name: (600, 0 if name == "space" else 50) for name in order})
        fb.setupHorizontalHeader(ascent=800, descent=-200)
        names: dict[str, str] = {"familyName": family, "styleName": style}
        if pad and flavor is None:
            names["description"] = filler(seed, pad).decode()
        fb.setupNameTable(names, mac=False)
        fb.setupOS2(sTypoAscender=800, sTypoDescender=-200, usWinAscent=800, usWinDescent=200)
        fb.setupPost()
        # fontTools stamps `head` with the time of building and of saving: fix both, or
        # the site (and its digest) would change every second.
        fb.font["head"].created = fb.font["head"].modified = FONT_TIMESTAMP
        fb.font.recalcTimestamp = False
        if flavor:
            fb.font.flavor = flavor
            if pad:
                fb.font.flavorData = WOFFFlavorData()
                fb.font.flavorData.privData = filler(seed, pad)
        out = io.BytesIO()
        fb.save(out)
        return out.getvalue()

    pad = 0
    for _ in range(4):  # the name table is UTF-16 (2 bytes a character) and 4-byte aligned
        got = len(build(pad))
        if got >= size:
            break
        pad += max(1, (size - got) // (2 if flavor is None else 1))
    return build(pad)


def html_page(title: str, head: list[str], body: list[str], size: int = 0, seed: str = "") -> bytes:
    """A page with `head` and `body` lines, padded to `size` bytes when given with
    paragraphs of prose (text that compresses as text does, and that versions edit)."""
    text = "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>", '<link rel="icon" href="data:,">', *head, "</head>", "<body>", *body,
    ]) + "\n"
    end = "</body>\n</html>\n"
    if not size:
        return (text + end).encode()
    room = size - len(text.encode()) - len(end)
    if room == 0:
        return (text + end).encode()
    if room < 9:
        raise SiteError(f"html_bytes: at least {len(text.encode()) + len(end) + 9} for this page (got {size})")
    return text.encode() + versions.paragraphs(seed or title, room) + end.encode()


def _manifest(name: str, origins: list[str], path: str = "/") -> SiteManifest:
    return SiteManifest(name=name, entry=f"https://{origins[0]}{path}", origins=tuple(origins))


# Versions --------------------------------------------------------------------------------

MAX_VERSIONS = 20
_EDITED = (".html", ".htm", ".css", ".js", ".mjs", ".txt")


def _is_code(path: str) -> bool:
    return path.endswith((".css", ".js", ".mjs"))


def with_versions(site: GeneratedSite, fractions: tuple[float, ...], spread: str = "scattered",
                  changed: float = 0.5, where: str = "versions") -> GeneratedSite:
    """`site` with versions 2..N: version k edits `fractions[k - 2]` of the bytes of the
    same chosen text files of version 1 (`versions.edit`): the entry HTML, then others in a
    fixed shuffled order until `changed` of the text files (HTML, CSS, JS) are chosen;
    every other file stays byte-identical. Files with too little text to take the largest
    edit are passed over (the HTML must take it: one-line error naming `where`)."""
    if not fractions:
        return site
    entry = site.manifest.origins[0] + "/" + (site.entry.split("/", 3)[3] or "index.html")
    texts = sorted(p for p in site.files if p.endswith(_EDITED))
    if entry not in texts:
        raise SiteError(f"{where}: the entry {entry} is not an HTML file of the site")
    order = [p for p in texts if p != entry]
    random.Random(f"{site.name}/changed").shuffle(order)
    wanted, chosen = max(1, round(changed * len(texts))), []
    for path in [entry, *order]:
        body, need = site.files[path], max(1, round(max(fractions) * len(site.files[path])))
        if len(chosen) < wanted and len(versions.editable(body, _is_code(path))) >= need:
            chosen.append(path)
        elif path == entry:
            have = len(versions.editable(body, False))
            raise SiteError(f"{where}: {max(fractions):g} of {entry} ({len(body)} bytes) is {need} bytes but it "
                            f"has {have} bytes of text to edit (make the page larger: html_bytes)")
    later = []
    for number, fraction in enumerate(fractions, 2):
        files = dict(site.files)
        for path in chosen:
            files[path] = versions.edit(site.files[path], fraction, spread, f"{site.name}/{path}/v{number}",
                                        _is_code(path)).body
        later.append(files)
    manifest = site.manifest.model_copy(update={
        "versions": 1 + len(later),
        "dictionaries": {p: encodings.available_dictionary(b) for p, b in sorted(site.files.items())
                         if encodings.is_text(p)},
        "changed": {number: sorted(chosen) for number in range(2, 2 + len(later))},
    })
    return GeneratedSite(SiteManifest.model_validate(manifest.model_dump()), site.files, site.levels, tuple(later))


# seed000: Padmanabhan & Mogul 1994 ---------------------------------------------------

SEED000_SIZES = {"small": (2544, 64, 48), "large": (45566, 320, 240)}
SEED000_MAX = 40


def seed000(kind: str, n: int) -> GeneratedSite:
    """Padmanabhan & Mogul's test page: N images of the small or large size."""
    if kind not in SEED000_SIZES or not 1 <= n <= SEED000_MAX:
        raise SiteError(f"seed000: kind must be small or large and n 1..{SEED000_MAX} (got {kind}, {n})")
    size, width, height = SEED000_SIZES[kind]
    host = "www.seed000.test"
    files = {}
    tags = []
    for i in range(1, n + 1):
        path = f"/img/{kind}-{i:02d}.png"
        files[host + path] = png(size, width, height, f"seed000/{kind}/{i}")
        tags.append(f'<img src="{path}" width="{width}" height="{height}" alt="image {i}">')
    files[host + "/index.html"] = html_page(
        f"seed000: {n} inline images of {size} bytes",
        [],
        ["<h1>Improving HTTP Latency: test document</h1>",
         f"<p>{n} inline images of {size} bytes each (Padmanabhan &amp; Mogul 1994, "
         f"figure 6-{1 if kind == 'small' else 2}).</p>", *tags],
    )
    return GeneratedSite(_manifest(f"seed000-{kind}-n{n}", [host]), files)


# seed002: the 2013 SPDY testbed report ----------------------------------------------

SEED002_TOTAL = 9_400_000


def seed002() -> GeneratedSite:
    """The 2013 SPDY testbed report's two-origin photo page (9.4 MB)."""
    www, google = "www.seed002.test", "images.seed002.test"
    logo = f"//{google}/images/srpr/logo11w.png"
    html = html_page("SPDY Server", [], [
        '<img src="img/soe.gif" width="200" height="80" alt="UNM School of Engineering">', "<hr>",
        "<center>", "<h1>SPDY Server</h1>", "Welcome to our ECE540 SPDY test server!",
        f'Link to <a href="//{www}/">HTTP server</a>', "</center>",
        "Enable TCP Connection to Google <br>", f'<img src="{logo}" width="300" alt="Google">', "<hr>",
        "<h3>Introduction</h3>", "<p>" + SEED002_INTRO + "</p>",
        "<h3>Objective</h3>", "<p>" + SEED002_OBJECTIVE + "</p>",
        "<h3>Group Members</h3>",
        '<img src="img/a_flores.jpg" width="300" alt="Alejandro Flores"><br>', "<b>Alejandro Flores</b><br>",
        "Email alejflor@unm.edu<br>Degree seeking: MS in CompE, CompNet&amp;Sys<br>Advisor: TBD<br>",
        "<p>" + SEED002_BIO1 + "</p>",
        "Mustafa Al Mashhadani<br>Email malmashhadani@unm.edu<br>Degree seeking: MS in CompE, "
        "CompNet&amp;Sys<br>Advisor: Dr. W. Shu<br>",
        '<img src="img/mypic_afs.jpg" width="300" alt="Husain Al Yusuf"><br>', "Husain Al Yusuf<br>",
        "Email halyusuf@unm.edu<br>Degree seeking: MS in CompE, CompNet&amp;Sys<br>Advisor: Dr. W. Shu<br>",
        "<h3>Load Test</h3>", "<center>", '<img src="img/nikon.jpg" width="600" alt="Load test photo"><br>',
        "Picture by Nikon!", "</center><br><br>", "<hr>", "<center>Server Powered by Ubuntu</center>",
    ])
    files = {
        f"{www}/index.html": html,
        f"{www}/img/soe.gif": gif(6250, "seed002/soe"),
        f"{google}/images/srpr/logo11w.png": png(14022, 538, 190, "seed002/logo11w"),
        f"{www}/img/a_flores.jpg": jpeg(1_184_000, 2048, 1536, "seed002/a_flores"),
        f"{www}/img/mypic_afs.jpg": jpeg(1_046_000, 2048, 1536, "seed002/mypic_afs"),
    }
    files[f"{www}/img/nikon.jpg"] = jpeg(SEED002_TOTAL - sum(map(len, files.values())), 3008, 2000,
                                         "seed002/nikon")
    return GeneratedSite(_manifest("seed002", [www, google]), files)


SEED002_INTRO = (
    "WEB applications are dominating the business industry with all its varieties. Customer satisfaction "
    "while surfing any organization's website is one of the most important factors that companies are "
    "looking after. As webpages starts to become more advance technologists for web surfing have failed "
    'to adapt and meet business requirements. In 2012, Google launched a new protocol called "SPDY" as an '
    "upgrade to HTTP 1.1. In this paper we propose to explore this new protocol and compare its "
    "performance with existing technologies.")
SEED002_OBJECTIVE = (
    'The objective of this study is to measure the performance of using "SPDY" and comparing it to the '
    "previous HTTP1.1 protocol. Our focal point will be on the web page downloading time, which is in "
    "another words the throughput achieved with SPDY in contrast with HTTP1.1. Another interesting feature "
    "of SPDY that will be examine in our study is the SPDY's TCP connections behavior in comparison with HTTP1.1.")
SEED002_BIO1 = (
    "I am originally from El Paso, TX. I graduated from New Mexico State University in 2005 with a "
    "Bachelor's Degree in Computer Engineering Technology. Since then, I have been working for both UNM "
    "and NMSU in the area of network design, server administration and application development.")


# seed001: Mogul et al. 1997 ----------------------------------------------------------

#: The seed's files A-D (table 6-3): HTML bytes and their gzip -9 size.
SEED001_FILES = {"a": (17_545, 6_177), "b": (6_017, 2_033), "c": (374_144, 39_200), "d": (97_125, 10_223)}
#: Versions 2-4 edit 0.1 %, 1 % and 10 % of the page's bytes, scattered.
SEED001_EDITS = (0.001, 0.01, 0.1)
SPEC_INT95 = (("099.go", 4600), ("124.m88ksim", 1900), ("126.gcc", 1700), ("129.compress", 1800),
              ("130.li", 1900), ("132.ijpeg", 2400), ("134.perl", 1900), ("147.vortex", 2700))
SPEC_FP95 = (("101.tomcatv", 3700), ("102.swim", 8600), ("103.su2cor", 1400), ("104.hydro2d", 2400),
             ("107.mgrid", 2500), ("110.applu", 2200), ("125.turb3d", 4100), ("141.apsi", 2100),
             ("145.fpppp", 9600), ("146.wave5", 3000))
SPEC_SYSTEMS = (  # vendor, model family, CPU, operating system, compiler
    ("Digital Equipment Corp.", "AlphaStation", "Alpha 21164", "Digital UNIX V4.0", "DEC C V5.2"),
    ("Hewlett-Packard Company", "HP 9000 Model", "PA-8000", "HP-UX 10.20", "HP C/ANSI C A.10.32"),
    ("IBM Corporation", "RS/6000 Model", "PowerPC 604e", "AIX 4.2", "IBM C Set++ 3.1"),
    ("Silicon Graphics", "Origin200", "MIPS R10000", "IRIX64 6.4", "MIPSpro 7.1"),
    ("Sun Microsystems", "Ultra Enterprise", "UltraSPARC", "Solaris 2.5.1", "SunPro C 4.2"),
    ("Intel Corporation", "Alder System", "Pentium Pro", "UnixWare 2.1", "Intel Reference C 2.3"),
)


def _w3_link(rng: random.Random) -> str:
    words, kinds = versions.WORDS, ("draft", "note", "report", "HTML", "PostScript")
    return (f'<li><a href="/Protocols/HTTP/{rng.choice(words[:60])}/{rng.choice(words[:200])}.html">'
            f'{rng.choice(words[:200]).capitalize()} {rng.choice(words[:200])}</a> '
            f'<em>(<a href="/Protocols/HTTP/{rng.choice(words[:60])}/">{rng.choice(kinds)}</a>)</em></li>')


def _w3_body(letter: str, size: int) -> list[str]:
    """A w3.org-like page of about `size` bytes: a navigation list, sections of prose with
    links (A and B)."""
    rng = random.Random(f"seed001/{letter}")
    spread = (500, 1400) if letter == "a" else (100, 300)  # paragraph sizes: A has longer ones
    lines = ['<p><a href="/"><img src="data:," alt="W3C" width="72" height="48"></a> '
             '<a href="/Protocols/">Protocols</a> | <a href="/Consortium/">Consortium</a></p>',
             f"<h1>{versions.prose(f'seed001/{letter}/h1', 40).decode().rstrip('.')}</h1>"]
    total, i = sum(len(line) + 1 for line in lines), 0
    while True:
        words = versions.WORDS
        section = [f'<h2><a name="s{i}">{i + 1}. {rng.choice(words).capitalize()} {rng.choice(words)}</a></h2>']
        section += ["<p>" + versions.prose(f"seed001/{letter}/{i}/{j}", rng.randint(*spread)).decode() + "</p>"
                    for j in range(rng.randint(1, 2))]
        section += ["<ul>", *(_w3_link(rng) for _ in range(rng.randint(3, 10))), "</ul>"]
        total += sum(len(line) + 1 for line in section)
        if total > size - 350:  # html_page's frame, the rest in paragraphs
            return lines
        lines += section
        i += 1


def _spec_body(letter: str, size: int) -> list[str]:
    """SPEC CPU95 results pages of about `size` bytes: per system, a heading, the integer
    and floating-point tables of run times and ratios, and its configuration (C and D)."""
    rng = random.Random(f"seed001/{letter}")
    lines = ["<h1>SPEC CPU95 Results</h1>", "<p>" + versions.prose(f"seed001/{letter}/intro", 400).decode() + "</p>"]
    total, n = sum(len(line) + 1 for line in lines), 0
    while True:
        vendor, family, cpu, system, compiler = rng.choice(SPEC_SYSTEMS)
        mhz = rng.choice((133, 150, 166, 180, 200, 233, 250, 266, 300, 333, 400, 500))
        speed = mhz / 40 * rng.uniform(0.7, 1.3)
        model = f"{family} {rng.randint(2, 9)}{rng.randint(0, 99):02d} ({mhz} MHz)"
        block = [f'<hr><h2><a name="r{n}">{vendor} {model}</a></h2>']
        for kind, rows in (("int", SPEC_INT95), ("fp", SPEC_FP95)):
            block += ['<table border="1" cellpadding="3">',
                      "<tr><th>Benchmark</th><th>Reference Time</th><th>Base Run Time</th><th>Base Ratio</th>"
                      "<th>Run Time</th><th>Ratio</th></tr>"]
            for bench, ref in rows:
                base = speed * rng.uniform(0.8, 1.2)
                peak = base * rng.uniform(1.0, 1.15)
                block.append(f'<tr><td>{bench}</td><td align="right">{ref}</td><td align="right">{ref / base:.0f}</td>'
                             f'<td align="right">{base:.2f}</td><td align="right">{ref / peak:.0f}</td>'
                             f'<td align="right">{peak:.2f}</td></tr>')
            block += [f'<tr><td colspan="3">SPEC{kind}_base95</td><td align="right">{speed:.2f}</td>'
                      f'<td colspan="2">&nbsp;</td></tr>', "</table>"]
        block += ["<p>Notes: " + versions.prose(f"seed001/{letter}/{n}", rng.randint(100, 300)).decode() + "</p>",
                  '<table border="0" cellpadding="2">',
                  *(f"<tr><td>{key}</td><td>{value}</td></tr>" for key, value in (
                      ("Hardware Vendor:", vendor), ("Model Name:", f"{family} {mhz}"), ("CPU:", f"{mhz} MHz {cpu}"),
                      ("Number of CPUs:", "1"), ("Primary Cache:", "8KBI+8KBD on chip"),
                      ("Secondary Cache:", f"{rng.choice((96, 256, 512, 1024, 2048))}KB(I+D)"),
                      ("Memory:", f"{rng.choice((64, 128, 256, 512))}MB"), ("Operating System:", system),
                      ("Compiler:", compiler), ("Tested by:", vendor),
                      ("Test Date:", f"{rng.choice(('Jan', 'Mar', 'May', 'Jul', 'Sep', 'Nov'))}-96"))),
                  "</table>"]
        total += sum(len(line) + 1 for line in block)
        if total > size - 350:
            return lines
        lines += block
        n += 1


def seed001(letter: str) -> GeneratedSite:
    """One of the seed's files A-D, with versions 2-4 edited 0.1 %, 1 % and 10 %."""
    if letter not in SEED001_FILES:
        raise SiteError(f"seed001: file must be one of a, b, c, d (got {letter!r})")
    size, _ = SEED001_FILES[letter]
    host = "www.seed001.test"
    body = (_w3_body if letter in "ab" else _spec_body)(letter, size)
    html = html_page(f"seed001 file {letter.upper()}", [], body, size, f"seed001/{letter}/fill")
    site = GeneratedSite(_manifest(f"seed001-{letter}", [host]), {f"{host}/index.html": html})
    return with_versions(site, SEED001_EDITS, "scattered", 1.0, f"seed001-{letter}")


# modern: a present-day page -----------------------------------------------------------


def _m(host: str) -> str:
    return f"{host}.modern.test"


MODERN_ORIGINS = [_m(h) for h in ("www", "static", "cdn", "fonts", "img", "social", "media", "analytics",
                                  "thumbs", "ads")]
MODERN_FONTS = (  # file, family, weight, style, bytes
    ("sans-regular.woff", "PB Sans", 400, "normal", 34_000),
    ("sans-bold.woff", "PB Sans", 700, "normal", 32_000),
    ("serif-italic.woff", "PB Serif", 400, "italic", 27_000),
    ("icons.ttf", "PB Icons", 400, "normal", 16_000),
)


def _script(name: str, code: str, size: int) -> bytes:
    return text_file(f"/* {name} */\n{code}\n", size, f"modern/{name}")


def _on_ready(code: str) -> str:
    return ("(function () {\n  function run() {\n" + code + "\n  }\n"
            "  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', run);\n"
            "  else run();\n})();")


def _insert_images(box: str, urls: list[str], width: int, height: int) -> str:
    return (f"    var box = document.getElementById('{box}');\n    {urls!r}.forEach(function (u) {{\n"
            f"      var i = new Image({width}, {height}); i.src = u; i.alt = ''; box.appendChild(i);\n    }});")


def _insert_script(url: str) -> str:
    return f"    var s = document.createElement('script'); s.src = '{url}'; document.head.appendChild(s);"


def modern() -> GeneratedSite:
    """A present-day page: 69 requests over 10 origins, about 2 MB."""
    www, static, cdn, fonts, img, social, media, analytics, thumbs, ads = MODERN_ORIGINS
    files: dict[str, bytes] = {}

    def add(host: str, path: str, body: bytes) -> str:
        files[host + path] = body
        return f"//{host}{path}"

    faces = "".join(
        f"@font-face {{ font-family: '{family}'; font-weight: {weight}; font-style: {style}; font-display: swap; "
        f"src: url(//{fonts}/{name}) format('{'woff' if name.endswith('.woff') else 'truetype'}'); }}\n"
        for name, family, weight, style, _ in MODERN_FONTS)
    for name, family, weight, style, size in MODERN_FONTS:
        add(fonts, f"/{name}", font(family, "Bold" if weight == 700 else style.title(), size,
                                    "woff" if name.endswith(".woff") else None, f"modern/{name}"))
    css_main = add(static, "/css/main.css", text_file(
        faces + "body { font-family: 'PB Sans', sans-serif; margin: 0; }\nh1, h2, strong { font-weight: 700; }\n"
        "blockquote { font-family: 'PB Serif', serif; font-style: italic; }\n"
        ".icon { font-family: 'PB Icons'; }\n.grid img, #more img { display: inline-block; margin: 4px; }\n",
        72_000, "modern/main.css", css=True))
    css_theme = add(static, "/css/theme.css", text_file(
        "header { background: #123; color: #fff; }\n.hero { width: 100%; height: auto; }\n", 18_000,
        "modern/theme.css", css=True))

    logo = add(img, "/logo.svg", svg(6_000, 160, 40, "modern/logo"))
    icons = [add(social, f"/icons/s{i}.svg", svg(1_200 + 240 * (i - 1), 24, 24, f"modern/s{i}")) for i in range(1, 7)]
    hero = add(img, "/hero.jpg", jpeg(260_000, 1600, 900, "modern/hero"))
    products = []
    for i in range(1, 25):
        ext = "jpg" if i % 2 else "png"
        size, seed = 9_000 + 700 * (i - 1), f"modern/p{i}"
        body = jpeg(size, 300, 300, seed) if ext == "jpg" else png(size, 300, 300, seed)
        products.append(add(img, f"/p/{i:02d}.{ext}", body))
    banner = add(img, "/banner.png", png(48_000, 970, 250, "modern/banner"))
    posters = [add(media, f"/posters/v{i}.jpg", jpeg(30_000, 480, 270, f"modern/v{i}")) for i in range(1, 5)]
    thumb_urls = [add(thumbs, f"/t/{i:02d}.jpg", jpeg(8_000 + 1_000 * (i - 1), 160, 90, f"modern/t{i}"))
                  for i in range(1, 13)]
    ad_urls = [add(ads, f"/creative/{i}.png", png(25_000, 300, 250, f"modern/ad{i}")) for i in range(1, 4)]
    pixel = add(analytics, "/collect.gif", gif(43, "modern/pixel"))

    ads_js = add(ads, "/ads.js", _script("ads.js", _on_ready(_insert_images("ads", ad_urls, 300, 250)), 38_000))
    late_js = add(static, "/js/late.js", _script(
        "late.js", _on_ready(_insert_images("more", thumb_urls, 160, 90) + "\n" + _insert_script(ads_js)), 42_000))
    app_js = add(static, "/js/app.js", _script("app.js", "(function () {\n" + _insert_script(late_js) + "\n})();",
                                                160_000))
    a_js = add(analytics, "/a.js", _script("a.js", _on_ready(
        f"    var p = new Image(1, 1); p.src = '{pixel}'; p.alt = ''; document.body.appendChild(p);"), 22_000))
    inert = "window.__pb = (window.__pb || []).concat(['{}']);"
    polyfill = add(cdn, "/lib/polyfill.js", _script("polyfill.js", inert.format("polyfill"), 28_000))
    framework = add(cdn, "/lib/framework.js", _script("framework.js", inert.format("framework"), 240_000))
    carousel = add(cdn, "/lib/carousel.js", _script("carousel.js", inert.format("carousel"), 36_000))
    vendor = add(static, "/js/vendor.js", _script("vendor.js", inert.format("vendor"), 95_000))
    widget = add(social, "/widget.js", _script("widget.js", inert.format("widget"), 31_000))

    head = [f'<link rel="stylesheet" href="{css_main}">', f'<link rel="stylesheet" href="{css_theme}">',
            f'<script src="{polyfill}"></script>', f'<script src="{framework}"></script>',
            f'<script src="{app_js}"></script>', f'<script async src="{a_js}"></script>']
    body = [
        f'<header><img src="{logo}" width="160" height="40" alt="Modern"> <nav>'
        + "".join(f'<img src="{u}" width="24" height="24" alt="">' for u in icons) + "</nav></header>",
        f'<img class="hero" src="{hero}" width="1600" height="900" alt="Hero">',
        "<h1>Today's page</h1>", "<blockquote>Seventy requests over ten origins.</blockquote>",
        '<p><span class="icon">ABC</span> <strong>Products</strong></p>',
        '<div class="grid">' + "".join(f'<img src="{u}" width="300" height="300" alt="">' for u in products)
        + "</div>",
        f'<img src="{banner}" width="970" height="250" alt="">',
        '<div class="videos">' + "".join(f'<img src="{u}" width="480" height="270" alt="">' for u in posters)
        + "</div>",
        '<h2>More for you</h2><div id="more"></div>', '<div id="ads"></div>',
        f'<script defer src="{vendor}"></script>', f'<script defer src="{widget}"></script>',
        f'<script async src="{carousel}"></script>',
    ]
    files[www + "/index.html"] = html_page("modern", head, body, 48_000, "modern/index")
    levels = {f"{fonts}/{name}": 2 for name, *_ in MODERN_FONTS}  # from main.css
    levels |= {late_js.removeprefix("//"): 2, pixel.removeprefix("//"): 2}  # app.js, a.js
    levels |= {url.removeprefix("//"): 3 for url in [*thumb_urls, ads_js]}  # late.js
    levels |= {url.removeprefix("//"): 4 for url in ad_urls}  # ads.js
    return GeneratedSite(_manifest("modern", MODERN_ORIGINS), files, levels)


# generate: a parametric page ------------------------------------------------------------

GEN_CSS_BYTES = 10_000
GEN_JS_BYTES = 20_000
GEN_IMAGE_SIZE = (100, 75)
GEN_MAX_BYTES = 1_000_000_000


class GenParams(BaseModel):
    """`generate:` in an experiment spec."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    images: int = Field(10, ge=0, le=1000)
    image_bytes: int = Field(2544, ge=200, le=50_000_000)
    origins: int = Field(1, ge=1, le=50)
    css: int = Field(0, ge=0, le=50)
    js: int = Field(0, ge=0, le=50)
    late: int = Field(0, ge=0, le=1000)
    html_bytes: int = Field(0, ge=0, le=50_000_000)
    #: Later versions: the fraction of its bytes each edits (in the chosen text files).
    versions: tuple[Annotated[float, Field(gt=0, le=0.5)], ...] = Field((), max_length=MAX_VERSIONS - 1)
    edit: Literal["one", "scattered"] = "scattered"
    #: The fraction of the text files each later version edits (the HTML always).
    changed: float = Field(0.5, gt=0, le=1)

    @model_validator(mode="after")
    def _bounded(self) -> GenParams:
        if (self.images + self.late) * self.image_bytes > GEN_MAX_BYTES:
            raise ValueError(f"(images + late) x image_bytes must be at most {GEN_MAX_BYTES:,} bytes")
        if not self.versions and (self.edit != "scattered" or self.changed != 0.5):
            raise ValueError("edit and changed need versions (the later versions' edit fractions)")
        return self

    @property
    def name(self) -> str:
        name = f"gen-i{self.images}-b{self.image_bytes}-o{self.origins}"
        for key, value in (("c", self.css), ("j", self.js), ("l", self.late), ("h", self.html_bytes)):
            name += f"-{key}{value}" if value else ""
        if self.versions:
            fractions = "_".join(f"{f:g}" for f in self.versions)
            if len(name) + len(fractions) > 60:  # a name is at most 80 characters
                digest = hashlib.sha256(fractions.encode()).hexdigest()[:8]
                fractions = f"{len(self.versions)}x{digest}"
            name += f"-v{fractions}" + ("-eone" if self.edit == "one" else "")
            name += f"-x{self.changed:g}" if self.changed != 0.5 else ""
        return name

    @property
    def hosts(self) -> list[str]:
        return ["www.gen.test"] + [f"o{i}.gen.test" for i in range(2, self.origins + 1)]


def parse_generate(data: Any, where: str = "generate") -> GenParams:
    """`generate:` parameters, or a one-line SiteError naming the field."""
    try:
        return GenParams.model_validate(data)
    except ValidationError as error:
        raise one_line(where, error) from None


def generate(params: GenParams) -> GeneratedSite:
    """The parametric page of `params`."""
    hosts, name = params.hosts, params.name
    width, height = GEN_IMAGE_SIZE
    files: dict[str, bytes] = {}

    def image(i: int) -> str:
        host = hosts[i % len(hosts)]
        path = f"/img/{i + 1:04d}.png"
        files[host + path] = png(params.image_bytes, width, height, f"{name}/{i}")
        return f"//{host}{path}"

    head = []
    for i in range(1, params.css + 1):
        files[f"{hosts[0]}/css/{i:02d}.css"] = text_file(f".c{i} {{ margin: {i}px; }}\n", GEN_CSS_BYTES,
                                                        f"{name}/c{i}", css=True)
        head.append(f'<link rel="stylesheet" href="/css/{i:02d}.css">')
    for i in range(1, params.js + 1):
        files[f"{hosts[0]}/js/{i:02d}.js"] = text_file(f"window.__pb{i} = {i};\n", GEN_JS_BYTES, f"{name}/j{i}")
        head.append(f'<script src="/js/{i:02d}.js"></script>')
    body = [f"<h1>{name}</h1>", '<div id="images">']
    body += [f'<img src="{image(i)}" width="{width}" height="{height}" alt="">' for i in range(params.images)]
    body.append('</div><div id="more"></div>')
    levels = {}
    if params.late:
        urls = [image(i) for i in range(params.images, params.images + params.late)]
        levels = {url.removeprefix("//"): 2 for url in urls}  # inserted by late.js
        code = _on_ready(_insert_images("more", urls, width, height))
        files[f"{hosts[0]}/late.js"] = f"/* late.js: inserts {params.late} images */\n{code}\n".encode()
        body.append('<script async src="/late.js"></script>')
    files[f"{hosts[0]}/index.html"] = html_page(name, head, body, params.html_bytes, f"{name}/html")
    site = GeneratedSite(_manifest(name, hosts), files, levels)
    return with_versions(site, params.versions, params.edit, params.changed, "generate: versions")


# Built-in names ---------------------------------------------------------------------------

_SEED000 = re.compile(r"^seed000-(small|large)-n([0-9]+)$")


def builtin_sites() -> tuple[str, ...]:
    """Every built-in site name."""
    seed000_names = [f"seed000-{kind}-n{n}" for kind in SEED000_SIZES for n in range(1, SEED000_MAX + 1)]
    return (*seed000_names, *(f"seed001-{letter}" for letter in SEED001_FILES), "seed002", "modern")


def builtin(name: str) -> GeneratedSite:
    """Generate a built-in site by name (pure)."""
    match = _SEED000.match(name)
    if match and 1 <= int(match.group(2)) <= SEED000_MAX and not match.group(2).startswith("0"):
        return seed000(match.group(1), int(match.group(2)))
    if name.startswith("seed001-") and name[8:] in SEED001_FILES:
        return seed001(name[8:])
    if name == "seed002":
        return seed002()
    if name == "modern":
        return modern()
    raise SiteError(f"unknown site {name!r}; built-in: seed000-{{small,large}}-n1..{SEED000_MAX}, "
                    "seed001-{a,b,c,d}, seed002, modern; or generate: {images: N, image_bytes: B, origins: K, ...}; "
                    "or a directory with site.yaml")


