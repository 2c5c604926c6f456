"""The browser tests' little origins answer through one quiet handler: a whole response
in one call, and no line per request drowning the test's output."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


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
        pass
