"""The control channel between the harness and the lab's other roles (router, sites):
JSON over HTTP on the lab's own control network, stdlib only.

One request per connection and one at a time: the link changes in the order the
harness asks, and a role never does two things at once. A handler's failure comes back
as one line, raised on the harness side as `ControlError` naming the role and endpoint.
There is no authentication: the channel listens only on the address it is given, which
belongs on a network of the lab's own (docker-compose.yml's `control`).
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from pagebench.system.commands import LabError

Handler = Callable[[dict[str, Any]], dict[str, Any]]
#: "POST /link/apply" -> handler; GET handlers get the query string's values.
Routes = dict[str, Handler]
TIMEOUT_S = 120.0
#: The largest request body a role reads: a profile or a list of site references is a few
#: KB; anything near this is not the harness talking.
MAX_BODY = 1 << 20


class ControlError(LabError):
    """A control call failed (one line: which role, which endpoint, why)."""


def parse_listen(text: str, option: str = "--listen") -> tuple[str, int]:
    """'ADDR:PORT' or '[ADDR6]:PORT'."""
    host, sep, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{option}: want ADDR:PORT (e.g. 198.18.2.1:8700), got {text!r}")
    return host, int(port)


def one_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


class _Server(HTTPServer):
    routes: Routes


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = 30  # a peer that connects and says nothing must not hold the role forever

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _dispatch(self, method: str) -> None:
        url = urllib.parse.urlsplit(self.path)
        handler = self.server.routes.get(f"{method} {url.path}")
        if handler is None:
            known = ", ".join(sorted(self.server.routes))
            self._answer(404, {"error": f"no endpoint {method} {url.path}; endpoints: {known}"})
            return
        if method == "POST":
            text = self.headers.get("Content-Length") or "0"
            if not text.isdigit():
                self._answer(400, {"error": f"{url.path}: Content-Length {text!r} is not a byte count"})
                return
            if int(text) > MAX_BODY:
                self._answer(413, {"error": f"{url.path}: a body of {int(text)} bytes; at most {MAX_BODY}"})
                self.close_connection = True
                return
            try:
                args = json.loads(self.rfile.read(int(text)) or b"{}")
            except (ValueError, RecursionError):
                self._answer(400, {"error": f"{url.path}: the body is not JSON"})
                return
            if not isinstance(args, dict):
                self._answer(400, {"error": f"{url.path}: the body must be a JSON object"})
                return
        else:
            args = dict(urllib.parse.parse_qsl(url.query))
        try:
            result = handler(args)
        except Exception as error:  # noqa: BLE001 - every failure goes back to the caller, as one line
            self._answer(500, {"error": one_line(error)})
            return
        self._answer(200, result)

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # one line per call would drown the role's own messages


def server(listen: str, routes: Routes) -> HTTPServer:
    """A bound server for `routes`; `serve_forever()` it (KeyboardInterrupt or the
    caller's signal exception ends it)."""
    host, port = parse_listen(listen)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    cls = type("ControlServer", (_Server,), {"address_family": family, "allow_reuse_address": True})
    httpd = cls((host, port), _Handler)
    httpd.routes = routes
    return httpd


class Client:
    """Calls one role's endpoints: `get("/link/counters")`, `post("/link/apply", {...})`."""

    def __init__(self, url: str, role: str, timeout: float = TIMEOUT_S) -> None:
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme != "http" or not parsed.hostname or parsed.port is None:
            raise ControlError(f"{role} URL: want http://ADDR:PORT, got {url!r}")
        self.url, self.role, self.timeout = url.rstrip("/"), role, timeout
        # Never through an HTTP proxy from the environment: the lab's addresses are its own.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def get(self, path: str, **query: object) -> dict[str, Any]:
        suffix = "?" + urllib.parse.urlencode(query) if query else ""
        return self._call(urllib.request.Request(self.url + path + suffix, method="GET"), path)

    def post(self, path: str, body: dict[str, Any] | None = None, timeout: float | None = None) -> dict[str, Any]:
        """`timeout`: for a call that may take longer than most (waiting for an app)."""
        request = urllib.request.Request(self.url + path, data=json.dumps(body or {}).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        return self._call(request, path, timeout)

    def _call(self, request: urllib.request.Request, path: str, timeout: float | None = None) -> dict[str, Any]:
        try:
            with self._opener.open(request, timeout=timeout or self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as error:
            try:
                why = json.loads(error.read())["error"]
            except (ValueError, KeyError, TypeError):
                why = f"HTTP {error.code}"
            raise ControlError(f"{self.role} {self.url}: {path}: {why}") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            raise ControlError(f"{self.role} {self.url}: {path}: cannot reach it ({reason})") from None


def serve_until_stopped(listen: str, routes: Routes, ready: Callable[[str], None]) -> None:
    """Serve `routes` on `listen` until a signal's exception (or Ctrl-C) ends it."""
    httpd = server(listen, routes)
    ready(f"listening on http://{listen}")
    try:
        httpd.serve_forever()
    finally:
        httpd.server_close()
