"""`pagebench site import-har` and `site show` through the real command line, on real
files: the directory written reads back (`load_site`), with stable mtimes and sidecars;
bad input is one line and leaves nothing; specs find an imported site by name."""

from __future__ import annotations

import gzip
import json
import os
import stat
from pathlib import Path

import pytest

from pagebench.core.sites import kinds
from pagebench.core.sites.builtin import builtin
from pagebench.lab import sites as sitefiles
from pagebench.lab.sites import BASE_MTIME, load_site
from tests.core.har import shapes
from tests.helpers import pagebench

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(200))


def _entry(url: str, status: int = 200, mime: str = "text/html", text: str | None = "", at: int = 0,
           size: int | None = None, **headers: str) -> dict:
    content: dict = {"mimeType": mime, "size": size if size is not None else len(text or "")}
    if text is not None:
        content["text"] = text
    return {"startedDateTime": f"2026-01-01T00:00:0{at}.000Z", "time": 5,
            "request": {"method": "GET", "url": url, "headers": []},
            "response": {"status": status, "headers": [{"name": k.replace("_", "-"), "value": v}
                                                       for k, v in headers.items()],
                         "content": content, "redirectURL": ""}}


def _har(path: Path, *entries: dict, compress: bool = False) -> Path:
    text = json.dumps({"log": {"version": "1.2", "creator": {"name": "t", "version": "1"}, "entries": list(entries)}})
    path.write_bytes(gzip.compress(text.encode()) if compress else text.encode())
    return path


def _page(tmp_path: Path, compress: bool = False) -> Path:
    import base64

    png = _entry("https://img.example.com/a.png", mime="image/png", text=base64.b64encode(PNG).decode(), at=1)
    png["response"]["content"]["encoding"] = "base64"
    return _har(tmp_path / ("page.har.gz" if compress else "page.har"),
                _entry("https://www.example.com/", text='<script src="/s.js" integrity="x"></script>'
                                                       '<img src="https://img.example.com/a.png">',
                       Cache_Control="no-cache", Server="edge"),
                _entry("https://www.example.com/s.css", mime="text/css", text="a{}", at=1),
                png, compress=compress)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where imported sites go by default: a data directory of this test's own."""
    base = tmp_path / "data"
    monkeypatch.setenv("PAGEBENCH_DATA_DIR", str(base))  # the child processes inherit it
    return base


def test_import_har_writes_a_site_that_reads_back(tmp_path: Path, data_dir: Path):
    result = pagebench("site", "import-har", str(_page(tmp_path, compress=True)), "--name", "mine")
    assert result.returncode == 0, result.stderr
    root = data_dir / "sites" / "mine"
    assert f"into {root}" in result.stdout
    assert "www.example.com -> www.example.com.test" in result.stdout
    assert "img.example.com -> img.example.com.test" in result.stdout
    assert "3 request(s)" in result.stdout and "2 origin(s)" in result.stdout
    assert "1 integrity attribute(s) removed" in result.stdout and "server (1)" in result.stdout
    assert "will 404" not in result.stdout
    site = load_site(root)
    assert site.recording is not None and len(site.recording.exchanges) == 3
    assert site.entry == "https://www.example.com.test/"
    exchange = site.recording.lookup("img.example.com.test", "/a.png")
    assert (root / exchange.host / exchange.file).read_bytes() == PNG
    page = site.recording.lookup("www.example.com.test", "/")
    assert page.headers == {"Cache-Control": "no-cache"}
    html = root / page.host / page.file
    assert html.read_text() == '<script src="/s.js"></script><img src="https://img.example.com.test/a.png">'
    for suffix in (".gz", ".br", ".zst"):  # text bodies get their sidecars, with their file's mtime
        assert html.with_name(html.name + suffix).stat().st_mtime == BASE_MTIME
    assert not (root / exchange.host / (exchange.file + ".gz")).exists()  # images do not
    for directory, dirs, files in os.walk(root):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o755
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(directory, name)).st_mode) == 0o644
    assert sorted(p.name for p in (data_dir / "sites").iterdir()) == ["mine"]  # no temporary directory left

    # specs find it by name
    resolved = sitefiles.resolve("mine")
    assert resolved.root == root and resolved.recording == site.recording

    # importing it again replaces it without --force; another site in the way needs --force
    again = pagebench("site", "import-har", str(_page(tmp_path)), "--name", "mine")
    assert again.returncode == 0, again.stderr
    other = pagebench("site", "import-har", str(_page(tmp_path)), "--name", "other", "--into", str(root))
    assert other.returncode == 2
    assert other.stderr.strip().splitlines() == [
        f"error: {root}: already holds another site; replace it with --force, or choose another directory"]
    forced = pagebench("site", "import-har", str(_page(tmp_path)), "--name", "other", "--into", str(root), "--force")
    assert forced.returncode == 0, forced.stderr
    assert load_site(root).name == "other"


