"""nginx configuration rendering and address allocation (pure)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pagebench.core import encodings
from pagebench.core.servers import nginxconf, plan as serverplan
from pagebench.core.certs import Leaf
from pagebench.core.servers.plan import PlanError, browser_url, glob_regex, plan
from pagebench.core.sites.model import Site, SiteManifest

LEAF = Leaf(Path("/data/tls/leaf-1.pem"), Path("/data/tls/leaf.key"), Path("/data/tls/leaf-1-chain.pem"), "SPKI=")
RUN = Path("/run/pagebench/pbx/nginx")


def site(name: str, origins: list[str], headers: dict | None = None) -> Site:
    manifest = SiteManifest(name=name, entry=f"https://{origins[0]}/", origins=tuple(origins), headers=headers or {})
    return Site(manifest, Path("/data/sites") / name)


A = site("a", ["www.a.test", "img.a.test"])
B = site("b", ["www.b.test"])
ALL_MODES = ["http1.0", "keepalive", "h2"]


def servers(conf: str) -> dict[str, list[str]]:
    """Server blocks keyed by their first listen address, as lists of stripped lines."""
    blocks, current = {}, None
    for line in conf.splitlines():
        text = line.strip()
        if text == "server {":
            current = []
        elif current is not None and line.startswith("    }"):
            listen = next(x for x in current if x.startswith("listen "))
            blocks[listen.split()[1].split(":")[0]] = current
            current = None
        elif current is not None:
            current.append(text)
    return blocks


def top_lines(conf: str) -> set[str]:
    return {line.strip() for line in conf.splitlines()}


# Allocation ----------------------------------------------------------------------------------


def test_one_ip_per_tls_mode_site_origin_in_nesting_order():
    p = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert p.ip_count == 2 * 3 * 3 == len(p.bindings)
    cells = [(b.tls, b.mode, b.site, b.origin) for b in p.bindings]
    assert cells[:4] == [("1.3", "http1.0", "a", "www.a.test"), ("1.3", "http1.0", "a", "img.a.test"),
                         ("1.3", "http1.0", "b", "www.b.test"), ("1.3", "keepalive", "a", "www.a.test")]
    assert cells[9] == ("1.2", "http1.0", "a", "www.a.test")
    assert [b.index for b in p.bindings] == list(range(18))
    assert p.bindings[0].ip == "198.18.1.2" and p.bindings[17].ip == "198.18.1.19"
    assert p.bindings[0].ip6 == "2001:2:0:1::2" and p.bindings[17].ip6 == "2001:2:0:1::13"
    assert len({b.ip for b in p.bindings}) == 18


def test_addresses_match_the_topology():
    from pagebench.core.layout import Layout
    topology = Layout("pbabc", server_ips=6)
    p = plan([A], ALL_MODES, ["1.3"], LEAF)
    assert [b.ip for b in p.bindings] == list(topology.server_addresses)
    assert [b.ip6 for b in p.bindings] == list(topology.server_addresses6)


def test_duplicates_in_modes_and_versions_are_ignored():
    assert plan([A], ["h2", "h2"], ["1.3", "1.3"], LEAF).ip_count == 2


def test_resolver_rules_map_each_origin_to_its_ip():
    p = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert p.host_resolver_rules("h2", "1.3") == \
        "MAP www.a.test 198.18.1.8, MAP img.a.test 198.18.1.9, MAP www.b.test 198.18.1.10"
    assert p.host_resolver_rules("http1.0", "1.2", site="b") == "MAP www.b.test 198.18.1.13"
    assert p.host_resolver_rules("keepalive", "1.3", site="b", block_others=True) == \
        "MAP www.b.test 198.18.1.7, MAP * ~NOTFOUND"
    assert p.address("h2", "1.2", "img.a.test").ip == "198.18.1.18"
    assert p.addresses("h2", "1.3") == {"www.a.test": "198.18.1.8", "img.a.test": "198.18.1.9",
                                        "www.b.test": "198.18.1.10"}
    assert p.hostnames == ("img.a.test", "www.a.test", "www.b.test")


def test_sites_sharing_a_hostname_need_the_site_named():
    small, large = site("seed000-small-n1", ["www.seed000.test"]), site("seed000-large-n1", ["www.seed000.test"])
    p = plan([small, large], ["h2"], ["1.3"], LEAF)
    with pytest.raises(PlanError, match=r"host www.seed000.test is served for several sites .*: name the site"):
        p.host_resolver_rules("h2", "1.3")
    assert p.host_resolver_rules("h2", "1.3", site="seed000-large-n1") == "MAP www.seed000.test 198.18.1.3"


@pytest.mark.parametrize("modes,tls,fragment", [
    (["pipelining"], ["1.3"], "mode pipelining: "),
    (["h3"], ["1.2"], "mode h3: QUIC always uses TLS 1.3, and the plan has tls 1.2 only"),
    (["spdy"], ["1.3"], "mode 'spdy': unknown"),
    (["h2"], ["1.1"], "tls '1.1': must be one of none, 1.2, 1.3"),
    ([], ["1.3"], "at least one"),
])
def test_unservable_requests_are_one_line_errors(modes, tls, fragment):
    with pytest.raises(PlanError) as error:
        plan([A], modes, tls, LEAF)
    assert fragment in str(error.value) and "\n" not in str(error.value)


def test_h3_bindings_exist_for_tls13_only_in_the_same_nesting_order():
    p = plan([A, B], ["h2", "h3"], ["1.3", "1.2"], LEAF)
    cells = [(b.tls, b.mode, b.site, b.origin, b.index) for b in p.bindings]
    assert cells == [
        ("1.3", "h2", "a", "www.a.test", 0), ("1.3", "h2", "a", "img.a.test", 1), ("1.3", "h2", "b", "www.b.test", 2),
        ("1.3", "h3", "a", "www.a.test", 3), ("1.3", "h3", "a", "img.a.test", 4), ("1.3", "h3", "b", "www.b.test", 5),
        ("1.2", "h2", "a", "www.a.test", 6), ("1.2", "h2", "a", "img.a.test", 7), ("1.2", "h2", "b", "www.b.test", 8),
    ]
    assert p.ip_count == 9 and [b.server for b in p.bindings].count("caddy") == 3
    assert [b.index for b in p.served_by("caddy")] == [3, 4, 5]
    assert [b.index for b in p.served_by("nginx")] == [0, 1, 2, 6, 7, 8]
    # without h3 the allocation is what it always was
    assert [(b.tls, b.mode, b.origin) for b in plan([A, B], ["h2"], ["1.3", "1.2"], LEAF).bindings] == \
        [(b.tls, b.mode, b.origin) for b in p.bindings if b.mode == "h2"]
    with pytest.raises(PlanError, match=r"^mode h3 with tls 1.2: QUIC always uses TLS 1.3$"):
        p.host_resolver_rules("h3", "1.2")


def test_h3_resolver_rules_and_force_quic_value():
    p = plan([A, B], ["h2", "h3"], ["1.3"], LEAF)
    assert p.host_resolver_rules("h3", "1.3", site="a", block_others=True) == \
        "MAP www.a.test 198.18.1.5, MAP img.a.test 198.18.1.6, MAP * ~NOTFOUND"
    assert p.force_quic_on("h3", "1.3", site="a") == "www.a.test:443,img.a.test:443"
    assert p.force_quic_on("h3", "1.3", site="b") == "www.b.test:443"
    assert p.force_quic_on("h3", "1.3") == "www.a.test:443,img.a.test:443,www.b.test:443"
    assert p.address("h3", "1.3", "www.b.test").ip == "198.18.1.7"
    with pytest.raises(PlanError, match="mode 'h3': not in this plan"):
        plan([A], ["h2"], ["1.3"], LEAF).force_quic_on("h3", "1.3")
    small, large = site("seed000-small-n1", ["www.seed000.test"]), site("seed000-large-n1", ["www.seed000.test"])
    shared = plan([small, large], ["h3"], ["1.3"], LEAF)
    assert shared.force_quic_on("h3", "1.3", site="seed000-large-n1") == "www.seed000.test:443"
    with pytest.raises(PlanError, match="name the site"):
        shared.force_quic_on("h3", "1.3")


def test_nginx_renders_no_h3_binding():
    p = plan([A], ["h2", "h3"], ["1.3"], LEAF)
    blocks = servers(nginxconf.render(p, RUN))
    assert sorted(blocks) == ["198.18.1.2", "198.18.1.3"]  # h2 only; h3 (.4, .5) is Caddy's
    assert "198.18.1.4" not in nginxconf.render(p, RUN) and "quic" not in nginxconf.render(p, RUN)
    only_h3 = nginxconf.render(plan([A], ["h3"], ["1.3"], LEAF), RUN)
    assert servers(only_h3) == {} and only_h3.count("{") == only_h3.count("}")


def test_too_many_addresses_and_unknown_selections_are_refused():
    many = [site(f"s{i}", [f"www.s{i}.test"]) for i in range(42)]
    with pytest.raises(PlanError, match=r"needs 252 server IPs .* at most 250"):
        plan(many, ALL_MODES, ["1.2", "1.3"], LEAF)
    with pytest.raises(PlanError, match="listed twice"):
        plan([A, A], ["h2"], ["1.3"], LEAF)
    p = plan([A], ["h2"], ["1.3"], LEAF)
    with pytest.raises(PlanError, match="mode 'keepalive': not in this plan"):
        p.host_resolver_rules("keepalive", "1.3")
    with pytest.raises(PlanError, match="tls '1.2': not in this plan"):
        p.host_resolver_rules("h2", "1.2")
    with pytest.raises(PlanError, match="site 'zzz': not in this plan"):
        p.host_resolver_rules("h2", "1.3", site="zzz")
    with pytest.raises(PlanError, match="host 'www.b.test': not served"):
        p.address("h2", "1.3", "www.b.test")


# Rendering -----------------------------------------------------------------------------------


def test_process_and_global_settings():
    conf = nginxconf.render(plan([A], ALL_MODES, ["1.3"], LEAF), RUN)
    lines = top_lines(conf)
    for expected in [
        "daemon off;", "master_process on;", "worker_processes 1;", "user nobody nogroup;",
        f"pid {RUN}/nginx.pid;", f"error_log {RUN}/error.log;", f"access_log {RUN}/access.log pagebench;",
        f"client_body_temp_path {RUN}/client_body_temp;", f"proxy_temp_path {RUN}/proxy_temp;",
        "sendfile on;", "tcp_nodelay on;", "keepalive_requests 10000;", "keepalive_timeout 75s;",
        "ssl_session_tickets off;", "ssl_session_cache off;", "ssl_early_data off;",
        "ssl_certificate /data/tls/leaf-1.pem;", "ssl_certificate_key /data/tls/leaf.key;",
        'default "max-age=86400";', '"~\\.html?$" "no-cache";',
        "text/html html htm;", "text/css css;", "text/javascript js mjs;", "image/png png;",
        "image/jpeg jpg jpeg;", "image/gif gif;", "image/svg+xml svg;", "font/woff woff;", "font/woff2 woff2;",
        "font/ttf ttf;", "application/json json;",
    ]:
        assert expected in lines, expected
    assert conf.count("{") == conf.count("}")
    # every path nginx writes is inside the run directory
    for directive in ("pid", "error_log", "access_log") + tuple(f"{k}_temp_path" for k in
                                                               ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")):
        line = next(x for x in lines if x.startswith(directive + " "))
        assert line.split()[1].startswith(str(RUN) + "/"), line


def test_log_format_has_every_field_tab_separated():
    conf = nginxconf.render(plan([A], ["h2"], ["1.3"], LEAF), RUN)
    line = next(x.strip() for x in conf.splitlines() if x.strip().startswith("log_format"))
    assert line == ("log_format pagebench '$msec\\t$request_time\\t$server_addr\\t$connection\\t"
                    "$connection_requests\\t$server_protocol\\t$ssl_protocol\\t$status\\t$body_bytes_sent\\t"
                    "$host\\t$request_uri\\t$request_method\\t$bytes_sent';")


@pytest.mark.parametrize("tls,protocols", [("1.3", "ssl_protocols TLSv1.3;"), ("1.2", "ssl_protocols TLSv1.2;")])
def test_each_mode_has_its_exact_server_block(tls: str, protocols: str):
    p = plan([A], ALL_MODES, [tls], LEAF)
    blocks = servers(nginxconf.render(p, RUN))
    assert len(blocks) == 6
    expected_listen = {"http1.0": "ssl;", "keepalive": "ssl;", "h2": "ssl http2;"}
    for binding in p.bindings:
        block = blocks[binding.ip]
        assert block[0] == f"listen {binding.ip}:443 {expected_listen[binding.mode]}"
        assert block[1] == f"listen [{binding.ip6}]:443 {expected_listen[binding.mode]}"
        assert f"server_name {binding.origin};" in block
        assert protocols in block
        assert f"root /data/sites/a/{binding.origin};" in block
        assert ("keepalive_timeout 0;" in block) == (binding.mode == "http1.0")
        assert 'add_header Cache-Control "$pagebench_cache_control" always;' in block
        assert 'add_header Timing-Allow-Origin "*" always;' in block
        assert 'add_header Access-Control-Allow-Origin "*" always;' in block
        assert not any("http2" in line for line in block if binding.mode != "h2")


def test_cleartext_bindings_listen_on_port_80_without_ssl_and_h2_with_prior_knowledge():
    p = plan([A], ALL_MODES + ["h3"], ["none", "1.3"], LEAF)
    assert {(b.tls, b.mode) for b in p.bindings if b.tls == "none"} == {("none", m) for m in ALL_MODES}  # no QUIC
    blocks = servers(nginxconf.render(p, RUN))
    expected_listen = {"http1.0": ";", "keepalive": ";", "h2": " http2;"}
    for binding in (b for b in p.bindings if b.tls == "none"):
        block = blocks[binding.ip]
        assert binding.port == 80
        assert block[0] == f"listen {binding.ip}:80{expected_listen[binding.mode]}"
        assert block[1] == f"listen [{binding.ip6}]:80{expected_listen[binding.mode]}"
        assert not any(line.startswith("ssl_") for line in block)
        assert "sendfile off;" in block  # nginx's h2 sendfile path corks: a round trip lost (nginxconf)
        assert ("keepalive_timeout 0;" in block) == (binding.mode == "http1.0")
    assert all(b.port == 443 for b in p.bindings if b.tls != "none")


def test_the_browser_loads_cleartext_over_http_only_when_it_talks_to_the_origin():
    entry = "https://www.a.test/index.html"
    assert browser_url(entry, "none", "direct") == "http://www.a.test/index.html"
    assert browser_url(entry, "none", "proxy") == entry  # the browser's hop to the edge proxy stays TLS
    assert browser_url(entry, "1.3", "direct") == entry


def test_site_header_rules_become_locations_with_all_headers():
    custom = site("c", ["www.c.test"], {"/fonts/*.woff": {"Cache-Control": "max-age=31536000, immutable",
                                                          "X-Extra": "1"}})
    block = servers(nginxconf.render(plan([custom], ["h2"], ["1.3"], LEAF), RUN))["198.18.1.2"]
    start = block.index('location ~ "^/fonts/[^/]*\\.woff$" {')
    location = block[start + 1:start + 5]
    assert location == [
        'add_header Timing-Allow-Origin "*" always;',
        'add_header Access-Control-Allow-Origin "*" always;',
        'add_header Cache-Control "max-age=31536000, immutable" always;',
        'add_header X-Extra "1" always;',
    ]


@pytest.mark.parametrize("glob,regex", [
    ("/index.html", r"^/index\.html$"),
    ("/img/*.png", r"^/img/[^/]*\.png$"),
    ("/**.js", r"^/.*\.js$"),
    ("/a?/b-c_d", r"^/a[^/]/b\-c_d$"),
])
def test_glob_regex(glob: str, regex: str):
    assert glob_regex(glob) == regex
    assert re.match(regex, glob.replace("**", "x/y").replace("*", "x").replace("?", "z"))


def test_unsafe_paths_are_refused():
    with pytest.raises(PlanError, match=r"path '/run/a b': must not contain"):
        nginxconf.render(plan([A], ["h2"], ["1.3"], LEAF), Path("/run/a b"))
    evil = Site(A.manifest, Path("/data/$host"))
    with pytest.raises(PlanError, match="must not contain"):
        nginxconf.render(plan([evil], ["h2"], ["1.3"], LEAF), RUN)


def test_the_certificate_is_needed_only_to_render():
    p = plan([A], ["h2"], ["1.3"])
    assert p.leaf is None and p.ip_count == 2
    with pytest.raises(PlanError, match="no certificate"):
        nginxconf.render(p, RUN)
    assert nginxconf.render(p, RUN, LEAF) == nginxconf.render(plan([A], ["h2"], ["1.3"], LEAF), RUN)


def test_rendering_is_deterministic():
    p = plan([A, B], ALL_MODES, ["1.2", "1.3"], LEAF)
    assert nginxconf.render(p, RUN) == nginxconf.render(plan([A, B], ALL_MODES, ["1.2", "1.3"], LEAF), RUN)
    assert nginxconf.render(p, RUN) == nginxconf.render(p, RUN)


# Encodings and versions ------------------------------------------------------------------------

V1_CSS, V1_PAGE = b"body { color: red }", b"<!doctype html><title>v1</title>"
DICTIONARIES = {"www.v.test/css/a.css": encodings.available_dictionary(V1_CSS),
                "www.v.test/index.html": encodings.available_dictionary(V1_PAGE),
                "img.v.test/x.js": encodings.available_dictionary(b"x")}
V = Site(SiteManifest(name="v", entry="https://www.v.test/", origins=("www.v.test", "img.v.test"), versions=2,
                      dictionaries=DICTIONARIES, changed={2: ["www.v.test/css/a.css"]}), Path("/data/sites/v"))


def test_one_ip_per_version_and_encoding_nested_inside_the_site_origins_innermost():
    p = plan([A, V], ["h2"], ["1.3"], LEAF, encodings=["gzip", "dcz"])
    cells = [(b.site, b.version, b.encoding, b.origin, b.index) for b in p.bindings]
    assert cells == [
        ("a", 1, "gzip", "www.a.test", 0), ("a", 1, "gzip", "img.a.test", 1),
        ("a", 1, "dcz", "www.a.test", 2), ("a", 1, "dcz", "img.a.test", 3),
        ("v", 1, "gzip", "www.v.test", 4), ("v", 1, "gzip", "img.v.test", 5),
        ("v", 1, "dcz", "www.v.test", 6), ("v", 1, "dcz", "img.v.test", 7),
        ("v", 2, "gzip", "www.v.test", 8), ("v", 2, "gzip", "img.v.test", 9),
        ("v", 2, "dcz", "www.v.test", 10), ("v", 2, "dcz", "img.v.test", 11),
    ]
    assert p.encodings == ("gzip", "dcz")
    assert p.host_resolver_rules("h2", "1.3", site="v", encoding="dcz", version=2, block_others=True) == \
        "MAP www.v.test 198.18.1.12, MAP img.v.test 198.18.1.13, MAP * ~NOTFOUND"
    assert p.addresses("h2", "1.3", "a", encoding="gzip") == {"www.a.test": "198.18.1.2", "img.a.test": "198.18.1.3"}
    assert p.address("h2", "1.3", "img.v.test", encoding="gzip", version=2).index == 9
    assert len(p.select("h2", "1.3", encoding="dcz", version=2)) == 2  # only v has a version 2
    assert serverplan.binding_rows(p)[10] == ["1.3", "h2", "v", "www.v.test", 10, "dcz", 2]
    h3 = plan([V], ["h3"], ["1.3"], LEAF, encodings=["br"])
    assert h3.force_quic_on("h3", "1.3", encoding="br", version=2) == "www.v.test:443,img.v.test:443"


def test_one_encoding_and_one_version_allocate_as_before():
    before = plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF)
    assert [(b.tls, b.mode, b.site, b.origin, b.index) for b in before.bindings] == \
        [(b.tls, b.mode, b.site, b.origin, b.index) for b in plan([A, B], ALL_MODES, ["1.3", "1.2"], LEAF,
                                                                  encodings=["identity"]).bindings]
    assert {(b.encoding, b.version) for b in before.bindings} == {("identity", 1)}
    assert serverplan.binding_rows(before)[0] == ["1.3", "http1.0", "a", "www.a.test", 0, "identity", 1]


@pytest.mark.parametrize("call,fragment", [
    (lambda p: p.select("h2", "1.3", "v", encoding="br"), "encoding 'br': not in this plan (has identity, dcz)"),
    (lambda p: p.host_resolver_rules("h2", "1.3", site="v", version=3), "version 3: not in this plan (site v has "
                                                                         "versions 1..2)"),
    (lambda p: p.addresses("h2", "1.3", "a", version=2), "version 2: not in this plan (site a has versions 1..1)"),
    (lambda p: p.address("h2", "1.3", "www.a.test", version=0), "version 0: not in this plan"),
])
def test_unserved_encodings_and_versions_are_one_line_errors(call, fragment):
    p = plan([A, V], ["h2"], ["1.3"], LEAF, encodings=["identity", "dcz"])
    with pytest.raises(PlanError) as error:
        call(p)
    assert fragment in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(PlanError, match=r"^encoding 'lzma': unknown; known are identity, gzip, br, zstd, dcz$"):
        plan([A], ["h2"], ["1.3"], LEAF, encodings=["lzma"])
    with pytest.raises(PlanError, match="one encoding"):
        plan([A], ["h2"], ["1.3"], LEAF, encodings=[])


@pytest.mark.parametrize("value,named", [
    ("gzip, deflate, br, zstd, dcb, dcz", True), ("dcz", True), ("DCZ;q=0.5", True), ("br, dcz ; q=1.0", True),
    ("dcz;q=0", False), ("dcz;q=0.000, zstd", False), ("dczx, xdcz", False), ("", False), ("gzip", False),
])
def test_accept_encoding_names_a_token_with_a_non_zero_q(value: str, named: bool):
    assert bool(re.search(serverplan.accepts_pattern("dcz"), value, re.IGNORECASE)) == named


def test_dictionaries_match_their_path_and_an_index_its_directory():
    assert serverplan.dictionary_paths(V, "www.v.test") == ["/css/a.css", "/index.html"]
    assert serverplan.use_as_dictionary("/css/a.css") == 'match="/css/a.css"'
    assert serverplan.use_as_dictionary("/index.html") == 'match="/{index.html}?"'  # the entry is loaded as /
    assert serverplan.entry_file(V) == ("www.v.test", "/index.html")
    assert serverplan.dictionary_links(V) == (
        "<https://www.v.test/css/a.css.pbdict>; rel=compression-dictionary, "
        "<https://www.v.test/index.html.pbdict>; rel=compression-dictionary, "
        "<https://img.v.test/x.js.pbdict>; rel=compression-dictionary")
    assert serverplan.dictionary_ids([V])[DICTIONARIES["www.v.test/css/a.css"]] == encodings.dictionary_id(V1_CSS)
    odd = Site(V.manifest.model_copy(update={"dictionaries": {"www.v.test/a*b.css": DICTIONARIES["img.v.test/x.js"]}}),
               V.root)
    with pytest.raises(PlanError, match=r"dictionary path '/a\*b.css' must be printable ASCII without"):
        serverplan.dictionary_paths(odd, "www.v.test")


def test_identity_bindings_of_one_version_render_as_before():
    conf = nginxconf.render(plan([A], ALL_MODES, ["1.3"], LEAF, encodings=["identity"]), RUN)
    assert "$pb_" not in conf and "try_files" not in conf and "default_type \"\"" not in conf
    assert conf == nginxconf.render(plan([A], ALL_MODES, ["1.3"], LEAF), RUN)


def test_negotiated_and_versioned_bindings_render_their_roots_files_and_headers():
    p = plan([V], ["h2"], ["1.3"], LEAF, encodings=["identity", "br", "dcz"])
    conf = nginxconf.render(p, RUN)
    blocks = servers(conf)
    binding = {(b.encoding, b.version, b.origin): b for b in p.bindings}
    identity2 = blocks[binding["identity", 2, "www.v.test"].ip]
    assert "root /data/sites/v/v2/www.v.test;" in identity2 and not any("try_files" in x for x in identity2)
    assert 'add_header Cache-Control "$pb_versioned_cache_control" always;' in identity2
    br = blocks[binding["br", 1, "www.v.test"].ip]
    assert "root /data/sites/v/www.v.test;" in br
    assert "try_files $uri$pb_accepts_br $uri $uri/ =404;" in br and 'default_type "";' in br
    assert 'add_header Content-Encoding "$pb_content_encoding";' in br  # not `always`: errors keep nginx's
    dcz1, dcz2 = blocks[binding["dcz", 1, "www.v.test"].ip], blocks[binding["dcz", 2, "www.v.test"].ip]
    assert "try_files $uri$pb_dcz_first $uri$pb_dcz_then $uri $uri/ =404;" in dcz2
    assert "location = /index.html {" in dcz1 and "location = /index.html {" not in dcz2  # Link on v1 only
    assert any(x.startswith("add_header Link \"<https://www.v.test/css/a.css.pbdict>;") for x in dcz1)
    for block in (dcz1, dcz2):  # version 1's bodies are the dictionaries
        start = block.index("location = /css/a.css.pbdict {")
        assert block[start + 1:start + 3] == ["root /data/sites/v/www.v.test;", "try_files /css/a.css =404;"]
        assert "add_header Use-As-Dictionary 'match=\"/css/a.css\"' always;" in block
    assert "location = /x.js.pbdict {" in blocks[binding["dcz", 2, "img.v.test"].ip]
    # the dictionary a header names: case-sensitive (sf-binary base64), only when dcz is accepted
    value = DICTIONARIES["www.v.test/css/a.css"]
    line = f'"~^1{re.escape(value)}$" ".{encodings.dictionary_id(V1_CSS)}.dcz";'
    assert line in top_lines(conf)


def test_sidecar_maps_name_the_original_type_and_the_coding():
    conf = nginxconf.render(plan([V], ["h2"], ["1.3"], LEAF, encodings=["gzip"]), RUN)

    def mapped(variable: str, uri: str) -> str | None:
        block = conf[conf.index(f"map $uri {variable} {{"):]
        block = block[:block.index("\n    }")]
        default = None
        for line in block.splitlines()[1:]:
            key, value = (x.strip('"') for x in re.fullmatch(r'("[^"]*"|\S+) ("[^"]*"|\S+);', line.strip()).groups())
            if key == "default":
                default = value
            elif re.search(key[2:], uri, re.IGNORECASE if key.startswith("~*") else 0):
                return value
        return default

    assert mapped("$pb_content_type", "/css/a.css.gz") == "text/css"
    assert mapped("$pb_content_type", "/index.html.1234567890abcdef.dcz") == "text/html"
    assert mapped("$pb_content_type", "/css/a.css") == ""  # types gives it
    assert mapped("$pb_content_type", "/a.bin") == "application/octet-stream"
    assert mapped("$pb_content_encoding", "/js/x.js.br") == "br"
    assert mapped("$pb_content_encoding", "/img/x.png") is None
    assert mapped("$pb_vary", "/js/x.js") == "Accept-Encoding" and mapped("$pb_vary", "/img/x.png") is None
    assert mapped("$pb_vary", "/js/x.js.0123456789abcdef.dcz") == "Accept-Encoding, Available-Dictionary"
    assert mapped("$pb_versioned_cache_control", "/js/x.js.zst") == "no-cache"
    assert mapped("$pb_versioned_cache_control", "/img/x.png") == "max-age=86400"
    assert mapped("$pb_encoded_cache_control", "/js/x.js.zst") == "max-age=86400"
    assert mapped("$pb_encoded_cache_control", "/index.html.gz") == "no-cache"
