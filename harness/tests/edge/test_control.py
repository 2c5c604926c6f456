"""The edge proxy's control socket over a real Unix socket: every line gets an answer,
also when the answer itself cannot be written as JSON (silence would hang the runner)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from pagebench.edge.control import ControlSocket


class Addon:
    scheduling = "SCHED_OTHER"

    def stats(self) -> dict[str, Any]:
        return {"made": object()}  # not JSON


async def _ask(path: Path, *lines: dict[str, Any]) -> list[dict[str, Any]]:
    control = ControlSocket(str(path), Addon())  # type: ignore[arg-type]
    await control.running()
    try:
        reader, writer = await asyncio.open_unix_connection(str(path))
        answers = []
        for line in lines:
            writer.write(json.dumps(line).encode() + b"\n")
            answers.append(json.loads(await asyncio.wait_for(reader.readline(), 5)))
        writer.close()
        return answers
    finally:
        await control.done()


def test_every_command_is_answered_even_when_its_answer_is_not_json(tmp_path):
    ping, stats, unknown, after = asyncio.run(_ask(tmp_path / "c.sock", {"cmd": "ping"}, {"cmd": "stats"},
                                                   {"cmd": "nap"}, {"cmd": "ping"}))
    assert ping == {"ok": True, "scheduling": "SCHED_OTHER"} == after
    assert stats["ok"] is False and stats["error"].startswith("TypeError:")
    assert unknown == {"ok": False, "error": "unknown command 'nap'; allowed: ping, configure, reset, stats"}
