"""Sites on disk: generated sites written once, world-readable, with every version, its
sidecars, deltas and fixed mtimes; site directories read and given their sidecars; what a
spec names resolved without writing, by its kind. A site directory that cannot be
written (a read-only mount): `test_sites_e2e.py`."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
import yaml

from pagebench.core import encodings
from pagebench.core.sites import kinds
from pagebench.core.sites.generate import GenParams, generate
from pagebench.core.sites.media import png
from pagebench.core.sites.model import GeneratedSite, SiteError
from pagebench.core.sites.pages import html_page
from pagebench.lab import sites as sitefiles
from pagebench.lab.imported import write_imported
from tests.core.har.hars import entry, imported
from tests.core.sites.test_kinds import UNKNOWN
from tests.core.sites.test_model import GOOD


def test_write_site_is_world_readable_and_loadable(tmp_path: Path):
    generated = generate(GenParams(images=3, origins=2))
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
    generated = generate(GenParams(images=2))
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
    assert isinstance(small, GeneratedSite) and small.entry == "https://www.seed000.test/"
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


def test_every_kind_of_site_has_a_finder():
    assert set(sitefiles.FINDERS) == set(kinds.KINDS)


def test_resolve_finds_each_kind_in_the_tables_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PAGEBENCH_DATA_DIR", str(tmp_path))
    sites = tmp_path / "sites"
    mine = write_imported(imported(entry("https://www.example.com/", text="<p>x</p>")), sites / "mine")
    assert mine.recording is not None
    assert sitefiles.resolve("mine") == mine  # recorded: by name, under the data directory
    assert sitefiles.resolve(str(mine.root)) == mine  # a directory: by path
    written = sitefiles.materialize(sitefiles.resolve("seed000-small-n1"))
    assert isinstance(sitefiles.resolve("seed000-small-n1"), GeneratedSite)  # built-in before what is on disk
    generated = sitefiles.materialize(sitefiles.resolve({"generate": {"images": 1}}))
    assert sitefiles.resolve(str(generated.root)) == generated and sitefiles.resolve(str(written.root)) == written
    with pytest.raises(SiteError) as error:
        sitefiles.resolve(generated.name)  # kept under sites/ but not imported: not found by name
    assert str(error.value) == UNKNOWN.replace("'nowhere'", repr(generated.name)).replace("/data/sites", str(sites))
    with pytest.raises(SiteError, match=r"^unknown site '.*/nothing'; built-in: .*; or the name of a site"):
        sitefiles.resolve(str(tmp_path / "nothing"))  # a path without site.yaml


def test_load_site_names_the_missing_origin_directory(tmp_path: Path):
    (tmp_path / "site.yaml").write_text(yaml.safe_dump(GOOD))
    (tmp_path / "www.mine.test").mkdir()
    with pytest.raises(SiteError, match=r"origins: no content directory .*img\.mine\.test"):
        sitefiles.load_site(tmp_path)
    with pytest.raises(SiteError, match="cannot read"):
        sitefiles.load_site(tmp_path / "absent")


def _decode_file(path: Path, dictionary: bytes | None = None) -> bytes:
    token = {".gz": "gzip", ".br": "br", ".zst": "zstd", ".dcz": "dcz"}[path.suffix]
    return encodings.decode(token, path.read_bytes(), dictionary)


def test_write_site_writes_every_version_its_sidecars_deltas_and_fixed_mtimes(tmp_path: Path):
    generated = generate(GenParams(images=2, css=2, js=1, html_bytes=12_000, versions=(0.01, 0.05)))
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
    for spent in cost.values():
        assert spent["bytes_out"] < spent["bytes_in"] and spent["cpu_ms"] >= 0
    assert cost["br"]["cpu_ms"] > cost["gzip"]["cpu_ms"]  # quality 11 is the expensive one


def test_materialize_adds_missing_and_stale_sidecars_to_a_site_directory(tmp_path: Path):
    root = tmp_path / "mine"
    (root / "www.mine.test" / "css").mkdir(parents=True)
    (root / "img.mine.test").mkdir()
    (root / "site.yaml").write_text(yaml.safe_dump(GOOD))
    html, css = root / "www.mine.test" / "index.html", root / "www.mine.test" / "css" / "a.css"
    html.write_bytes(html_page("mine", [], ["<p>hi</p>"], 5_000, "mine"))
    css.write_bytes(b"body { margin: 0; }\n")
    (root / "img.mine.test" / "a.png").write_bytes(png(2544, 64, 48, "a"))
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


def test_an_app_site_runs_in_the_specs_directory_and_has_nothing_to_write(tmp_path: Path):
    entry = {"name": "shop", "app": {"command": "serve {port}", "ready": "/health"}, "origins": ["shop.test"]}
    app = sitefiles.resolve(entry, tmp_path)
    assert app.name == "shop" and app.entry == "https://shop.test/" and app.root == tmp_path.resolve()
    assert app.app is not None and app.app.ready == "/health" and app.recording is None
    assert sitefiles.materialize(app) is app and list(tmp_path.iterdir()) == []
    with pytest.raises(SiteError, match=r"^app site shop: its working directory .*/gone \(the spec's directory\) is missing$"):
        sitefiles.resolve(entry, tmp_path / "gone")
    (tmp_path / "server").mkdir()
    assert sitefiles.resolve({**entry, "dir": str(tmp_path / "server")}, tmp_path / "gone").root == tmp_path / "server"
    with pytest.raises(SiteError, match=r"^app site shop: its working directory dir: .*/nope is missing$"):
        sitefiles.resolve({**entry, "dir": str(tmp_path / "nope")}, tmp_path)
# Folder sites ----------------------------------------------------------------------------------

FOLDER_PAGE = (b'<!DOCTYPE html><link rel="stylesheet" href="/css/site.css">'
               b'<script src="https://cdn.example.com/lib.js" integrity="sha384-x"></script>'
               b'<img src="https://img.example.net/a.png"><a href="https://github.com/x">x</a>')


def _folder(root: Path) -> Path:
    """A build folder as a team's static build leaves it: index.html, CSS, an image, a
    private file (0600), hidden files (a .git), with their own mtimes."""
    (root / "css").mkdir(parents=True)
    (root / "index.html").write_bytes(FOLDER_PAGE)
    (root / "css" / "site.css").write_bytes(b"body{background:url(https://cdn.example.com/bg.png)}" * 20)
    (root / "logo.png").write_bytes(png(2000, 32, 32, "logo"))
    (root / "private.txt").write_bytes(b"mine " * 100)
    os.chmod(root / "private.txt", 0o600)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    (root / ".nojekyll").write_bytes(b"")
    for number, path in enumerate(sorted(p for p in root.rglob("*") if p.is_file())):
        os.utime(path, (1_700_000_000 + number, 1_700_000_000 + number))
    return root


def _snapshot(root: Path) -> dict[str, tuple[bytes, int, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns, stat.S_IMODE(p.stat().st_mode))
            for p in root.rglob("*") if p.is_file()}


def test_a_folder_site_is_served_from_a_copy_with_its_mtimes_sidecars_and_mapped_hosts(tmp_path: Path):
    build, cdn = _folder(tmp_path / "build"), tmp_path / "cdn"
    cdn.mkdir()
    (cdn / "lib.js").write_bytes(b"console.log('lib')\n" * 10)
    before = _snapshot(build) | {f"cdn/{k}": v for k, v in _snapshot(cdn).items()}
    kind, found = sitefiles.found({"name": "docs", "path": str(build), "origins": {"cdn.example.com": str(cdn)}})
    assert kind is kinds.FOLDER and found.entry == "https://docs.test/"
    assert found.origins == ("docs.test", "cdn.example.com.test") and found.root == build
    site = sitefiles.materialize(found, tmp_path / "data")
    assert site.root.parent == tmp_path / "data" / "sites" / ".folders" and site.root.name.startswith("docs-")
    served = site.origin_root("docs.test")
    assert sorted(str(p.relative_to(served)) for p in served.rglob("*") if p.is_file()) == sorted(
        [rel + suffix for rel in ("index.html", "css/site.css", "private.txt")
         for suffix in ("", ".gz", ".br", ".zst")] + ["logo.png"])  # no hidden files
    for rel in ("index.html", "css/site.css", "logo.png", "private.txt"):
        path, source = served / rel, build / rel
        assert path.stat().st_mtime_ns == source.stat().st_mtime_ns, rel  # ETag, Last-Modified as deployed
        assert stat.S_IMODE(path.stat().st_mode) & 0o444 == 0o444, rel  # nginx's workers read it
        for encoding in encodings.SIDECARS if encodings.is_text(rel) else ():
            side = path.with_name(path.name + encoding.suffix)
            assert _decode_file(side) == path.read_bytes() and side.stat().st_mtime_ns == path.stat().st_mtime_ns
    # The mapped host is named by its lab host (integrity gone: the rewritten page would fail it);
    # the unmapped one and the link stay as written.
    assert (served / "index.html").read_bytes() == (
        b'<!DOCTYPE html><link rel="stylesheet" href="/css/site.css">'
        b'<script src="https://cdn.example.com.test/lib.js"></script>'
        b'<img src="https://img.example.net/a.png"><a href="https://github.com/x">x</a>')
    assert b"https://cdn.example.com.test/bg.png" in (served / "css" / "site.css").read_bytes()
    assert (served / "logo.png").samefile(build / "logo.png")  # unchanged and world-readable: a hard link
    assert not (served / "private.txt").samefile(build / "private.txt")  # 0600: a copy, made 0644
    assert (site.origin_root("cdn.example.com.test") / "lib.js").read_bytes() == (cdn / "lib.js").read_bytes()
    assert _snapshot(build) | {f"cdn/{k}": v for k, v in _snapshot(cdn).items()} == before  # never written
    assert [h.line().split(" (")[0] for h in sitefiles.external(found)] == [
        "cdn.example.com: served as cdn.example.com.test from its folder", "img.example.net: not served"]


def test_a_folder_copy_is_reused_while_unchanged_and_replaced_after_the_next_build(tmp_path: Path):
    build = _folder(tmp_path / "build")
    entry = {"name": "docs", "path": str(build)}
    first = sitefiles.materialize(sitefiles.resolve(entry), tmp_path)
    marker = first.root / "docs.test" / "index.html.br"
    made = marker.stat().st_ino
    again = sitefiles.materialize(sitefiles.resolve(entry), tmp_path)
    assert again == first and marker.stat().st_ino == made  # the same copy, not remade
    os.utime(build / "css" / "site.css", (1_800_000_000, 1_800_000_000))  # rebuilt, same bytes: a new mtime
    touched = sitefiles.materialize(sitefiles.resolve(entry), tmp_path)
    assert touched.root != first.root and not first.root.exists()  # the old copy is gone
    assert (touched.root / "docs.test" / "css" / "site.css").stat().st_mtime == 1_800_000_000
    (build / "index.html").write_bytes(FOLDER_PAGE + b"<p>new</p>")
    rebuilt = sitefiles.materialize(sitefiles.resolve(entry), tmp_path)
    assert rebuilt.root != touched.root and (rebuilt.root / "docs.test" / "index.html").read_bytes().endswith(
        b"<p>new</p>")
    assert [p.name for p in (tmp_path / "sites" / ".folders").iterdir() if not p.name.startswith(".")] == [
        rebuilt.root.name]


@pytest.mark.parametrize(("entry", "message"), [
    ({"name": "docs", "path": "{tmp}/absent"}, "path: {tmp}/absent: no such directory"),
    ({"name": "docs", "path": "{tmp}/build/logo.png"}, "path: {tmp}/build/logo.png: not a directory"),
    ({"name": "docs", "path": "{tmp}/build/css"},
     "path: {tmp}/build/css: no index.html in it (a folder site serves its index.html as https://docs.test/)"),
    ({"name": "docs", "path": "{tmp}/build", "origins": {"cdn.example.com": "{tmp}/nocdn"}},
     "origins: cdn.example.com: {tmp}/nocdn: no such directory"),
])
def test_a_folder_that_cannot_be_served_is_a_one_line_error_naming_the_field(tmp_path: Path, entry, message):
    _folder(tmp_path / "build")
    entry = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else
             {h: p.replace("{tmp}", str(tmp_path)) for h, p in v.items()} for k, v in entry.items()}
    with pytest.raises(SiteError) as error:
        sitefiles.resolve(entry)
    assert str(error.value) == message.replace("{tmp}", str(tmp_path))


def test_site_show_names_a_directory_without_site_yaml_as_a_folder_site(tmp_path: Path):
    build = _folder(tmp_path / "My Build")
    kind, found = sitefiles.found_at(build)
    assert kind is kinds.FOLDER and found.name == "my-build" and found.entry == "https://my-build.test/"
    directory = sitefiles.materialize(sitefiles.resolve({"generate": {"images": 1}}), tmp_path)
    assert sitefiles.found_at(directory.root) == (kinds.DIRECTORY, directory)
