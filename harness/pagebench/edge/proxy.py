"""Run the edge proxy (`serve.py`: mitmproxy with `addon.py`) in the client namespace and
drive it.

Chromium reaches it over loopback as an HTTP proxy (client k of an aggregation on port
`port + k`); mitmproxy terminates TLS with the same leaf certificate the origins serve,
so the browser trusts it the same way (the leaf's SPKI), never by ignoring errors.
Before each load the runner configures the strategy and the origins' addresses with
the spec's pool: cold closes every upstream connection (each load starts with none),
warm keeps one pool per condition open across loads (`pool.py`); after it,
`stats()` is what crossed the link, connections opened apart from those reused.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pagebench.core.errors import PagebenchError
from pagebench.core.certs import Leaf
from pagebench.edge.strategy import Strategy
from pagebench.system.commands import Bed
from pagebench.system.process import ManagedProcess

BASE_PORT = 18080
START_TIMEOUT_S = 30.0
#: An answer takes milliseconds (closing the pool included): silence is a hung proxy.
CONTROL_TIMEOUT_S = 30.0
#: SCHED_FIFO for the proxy (`serve.realtime`): below the delay program's 50, which must
#: preempt it. Where it is refused the proxy runs anyway and the run records that.
#: $PAGEBENCH_PROXY_RT_PRIORITY overrides it (0: normal scheduling).
RT_PRIORITY = 20
DELAY_RT_PRIORITY = 50  # the delay program's default (netem/main.c, --rt-priority)
RT_PRIORITY_ENV = "PAGEBENCH_PROXY_RT_PRIORITY"


class ProxyError(PagebenchError, RuntimeError):
    """The edge proxy could not be started or answered an error (one line)."""


def rt_priority() -> int:
    """The proxy's SCHED_FIFO priority: $PAGEBENCH_PROXY_RT_PRIORITY, else RT_PRIORITY."""
    value = os.environ.get(RT_PRIORITY_ENV, str(RT_PRIORITY)).strip()
    if not value.isdigit() or int(value) >= DELAY_RT_PRIORITY:
        raise ProxyError(f"{RT_PRIORITY_ENV}={value!r}: use 0 (normal scheduling) or 1..{DELAY_RT_PRIORITY - 1} "
                         f"(SCHED_FIFO below the delay program's {DELAY_RT_PRIORITY})")
    return int(value)


@dataclass(frozen=True)
class ProxyStats:
    """What crossed the link through the proxy during one load: `connections` it opened,
    `reused` ones a warm pool had open before it (`pooled` of them were open at its start)."""

    connections: tuple[dict[str, Any], ...]
    exchanges: tuple[dict[str, Any], ...]
    reused: tuple[dict[str, Any], ...] = ()
    pool: str = "cold"
    pooled: int = 0

    @property
    def connection_count(self) -> int:
        return len(self.connections)

    def for_client(self, client: int) -> ProxyStats:
        exchanges = tuple(e for e in self.exchanges if e["client"] == client)
        used = {e["connection"] for e in exchanges}
        return ProxyStats(tuple(c for c in self.connections if c["serial"] in used), exchanges,
                          tuple(c for c in self.reused if c["serial"] in used), self.pool, self.pooled)


