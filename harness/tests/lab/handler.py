"""The browser tests' little origins (no lab: Chromium reaches them through a host MAP to
127.0.0.1) answer through one quiet handler, a whole response in one call and no line
per request drowning the test's output; `serving` runs one in a thread of the test,
`https_origin` over TLS with a fresh lab authority, Chromium trusting its leaf."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pagebench.lab.browser import Setup
from pagebench.lab.tls import Authority


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


@contextmanager
def https_origin(server: ThreadingHTTPServer, host: str, work: Path) -> Iterator[Setup]:
    """`server` answering HTTPS for `host` with a leaf of a fresh lab authority under
    `work`, in a thread; the Setup that maps `host` to it and trusts that leaf."""
    authority = Authority(work / "tls")
    leaf = authority.leaf([host])
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(leaf.chain_path, leaf.key_path)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    with serving(server) as port:
        yield Setup(f"MAP {host}:443 127.0.0.1:{port}, MAP * ~NOTFOUND", authority.spki_list())
