"""The example app (examples/shop) as its spec starts it: gunicorn with the spec's
command, as the unprivileged user the lab runs apps as (when the tests run as root),
from a copy of the directory. It serves the page, the bundle gzip-compressed and cached
for a year, the API and the images; and each of regressions.yaml's edits changes what
it says it does, and nothing else."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import statistics
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from pagebench.system.process import ManagedProcess
from tests.helpers import SHOP, readable_dir, shop_copy, with_venv_path

NOBODY = 65534
SPEC = yaml.safe_load((SHOP / "pagebench.yaml").read_text())
APP = SPEC["sites"][0]["app"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Shop:
    """The app of one copy, answering on 127.0.0.1:port."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"

    def get(self, path: str, gzip_ok: bool = True) -> tuple[int, dict[str, str], bytes, float]:
        """Status, headers, body as sent (not decoded) and seconds to the last byte."""
        request = urllib.request.Request(self.base + path, headers={"Accept-Encoding": "gzip"} if gzip_ok else {})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                body = response.read()
                return response.status, dict(response.headers), body, time.monotonic() - started
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read(), time.monotonic() - started

    def text(self, path: str) -> str:
        status, headers, body, _ = self.get(path)
        assert status == 200, (path, status)
        return (gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body).decode()

    def bundle(self) -> str:
        found = re.search(r'src="(/assets/app\.[0-9a-f]{10}\.js)"', self.text("/"))
        assert found, "index.html names no hashed bundle"
        return found.group(1)


def started(copy: Path, log: Path) -> ManagedProcess:
    """The spec's command, run in the copy as the lab runs an app; ready when `ready` says 200."""
    port = free_port()
    argv = ["sh", "-c", "exec " + APP["command"].replace("{port}", str(port))]
    if os.geteuid() == 0:
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", *argv]
    shop = ManagedProcess("shop", argv, log, cwd=copy, env=with_venv_path({"HOME": "/nonexistent"}))

    def ready() -> bool:
        shop.check_alive("the shop did not start")
        try:
            return Shop(port).get(APP["ready"])[0] == 200
        except OSError:
            return False

    shop.start(ready=ready, timeout=APP["ready_timeout_s"])
    shop.port = port  # type: ignore[attr-defined]
    return shop


@pytest.fixture
def shop_dir() -> Iterator[Path]:
    with readable_dir() as scratch:
        yield scratch / "shop"


@contextmanager
def serving(copy: Path) -> Iterator[Shop]:
    app = started(copy, copy.parent / "gunicorn.log")
    try:
        yield Shop(app.port)  # type: ignore[attr-defined]
    finally:
        session = app.pid
        app.stop()
        # gunicorn's workers went with it: nothing is left in the app's session
        assert subprocess.run(["pgrep", "-s", str(session)], capture_output=True).returncode == 1


def test_the_app_serves_page_bundle_api_and_images(shop_dir):
    shop_copy(shop_dir)
    with serving(shop_dir) as shop:
        status, headers, body, _ = shop.get("/")
        assert status == 200 and headers["Content-Type"].startswith("text/html")
        assert headers["Cache-Control"] == "no-cache" and headers["ETag"]
        assert shop.get("/", gzip_ok=False)[2] == (shop_dir / "static-build" / "index.html").read_bytes()
        # revalidation: the ETag answers 304
        request = urllib.request.Request(shop.base + "/", headers={"If-None-Match": headers["ETag"],
                                                                   "Accept-Encoding": "gzip"})
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(request, timeout=10)
        assert answer.value.code == 304

        bundle = shop.bundle()
        raw = (shop_dir / "static-build" / bundle.lstrip("/")).read_bytes()
        assert 100_000 <= len(raw) <= 300_000
        status, headers, body, _ = shop.get(bundle)
        assert status == 200 and headers["Content-Type"].startswith("text/javascript")
        assert headers["Content-Encoding"] == "gzip" and "Accept-Encoding" in headers["Vary"]
        assert gzip.decompress(body) == raw and len(body) < len(raw) / 3
        assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
        status, headers, body, _ = shop.get(bundle, gzip_ok=False)
        assert "Content-Encoding" not in headers and body == raw  # a client without gzip gets it plain

        catalogue = json.loads(shop.text("/api/products"))
        assert len(catalogue["products"]) == 12
        for product in catalogue["products"]:
            status, headers, body, _ = shop.get(product["image"])
            assert status == 200 and headers["Content-Type"] == "image/png" and body.startswith(b"\x89PNG")
            assert "Content-Encoding" not in headers  # PNG is compressed already
        assert shop.get("/assets/../app.py")[0] == 404 and shop.get("/assets/app.nothing.js")[0] == 404


def test_compression_off_sends_the_bundle_plain_and_nothing_else_changes(shop_dir):
    encodings = {}
    for regression in (None, "compression-off"):
        shop_copy(shop_dir, regression)
        with serving(shop_dir) as shop:
            bundle = shop.bundle()
            css = re.search(r'href="(/assets/app\.[0-9a-f]{10}\.css)"', shop.text("/")).group(1)
            encodings[regression] = {path: (shop.get(path)[1].get("Content-Encoding"), len(shop.get(path)[2]))
                                     for path in ("/", bundle, css, "/api/products")}
    before, after = encodings[None], encodings["compression-off"]
    bundle = next(path for path in before if path.endswith(".js"))
    assert before[bundle][0] == "gzip" and after[bundle][0] is None
    assert after[bundle][1] > 3 * before[bundle][1]  # what crosses the link: 3x the bytes
    assert {p: e for p, e in after.items() if p != bundle} == {p: e for p, e in before.items() if p != bundle}


def test_slow_api_answers_300_ms_later(shop_dir):
    """The minimum of a few requests each: a stalled request can only make a side slower,
    and the slow side's sleep is a floor no scheduling can lower."""
    times = {}
    for regression in (None, "slow-api"):
        shop_copy(shop_dir, regression)
        with serving(shop_dir) as shop:
            times[regression] = [shop.get("/api/products")[3] for _ in range(5)]
    assert min(times["slow-api"]) >= 0.32
    assert min(times["slow-api"]) - min(times[None]) >= 0.3 - 0.02, times
    assert statistics.median(times["slow-api"]) - statistics.median(times[None]) >= 0.25, times
