"""The mitmproxy addon of the edge proxy (`serve.py` runs it): every browser request
is answered through `upstream`, the mode's strategy across the link, never by
mitmproxy's own upstream connection. Configured through its constructor; the control
socket (`control.py`) swaps its strategy before each load (a cold pool or a warm one,
`pool.py`) and reads what crossed."""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Any

from mitmproxy import http

from pagebench.edge.messages import HOP_BY_HOP, Request, UpstreamError
from pagebench.edge.pool import Lease, Pools
from pagebench.edge.strategy import Strategy
from pagebench.edge.upstream import Upstream

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
        self.pools: Pools[Upstream] = Pools(lambda strategy, addresses: Upstream(strategy, addresses, cafile))
        self.lease: Lease | None = None  # the current load's record

    async def done(self) -> None:
        await self._close()

    async def request(self, flow: http.HTTPFlow) -> None:
        if self.upstream is None:
            flow.response = http.Response.make(503, b"pagebench edge proxy: not configured for a load")
            return
        if flow.request.host not in self.upstream.addresses:
            # A host the lab does not serve (a folder site's page naming the internet): no
            # response, as a direct load's browser gets none (its name does not resolve);
            # a 502 would be the lab failing a host that was never in it.
            flow.kill()
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

    async def use(self, strategy: Strategy, addresses: dict[str, str], pool: str = "cold", key: str = "") -> None:
        """The pool for the next load (`pool.py`): cold, a new one, every upstream
        connection from before closed; warm, the pool of this strategy, these origins and
        `key`, kept open since an earlier load if there was one."""
        self.upstream, to_close = self.pools.choose(pool, strategy, addresses, key)
        await asyncio.gather(*(old.close() for old in to_close))
        self.lease = Lease.begin(pool, self.upstream)
        gc.collect()  # between loads: serve.py keeps the collector out of them

    async def reset(self) -> None:
        """Close every upstream connection, warm pools too, and forget the record (a cold start)."""
        if self.upstream is not None:
            await self.use(self.upstream.strategy, self.upstream.addresses, "cold")
        gc.collect()

    def stats(self) -> dict[str, Any]:
        """Connections and exchanges since the last configure or reset (`pool.Lease.stats`)."""
        if self.lease is None:
            return {"pool": "cold", "pooled": 0, "connections": [], "reused": [], "exchanges": []}
        return self.lease.stats()

    async def _close(self) -> None:
        await asyncio.gather(*(pool.close() for pool in self.pools.forget()))
        self.upstream, self.lease = None, None
