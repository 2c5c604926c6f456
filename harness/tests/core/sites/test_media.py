"""Media of exact sizes (pure): valid PNG, JPEG, GIF and fonts of the bytes asked,
deterministic by seed."""

from __future__ import annotations

import pytest

from pagebench.core.sites.media import font, gif, jpeg, png
from pagebench.core.sites.model import SiteError
from tests.core.sites.decoders import font_info, gif_info, jpeg_info, png_info


@pytest.mark.parametrize("size", [137 + 14, 137 + 19, 137 + 20, 2544, 45566, 1_000_000])
def test_png_is_valid_and_exactly_sized(size: int):
    body = png(size, 64, 48, f"t{size}")
    assert len(body) == size and png_info(body) == (64, 48)


def test_png_too_small_is_one_line_error():
    with pytest.raises(SiteError, match=r"image_bytes: 100 is too small .* \(at least \d+\)"):
        png(100, 64, 48, "x")


@pytest.mark.parametrize("size", [8_000, 65_541 + 7_600, 65_542 + 7_600, 1_184_000, 7_000_000])
def test_jpeg_is_valid_and_exactly_sized(size: int):
    body = jpeg(size, 1600, 1200, f"t{size}")
    assert len(body) == size and jpeg_info(body) == (1600, 1200)


@pytest.mark.parametrize("size", [35, 38, 40, 300, 6250])
def test_gif_is_valid_and_exactly_sized(size: int):
    body = gif(size, "g")
    assert len(body) == size and gif_info(body) == (1, 1)


@pytest.mark.parametrize("flavor", [None, "woff"])
def test_fonts_load_with_fonttools_and_are_about_the_asked_size(flavor):
    body = font("PB Sans", "Regular", 30_000, flavor, "f")
    loaded = font_info(body)
    assert loaded.flavor == flavor
    assert loaded["name"].getDebugName(1) == "PB Sans"
    assert 30_000 <= len(body) <= 30_100


def test_same_seed_same_bytes_different_seed_different_content():
    assert png(2544, 64, 48, "a") == png(2544, 64, 48, "a")
    assert png(2544, 64, 48, "a") != png(2544, 64, 48, "b")
    assert jpeg(9000, 64, 64, "a") != jpeg(9000, 64, 64, "b")