class EdgeProxy:
    """Context manager: the edge proxy in the client namespace, stopped on exit.

        with EdgeProxy(bed, bed.state_dir / "proxy", leaf, ca_path, clients=2) as proxy:
            proxy.configure(Strategy(PIPELINING, 1, 4), {"a.test": "198.19.0.1"})
            ...  # the browser loads through proxy.servers[k]
            stats = proxy.stats()
    """

    def __init__(self, bed: Bed, rundir: Path, leaf: Leaf, cafile: Path, clients: int = 1,
                 port: int = BASE_PORT) -> None:
        self.bed, self.rundir = bed, Path(rundir)
        self.leaf, self.cafile = leaf, Path(cafile)
        self.clients, self.port = clients, port
        self.socket_path = self.rundir / "control.sock"
        self.process: ManagedProcess | None = None
        self._control: socket.socket | None = None
        self._reader: Any = None
        self.rt_priority = rt_priority()
        self.scheduling = "unknown"  # as the running proxy reports it

    @property
    def servers(self) -> tuple[str, ...]:
        """The proxy address of each client, for Chromium's proxy setting."""
        return tuple(f"http://127.0.0.1:{self.port + k}" for k in range(self.clients))

    def argv(self) -> list[str]:
        # -O: mitmproxy checks its own invariants with asserts on every event of every request
        argv = [sys.executable, "-O", "-m", "pagebench.edge.serve", "--port", str(self.port),
                "--clients", str(self.clients), "--certs", str(self.rundir / "cert.pem"),
                "--control", str(self.socket_path), "--ca", str(self.cafile), "--confdir", str(self.rundir / "conf"),
                "--rt-priority", str(self.rt_priority)]
        return self.bed.exec_argv(self.bed.layout.client, argv)

    def __enter__(self) -> EdgeProxy:
        self.rundir.mkdir(parents=True, exist_ok=True)
        # mitmproxy wants the key and the chain in one file; the key stays private.
        certs = os.open(self.rundir / "cert.pem", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(certs, "wb") as handle:
            handle.write(self.leaf.key_path.read_bytes() + self.leaf.chain_path.read_bytes())
        self.socket_path.unlink(missing_ok=True)
        self.process = ManagedProcess("the edge proxy", self.argv(), self.rundir / "proxy.log", bed=self.bed,
                                      error=ProxyError)
        try:
            self.process.start(self._ready, START_TIMEOUT_S)
        except BaseException:
            self.stop()  # the control channel, and the confdir with its CA's key
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _ready(self) -> bool:
        """It answers on its control socket once it listens for every client."""
        if not self.socket_path.exists():
            return False
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(self.socket_path))
            sock.settimeout(CONTROL_TIMEOUT_S)
        except OSError:
            sock.close()
            return False
        self._control, self._reader = sock, sock.makefile("rb")
        self.scheduling = self._call({"cmd": "ping"})["scheduling"]
        return True

    def _call(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._control is None or self.process is None:
            raise ProxyError("the edge proxy is not running")
        try:
            self._control.sendall(json.dumps(message).encode() + b"\n")
            line = self._reader.readline()
        except TimeoutError:
            raise self.process.fail(f"the edge proxy did not answer {message.get('cmd')!r} "
                                    f"within {CONTROL_TIMEOUT_S:.0f} s") from None
        except OSError as error:
            raise self.process.fail(f"the edge proxy closed its control channel ({error.strerror or error})") from None
        if not line:
            raise self.process.fail("the edge proxy closed its control channel")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise ProxyError(f"edge proxy: {message.get('cmd')}: {reply.get('error')}")
        return reply

    def check_alive(self) -> None:
        """A proxy that died ends the run: every proxied load would fail."""
        if self.process is not None:
            self.process.check_alive()

    def configure(self, strategy: Strategy, addresses: dict[str, str], pool: str = "cold", key: str = "") -> None:
        """The strategy and origins for the next load; `pool` cold closes every upstream
        connection first, warm takes the pool kept for the strategy, origins and `key`
        (the runner's: the condition) since their last load (`pool.py`)."""
        self._call({"cmd": "configure", "mode": strategy.mode.name, "connections": strategy.connections,
                    "depth": strategy.depth, "cleartext": strategy.cleartext, "addresses": addresses,
                    "pool": pool, "key": key})

    def reset(self) -> None:
        """Close every upstream connection and forget the record (a cold start)."""
        self._call({"cmd": "reset"})

    def stats(self) -> ProxyStats:
        reply = self._call({"cmd": "stats"})
        return ProxyStats(tuple(reply["connections"]), tuple(reply["exchanges"]), tuple(reply["reused"]),
                          reply["pool"], reply["pooled"])

    def stop(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None
        if self.process is not None:
            self.process.stop()
        shutil.rmtree(self.rundir / "conf", ignore_errors=True)
