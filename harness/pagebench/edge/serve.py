"""The edge proxy's process: mitmproxy's proxy core with only the addons it needs (TLS,
layer detection, the listeners) and `addon.EdgeAddon`. mitmdump would add some thirty
others (replay, rewriting, saving, printing) that run on every request: on a 2-core
machine they cost a millisecond of CPU per request that the measurement would carry.

    python -m pagebench.edge.serve --port 18080 --clients 2 --certs cert.pem \\
        --control control.sock --ca ca.pem --confdir conf
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal

from mitmproxy import master, options
from mitmproxy.addons import core, errorcheck, next_layer, proxyserver, tlsconfig

from .addon import EdgeAddon


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m pagebench.edge.serve")
    parser.add_argument("--port", type=int, required=True, help="client 0's port; client k listens on port + k")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--certs", required=True, help="PEM: the leaf's key, then its chain")
    parser.add_argument("--control", required=True, help="Unix socket for the control channel")
    parser.add_argument("--ca", required=True, help="CA file the origins' certificates chain to")
    parser.add_argument("--confdir", required=True)
    return parser.parse_args(argv)


async def main(args: argparse.Namespace) -> None:
    logging.getLogger().setLevel(logging.WARNING)
    opts = options.Options()
    proxy = master.Master(opts, with_termlog=True)
    proxy.addons.add(core.Core(), proxyserver.Proxyserver(), next_layer.NextLayer(), tlsconfig.TlsConfig(),
                     errorcheck.ErrorCheck(), EdgeAddon())
    opts.update(
        mode=[f"regular@{args.port + k}" for k in range(args.clients)], listen_host="127.0.0.1",
        confdir=args.confdir, certs=[f"*={args.certs}"], connection_strategy="lazy", upstream_cert=False,
        pagebench_control=args.control, pagebench_ca=args.ca, pagebench_base_port=args.port,
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, proxy.shutdown)
    await proxy.run()


if __name__ == "__main__":
    asyncio.run(main(parse_args()))