def test_requests_the_har_cannot_replay_are_counted(tmp_path: Path, data_dir: Path):
    entries = [_entry("https://www.example.com/", text="<p>x</p>")]
    entries += [_entry(f"https://www.example.com/{i}.js", mime="text/javascript", text="x", at=1) for i in range(7)]
    for posted in entries[1:]:
        posted["request"]["method"] = "POST"
    entries.append(_entry("https://www.example.com/old.css", 304, mime="text/css", text=None, at=2))
    result = pagebench("site", "import-har", str(_har(tmp_path / "x.har", *entries)), "--name", "holes")
    assert result.returncode == 0, result.stderr
    assert "7 request(s) will 404" in result.stdout
    assert "https://www.example.com/0.js: a POST: only GET requests are replayed" in result.stdout
    assert "and 2 more" in result.stdout
    site = load_site(data_dir / "sites" / "holes")
    assert site.recording.lookup("www.example.com.test", "/old.css").status == 200  # a 304 stands in as its 200


def test_a_har_without_bodies_is_a_stand_in_with_a_fidelity_report(tmp_path: Path, data_dir: Path):
    entries = [_entry("https://www.example.com/", text=None, size=20_000),
               _entry("https://img.example.com/a.png", mime="image/png", text=None, size=5_000, at=1)]
    result = pagebench("site", "import-har", str(_har(tmp_path / "x.har", *entries)), "--name", "bare")
    assert result.returncode == 0, result.stderr
    assert "warning: 2 of 2 request(s) have bodies made (not saved in the HAR)" in result.stdout
    assert "fidelity: original (the HAR) vs stand-in; 2 body(ies) made, 0 kept as saved" in result.stdout
    shown = pagebench("site", "show", "bare")
    assert shown.returncode == 0, shown.stderr
    assert "dependency depth                 1           1" in shown.stdout
    assert "bytes image                  5,000       5,000" in shown.stdout
    assert "parents inferred from timing: 1" in shown.stdout
    assert (data_dir / "sites" / "bare" / "fidelity.json").is_file()


@pytest.mark.parametrize(("content", "message"), [
    (b'{"log": {"entries": [', "JSON cut short: the text ends at line 1 column 22 inside log.entries[0]"),
    (gzip.compress(b'{"log": {"entries": []}}', mtime=0), "no entries (log.entries is empty)"),  # a stable id
    (b"\x1f\x8b not gzip", "not a readable gzip file"),
    (gzip.compress(b'{"log": {"entries": []}}' * 10, mtime=0)[:30], "gzip cut short: the file ends before its "
                                                                      "compressed data does (copy or export it again)"),
])
def test_a_malformed_har_is_one_line_and_writes_nothing(tmp_path: Path, data_dir: Path, content: bytes, message: str):
    bad = tmp_path / "bad.har"
    bad.write_bytes(content)
    into = tmp_path / "out" / "site"
    result = pagebench("site", "import-har", str(bad), "--name", "bad", "--into", str(into))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: ") and message in lines[0], result.stderr
    assert not (tmp_path / "out").exists() and not data_dir.exists()


