"""The browser tests' little origins (no lab: Chromium reaches them through a host MAP to
127.0.0.1) answer through one quiet handler, a whole response in one call and no line
per request drowning the test's output; `serving` runs one in a thread of the test."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
        """`status` with `headers`, a Content-Length and `body`."""
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        """No access log on the test's stderr: the tests read what they need from their server."""


@contextmanager
def serving(server: ThreadingHTTPServer) -> Iterator[int]:
    """`server` answering in a thread: its port; shut down and closed afterwards."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
