"""Media of exact byte sizes, for the built-in and generated sites: images Chromium
decodes, fonts it loads, and text files padded with realistic code.

A page's byte counts are what the seeds' experiments vary, so every file is EXACTLY the
size asked: PNG padded with a tEXt chunk, baseline JPEG padded with COM segments, GIF
padded with a comment extension, SVG and text with comments. Fonts are built with
fontTools (TTF; WOFF padded with its private-data block), to about the size asked.
Text files are padded with realistic code (`text.py`: rules and functions never used,
comments of prose), so every encoding compresses them about as it does real pages (gzip
-9: HTML and JS ~0.35-0.4, CSS ~0.25). Deterministic: the same seed gives the same bytes
(a site's digest depends on it).
"""

from __future__ import annotations

import hashlib
import io
import struct
import zlib

from pagebench.core.sites.model import SiteError
from pagebench.core.sites.text import css_text, js_text, prose


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
    return body + open_ + prose(seed, room) + close


def text_file(body: str, size: int, seed: str, css: bool = False) -> bytes:
    """JavaScript (or CSS) padded to exactly `size` bytes with realistic code: functions
    never called (rules that match nothing) and comments of prose, which compress as
    real code does."""
    room = size - len(body.encode())
    if room < 0:
        raise SiteError(f"{seed}: {size} bytes is less than its content ({len(body.encode())})")
    return body.encode() + (css_text if css else js_text)(seed, room)


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
