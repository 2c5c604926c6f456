"""An app given by `url` (the compose lab's sites role), against a real HTTP server on
loopback: resolved once, waited for, its health asked after a load, each failure one
line naming the app; never started or stopped by pagebench."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pagebench.core.sites.app import App
from pagebench.core.sites.model import Site, SiteManifest
from pagebench.lab.servers.apps import AppAt, AppError, resolve


class Health(BaseHTTPRequestHandler):
    """/health: 503 for the first `server.warming` requests, then `server.status`."""

    server: ThreadingHTTPServer

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        server = self.server
        server.hosts.append(self.headers["Host"])  # type: ignore[attr-defined]
        if server.warming > 0:  # type: ignore[attr-defined]
            server.warming -= 1  # type: ignore[attr-defined]
            status = 503
        else:
            status = server.status  # type: ignore[attr-defined]
        self.send_response(status if self.path == "/health" else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


@pytest.fixture
def app_server() -> Iterator[ThreadingHTTPServer]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    httpd.warming, httpd.status, httpd.hosts = 0, 200, []  # type: ignore[attr-defined]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _app(url: str, timeout: float = 5.0, lab: tuple[str, ...] = ("198.19.0.1",)) -> AppAt:
    manifest = SiteManifest(name="shop", entry="https://shop.test/", origins=("shop.test",))
    return AppAt(Site(manifest, Path("/nonexistent"), app=App(url=url, ready="/health", ready_timeout_s=timeout)), lab)


def test_a_name_is_resolved_once_ipv4_first_and_start_waits_for_ready(app_server):
    port = app_server.server_address[1]
    assert resolve("localhost", port) == "127.0.0.1"
    app_server.warming = 3
    app = _app(f"http://localhost:{port}")
    app.start()
    assert app.address == f"127.0.0.1:{port}"
    assert app_server.hosts == ["shop.test"] * 4  # asked as the page's origin, until the 4th said 200
    app.check_health([200, 304])
    app.stop()  # not pagebench's: it still answers
    app.check_health()


def test_an_app_that_never_gets_ready_is_one_line_pointing_at_its_own_log(app_server):
    app_server.warming = 10**6
    port = app_server.server_address[1]
    with pytest.raises(AppError) as error:
        _app(f"http://localhost:{port}", timeout=0.5).start()
    assert str(error.value) == (f"app shop: http://localhost:{port}/health did not answer 2xx within 0.5 s "
                                f"(last: 503) (the app runs on its own: see its log, e.g. `docker compose logs "
                                f"localhost`)")


def test_a_name_that_does_not_resolve_or_is_one_of_the_labs_addresses_is_refused():
    with pytest.raises(AppError, match=r"^app shop: url http://nosuch\.invalid:8000: cannot resolve "
                                       r"nosuch\.invalid \(.+\): is its service up, on the lab's server-side "
                                       r"network\?$"):
        _app("http://nosuch.invalid:8000").start()
    with pytest.raises(AppError, match=r"^app shop: url http://127\.0\.0\.1:8000: 127\.0\.0\.1 is 127\.0\.0\.1, one "
                                       r"of the lab's own origin addresses: "):
        _app("http://127.0.0.1:8000", lab=("127.0.0.1",)).start()


def test_health_after_a_load_the_page_5xx_ready_failing_and_the_app_gone(app_server):
    port = app_server.server_address[1]
    app = _app(f"http://127.0.0.1:{port}")
    app.start()
    with pytest.raises(AppError) as error:
        app.check_health([200, 502, 500])
    assert str(error.value).startswith("app shop answered 500 for the page https://shop.test/ (the app runs on")
    app_server.status = 503
    with pytest.raises(AppError) as error:
        app.check_health([200])
    assert str(error.value).startswith(f"app shop stopped answering http://127.0.0.1:{port}/health with 2xx (503)")
    app_server.shutdown()
    app_server.server_close()
    with pytest.raises(AppError, match=r"^app shop stopped answering .+ with 2xx \(no answer \(.*refused"):
        app.check_health([200])
