"""The seeds' pages (pure): seed000's images, seed001's files and their versions, seed002's
two-origin photo page, each as the papers describe it."""

from __future__ import annotations

import gzip
import re

import pytest

from pagebench.core.sites.builtin import builtin
from pagebench.core.sites.seeds import SEED002_TOTAL
from tests.core.sites.decoders import check_media, png_info


@pytest.mark.parametrize("kind,size", [("small", 2544), ("large", 45566)])
@pytest.mark.parametrize("n", [1, 7, 40])
def test_seed000_has_n_distinct_valid_images_of_the_exact_size(kind: str, n: int, size: int):
    site = builtin(f"seed000-{kind}-n{n}")
    assert site.manifest.origins == ("www.seed000.test",)
    assert site.manifest.entry == "https://www.seed000.test/"
    html = site.files["www.seed000.test/index.html"].decode()
    images = {path: body for path, body in site.files.items() if path.endswith(".png")}
    assert len(images) == n and site.requests == n + 1
    assert {len(body) for body in images.values()} == {size}
    assert len(set(images.values())) == n  # distinct content
    for path, body in images.items():
        png_info(body)
        assert f'src="{path.removeprefix("www.seed000.test")}"' in html
    assert html.count("<img ") == n


def test_seed000_images_agree_across_documents():
    """The same URL holds the same image in every document of the family."""
    small5, small40 = builtin("seed000-small-n5"), builtin("seed000-small-n40")
    for path, body in small5.files.items():
        if path.endswith(".png"):
            assert small40.files[path] == body


@pytest.mark.parametrize("letter,size,gzipped", [("a", 17_545, 6_177), ("b", 6_017, 2_033),
                                                 ("c", 374_144, 39_200), ("d", 97_125, 10_223)])
def test_seed001_files_have_the_papers_sizes_and_compressibility(letter: str, size: int, gzipped: int):
    site = builtin(f"seed001-{letter}")
    assert site.manifest.origins == ("www.seed001.test",) and site.entry == "https://www.seed001.test/"
    assert list(site.files) == ["www.seed001.test/index.html"] and site.requests == 1
    html = site.files["www.seed001.test/index.html"]
    assert len(html) == size
    check_media("index.html", html)
    assert abs(len(gzip.compress(html, 9)) / gzipped - 1) <= 0.15
    assert (b"<table" in html) == (letter in "cd")  # C and D are SPEC CPU95 results tables
    assert site.manifest.versions == 4 and len(site.later) == 3
    assert site.manifest.changed == {2: ["www.seed001.test/index.html"], 3: ["www.seed001.test/index.html"],
                                     4: ["www.seed001.test/index.html"]}
    for number, fraction in zip((2, 3, 4), (0.001, 0.01, 0.1)):
        later = site.version(number)["www.seed001.test/index.html"]
        changed = sum(a != b for a, b in zip(html, later))
        assert len(later) == size and changed == max(1, round(fraction * size))
        assert re.findall(rb"<[^>]*>", later) == re.findall(rb"<[^>]*>", html)
    assert site.digest() == builtin(f"seed001-{letter}").digest()


def test_seed002_two_origins_about_9_5_megabytes_of_photos():
    site = builtin("seed002")
    assert site.manifest.origins == ("www.seed002.test", "images.seed002.test")
    assert site.total_bytes == SEED002_TOTAL
    assert abs(site.total_bytes - 9_500_000) < 300_000
    assert site.requests == 6
    photos = {p: b for p, b in site.files.items() if p.endswith(".jpg")}
    assert len(photos) == 3 and sum(map(len, photos.values())) > 9_000_000
    for path, body in site.files.items():
        check_media(path, body)
    assert len(site.files["images.seed002.test/images/srpr/logo11w.png"]) == 14_022
    html = site.files["www.seed002.test/index.html"].decode()
    assert "//images.seed002.test/images/srpr/logo11w.png" in html
    for name in ("soe.gif", "a_flores.jpg", "mypic_afs.jpg", "nikon.jpg"):
        assert f'src="img/{name}"' in html
