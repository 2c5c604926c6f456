"""The shop: pagebench's example app. A Flask app that serves its front-end build
(static-build/, made by build.py) and the product API its page waits for.

    gunicorn app:app -b 127.0.0.1:8000 --workers 2

What a team's server does, so the gate sees it: text is gzip-compressed when the browser
accepts it (Vary: Accept-Encoding), content-hashed assets are cached for a year, the
HTML and the API are revalidated (ETag), and the API costs a database query.
regressions.yaml lists the one-line edits of this file that the tests ship as regressions."""

from __future__ import annotations

import functools
import gzip
import json
import time
from pathlib import Path

from flask import Flask, Response, abort, request

HERE = Path(__file__).resolve().parent
BUILD = HERE / "static-build"
TYPES = {".html": "text/html; charset=utf-8", ".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".png": "image/png"}
#: Compressed on the way out (gzip, level 6) when the request accepts gzip.
COMPRESSED = {"text/html", "text/css", "text/javascript", "application/json"}
#: What the catalogue query costs (a stand-in for the database round trip and the query).
QUERY_S = 0.02
#: Assets have content-hashed names: a new build is a new URL, so they never change.
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"

app = Flask(__name__, static_folder=None)
CATALOGUE = json.loads((HERE / "catalogue.json").read_text())


@functools.lru_cache(maxsize=64)
def gzipped(data: bytes) -> bytes:
    """One compression per distinct body (mtime 0: the same bytes, so the same ETag, every time)."""
    return gzip.compress(data, compresslevel=6, mtime=0)


def build_file(relative: str, cache_control: str) -> Response:
    path = (BUILD / relative).resolve()
    if not path.is_relative_to(BUILD) or not path.is_file() or path.suffix not in TYPES:
        abort(404)
    response = Response(path.read_bytes(), content_type=TYPES[path.suffix])
    response.headers["Cache-Control"] = cache_control
    return response


@app.get("/")
def index() -> Response:
    return build_file("index.html", REVALIDATE)


@app.get("/assets/<path:relative>")
def asset(relative: str) -> Response:
    return build_file(f"assets/{relative}", IMMUTABLE)


@app.get("/api/products")
def products() -> Response:
    time.sleep(QUERY_S)
    response = Response(json.dumps(CATALOGUE), content_type="application/json")
    response.headers["Cache-Control"] = REVALIDATE
    return response


@app.get("/health")
def health() -> Response:
    return Response("ok\n", content_type="text/plain", headers={"Cache-Control": "no-store"})


@app.after_request
def compress(response: Response) -> Response:
    """gzip what COMPRESSED names, then ETag and answer a revalidation with 304."""
    if request.method not in ("GET", "HEAD") or response.status_code != 200 or response.direct_passthrough:
        return response
    if response.mimetype in COMPRESSED:
        response.vary.add("Accept-Encoding")
        if request.accept_encodings["gzip"] > 0:
            response.set_data(gzipped(response.get_data()))
            response.headers["Content-Encoding"] = "gzip"
    response.add_etag()
    return response.make_conditional(request)
