"""Decoders used as validity checks of generated media: each walks a format's structure
(chunks, segments, blocks) and fails on anything a browser would reject."""

from __future__ import annotations

import io
import re
import struct
import zlib

from fontTools.ttLib import TTFont


def png_info(data: bytes) -> tuple[int, int]:
    """Walk the chunks (CRC-checked), inflate IDAT and check every scanline; (width, height)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, idat = 8, [], b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, kind
        chunks.append(kind)
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    assert pos == len(data) and chunks[0] == b"IHDR" and chunks[-1] == b"IEND" and b"IDAT" in chunks
    width, height, depth, colour_type = struct.unpack(">IIBB", data[16:26])
    assert (depth, colour_type) == (8, 2)
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + 3 * width)
    assert all(raw[row * (1 + 3 * width)] == 0 for row in range(height))  # filter type "none"
    return width, height


def jpeg_info(data: bytes) -> tuple[int, int]:
    """Walk the marker segments to the scan; (width, height) from SOF0."""
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9"
    pos, seen, size = 2, [], None
    while True:
        assert data[pos] == 0xFF
        marker = data[pos + 1]
        (length,) = struct.unpack(">H", data[pos + 2:pos + 4])
        seen.append(marker)
        if marker == 0xC0:
            height, width = struct.unpack(">HH", data[pos + 5:pos + 9])
            size = (width, height)
        pos += 2 + length
        if marker == 0xDA:
            break
    scan = data[pos:-2]
    assert re.search(rb"\xff[^\x00]", scan) is None  # 0xFF in entropy data is always stuffed
    assert {0xE0, 0xDB, 0xC0, 0xC4, 0xDA} <= set(seen)
    assert size is not None
    return size


def gif_info(data: bytes) -> tuple[int, int]:
    assert data[:6] == b"GIF89a" and data[-1:] == b"\x3b"
    width, height, flags = struct.unpack("<HHB", data[6:11])
    pos = 13 + ((3 << ((flags & 7) + 1)) if flags & 0x80 else 0)
    while data[pos] == 0x21:  # extensions: label, sub-blocks, terminator
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    assert data[pos] == 0x2C  # image descriptor
    pos += 10 + 1  # descriptor, LZW minimum code size
    while data[pos]:
        pos += data[pos] + 1
    assert pos + 2 == len(data)
    return width, height


def font_info(data: bytes) -> TTFont:
    font = TTFont(io.BytesIO(data))
    for tag in ("head", "hhea", "maxp", "OS/2", "hmtx", "cmap", "glyf", "loca", "name", "post"):
        assert tag in font, tag
    assert ord("A") in font.getBestCmap()
    return font


def check_media(path: str, body: bytes) -> None:
    ext = path.rsplit(".", 1)[-1]
    if ext == "png":
        png_info(body)
    elif ext == "jpg":
        jpeg_info(body)
    elif ext == "gif":
        gif_info(body)
    elif ext in ("woff", "ttf"):
        font_info(body)
    elif ext == "svg":
        assert body.startswith(b"<svg ") and b"</svg>" in body
    elif ext == "html":
        assert b'<link rel="icon" href="data:,">' in body and body.rstrip().endswith(b"</html>")
