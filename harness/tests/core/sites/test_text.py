"""Realistic text and its edits: exact sizes, compressibility, and edits that change
exactly the bytes they say, in text only."""

from __future__ import annotations

import gzip
import re
import subprocess
from pathlib import Path

import pytest

from pagebench.core.sites import text as versions
from pagebench.core.sites.text import edit, editable
from tests.helpers import program


@pytest.mark.parametrize("n", [0, 1, 2, 7, 92, 1000, 17_545])
def test_prose_is_exactly_n_safe_ascii_bytes_and_deterministic(n: int):
    body = versions.prose("s", n)
    assert len(body) == n and body == versions.prose("s", n)
    assert not re.search(rb'[<>&"\'*/\-]|[^\x20-\x7e]', body)


def test_prose_compresses_like_english_text():
    body = versions.prose("big", 100_000)
    assert 0.3 <= len(gzip.compress(body, 9)) / len(body) <= 0.42
    words = body.split()
    assert len(set(words)) > 1000  # a long tail, not a few words repeated
    assert versions.prose("other", 1000) != versions.prose("big", 1000)


@pytest.mark.parametrize("n", [9, 10, 300, 1508, 1509, 20_000])
def test_paragraphs_are_exactly_n_bytes_of_p_elements(n: int):
    body = versions.paragraphs("p", n)
    assert len(body) == n
    assert re.fullmatch(rb"(<p>[^<>]*</p>\n)+", body)


@pytest.mark.parametrize("n", [0, 5, 6, 7, 100, 130, 4_000, 72_000])
def test_css_and_js_are_exactly_n_bytes_and_compress_like_code(n: int):
    for make in (versions.css_text, versions.js_text):
        body = make("c", n)
        assert len(body) == n and body == make("c", n)
        assert body.count(b"{") == body.count(b"}") and body.count(b"/*") == body.count(b"*/")
    if n >= 20_000:  # small files compress less, as real ones do
        assert 0.15 <= len(gzip.compress(versions.css_text("c", n), 9)) / n <= 0.35
        assert 0.25 <= len(gzip.compress(versions.js_text("c", n), 9)) / n <= 0.45


def test_js_text_and_its_edits_are_valid_javascript(tmp_path: Path):
    body = versions.js_text("node", 30_000)
    edited = edit(body, 0.1, "scattered", "n", code=True).body
    node = program("node", "nodejs")
    for name, text in (("v1.js", body), ("v2.js", edited)):
        (tmp_path / name).write_bytes(text)
        result = subprocess.run([node, "--check", str(tmp_path / name)], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr


# Edits ------------------------------------------------------------------------------------------

PAGE = (b'<!DOCTYPE html>\n<html><head><title>T</title><link rel="stylesheet" href="/a.css"></head><body>\n'
        + b"".join(b'<p class="x">' + versions.prose(f"e{i}", 400) + b' <a href="/p/' + str(i).encode()
                   + b'.html">link &amp; more</a></p>\n' for i in range(40)) + b"</body></html>\n")


def _differ(a: bytes, b: bytes) -> list[int]:
    assert len(a) == len(b)
    return [i for i, (x, y) in enumerate(zip(a, b)) if x != y]


def _tags(body: bytes) -> list[bytes]:
    return re.findall(rb"<[^>]*>|&[#A-Za-z0-9]+;", body)


@pytest.mark.parametrize("spread", ["one", "scattered"])
@pytest.mark.parametrize("fraction", [0.00001, 0.001, 0.01, 0.1, 0.3])
def test_edit_changes_exactly_the_bytes_it_says_in_text_only(fraction: float, spread: str):
    edited = edit(PAGE, fraction, spread, "s")
    count = max(1, round(fraction * len(PAGE)))
    assert len(edited.body) == len(PAGE) and len(edited.positions) == count
    assert _differ(PAGE, edited.body) == list(edited.positions)
    assert _tags(edited.body) == _tags(PAGE)  # every tag and entity as it was
    for p in edited.positions:  # letter for letter of the same case, digit for digit
        before, after = PAGE[p:p + 1], edited.body[p:p + 1]
        assert (before.islower() and after.islower()) or (before.isupper() and after.isupper()) or \
            (before.isdigit() and after.isdigit())
    assert edit(PAGE, fraction, spread, "s") == edited
    assert edit(PAGE, fraction, spread, "t") != edited


def test_one_edit_is_one_run_of_the_editable_bytes():
    places = editable(PAGE)
    edited = edit(PAGE, 0.01, "one", "s")
    first = places.index(edited.positions[0])
    assert list(edited.positions) == places[first:first + len(edited.positions)]
    assert edited.positions[-1] - edited.positions[0] < 2 * len(edited.positions)  # one place of the page


def test_scattered_edit_is_small_runs_over_the_whole_body():
    edited = edit(PAGE, 0.01, "scattered", "s")
    places = editable(PAGE)
    runs = -(-len(edited.positions) // versions.RUN_BYTES)
    # runs of adjacent editable bytes, one in each of `runs` equal parts of the text
    groups: list[list[int]] = []
    for p in edited.positions:
        index = places.index(p)
        if groups and groups[-1][-1] == index - 1:
            groups[-1].append(index)
        else:
            groups.append([index])
    assert len(groups) == runs and all(len(g) <= versions.RUN_BYTES for g in groups)
    assert edited.positions[0] < len(PAGE) * 0.1 and edited.positions[-1] > len(PAGE) * 0.9
    assert len(edited.runs()) >= runs


def test_edit_of_code_changes_comments_only():
    body = versions.js_text("code", 20_000)
    edited = edit(body, 0.1, "scattered", "s", code=True)
    strip = re.compile(rb"/\*.*?\*/", re.S)
    assert strip.sub(b"", edited.body) == strip.sub(b"", body)
    assert len(_differ(body, edited.body)) == 2_000


def test_edit_every_editable_byte_and_no_more():
    tiny = b"<p>abc</p><p>de</p>"
    edited = edit(tiny, 5 / len(tiny), "scattered", "s")
    assert edited.positions == (3, 4, 5, 13, 14)
    with pytest.raises(ValueError, match=r"^edit: 0.5 of 19 bytes is 10 bytes but only 5 are editable text$"):
        edit(tiny, 0.5, "one", "s")
    with pytest.raises(ValueError, match="spread must be one of one, scattered"):
        edit(tiny, 0.1, "many", "s")
    with pytest.raises(ValueError, match="fraction must be in"):
        edit(tiny, 0, "one", "s")
