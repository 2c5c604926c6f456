"""Content encodings, in one table: what a spec's `encoding:` may name, what the servers
send for it, and how its bodies are made. Pure: bytes in, bytes out.

Every encoded body is made ahead of time, beside its file (`style.css.br`), as seed 001
(section 8.4) proposes: the servers then spend the same CPU on every encoding, and the
encoding's cost is measured once, when the site is written (`encode_ms`).

`dcz` is delta encoding by Compression Dictionary Transport (RFC 9842): a text resource's
body compressed by zstd with its previous version (the one the browser has) as a raw
dictionary. The browser offers it only for a resource it holds a dictionary for, so a
`dcz` condition answers everything else as `zstd`, its fallback. No `dcb`: Python's
brotli binding cannot compress with a custom dictionary, and Debian 12's brotli tool is
1.0.9 (no dictionaries either).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
from dataclasses import dataclass

import brotli
import zstandard

from pagebench.core.vocabulary import Row

#: RFC 9842 section 5: a dcz body is this magic, the dictionary's SHA-256, a zstd frame.
DCZ_MAGIC = b"\x5e\x2a\x4d\x18\x20\x00\x00\x00"
#: What a text resource is (encoded, and versioned); everything else (images, fonts) is
#: sent as stored, as a real server does with already-compressed formats.
TEXT_SUFFIXES = (".html", ".htm", ".css", ".js", ".mjs", ".json", ".svg", ".txt")
#: The URL suffix a dictionary is fetched at: `/style.css.pbdict` is v1 of `/style.css`,
#: with `Use-As-Dictionary: match="/style.css"` (fresh for a day: Chromium 156 registers no
#: dictionary from a response without freshness, measured, so the resource itself, sent
#: `no-cache` to be revalidated, cannot be its own dictionary).
DICTIONARY_SUFFIX = ".pbdict"
GZIP_LEVEL = 9
BROTLI_QUALITY = 11
ZSTD_LEVEL = 19


@dataclass(frozen=True, repr=False)
class Encoding(Row):
    """One row of the table below. Past the spec loader and the store's rows, an encoding
    travels as its row (`parse` turns a name into it once)."""

    kind = "encoding"
    #: The Content-Encoding sent ("" for none).
    token: str
    #: The precompressed file's suffix beside the original ("" for none).
    suffix: str
    summary: str
    #: How charts draw it (Okabe-Ito, as the modes' colours): identity, the baseline, grey.
    colour: str
    #: Delta by dictionary; resources without a dictionary get `fallback`.
    dictionary: bool = False
    fallback: Encoding | None = None

    @property
    def plain(self) -> Encoding:
        """What a response is sent in where no dictionary is offered: the fallback (dcz:
        zstd), else the encoding itself."""
        return self.fallback or self

    @property
    def answers(self) -> tuple[str, ...]:
        """The Content-Encoding tokens a text response of this condition may carry: its own,
        and its fallback's (dcz answers zstd where the browser offers no dictionary)."""
        return (self.token,) + ((self.fallback.token,) if self.fallback else ())

    def compress(self, body: bytes) -> bytes:
        """`body` as this plain encoding sends it (dcz needs a dictionary: `dcz_encode`)."""
        if self is GZIP:
            return gzip.compress(body, compresslevel=GZIP_LEVEL, mtime=0)
        if self is BR:
            return bytes(brotli.compress(body, quality=BROTLI_QUALITY))
        if self is ZSTD:
            return zstandard.ZstdCompressor(level=ZSTD_LEVEL).compress(body)
        if self is IDENTITY:
            return body
        raise ValueError(f"{self.name}: not a plain encoding (it needs a dictionary)")


IDENTITY = Encoding("identity", "", "", "as stored (no Content-Encoding)", "#999999")
GZIP = Encoding("gzip", "gzip", ".gz", f"gzip -{GZIP_LEVEL} (the seed's compressor)", "#E69F00")
BR = Encoding("br", "br", ".br", f"brotli quality {BROTLI_QUALITY}", "#56B4E9")
ZSTD = Encoding("zstd", "zstd", ".zst", f"zstd level {ZSTD_LEVEL}", "#009E73")
DCZ = Encoding("dcz", "dcz", ".dcz", "delta: zstd with the previous version as dictionary (RFC 9842); "
               "zstd where the browser offers no dictionary", "#CC79A7", dictionary=True, fallback=ZSTD)
#: In display order (reports, charts); identity is every comparison's baseline.
ENCODINGS = (IDENTITY, GZIP, BR, ZSTD, DCZ)
NAMES = tuple(e.name for e in ENCODINGS)
#: The precompressed sidecars every text file gets (dcz sidecars are per dictionary).
SIDECARS = tuple(e for e in ENCODINGS if e.suffix and not e.dictionary)


def parse(name: str) -> Encoding:
    """The encoding a spec, a stored row or a command names; a ValueError lists the known."""
    for encoding in ENCODINGS:
        if encoding.name == name:
            return encoding
    raise ValueError(f"unknown encoding {name!r}; known: {', '.join(NAMES)}")


def of_token(token: str) -> Encoding:
    """The encoding a received Content-Encoding names ("" none); a ValueError if unknown."""
    for encoding in ENCODINGS:
        if encoding.token == token:
            return encoding
    raise ValueError(f"unknown content coding {token!r}")


def is_text(path: str) -> bool:
    """Whether a file is encoded (text) or sent as stored (images, fonts)."""
    return path.lower().endswith(TEXT_SUFFIXES)


def decode(token: str, body: bytes, dictionary: bytes | None = None) -> bytes:
    """What a browser does with a received body (for tests and checks)."""
    encoding = of_token(token)
    if encoding is GZIP:
        return gzip.decompress(body)
    if encoding is BR:
        return bytes(brotli.decompress(body))
    if encoding is ZSTD:
        return zstandard.ZstdDecompressor().decompress(body)
    if encoding is DCZ:
        if dictionary is None:
            raise ValueError("dcz: needs the dictionary")
        return dcz_decode(dictionary, body)
    return body


def sha256(body: bytes) -> bytes:
    return hashlib.sha256(body).digest()


def available_dictionary(dictionary: bytes) -> str:
    """The `Available-Dictionary` header a browser sends for it: an sf-binary of its hash."""
    return ":" + base64.b64encode(sha256(dictionary)).decode() + ":"


def dictionary_id(dictionary: bytes) -> str:
    """A short file-name-safe id of a dictionary (`style.css.<id>.dcz`)."""
    return sha256(dictionary)[:8].hex()


def dictionary_id_of_header(value: str) -> str:
    """`dictionary_id` from an `Available-Dictionary` header value."""
    return base64.b64decode(value.strip().strip(":"))[:8].hex()


def dcz_encode(dictionary: bytes, body: bytes) -> bytes:
    """RFC 9842 `dcz`: the magic, the dictionary's hash, then zstd with the dictionary as
    raw content (window large enough to reach back across all of it)."""
    raw = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    frame = zstandard.ZstdCompressor(level=ZSTD_LEVEL, dict_data=raw).compress(body)
    return DCZ_MAGIC + sha256(dictionary) + frame


def dcz_decode(dictionary: bytes, body: bytes) -> bytes:
    """A dcz body back to the resource, checking it names this dictionary."""
    if body[:8] != DCZ_MAGIC:
        raise ValueError("dcz: bad magic")
    if body[8:40] != sha256(dictionary):
        raise ValueError("dcz: made with another dictionary")
    raw = zstandard.ZstdCompressionDict(dictionary, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    return zstandard.ZstdDecompressor(dict_data=raw).decompress(body[40:])
