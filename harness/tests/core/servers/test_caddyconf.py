"""Caddy configuration for the h3 bindings (pure): one server per binding on its own
addresses, nothing implicit, refusals one line, the same plan the same text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pagebench.core.modes import H2, H3
from pagebench.core.servers import caddyconf
from pagebench.core.servers.binding import PlanError
from pagebench.core.servers.plan import plan
from pagebench.core.sites.app import App
from pagebench.core.sites.model import Site
from tests.core.servers.samples import LEAF, A, B

RUN = Path("/run/pagebench/pbx/caddy")


def config(*modes: str) -> dict:
    return json.loads(caddyconf.render(plan([A, B], modes or (H2, H3), ["1.3", "1.2"], LEAF), RUN))


def test_one_server_per_h3_binding_on_its_own_addresses():
    servers = config()["apps"]["http"]["servers"]
    assert list(servers) == ["pb3", "pb4", "pb5"]  # the h3 cells of tls 1.3; h2 is nginx's, h3 has no tls 1.2
    www_a = servers["pb3"]
    assert www_a["listen"] == ["198.19.0.4:443", "[2001:2:0:100::4]:443"]
    assert www_a["protocols"] == ["h3"]
    assert www_a["automatic_https"] == {"disable": True}
    assert www_a["tls_connection_policies"] == [{"certificate_selection": {"any_tag": ["pagebench"]},
                                                 "protocol_min": "tls1.3", "protocol_max": "tls1.3"}]
    assert www_a["logs"] == {"default_logger_name": "pb3"}
    assert www_a["routes"][-1]["handle"] == [{"handler": "file_server", "root": "/data/sites/a/www.a.test",
                                              "index_names": ["index.html"]}]
    assert servers["pb4"]["routes"][-1]["handle"][0]["root"] == "/data/sites/a/img.a.test"
    assert servers["pb5"]["listen"][0] == "198.19.0.6:443"


def test_nothing_implicit_and_nothing_written_outside_the_run_directory():
    conf = config()
    assert conf["admin"] == {"disabled": True, "config": {"persist": False}}
    assert conf["storage"] == {"module": "file_system", "root": f"{RUN}/storage"}
    logs = conf["logging"]["logs"]
    assert logs["access"]["writer"] == {"output": "file", "filename": f"{RUN}/access.log", "roll": False}
    assert logs["access"]["encoder"] == {"format": "json"} and logs["access"]["include"] == ["http.log.access"]
    assert logs["default"]["exclude"] == ["http.log.access"] and logs["default"]["writer"] == {"output": "stderr"}
    tls = conf["apps"]["tls"]
    assert tls["certificates"] == {"load_files": [{"certificate": "/data/tls/leaf-1.pem", "key": "/data/tls/leaf.key",
                                                   "format": "pem", "tags": ["pagebench"]}]}
    assert tls["session_tickets"] == {"disabled": True}  # every connection a full handshake, as with nginx
    assert tls["disable_ocsp_stapling"] is True


def test_refusals_are_one_line():
    with pytest.raises(PlanError, match="no certificate"):
        caddyconf.render(plan([A], [H3], ["1.3"]), RUN)
    with pytest.raises(PlanError, match=r"caddy: the plan has no h3 bindings"):
        caddyconf.render(plan([A], [H2], ["1.3"], LEAF), RUN)
    with pytest.raises(PlanError, match=r"path '/run/\{x\}': must not contain braces"):
        caddyconf.render(plan([A], [H3], ["1.3"], LEAF), Path("/run/{x}"))
    evil = Site(A.manifest, Path("/data/{env.HOME}"))
    with pytest.raises(PlanError, match="must not contain braces"):
        caddyconf.render(plan([evil], [H3], ["1.3"], LEAF), RUN)


def test_rendering_is_deterministic_json():
    p = plan([A, B], [H3], ["1.3"], LEAF)
    text = caddyconf.render(p, RUN)
    assert text == caddyconf.render(plan([A, B], [H3], ["1.3"], LEAF), RUN)
    assert json.loads(text) == caddyconf.render_config(p, RUN) and text.endswith("}\n")
    assert caddyconf.render(plan([A, B], [H3], ["1.3"]), RUN, LEAF) == text


def test_an_app_sites_h3_servers_proxy_to_its_process():
    shop = Site(A.manifest.model_copy(update={"name": "shop"}), Path("/home/me/shop"), app=App(command="serve {port}"))
    conf = json.loads(caddyconf.render(plan([shop, B], [H3], ["1.3"], LEAF), RUN,
                                       upstreams={"shop": "127.0.0.1:40123"}))
    servers = conf["apps"]["http"]["servers"]
    assert list(servers) == ["pb0", "pb1", "pb2"]
    for name in ("pb0", "pb1"):  # www.a.test and img.a.test: the same app
        assert servers[name]["protocols"] == ["h3"]
        assert servers[name]["routes"] == [{"handle": [
            {"handler": "headers", "response": {"require": {"headers": {"Via": ["1.1 Caddy"]}}, "delete": ["Via"],
                                                "deferred": True}},
            {"handler": "reverse_proxy", "upstreams": [{"dial": "127.0.0.1:40123"}], "flush_interval": -1,
             "headers": {"request": {"delete": ["X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host",
                                                "Via"]}}},
        ]}]
    assert servers["pb2"]["routes"][-1]["handle"][0]["handler"] == "file_server"  # b is files
    with pytest.raises(PlanError, match="^render: app site shop has no address"):
        caddyconf.render(plan([shop], [H3], ["1.3"], LEAF), RUN)
