"""The mitmproxy addon of the edge proxy (`serve.py` runs it): every browser request
is answered through `upstream`, the mode's strategy across the link, never by
mitmproxy's own upstream connection. Configured through its constructor; the control
socket (`control.py`) swaps its strategy before each load and reads what crossed."""

from __future__ import annotations

import gc
import time
from typing import Any

from mitmproxy import http

from pagebench.edge.upstream import HOP_BY_HOP, Request, Strategy, Upstream, UpstreamError

#: Response headers of one hop: mitmproxy frames the body for the browser itself.
RESPONSE_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "proxy-connection", "trailer",
                                 "upgrade"})
NO_BODY = (204, 304)


class EdgeAddon:
    """Answers every request through the current `Upstream`.

    `cafile`: the CA the origins' certificates chain to; `base_port`: client 0's listening
    port (client k listens on base_port + k); `scheduling`: how the proxy process runs
    (`serve.realtime`), reported on ping."""

    def __init__(self, cafile: str | None, base_port: int, scheduling: str = "normal") -> None:
        self.cafile = cafile
        self.base_port = base_port
        self.scheduling = scheduling
        self.upstream: Upstream | None = None

    async def done(self) -> None:
        await self._close()

    async def request(self, flow: http.HTTPFlow) -> None:
        if self.upstream is None:
            flow.response = http.Response.make(503, b"pagebench edge proxy: not configured for a load")
            return
        client = flow.client_conn.sockname[1] - self.base_port if flow.client_conn.sockname else 0
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

    async def use(self, strategy: Strategy, addresses: dict[str, str]) -> None:
        """A new pool for the next load: every upstream connection from before is closed."""
        await self._close()
        self.upstream = Upstream(strategy, addresses, self.cafile)
        gc.collect()  # between loads: serve.py keeps the collector out of them

    async def reset(self) -> None:
        """Close every upstream connection and forget the record (a cold start)."""
        if self.upstream is not None:
            old = self.upstream
            await old.close()
            self.upstream = Upstream(old.strategy, old.addresses, old.cafile)
        gc.collect()

    def stats(self) -> dict[str, Any]:
        """Connections and exchanges since the last configure or reset."""
        return self.upstream.stats() if self.upstream else {"connections": [], "exchanges": []}

    async def _close(self) -> None:
        if self.upstream is not None:
            await self.upstream.close()
            self.upstream = None