def test_a_page_of_a_webpagetest_har_is_chosen_and_the_pages_are_listed(tmp_path: Path, data_dir: Path):
    path = tmp_path / "wpt.har"
    path.write_text(json.dumps(shapes.webpagetest_shape(runs=2, bodies=True)))
    first = pagebench("site", "import-har", str(path), "--name", "wpt")
    assert first.returncode == 0, first.stderr
    assert ("  page 1 of 4 (--page ID|TITLE|N imports another):\n"
            f'    1 page_1_0_1 "Run 1, First View for {shapes.PAGE_URL}" (5 requests)   <- imported\n'
            f'    2 page_1_1_1 "Run 1, Repeat View for {shapes.PAGE_URL}" (2 requests)\n') in first.stdout
    assert "  9 request(s) left out: of the HAR's 3 other page(s)\n" in first.stdout
    assert "warning: 2 of 5 request(s) have bodies made (not saved in the HAR)" in first.stdout  # image, font
    assert "will 404" not in first.stdout
    repeat = pagebench("site", "import-har", str(path), "--name", "wpt-rv", "--page", "Run 1, Repeat View")
    assert repeat.returncode == 0, repeat.stderr
    assert f'    2 page_1_1_1 "Run 1, Repeat View for {shapes.PAGE_URL}" (2 requests)   <- imported' in repeat.stdout
    site = load_site(data_dir / "sites" / "wpt-rv")
    assert site.recording is not None and [e.target for e in site.recording.exchanges] == ["/", "/app.js"]
    assert site.recording.exchanges[1].status == 200  # the repeat view's 304 stands in as its 200
    wrong = pagebench("site", "import-har", str(path), "--name", "wpt-x", "--page", "7")
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.strip().splitlines() == [
        f"error: {path}: no page '7' (an id, a title, or 1-4); the HAR's pages: "
        + "; ".join(f'{n} page_{run}_{view}_1 "Run {run}, {("First", "Repeat")[view]} View for {shapes.PAGE_URL}" '
                    f"({(5, 2)[view]} requests)" for n, (run, view) in enumerate(((1, 0), (1, 1), (2, 0), (2, 1)), 1))]
    assert sorted(p.name for p in (data_dir / "sites").iterdir()) == ["wpt", "wpt-rv"]


def test_requests_left_out_are_counted_by_why(tmp_path: Path, data_dir: Path):
    entries = [_entry("https://www.example.com/", text="<p>x</p>"), _entry("data:,x", text="x", at=1),
               _entry("https://www.example.com/a.css", mime="text/css", text="a{}", at=1),
               _entry("https://www.example.com/a.css", mime="text/css", text="b{}", at=2),
               _entry("wss://www.example.com/live", 101, mime="", text=None, at=2)]
    path = tmp_path / "x.har"
    path.write_bytes(_har(path, *entries).read_text().encode("utf-16"))  # a Windows tool's UTF-16, with its BOM
    result = pagebench("site", "import-har", str(path), "--name", "left")
    assert result.returncode == 0, result.stderr
    assert "  2 request(s), 11 B of bodies, 1 origin(s)\n" in result.stdout
    assert result.stdout.endswith(
        "  1 request(s) left out: data: URLs (inline data: no server is asked)\n"
        "  1 request(s) left out: WebSockets (ws:, wss:): not replayed; a script that opens one fails to connect in "
        "the lab\n"
        "  1 request(s) left out: repeats of a URL requested before (a replay answers a URL with one response, the "
        "first that can be replayed; 1 of them were recorded with another status or body)\n")
    assert "page" not in result.stdout.replace("pagebench", "")  # one page: no listing


@pytest.mark.parametrize(("data", "message"), [
    (json.dumps({"log": {"version": "2.0", "entries": []}}).encode(),
     "log.version: '2.0' is not a HAR version pagebench reads (1.1 or 1.2; none means 1.1)"),
    ('{"log": {"entries": [{"request": {"url": "https://caf\xe9.example/"}}]}}'.encode("latin-1"),
     "not UTF-8 text (byte 53, 0xE9, at line 1 column 54); a HAR is JSON: save it as UTF-8"),
])
def test_bad_input_is_refused_in_one_line(tmp_path: Path, data_dir: Path, data: bytes, message: str):
    bad = tmp_path / "bad.har"
    bad.write_bytes(data)
    result = pagebench("site", "import-har", str(bad), "--name", "bad")
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: {message}"), result.stderr
    assert not data_dir.exists()


def test_import_refuses_to_replace_what_is_not_a_site(tmp_path: Path, data_dir: Path):
    into = tmp_path / "precious"
    into.mkdir()
    (into / "notes.txt").write_text("mine")
    result = pagebench("site", "import-har", str(_page(tmp_path)), "--name", "x", "--into", str(into), "--force")
    assert result.returncode == 2
    assert "exists and is not a site directory; refusing to replace it" in result.stderr
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    assert (into / "notes.txt").read_text() == "mine"


