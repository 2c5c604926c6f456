"""nginx configuration rendering (pure): global settings, the log format, and one exact
server block per binding (TLS or cleartext), with the site's header rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from pagebench.core.modes import H2, H3, HTTP10, KEEPALIVE
from pagebench.core.servers import nginxconf
from pagebench.core.servers.binding import PlanError
from pagebench.core.servers.plan import plan
from pagebench.core.sites.app import App
from pagebench.core.sites.model import Site
from tests.core.servers.samples import ALL_MODES, LEAF, A, B, servers, site, top_lines

RUN = Path("/run/pagebench/pbx/nginx")


def test_nginx_renders_no_h3_binding():
    p = plan([A], [H2, H3], ["1.3"], LEAF)
    blocks = servers(nginxconf.render(p, RUN))
    assert sorted(blocks) == ["198.19.0.1", "198.19.0.2"]  # h2 only; h3 (.3, .4) is Caddy's
    assert "198.19.0.3" not in nginxconf.render(p, RUN) and "quic" not in nginxconf.render(p, RUN)
    only_h3 = nginxconf.render(plan([A], [H3], ["1.3"], LEAF), RUN)
    assert servers(only_h3) == {} and only_h3.count("{") == only_h3.count("}")


def test_connection_slots_and_open_files_grow_with_the_listening_sockets():
    """Each listening socket (IPv4 and IPv6 per binding) holds one of the worker's
    connection slots and a file: 100 origins in three nginx modes are 600 sockets."""
    page = site("news", [f"o{i}.news.test" for i in range(100)])
    news = plan([page], [*ALL_MODES, H3], ["1.3"], LEAF)
    assert "worker_connections 4696;" in top_lines(nginxconf.render(news, RUN))
    assert nginxconf.open_files(news) == (600 + 8192 + 64, 600 + 1024)
    small = plan([A], [H2], ["1.3"], LEAF)
    assert "worker_connections 4100;" in top_lines(nginxconf.render(small, RUN))
    assert "worker_rlimit_nofile" not in nginxconf.render(small, RUN)  # inherited (`ensure_open_files`)


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
    conf = nginxconf.render(plan([A], [H2], ["1.3"], LEAF), RUN)
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
        assert block[0] == f"listen {binding.ip}:443 {expected_listen[binding.mode.name]}"
        assert block[1] == f"listen [{binding.ip6}]:443 {expected_listen[binding.mode.name]}"
        assert f"server_name {binding.origin};" in block
        assert protocols in block
        assert f"root /data/sites/a/{binding.origin};" in block
        assert ("keepalive_timeout 0;" in block) == (binding.mode.name == "http1.0")
        assert 'add_header Cache-Control "$pagebench_cache_control" always;' in block
        assert 'add_header Timing-Allow-Origin "*" always;' in block
        assert 'add_header Access-Control-Allow-Origin "*" always;' in block
        assert not any("http2" in line for line in block if binding.mode.name != "h2")


def test_cleartext_bindings_listen_on_port_80_without_ssl_and_h2_with_prior_knowledge():
    p = plan([A], ALL_MODES + [H3], ["none", "1.3"], LEAF)
    assert {(b.tls, b.mode) for b in p.bindings if b.tls == "none"} == {("none", m) for m in ALL_MODES}  # no QUIC
    blocks = servers(nginxconf.render(p, RUN))
    expected_listen = {"http1.0": ";", "keepalive": ";", "h2": " http2;"}
    for binding in (b for b in p.bindings if b.tls == "none"):
        block = blocks[binding.ip]
        assert binding.port == 80
        assert block[0] == f"listen {binding.ip}:80{expected_listen[binding.mode.name]}"
        assert block[1] == f"listen [{binding.ip6}]:80{expected_listen[binding.mode.name]}"
        assert not any(line.startswith("ssl_") for line in block)
        assert "sendfile off;" in block  # nginx's h2 sendfile path corks: a round trip lost (nginxconf)
        assert ("keepalive_timeout 0;" in block) == (binding.mode.name == "http1.0")
    assert all(b.port == 443 for b in p.bindings if b.tls != "none")


def test_site_header_rules_become_locations_with_all_headers():
    custom = site("c", ["www.c.test"], {"/fonts/*.woff": {"Cache-Control": "max-age=31536000, immutable",
                                                          "X-Extra": "1"}})
    block = servers(nginxconf.render(plan([custom], [H2], ["1.3"], LEAF), RUN))["198.19.0.1"]
    start = block.index('location ~ "^/fonts/[^/]*\\.woff$" {')
    location = block[start + 1:start + 5]
    assert location == [
        'add_header Timing-Allow-Origin "*" always;',
        'add_header Access-Control-Allow-Origin "*" always;',
        'add_header Cache-Control "max-age=31536000, immutable" always;',
        'add_header X-Extra "1" always;',
    ]


def test_unsafe_paths_are_refused():
    with pytest.raises(PlanError, match=r"path '/run/a b': must not contain"):
        nginxconf.render(plan([A], [H2], ["1.3"], LEAF), Path("/run/a b"))
    evil = Site(A.manifest, Path("/data/$host"))
    with pytest.raises(PlanError, match="must not contain"):
        nginxconf.render(plan([evil], [H2], ["1.3"], LEAF), RUN)


def test_the_certificate_is_needed_only_to_render():
    p = plan([A], [H2], ["1.3"])
    assert p.leaf is None and p.ip_count == 2
    with pytest.raises(PlanError, match="no certificate"):
        nginxconf.render(p, RUN)
    assert nginxconf.render(p, RUN, LEAF) == nginxconf.render(plan([A], [H2], ["1.3"], LEAF), RUN)


def test_rendering_is_deterministic():
    p = plan([A, B], ALL_MODES, ["1.2", "1.3"], LEAF)
    assert nginxconf.render(p, RUN) == nginxconf.render(plan([A, B], ALL_MODES, ["1.2", "1.3"], LEAF), RUN)
    assert nginxconf.render(p, RUN) == nginxconf.render(p, RUN)


# App sites: every request to the user's own process, its response passed through -------------

SHOP = Site(A.manifest.model_copy(update={"name": "shop"}), Path("/home/me/shop"), app=App(command="serve {port}"))


def test_an_app_sites_server_blocks_pass_every_request_to_its_process():
    p = plan([SHOP, B], [HTTP10, KEEPALIVE, H2], ["1.3"], LEAF)
    conf = nginxconf.render(p, RUN, upstreams={"shop": "127.0.0.1:40123"})
    lines = top_lines(conf)
    assert "upstream pagebench_app_shop {" in lines and "server 127.0.0.1:40123;" in lines
    assert "keepalive 16;" not in lines and conf.count("upstream ") == 1  # a connection per request; b is files
    blocks = servers(conf)
    shop = [b for b in blocks.values() if "server_name www.a.test;" in b or "server_name img.a.test;" in b]
    assert len(shop) == 6  # 3 modes x 2 origins
    for block in shop:
        assert block[block.index("location / {"):] == [
            "location / {", "proxy_pass http://pagebench_app_shop;", "proxy_http_version 1.1;",
            "proxy_set_header Host $host;", "proxy_buffering off;",
            "proxy_request_buffering off;", "proxy_pass_header Server;", "proxy_pass_header Date;",
            "proxy_redirect off;", "}"]
        assert not [line for line in block if line.startswith(("root ", "add_header", "location ~"))]
    per_request = [b for b in shop if "keepalive_timeout 0;" in b]
    assert len(per_request) == 2  # http1.0: a connection per request, in front of the app too
    b_blocks = [b for b in blocks.values() if "server_name www.b.test;" in b]
    assert all(any(line.startswith("root /data/sites/b/") for line in block) for block in b_blocks)
    assert conf.count("{") == conf.count("}")


def test_an_app_site_without_its_processes_address_is_refused():
    with pytest.raises(PlanError, match="^render: app site shop has no address"):
        nginxconf.render(plan([SHOP], [H2], ["1.3"], LEAF), RUN)
