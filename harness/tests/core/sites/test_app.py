"""An app site's entry (pure): its command with the port filled in, its readiness path
and timeout, its origins (default `<name>.test`) and page; one-line errors naming the
field."""

from __future__ import annotations

import pytest

from pagebench.core.sites.app import App, parse_app
from pagebench.core.sites.model import SiteError

COMMAND = "gunicorn 'shop:create_app()' -b 127.0.0.1:{port} --workers 2"


def test_the_command_is_split_as_a_shell_would_and_gets_its_port():
    app = App(command=COMMAND)
    assert app.argv(8123) == ["gunicorn", "shop:create_app()", "-b", "127.0.0.1:8123", "--workers", "2"]
    assert (app.ready, app.ready_timeout_s) == ("/", 30.0)


def test_an_entry_is_a_site_of_its_origins_the_first_one_serving_the_page():
    entry = parse_app({"name": "shop", "app": {"command": COMMAND, "ready": "/health", "ready_timeout_s": 5}})
    manifest = entry.manifest()
    assert (manifest.name, manifest.origins, manifest.entry, manifest.versions) == (
        "shop", ("shop.test",), "https://shop.test/", 1)
    assert entry.app.ready == "/health" and entry.app.ready_timeout_s == 5
    several = parse_app({"name": "shop", "app": {"command": COMMAND}, "page": "/en/?x=1",
                         "origins": ["www.shop.test", "static.shop.test", "api.shop.test"]}).manifest()
    assert several.origins == ("www.shop.test", "static.shop.test", "api.shop.test")
    assert several.entry == "https://www.shop.test/en/?x=1"


@pytest.mark.parametrize(("entry", "message"), [
    ({"name": "shop", "app": {"command": ""}}, "app site shop: app.command: must name a program"),
    ({"name": "shop", "app": {"command": "serve '{port}"}},
     "app site shop: app.command: cannot split \"serve '{port}\" (No closing quotation)"),
    ({"name": "shop", "app": {"command": "serve {port}", "ready": "health"}},
     "app site shop: app.ready: must be a path starting with / (printable ASCII, no spaces)"),
    ({"name": "shop", "app": {"command": "serve {port}", "ready_timeout_s": 0}},
     "app site shop: app.ready_timeout_s: Input should be greater than 0"),
    ({"name": "shop", "app": {"command": "serve {port}", "cwd": "/srv"}}, "app site shop: app.cwd: unknown field"),
    ({"name": "Shop!", "app": {"command": "serve {port}"}}, "app site Shop!: name: must match "
                                                             "^[a-z0-9][a-z0-9._-]{0,79}$"),
    ({"name": "shop", "app": {"command": "serve {port}"}, "origins": ["shop.example.com"]},
     "app site shop: origins: host 'shop.example.com': must be a DNS name ending in .test (the local CA signs "
     "nothing else)"),
    ({"name": "shop", "app": {"command": "serve {port}"}, "origins": ["a.test", "a.test"]},
     "app site shop: origins: must not repeat a host"),
    ({"name": "shop", "app": {"command": "serve {port}"}, "origins": []},
     "app site shop: origins: Tuple should have at least 1 item after validation, not 0"),
    ({"name": "shop", "app": {"command": "serve {port}"}, "page": "index.html"},
     "app site shop: page: must be a path starting with / (printable ASCII, no spaces)"),
    ({"name": "shop", "app": {"command": "serve {port}", "url": "http://shop:8000"}},
     "app site shop: app: give exactly one of command (pagebench starts the app: the native lab) and url "
     "(the app runs as a service of its own: the compose lab)"),
    ({"name": "shop", "app": {"ready": "/health"}},
     "app site shop: app: give exactly one of command (pagebench starts the app: the native lab) and url "
     "(the app runs as a service of its own: the compose lab)"),
    *(({"name": "shop", "app": {"url": url}},
       f"app site shop: app.url: {url!r}: want http://HOST:PORT (e.g. http://shop:8000, the app's compose service "
       "and port; `ready` and `page` are paths on it)")
      for url in ("https://shop:8000", "http://shop", "http://shop:8000/api", "http://u@shop:8000", "shop:8000",
                  "http://shop:8000/?x=1")),
    ({"name": "shop", "app": {"url": "http://shop:99999"}},
     "app site shop: app.url: 'http://shop:99999': Port out of range 0-65535"),
])
def test_a_bad_entry_is_one_line_naming_the_field(entry, message):
    with pytest.raises(SiteError) as error:
        parse_app(entry)
    assert str(error.value) == message


def test_an_app_given_by_url_is_where_its_service_runs():
    entry = parse_app({"name": "shop", "app": {"url": "http://shop:8000/", "ready": "/health"}})
    assert entry.app.command is None and entry.app.host_port == ("shop", 8000)
    assert entry.manifest().entry == "https://shop.test/"
    assert parse_app({"name": "shop", "app": {"url": "http://[2001:2:0:1::fc]:80"}}).app.host_port == (
        "2001:2:0:1::fc", 80)
