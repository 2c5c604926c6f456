"""mitmdump's side of a recording (`mitmdump.Mitmdump` loads it through a generated `-s`
script): one class, configured through its constructor, running in mitmdump's process."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class RecordAddon:
    """mitmdump's side of a recording, loaded through a generated `-s` script.

    - Resolves the hostnames of `resolve` to their addresses in this process's resolver,
      so the name stays the connection's address: the SNI, what the certificate is checked
      against and what mitmproxy reuses connections by.
    - Appends every upstream failure to `events` (JSON lines), so that a page that did not
      answer can say why.
    - Writes the HAR to `har` when mitmdump stops: `savehar`'s entries, but every body
      base64 (exact bytes). savehar writes a body whose first 100 bytes look like text as
      text decoded with a guessed charset (Latin-1 when none is declared), which a reader
      cannot always undo: a JPEG with a text comment first came back corrupted.
    """

    def __init__(self, resolve: Mapping[str, str], events: str, har: str) -> None:
        self.resolve = dict(resolve)
        self.events = Path(events)
        self.har = Path(har)
        self.flows: list[Any] = []

    def load(self, _loader: Any) -> None:
        if not self.resolve:
            return
        original = socket.getaddrinfo

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else host
            address = self.resolve.get(str(name).lower().rstrip(".")) if name else None
            return original(address if address is not None else host, *args, **kwargs)

        # asyncio's open_connection looks names up through socket.getaddrinfo (mitmdump's own process only).
        socket.getaddrinfo = getaddrinfo

    def response(self, flow: Any) -> None:
        if flow.websocket is None:  # a WebSocket is kept at its end
            self.flows.append(flow)

    def error(self, flow: Any) -> None:
        self.response(flow)

    def websocket_end(self, flow: Any) -> None:
        self.flows.append(flow)

    def server_connect_error(self, data: Any) -> None:
        self._note(data.server.address, data.server.error)

    def tls_failed_server(self, data: Any) -> None:
        self._note(data.conn.address, data.conn.error)

    def _note(self, address: Any, error: Any) -> None:
        host, port = address if address else ("", 0)
        with open(self.events, "a") as handle:
            handle.write(json.dumps({"host": str(host), "port": port, "error": str(error or "failed")}) + "\n")

    def done(self) -> None:
        from mitmproxy.addons.savehar import SaveHar

        maker = SaveHar()
        har = maker.make_har([])
        seen: set[Any] = set()
        for flow in self.flows:
            entry = maker.flow_entry(flow, seen)
            if flow.response is not None:
                try:
                    body = flow.response.content  # Content-Encoding undone
                except ValueError:
                    body = flow.response.raw_content
                content = entry["response"]["content"]
                content.pop("text", None)
                content.pop("encoding", None)
                if body:
                    content.update(text=base64.b64encode(body).decode(), encoding="base64")
            har["log"]["entries"].append(entry)
        tmp = self.har.with_name(self.har.name + ".tmp")
        tmp.write_text(json.dumps(har))
        tmp.replace(self.har)
