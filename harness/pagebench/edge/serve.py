"""The edge proxy's process: mitmproxy's proxy core with only the addons it needs (TLS,
layer detection, the listeners) and `addon.EdgeAddon`. mitmdump would add some thirty
others (replay, rewriting, saving, printing) that run on every request: on a 2-core
machine they cost a millisecond of CPU per request that the measurement would carry.
Everything else here is there for the same reason: the proxy's cost is part of every
proxied load (docs/benchmarks.md, "Edge-proxy overhead").

    python -O -m pagebench.edge.serve --port 18080 --clients 2 --certs cert.pem \\
        --control control.sock --ca ca.pem --confdir conf --rt-priority 20
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
from typing import Any

from mitmproxy import master, options
from mitmproxy.addons import core, errorcheck, next_layer, proxyserver, tlsconfig
from mitmproxy.proxy import mode_servers

from pagebench.edge.addon import EdgeAddon
from pagebench.edge.control import ControlSocket


class BatchedWriter:
    """The browser's side of a connection, written once per event-loop turn. mitmproxy
    writes every TLS record of an HTTP/2 response (HEADERS, DATA) with its own send(),
    and on loopback each send() delivers to Chromium at once and wakes it: on 2 cores
    that was an eighth of the proxy's time, and as many wake-ups of the browser."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending.append(data)

    def _flush(self) -> None:
        if self._pending and not self._writer.is_closing():
            self._writer.write(b"".join(self._pending))
        self._pending.clear()

    def write_eof(self) -> None:
        self._flush()
        self._writer.write_eof()

    def close(self) -> None:
        self._flush()
        self._writer.close()

    async def drain(self) -> None:
        self._flush()
        await self._writer.drain()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._writer, name)


class EdgeConnectionHandler(mode_servers.ProxyConnectionHandler):
    """mitmproxy's handler of a browser connection, with the browser's side batched."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        io = self.transports[self.client]
        assert isinstance(io.writer, asyncio.StreamWriter)
        io.writer = BatchedWriter(io.writer)  # type: ignore[assignment]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pagebench.edge.serve")
    parser.add_argument("--port", type=int, required=True, help="client 0's port; client k listens on port + k")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--certs", required=True, help="PEM: the leaf's key, then its chain")
    parser.add_argument("--control", required=True, help="Unix socket for the control channel")
    parser.add_argument("--ca", required=True, help="CA file the origins' certificates chain to")
    parser.add_argument("--confdir", required=True)
    parser.add_argument("--rt-priority", type=int, default=0,
                        help="SCHED_FIFO priority 1..99; 0 = leave scheduling alone")
    return parser.parse_args(argv)


def realtime(priority: int) -> str:
    """SCHED_FIFO below the delay program's priority, which must still preempt it. On 2
    cores each send() to the browser over loopback wakes Chromium on the proxy's own CPU,
    and the woken thread preempted the proxy in mid-request: about 1 ms of every request
    spent waiting for the CPU back (half the overhead, docs/benchmarks.md). Returns how
    the proxy is scheduled, for the run's record."""
    if priority == 0:
        return "normal"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(priority))
    except OSError as error:
        return f"normal (SCHED_FIFO {priority} refused: {error.strerror})"
    return f"SCHED_FIFO {priority}"


async def main(args: argparse.Namespace) -> None:
    scheduling = realtime(args.rt_priority)  # first: threads started later inherit it
    # the one seam into mitmproxy: the class its listeners instantiate per browser connection
    mode_servers.ProxyConnectionHandler = EdgeConnectionHandler  # type: ignore[misc]
    logging.getLogger().setLevel(logging.WARNING)
    opts = options.Options()
    proxy = master.Master(opts, with_termlog=True)
    edge = EdgeAddon(args.ca or None, args.port, scheduling)
    proxy.addons.add(core.Core(), proxyserver.Proxyserver(), next_layer.NextLayer(), tlsconfig.TlsConfig(),
                     errorcheck.ErrorCheck(), edge, ControlSocket(args.control, edge))
    opts.update(
        mode=[f"regular@{args.port + k}" for k in range(args.clients)], listen_host="127.0.0.1",
        confdir=args.confdir, certs=[f"*={args.certs}"], connection_strategy="lazy", upstream_cert=False,
        validate_inbound_headers=False,  # Chromium's headers, checked again in Python per request
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, proxy.shutdown)
    # No garbage collection during a load: the addon collects between loads (at each
    # configure and reset). With the collector on, its pauses (up to 0.1 s at once) fell
    # inside page loads. mitmproxy's own long-lived heap is frozen out of every collection.
    gc.freeze()
    gc.disable()
    await proxy.run()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
