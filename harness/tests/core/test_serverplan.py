"""nginx configuration rendering and address allocation (pure)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pagebench.core import nginxconf
from pagebench.core.certs import Leaf
from pagebench.core.serverplan import PlanError, browser_url, glob_regex, plan
from pagebench.core.sites import Site, SiteManifest

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
