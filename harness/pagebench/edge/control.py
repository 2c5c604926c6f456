"""The edge proxy's control socket: one JSON object per line on a Unix socket, answered
by the `EdgeAddon` it is given. A mitmproxy addon only for its `running` and `done`
hooks (the socket opens with the proxy and closes with it).

    {"cmd": "configure", "mode": MODE, "connections": 1, "depth": 4, "cleartext": false,
     "addresses": {"a.test": "198.19.0.1"},
     "pool": "cold", "key": ""}                 new pool (every connection closed first);
                                                "warm": the pool kept for these and key (pool.py)
    {"cmd": "reset"}                            close every connection, clear the record
    {"cmd": "stats"}                            connections opened and reused, exchanges since then
    {"cmd": "ping"}                             {"ok": true, "scheduling": "SCHED_FIFO 20"}
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pagebench.core import modes
from pagebench.edge.addon import EdgeAddon
from pagebench.edge.strategy import Strategy

COMMANDS = ("ping", "configure", "reset", "stats")


class ControlSocket:
    def __init__(self, path: str, addon: EdgeAddon) -> None:
        self.path = path
        self.addon = addon
        self.server: asyncio.AbstractServer | None = None

    async def running(self) -> None:
        self.server = await asyncio.start_unix_server(self._serve, self.path)

    async def done(self) -> None:
        if self.server is not None:
            self.server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while line := await reader.readline():
            try:
                answer = json.dumps(await self.command(json.loads(line)))
            except Exception as error:  # noqa: BLE001 - every failure goes back to the caller
                answer = json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"})
            writer.write(answer.encode() + b"\n")
            await writer.drain()
        writer.close()

    async def command(self, message: dict[str, Any]) -> dict[str, Any]:
        cmd = message.get("cmd")
        if cmd == "ping":
            return {"ok": True, "scheduling": self.addon.scheduling}
        if cmd == "configure":
            strategy = Strategy(modes.parse(str(message["mode"])), int(message["connections"]), int(message["depth"]),
                                bool(message.get("cleartext", False)))
            await self.addon.use(strategy, dict(message["addresses"]), str(message.get("pool", "cold")),
                                 str(message.get("key", "")))
            return {"ok": True}
        if cmd == "reset":
            await self.addon.reset()
            return {"ok": True}
        if cmd == "stats":
            return {"ok": True, **self.addon.stats()}
        return {"ok": False, "error": f"unknown command {cmd!r}; allowed: {', '.join(COMMANDS)}"}
