"""A Caddy server's routes (pure): the headers each path gets, evaluated the way Caddy
runs its routes, and what an encoding and a site version add."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.core.encodings import IDENTITY
from pagebench.core.modes import H2, H3
from pagebench.core.servers import caddyconf
from pagebench.core.servers.headers import MIME_TYPES
from pagebench.core.servers.plan import plan
from pagebench.core.sites.model import Site, SiteManifest
from tests.core.servers.samples import LEAF, B, handlers, headers_for, site

RUN = Path("/run/pagebench/pbx/caddy")
RULES = {"/fonts/*.woff": {"Cache-Control": "max-age=31536000, immutable", "X-Extra": "1"},
         "/img/**": {"X-Img": "any"}, "/img/0003.png": {"X-Img": "never: the earlier rule wins"}}
A = site("a", ["www.a.test", "img.a.test"], RULES)


def config(*modes: str) -> dict:
    return json.loads(caddyconf.render(plan([A, B], modes or (H2, H3), ["1.3", "1.2"], LEAF), RUN))


@pytest.mark.parametrize("path,expected", [
    ("/", {"Cache-Control": "no-cache", "Content-Type": "text/html"}),
    ("/index.html", {"Cache-Control": "no-cache", "Content-Type": "text/html"}),
    ("/about.htm", {"Cache-Control": "no-cache", "Content-Type": "text/html"}),
    ("/css/01.css", {"Cache-Control": "max-age=86400", "Content-Type": "text/css"}),
    ("/js/01.js", {"Cache-Control": "max-age=86400", "Content-Type": "text/javascript"}),
    ("/a.JPG", {"Cache-Control": "max-age=86400", "Content-Type": "image/jpeg"}),
    ("/font.woff2", {"Cache-Control": "max-age=86400", "Content-Type": "font/woff2"}),
    ("/data.bin", {"Cache-Control": "max-age=86400", "Content-Type": "application/octet-stream"}),
    ("/fonts/x.woff", {"Cache-Control": "max-age=31536000, immutable", "Content-Type": "font/woff", "X-Extra": "1"}),
    ("/img/0003.png", {"Cache-Control": "max-age=86400", "Content-Type": "image/png", "X-Img": "any"}),
])
def test_each_path_gets_nginx_s_headers(path: str, expected: dict[str, str]):
    routes = config()["apps"]["http"]["servers"]["pb3"]["routes"]
    assert headers_for(routes, path) == {"Timing-Allow-Origin": "*", "Access-Control-Allow-Origin": "*", **expected}


def test_every_nginx_mime_type_is_set():
    routes = config()["apps"]["http"]["servers"]["pb5"]["routes"]
    for mime, extensions in MIME_TYPES:
        for ext in extensions.split():
            assert headers_for(routes, f"/x/file.{ext}")["Content-Type"] == mime, ext


# Encodings and versions --------------------------------------------------------------------------

V1_CSS = b"body { color: red }"
V = Site(SiteManifest(name="v", entry="https://www.v.test/", origins=("www.v.test",), versions=2,
                      dictionaries={"www.v.test/css/a.css": encodings.available_dictionary(V1_CSS),
                                    "www.v.test/index.html": encodings.available_dictionary(b"<p>")}),
         Path("/data/sites/v"))


def servers_of(*names: str, tcp: bool = False) -> dict[tuple[str, int], dict]:
    p = plan([V], [H3], ["1.3"], LEAF, encodings=[encodings.parse(name) for name in names])
    conf = caddyconf.render_config(p, RUN, tcp=tcp)["apps"]["http"]["servers"]
    return {(b.encoding.name, b.version): conf[caddyconf.logger_name(b.index)] for b in p.bindings}


def test_identity_of_one_version_is_the_configuration_before_encodings():
    assert config() == json.loads(caddyconf.render(plan([A, B], [H2, H3], ["1.3", "1.2"], LEAF,
                                                        encodings=[IDENTITY]), RUN))
    assert not any("precompressed" in h for h in handlers(config()["apps"]["http"]["servers"]["pb3"], "file_server"))


def test_each_version_serves_its_root_and_text_is_revalidated():
    servers = servers_of("identity")
    assert handlers(servers["identity", 1], "file_server")[-1]["root"] == "/data/sites/v/www.v.test"
    assert handlers(servers["identity", 2], "file_server")[-1]["root"] == "/data/sites/v/v2/www.v.test"
    for path, cache_control in [("/css/a.css", "no-cache"), ("/js/x.JS", "no-cache"), ("/img/1.png", "max-age=86400")]:
        assert headers_for(servers["identity", 2]["routes"], path)["Cache-Control"] == cache_control, path


def test_sidecars_of_the_binding_s_encoding_only_and_for_text_only():
    servers = servers_of("gzip", "zstd")
    for encoding in ("gzip", "zstd"):
        precompressed = [h for h in handlers(servers[encoding, 2], "file_server") if "precompressed" in h]
        assert precompressed == [{"handler": "file_server", "root": "/data/sites/v/v2/www.v.test",
                                  "index_names": ["index.html"], "precompressed": {encoding: {}},
                                  "precompressed_order": [encoding]}]
        route = next(r for r in servers[encoding, 2]["routes"] if r["handle"] == precompressed)
        patterns = [m["path_regexp"]["pattern"] for m in route["match"]]
        assert any(re.search(p, "/css/a.css") for p in patterns) and any(re.search(p, "/") for p in patterns)
        assert not any(re.search(p, "/img/a.png") for p in patterns)
    assert not handlers(servers["gzip", 1], "map") and "Link" not in json.dumps(servers["gzip", 1])


def test_dcz_maps_the_dictionary_offered_to_its_delta():
    servers = servers_of("dcz", tcp=True)
    v1, v2 = servers["dcz", 1], servers["dcz", 2]
    assert v1["protocols"] == ["h1", "h2", "h3"]  # tcp: for curl; never in a run
    (mapping,) = handlers(v2, "map")
    assert mapping["source"] == "{http.request.header.Available-Dictionary}"
    assert {m["input"]: m["outputs"] for m in mapping["mappings"]}[encodings.available_dictionary(V1_CSS)] == \
        [encodings.dictionary_id(V1_CSS)]
    delta = next(r for r in v2["routes"] if any("file" in m for m in r.get("match", [])))
    assert delta["match"][0]["file"]["root"] == "/data/sites/v/v2/www.v.test"
    assert re.search(delta["match"][0]["header_regexp"]["Accept-Encoding"]["pattern"], "gzip, br, zstd, dcb, dcz")
    assert delta["handle"][1]["response"]["set"] == {"Content-Encoding": ["dcz"],
                                                     "Vary": ["Accept-Encoding, Available-Dictionary"]}
    fallback = [h for h in handlers(v2, "file_server") if "precompressed" in h]
    assert [h["precompressed_order"] for h in fallback] == [["zstd"]]  # no dictionary: zstd
    dictionary = next(r for r in v2["routes"] if r.get("match") == [{"path": ["/css/a.css.pbdict"]}])
    assert dictionary["handle"][0]["response"]["set"] == {
        "Cache-Control": ["max-age=86400"], "Content-Type": ["text/css"], "Use-As-Dictionary": ['match="/css/a.css"']}
    assert dictionary["handle"][1:] == [{"handler": "rewrite", "uri": "/css/a.css"},
                                        {"handler": "file_server", "root": "/data/sites/v/www.v.test",
                                         "index_names": ["index.html"]}]
    (link,) = [r for r in v1["routes"] if "Link" in json.dumps(r)]
    assert link["match"] == [{"path": ["/index.html", "/"]}]
    assert "Link" not in json.dumps(v2)  # version 1's entry only