def test_site_show_a_built_in_and_an_imported_site(tmp_path: Path, data_dir: Path):
    modern = builtin("modern")
    shown = pagebench("site", "show", "modern")
    assert shown.returncode == 0, shown.stderr
    assert f"{len(modern.files)} request(s)" in shown.stdout
    assert f"{len(modern.origins)} origin(s), dependency depth {max(modern.levels.values())}" in shown.stdout
    assert "modern (builtin)" in shown.stdout and f"builtin: {kinds.BUILTIN.summary}" in shown.stdout

    into = tmp_path / "sites" / "page"
    assert pagebench("site", "import-har", str(_page(tmp_path)), "--name", "page", "--into", str(into)).returncode == 0
    shown = pagebench("site", "show", str(into))
    assert shown.returncode == 0, shown.stderr
    assert f"page (recorded in {into})" in shown.stdout and f"recorded: {kinds.RECORDED.summary}" in shown.stdout
    assert "3 request(s)" in shown.stdout and "dependency depth 1" in shown.stdout
    assert "img.example.com.test" in shown.stdout and "img.example.com " in shown.stdout  # recorded as

    unknown = pagebench("site", "show", "nowhere")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    assert "unknown site 'nowhere'" in unknown.stderr and "pagebench site import-har" in unknown.stderr


def test_site_show_a_folder_by_path_and_as_a_spec_entry_with_its_other_hosts(tmp_path: Path, data_dir: Path):
    build, cdn = tmp_path / "public", tmp_path / "cdn"
    (build / "js").mkdir(parents=True)
    cdn.mkdir()
    (build / "index.html").write_text('<!DOCTYPE html><script src="https://cdn.example.com/app.js"></script>'
                                      '<script src="/js/main.js"></script><img src="https://img.example.net/x.png">')
    (build / "js" / "main.js").write_text('fetch("https://api.example.com/v1/items")')
    (cdn / "app.js").write_text("console.log(1)")
    shown = pagebench("site", "show", str(build))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"public (folder in {build}): https://public.test/"
    assert lines[1] == f"folder: {kinds.FOLDER.summary}"
    assert "2 request(s)" in shown.stdout and "other hosts its pages name in absolute URLs: 3" in shown.stdout
    assert "  cdn.example.com: not served (1 URL(s), fetched by the page, first in index.html)" in lines
    assert "  api.example.com: not served (1 URL(s), named in a script, first in js/main.js)" in lines
    assert any(line.startswith("the lab has no internet: a request to a host not served fails at once")
               for line in lines)
    entry = f"{{name: docs, path: {build}, origins: {{cdn.example.com: {cdn}}}}}"
    shown = pagebench("site", "show", entry)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"docs (folder in {build}): https://docs.test/")
    assert "  cdn.example.com: served as cdn.example.com.test from its folder (1 URL(s), fetched by the page, " \
           "first in index.html)" in shown.stdout.splitlines()
    assert "cdn.example.com.test" in shown.stdout and "3 request(s)" in shown.stdout
    assert not (data_dir / "sites").exists()  # shown, not copied
    (build / "index.html").unlink()
    missing = pagebench("site", "show", entry)
    assert missing.returncode != 0 and missing.stderr.strip() == (
        f"error: path: {build}: no index.html in it (a folder site serves its index.html as https://docs.test/)")


def test_think_time_is_applied_by_default_said_and_dropped_by_no_server_time(tmp_path: Path, data_dir: Path):
    page = _entry("https://www.example.com/", text="<p>x</p>")
    page["timings"] = {"send": 0, "connect": 40, "ssl": 25, "wait": 95, "receive": 1}
    path = _har(tmp_path / "t.har", page)
    said = "server think time (HAR wait less one RTT) of 1 response(s): total 80 ms, median 80.0 ms, max 80 ms"
    on = pagebench("site", "import-har", str(path), "--name", "on", "--into", str(tmp_path / "on"))
    assert on.returncode == 0, on.stderr
    assert f"{said}; on: each response is delayed by it; except in h3:" in on.stdout.replace("\n", " ")
    off = pagebench("site", "import-har", str(path), "--name", "off", "--into", str(tmp_path / "off"),
                    "--no-server-time")
    assert off.returncode == 0, off.stderr
    shown = pagebench("site", "show", str(tmp_path / "off"))
    assert f"{said}; off (--no-server-time): kept, not applied" in shown.stdout.replace("\n", " ")
    assert load_site(tmp_path / "off").recording.server_time is False
