"""A small web app of a user's own, for the app-site tests: standard library only, so
that it runs wherever the tests do. `python shopapp.py PORT [--crash-after N]
[--never-ready] [--fail-page] [--worker]`.

    /          the page: its script, an image from static.shop.test, headers of its own
    /app.js    gzip-compressed by the app when the request accepts gzip
    /logo.svg  an image (served for any Host: static.shop.test too)
    /echo      the request's method, path and headers as JSON (what the app saw)
    /slow      a first chunk, 300 ms, then the rest (chunked): does the app's timing pass?
    /health    200 once ready

--crash-after N: the process dies (no answer) at the page request after the Nth.
--never-ready: /health answers 503.  --fail-page: the page answers 500, /health 200.
--worker: fork a child that idles, as gunicorn's workers do (it must not outlive the app).
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ARGS = sys.argv[2:]
CRASH_AFTER = int(ARGS[ARGS.index("--crash-after") + 1]) if "--crash-after" in ARGS else None
SCRIPT = b"document.title = 'shop ' + " + b"'x'.repeat(40) + " * 200 + b"'';\n"
PAGE = (b"<!doctype html><html><head><link rel=\"icon\" href=\"data:,\"><script src=\"/app.js\"></script>"
        b"</head><body><h1>shop</h1><img src=\"https://static.shop.test/logo.svg\"></body></html>")
LOGO = (b"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\">"
        b"<rect width=\"10\" height=\"10\"/></svg>")
pages = 0


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "shop-app/1"

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"shop: {self.headers.get('Host')} {format % args}\n")
        sys.stderr.flush()

    def send(self, status: int, body: bytes, kind: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Shop", "own-header")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        global pages
        path = self.path.split("?", 1)[0]
        if path == "/health":
            ready = "--never-ready" not in ARGS
            self.send(200 if ready else 503, b"ok\n" if ready else b"starting\n", "text/plain")
        elif path == "/":
            pages += 1
            if CRASH_AFTER is not None and pages > CRASH_AFTER:
                sys.stderr.write(f"shop: crashing at page request {pages}\n")
                sys.stderr.flush()
                os._exit(3)
            status = 500 if "--fail-page" in ARGS else 200
            self.send(status, PAGE, "text/html", Cache_Control="no-store", Set_Cookie="cart=1; Path=/")
        elif path == "/app.js":
            gzipped = "gzip" in self.headers.get("Accept-Encoding", "")
            body = gzip.compress(SCRIPT, mtime=0) if gzipped else SCRIPT
            extra = {"Content-Encoding": "gzip"} if gzipped else {}
            self.send(200, body, "text/javascript", Vary="Accept-Encoding", Cache_Control="max-age=60", **extra)
        elif path == "/logo.svg":
            self.send(200, LOGO, "image/svg+xml", Cache_Control="max-age=60")
        elif path == "/echo":
            seen = {"method": self.command, "path": self.path, "headers": dict(self.headers.items())}
            self.send(200, json.dumps(seen).encode(), "application/json")
        elif path == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in (b"first\n", b"second\n"):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
                time.sleep(0.3)
            self.wfile.write(b"0\r\n\r\n")
        else:
            self.send(404, b"not here\n", "text/plain")


def main() -> None:
    port = int(sys.argv[1])
    if "--worker" in ARGS and os.fork() == 0:
        while True:  # an idle worker, as a pre-forking server has
            time.sleep(1)
    sys.stderr.write(f"shop: listening on 127.0.0.1:{port} as uid {os.getuid()} in {os.getcwd()}\n")
    sys.stderr.flush()
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
