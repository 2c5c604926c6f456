"""A testbed whose roles live in this process's own network namespace: a container of
the compose lab, or a namespace someone else built. Where commands run, nothing else.

`Link`, `NginxServer` and the link check render their commands for a named namespace
(`ip netns exec NS ...`, `tc -n NS ...`, `ip -n NS ...`). `localize` drops that prefix
for the namespaces that are "here", so the command that runs is byte for byte the
native one minus where it runs. A command for a role that is not here is refused,
never run in the wrong place.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from .testbed import STATE_ROOT, Owner, TestbedError, run, stop_process
from .topology import Command, Topology

ROLES = ("client", "router", "server")


@dataclass(frozen=True)
class HostTopology(Topology):
    """A Topology whose router and endpoint interfaces are the ones found here (a
    container's eth0, eth1) instead of the native veth names."""

    router_client_if: str = "rc"
    router_server_if: str = "rs"
    endpoint_if: str = "pb0"


def localize(cmd: Sequence[str], here: Collection[str]) -> Command:
    """`cmd` as run in this network namespace, when the namespace it names is here."""
    c = tuple(cmd)
    if c[:3] == ("ip", "netns", "exec") and len(c) > 4:
        ns, rest = c[3], c[4:]
    elif c[:1] in (("ip",), ("tc",)) and len(c) > 3 and c[1] == "-n":
        ns, rest = c[2], (c[0], *c[3:])
    else:
        return c
    if ns not in here:
        raise TestbedError(f"`{' '.join(c)}`: namespace {ns} is not in this process's network namespace "
                           f"(here: {', '.join(sorted(here)) or 'none'})")
    return rest


class HostBed:
    """The `Testbed` interface (topology, state_dir, run, spawn, exec_argv, processes) for
    the given roles in this network namespace. Creates no namespace; on exit stops its
    processes and removes its state directory."""

    __test__ = False  # not a pytest test class

    def __init__(self, topology: Topology, roles: Collection[str]) -> None:
        unknown = set(roles) - set(ROLES)
        if unknown:
            raise ValueError(f"roles: {', '.join(sorted(unknown))} unknown; allowed: {', '.join(ROLES)}")
        self.topology = topology
        self.here = frozenset(getattr(topology, role) for role in roles)
        self.state_dir = STATE_ROOT / topology.prefix
        self.processes: list[subprocess.Popen[str]] = []

    def __enter__(self) -> HostBed:
        self.state_dir.mkdir(parents=True, exist_ok=False)
        owner = Owner.me()
        (self.state_dir / "owner.json").write_text(json.dumps({"pid": owner.pid, "start": owner.start,
                                                               "namespaces": []}))
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, cmd: Command, input: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(localize(cmd, self.here), input=input, check=check)

    def exec_argv(self, ns: str, argv: Sequence[str]) -> list[str]:
        return list(localize(("ip", "netns", "exec", ns, *argv), self.here))

    def spawn(self, argv: Sequence[str], **popen: object) -> subprocess.Popen[str]:
        """Start a long-lived process here; stopped on close."""
        proc = subprocess.Popen(list(localize(argv, self.here)), text=True, start_new_session=True,
                                **popen)  # type: ignore[call-overload]
        self.processes.append(proc)
        return proc

    def close(self) -> None:
        for proc in self.processes:
            stop_process(proc)
        self.processes.clear()
        shutil.rmtree(self.state_dir, ignore_errors=True)

