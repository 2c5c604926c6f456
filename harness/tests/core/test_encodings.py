"""Content encodings: every body decodes back, and dcz is RFC 9842's format (checked with
the zstandard package directly, not through our own decoder)."""

from __future__ import annotations

import base64
import gzip
import hashlib

import brotli
import pytest
import zstandard

from pagebench.core import encodings
from pagebench.core.sites import text as versions

TEXT = versions.paragraphs("enc", 100_000)


@pytest.mark.parametrize("name", [e.name for e in encodings.ENCODINGS if not e.dictionary])
@pytest.mark.parametrize("body", [b"", b"x", TEXT], ids=["empty", "one", "100k"])
def test_every_plain_encoding_round_trips(name: str, body: bytes):
    encoding = encodings.parse(name)
    encoded = encoding.compress(body)
    assert encodings.decode(encoding.token, encoded) == body
    if name != "identity" and len(body) > 1000:
        assert len(encoded) < len(body) * 0.45


def test_plain_encodings_are_what_other_decoders_read():
    assert gzip.decompress(encodings.GZIP.compress(TEXT)) == TEXT
    assert brotli.decompress(encodings.BR.compress(TEXT)) == TEXT
    assert zstandard.ZstdDecompressor().decompress(encodings.ZSTD.compress(TEXT)) == TEXT
    assert encodings.IDENTITY.compress(TEXT) is TEXT


def test_dcz_decodes_with_zstandard_and_the_raw_dictionary():
    later = versions.edit(TEXT, 0.01, "scattered", "v2").body
    body = encodings.dcz_encode(TEXT, later)
    assert body[:8] == encodings.DCZ_MAGIC == b"\x5e\x2a\x4d\x18\x20\x00\x00\x00"
    assert body[8:40] == hashlib.sha256(TEXT).digest()
    raw = zstandard.ZstdCompressionDict(TEXT, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
    assert zstandard.ZstdDecompressor(dict_data=raw).decompress(body[40:]) == later
    assert encodings.decode("dcz", body, TEXT) == later


def test_dcz_of_a_one_percent_edit_is_a_small_fraction_of_the_body():
    later = versions.edit(TEXT, 0.01, "scattered", "v2").body
    delta = encodings.dcz_encode(TEXT, later)
    assert len(delta) <= 0.05 * len(later)
    assert len(delta) < len(encodings.ZSTD.compress(later)) / 4  # the dictionary is what pays
    one = encodings.dcz_encode(TEXT, versions.edit(TEXT, 0.01, "one", "v2").body)
    assert len(one) < len(delta)  # one run costs less than a thousand scattered ones


def test_dcz_refuses_another_dictionary_and_a_missing_one():
    body = encodings.dcz_encode(TEXT, TEXT[::-1])
    with pytest.raises(ValueError, match="made with another dictionary"):
        encodings.decode("dcz", body, TEXT[1:])
    with pytest.raises(ValueError, match="needs the dictionary"):
        encodings.decode("dcz", body)
    with pytest.raises(ValueError, match="bad magic"):
        encodings.dcz_decode(TEXT, b"\0" * 40 + body[40:])


def test_available_dictionary_header_and_its_id():
    header = encodings.available_dictionary(TEXT)
    assert header == ":" + base64.b64encode(hashlib.sha256(TEXT).digest()).decode() + ":"
    assert encodings.dictionary_id_of_header(header) == encodings.dictionary_id(TEXT)
    assert encodings.dictionary_id_of_header(f" {header} ") == encodings.dictionary_id(TEXT)
    assert encodings.dictionary_id(TEXT) == hashlib.sha256(TEXT).hexdigest()[:16]
    assert encodings.dictionary_id(TEXT) != encodings.dictionary_id(TEXT + b" ")


def test_table_and_is_text():
    assert encodings.NAMES == ("identity", "gzip", "br", "zstd", "dcz")
    assert [e.suffix for e in encodings.SIDECARS] == [".gz", ".br", ".zst"]
    assert encodings.parse("dcz").fallback is encodings.ZSTD and encodings.DCZ.answers == ("dcz", "zstd")
    assert encodings.is_text("a/b/index.HTML") and encodings.is_text("x.js") and encodings.is_text("i.svg")
    assert not encodings.is_text("a.png") and not encodings.is_text("a.html.gz") and not encodings.is_text("f.woff")
    with pytest.raises(ValueError, match="unknown encoding 'lzma'; known: identity, gzip"):
        encodings.parse("lzma")
    with pytest.raises(ValueError, match="not a plain encoding"):
        encodings.DCZ.compress(b"x")
