"""The mitmproxy addon of the edge proxy (`serve.py` runs it): every browser request
is answered through `upstream`, the mode's strategy across the link, never by
mitmproxy's own upstream connection. A control socket (one JSON object per line)
configures it for each load and reports what crossed the link.

    {"cmd": "configure", "mode": "pipelining", "connections": 1, "depth": 4,
     "addresses": {"a.test": "198.18.1.2"}}     new pool (every connection closed first)
    {"cmd": "reset"}                            close every connection, clear the record
    {"cmd": "stats"}                            connections and exchanges since then
    {"cmd": "ping"}                             {"ok": true, "scheduling": "SCHED_FIFO 20"}
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from typing import Any

from mitmproxy import ctx, http

from pagebench.edge.upstream import HOP_BY_HOP, Request, Strategy, Upstream, UpstreamError

#: Response headers of one hop: mitmproxy frames the body for the browser itself.
RESPONSE_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "proxy-connection", "trailer",
                                 "upgrade"})
NO_BODY = (204, 304)


class EdgeAddon:
    """Answers every request through the current `Upstream`; the control socket swaps it."""

    def __init__(self, scheduling: str = "normal") -> None:
        self.scheduling = scheduling  # how the proxy process is scheduled (serve.realtime)
        self.upstream: Upstream | None = None
        self.server: asyncio.AbstractServer | None = None

    def load(self, loader: Any) -> None:
        loader.add_option("pagebench_control", str, "", "Unix socket of pagebench's control channel.")
        loader.add_option("pagebench_ca", str, "", "CA file the origins' certificates chain to.")
        loader.add_option("pagebench_base_port", int, 0, "Listening port of client 0 (client k: base + k).")

    async def running(self) -> None:
        self.server = await asyncio.start_unix_server(self._control, ctx.options.pagebench_control)

    async def done(self) -> None:
        if self.server is not None:
            self.server.close()
        if self.upstream is not None:
            await self.upstream.close()

    async def request(self, flow: http.HTTPFlow) -> None:
        if self.upstream is None:
            flow.response = http.Response.make(503, b"pagebench edge proxy: not configured for a load")
            return
        client = flow.client_conn.sockname[1] - ctx.options.pagebench_base_port if flow.client_conn.sockname else 0
        request = Request(
            method=flow.request.method, path=flow.request.path,
            headers=tuple((k, v) for k, v in flow.request.headers.items(multi=True) if k.lower() not in HOP_BY_HOP),
            body=flow.request.raw_content or b"", client=client,
        )
        started = time.time()
        try:
            response, _ = await self.upstream.fetch(flow.request.host, request,
                                                    received_at=flow.request.timestamp_start)
        except UpstreamError as error:
            flow.response = http.Response.make(502, f"pagebench edge proxy: {error}".encode())
            return
        headers = [(k, v) for k, v in response.headers if k.lower() not in RESPONSE_HOP_BY_HOP]
        if response.status not in NO_BODY and not any(k.lower() == "content-length" for k, _ in headers):
            headers.append(("content-length", str(len(response.body))))
        flow.response = http.Response(
            http_version=b"HTTP/1.1", status_code=response.status, reason=b"",
            headers=http.Headers([(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]),
            content=response.body, trailers=None, timestamp_start=started, timestamp_end=time.time(),
        )

    async def _control(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            try:
                reply = await self._command(json.loads(line))
            except Exception as error:  # noqa: BLE001 - every failure goes back to the caller
                reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            writer.write(json.dumps(reply).encode() + b"\n")
            await writer.drain()
        writer.close()

    async def _command(self, message: dict[str, Any]) -> dict[str, Any]:
        cmd = message.get("cmd")
        if cmd == "ping":
            return {"ok": True, "scheduling": self.scheduling}
        if cmd == "configure":
            strategy = Strategy(message["mode"], int(message["connections"]), int(message["depth"]))
            await self._close()
            self.upstream = Upstream(strategy, dict(message["addresses"]), ctx.options.pagebench_ca or None)
            gc.collect()  # between loads: serve.py keeps the collector out of them
            return {"ok": True}
        if cmd == "reset":
            if self.upstream is not None:
                old = self.upstream
                await old.close()
                self.upstream = Upstream(old.strategy, old.addresses, old.cafile)
            gc.collect()
            return {"ok": True}
        if cmd == "stats":
            return {"ok": True, **(self.upstream.stats() if self.upstream else {"connections": [], "exchanges": []})}
        return {"ok": False, "error": f"unknown command {cmd!r}; allowed: ping, configure, reset, stats"}

    async def _close(self) -> None:
        if self.upstream is not None:
            await self.upstream.close()
            self.upstream = None


