"""The table of site kinds (pure): which kinds a spec entry may name, in the order they are
tried, each entry parsed into its kind's typed reference; one-line errors for entries no
kind takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.sites import kinds
from pagebench.core.sites.builtin import builtin_sites
from pagebench.core.sites.folder import FolderRef
from pagebench.core.sites.generate import GenParams
from pagebench.core.sites.app import App, AppEntry
from pagebench.core.sites.corpus import CorpusRef
from pagebench.core.sites.kinds import AppRef, BuiltinRef, DirectoryRef, GeneratedRef, RecordedRef
from pagebench.core.sites.model import SiteError

#: What a spec entry no kind found is told, every kind's hint in the table's order.
UNKNOWN = ("unknown site 'nowhere'; built-in: seed000-{small,large}-n1..40, seed001-{a,b,c,d}, seed001-toybox-<page>-2..5, seed002, modern, paint-{progressive,at-end}; "
           "or generate: {images: N, image_bytes: B, origins: K, ...}; or {name: N, path: DIR} (a folder with "
           "index.html); or a directory with site.yaml; "
           "or the name of a site imported by `pagebench site import-har` (into /data/sites); "
           "or {name: NAME, app: {command: \"... {port}\", ready: /health}}; "
           "or {corpus: hars/*.har} (a glob or a directory of HARs)")


def test_the_table_names_each_kind_once_in_the_order_entries_are_tried():
    assert [kind.name for kind in kinds.KINDS] == ["builtin", "generated", "folder", "directory", "recorded", "app",
                                                      "corpus"]
    assert all(kind.summary and kind.hint for kind in kinds.KINDS)
    assert len({kind.summary for kind in kinds.KINDS}) == len(kinds.KINDS)  # the report tells them apart by it
    assert [kind.key for kind in kinds.KINDS if kind.key] == ["generate", "path", "app", "corpus"]
    assert "user's own server" in kinds.APP.summary  # what a report says of an app site


@pytest.mark.parametrize(("entry", "expected"), [
    ("modern", [(kinds.BUILTIN, BuiltinRef("modern")), (kinds.RECORDED, RecordedRef("modern"))]),
    ("seed000-large-n40", [(kinds.BUILTIN, BuiltinRef("seed000-large-n40")),
                           (kinds.RECORDED, RecordedRef("seed000-large-n40"))]),
    ("seed000-small-n05", [(kinds.RECORDED, RecordedRef("seed000-small-n05"))]),  # not in the catalogue
    ("mine", [(kinds.RECORDED, RecordedRef("mine"))]),
    ("./sites/mine", [(kinds.DIRECTORY, DirectoryRef(Path("./sites/mine")))]),
    ("/srv/mine", [(kinds.DIRECTORY, DirectoryRef(Path("/srv/mine")))]),
    ("Not A Name", []),
    ({"generate": {"images": 2, "origins": 2}}, [(kinds.GENERATED, GeneratedRef(GenParams(images=2, origins=2)))]),
    ({"name": "shop", "app": {"command": "serve {port}"}},
     [(kinds.APP, AppRef(AppEntry(name="shop", app=App(command="serve {port}"))))]),
    ({"name": "docs", "path": "./site"}, [(kinds.FOLDER, FolderRef("docs", Path("site")))]),
    ({"corpus": "hars/*.har"}, [(kinds.CORPUS, CorpusRef("hars/*.har"))]),
    ({"corpus": "hars", "synthesize": True}, [(kinds.CORPUS, CorpusRef("hars", synthesize=True))]),
    ({"corpus": "hars", "server_time": False}, [(kinds.CORPUS, CorpusRef("hars", server_time=False))]),
    ({"name": "docs", "path": "/srv/site", "origins": {"cdn.example.com": "cdn"}},
     [(kinds.FOLDER, FolderRef("docs", Path("/srv/site"), (("cdn.example.com", Path("cdn")),)))]),
])
def test_an_entry_is_parsed_into_the_references_of_the_kinds_it_may_name(entry, expected):
    assert kinds.candidates(entry) == expected


def test_every_builtin_name_is_the_builtin_kind_first():
    for name in builtin_sites():
        assert kinds.candidates(name)[0] == (kinds.BUILTIN, BuiltinRef(name))


@pytest.mark.parametrize(("entry", "message"), [
    ({"generated": {}}, "site {'generated': {}}: a mapping must be {generate: {images: N, image_bytes: B, "
                        "origins: K, ...}} or {name: N, path: DIR} (a folder with index.html) or "
                        "{name: NAME, app: {command: \"... {port}\", ready: /health}} or "
                        "{corpus: hars/*.har} (a glob or a directory of HARs)"),
    ({"generate": {}, "images": 2}, "site {'generate': {}, 'images': 2}: generate: takes no other keys"),
    ({"name": "docs", "path": "site", "app": {}}, "app: unknown field; a folder site takes name, path, host, origins"),
    ({"name": "docs", "path": "site", "host": "docs.example.com"},
     "host: 'docs.example.com': a lower-case DNS name under .test (the lab's CA signs .test names only)"),
    ({"name": "docs", "path": "site", "host": "www.docs.test", "origins": {"www.docs": "x"}},
     "origins: a host is served as www.docs.test, the site's own host"),
    ({"name": "shop", "app": {"url": "http://shop:8000"}, "dir": "srv"},
     "app site shop: dir: only for an app pagebench starts (command); an app given by url runs elsewhere"),
    ({"path": "site"}, "name: required"),
    ({"name": "Docs Site", "path": "site"},
     "name: 'Docs Site': a site name must be lower-case letters, digits, '.' and '-' (it is the host <name>.test)"),
    ({"name": "docs", "path": 3}, "path: Input should be a valid string"),
    ({"name": "docs", "path": "site", "origins": {"https://cdn.example.com": "cdn"}},
     "origins: 'https://cdn.example.com': a host must be a lower-case DNS name (no scheme, port or path), "
     "e.g. cdn.example.com"),
    ({"name": "docs.example.com", "path": "site", "origins": {"docs.example.com": "x"}},
     "origins: a host is served as docs.example.com.test, the site's own host"),
    ({"app": {"command": "serve {port}"}}, "app site ?: name: Field required"),
    ({"name": "shop", "app": {"command": "serve"}},
     "app site shop: app.command: must contain {port}, where pagebench puts the port the app listens on "
     "(127.0.0.1), e.g. \"gunicorn shop:app -b 127.0.0.1:{port}\""),
    ({"generate": {"images": -1}}, "generate: images: Input should be greater than or equal to 0"),
    ({"generate": {"pictures": 3}}, "generate: pictures: unknown field"),
    ({"corpus": "hars", "name": "x"}, "name: unknown field; a corpus takes corpus, synthesize, server_time"),
    ({"corpus": ""}, "corpus: String should have at least 1 character"),
    ({"corpus": "hars", "synthesize": "yes"}, "synthesize: Input should be a valid boolean"),
])
def test_entries_no_kind_can_parse_are_one_line_errors(entry, message):
    with pytest.raises(SiteError) as error:
        kinds.candidates(entry)
    assert str(error.value) == message


def test_anchored_makes_a_folder_entrys_relative_paths_absolute_from_the_spec_directory():
    entry = {"name": "docs", "path": "./site", "origins": {"cdn.example.com": "../cdn", "abs.example.com": "/srv/a"}}
    assert kinds.anchored(entry, Path("/work/specs")) == {
        "name": "docs", "path": "/work/specs/site",
        "origins": {"cdn.example.com": "/work/cdn", "abs.example.com": "/srv/a"}}
    assert entry["path"] == "./site"  # the spec's own document is left as written
    assert kinds.anchored({"corpus": "../hars/*.har"}, Path("/work/specs")) == {"corpus": "/work/hars/*.har"}
    for other in ("modern", "./dir", {"generate": {"images": 1}}, {"name": "x"}):
        assert kinds.anchored(other, Path("/work/specs")) == other


def test_anchored_makes_an_app_entrys_dir_absolute_and_a_folders_host_names_it():
    app = {"name": "shop", "app": {"command": "serve {port}"}, "dir": "../server"}
    assert kinds.anchored(app, Path("/work/specs"))["dir"] == "/work/server"
    assert kinds.anchored({"name": "shop", "app": {"command": "serve {port}"}}, Path("/w")) == {
        "name": "shop", "app": {"command": "serve {port}"}}
    [(kind, ref)] = kinds.candidates({"name": "docs", "path": "/s", "host": "www.docs.test"})
    assert (kind, ref.host, ref.entry) == (kinds.FOLDER, "www.docs.test", "https://www.docs.test/")


def test_unknown_lists_every_kind_as_a_spec_names_it():
    assert str(kinds.unknown("nowhere", "/data/sites")) == UNKNOWN
