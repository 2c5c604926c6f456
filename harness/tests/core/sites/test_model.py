"""Sites as data: manifests, exact and valid media, the built-in compositions, the writer."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
import yaml
from fontTools.ttLib import TTFont

from pagebench.core import encodings
from pagebench.core.sites import generate as sitegen
from pagebench.core.sites import model as site_model
from pagebench.core.sites.generate import GenParams
from pagebench.core.sites.model import SiteError
from pagebench.lab import sites as sitefiles


# Decoders used as validity checks -----------------------------------------------------------


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


# Media ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [137 + 14, 137 + 19, 137 + 20, 2544, 45566, 1_000_000])
def test_png_is_valid_and_exactly_sized(size: int):
    body = sitegen.png(size, 64, 48, f"t{size}")
    assert len(body) == size and png_info(body) == (64, 48)


def test_png_too_small_is_one_line_error():
    with pytest.raises(SiteError, match=r"image_bytes: 100 is too small .* \(at least \d+\)"):
        sitegen.png(100, 64, 48, "x")


@pytest.mark.parametrize("size", [8_000, 65_541 + 7_600, 65_542 + 7_600, 1_184_000, 7_000_000])
def test_jpeg_is_valid_and_exactly_sized(size: int):
    body = sitegen.jpeg(size, 1600, 1200, f"t{size}")
    assert len(body) == size and jpeg_info(body) == (1600, 1200)


@pytest.mark.parametrize("size", [35, 38, 40, 300, 6250])
def test_gif_is_valid_and_exactly_sized(size: int):
    body = sitegen.gif(size, "g")
    assert len(body) == size and gif_info(body) == (1, 1)


@pytest.mark.parametrize("flavor", [None, "woff"])
def test_fonts_load_with_fonttools_and_are_about_the_asked_size(flavor):
    body = sitegen.font("PB Sans", "Regular", 30_000, flavor, "f")
    font = font_info(body)
    assert font.flavor == flavor
    assert font["name"].getDebugName(1) == "PB Sans"
    assert 30_000 <= len(body) <= 30_100


def test_same_seed_same_bytes_different_seed_different_content():
    assert sitegen.png(2544, 64, 48, "a") == sitegen.png(2544, 64, 48, "a")
    assert sitegen.png(2544, 64, 48, "a") != sitegen.png(2544, 64, 48, "b")
    assert sitegen.jpeg(9000, 64, 64, "a") != sitegen.jpeg(9000, 64, 64, "b")


# seed000 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind,size", [("small", 2544), ("large", 45566)])
@pytest.mark.parametrize("n", [1, 7, 40])
def test_seed000_has_n_distinct_valid_images_of_the_exact_size(kind: str, n: int, size: int):
    site = sitegen.builtin(f"seed000-{kind}-n{n}")
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
    small5, small40 = sitegen.builtin("seed000-small-n5"), sitegen.builtin("seed000-small-n40")
    for path, body in small5.files.items():
        if path.endswith(".png"):
            assert small40.files[path] == body


# seed002 and modern ----------------------------------------------------------------------------


def test_seed002_two_origins_about_9_5_megabytes_of_photos():
    site = sitegen.builtin("seed002")
    assert site.manifest.origins == ("www.seed002.test", "images.seed002.test")
    assert site.total_bytes == sitegen.SEED002_TOTAL
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


def _origin(path: str) -> str:
    return path.split("/", 1)[0]


def test_modern_is_seventy_requests_over_ten_origins_and_two_megabytes():
    site = sitegen.builtin("modern")
    assert len(site.manifest.origins) == 10
    assert {_origin(p) for p in site.files} == set(site.manifest.origins)
    assert 65 <= site.requests <= 75
    assert 1_900_000 <= site.total_bytes <= 2_150_000
    for path, body in site.files.items():
        check_media(path, body)
    kinds = {p.rsplit(".", 1)[-1] for p in site.files}
    assert {"html", "css", "js", "woff", "ttf", "png", "jpg", "gif", "svg"} <= kinds


def test_modern_has_blocking_head_resources_cross_origin_fonts_and_late_waves():
    site = sitegen.builtin("modern")
    html = site.files["www.modern.test/index.html"].decode()
    head = html.split("</head>")[0]
    assert '<link rel="stylesheet" href="//static.modern.test/css/main.css">' in head
    assert '<script src="//cdn.modern.test/lib/framework.js"></script>' in head  # sync: no async/defer
    css = site.files["static.modern.test/css/main.css"].decode()
    fonts = re.findall(r"url\((//[^)]+)\)", css)
    assert len(fonts) == 4 and all(u.startswith("//fonts.modern.test/") for u in fonts)
    # second wave: app.js -> late.js -> thumbs + ads.js -> ad images (third wave)
    late = site.files["static.modern.test/js/late.js"].decode()
    assert "//static.modern.test/js/late.js" in site.files["static.modern.test/js/app.js"].decode()
    thumbs = [p for p in site.files if p.startswith("thumbs.")]
    assert len(thumbs) == 12
    for path in thumbs:
        assert f"//{path}" in late and f"//{path}" not in html
    assert "//ads.modern.test/ads.js" in late
    assert "//ads.modern.test/creative/1.png" in site.files["ads.modern.test/ads.js"].decode()


def test_every_file_of_every_builtin_kind_is_referenced():
    """A cold load fetches every file: each URL appears in the HTML, a CSS or a script."""
    for name in ("seed002", "modern", "seed000-large-n3"):
        site = sitegen.builtin(name)
        texts = b"".join(b for p, b in site.files.items() if p.endswith((".html", ".css", ".js"))).decode()
        entry_path = site.manifest.entry.split("/", 3)[-1]
        for path in site.files:
            host, rel = path.split("/", 1)
            if rel in ("index.html", entry_path):
                continue
            assert f"//{path}" in texts or f'"/{rel}"' in texts or f'"{rel}"' in texts, (name, path)


# generate -------------------------------------------------------------------------------------


def test_generated_site_is_named_from_its_parameters_and_deterministic():
    params = GenParams(images=20, image_bytes=2544, origins=3, css=1, js=2, late=5, html_bytes=30_000)
    assert params.name == "gen-i20-b2544-o3-c1-j2-l5-h30000"
    assert GenParams(images=20, image_bytes=2544).name == "gen-i20-b2544-o1"
    site = sitegen.generate(params)
    assert site.digest() == sitegen.generate(params).digest()
    assert site.manifest.origins == ("www.gen.test", "o2.gen.test", "o3.gen.test")
    assert site.manifest.entry == "https://www.gen.test/"
    images = sorted(p for p in site.files if p.endswith(".png"))
    assert len(images) == 25 and {len(site.files[p]) for p in images} == {2544}
    per_origin = {host: sum(1 for p in images if p.startswith(host + "/")) for host in site.manifest.origins}
    assert per_origin == {"www.gen.test": 9, "o2.gen.test": 8, "o3.gen.test": 8}  # round-robin
    html = site.files["www.gen.test/index.html"]
    assert len(html) == 30_000
    assert html.decode().count('<link rel="stylesheet"') == 1 and html.decode().count("<script src=") == 2
    late = site.files["www.gen.test/late.js"].decode()
    assert late.count("//") == 5 and site.requests == 1 + 25 + 1 + 2 + 1
    for path, body in site.files.items():
        check_media(path, body)


def test_generate_rejects_bad_parameters_in_one_line():
    with pytest.raises(SiteError, match=r"^generate: pictures: unknown field$"):
        sitegen.parse_generate({"pictures": 3})
    with pytest.raises(SiteError, match=r"^generate: origins: "):
        sitegen.parse_generate({"origins": 0})
    with pytest.raises(SiteError, match=r"^generate: image_bytes: "):
        sitegen.parse_generate({"image_bytes": 50})
    with pytest.raises(SiteError, match=r"html_bytes: at least \d+"):
        sitegen.generate(GenParams(images=5, html_bytes=100))
    with pytest.raises(SiteError, match=r"^generate: \(images \+ late\) x image_bytes must be at most"):
        sitegen.parse_generate({"images": 1000, "image_bytes": 50_000_000})
    assert sitegen.parse_generate({"images": 4}) == GenParams(images=4)


# Built-in names ---------------------------------------------------------------------------------


def test_builtin_names():
    names = sitegen.builtin_sites()
    assert len(names) == 86 and "seed000-small-n1" in names and "seed000-large-n40" in names
    assert {"seed001-a", "seed001-b", "seed001-c", "seed001-d", "seed002", "modern"} <= set(names)


@pytest.mark.parametrize("name", ["nope", "seed000-small-n41", "seed000-small-n0", "seed000-small-n05", "seed000-x-n1"])
def test_unknown_site_is_one_line_listing_known(name: str):
    with pytest.raises(SiteError) as error:
        sitegen.builtin(name)
    message = str(error.value)
    assert repr(name) in message and "seed000-{small,large}-n1..40" in message and "modern" in message
    assert "\n" not in message


# Manifests ------------------------------------------------------------------------------------


GOOD = {"name": "mine", "entry": "https://www.mine.test/index.html", "origins": ["www.mine.test", "img.mine.test"],
        "headers": {"/img/*.png": {"Cache-Control": "max-age=60"}}}


def test_manifest_round_trips_through_yaml():
    manifest = site_model.parse_manifest(yaml.safe_dump(GOOD))
    assert manifest.origins == ("www.mine.test", "img.mine.test")
    assert site_model.parse_manifest(site_model.manifest_yaml(manifest)) == manifest


@pytest.mark.parametrize("change,fragment", [
    ({"extra": 1}, "extra: unknown field"),
    ({"origins": ["www.mine.com"]}, "origins: host 'www.mine.com'"),
    ({"origins": ["www.mine.test", "www.mine.test"]}, "origins: must not repeat"),
    ({"entry": "https://img.mine.test/"}, "entry 'https://img.mine.test/': must be https://www.mine.test/"),
    ({"entry": "http://www.mine.test/"}, "must be https://www.mine.test/"),
    ({"name": "Bad Name"}, "name: must match"),
    ({"headers": {"img/*.png": {}}}, "headers: 'img/*.png': a path glob must start with /"),
    ({"headers": {"/a": {"X-Y": "$host"}}}, "headers: /a: X-Y: value must be printable ASCII"),
    ({"headers": {"/a": {"X Y": "1"}}}, "header name 'X Y'"),
])
def test_manifest_errors_are_one_line_naming_the_field(change: dict, fragment: str):
    with pytest.raises(SiteError) as error:
        site_model.parse_manifest(yaml.safe_dump({**GOOD, **change}), "mine/site.yaml")
    message = str(error.value)
    assert message.startswith("mine/site.yaml: ") and fragment in message and "\n" not in message


# On disk ---------------------------------------------------------------------------------------


def test_write_site_is_world_readable_and_loadable(tmp_path: Path):
    generated = sitegen.generate(GenParams(images=3, origins=2))
    site = sitefiles.write_site(generated, tmp_path)
    assert site.root == tmp_path / "sites" / generated.name
    for rel, body in generated.files.items():
        path = site.root / rel
        assert path.read_bytes() == body
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o755
    assert stat.S_IMODE(site.root.stat().st_mode) == 0o755
    loaded = sitefiles.load_site(site.root)
    assert loaded == site and loaded.origin_root("o2.gen.test") == site.root / "o2.gen.test"
    assert not [p for p in (tmp_path / "sites").iterdir() if p.name.endswith((".tmp", ".old"))]


def test_write_site_only_when_missing_or_changed(tmp_path: Path):
    generated = sitegen.generate(GenParams(images=2))
    site = sitefiles.write_site(generated, tmp_path)
    html = site.root / "www.gen.test" / "index.html"
    stamp = html.stat().st_mtime_ns
    sitefiles.write_site(generated, tmp_path)
    assert html.stat().st_mtime_ns == stamp  # reused: ETags and Last-Modified stay put
    (site.root / ".digest").write_text("stale")
    html.write_bytes(b"tampered")
    sitefiles.write_site(generated, tmp_path)
    assert html.read_bytes() == generated.files["www.gen.test/index.html"]


def test_resolve_is_pure_and_materialize_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PAGEBENCH_DATA_DIR", str(tmp_path))
    small = sitefiles.resolve("seed000-small-n2")
    assert isinstance(small, site_model.GeneratedSite) and small.entry == "https://www.seed000.test/"
    assert not (tmp_path / "sites").exists()  # nothing written yet
    on_disk = sitefiles.materialize(small)
    assert on_disk.root == tmp_path / "sites" / "seed000-small-n2" and on_disk.entry == small.entry
    generated = sitefiles.resolve({"generate": {"images": 2, "origins": 2}})
    assert generated.name == "gen-i2-b2544-o2" and generated.origins == ("www.gen.test", "o2.gen.test")
    from_dir = sitefiles.resolve(str(on_disk.root))
    assert from_dir == on_disk and sitefiles.materialize(from_dir) is from_dir
    with pytest.raises(SiteError, match="unknown site 'nowhere'"):
        sitefiles.resolve("nowhere")
    with pytest.raises(SiteError, match=r"generate: images: "):
        sitefiles.resolve({"generate": {"images": -1}})
    with pytest.raises(SiteError, match="a mapping must be"):
        sitefiles.resolve({"generated": {}})


def test_load_site_names_the_missing_origin_directory(tmp_path: Path):
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(GOOD))
    (tmp_path / "www.mine.test").mkdir()
    with pytest.raises(SiteError, match=r"origins: no content directory .*img\.mine\.test"):
        sitefiles.load_site(tmp_path)
    with pytest.raises(SiteError, match="cannot read"):
        sitefiles.load_site(tmp_path / "absent")


# Versions and realistic text (seed 001) --------------------------------------------------------------


def _gzip_ratio(body: bytes) -> float:
    return len(gzip.compress(body, 9)) / len(body)


@pytest.mark.parametrize("letter,size,gzipped", [("a", 17_545, 6_177), ("b", 6_017, 2_033),
                                                 ("c", 374_144, 39_200), ("d", 97_125, 10_223)])
def test_seed001_files_have_the_papers_sizes_and_compressibility(letter: str, size: int, gzipped: int):
    site = sitegen.builtin(f"seed001-{letter}")
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
    assert site.digest() == sitegen.builtin(f"seed001-{letter}").digest()


def test_modern_text_is_realistically_compressible_at_exact_sizes():
    site = sitegen.builtin("modern")
    sizes = {"www.modern.test/index.html": 48_000, "static.modern.test/css/main.css": 72_000,
             "static.modern.test/js/app.js": 160_000, "cdn.modern.test/lib/framework.js": 240_000,
             "img.modern.test/logo.svg": 6_000, "analytics.modern.test/collect.gif": 43}
    assert {path: len(site.files[path]) for path in sizes} == sizes
    assert site.total_bytes == 2_030_055  # as before the text became realistic
    text = b"".join(body for path, body in site.files.items() if path.endswith((".html", ".css", ".js")))
    assert 0.25 <= _gzip_ratio(text) <= 0.42
    assert _gzip_ratio(site.files["static.modern.test/css/main.css"]) < 0.35


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_generated_scripts_are_valid_javascript(tmp_path: Path):
    site = sitegen.generate(GenParams(images=1, js=1, late=1, html_bytes=20_000, versions=(0.1,), changed=1))
    scripts = {**{p: b for p, b in sitegen.builtin("modern").files.items() if p.endswith(".js")},
               **{f"v2/{p}": b for p, b in site.version(2).items() if p.endswith(".js")}}
    assert any(site.version(2)[p] != site.files[p] for p in site.files if p.endswith(".js"))
    for path, body in scripts.items():
        (tmp_path / "check.js").write_bytes(body)
        result = subprocess.run(["node", "--check", str(tmp_path / "check.js")], capture_output=True, text=True)
        assert result.returncode == 0, (path, result.stderr)


def test_generated_site_with_versions_is_named_and_edits_the_chosen_files():
    params = sitegen.parse_generate({"images": 2, "css": 2, "js": 2, "html_bytes": 20_000,
                                     "versions": [0.01, 0.1], "edit": "one", "changed": 0.6})
    assert params.name == "gen-i2-b2544-o1-c2-j2-h20000-v0.01_0.1-eone-x0.6"
    site = sitegen.generate(params)
    assert site.manifest.versions == 3 and len(site.later) == 2
    texts = sorted(p for p in site.files if p.endswith((".html", ".css", ".js")))
    assert sorted(site.manifest.dictionaries) == texts
    for path in texts:
        assert site.manifest.dictionaries[path] == encodings.available_dictionary(site.files[path])
    for number, fraction in ((2, 0.01), (3, 0.1)):
        files = site.version(number)
        assert set(files) == set(site.files)
        differ = sorted(p for p in files if files[p] != site.files[p])
        assert differ == site.manifest.changed[number]
        assert len(differ) == 3 and "www.gen.test/index.html" in differ  # round(0.6 x 5), HTML always
        for path in differ:
            positions = [i for i, (a, b) in enumerate(zip(site.files[path], files[path])) if a != b]
            assert len(positions) == max(1, round(fraction * len(files[path])))
        assert all(files[p] is site.files[p] for p in files if p.endswith(".png"))
    assert site.digest() != sitegen.generate(params.model_copy(update={"versions": (0.01, 0.2)})).digest()
    assert site.digest() != sitegen.generate(GenParams(images=2, css=2, js=2, html_bytes=20_000)).digest()
    assert sitegen.parse_generate({"versions": [0.01] * 19}).name == "gen-i10-b2544-o1-v19x057cffc5"


def test_generated_versions_errors_are_one_line():
    with pytest.raises(SiteError, match=r"^generate: versions.0: Input should be less than or equal to 0.5$"):
        sitegen.parse_generate({"versions": [0.6]})
    with pytest.raises(SiteError, match=r"^generate: versions: "):
        sitegen.parse_generate({"versions": [0.01] * 20})
    with pytest.raises(SiteError, match=r"^generate: edit: "):
        sitegen.parse_generate({"versions": [0.01], "edit": "some"})
    with pytest.raises(SiteError, match=r"^generate: edit and changed need versions"):
        sitegen.parse_generate({"changed": 1})
    with pytest.raises(SiteError, match=r"^generate: versions: 0.1 of www.gen.test/index.html \(\d+ bytes\) is "
                                        r"\d+ bytes but it has \d+ bytes of text to edit \(make the page larger"):
        sitegen.generate(GenParams(versions=(0.1,)))


def _decode_file(path: Path, dictionary: bytes | None = None) -> bytes:
    token = {".gz": "gzip", ".br": "br", ".zst": "zstd", ".dcz": "dcz"}[path.suffix]
    return encodings.decode(token, path.read_bytes(), dictionary)


def test_write_site_writes_every_version_its_sidecars_deltas_and_fixed_mtimes(tmp_path: Path):
    generated = sitegen.generate(GenParams(images=2, css=2, js=1, html_bytes=12_000, versions=(0.01, 0.05)))
    site = sitefiles.write_site(generated, tmp_path)
    assert site.manifest == generated.manifest
    assert sitefiles.load_site(site.root).manifest.changed == generated.manifest.changed
    base, day = sitefiles.BASE_MTIME, sitefiles.DAY
    assert base == 1_767_225_600  # 2026-01-01T00:00:00Z
    for number in (1, 2, 3):
        files = generated.version(number)
        changed = set(generated.manifest.changed.get(number, []))
        for rel, body in files.items():
            host, path = rel.split("/", 1)
            file = site.origin_root(host, number) / path
            assert file.read_bytes() == body and stat.S_IMODE(file.stat().st_mode) == 0o644
            mtime = base + number * day if rel in changed else base
            assert file.stat().st_mtime == mtime, (number, rel)
            sidecars = sorted(p.name for p in file.parent.iterdir() if p.name.startswith(file.name + "."))
            if not encodings.is_text(rel):
                assert sidecars == []
                continue
            for suffix in (".gz", ".br", ".zst"):
                side = file.with_name(file.name + suffix)
                assert _decode_file(side) == body and side.stat().st_mtime == mtime
            dcz = file.with_name(f"{file.name}.{encodings.dictionary_id(generated.files[rel])}.dcz")
            if rel in changed:
                assert _decode_file(dcz, generated.files[rel]) == body and dcz.stat().st_mtime == mtime
                assert len(dcz.read_bytes()) < len(file.with_name(file.name + ".zst").read_bytes())
                assert generated.manifest.dictionaries[rel] == encodings.available_dictionary(
                    site.origin_root(host).joinpath(path).read_bytes())
            else:
                assert len(sidecars) == 3 and (number == 1 or body == generated.files[rel])
    assert generated.manifest.changed[2] and all(generated.manifest.changed.values())
    cost = json.loads((site.root / "encoding-cost.json").read_text())
    assert set(cost) == {"gzip", "br", "zstd", "dcz"}
    texts = [p for p in generated.files if encodings.is_text(p)]
    changed_count = sum(len(v) for v in generated.manifest.changed.values())
    assert cost["gzip"]["files"] == len(texts) + changed_count and cost["dcz"]["files"] == changed_count
    for entry in cost.values():
        assert entry["bytes_out"] < entry["bytes_in"] and entry["cpu_ms"] >= 0
    assert cost["br"]["cpu_ms"] > cost["gzip"]["cpu_ms"]  # quality 11 is the expensive one


def test_materialize_adds_missing_and_stale_sidecars_to_a_site_directory(tmp_path: Path):
    root = tmp_path / "mine"
    (root / "www.mine.test" / "css").mkdir(parents=True)
    (root / "img.mine.test").mkdir()
    (root / "site.yaml").write_text(yaml.safe_dump(GOOD))
    html, css = root / "www.mine.test" / "index.html", root / "www.mine.test" / "css" / "a.css"
    html.write_bytes(sitegen.html_page("mine", [], ["<p>hi</p>"], 5_000, "mine"))
    css.write_bytes(b"body { margin: 0; }\n")
    (root / "img.mine.test" / "a.png").write_bytes(sitegen.png(2544, 64, 48, "a"))
    os.utime(html, (1_000_000_000, 1_000_000_000))
    site = sitefiles.load_site(root)
    assert sitefiles.materialize(site) is site
    for file in (html, css):
        for suffix in (".gz", ".br", ".zst"):
            side = file.with_name(file.name + suffix)
            assert _decode_file(side) == file.read_bytes()
            assert side.stat().st_mtime_ns == file.stat().st_mtime_ns
            assert stat.S_IMODE(side.stat().st_mode) == 0o644
    assert html.stat().st_mtime == 1_000_000_000
    assert sorted(p.name for p in (root / "img.mine.test").iterdir()) == ["a.png"]
    stamp = (html.with_name("index.html.br")).stat().st_ino
    sitefiles.materialize(site)
    assert html.with_name("index.html.br").stat().st_ino == stamp  # current: left alone
    css.write_bytes(b"body { margin: 1px; }\n")  # edited: its sidecars are stale
    sitefiles.materialize(site)
    assert _decode_file(css.with_name("a.css.gz")) == b"body { margin: 1px; }\n"
    assert not list(root.rglob("*.dcz")) and not list(root.rglob(".*.tmp"))


def test_materialize_names_a_site_directory_it_cannot_write(tmp_path: Path):
    root = tmp_path / "ro"
    (root / "www.mine.test").mkdir(parents=True)
    (root / "img.mine.test").mkdir()
    (root / "site.yaml").write_text(yaml.safe_dump(GOOD))
    (root / "www.mine.test" / "index.html").write_bytes(b"<!DOCTYPE html><p>hi</p>\n")
    site = sitefiles.load_site(root)
    mounted = subprocess.run(["mount", "--bind", "-o", "ro", str(root), str(root)], capture_output=True)
    if mounted.returncode:
        pytest.skip(f"cannot make a read-only bind mount here: {mounted.stderr.decode().strip()}")
    try:
        with pytest.raises(SiteError) as error:
            sitefiles.materialize(site)
    finally:
        subprocess.run(["umount", str(root)], check=True)
    message = str(error.value)
    assert message.startswith(f"{root / 'www.mine.test'}: cannot write the precompressed index.html.gz")
    assert "Read-only file system" in message and "\n" not in message
