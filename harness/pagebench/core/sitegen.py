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
  to `html_bytes` when given. Named from its parameters: `gen-i20-b2544-o1[-c1][-j1][-l5][-h30000]`.
"""

from __future__ import annotations

import hashlib
import io
import re
import struct
import zlib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from pagebench.core.sites import GeneratedSite, SiteError, SiteManifest, one_line


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
    """`body` followed by a comment that brings it to exactly `size` bytes."""
    room = size - len(body) - len(open_) - len(close)
    if size == len(body):
        return body
    if room < 0:
        raise SiteError(f"{seed}: {size} bytes is less than its content ({len(body) + len(open_) + len(close)})")
    return body + open_ + filler(seed, room) + close


def text_file(body: str, size: int, seed: str) -> bytes:
    """CSS or JavaScript padded with a /* */ comment."""
    return padded(body.encode(), size, b"/*", b"*/\n", seed)


FONT_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.,:;!?-'&"


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
    """A page with `head` and `body` lines, padded with a comment to `size` bytes when given."""
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
    if room < 8:
        raise SiteError(f"html_bytes: at least {len(text.encode()) + len(end) + 8} for this page (got {size})")
    return text.encode() + b"<!--" + filler(seed or title, room - 8) + b"-->\n" + end.encode()


def _manifest(name: str, origins: list[str], path: str = "/") -> SiteManifest:
    return SiteManifest(name=name, entry=f"https://{origins[0]}{path}", origins=tuple(origins))


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
        72_000, "modern/main.css"))
    css_theme = add(static, "/css/theme.css", text_file(
        "header { background: #123; color: #fff; }\n.hero { width: 100%; height: auto; }\n", 18_000,
        "modern/theme.css"))

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

    @model_validator(mode="after")
    def _bounded(self) -> GenParams:
        if (self.images + self.late) * self.image_bytes > GEN_MAX_BYTES:
            raise ValueError(f"(images + late) x image_bytes must be at most {GEN_MAX_BYTES:,} bytes")
        return self

    @property
    def name(self) -> str:
        name = f"gen-i{self.images}-b{self.image_bytes}-o{self.origins}"
        for key, value in (("c", self.css), ("j", self.js), ("l", self.late), ("h", self.html_bytes)):
            name += f"-{key}{value}" if value else ""
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
        files[f"{hosts[0]}/css/{i:02d}.css"] = text_file(f".c{i} {{ margin: {i}px; }}\n", GEN_CSS_BYTES, f"{name}/c{i}")
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
    return GeneratedSite(_manifest(name, hosts), files, levels)


# Built-in names ---------------------------------------------------------------------------

_SEED000 = re.compile(r"^seed000-(small|large)-n([0-9]+)$")


def builtin_sites() -> tuple[str, ...]:
    """Every built-in site name."""
    seed000_names = [f"seed000-{kind}-n{n}" for kind in SEED000_SIZES for n in range(1, SEED000_MAX + 1)]
    return (*seed000_names, "seed002", "modern")


def builtin(name: str) -> GeneratedSite:
    """Generate a built-in site by name (pure)."""
    match = _SEED000.match(name)
    if match and 1 <= int(match.group(2)) <= SEED000_MAX and not match.group(2).startswith("0"):
        return seed000(match.group(1), int(match.group(2)))
    if name == "seed002":
        return seed002()
    if name == "modern":
        return modern()
    raise SiteError(f"unknown site {name!r}; built-in: seed000-{{small,large}}-n1..{SEED000_MAX}, seed002, "
                    "modern; or generate: {images: N, image_bytes: B, origins: K, ...}; or a directory with site.yaml")


