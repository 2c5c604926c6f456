"""Synthesized stand-in pages (pure): a HAR with bodies stripped of them comes back with
the same requests, sizes and dependency tree; sizes read in the stated order; bodies that
compress to the recorded transfer size; parents read or inferred, and said which."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from typing import Any

import pytest

from pagebench.core import encodings
from pagebench.core.har.importer import import_har
from pagebench.core.har.levels import dependency_levels, entry_chain
from pagebench.core.har.mime import extension
from pagebench.core.har.parse import parse_har
from pagebench.core.har.synth import KINDS
from pagebench.core.sites.modern import modern
from tests.core.har.hars import FIXTURES, entry, har, imported


def _modern() -> dict[str, Any]:
    return json.loads(gzip.decompress((FIXTURES / "modern.har.gz").read_bytes()))


def _kind(mime: str) -> str:
    return KINDS.get(extension(mime), "other")


def _with_initiators(data: dict[str, Any]) -> dict[str, Any]:
    """The Playwright HAR as Chrome records it: each request's `_initiator` is the first
    document, stylesheet or script whose saved body names its URL (script: type script)."""
    entries = data["log"]["entries"]
    for item in entries:
        url = item["request"]["url"]
        named = re.sub(r"^https?:", "", url)
        for parent in entries:
            mime = parent["response"]["content"].get("mimeType", "")
            if parent is item or _kind(mime) not in ("html", "css", "js"):
                continue
            if named in parent["response"]["content"].get("text", ""):
                item["_initiator"] = {"type": "script" if _kind(mime) == "js" else "parser",
                                      "url": parent["request"]["url"]}
                break
    return data


def _stripped(data: dict[str, Any]) -> dict[str, Any]:
    for item in data["log"]["entries"]:
        item["response"]["content"].pop("text", None)
        item["response"]["content"].pop("encoding", None)
    return data


def _made_size(body: bytes) -> int:
    """A made body's size before the import mapped its hosts into the lab (`x.com` ->
    `x.com.test`, as it does in saved bodies)."""
    return len(body.replace(b".test/", b"/"))


def test_a_stripped_har_comes_back_as_the_same_page():
    """Validation: modern recorded with bodies (Chrome's initiators derived from them), its
    bodies stripped, synthesized: the same URLs, bytes per kind within 2 %, and the same
    dependency tree, read from what the made bodies name."""
    original = _with_initiators(_modern())
    text = json.dumps(original)
    real = list(parse_har(text, "modern.har").entries)
    site = import_har(parse_har(json.dumps(_stripped(json.loads(text))), "m.har"), "mine", "m.har")

    assert sorted(e.original for e in site.recording.exchanges) == sorted(e.url for e in real)
    assert not site.recording.missing
    by_url = {e.original: e for e in site.recording.exchanges}
    made = Counter({k: 0 for k in ("html", "css", "js", "image", "font")})
    recorded = Counter(made)
    for e in real:
        recorded[_kind(e.mime_type)] += len(e.body or b"")
        exchange = by_url[e.url]
        made[_kind(e.mime_type)] += len(site.files[f"{exchange.host}/{exchange.file}"])
    for kind in recorded:
        assert abs(made[kind] - recorded[kind]) <= 0.02 * recorded[kind], (kind, made[kind], recorded[kind])

    # the tree the made bodies name: each request's parent is the first body naming it
    lab = {e.original: e.url for e in site.recording.exchanges}
    texts = {e.url: site.files[f"{e.host}/{e.file}"].decode("utf-8", "replace") for e in site.recording.exchanges
             if e.file and e.file.rsplit(".", 1)[-1] in ("html", "css", "js")}
    level = {lab[real[0].url]: 0}
    for e in real[1:]:
        url = lab[e.url]
        parents = [p for p in level if p in texts and json.dumps(url)[1:-1] in texts[p] or url in texts.get(p, "")]
        assert parents, f"no made body names {url}"
        level[url] = level[parents[0]] + 1
    truth = modern()
    for e in real[1:]:
        host_path = lab[e.url].removeprefix("https://").replace(".test/", "/", 1)
        assert level[lab[e.url]] == truth.level(host_path), e.url
    assert max(level.values()) == 4
    # and by the levels the import records, and the HAR's own
    chain = entry_chain(real, "x")
    assert max(dependency_levels(real, chain).values()) == 4
    assert max(e.level for e in site.recording.exchanges) == 4
    report = site.fidelity
    assert report is not None and report.original.depth == report.stand_in.depth == 4
    assert report.inferred == () and report.made == 69 and report.kept == 0
    assert report.original.requests == report.stand_in.requests == 69
    assert report.original.critical_path_ms == report.stand_in.critical_path_ms


def test_without_initiators_parents_are_inferred_from_timing_and_listed():
    site = import_har(parse_har(json.dumps(_stripped(_modern())), "m.har"), "mine", "m.har")
    report = site.fidelity
    assert report is not None and len(report.inferred) == 68  # every request but the document
    inferred = "\n".join(report.inferred)
    # fonts: the stylesheet of their Referer's origin that ended last before them
    assert "sans-bold.woff: named by https://static.modern.test/css/main.css (inferred" in inferred
    # late.js started after app.js, its true parent, ended, and after no other script did
    assert "late.js: named by https://static.modern.test/js/app.js (inferred" in inferred
    # the Referers alone say depth 2; timing says 3 (4 in truth: ads.js is late.js's, not carousel.js's)
    assert (report.original.depth, report.stand_in.depth) == (2, 3)
    assert "ads.js: named by https://cdn.modern.test/lib/carousel.js (inferred" in inferred
    assert "  parents inferred from timing: 68" in report.lines()


def test_an_encoded_body_is_made_to_compress_to_its_transfer_size():
    """WebPageTest's shape: content.size is the bytes sent, `_objectSizeUncompressed` the
    decoded body; br and gzip bodies compress to the recorded transfer size within 1 %."""
    def wpt(url: str, mime: str, decoded: int, sent: int, token: str, at: float) -> dict[str, Any]:
        item = entry(url, mime=mime, text=None, size=sent, at=at, headers={"content-encoding": token})
        item["response"]["bodySize"] = sent
        item.update(_objectSize=sent, _objectSizeUncompressed=decoded, _bytesIn=sent + 300)
        item["response"]["headersSize"] = 300
        return item

    site = imported(wpt("https://www.example.com/", "text/html", 60_000, 14_000, "br", 0),
                    wpt("https://www.example.com/app.js", "application/javascript", 200_000, 61_000, "gzip", 0.1),
                    wpt("https://www.example.com/a.css", "text/css", 30_000, 5_000, "zstd", 0.1))
    for path, size, sent, encoding in (("/", 60_000, 14_000, encodings.BR),
                                       ("/app.js", 200_000, 61_000, encodings.GZIP),
                                       ("/a.css", 30_000, 5_000, encodings.ZSTD)):
        exchange = next(e for e in site.recording.exchanges if e.path == path)
        body = site.files[f"{exchange.host}/{exchange.file}"]
        assert _made_size(body) == size
        assert abs(len(encoding.compress(body)) - sent) <= 0.01 * sent, (path, len(encoding.compress(body)))
    report = site.fidelity
    assert report is not None and report.original.sent == {"html": 14_000, "js": 61_000, "css": 5_000}
    for kind, sent in report.original.sent.items():
        assert abs(report.stand_in.sent[kind] - sent) <= 0.01 * sent


def test_scripts_make_their_requests_and_spend_no_cpu_the_har_does_not_show():
    site = imported(entry("https://www.example.com/", text=None, size=5_000),
                    entry("https://www.example.com/app.js", mime="text/javascript", text=None, size=30_000, at=0.1,
                          _initiator={"type": "parser", "url": "https://www.example.com/"}),
                    entry("https://api.example.com/data.json", mime="application/json", text=None, size=900,
                          at=0.3, _initiator={"type": "script", "stack": {"callFrames": [
                              {"url": "https://www.example.com/app.js"}]}}),
                    entry("https://img.example.com/x.webp", mime="image/webp", text=None, size=4_000, at=0.3,
                          _initiator={"type": "script", "url": "https://www.example.com/app.js"}))
    files = {e.path: site.files[f"{e.host}/{e.file}"] for e in site.recording.exchanges}
    script = files["/app.js"]
    assert _made_size(script) == 30_000 and b"for(" not in script and b"while(" not in script
    assert b'fetch("https://api.example.com.test/data.json")' in script
    assert b'(new Image).src="https://img.example.com.test/x.webp"' in script
    assert b'<script src="https://www.example.com.test/app.js"></script>' in files["/"]
    assert files["/x.webp"].startswith(b"\x89PNG") and len(files["/x.webp"]) == 4_000
    assert json.loads(files["/data.json"]) and len(files["/data.json"]) == 900
    assert site.fidelity is not None and site.fidelity.fallbacks == (
        "https://img.example.com/x.webp: made as png bytes",)
    assert [e.level for e in site.recording.exchanges] == [0, 1, 2, 2]


def test_stylesheets_name_fonts_and_images_the_document_uses():
    site = imported(entry("https://www.example.com/", text=None, size=3_000),
                    entry("https://static.example.com/a.css", mime="text/css", text=None, size=8_000, at=0.1),
                    entry("https://static.example.com/b.css", mime="text/css", text=None, size=2_000, at=0.3,
                          _initiator={"type": "parser", "url": "https://static.example.com/a.css"}),
                    entry("https://fonts.example.com/f.woff2", mime="font/woff2", text=None, size=20_000, at=0.2,
                          request_headers={"referer": "https://static.example.com/"}),
                    entry("https://img.example.com/bg.png", mime="image/png", text=None, size=700, at=0.4,
                          _initiator={"type": "parser", "url": "https://static.example.com/b.css"}))
    files = {e.path: site.files[f"{e.host}/{e.file}"] for e in site.recording.exchanges}
    css = files["/a.css"].decode()
    assert css.startswith('@import url("https://static.example.com.test/b.css");')
    assert re.search(r'@font-face\{font-family:pbf(\d+);src:url\("https://fonts.example.com.test/f.woff2"\)\}', css)
    number = re.search(r"pbf(\d+)", css).group(1)
    assert f'<span class="pbf{number}">'.encode() in files["/"]
    assert b"background-image:url(\"https://img.example.com.test/bg.png\")" in files["/b.css"]
    assert files["/f.woff2"][:4] == b"wOF2" and len(files["/f.woff2"]) == 20_000
    assert files["/bg.png"].startswith(b"\x89PNG") and len(files["/bg.png"]) == 700
    assert site.fidelity is not None
    assert site.fidelity.inferred == (
        "https://static.example.com/a.css: named by https://www.example.com/ (inferred from timing)",
        "https://fonts.example.com/f.woff2: named by https://static.example.com/a.css (inferred from timing)")
    assert site.fidelity.stand_in.depth == 3


def test_a_warm_capture_stands_in_as_its_cold_load_and_guessed_sizes_are_said():
    site = imported(entry("https://www.example.com/", text=None, size=4_000),
                    entry("https://www.example.com/a.css", 304, mime="text/css", text=None, at=0.1),
                    entry("https://www.example.com/b.js", mime="text/javascript", text=None, at=0.2,
                          _objectSizeUncompressed=-1, _bytesIn=0))
    by = {e.path: e for e in site.recording.exchanges}
    assert by["/a.css"].status == 200 and by["/b.js"].status == 200
    assert len(site.files[f"{by['/a.css'].host}/{by['/a.css'].file}"]) == 12_000
    assert any("2 body size(s) not in the HAR: guessed by kind" in w for w in site.warnings)
    assert site.fidelity is not None and len(site.fidelity.guessed) == 2
    assert "bytes css" in "\n".join(site.fidelity.lines())


def test_server_think_time_is_wait_less_one_round_trip():
    timings = {"blocked": 1, "dns": 5, "connect": 60, "ssl": 30, "send": 0, "wait": 180, "receive": 3}
    site = imported(entry("https://www.example.com/", text=None, size=4_000, timings=timings),
                    entry("https://www.example.com/a.js", mime="text/javascript", text=None, size=100, at=0.3,
                          timings={**timings, "connect": -1, "ssl": -1, "wait": 25}),
                    entry("https://www.example.com/b.js", mime="text/javascript", text=None, size=100, at=0.3))
    think = {e.path: e.think_ms for e in site.recording.exchanges}
    assert think == {"/": 150.0, "/a.js": 0.0, "/b.js": None}


def test_synthesize_all_replaces_saved_bodies_and_a_partial_har_keeps_them():
    page = [entry("https://www.example.com/", text="<p>real</p>"),
            entry("https://www.example.com/a.js", mime="text/javascript", text=None, size=2_000, at=0.1)]
    kept = import_har(parse_har(har(*page), "x.har"), "mine", "x.har")
    assert b"<p>real</p>" in kept.files.values()
    assert kept.fidelity is not None and (kept.fidelity.made, kept.fidelity.kept) == (1, 1)
    every = import_har(parse_har(har(*page), "x.har"), "mine", "x.har", synthesize_all=True)
    assert b"<p>real</p>" not in every.files.values()
    assert every.fidelity is not None and (every.fidelity.made, every.fidelity.kept) == (2, 0)
    untouched = import_har(parse_har(har(page[0]), "x.har"), "mine", "x.har")
    assert untouched.fidelity is None and not untouched.warnings


@pytest.mark.parametrize("ext", ["png", "jpg", "gif", "woff", "ttf"])
def test_media_is_valid_and_of_the_recorded_size(ext):
    from pagebench.core.har.bodies import media_body

    body = media_body(ext, 5_000, "x")
    magic = {"png": b"\x89PNG", "jpg": b"\xff\xd8", "gif": b"GIF8", "woff": b"wOFF", "ttf": b"\x00\x01\x00\x00"}
    assert body.startswith(magic[ext]) and abs(len(body) - 5_000) <= 16
    assert len(media_body("gif", 10, "x")) > 10  # the smallest valid GIF is larger: made so, not refused


def test_a_request_made_long_after_its_script_ended_waits_for_a_timer():
    script = {"type": "script", "url": "https://www.example.com/app.js"}
    site = imported(entry("https://www.example.com/", text=None, size=2_000),
                    entry("https://www.example.com/app.js", mime="text/javascript", text=None, size=3_000, at=0.1),
                    entry("https://www.example.com/now.png", mime="image/png", text=None, size=500, at=0.12,
                          _initiator=script),
                    entry("https://www.example.com/later.png", mime="image/png", text=None, size=500, at=0.41,
                          _initiator=script))
    exchange = next(e for e in site.recording.exchanges if e.path == "/app.js")
    script_body = site.files[f"{exchange.host}/{exchange.file}"]
    assert b'(new Image).src="https://www.example.com.test/now.png";' in script_body
    assert b'setTimeout(function(){var e;(new Image).src="https://www.example.com.test/later.png";},300);' \
        in script_body
    assert site.fidelity is not None and site.fidelity.timers == 1
    assert "1 request(s) made by a script after a timer" in "\n".join(site.fidelity.lines())
